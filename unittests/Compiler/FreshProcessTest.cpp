//===- FreshProcessTest.cpp - A cached grid_sync kernel in a new process --===//
//
// Part of gridjit. Regression test: a kernel that uses grid_sync, compiled
// and cached by one process, is loaded from the disk cache by a new process
// that has compiled nothing, and launches cooperatively with the right
// result (host target; the NVPTX artifact's metadata is checked too).
//
// The parent test compiles examples/grid_sync.kir into a fresh cache
// directory, then runs this test binary again as a child restricted to
// the DISABLED_ child test below, with the directory in the environment.
// The child must get the module as a disk hit with zero compiles, check
// its launch metadata, load it into a HostRuntime and run it.
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>

#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

constexpr const char *ChildDirVar = "GRIDJIT_TEST_FRESH_PROCESS_CACHE_DIR";

/// The launch metadata two_phase must have, wherever it came from.
void expectTwoPhaseMetadata(const Artifact &A) {
  const KernelInfo *K = A.getKernel("two_phase");
  ASSERT_NE(K, nullptr);
  EXPECT_TRUE(K->Cooperative);
  EXPECT_EQ(K->StaticSharedBytes, 0u);
  EXPECT_FALSE(K->UsesDynamicShared);
  ASSERT_EQ(K->Params.size(), 4u);
  const char *Names[] = {"n", "x", "tmp", "y"};
  for (unsigned I = 0; I < 4; ++I)
    EXPECT_EQ(K->Params[I].Name, Names[I]);
  EXPECT_EQ(K->Params[0].Ty, Type::getScalar(ScalarKind::I32));
  EXPECT_EQ(K->Params[0].Size, 4u);
  for (unsigned I = 1; I < 4; ++I) {
    EXPECT_EQ(K->Params[I].Ty, Type::getPointer(ScalarKind::F32));
    EXPECT_EQ(K->Params[I].Size, 8u);
    EXPECT_EQ(K->Params[I].Align, 8u);
  }
}

std::vector<std::shared_ptr<const Target>> targetsForThisTest(std::string *Why) {
  std::vector<std::shared_ptr<const Target>> Ts;
  if (auto Host = hostTarget(Why))
    Ts.push_back(Host);
  Ts.push_back(nvptxTarget());
  return Ts;
}

TEST(FreshProcessTest, CachedGridSyncKernelLaunchesInANewProcess) {
  std::string Why;
  auto Targets = targetsForThisTest(&Why);
  if (Targets.size() < 2)
    GTEST_SKIP() << "no host target: " << Why;
  TempDir Dir;
  std::string Text = readExample("grid_sync.kir");
  {
    auto C = makeCompiler(Dir.path(), nullptr, Targets);
    ASSERT_TRUE(C);
    for (const char *T : {"host", "nvptx"}) {
      CompileRequest R;
      R.Target = T;
      auto M = C->compile(Text, "grid_sync.kir", R);
      ASSERT_TRUE(succeeded(M)) << T;
      expectTwoPhaseMetadata((*M)->Art);
    }
    ASSERT_EQ(C->getStats().Disk.Stores, 2u);
  }

  std::string Self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  ASSERT_FALSE(Self.empty());
  std::string Env = std::string(ChildDirVar) + "=" + Dir.path();
  std::vector<llvm::StringRef> Args = {Self, "--gtest_filter=FreshProcessTest.DISABLED_Child",
                                       "--gtest_also_run_disabled_tests"};
  // The child's environment: ours plus the directory.
  std::vector<std::string> EnvStore = childTestEnvironment({Env});
  std::vector<llvm::StringRef> EnvRefs(EnvStore.begin(), EnvStore.end());
  std::string ErrMsg;
  TempDir Out;
  std::string Log = Out.file("child.log");
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Log),
                                                llvm::StringRef(Log)};
  int RC =
      llvm::sys::ExecuteAndWait(Self, Args, EnvRefs, Redirects, /*SecondsToWait=*/120, 0, &ErrMsg);
  std::string Output = readFile(Log);
  EXPECT_EQ(RC, 0) << ErrMsg << "\nchild output:\n" << Output;
  EXPECT_NE(Output.find(ChildPassedLine), std::string::npos) << "child output:\n" << Output;
}

// The child half (run only by the test above, through
// --gtest_also_run_disabled_tests).
TEST(FreshProcessTest, DISABLED_Child) {
  const char *Dir = std::getenv(ChildDirVar);
  if (!Dir)
    GTEST_SKIP() << "run by CachedGridSyncKernelLaunchesInANewProcess";
  std::string Why;
  auto Targets = targetsForThisTest(&Why);
  ASSERT_EQ(Targets.size(), 2u) << Why;
  std::vector<std::string> Warnings;
  auto C = makeCompiler(Dir, &Warnings, Targets);
  ASSERT_TRUE(C);
  std::string Text = readExample("grid_sync.kir");

  CompileRequest PR;
  PR.Target = "nvptx";
  CompileInfo PI;
  auto P = C->compile(Text, "grid_sync.kir", PR, &PI);
  ASSERT_TRUE(succeeded(P));
  EXPECT_EQ(PI.Outcome, CacheOutcome::DiskHit);
  expectTwoPhaseMetadata((*P)->Art);
  EXPECT_THAT((*P)->Art.Payload, HasSubstr(".entry two_phase"));

  CompileInfo HI;
  auto H = C->compile(Text, "grid_sync.kir", {}, &HI);
  ASSERT_TRUE(succeeded(H));
  EXPECT_EQ(HI.Outcome, CacheOutcome::DiskHit);
  expectTwoPhaseMetadata((*H)->Art);
  // This process has compiled nothing.
  EXPECT_EQ(C->getStats().Compiles, 0u);
  EXPECT_TRUE(Warnings.empty());

  // Launch it: 2 blocks of 64 threads over n = 1000 with grid-stride loops;
  // phase 2 reads what other blocks wrote in phase 1, so a launch that did
  // not honour grid_sync across the grid would give wrong sums.
  auto RT = HostRuntime::create();
  ASSERT_TRUE(succeeded(RT));
  auto L = (*RT)->load((*H)->Art);
  ASSERT_TRUE(succeeded(L));
  constexpr int N = 1000;
  std::vector<float> X(N), Tmp(N, 0.0f), Y(N, 0.0f);
  for (int I = 0; I < N; ++I)
    X[I] = static_cast<float>(I % 37) * 0.5f;
  LaunchConfig Cfg;
  Cfg.Grid.X = 2;
  Cfg.Block.X = 64;
  LaunchStats Stats;
  llvm::Error E = (*RT)->launch(**L, "two_phase", Cfg,
                                {KernelArg::i32(N), KernelArg::pointer(X.data()),
                                 KernelArg::pointer(Tmp.data()), KernelArg::pointer(Y.data())},
                                &Stats);
  ASSERT_TRUE(succeeded(std::move(E)));
  EXPECT_EQ(Stats.Phases, 2u); // one grid_sync: two grid-wide phases
  for (int I = 0; I < N; ++I) {
    float Want = X[I] * X[I] + X[(I + 1) % N] * X[(I + 1) % N];
    ASSERT_EQ(Y[I], Want) << "y[" << I << "]";
  }
}

} // namespace
