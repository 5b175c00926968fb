//===- FullBlocks.h - Thread loops without their bounds guards --*- C++ -*-===//
//
// Part of gridjit (internal header). Full-block versioning: a thread loop
// whose `if` conditions compare values affine in the thread indices is
// emitted twice behind a block-level test, once with the comparisons
// proven for the whole block (a full block) and once with each row split
// around the threads that fail them (an edge block). FullBlocks.cpp
// explains the test.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_FULLBLOCKS_H
#define GRIDJIT_LIB_TARGET_HOST_FULLBLOCKS_H

#include "LoweringState.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <array>

namespace gridjit::host {

/// A comparison in a thread loop (`i < n`, `row >= h`, ...) whose value a
/// block-level test can prove for every thread of the block at once.
struct GuardFact {
  const BinaryExpr *Cmp;
  bool Value; ///< the value the test proves
};

/// An i32 value affine in the thread indices, `C[0] + C[1] * thread_idx.x +
/// C[2] * thread_idx.y + C[3] * thread_idx.z`, with uniform terms (null: 0)
/// evaluated at block level.
struct AffineForm {
  llvm::Value *C[4] = {};
};

/// A fact's two sides and their difference L - R as i64 affine forms
/// (sign-extended coefficients; null: 0), evaluated at block level.
struct FactForms {
  GuardFact F;
  std::array<llvm::Value *, 4> L, R, D;
};

class FullBlockVersioner : HostLoweringPart {
public:
  explicit FullBlockVersioner(HostModuleLowering &L) : HostLoweringPart(L) {}

  /// Records the initializer of every scalar `let` in \p S (the affine
  /// analysis follows them).
  void collectLetInits(const Stmt &S);

  /// Emits the thread loop of \p Stmts (\p Body lowers them): when a
  /// comparison of their `if` conditions is affine in the thread indices
  /// (and \p Skip is not it), in two versions behind a block-level test
  /// that proves the comparisons for every thread of the block: a full
  /// block runs a copy in which they are constants, a block at the edge of
  /// the data splits each row (ThreadLoopEmitter::emitSplit). Otherwise
  /// one plain thread loop. \p Range as for ThreadLoopEmitter::emit.
  llvm::Error emit(const std::vector<const Stmt *> &Stmts, llvm::function_ref<llvm::Error()> Body,
                   XRange Range, const BinaryExpr *Skip);

private:
  /// The initializer of every scalar `let` of the module.
  llvm::DenseMap<const VarDecl *, const Expr *> LetInits;
  /// The exact forms of the thread loop's wide indices (emitWideIndexTest).
  llvm::DenseMap<const Expr *, std::array<llvm::Value *, 4>> WideForms;

  /// What a thread loop's full-block test proves.
  struct Guards {
    /// The comparisons of the loop's `if` conditions (and of the `if`s
    /// nested in their branches) that the test can prove, each with the
    /// value that lets the loop skip its edge handling.
    std::vector<GuardFact> Facts;
    /// The indices of its element accesses (`src[i - w]`, `a[j]`) that are
    /// affine in the thread indices: the test also proves that none wraps
    /// in any thread, and the full-block copy computes each from its affine
    /// form in i64 (only with facts: a loop without them is not versioned).
    std::vector<const Expr *> Indices;
  };
  Guards findGuardFacts(const std::vector<const Stmt *> &Stmts, const BinaryExpr *Skip);
  /// Evaluates the affine forms of \p Facts at block level.
  llvm::Expected<std::vector<FactForms>> emitFactForms(llvm::ArrayRef<GuardFact> Facts);
  /// \p E's affine form, evaluated at block level (E passed
  /// findGuardFacts' checks).
  llvm::Expected<AffineForm> emitAffine(const Expr &E);
  /// The block-level test: true when every fact holds for every thread.
  llvm::Value *emitFactsTest(llvm::ArrayRef<FactForms> Forms);
  /// The smallest and largest value of i64 affine form \p F over the block
  /// (\p Last: each dimension's largest thread index, made when first
  /// needed); with \p NoWrap, the arithmetic is marked `nsw`.
  std::pair<llvm::Value *, llvm::Value *> emitExtremes(const std::array<llvm::Value *, 4> &F,
                                                       llvm::Value *(&Last)[3], bool NoWrap);
  using Form64 = std::array<llvm::Value *, 4>;
  using ExactForms = llvm::DenseMap<const Expr *, Form64>;
  /// The exact value of \p E (an affine index or part of one) as an i64
  /// affine form: uniform leaves sign-extended, the arithmetic in i64.
  llvm::Expected<Form64> emitExactForm(const Expr &E, ExactForms &Memo);
  /// True when none of \p Indices (Guards::Indices) wraps in any thread
  /// of the block (null when there are none); records their forms in
  /// WideForms.
  llvm::Expected<llvm::Value *> emitWideIndexTest(llvm::ArrayRef<const Expr *> Indices);
  /// After a full-block copy: its element addresses take the i64 values of
  /// its wide indices (FunctionState::WideValues).
  void useWideIndices();
  /// In a row (\p TY, \p TZ) of a block at the edge: the i32 range [lo,
  /// hi) within [\p XLo, \p XHi) of thread_idx.x where every fact holds.
  std::pair<llvm::Value *, llvm::Value *> emitRowRange(llvm::ArrayRef<FactForms> Forms,
                                                       llvm::Value *TY, llvm::Value *TZ,
                                                       llvm::Value *XLo, llvm::Value *XHi);
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_FULLBLOCKS_H
