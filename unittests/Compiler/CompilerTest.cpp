//===- CompilerTest.cpp - The front door: results, caching, concurrency ---===//
//
// Part of gridjit. Among them the regression tests of the two failures the
// cache exists to prevent: many threads calling a kernel's first compile at
// once with the disk cache on get one compilation and no error; and
// 16 threads x 1000 requests over 50 kernels give exactly 50 compiles.
// Run these under TSan too (GRIDJIT_SANITIZE=thread).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Compiler/Compiler.h"
#include "Cache/CacheTestUtil.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Program.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <latch>
#include <sys/resource.h>
#include <thread>

using namespace gridjit;
using namespace gridjit::test;
namespace fs = llvm::sys::fs;

namespace {

using ::testing::HasSubstr;

/// The names of the files in \p Dir.
std::vector<std::string> listDir(const std::string &Dir) {
  std::vector<std::string> Names;
  std::error_code EC;
  for (fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC))
    Names.push_back(llvm::sys::path::filename(It->path()).str());
  return Names;
}

TEST(CompilerTest, CompilesAndDescribesKernels) {
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  CompileInfo I;
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  ASSERT_TRUE(succeeded(M));
  const Artifact &A = (*M)->Art;
  EXPECT_EQ(A.Kind, TargetKind::NVPTX);
  EXPECT_EQ(A.Arch, "sm_80");
  EXPECT_THAT(A.Payload, HasSubstr(".entry saxpy"));
  ASSERT_EQ(A.Kernels.size(), 1u);
  EXPECT_EQ(A.Kernels[0].Params.size(), 4u);
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(I.Key, (*M)->Key);
  EXPECT_GT(I.Times.ParseMs, 0);
  EXPECT_GT(I.Times.CodegenMs, 0);
  EXPECT_GE(I.TotalMs, I.Times.CodegenMs);
}

TEST(CompilerTest, SecondRequestIsAMemoryHitWithoutParsing) {
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  auto A = C->compile(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(A));
  CompileInfo I;
  auto B = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  ASSERT_TRUE(succeeded(B));
  EXPECT_EQ(A->get(), B->get());
  EXPECT_EQ(I.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(I.Times.ParseMs, 0); // the text memo answered
  CompilerStats S = C->getStats();
  EXPECT_EQ(S.Requests, 2u);
  EXPECT_EQ(S.MemoryHits, 1u);
  EXPECT_EQ(S.Compiles, 1u);
}

TEST(CompilerTest, DiskHitInAFreshCompiler) {
  TempDir Dir;
  auto C1 = makeCompiler(Dir.path());
  auto A = C1->compile(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(A));
  auto C2 = makeCompiler(Dir.path());
  CompileInfo I;
  auto B = C2->compile(SaxpySource, "saxpy.kir", {}, &I);
  ASSERT_TRUE(succeeded(B));
  EXPECT_EQ(I.Outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(C2->getStats().Compiles, 0u);
  EXPECT_EQ(C2->getStats().DiskHits, 1u);
  EXPECT_EQ((*A)->Art.Payload, (*B)->Art.Payload);
  EXPECT_EQ((*A)->Key, (*B)->Key);
  // No lock or temp file is left behind.
  for (const std::string &N : listDir(Dir.path()))
    EXPECT_TRUE(llvm::StringRef(N).ends_with(".gjc")) << N;
}

TEST(CompilerTest, NoDiskCacheWritesNothing) {
  TempDir Dir;
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.UseDiskCache = false;
  O.CacheDir = Dir.path();
  auto C = Compiler::create(O);
  ASSERT_TRUE(succeeded(C));
  ASSERT_TRUE(succeeded((*C)->compile(SaxpySource, "s.kir")));
  EXPECT_TRUE(listDir(Dir.path()).empty());
  EXPECT_EQ((*C)->getCacheDirectory(), "");
}

// Regression test: 16 threads call the first compile of one kernel at the
// same moment, with the disk cache on. One compile, no errors, no warnings,
// everyone gets the same module. Repeated on fresh directories to give a
// race more chances to show.
TEST(CompilerTest, SixteenThreadsFirstCompileOneCompilation) {
  std::string GridSync = readExample("grid_sync.kir");
  for (unsigned Round = 0; Round < 5; ++Round) {
    TempDir Dir;
    std::vector<std::string> Warnings;
    auto C = makeCompiler(Dir.path(), &Warnings);
    ASSERT_TRUE(C);
    constexpr unsigned N = 16;
    std::latch Start(N);
    std::vector<const CompiledModule *> Got(N, nullptr);
    std::vector<std::string> Errors(N);
    std::vector<std::thread> Threads;
    for (unsigned T = 0; T < N; ++T)
      Threads.emplace_back([&, T] {
        Start.arrive_and_wait();
        auto M = C->compile(GridSync, "grid_sync.kir");
        if (!M)
          Errors[T] = llvm::toString(M.takeError());
        else
          Got[T] = M->get();
      });
    for (std::thread &T : Threads)
      T.join();
    for (unsigned T = 0; T < N; ++T) {
      EXPECT_EQ(Errors[T], "") << "thread " << T;
      EXPECT_EQ(Got[T], Got[0]) << "thread " << T;
    }
    CompilerStats S = C->getStats();
    EXPECT_EQ(S.Compiles, 1u) << "round " << Round;
    EXPECT_EQ(S.CompileFailures, 0u);
    EXPECT_EQ(S.Disk.Stores, 1u);
    EXPECT_TRUE(Warnings.empty());
    ASSERT_NE(Got[0], nullptr);
    ASSERT_EQ(Got[0]->Art.Kernels.size(), 1u);
    EXPECT_TRUE(Got[0]->Art.Kernels[0].Cooperative);
    std::vector<std::string> Files = listDir(Dir.path());
    ASSERT_EQ(Files.size(), 1u);
    EXPECT_EQ(Files[0], "gridjit-" + Got[0]->Key.hex() + ".gjc");
  }
}

// 16 threads x 1000 requests over 50 kernels: exactly 50 compiles. A third
// of the requests spell their kernel differently (a comment and extra
// spaces), which takes the full parse-verify-key path instead of the text
// memo, and must still hit.
TEST(CompilerTest, SixteenThreadsThousandRequestsFiftyKernels) {
  TempDir Dir;
  auto C = makeCompiler(Dir.path());
  ASSERT_TRUE(C);
  constexpr unsigned NumKernels = 50, NumThreads = 16, PerThread = 1000;
  std::vector<std::string> Texts, Respelled;
  for (unsigned I = 0; I < NumKernels; ++I) {
    Texts.push_back(makeKernel(I));
    Respelled.push_back("// kernel " + std::to_string(I) + "\n  " + makeKernel(I) + "\n\n");
  }
  std::vector<std::atomic<const CompiledModule *>> First(NumKernels);
  for (auto &F : First)
    F = nullptr;
  std::atomic<unsigned> Errors{0}, Mismatches{0};
  std::latch Start(NumThreads);
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < NumThreads; ++T)
    Threads.emplace_back([&, T] {
      Start.arrive_and_wait();
      for (unsigned J = 0; J < PerThread; ++J) {
        unsigned K = (J * 7 + T * 13) % NumKernels;
        const std::string &Text = (J % 3 == 0) ? Respelled[K] : Texts[K];
        auto M = C->compile(Text, "k.kir");
        if (!M) {
          llvm::consumeError(M.takeError());
          ++Errors;
          continue;
        }
        const CompiledModule *Expected = nullptr;
        if (!First[K].compare_exchange_strong(Expected, M->get()) && Expected != M->get())
          ++Mismatches;
        if ((*M)->Art.Kernels.size() != 1 || (*M)->Art.Kernels[0].Name != "k" + std::to_string(K))
          ++Mismatches;
      }
    });
  for (std::thread &T : Threads)
    T.join();
  CompilerStats S = C->getStats();
  EXPECT_EQ(Errors.load(), 0u);
  EXPECT_EQ(Mismatches.load(), 0u);
  EXPECT_EQ(S.Compiles, NumKernels);
  EXPECT_EQ(S.Requests, uint64_t(NumThreads) * PerThread);
  EXPECT_EQ(S.Disk.Stores, NumKernels);
  EXPECT_EQ(S.MemoryHits + S.SharedWaits + S.Compiles, S.Requests);
}

// A failing compile reaches every request that waited for it, and is not
// cached: the next request compiles (and fails) again. The waiters are made
// to queue up behind the leader by holding the key's disk lock, as another
// process compiling it would.
TEST(CompilerTest, FailureIsDeliveredToEveryWaiterAndNotCached) {
  NVPTXTargetOptions TO;
  TO.OmitLowerings = {Op::Mul};
  auto Broken = createNVPTXTarget(TO);
  ASSERT_TRUE(succeeded(Broken));
  std::shared_ptr<const Target> BT(std::move(*Broken));
  TempDir Dir;
  auto C = makeCompiler(Dir.path(), nullptr, {BT});
  ASSERT_TRUE(C);
  auto Key = C->computeKey(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(Key));

  DiskCacheOptions DO;
  DO.Dir = Dir.path();
  DiskCache OtherProcess(DO);
  DiskCache::KeyLock Held = OtherProcess.lockKey(*Key);
  ASSERT_TRUE(Held.held());

  constexpr unsigned N = 8;
  std::vector<std::string> Errors(N);
  std::vector<char> IsDiagnostic(N, 0); // not vector<bool>: threads write neighbours
  std::vector<std::thread> Threads;
  for (unsigned T = 0; T < N; ++T)
    Threads.emplace_back([&, T] {
      auto M = C->compile(SaxpySource, "saxpy.kir");
      if (M) {
        Errors[T] = "succeeded";
        return;
      }
      llvm::handleAllErrors(M.takeError(), [&](const DiagnosticError &D) {
        IsDiagnostic[T] = 1;
        std::string S;
        llvm::raw_string_ostream OS(S);
        D.log(OS);
        Errors[T] = S;
      });
    });
  // Let the leader reach the lock and the others queue behind it.
  auto Deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
  while (C->getStats().Disk.LockWaits == 0 && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_EQ(C->getStats().Disk.LockWaits, 1u);
  // Release the lock only when every other thread has found the leader's
  // flight (a request counts its memory miss in the same critical section
  // in which it joins a flight); a fixed sleep here let a thread that the
  // scheduler started late compile on its own.
  while (C->getStats().MemoryMisses < N && std::chrono::steady_clock::now() < Deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  uint64_t Joined = C->getStats().MemoryMisses;
  Held.release();
  for (std::thread &T : Threads)
    T.join();
  ASSERT_EQ(Joined, N) << "not every thread found the leader's flight in time";

  CompilerStats S = C->getStats();
  EXPECT_EQ(S.Compiles, 1u);
  EXPECT_EQ(S.CompileFailures, 1u);
  EXPECT_EQ(S.SharedWaits, N - 1);
  for (unsigned T = 0; T < N; ++T) {
    EXPECT_TRUE(IsDiagnostic[T]) << T;
    EXPECT_EQ(Errors[T], Errors[0]) << T;
  }
  EXPECT_THAT(Errors[0], HasSubstr("saxpy.kir:2:"));
  EXPECT_THAT(Errors[0], HasSubstr("no lowering for 'mul' on target 'nvptx'"));

  // Not cached as a success, in memory or on disk.
  auto Again = C->compile(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(failed(Again));
  llvm::consumeError(Again.takeError());
  EXPECT_EQ(C->getStats().Compiles, 2u);
  EXPECT_TRUE(listDir(Dir.path()).empty());
}

TEST(CompilerTest, CompileAsync) {
  auto C = makeCompiler("");
  ASSERT_TRUE(C);
  std::vector<std::future<llvm::Expected<CompiledModuleRef>>> Futures;
  for (unsigned I = 0; I < 100; ++I)
    Futures.push_back(C->compileAsync(makeKernel(I % 10), "k.kir"));
  // Before get(): a synchronisation ThreadSanitizer can see. In a TSan
  // build LLVM is not instrumented, and libLLVMSupport (linked into the
  // test binary) brings its own, uninstrumented copies of libstdc++'s inline
  // promise machinery (_State_baseV2::_M_set_result), which the linker
  // keeps; the release that publishes a promise's value is then invisible
  // to TSan and future::get() alone is reported as a race (a false
  // positive). waitForAsync synchronises through gridjit's own mutex.
  C->waitForAsync();
  for (unsigned I = 0; I < 100; ++I) {
    auto M = Futures[I].get();
    ASSERT_TRUE(succeeded(M));
    EXPECT_EQ((*M)->Art.Kernels[0].Name, "k" + std::to_string(I % 10));
  }
  EXPECT_EQ(C->getStats().Compiles, 10u);
  // An error arrives through the future too.
  auto BadFuture = C->compileAsync("kernel k( {", "bad.kir");
  C->waitForAsync();
  auto Bad = BadFuture.get();
  ASSERT_TRUE(failed(Bad));
  EXPECT_THAT(llvm::toString(Bad.takeError()), HasSubstr("bad.kir:1:"));
}

// When the system cannot start a thread for compileAsync (its limits), the
// compile runs on the caller's thread instead of waiting in a queue that
// nobody serves. The child runs with a default thread stack (RLIMIT_STACK
// at exec) too large to map, so std::thread cannot start.
constexpr const char *NoThreadsChildVar = "GRIDJIT_TEST_NO_THREADS_CHILD";

TEST(CompilerTest, AsyncCompileRunsInlineWhenNoThreadCanStart) {
  // glibc sizes a thread's default stack from RLIMIT_STACK when the
  // process starts: 64 TiB cannot be mapped.
  struct rlimit Old;
  ASSERT_EQ(getrlimit(RLIMIT_STACK, &Old), 0);
  struct rlimit Huge = Old;
  Huge.rlim_cur = rlim_t(64) << 40;
  if (Huge.rlim_max != RLIM_INFINITY && Huge.rlim_max < Huge.rlim_cur)
    GTEST_SKIP() << "RLIMIT_STACK's hard limit is too low to run this test";
  ASSERT_EQ(setrlimit(RLIMIT_STACK, &Huge), 0);
  ChildRun R = runChildTest("CompilerTest.DISABLED_AsyncCompileWithoutThreadsChild",
                            {std::string(NoThreadsChildVar) + "=1"});
  ASSERT_EQ(setrlimit(RLIMIT_STACK, &Old), 0);
  EXPECT_EQ(R.ExitCode, 0) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_NE(R.Output.find(ChildPassedLine), std::string::npos) << "child output:\n" << R.Output;
}

TEST(CompilerTest, DISABLED_AsyncCompileWithoutThreadsChild) {
  if (!std::getenv(NoThreadsChildVar))
    GTEST_SKIP() << "run by AsyncCompileRunsInlineWhenNoThreadCanStart";
  // The premise: no thread can start in this process.
  bool Started = false;
  try {
    std::thread([] {}).join();
    Started = true;
  } catch (const std::system_error &) {
  }
  ASSERT_FALSE(Started) << "a thread started: the test's premise does not hold";
  auto C = makeCompiler("");
  auto F = C->compileAsync(makeKernel(3), "k.kir");
  // Compiled before compileAsync returned, on this thread.
  ASSERT_EQ(F.wait_for(std::chrono::seconds(0)), std::future_status::ready);
  auto M = F.get();
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ((*M)->Art.Kernels[0].Name, "k3");
  C->waitForAsync();
}

TEST(CompilerTest, DestroyingWaitsForAsyncCompiles) {
  std::vector<std::future<llvm::Expected<CompiledModuleRef>>> Futures;
  {
    auto C = makeCompiler("");
    for (unsigned I = 0; I < 8; ++I)
      Futures.push_back(C->compileAsync(makeKernel(I), "k.kir"));
  }
  for (auto &F : Futures) {
    auto M = F.get();
    EXPECT_TRUE(succeeded(M));
    if (!M)
      llvm::consumeError(M.takeError());
  }
}

TEST(CompilerTest, MemoryCacheIsBoundedLRU) {
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.UseDiskCache = false;
  O.MemoryCacheCapacity = 2;
  auto C = Compiler::create(O);
  ASSERT_TRUE(succeeded(C));
  auto K0 = (*C)->compile(makeKernel(0), "k.kir");
  ASSERT_TRUE(succeeded(K0));
  ASSERT_TRUE(succeeded((*C)->compile(makeKernel(1), "k.kir")));
  ASSERT_TRUE(succeeded((*C)->compile(makeKernel(0), "k.kir"))); // k0 most recent
  ASSERT_TRUE(succeeded((*C)->compile(makeKernel(2), "k.kir"))); // evicts k1
  EXPECT_EQ((*C)->getStats().Evictions, 1u);
  CompileInfo I;
  ASSERT_TRUE(succeeded((*C)->compile(makeKernel(0), "k.kir", {}, &I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::MemoryHit);
  ASSERT_TRUE(succeeded((*C)->compile(makeKernel(1), "k.kir", {}, &I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*C)->getStats().Compiles, 4u);
  // An evicted module stays valid for whoever holds it.
  (*C)->clearMemoryCache();
  EXPECT_EQ((*K0)->Art.Kernels[0].Name, "k0");
}

TEST(CompilerTest, BuiltModulesAreKeyedByTheirCanonicalPrint) {
  auto C = makeCompiler("");
  auto M = parseAndVerify(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(M));
  auto Text = C->compile(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(Text));
  CompileInfo I;
  auto Built = C->compile(**M, {}, &I);
  ASSERT_TRUE(succeeded(Built));
  EXPECT_EQ(I.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(Text->get(), Built->get());

  auto Unverified = parseModule(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(Unverified));
  auto R = C->compile(**Unverified);
  ASSERT_TRUE(failed(R));
  EXPECT_THAT(llvm::toString(R.takeError()), HasSubstr("not verified"));
}

TEST(CompilerTest, RequestErrors) {
  auto C = makeCompiler("");
  CompileRequest R;
  R.Target = "tpu";
  auto A = C->compile(SaxpySource, "s.kir", R);
  ASSERT_TRUE(failed(A));
  EXPECT_THAT(llvm::toString(A.takeError()), HasSubstr("no target 'tpu' (it has: nvptx)"));
  CompileRequest O;
  O.OptLevel = 4;
  auto B = C->compile(SaxpySource, "s.kir", O);
  ASSERT_TRUE(failed(B));
  EXPECT_THAT(llvm::toString(B.takeError()), HasSubstr("optimisation level 4"));
  // Source errors are the front end's located diagnostics, and uncached.
  for (unsigned I = 0; I < 2; ++I) {
    auto D = C->compile("kernel k() { let x: i32 = true; }", "bad.kir");
    ASSERT_TRUE(failed(D));
    bool Diag = false;
    llvm::handleAllErrors(D.takeError(), [&](const DiagnosticError &) { Diag = true; });
    EXPECT_TRUE(Diag);
  }
  EXPECT_EQ(C->getStats().Compiles, 0u);

  CompilerOptions Two;
  Two.Targets = {nvptxTarget(), nvptxTarget()};
  auto Dup = Compiler::create(Two);
  ASSERT_TRUE(failed(Dup));
  EXPECT_THAT(llvm::toString(Dup.takeError()), HasSubstr("two targets named 'nvptx'"));
}

/// A Compiler (no disk cache) of the host target, then the nvptx target
/// when \p WithNVPTX; null, with the reason in \p Why, when this machine
/// has no host target.
std::unique_ptr<Compiler> hostCompiler(std::string &Why, bool WithNVPTX) {
  auto Host = hostTarget(&Why);
  if (!Host)
    return nullptr;
  std::vector<std::shared_ptr<const Target>> Targets{Host};
  if (WithNVPTX)
    Targets.push_back(nvptxTarget());
  return makeCompiler("", nullptr, std::move(Targets));
}

TEST(CompilerTest, SeveralTargets) {
  std::string Why;
  auto C = hostCompiler(Why, /*WithNVPTX=*/true);
  if (!C)
    GTEST_SKIP() << "no host target: " << Why;
  CompileRequest R;
  R.Target = "nvptx";
  auto P = C->compile(SaxpySource, "s.kir", R);
  ASSERT_TRUE(succeeded(P));
  EXPECT_EQ((*P)->Art.Kind, TargetKind::NVPTX);
  auto H = C->compile(SaxpySource, "s.kir"); // the first target
  ASSERT_TRUE(succeeded(H));
  EXPECT_EQ((*H)->Art.Kind, TargetKind::Host);
  EXPECT_NE((*H)->Key, (*P)->Key);
  EXPECT_EQ(C->getStats().Compiles, 2u);
}

/// A checked request (CompileRequest::Check) is compiled by the host
/// target's checked twin: its own cache entry, made once per architecture
/// for the Compiler's life; unchecked requests are as before; nvptx and an
/// architecture outside sm_70..sm_90 are InvalidArgument errors.
TEST(CompilerTest, CheckedRequestsUseTheCheckedTwin) {
  std::string Why;
  auto C = hostCompiler(Why, /*WithNVPTX=*/true);
  if (!C)
    GTEST_SKIP() << "no host target: " << Why;
  CompileInfo PlainInfo, CheckedInfo, AgainInfo;
  auto Plain = C->compile(SaxpySource, "s.kir", {}, &PlainInfo);
  ASSERT_TRUE(succeeded(Plain));
  CompileRequest Checked;
  Checked.Check = true;
  auto K = C->compile(SaxpySource, "s.kir", Checked, &CheckedInfo);
  ASSERT_TRUE(succeeded(K));
  // Two entries, two compiles: the text memo and the memory cache tell
  // them apart.
  EXPECT_EQ(CheckedInfo.Outcome, CacheOutcome::Compiled);
  EXPECT_NE((*K)->Key, (*Plain)->Key);
  EXPECT_NE(K->get(), Plain->get());
  EXPECT_EQ((*K)->Art.Kind, TargetKind::Host);
  auto Again = C->compile(SaxpySource, "s.kir", Checked, &AgainInfo);
  ASSERT_TRUE(succeeded(Again));
  EXPECT_EQ(AgainInfo.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(Again->get(), K->get());
  auto PlainAgain = C->compile(SaxpySource, "s.kir");
  ASSERT_TRUE(succeeded(PlainAgain));
  EXPECT_EQ(PlainAgain->get(), Plain->get());
  EXPECT_EQ(C->getStats().Compiles, 2u);

  // The unchecked key is the one a Compiler that never saw a checked
  // request gives (unchanged by the option).
  auto Fresh = hostCompiler(Why, /*WithNVPTX=*/true);
  auto FreshKey = Fresh->computeKey(SaxpySource, "s.kir");
  ASSERT_TRUE(succeeded(FreshKey));
  EXPECT_EQ(*FreshKey, (*Plain)->Key);
  // computeKey, compileAsync and a module built in memory take the request.
  auto CheckedKey = C->computeKey(SaxpySource, "s.kir", Checked);
  ASSERT_TRUE(succeeded(CheckedKey));
  EXPECT_EQ(*CheckedKey, (*K)->Key);
  auto Async = C->compileAsync(SaxpySource, "s.kir", Checked);
  C->waitForAsync();
  auto AsyncM = Async.get();
  ASSERT_TRUE(succeeded(AsyncM));
  EXPECT_EQ(AsyncM->get(), K->get());
  auto M = parseAndVerify(SaxpySource, "s.kir");
  ASSERT_TRUE(succeeded(M));
  auto Built = C->compile(**M, Checked);
  ASSERT_TRUE(succeeded(Built));
  EXPECT_EQ((*Built)->Key, (*K)->Key);

  // One twin per architecture, kept: the same target object each time.
  auto T80 = C->getTargetFor(Checked);
  auto T80Again = C->getTargetFor(Checked);
  ASSERT_TRUE(succeeded(T80) && succeeded(T80Again));
  EXPECT_EQ(*T80, *T80Again);
  EXPECT_NE(*T80, C->getTarget("host"));
  EXPECT_NE((*T80)->getFingerprint(), C->getTarget("host")->getFingerprint());
  CompileRequest Sm90 = Checked;
  Sm90.CheckArch = 90;
  auto K90 = C->compile(SaxpySource, "s.kir", Sm90);
  ASSERT_TRUE(succeeded(K90));
  EXPECT_NE((*K90)->Key, (*K)->Key);
  EXPECT_EQ(C->getStats().Compiles, 3u);

  // No checked code for nvptx; architectures outside sm_70..sm_90.
  CompileRequest Nvptx = Checked;
  Nvptx.Target = "nvptx";
  auto N = C->compile(SaxpySource, "s.kir", Nvptx);
  ASSERT_TRUE(failed(N));
  llvm::Error NE = N.takeError();
  EXPECT_EQ(peekErrorKind(NE), ErrorKind::InvalidArgument);
  EXPECT_THAT(llvm::toString(std::move(NE)), HasSubstr("target 'nvptx' has no checked code"));
  for (unsigned Arch : {69u, 91u}) {
    CompileRequest Bad = Checked;
    Bad.CheckArch = Arch;
    auto B = C->compile(SaxpySource, "s.kir", Bad);
    ASSERT_TRUE(failed(B));
    EXPECT_THAT(llvm::toString(B.takeError()),
                HasSubstr("from sm_70 to sm_90, not sm_" + std::to_string(Arch)));
  }
  CompileRequest Edge = Checked;
  Edge.CheckArch = 70;
  EXPECT_TRUE(succeeded(C->getTargetFor(Edge)));
}

/// Many threads asking for one checked twin at once all get the same one
/// (it is made outside the Compiler's locks; the first inserted is kept).
TEST(CompilerTest, CheckedTwinIsSharedAcrossThreads) {
  std::string Why;
  auto C = hostCompiler(Why, /*WithNVPTX=*/false);
  if (!C)
    GTEST_SKIP() << "no host target: " << Why;
  CompileRequest Checked;
  Checked.Check = true;
  constexpr unsigned N = 8;
  std::vector<const Target *> Got(N);
  std::latch Start(N);
  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < N; ++I)
    Threads.emplace_back([&, I] {
      Start.arrive_and_wait();
      auto T = C->getTargetFor(Checked);
      Got[I] = T ? *T : nullptr;
      llvm::consumeError(T.takeError());
    });
  for (std::thread &T : Threads)
    T.join();
  for (const Target *T : Got) {
    EXPECT_NE(T, nullptr);
    EXPECT_EQ(T, Got[0]);
  }
}

} // namespace
