//===- SyncHooks.h - Hooks at a host kernel's synchronisation points -*- C++ -*-===//
//
// Part of gridjit (internal header). The host lowering calls one hook at
// every point where the threads of a kernel synchronise, and where a
// block starts and ends: the places where a later pass (the kernel
// checker's epochs, a profiler's counters) adds its own block-level code.
// The hook is called at every such point, including those where the
// lowering itself needs no code (a barrier no thread can reach divergently
// is nothing on the host); the default hook emits nothing, so without one
// the generated code is exactly what it would be without hooks.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_SYNCHOOKS_H
#define GRIDJIT_LIB_TARGET_HOST_SYNCHOOKS_H

#include "gridjit/IR/Builtins.h"
#include "gridjit/Support/SourceLoc.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace gridjit::host {

/// What a synchronisation point synchronises.
enum class SyncKind : uint8_t {
  /// A block starts running the kernel (once per block: not when a
  /// cooperative kernel resumes after grid_sync()). Nothing before it.
  BlockStart,
  /// `sync_threads()`: every thread of the block.
  Block,
  /// `sync_warp()` and every warp operation (`shfl*`, `vote_*`, `ballot`):
  /// the lanes of each warp. A warp operation's point lies between its
  /// operands (every lane's, computed first) and its results.
  Warp,
  /// `grid_sync()`: every thread of the grid.
  Grid,
  /// A block has finished the kernel (every thread returned or ran off
  /// its end).
  BlockEnd,
};
constexpr unsigned NumSyncKinds = 5;

/// One point, and what code at it may use. The builder is at block level
/// (outside any thread loop) where every thread that synchronises has
/// passed the point and the divergence check, if one was needed, has
/// found nothing; code emitted there runs once per block per passage.
struct SyncPoint {
  SyncKind Kind;
  /// sync_threads, sync_warp, the warp operation or grid_sync;
  /// BuiltinFunc::None at BlockStart and BlockEnd.
  BuiltinFunc What = BuiltinFunc::None;
  /// Where the call is (the kernel's position at BlockStart and BlockEnd).
  SourceLoc Loc;
  llvm::IRBuilder<> &B;
  /// The entry's `BlockContext *` (gridjit/Target/HostABI.h).
  llvm::Value *Context;
  /// The i64 linear index of the block, and its i32 number of threads.
  llvm::Value *BlockId, *NumThreads;
  /// The point's `SyncSite` constant (file, line, column, what, source
  /// line, kernel), made on first use: the one the runtime's divergence
  /// reports name. Null at BlockStart and BlockEnd.
  llvm::function_ref<llvm::Constant *()> Site;
};

/// The hooks of one lowering (not shared between lowerings running at
/// once). The default emits nothing.
class SyncHooks {
public:
  virtual ~SyncHooks();
  /// Called once per point, in the order the points are lowered. An
  /// error stops the lowering.
  virtual llvm::Error atSync(const SyncPoint &P);
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_SYNCHOOKS_H
