//===- Hoisting.h - Synchronising sub-expressions at block level -*- C++ -*-===//
//
// Part of gridjit (internal header). A statement that contains a warp
// operation, a call of a synchronising function, `a && b` / `a || b`
// whose b synchronises or `c ? a : b` whose a or b synchronises cannot run
// inside one thread loop: those parts are
// hoisted out and evaluated first, at block level, each leaving one value
// per thread in the frame, which the statement's thread code then reads
// (FunctionState::Hoisted).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_HOISTING_H
#define GRIDJIT_LIB_TARGET_HOST_HOISTING_H

#include "LoweringState.h"

namespace gridjit::host {

class SyncHoister : HostLoweringPart {
public:
  explicit SyncHoister(HostModuleLowering &L) : HostLoweringPart(L) {}

  /// Evaluates the synchronising parts of \p E at block level, in
  /// evaluation order (nothing when \p E does not synchronise).
  llvm::Error hoist(const Expr &E);

private:
  /// `a && b` / `a || b` whose b synchronises: a masked region.
  llvm::Error hoistShortCircuit(const BinaryExpr &E);
  /// `c ? a : b` whose a or b synchronises: two masked regions.
  llvm::Error hoistCond(const CondExpr &E);
  /// Hoists \p E's synchronising parts, then stores each active thread's
  /// value of \p E in \p R (at block level, in a masked region).
  llvm::Error evaluateInto(const Expr &E, FrameSlot R);
  /// A warp operation: its operands in one thread loop, the warp's
  /// synchronisation point, its results in the next.
  llvm::Error hoistWarpOp(const CallExpr &E);
  /// A call of a synchronising function, its body inlined at block level;
  /// the frame slot of its result.
  llvm::Expected<FrameSlot> inlineCall(const CallExpr &E);
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_HOISTING_H
