//===- ThreadLoops.h - Loops over the threads of a block --------*- C++ -*-===//
//
// Part of gridjit (internal header). The thread loops of the host target:
// `for tz { for ty { for tx { one thread's statements } } }` over the
// block, in thread order. Every loop over thread_idx.x, whether it spans a
// whole row or part of one (FullBlocks.cpp's edge rows), comes from the
// one x-loop emitter here, which sets up the thread's environment, skips
// inactive threads, places the point where values are recomputed and
// closes the loop.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_THREADLOOPS_H
#define GRIDJIT_LIB_TARGET_HOST_THREADLOOPS_H

#include "LoweringState.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace gridjit::host {

class ThreadLoopEmitter : HostLoweringPart {
public:
  explicit ThreadLoopEmitter(HostModuleLowering &L) : HostLoweringPart(L) {}

  /// The z and y loops around a thread loop's x loop(s), and the row they
  /// are at, (tz * bdim.y + ty) * bdim.x, in i32 and i64.
  struct RowNest {
    llvm::BasicBlock *ZH, *YH, *YL, *ZL, *Exit;
    llvm::PHINode *TZ, *TY;
    llvm::Value *Row, *Row64;
  };
  /// The blocks of one x loop: its header (the thread_idx.x phi), the
  /// thread's code, its latch, and where it goes when done.
  struct XLoopBlocks {
    llvm::BasicBlock *Head, *Run, *Latch, *Exit;
  };

  /// Emits a loop over the threads of the block running \p Body for each
  /// (only for active ones when the state may say otherwise). With
  /// \p Range, only threads with thread_idx.x in [first, second) (clamped
  /// to the block) run: the caller has proved that the others would do
  /// nothing. Like every thread loop, its x, y and z loops are marked not
  /// to be unrolled by a run-time trip count (they may still be vectorised
  /// and interleaved, or unrolled fully): see ThreadLoops.cpp.
  llvm::Error emit(llvm::function_ref<llvm::Error()> Body, XRange Range = {});

  /// Emits a loop over the threads of the block whose rows are split:
  /// \p RowRange gives, for a row (thread_idx.y, thread_idx.z) and the
  /// row's [lo, hi) of thread_idx.x, a sub-range [a, b); threads before and
  /// after it run \p Outside (not vectorised), those in it \p Inside, in
  /// thread order.
  llvm::Error emitSplit(llvm::function_ref<llvm::Error()> Outside,
                        llvm::function_ref<llvm::Error()> Inside, XRange Range,
                        llvm::function_ref<std::pair<llvm::Value *, llvm::Value *>(
                            llvm::Value *TY, llvm::Value *TZ, llvm::Value *XLo, llvm::Value *XHi)>
                            RowRange);

private:
  /// The thread_idx.x range [Lo, Hi) a thread loop runs, and the block
  /// after the loop that an empty range branches to (null without a range).
  struct XSpan {
    llvm::Value *Lo, *Hi;
    llvm::BasicBlock *Skip;
  };
  /// Without \p Range, the whole row [0, block_dim.x). With it, its end
  /// clamped to the block, and a branch around the thread loop when the
  /// range is empty.
  XSpan enterXRange(XRange Range);
  /// Opens the z and y loops from the current block: makes their header
  /// blocks, then the caller's inner blocks (\p MakeInnerBlocks, so that
  /// blocks keep the order of the code), then the latches and the exit;
  /// leaves the builder at the end of the y header, where the x loop goes.
  RowNest openRowNest(llvm::function_ref<void()> MakeInnerBlocks);
  /// Emits the y and z latches of \p N (the x loop branches to N.YL when a
  /// row is done) and the exit, joining \p Skip (enterXRange's block) when
  /// given; leaves the builder after the loops. The z latch carries the
  /// mark that ends the nest (ThreadNests.h).
  void closeRowNest(const RowNest &N, llvm::BasicBlock *Skip);
  /// The blocks of an x loop, in code order: its own exit block last with
  /// \p OwnExit, else none yet (the caller sets Exit).
  XLoopBlocks makeXLoopBlocks(bool OwnExit);
  /// The x loop: thread_idx.x over [\p Lo, \p Hi) of row \p N, entered
  /// from the current block (which, with \p MayBeEmpty, first checks that
  /// the range is not empty), each thread's environment set, inactive
  /// threads skipped, \p Body run; the builder is left at X.Exit.
  /// \p Vectorize false marks the loop not to be vectorised or unrolled.
  llvm::Error emitXLoop(const XLoopBlocks &X, const RowNest &N, llvm::Value *Lo, llvm::Value *Hi,
                        bool MayBeEmpty, llvm::function_ref<llvm::Error()> Body, bool Vectorize);
  /// Forgets the thread loop's values (thread indices, remat values).
  void leave();
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_THREADLOOPS_H
