//===- KernelAnalysis.h - What the host lowering needs to know first -*- C++ -*-===//
//
// Part of gridjit (internal header). Before a kernel is lowered for the
// host, three questions are answered about its source:
//
//  1. Which statements synchronise: contain sync_threads(), sync_warp(),
//     grid_sync() or a warp operation, directly or through a device function
//     (SyncInfo). Those statements are executed "at block level": one
//     thread loop per part between synchronisation points. Everything else
//     runs inside thread loops.
//  2. Which values are the same for every thread of a block (uniform):
//     they are kept once per block instead of once per thread, conditions
//     built from them are evaluated once, and thread loops that use them
//     stay affine, so LLVM can vectorise them.
//  3. Where every other block-level variable lives: only inside one thread
//     loop (an ordinary local), recomputed in each loop from immutable
//     inputs, or in the per-thread frame.
//
// See docs/HostTarget.md for the execution model these serve.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_KERNELANALYSIS_H
#define GRIDJIT_LIB_TARGET_HOST_KERNELANALYSIS_H

#include "gridjit/IR/AST.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Casting.h"

namespace gridjit::host {

/// True for the warp-level builtins (shuffles, votes, ballot).
bool isWarpOp(BuiltinFunc F);
/// True for builtins that are synchronisation points: the warp operations,
/// sync_warp, sync_threads and grid_sync.
bool isSyncBuiltin(BuiltinFunc F);
/// True for the barriers: sync_warp, sync_threads and grid_sync (builtins
/// that return nothing and split the thread loops).
bool isBarrierBuiltin(BuiltinFunc F);
/// True for builtins without side effects whose value depends only on
/// their operands (select and the math functions).
bool isPureBuiltin(BuiltinFunc F);
/// True when \p P holds for an expression in \p S (its statements' too,
/// and every sub-expression); P sees them all, parents first, until it
/// returns true.
bool anyExprIn(const Stmt &S, llvm::function_ref<bool(const Expr &)> P);

class BodyPlan;

/// Which functions, statements and expressions of a module contain a
/// synchronisation point. Answers are memoised; not thread-safe (one per
/// lowering).
class SyncInfo {
public:
  bool hasSync(const FunctionDecl &F);
  bool hasSync(const Stmt &S);
  bool hasSync(const Expr &E);

  /// How deep the lowering of a body recurses through the synchronising
  /// functions it inlines: the most tree levels (statements and
  /// expressions, the body block being level 1) from the body down to a
  /// call of a synchronising function, plus that function's own, along the
  /// deepest chain of such calls.
  struct InlinedNesting {
    unsigned Levels = 0;
    /// The call in the body where the deepest chain starts; null for none.
    const CallExpr *Via = nullptr;
  };
  InlinedNesting inlinedNesting(const FunctionDecl &F);

  /// True when \p S runs at block level: it synchronises, it is a loop
  /// that runs iteration-major (markIterationMajor), or it is an `if` or a
  /// block with such a statement inside (not through calls: a device
  /// function that does not synchronise runs inside a thread loop).
  bool runsAtBlockLevel(const Stmt &S);
  /// True when \p S is a loop markIterationMajor chose.
  bool isIterationMajor(const Stmt &S) const { return IterationMajor.contains(&S); }
  /// Chooses the loops of \p Body (a kernel's, or an inlined synchronising
  /// function's) that run iteration-major: loops without a synchronisation
  /// point whose trip count may differ between the threads of a block
  /// (their condition or bounds are not uniform by \p Plan), reached from
  /// the body through `if`s, blocks and synchronising loops; not a `for i
  /// in a..b` whose end b is a compile-time constant (a few iterations over
  /// a fixed-size array per thread, such as a tile loaded cooperatively:
  /// too few to repay the block-level loop's passes over the threads), and
  /// not ones that may spin on memory: a `while` whose condition reads memory or
  /// calls a function, or a loop that calls atomic_cas or atomic_exch
  /// (directly or through device functions), the makings of a lock that a
  /// thread could wait on while the thread holding it waits for the loop
  /// to end. Returns true when it chose any (\p Plan must then be made
  /// again: more statements run at block level).
  bool markIterationMajor(const BlockStmt &Body, const BodyPlan &Plan);

private:
  bool mayTakeLock(const FunctionDecl &F);
  bool mayTakeLock(const Stmt &S);
  bool chooseIterationMajor(const Stmt &S, const BodyPlan &Plan);

  llvm::DenseMap<const FunctionDecl *, InlinedNesting> Nesting;
  llvm::DenseMap<const FunctionDecl *, bool> Fns;
  llvm::DenseMap<const FunctionDecl *, bool> LockFns;
  llvm::DenseSet<const Stmt *> IterationMajor;
  llvm::DenseMap<const Stmt *, bool> BlockLevel;
  llvm::DenseMap<const Stmt *, bool> Stmts;
  llvm::DenseMap<const Expr *, bool> Exprs;
};

/// The most levels (SyncInfo::InlinedNesting) that the lowering of one
/// kernel may recurse through the synchronising functions it inlines; a
/// deeper kernel is an error naming the call where the chain starts.
/// Measured on a release build, a level costs the lowering 0.25 KiB (a
/// chain of calls) to 0.4 KiB (calls under `if`s or `&&`) of stack, so the
/// limit keeps it within about 1.5 MiB of the 8 MiB a thread has by
/// default (a sanitizer build needs a few times more), the rest left to
/// LLVM's passes over the same code (test/Host/deep-chains.test). A chain
/// of 1,000 synchronising functions, each called from its body's top level,
/// takes 3,000 levels.
inline constexpr unsigned MaxInlinedNesting = 4096;

/// True when \p S contains a `break` or `continue` that leaves \p S (one
/// not inside a loop within S), or, with \p CountReturns, a `return`.
bool leavesStmt(const Stmt &S, bool CountReturns);
/// True when \p S contains a `continue` that leaves \p S.
bool continuesStmt(const Stmt &S);
/// True when \p S may change \p V: assigns it (or a field of it), passes
/// it as an `out` or `inout` argument, or takes its address.
bool mayChange(const Stmt &S, const VarDecl *V);
/// Calls \p F on the branches of the synchronising `if` \p I that the
/// lowering runs at block level: its `then` block, an `else` block, and
/// those of an `else if` that synchronises (one that does not runs inside a
/// thread loop as a whole).
void forEachBlockLevelBranch(const IfStmt &I, SyncInfo &Sync,
                             llvm::function_ref<void(const BlockStmt &)> F);
/// True when \p S contains a `return`.
bool containsReturn(const Stmt &S);
/// True when \p S mentions \p V (reads, assigns or takes an element's
/// address).
bool mentions(const Stmt &S, const VarDecl *V);
bool mentions(const Expr &E, const VarDecl *V);

/// Where a block-level variable of a synchronising body lives.
enum class Storage : uint8_t {
  Uniform,     ///< one copy per block (a register in the entry function)
  RegionLocal, ///< used in one thread loop only: an ordinary local
  Remat,       ///< immutable and pure: recomputed in every thread loop
  Frame,       ///< one copy per thread in the block's frame
};

/// The storage of the block-level variables of one synchronising body (a
/// kernel, or a device function that is inlined because it synchronises),
/// and which of its expressions are uniform.
class BodyPlan {
public:
  /// Plans \p Body; \p IsKernel: a `return` ends the thread for good (in
  /// a function it only masks the thread until the call ends).
  BodyPlan(const BlockStmt &Body, bool IsKernel, SyncInfo &Sync);

  /// The storage of a variable declared at block level (including the
  /// index of a block-level `for`); Frame for anything else.
  Storage getStorage(const VarDecl *V) const;
  /// True when \p E has the same value in every thread of the block
  /// (built from literals, constants, kernel parameters, block_idx,
  /// block_dim, grid_dim, warp_size and uniform variables by operators and
  /// pure builtins).
  bool isUniform(const Expr &E) const;
  /// True when \p E reads no memory and no mutable variable and has no
  /// side effects: evaluated again in any later thread loop, it gives the
  /// same value.
  bool isPure(const Expr &E) const;

private:
  bool walkBlock(const BlockStmt &B, bool Conv);
  bool walkStmt(const Stmt &S, bool Conv);
  void collectCandidates(const BlockStmt &B);
  void dropAssignedIn(const Stmt &S);
  /// Drops the variables that \p S passes as `out` or `inout` arguments.
  void dropOutArgs(const Stmt &S);
  void planLocality(const BlockStmt &B);

  bool IsKernel;
  SyncInfo &Sync;
  llvm::DenseSet<const VarDecl *> Candidates; ///< uniform so far
  bool Changed = false;
  llvm::DenseMap<const VarDecl *, Storage> Plan;
};

// Walking the tree (KernelAnalysis.cpp, PrivateParams.cpp).

/// Calls \p F on every direct sub-expression of \p E, in evaluation order.
template <typename Fn> void forEachChild(const Expr &E, Fn F) {
  switch (E.getKind()) {
  case Expr::Unary:
    F(*llvm::cast<UnaryExpr>(E).Operand);
    return;
  case Expr::Binary:
    F(*llvm::cast<BinaryExpr>(E).LHS);
    F(*llvm::cast<BinaryExpr>(E).RHS);
    return;
  case Expr::Cond:
    F(*llvm::cast<CondExpr>(E).C);
    F(*llvm::cast<CondExpr>(E).T);
    F(*llvm::cast<CondExpr>(E).F);
    return;
  case Expr::Cast:
    F(*llvm::cast<CastExpr>(E).Operand);
    return;
  case Expr::Call:
    for (const ExprPtr &A : llvm::cast<CallExpr>(E).Args)
      F(*A);
    return;
  case Expr::Index:
    F(*llvm::cast<IndexExpr>(E).Base);
    F(*llvm::cast<IndexExpr>(E).Idx);
    return;
  case Expr::Member:
    F(*llvm::cast<MemberExpr>(E).Base);
    return;
  default:
    return;
  }
}

/// Calls \p OnExpr on every expression directly in \p S and \p OnStmt on
/// every statement directly nested in it.
template <typename EF, typename SF> void forEachPart(const Stmt &S, EF OnExpr, SF OnStmt) {
  auto E = [&](const ExprPtr &P) {
    if (P)
      OnExpr(*P);
  };
  switch (S.getKind()) {
  case Stmt::Decl: {
    const auto &D = llvm::cast<DeclStmt>(S);
    E(D.Init);
    return;
  }
  case Stmt::Assign:
    E(llvm::cast<AssignStmt>(S).Target);
    E(llvm::cast<AssignStmt>(S).Value);
    return;
  case Stmt::If: {
    const auto &I = llvm::cast<IfStmt>(S);
    E(I.Cond);
    if (I.Then)
      OnStmt(*I.Then);
    if (I.Else)
      OnStmt(*I.Else);
    return;
  }
  case Stmt::While: {
    const auto &W = llvm::cast<WhileStmt>(S);
    if (W.Init)
      OnStmt(*W.Init);
    E(W.Cond);
    if (W.Body)
      OnStmt(*W.Body);
    if (W.Update)
      OnStmt(*W.Update);
    return;
  }
  case Stmt::For: {
    const auto &F = llvm::cast<ForStmt>(S);
    E(F.Begin);
    E(F.End);
    E(F.Step);
    if (F.Body)
      OnStmt(*F.Body);
    return;
  }
  case Stmt::Return:
    E(llvm::cast<ReturnStmt>(S).Value);
    return;
  case Stmt::ExprS:
    E(llvm::cast<ExprStmt>(S).E);
    return;
  case Stmt::Block:
    for (const StmtPtr &C : llvm::cast<BlockStmt>(S).Body)
      OnStmt(*C);
    return;
  case Stmt::Break:
  case Stmt::Continue:
    return;
  }
}

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_KERNELANALYSIS_H
