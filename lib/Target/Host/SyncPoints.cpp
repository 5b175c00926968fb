//===- SyncPoints.cpp - A host kernel's synchronisation points ------------===//
//
// Part of gridjit. See SyncPoints.h. Every point ends with callHooks: the
// one place where the lowering's SyncHooks are called, at every point,
// whether or not the point itself needed code.
//
//===----------------------------------------------------------------------===//

#include "SyncPoints.h"

#include "HostLowering.h"

#include "gridjit/Support/Limits.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::Expected;
using llvm::Value;

SyncHooks::~SyncHooks() = default;

llvm::Error SyncHooks::atSync(const SyncPoint &) { return llvm::Error::success(); }

/// How a report names the point: `sync_threads()`, `shfl()`, ...
static std::string syncSpelling(BuiltinFunc F) { return std::string(builtinFuncName(F)) + "()"; }

llvm::Error SyncPointEmitter::callHooks(SyncKind Kind, BuiltinFunc What, SourceLoc Loc) {
  if (!Hooks)
    return llvm::Error::success();
  auto Site = [&] { return L.Entry.siteFor(Loc, syncSpelling(What)); };
  using SiteFn = llvm::function_ref<llvm::Constant *()>;
  return Hooks->atSync({Kind, What, Loc, B, Cur->CtxArg, Cur->BlockId, Cur->NumThreads,
                        What == BuiltinFunc::None ? SiteFn() : SiteFn(Site)});
}

// Thread loops already run one after another: a barrier only has to check
// that every thread of the block (or of each warp) arrived, or none. The
// site that check reports, or null when no thread can be inactive here.
Expected<llvm::Constant *> SyncPointEmitter::barrierSite(SourceLoc Loc, BuiltinFunc What,
                                                         llvm::StringRef Scope) {
  if (Cur->Env.Linear || !Cur->Kernel)
    return Ctx.error(Loc, "internal error: " + Scope + " barrier inside a thread");
  if (!Cur->maybeInactive())
    return nullptr;
  return L.Entry.siteFor(Loc, syncSpelling(What));
}

void SyncPointEmitter::emitSyncCheck(Value *Arrived, Value *Expected, llvm::Constant *Site,
                                     Value *Warp) {
  Value *Bad = B.CreateAnd(B.CreateICmpNE(Arrived, B.getInt32(0)),
                           B.CreateICmpNE(Arrived, Expected), "divergent");
  llvm::BasicBlock *Err = newBlock("divergent");
  llvm::BasicBlock *Cont = newBlock("converged");
  B.CreateCondBr(Bad, Err, Cont);
  B.SetInsertPoint(Err);
  L.Entry.emitErrorReturn(Site, Arrived, Expected, Warp);
  B.SetInsertPoint(Cont);
}

llvm::Error SyncPointEmitter::blockBarrier(SourceLoc Loc, BuiltinFunc What) {
  Expected<llvm::Constant *> Site = barrierSite(Loc, What, "block");
  if (!Site)
    return Site.takeError();
  if (*Site)
    emitSyncCheck(L.countActive(), Cur->NumThreads, *Site, B.getInt32(hostabi::NoWarp));
  if (L.checked())
    L.checkSync(hostabi::CheckSyncThreads);
  return callHooks(SyncKind::Block, What, Loc);
}

llvm::Error SyncPointEmitter::warpBarrier(SourceLoc Loc, BuiltinFunc What) {
  Expected<llvm::Constant *> SiteOr = barrierSite(Loc, What, "warp");
  if (!SiteOr)
    return SiteOr.takeError();
  if (llvm::Constant *Site = *SiteOr) {
    // Each warp: all of its lanes active, or none.
    Value *NumWarps = B.CreateLShr(B.CreateAdd(Cur->NumThreads, B.getInt32(limits::LaneMask)),
                                   limits::Log2WarpSize, "warps");
    emitCountedLoop(
        B, Ctx.CurFn, NumWarps, nullptr,
        [&](Value *W, Value *) {
          Value *First = B.CreateShl(W, limits::Log2WarpSize);
          Value *Width =
              B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.getInt32(limits::WarpSize),
                                      B.CreateSub(Cur->NumThreads, First), nullptr, "width");
          Value *Arrived = emitCountedLoop(
              B, Ctx.CurFn, Width, B.getInt32(0),
              [&](Value *Lane, Value *Acc) {
                Value *S = B.CreateLoad(B.getInt32Ty(), L.stateAddr(B.CreateAdd(First, Lane)));
                return B.CreateAdd(Acc,
                                   B.CreateZExt(B.CreateICmpEQ(S, B.getInt32(0)), B.getInt32Ty()));
              },
              "count.lanes");
          emitSyncCheck(Arrived, Width, Site, W);
          return nullptr;
        },
        "check.warps");
  }
  // sync_warp() orders each warp's lanes; the block passes it for every
  // warp at once. Warp operations order nothing (docs/Check.md).
  if (L.checked() && What == BuiltinFunc::SyncWarp)
    L.checkSync(hostabi::CheckSyncWarp);
  return callHooks(SyncKind::Warp, What, Loc);
}

llvm::Error SyncPointEmitter::gridSync(SourceLoc Loc) {
  if (Cur->Env.Linear || !Cur->Kernel || !Cur->ResumeSwitch)
    return Ctx.error(Loc, "internal error: grid_sync outside a cooperative kernel's block code");
  llvm::Constant *Site = L.Entry.siteFor(Loc, syncSpelling(BuiltinFunc::GridSync));
  unsigned K = ++Cur->NumGridSyncs;
  llvm::BasicBlock *Suspend = newBlock("grid_sync.suspend");
  llvm::BasicBlock *Resume = newBlock("grid_sync.resume");
  llvm::BasicBlock *Cont = newBlock("grid_sync.done");
  if (Cur->maybeInactive()) {
    // No active thread: this block does not take part (the runtime then
    // sees the blocks disagree); some: divergence; all: suspend.
    Value *N = L.countActive();
    emitSyncCheck(N, Cur->NumThreads, Site, B.getInt32(hostabi::NoWarp));
    B.CreateCondBr(B.CreateICmpEQ(N, B.getInt32(0)), Cont, Suspend);
  } else {
    B.CreateBr(Suspend);
  }
  B.SetInsertPoint(Suspend);
  auto SpillAddr = [&](const UniformVar &U) {
    return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Cur->BlockFrameBase, U.Spill);
  };
  for (const UniformVar &U : Cur->UniformScope)
    B.CreateStore(B.CreateLoad(U.A->getAllocatedType(), U.A), SpillAddr(U));
  B.CreateStore(Site, L.Entry.ctxField(hostabi::CtxErrSite));
  B.CreateRet(B.getInt32(K));
  Cur->ResumeSwitch->addCase(B.getInt32(K), Resume);
  B.SetInsertPoint(Resume);
  for (const UniformVar &U : Cur->UniformScope)
    B.CreateStore(B.CreateLoad(U.A->getAllocatedType(), SpillAddr(U)), U.A);
  B.CreateBr(Cont);
  // Every block of the grid has reached this point (or this one takes no
  // part: the runtime then reports the blocks' disagreement).
  B.SetInsertPoint(Cont);
  return callHooks(SyncKind::Grid, BuiltinFunc::GridSync, Loc);
}
