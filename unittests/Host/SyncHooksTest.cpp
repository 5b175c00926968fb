//===- SyncHooksTest.cpp - The host lowering's synchronisation hooks ------===//
//
// Part of gridjit. The host lowering calls its SyncHooks once at every
// synchronisation point (block, warp, grid) and where each block starts
// and ends, also where the point itself needs no code; code a hook emits
// lands at block level in the entry; without hooks, or with the default
// one, the IR is what it always was.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "Target/Host/HostLowering.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/IR/Instructions.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;
using gridjit::host::SyncHooks;
using gridjit::host::SyncKind;
using gridjit::host::SyncPoint;

namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

// Line numbers matter: the hooks record them.
const char *Source = R"(fn bump(x: f32) -> f32 {
  sync_threads();
  return x + 1.0;
}
kernel k(p: ptr<f32>, n: i32) {
  let t: i32 = thread_idx.x;
  sync_threads();
  let v: f32 = shfl(p[t], 0);
  sync_warp();
  let b: u32 = ballot(v > 0.0);
  if t >= n { return; }
  sync_threads();
  p[t] = bump(v) + b as f32;
}
kernel coop(p: ptr<i32>) {
  p[0] = 1;
  grid_sync();
  p[1] = 2;
  grid_sync();
}
)";

/// What a hook saw at one point.
struct Seen {
  SyncKind Kind;
  unsigned Line;
  BuiltinFunc What;
  bool HasSite;
  friend bool operator==(const Seen &A, const Seen &B) {
    return A.Kind == B.Kind && A.Line == B.Line && A.What == B.What && A.HasSite == B.HasSite;
  }
  friend std::ostream &operator<<(std::ostream &OS, const Seen &S) {
    return OS << "{kind " << int(S.Kind) << ", line " << S.Line << ", " << builtinFuncName(S.What)
              << ", site " << S.HasSite << "}";
  }
};

/// Records every point and, with EmitCalls, makes its site and emits
/// `call @hook(kind, line, block id)` there, the way a checker's epoch
/// counter would.
class RecordingHooks : public SyncHooks {
public:
  explicit RecordingHooks(bool EmitCalls) : EmitCalls(EmitCalls) {}
  std::vector<Seen> Points;

  llvm::Error atSync(const SyncPoint &P) override {
    Points.push_back({P.Kind, P.Loc.Line, P.What, bool(P.Site)});
    if (!EmitCalls)
      return llvm::Error::success();
    if (P.Site && !llvm::isa<llvm::GlobalVariable>(P.Site()))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "no site");
    llvm::Module &M = *P.B.GetInsertBlock()->getModule();
    llvm::FunctionCallee Hook = M.getOrInsertFunction("hook", P.B.getVoidTy(), P.B.getInt32Ty(),
                                                      P.B.getInt32Ty(), P.B.getInt64Ty());
    P.B.CreateCall(Hook, {P.B.getInt32(unsigned(P.Kind)), P.B.getInt32(P.Loc.Line), P.BlockId});
    return llvm::Error::success();
  }

private:
  bool EmitCalls;
};

/// Fails with \p Msg at the first warp point.
class FailingHooks : public SyncHooks {
  llvm::Error atSync(const SyncPoint &P) override {
    if (P.Kind != SyncKind::Warp)
      return llvm::Error::success();
    return llvm::createStringError(llvm::inconvertibleErrorCode(), "hook failed at line %u",
                                   P.Loc.Line);
  }
};

class SyncHooksTest : public ::testing::Test {
protected:
  void SetUp() override {
    auto T = createHostTarget();
    ASSERT_TRUE(succeeded(T));
    Target = std::move(*T);
    auto M = parseAndVerify(Source, "hooks.kir");
    ASSERT_TRUE(succeeded(M));
    KM = std::move(*M);
  }

  /// The module lowered for the host with \p Hooks (null: none), as text;
  /// empty (and a test failure) on an error.
  std::string lower(SyncHooks *Hooks) {
    llvm::LLVMContext Ctx; // a fresh one: type names do not depend on earlier lowerings
    llvm::Module IR("hooks.kir", Ctx);
    const CodegenTarget &CT = CodegenTarget::get(*Target);
    EXPECT_TRUE(succeeded(CT.prepareModule(IR)));
    host::HostModuleLowering L(CT, *KM, IR, Hooks);
    if (!succeeded(L.run()))
      return "";
    std::string Problems;
    llvm::raw_string_ostream PS(Problems);
    EXPECT_FALSE(llvm::verifyModule(IR, &PS)) << Problems;
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    IR.print(OS, nullptr);
    return Text;
  }

  std::unique_ptr<gridjit::Target> Target;
  std::unique_ptr<Module> KM;
};

TEST_F(SyncHooksTest, EveryPointOfEveryKindReachesTheHookInOrder) {
  RecordingHooks H(/*EmitCalls=*/false);
  ASSERT_FALSE(lower(&H).empty());
  using BF = BuiltinFunc;
  EXPECT_THAT(H.Points, ElementsAre(
                            // kernel k
                            Seen{SyncKind::BlockStart, 5, BF::None, false},
                            // no thread can be inactive yet: the barrier emits nothing
                            Seen{SyncKind::Block, 7, BF::SyncThreads, true},
                            // shfl: between its operands and its results
                            Seen{SyncKind::Warp, 8, BF::Shfl, true},
                            Seen{SyncKind::Warp, 9, BF::SyncWarp, true},
                            Seen{SyncKind::Warp, 10, BF::Ballot, true},
                            // after the early return: counted and checked
                            Seen{SyncKind::Block, 12, BF::SyncThreads, true},
                            // inside bump(), inlined at block level
                            Seen{SyncKind::Block, 2, BF::SyncThreads, true},
                            Seen{SyncKind::BlockEnd, 5, BF::None, false},
                            // kernel coop
                            Seen{SyncKind::BlockStart, 15, BF::None, false},
                            Seen{SyncKind::Grid, 17, BF::GridSync, true},
                            Seen{SyncKind::Grid, 19, BF::GridSync, true},
                            Seen{SyncKind::BlockEnd, 15, BF::None, false}));
  unsigned PerKind[host::NumSyncKinds] = {};
  for (const Seen &S : H.Points)
    ++PerKind[unsigned(S.Kind)];
  EXPECT_THAT(PerKind, ElementsAre(2u, 3u, 3u, 2u, 2u)); // start, block, warp, grid, end
}

// The hook is reached at every point, yet a hook that emits nothing
// leaves the IR byte for byte what it is without hooks.
TEST_F(SyncHooksTest, HooksThatEmitNothingLeaveTheIRUnchanged) {
  std::string None = lower(nullptr);
  ASSERT_FALSE(None.empty());
  SyncHooks Default;
  EXPECT_EQ(lower(&Default), None);
  RecordingHooks Quiet(/*EmitCalls=*/false);
  EXPECT_EQ(lower(&Quiet), None);
  EXPECT_EQ(Quiet.Points.size(), 12u);
}

TEST_F(SyncHooksTest, HookCodeRunsAtBlockLevelOfTheEntry) {
  RecordingHooks H(/*EmitCalls=*/true);
  std::string IR = lower(&H);
  ASSERT_FALSE(IR.empty());
  // One call per point, each in the entry of its kernel with the block's
  // index: at block level, outside every thread loop.
  size_t Calls = 0;
  for (size_t At = IR.find("call void @hook("); At != std::string::npos;
       At = IR.find("call void @hook(", At + 1))
    ++Calls;
  EXPECT_EQ(Calls, H.Points.size());
  EXPECT_THAT(IR, HasSubstr("call void @hook(i32 1, i32 7, i64 %block.id)"));
  EXPECT_THAT(IR, HasSubstr("call void @hook(i32 3, i32 19, i64 %block.id)"));
}

TEST_F(SyncHooksTest, AHookErrorStopsTheLowering) {
  FailingHooks H;
  llvm::LLVMContext Ctx;
  llvm::Module IR("hooks.kir", Ctx);
  const CodegenTarget &CT = CodegenTarget::get(*Target);
  ASSERT_TRUE(succeeded(CT.prepareModule(IR)));
  host::HostModuleLowering L(CT, *KM, IR, &H);
  EXPECT_EQ(errorText(L.run()), "hook failed at line 8");
}

} // namespace
