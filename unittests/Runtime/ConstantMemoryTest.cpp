//===- ConstantMemoryTest.cpp - Runtime::setConstant on both runtimes -----===//
//
// Part of gridjit. Constant memory (`constant NAME: [T; N];`): set from the
// host, read by every kernel of the loaded module, checked by name, size
// and element type, ordered against launches from other threads (never a
// torn read), and carried by cache entries. The CUDA half runs on the fake
// driver (unittests/FakeCuda), which keeps each `.const` global's bytes.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "Runtime/Cuda/CudaRuntime.h"

#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Target/Target.h"

#include "gtest/gtest.h"

#include <array>
#include <atomic>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;

namespace {

const char *Source = R"(
constant TABLE: [i32; 64];
constant PAIR: [[f32; 2]; 2];

fn pick(i: i32) -> i32 {
  return TABLE[i];
}

// Every thread copies the whole table: a launch that saw half of one set
// and half of another would copy a mixed table.
kernel copy(out: ptr<i32>) {
  let b = block_idx.x * 64;
  for i in 0..64 {
    out[b + i] = pick(i);
  }
}

kernel pair(out: ptr<f32>) {
  out[0] = PAIR[0][0] + PAIR[1][1];
}
)";

const Artifact &hostArtifact() {
  static Artifact A = compileForTest(createHostTarget(), Source, "constant-memory.kir");
  return A;
}

std::array<int32_t, 64> filled(int32_t V) {
  std::array<int32_t, 64> T;
  T.fill(V);
  return T;
}

TEST(ConstantMemoryTest, ArtifactDescribesEachConstant) {
  const Artifact &A = hostArtifact();
  ASSERT_EQ(A.Constants.size(), 2u);
  EXPECT_EQ(A.Constants[0].Name, "TABLE");
  EXPECT_EQ(A.Constants[0].Symbol, "__gridjit_constant_TABLE");
  EXPECT_EQ(A.Constants[0].Ty.str(), "[i32; 64]");
  EXPECT_EQ(A.Constants[0].Bytes, 256u);
  EXPECT_EQ(A.Constants[1].Name, "PAIR");
  EXPECT_EQ(A.Constants[1].Ty.str(), "[[f32; 2]; 2]");
  EXPECT_EQ(A.Constants[1].Bytes, 16u);
}

TEST(ConstantMemoryTest, HostSetsReadsAndStartsAtZero) {
  LoadedHost L = loadHost(hostArtifact());
  ASSERT_TRUE(L.M);
  std::vector<int32_t> Out(64, -1);
  KernelArg Args[] = {KernelArg::pointer(Out.data())};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "copy", config1D(1, 1), Args)));
  EXPECT_EQ(Out, std::vector<int32_t>(64, 0));

  std::array<int32_t, 64> T;
  for (int I = 0; I < 64; ++I)
    T[I] = I * I - 7;
  ASSERT_TRUE(succeeded(L.RT->setConstant(*L.M, "TABLE", T.data(), sizeof(T), ScalarKind::I32)));
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "copy", config1D(1, 1), Args)));
  EXPECT_EQ(Out, std::vector<int32_t>(T.begin(), T.end()));

  // The contents belong to the loaded module: another load starts at zero.
  auto Other = L.RT->load(hostArtifact());
  ASSERT_TRUE(succeeded(Other));
  ASSERT_TRUE(succeeded(L.RT->launch(**Other, "copy", config1D(1, 1), Args)));
  EXPECT_EQ(Out, std::vector<int32_t>(64, 0));

  float P[2][2] = {{1.5f, 100.0f}, {200.0f, 2.25f}};
  ASSERT_TRUE(succeeded(L.RT->setConstant(*L.M, "PAIR", P, sizeof(P))));
  float R = 0;
  KernelArg PArgs[] = {KernelArg::pointer(&R)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "pair", config1D(1, 1), PArgs)));
  EXPECT_EQ(R, 3.75f);
}

TEST(ConstantMemoryTest, NameSizeAndTypeAreChecked) {
  LoadedHost L = loadHost(hostArtifact());
  ASSERT_TRUE(L.M);
  auto T = filled(1);
  llvm::Error E = L.RT->setConstant(*L.M, "TABEL", T.data(), sizeof(T));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::NotFound);
  EXPECT_EQ(errorText(std::move(E)),
            "no constant memory named 'TABEL' in the module (it has 'TABLE', 'PAIR')");
  E = L.RT->setConstant(*L.M, "TABLE", T.data(), sizeof(T) - 4);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  EXPECT_EQ(errorText(std::move(E)),
            "constant memory 'TABLE' of type '[i32; 64]' takes 256 bytes, given 252");
  E = L.RT->setConstant(*L.M, "TABLE", T.data(), sizeof(T), ScalarKind::U32);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  EXPECT_EQ(errorText(std::move(E)),
            "constant memory 'TABLE' of type '[i32; 64]' holds 'i32', given 'u32'");
  E = L.RT->setConstant(*L.M, "TABLE", nullptr, sizeof(T));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  llvm::consumeError(std::move(E));
}

// Sets from two threads race launches from two more: every launch copies a
// table that is entirely one set's (never half of each), and the last set
// is what a launch after them all reads.
TEST(ConstantMemoryTest, SetsAndLaunchesFromManyThreads) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  LoadedHost L = loadHost(hostArtifact(), O);
  ASSERT_TRUE(L.M);
  std::atomic<int> Failures{0}, Mixed{0};
  std::vector<std::thread> Threads;
  for (int W = 0; W < 2; ++W)
    Threads.emplace_back([&, W] {
      for (int Round = 0; Round < 50; ++Round) {
        auto T = filled(W * 1000 + Round);
        if (llvm::Error E = L.RT->setConstant(*L.M, "TABLE", T.data(), sizeof(T))) {
          llvm::consumeError(std::move(E));
          ++Failures;
        }
      }
    });
  for (int R = 0; R < 2; ++R)
    Threads.emplace_back([&] {
      std::vector<int32_t> Out(4 * 64);
      KernelArg Args[] = {KernelArg::pointer(Out.data())};
      for (int Round = 0; Round < 20; ++Round) {
        if (llvm::Error E = L.RT->launch(*L.M, "copy", config1D(4, 1), Args)) {
          llvm::consumeError(std::move(E));
          ++Failures;
        }
        for (int B = 0; B < 4; ++B)
          for (int I = 0; I < 64; ++I)
            if (Out[B * 64 + I] != Out[0])
              ++Mixed;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
  EXPECT_EQ(Mixed.load(), 0);
  auto Last = filled(7);
  ASSERT_TRUE(succeeded(L.RT->setConstant(*L.M, "TABLE", Last.data(), sizeof(Last))));
  std::vector<int32_t> Out(64);
  KernelArg Args[] = {KernelArg::pointer(Out.data())};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "copy", config1D(1, 1), Args)));
  EXPECT_EQ(Out, std::vector<int32_t>(64, 7));
}

TEST(ConstantMemoryTest, CacheEntriesCarryConstants) {
  const Artifact &A = hostArtifact();
  CacheKey K;
  for (unsigned I = 0; I < 32; ++I)
    K.Bytes[I] = static_cast<uint8_t>(I * 3);
  auto B = decodeCacheEntry(encodeCacheEntry(K, A), K);
  ASSERT_TRUE(succeeded(B));
  ASSERT_EQ(B->Constants.size(), A.Constants.size());
  for (size_t I = 0; I < A.Constants.size(); ++I) {
    EXPECT_EQ(B->Constants[I].Name, A.Constants[I].Name);
    EXPECT_EQ(B->Constants[I].Symbol, A.Constants[I].Symbol);
    EXPECT_EQ(B->Constants[I].Ty, A.Constants[I].Ty);
    EXPECT_EQ(B->Constants[I].Bytes, A.Constants[I].Bytes);
  }
  // A module loaded from the decoded entry sets and reads its constant.
  LoadedHost L = loadHost(*B);
  ASSERT_TRUE(L.M);
  auto T = filled(42);
  ASSERT_TRUE(succeeded(L.RT->setConstant(*L.M, "TABLE", T.data(), sizeof(T))));
  std::vector<int32_t> Out(64);
  KernelArg Args[] = {KernelArg::pointer(Out.data())};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "copy", config1D(1, 1), Args)));
  EXPECT_EQ(Out, std::vector<int32_t>(64, 42));
}

#ifdef GRIDJIT_FAKE_CUDA
// On the GPU target: cuModuleGetGlobal finds the `.const` global by its
// name, and the bytes reach it (the fake keeps them); the same checks.
TEST(ConstantMemoryTest, CudaCopiesToTheModulesConstGlobal) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  Artifact A = compileForTest(createNVPTXTarget(), Source, "constant-memory.kir");
  ASSERT_EQ(A.Constants.size(), 2u);
  EXPECT_EQ(A.Constants[0].Symbol, "TABLE");
  CudaRuntimeOptions O;
  O.Driver = fake();
  O.UseCubinCache = false;
  auto RT = CudaRuntime::create(O);
  ASSERT_TRUE(succeeded(RT));
  auto M = (*RT)->load(A);
  ASSERT_TRUE(succeeded(M));
  auto Read = fakeHook<int (*)(const char *, void *, size_t)>("gridjitFakeCudaReadGlobal");
  ASSERT_TRUE(Read);
  std::array<int32_t, 64> Got;
  ASSERT_EQ(Read("TABLE", Got.data(), sizeof(Got)), 0);
  EXPECT_EQ(Got, filled(0));
  auto T = filled(-5);
  T[63] = 99;
  ASSERT_TRUE(succeeded((*RT)->setConstant(**M, "TABLE", T.data(), sizeof(T), ScalarKind::I32)));
  ASSERT_EQ(Read("TABLE", Got.data(), sizeof(Got)), 0);
  EXPECT_EQ(Got, T);
  llvm::Error E = (*RT)->setConstant(**M, "TABLE", T.data(), 8);
  EXPECT_EQ(errorText(std::move(E)),
            "constant memory 'TABLE' of type '[i32; 64]' takes 256 bytes, given 8");
  E = (*RT)->setConstant(**M, "NONE", T.data(), sizeof(T));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::NotFound);
  llvm::consumeError(std::move(E));
}
#endif

} // namespace
