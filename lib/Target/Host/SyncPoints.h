//===- SyncPoints.h - A host kernel's synchronisation points ----*- C++ -*-===//
//
// Part of gridjit (internal header). What the host lowering emits at a
// synchronisation point: thread loops already run one after another, so a
// barrier has only to check that every thread of the block (or every lane
// of each warp) arrived, or none; grid_sync() ends a phase. Each point
// also calls the lowering's SyncHooks, here and only here.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_SYNCPOINTS_H
#define GRIDJIT_LIB_TARGET_HOST_SYNCPOINTS_H

#include "LoweringState.h"
#include "SyncHooks.h"

namespace gridjit::host {

class SyncPointEmitter : HostLoweringPart {
public:
  /// \p Hooks: called at every point; null for none.
  SyncPointEmitter(HostModuleLowering &L, SyncHooks *Hooks) : HostLoweringPart(L), Hooks(Hooks) {}

  /// `sync_threads()` (\p What) at block level.
  llvm::Error blockBarrier(SourceLoc Loc, BuiltinFunc What);
  /// `sync_warp()` or the point of warp operation \p What at block level.
  llvm::Error warpBarrier(SourceLoc Loc, BuiltinFunc What);
  /// `grid_sync()` at block level of a cooperative kernel: the entry saves
  /// the block's uniform registers and returns; the next call resumes here.
  llvm::Error gridSync(SourceLoc Loc);
  /// Where a block starts the kernel and where it has finished it (the
  /// hooks' BlockStart and BlockEnd; nothing else is emitted).
  llvm::Error blockStart(const FunctionDecl &K) {
    return callHooks(SyncKind::BlockStart, BuiltinFunc::None, K.getLoc());
  }
  llvm::Error blockEnd(const FunctionDecl &K) {
    return callHooks(SyncKind::BlockEnd, BuiltinFunc::None, K.getLoc());
  }

private:
  SyncHooks *Hooks;

  /// The site a barrier's divergence check reports, or null when no
  /// thread can be inactive here (then nothing is checked). Errors: a
  /// barrier inside a thread loop (an internal error).
  llvm::Expected<llvm::Constant *> barrierSite(SourceLoc Loc, BuiltinFunc What,
                                               llvm::StringRef Scope);
  /// Returns an error report from the entry when \p Arrived threads are
  /// neither 0 nor \p Expected.
  void emitSyncCheck(llvm::Value *Arrived, llvm::Value *Expected, llvm::Constant *Site,
                     llvm::Value *Warp);
  /// Calls the hooks for one point at the builder's position.
  llvm::Error callHooks(SyncKind Kind, BuiltinFunc What, SourceLoc Loc);
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_SYNCPOINTS_H
