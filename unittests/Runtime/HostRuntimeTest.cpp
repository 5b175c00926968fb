//===- HostRuntimeTest.cpp - Loading, launching, validation, threads ------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <numeric>
#include <sched.h>
#include <sys/mman.h>
#include <thread>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

// saxpy, then kernels that exercise the runtime (the tests below name lines
// of this text).
const std::string Kernels = "\n" + std::string(SaxpySource) + R"(
kernel count(hits: ptr<u64>) {
  atomic_add(&hits[0], 1u64);
}

kernel dyn(out: ptr<i32>) {
  shared s: [i32];
  s[thread_idx.x] = thread_idx.x;
  sync_threads();
  out[thread_idx.x] = s[block_dim.x - 1 - thread_idx.x];
}

kernel phases(out: ptr<i32>, tmp: ptr<i32>) {
  let g: i32 = block_idx.x * block_dim.x + thread_idx.x;
  let n: i32 = grid_dim.x * block_dim.x;
  tmp[g] = g;
  grid_sync();
  out[g] = tmp[(g + 1) % n];
}

kernel diverge(out: ptr<i32>) {
  if thread_idx.x == 1 {
    return;
  }
  sync_threads();
  out[thread_idx.x] = 1;
}
)";

/// Compiles the module above once for every test.
const Artifact &artifact() {
  static Artifact A = compileForTest(createHostTarget(), Kernels, "runtime-test.kir");
  return A;
}

using Loaded = LoadedHost;

Loaded load(HostRuntimeOptions Opts = {}) { return loadHost(artifact(), Opts); }

LaunchConfig config(uint32_t Grid, uint32_t Block) {
  LaunchConfig C;
  C.Grid.X = Grid;
  C.Block.X = Block;
  return C;
}

TEST(HostRuntimeTest, SaxpyRunsAndWorkersStayWithinThePool) {
  HostRuntimeOptions O;
  O.NumThreads = 3;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  EXPECT_EQ(L.RT->getNumThreads(), 3u);
  std::vector<float> X(1000), Y(1000, 1.0f);
  std::iota(X.begin(), X.end(), 0.0f);
  KernelArg Args[] = {KernelArg::i32(1000), KernelArg::f32(2.0f), KernelArg::pointer(X.data()),
                      KernelArg::pointer(Y.data())};
  LaunchStats S;
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "saxpy", config(40, 32), Args, &S)));
  for (int I = 0; I < 1000; ++I)
    ASSERT_EQ(Y[I], 2.0f * I + 1.0f) << I;
  EXPECT_EQ(S.Blocks, 40u);
  EXPECT_EQ(S.Phases, 1u);
  EXPECT_GE(S.Workers, 1u);
  EXPECT_LE(S.Workers, 3u);
}

TEST(HostRuntimeTest, ChunksAreASixteenthOfAWorkersShareAndAtLeast2048Threads) {
  // docs/HostTarget.md, "Scheduling": the sizes bench-HostExecBench's
  // launches get on 2 workers, and the bounds. Checked by reverting: main's
  // rule (no floor) gives 2 for the 64 blocks of 32 threads.
  EXPECT_EQ(HostRuntime::chunkBlocks(65536, 256, 2), 2048u); // reduce, saxpy
  EXPECT_EQ(HostRuntime::chunkBlocks(16384, 256, 2), 512u);  // stencil
  EXPECT_EQ(HostRuntime::chunkBlocks(256, 256, 2), 8u);      // matmul: 2048 threads
  EXPECT_EQ(HostRuntime::chunkBlocks(64, 256, 2), 8u);       // histogram: 2048 threads
  EXPECT_EQ(HostRuntime::chunkBlocks(64, 32, 2), 64u);       // 2048 threads: one chunk
  EXPECT_EQ(HostRuntime::chunkBlocks(65536, 256, 1), 4096u);
  // Under 32 blocks per worker: single blocks, so that a fault names its
  // block (test/Host/kernel-faults.kir, buffer-guards.kir).
  EXPECT_EQ(HostRuntime::chunkBlocks(3, 1024, 4), 1u);
  EXPECT_EQ(HostRuntime::chunkBlocks(8, 1, 1), 1u);
  EXPECT_EQ(HostRuntime::chunkBlocks(31, 1, 1), 1u);
  EXPECT_EQ(HostRuntime::chunkBlocks(63, 32, 2), 1u);
  EXPECT_EQ(HostRuntime::chunkBlocks(32, 1, 1), 2048u);  // more than the grid: all of it
  EXPECT_EQ(HostRuntime::chunkBlocks(1000, 3, 4), 683u); // ceil(2048 / 3)
  EXPECT_EQ(HostRuntime::chunkBlocks(1u << 31, 2048, 8), (1u << 31) / 128);
  EXPECT_EQ(HostRuntime::MinChunkThreads, 2048u);
}

TEST(HostRuntimeTest, DefaultPoolSizeIsTheCPUsThisProcessMayUse) {
  cpu_set_t Set;
  CPU_ZERO(&Set);
  ASSERT_EQ(sched_getaffinity(0, sizeof(Set), &Set), 0);
  unsigned Expected = CPU_COUNT(&Set);
  EXPECT_EQ(HostRuntime::availableCPUs(), Expected);
  auto RT = HostRuntime::create();
  ASSERT_TRUE(succeeded(RT));
  EXPECT_EQ((*RT)->getNumThreads(), Expected);
  HostRuntimeOptions One;
  One.NumThreads = 1;
  auto RT1 = HostRuntime::create(One);
  ASSERT_TRUE(succeeded(RT1));
  EXPECT_EQ((*RT1)->getNumThreads(), 1u);
}

TEST(HostRuntimeTest, AtomicsAreExactWithBlocksInParallel) {
  HostRuntimeOptions O;
  O.NumThreads = 4;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  uint64_t Hits = 0;
  KernelArg Args[] = {KernelArg::pointer(&Hits)};
  for (int Round = 0; Round < 5; ++Round)
    ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "count", config(512, 64), Args)));
  EXPECT_EQ(Hits, 5u * 512 * 64);
}

TEST(HostRuntimeTest, LaunchesFromManyThreadsAtOnce) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  std::vector<std::thread> Threads;
  std::atomic<int> Failures{0};
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      for (int Round = 0; Round < 10; ++Round) {
        std::vector<float> X(300, float(T)), Y(300, 0.0f);
        KernelArg Args[] = {KernelArg::i32(300), KernelArg::f32(1.0f), KernelArg::pointer(X.data()),
                            KernelArg::pointer(Y.data())};
        if (llvm::Error E = L.RT->launch(*L.M, "saxpy", config(10, 32), Args)) {
          llvm::consumeError(std::move(E));
          ++Failures;
        }
        for (float V : Y)
          if (V != float(T))
            ++Failures;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures.load(), 0);
}

TEST(HostRuntimeTest, ArgumentCountAndTypesAreChecked) {
  Loaded L = load();
  ASSERT_TRUE(L.M);
  std::vector<float> X(4);
  std::vector<int32_t> I(4);
  {
    KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1.0f), KernelArg::pointer(X.data())};
    std::string Msg = errorText(L.RT->launch(*L.M, "saxpy", config(1, 4), Args));
    EXPECT_THAT(Msg, HasSubstr("kernel 'saxpy' takes 4 arguments (n: i32, a: f32, x: ptr<f32>, "
                               "y: ptr<f32>), 3 given"));
  }
  {
    KernelArg Args[] = {KernelArg::i64(4), KernelArg::f32(1.0f), KernelArg::pointer(X.data()),
                        KernelArg::pointer(X.data())};
    std::string Msg = errorText(L.RT->launch(*L.M, "saxpy", config(1, 4), Args));
    EXPECT_THAT(
        Msg,
        HasSubstr("kernel 'saxpy': argument 1 ('n: i32') must be an i32, but an i64 was given"));
  }
  {
    KernelArg Args[] = {KernelArg::i32(4), KernelArg::pointer(X.data()),
                        KernelArg::pointer(X.data()), KernelArg::pointer(X.data())};
    std::string Msg = errorText(L.RT->launch(*L.M, "saxpy", config(1, 4), Args));
    EXPECT_THAT(Msg, HasSubstr("argument 2 ('a: f32') must be an f32, but a pointer was given"));
  }
  {
    KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1.0f), KernelArg::f32(0.0f),
                        KernelArg::pointer(X.data())};
    std::string Msg = errorText(L.RT->launch(*L.M, "saxpy", config(1, 4), Args));
    EXPECT_THAT(Msg,
                HasSubstr("argument 3 ('x: ptr<f32>') must be a pointer, but an f32 was given"));
  }
  {
    KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1.0f), KernelArg::pointer(I.data()),
                        KernelArg::pointer(X.data())};
    std::string Msg = errorText(L.RT->launch(*L.M, "saxpy", config(1, 4), Args));
    EXPECT_THAT(Msg, HasSubstr("argument 3 ('x: ptr<f32>') must point to f32, but a pointer to i32 "
                               "was given"));
  }
  // An untyped pointer is accepted for any ptr<T>.
  KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1.0f),
                      KernelArg::pointer(static_cast<void *>(X.data())),
                      KernelArg::pointer(X.data())};
  EXPECT_TRUE(succeeded(L.RT->launch(*L.M, "saxpy", config(1, 4), Args)));
  std::string Msg = errorText(L.RT->launch(*L.M, "nope", config(1, 4), Args));
  EXPECT_THAT(Msg, HasSubstr("no kernel 'nope' in the loaded module (kernels: saxpy, count, dyn, "
                             "phases, diverge)"));
}

TEST(HostRuntimeTest, ConfigurationsAreCheckedBeforeAnythingRuns) {
  HostRuntimeOptions O;
  O.MaxCooperativeBlocks = 4;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  uint64_t Hits = 0;
  KernelArg Count[] = {KernelArg::pointer(&Hits)};
  auto Expect = [&](const char *Kernel, LaunchConfig C, llvm::ArrayRef<KernelArg> Args,
                    const char *Want) {
    std::string Msg = errorText(L.RT->launch(*L.M, Kernel, C, Args));
    EXPECT_THAT(Msg, HasSubstr(Want));
  };
  Expect("count", config(1, 1025), Count, "a block of 1025 threads exceeds the limit of 1024");
  Expect("count", config(0, 4), Count, "every grid dimension must be at least 1");
  LaunchConfig ZeroBlock = config(1, 4);
  ZeroBlock.Block.Z = 0;
  Expect("count", ZeroBlock, Count, "every block dimension must be at least 1");
  LaunchConfig Unwanted = config(1, 4);
  Unwanted.DynamicSharedBytes = 16;
  Expect("count", Unwanted, Count,
         "provides 16 bytes of dynamic shared memory but the kernel "
         "declares none");
  std::vector<int32_t> Out(8), Tmp(8);
  KernelArg DynArgs[] = {KernelArg::pointer(Out.data())};
  Expect("dyn", config(1, 8), DynArgs, "declares dynamic shared memory");
  KernelArg PhaseArgs[] = {KernelArg::pointer(Out.data()), KernelArg::pointer(Tmp.data())};
  Expect("phases", config(5, 1), PhaseArgs,
         "5 blocks exceed the host's co-residency limit of 4 blocks; the largest valid grid has 4 "
         "blocks");
  EXPECT_EQ(Hits, 0u) << "a rejected launch must not run";

  // Within the limits everything runs.
  LaunchConfig Dyn = config(1, 8);
  Dyn.DynamicSharedBytes = 32;
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "dyn", Dyn, DynArgs)));
  for (int I = 0; I < 8; ++I)
    EXPECT_EQ(Out[I], 7 - I);
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "phases", config(4, 2), PhaseArgs)));
  for (int G = 0; G < 8; ++G)
    EXPECT_EQ(Out[G], (G + 1) % 8);
}

TEST(HostRuntimeTest, DivergenceIsAnErrorNamingKernelAndLine) {
  Loaded L = load();
  ASSERT_TRUE(L.M);
  std::vector<int32_t> Out(4);
  KernelArg Args[] = {KernelArg::pointer(Out.data())};
  llvm::Error E = L.RT->launch(*L.M, "diverge", config(2, 4), Args);
  ASSERT_TRUE(failed(E));
  EXPECT_TRUE(E.isA<DiagnosticError>());
  std::string Msg = errorText(std::move(E));
  EXPECT_THAT(Msg, HasSubstr("runtime-test.kir:30:3: error: divergent sync_threads() in kernel "
                             "'diverge': reached by 3 of the 4 threads of block (0, 0, 0)"));
  // The runtime is still usable afterwards.
  uint64_t Hits = 0;
  KernelArg Count[] = {KernelArg::pointer(&Hits)};
  EXPECT_TRUE(succeeded(L.RT->launch(*L.M, "count", config(3, 3), Count)));
  EXPECT_EQ(Hits, 9u);
}

/// Launches with \p LO that stop nothing (a timeout that does not pass, a
/// token nobody cancels) run every block, cooperative or not.
void expectEveryBlockRuns(Loaded &L, const LaunchOptions &LO) {
  uint64_t Hits = 0;
  KernelArg Args[] = {KernelArg::pointer(&Hits)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "count", config(64, 8), Args, LO)));
  EXPECT_EQ(Hits, 64u * 8);
  std::vector<int32_t> Out(64), Tmp(64);
  KernelArg PArgs[] = {KernelArg::pointer(Out.data()), KernelArg::pointer(Tmp.data())};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "phases", config(8, 8), PArgs, LO)));
  for (int I = 0; I < 64; ++I)
    EXPECT_EQ(Out[I], (I + 1) % 64) << I;
}

TEST(HostRuntimeTest, TimeoutStopsALaunchBetweenBlocks) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  // 2^31 - 1 blocks cannot all run within 1 ms: the launch stops early,
  // with an error that names the kernel and says how far it got.
  uint64_t Hits = 0;
  KernelArg Args[] = {KernelArg::pointer(&Hits)};
  LaunchOptions LO;
  LO.TimeoutMilliseconds = 1;
  llvm::Error E = L.RT->launch(*L.M, "count", config(0x7fffffff, 1), Args, LO);
  ASSERT_TRUE(failed(E));
  std::string Msg = errorText(std::move(E));
  EXPECT_THAT(Msg, HasSubstr("kernel 'count' did not finish within 1 ms "
                             "(LaunchOptions::TimeoutMilliseconds): stopped after " +
                             std::to_string(Hits) + " of 2147483647 blocks"));
  EXPECT_LT(Hits, 0x7fffffffu);
  // A launch that finishes in time is not affected, cooperative or not,
  // and the runtime is still usable.
  LO.TimeoutMilliseconds = 3600 * 1000;
  expectEveryBlockRuns(L, LO);
}

TEST(HostRuntimeTest, CancelFromAnotherThreadStopsALaunchBetweenBlocks) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  // 2^31 - 1 blocks; another thread cancels once the kernel has started.
  // Without the cancel the launch would run them all, and the counts
  // below would say so: no time is measured.
  uint64_t Hits = 0;
  KernelArg Args[] = {KernelArg::pointer(&Hits)};
  CancelToken Token;
  LaunchOptions LO;
  LO.Cancel = &Token;
  std::thread Canceller([&] {
    while (__atomic_load_n(&Hits, __ATOMIC_RELAXED) == 0)
      std::this_thread::yield();
    Token.cancel();
  });
  llvm::Error E = L.RT->launch(*L.M, "count", config(0x7fffffff, 1), Args, LO);
  Canceller.join();
  ASSERT_TRUE(failed(E));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Cancelled);
  std::string Msg = errorText(std::move(E));
  EXPECT_EQ(Msg, "kernel 'count' was cancelled (LaunchOptions::Cancel): stopped after " +
                     std::to_string(Hits) +
                     " of 2147483647 blocks; memory the kernel wrote until then stays written");
  EXPECT_GT(Hits, 0u);
  EXPECT_LT(Hits, 0x7fffffffu);
  EXPECT_TRUE(Token.isCancelled());

  // A token that is already cancelled: no block runs, cooperative or not.
  Hits = 0;
  E = L.RT->launch(*L.M, "count", config(64, 8), Args, LO);
  EXPECT_EQ(errorText(std::move(E)),
            "kernel 'count' was cancelled (LaunchOptions::Cancel): stopped after 0 of 64 blocks; "
            "memory the kernel wrote until then stays written");
  EXPECT_EQ(Hits, 0u);
  std::vector<int32_t> Out(64, -1), Tmp(64, -1);
  KernelArg PArgs[] = {KernelArg::pointer(Out.data()), KernelArg::pointer(Tmp.data())};
  E = L.RT->launch(*L.M, "phases", config(8, 8), PArgs, LO);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Cancelled);
  EXPECT_EQ(errorText(std::move(E)),
            "kernel 'phases' was cancelled (LaunchOptions::Cancel): stopped in grid-wide phase 1 "
            "after 0 block runs; memory the kernel wrote until then stays written");
  EXPECT_EQ(Tmp, std::vector<int32_t>(64, -1));

  // A fresh token that nobody cancels changes nothing, and a timeout
  // that passes first is still a timeout, told apart from a cancel.
  CancelToken Fresh;
  LO.Cancel = &Fresh;
  expectEveryBlockRuns(L, LO);
  LO.TimeoutMilliseconds = 1;
  E = L.RT->launch(*L.M, "count", config(0x7fffffff, 1), Args, LO);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Timeout);
  llvm::consumeError(std::move(E));
}

/// Floats that end where an inaccessible page starts: the first access
/// past the end faults (a kernel's overrun must not scribble over the
/// test's heap before it faults).
class GuardedFloats {
public:
  explicit GuardedFloats(size_t N, float Init) {
    size_t Page = size_t(sysconf(_SC_PAGESIZE));
    Bytes = (N * sizeof(float) + Page - 1) / Page * Page + Page;
    Base = static_cast<char *>(
        mmap(nullptr, Bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
    if (Base == MAP_FAILED) {
      Base = nullptr;
      return;
    }
    mprotect(Base + Bytes - Page, Page, PROT_NONE);
    Data = reinterpret_cast<float *>(Base + Bytes - Page) - N;
    std::fill(Data, Data + N, Init);
  }
  ~GuardedFloats() {
    if (Base)
      munmap(Base, Bytes);
  }
  float *data() const { return Data; }
  float operator[](size_t I) const { return Data[I]; }

private:
  size_t Bytes = 0;
  char *Base = nullptr;
  float *Data = nullptr;
};

// saxpy with n far beyond its buffers: the first thread past them faults.
llvm::Error launchFaultingSaxpy(Loaded &L, GuardedFloats &X, GuardedFloats &Y,
                                const LaunchOptions &LO = {}) {
  KernelArg Args[] = {KernelArg::i32(0x7fffffff), KernelArg::f32(2.0f),
                      KernelArg::pointer(X.data()), KernelArg::pointer(Y.data())};
  return L.RT->launch(*L.M, "saxpy", config(1u << 21, 1024), Args, LO);
}

TEST(HostRuntimeTest, KernelFaultsAreErrorsAndTheRuntimeGoesOn) {
  HostRuntimeOptions O;
  O.NumThreads = 3;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  GuardedFloats X(1000, 1.0f), Y(1000, 1.0f);
  ASSERT_TRUE(X.data() && Y.data());
  for (int Round = 0; Round < 20; ++Round) {
    llvm::Error E = launchFaultingSaxpy(L, X, Y);
    ASSERT_TRUE(E.isA<KernelFaultError>()) << Round;
    std::string Msg = errorText(std::move(E));
    EXPECT_THAT(Msg, HasSubstr("kernel 'saxpy' accessed memory outside its buffers (SIGSEGV at "
                               "address 0x"));
    EXPECT_THAT(Msg, HasSubstr("what the kernel wrote until then stays written"));
  }
  // Block 0 ran before the fault stopped the launch (it is the first
  // block handed out; the fault is in block 1, past the buffers).
  EXPECT_GE(Y[0], 3.0f);
  // The pool's threads all survived: every one takes part again.
  std::vector<float> X2(4096), Y2(4096, 1.0f);
  std::iota(X2.begin(), X2.end(), 0.0f);
  KernelArg Args[] = {KernelArg::i32(4096), KernelArg::f32(2.0f), KernelArg::pointer(X2.data()),
                      KernelArg::pointer(Y2.data())};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "saxpy", config(128, 32), Args)));
  for (int I = 0; I < 4096; ++I)
    ASSERT_EQ(Y2[I], 2.0f * I + 1.0f) << I;
}

// A fault that is not a caught kernel's goes to the handler that was there
// before gridjit's (here the child's own, which exits 42): gridjit's
// handler passes it on rather than swallow or misreport it.
constexpr const char *FaultChildVar = "GRIDJIT_TEST_FAULT_CHILD";

TEST(HostRuntimeTest, FaultsOutsideCaughtKernelsReachThePreviousHandler) {
  ChildRun R =
      runChildTest("HostRuntimeTest.DISABLED_FaultChild", {std::string(FaultChildVar) + "=1"}, 300);
  EXPECT_EQ(R.ExitCode, 42) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, HasSubstr("caught: kernel 'saxpy' accessed memory outside its buffers"));
  EXPECT_THAT(R.Output, HasSubstr("uncaught launch next"));
}

extern "C" void exitOnFault(int) { _exit(42); }

TEST(HostRuntimeTest, DISABLED_FaultChild) {
  if (!std::getenv(FaultChildVar))
    GTEST_SKIP() << "run by FaultsOutsideCaughtKernelsReachThePreviousHandler";
  struct sigaction SA;
  std::memset(&SA, 0, sizeof(SA));
  SA.sa_handler = exitOnFault;
  sigemptyset(&SA.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &SA, nullptr), 0);
  HostRuntimeOptions O;
  O.NumThreads = 2;
  Loaded L = load(O);
  ASSERT_TRUE(L.M);
  GuardedFloats X(1000, 1.0f), Y(1000, 1.0f);
  ASSERT_TRUE(X.data() && Y.data());
  llvm::Error E = launchFaultingSaxpy(L, X, Y);
  ASSERT_TRUE(E.isA<KernelFaultError>());
  std::fprintf(stderr, "caught: %s\n", errorText(std::move(E)).c_str());
  std::fprintf(stderr, "uncaught launch next\n");
  std::fflush(stderr);
  LaunchOptions Off;
  Off.CatchFaults = false;
  llvm::Error E2 = launchFaultingSaxpy(L, X, Y, Off);
  // Not reached: the fault went to exitOnFault.
  ADD_FAILURE() << "the launch returned: " << errorText(std::move(E2));
}

TEST(HostRuntimeTest, OtherTargetsArtifactsAreRefused) {
  auto RT = HostRuntime::create();
  ASSERT_TRUE(succeeded(RT));
  Artifact A;
  A.Kind = TargetKind::NVPTX;
  A.Payload = "// PTX";
  auto M = (*RT)->load(A);
  ASSERT_FALSE(M);
  EXPECT_THAT(errorText(M.takeError()), HasSubstr("cannot load an artifact for target 'nvptx'"));
}

TEST(HostRuntimeTest, AnArtifactCopyLoadsIntoAFreshRuntime) {
  // What a cache hit in a fresh process does: only the artifact's bytes
  // and metadata, no compilation state.
  Artifact Copy = artifact();
  auto RT = HostRuntime::create();
  ASSERT_TRUE(succeeded(RT));
  auto M = (*RT)->load(Copy);
  ASSERT_TRUE(succeeded(M));
  ASSERT_EQ((*M)->getKernels().size(), 5u);
  EXPECT_TRUE((*M)->getKernels()[3].Cooperative);
  std::vector<int32_t> Out(6), Tmp(6);
  KernelArg Args[] = {KernelArg::pointer(Out.data()), KernelArg::pointer(Tmp.data())};
  ASSERT_TRUE(succeeded((*RT)->launch(**M, "phases", config(3, 2), Args)));
  for (int G = 0; G < 6; ++G)
    EXPECT_EQ(Out[G], (G + 1) % 6);
}

// gridjit's threads belong to the caller: using it must not change the
// OpenMP runtime's settings or the environment.
TEST(RuntimeOpenMPTest, LaunchesLeaveOpenMPSettingsAndEnvironmentAlone) {
  void *GOMP = dlopen("libgomp.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!GOMP)
    GTEST_SKIP() << "libgomp.so.1 is not installed (" << dlerror() << ")";
  using SetFn = void (*)(int);
  using GetFn = int (*)();
  auto Set = reinterpret_cast<SetFn>(dlsym(GOMP, "omp_set_num_threads"));
  auto Get = reinterpret_cast<GetFn>(dlsym(GOMP, "omp_get_max_threads"));
  ASSERT_TRUE(Set && Get);
  const char *Before = std::getenv("OMP_NUM_THREADS");
  std::string BeforeValue = Before ? Before : "";
  Set(3);
  ASSERT_EQ(Get(), 3);
  {
    HostRuntimeOptions O;
    O.NumThreads = 2;
    Loaded L = load(O);
    ASSERT_TRUE(L.M);
    uint64_t Hits = 0;
    KernelArg Args[] = {KernelArg::pointer(&Hits)};
    for (int I = 0; I < 3; ++I)
      ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "count", config(64, 32), Args)));
    EXPECT_EQ(Hits, 3u * 64 * 32);
    Loaded Default = load(); // the default pool size reads no environment
    ASSERT_TRUE(Default.M);
    EXPECT_EQ(Default.RT->getNumThreads(), HostRuntime::availableCPUs());
  }
  EXPECT_EQ(Get(), 3);
  const char *After = std::getenv("OMP_NUM_THREADS");
  EXPECT_EQ(Before == nullptr, After == nullptr);
  EXPECT_EQ(BeforeValue, After ? After : "");
  // libgomp stays loaded: omp_set_num_threads allocated the calling
  // thread's OpenMP state, which only libgomp's thread-local data points
  // to, and unloading it would leave that allocation unreachable (a leak
  // LeakSanitizer reports, from an unloaded module).
}

} // namespace
