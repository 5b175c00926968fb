//===- BlockMemoryTest.cpp - Block memory kept from one launch to the next -===//
//
// Part of gridjit. The host runtime keeps each worker's block memory (shared
// memory and frames, between guard pages) in a pool from one launch to the
// next instead of mapping it for each launch (docs/HostTarget.md, "Block
// memory is kept"): a run of launches maps it once; a write off its ends
// still faults after any number of reuses; a region that a faulting kernel
// ran in is not reused; several threads that take regions at once get
// distinct ones; what is kept is bounded; and a child of fork() reuses its
// own copy. Counted, never timed: guardedMappingsMade() counts mappings.
//
//===----------------------------------------------------------------------===//

#include "Runtime/GuardedMemory.h"
#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <barrier>
#include <cstring>
#include <set>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

// `stage` passes v through shared memory; `edge` writes one element of a
// shared array of 4, at index n (off the block memory for n = +-1024:
// into a guard page).
const char *Kernels = R"(
kernel stage(v: f32, out: ptr<f32>) {
  shared s: [f32; 64];
  let t: i32 = thread_idx.x;
  s[t] = v;
  sync_threads();
  out[block_idx.x * block_dim.x + t] = s[63 - t];
}

kernel edge(n: i32, out: ptr<f32>) {
  shared s: [f32; 4];
  let t: i32 = thread_idx.x;
  if t == 0 {
    s[n] = 1.0;
  }
  sync_threads();
  out[block_idx.x * block_dim.x + t] = 1.0;
}
)";

const Artifact &artifact() {
  static Artifact A = compileForTest(createHostTarget(), Kernels, "block-memory-test.kir");
  return A;
}

/// One worker: every launch runs on the calling thread, in one region.
LoadedHost loadOneThread() {
  HostRuntimeOptions O;
  O.NumThreads = 1;
  return loadHost(artifact(), O);
}

/// Launches `stage` (4 blocks of 64 threads) with \p V; an error unless
/// every element of the output is \p V.
llvm::Error stage(LoadedHost &L, float V) {
  std::vector<float> Out(256, -1.0f);
  KernelArg Args[] = {KernelArg::f32(V), KernelArg::pointer(Out.data())};
  if (llvm::Error E = L.RT->launch(*L.M, "stage", config1D(4, 64), Args))
    return E;
  for (float X : Out)
    if (X != V)
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "stage(%f) wrote %f",
                                     double(V), double(X));
  return llvm::Error::success();
}

llvm::Error edge(LoadedHost &L, int32_t N) {
  std::vector<float> Out(64);
  KernelArg Args[] = {KernelArg::i32(N), KernelArg::pointer(Out.data())};
  return L.RT->launch(*L.M, "edge", config1D(1, 64), Args);
}

/// \p E is a kernel fault of `edge`.
void expectGuardFault(llvm::Error E) {
  ASSERT_TRUE(E.isA<KernelFaultError>()) << errorText(std::move(E));
  EXPECT_THAT(errorText(std::move(E)),
              HasSubstr("kernel 'edge' accessed memory outside its buffers (SIGSEGV at"));
}

TEST(BlockMemoryTest, LaunchesReuseTheBlockMemoryOfTheOnesBefore) {
  LoadedHost L = loadOneThread();
  ASSERT_TRUE(L.M);
  // The first launch maps the region (and the thread's signal stack).
  ASSERT_TRUE(succeeded(stage(L, 1.0f)));
  uint64_t Before = guardedMappingsMade();
  for (int I = 0; I < 100; ++I)
    ASSERT_TRUE(succeeded(stage(L, float(I)))) << I;
  EXPECT_EQ(guardedMappingsMade(), Before);
}

TEST(BlockMemoryTest, GuardPagesFaultAfterReuseAndAFaultedRegionIsNotKept) {
  LoadedHost L = loadOneThread();
  ASSERT_TRUE(L.M);
  for (int I = 0; I < 100; ++I)
    ASSERT_TRUE(succeeded(edge(L, 3))) << I;
  uint64_t Before = guardedMappingsMade();
  // Past the end and before the start: the guard pages, each time.
  expectGuardFault(edge(L, 1024));
  expectGuardFault(edge(L, -1024));
  // Each faulted region was unmapped, not put back: the two faulting
  // launches reused the kept region then had one of their own mapped.
  EXPECT_EQ(guardedMappingsMade(), Before + 1);
  ASSERT_TRUE(succeeded(edge(L, 3)));
  EXPECT_EQ(guardedMappingsMade(), Before + 2);
  // That one is kept again.
  for (int I = 0; I < 10; ++I)
    ASSERT_TRUE(succeeded(edge(L, 0)));
  EXPECT_EQ(guardedMappingsMade(), Before + 2);
  expectGuardFault(edge(L, 1024));
}

TEST(BlockMemoryTest, LaunchesFromSeveralThreadsAtOnceAreRight) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  LoadedHost L = loadHost(artifact(), O);
  ASSERT_TRUE(L.M);
  std::vector<std::thread> Threads;
  std::vector<std::string> Failures(4);
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      for (int I = 0; I < 50 && Failures[T].empty(); ++I)
        if (llvm::Error E = stage(L, float(T * 1000 + I)))
          Failures[T] = errorText(std::move(E));
    });
  for (std::thread &T : Threads)
    T.join();
  for (const std::string &F : Failures)
    EXPECT_EQ(F, "");
}

// A child of fork() has its own copy of the kept region (a private
// mapping): it reuses it, and its guard pages still fault there.
TEST(BlockMemoryTest, AChildOfForkReusesItsOwnCopy) {
  LoadedHost L = loadOneThread();
  ASSERT_TRUE(L.M);
  ASSERT_TRUE(succeeded(edge(L, 3)));
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t Pid = fork();
  if (Pid == 0) {
    alarm(120);
    uint64_t Before = guardedMappingsMade();
    int R = 0;
    for (int I = 0; I < 20 && !R; ++I)
      if (llvm::Error E = edge(L, 3)) {
        llvm::consumeError(std::move(E));
        R = 1;
      }
    if (!R && guardedMappingsMade() != Before)
      R = 2;
    if (!R) {
      llvm::Error E = edge(L, 1024);
      R = E.isA<KernelFaultError>() ? 0 : 3;
      llvm::consumeError(std::move(E));
    }
    _exit(R);
  }
  ASSERT_GT(Pid, 0);
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  ASSERT_TRUE(WIFEXITED(Status)) << "signal " << WTERMSIG(Status);
  EXPECT_EQ(WEXITSTATUS(Status), 0)
      << "1: a launch failed, 2: the child mapped block memory, 3: no guard fault";
  // The parent's region is its own too.
  ASSERT_TRUE(succeeded(edge(L, 3)));
  expectGuardFault(edge(L, -1024));
}

//===----------------------------------------------------------------------===//
// The pool itself
//===----------------------------------------------------------------------===//

TEST(GuardedBufferPoolTest, AFreedRegionIsHandedOutAgainZeroedAndLiveOnesAreDistinct) {
  GuardedBufferPool P(pageBytes(), BlockKeptPages, BlockKeptBytes);
  char *A = P.allocate(1000);
  char *B = P.allocate(1000);
  ASSERT_TRUE(A && B);
  EXPECT_NE(A, B);
  std::memset(A, 0xab, 1000);
  uint64_t Before = guardedMappingsMade();
  P.free(A, 1000);
  char *C = P.allocate(1000);
  EXPECT_EQ(C, A);
  EXPECT_EQ(guardedMappingsMade(), Before);
  EXPECT_EQ(std::count(C, C + 1024, 0), 1024);
  // Its end still meets the rear guard: reused only for the same pages,
  // so a region of another page count is a new mapping.
  P.free(C, 1000);
  char *D = P.allocate(pageBytes() + 1);
  EXPECT_EQ(guardedMappingsMade(), Before + 1);
  P.free(D, pageBytes() + 1);
  P.free(B, 1000);
}

TEST(GuardedBufferPoolTest, ThreadsTakingRegionsAtOnceGetDistinctOnes) {
  GuardedBufferPool P(pageBytes(), BlockKeptPages, BlockKeptBytes);
  constexpr int Threads = 4;
  for (int Round = 0; Round < 20; ++Round) {
    std::vector<char *> Got(Threads);
    // Every thread holds its region until all have one.
    std::barrier Sync(Threads);
    std::vector<std::thread> Ts;
    for (int T = 0; T < Threads; ++T)
      Ts.emplace_back([&, T] {
        Got[T] = P.allocate(256);
        Sync.arrive_and_wait();
        if (Got[T])
          P.free(Got[T], 256);
      });
    for (std::thread &T : Ts)
      T.join();
    std::set<char *> Distinct(Got.begin(), Got.end());
    EXPECT_EQ(Distinct.size(), size_t(Threads)) << "round " << Round;
    EXPECT_EQ(Distinct.count(nullptr), 0u);
  }
}

TEST(GuardedBufferPoolTest, WhatIsKeptIsBounded) {
  GuardedBufferPool P(pageBytes(), BlockKeptPages, BlockKeptBytes);
  // A region larger than BlockKeptPages pages is unmapped when freed.
  uint64_t Huge = (BlockKeptPages + 1) * pageBytes();
  char *H = P.allocate(Huge);
  ASSERT_TRUE(H);
  P.free(H, Huge);
  uint64_t Before = guardedMappingsMade();
  H = P.allocate(Huge);
  ASSERT_TRUE(H);
  EXPECT_EQ(guardedMappingsMade(), Before + 1);
  P.free(H, Huge);
  // The largest kept size: only BlockKeptBytes of it in all.
  uint64_t Big = BlockKeptPages * pageBytes();
  uint64_t Fit = BlockKeptBytes / Big;
  std::vector<char *> Live;
  for (uint64_t I = 0; I < Fit + 1; ++I)
    Live.push_back(P.allocate(Big));
  for (char *R : Live) {
    ASSERT_TRUE(R);
    P.free(R, Big);
  }
  Before = guardedMappingsMade();
  Live.clear();
  for (uint64_t I = 0; I < Fit + 1; ++I)
    Live.push_back(P.allocate(Big));
  EXPECT_EQ(guardedMappingsMade(), Before + 1);
  for (char *R : Live)
    P.free(R, Big);
}

} // namespace
