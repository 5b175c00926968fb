//===- FullBlocks.cpp - Thread loops without their bounds guards ----------===//
//
// Part of gridjit. The usual CUDA bounds guard, `if i < n { ... }` with i
// affine in thread_idx (`block_idx.x * block_dim.x + thread_idx.x`) and n
// uniform, holds for every thread of every block but those at the edge of
// the data. Lowered as written, it is a branch inside the thread loop,
// which LLVM's vectoriser if-converts into masked loads and stores over the
// whole loop: slow on CPUs where masked memory operations are slow (AMD
// Zen's vmaskmovps, several Intel cores).
//
// So a thread loop whose `if` conditions contain such comparisons is
// emitted in two versions, behind one block-level test:
//
//   if (every proven comparison has its value in every thread of the block)
//     thread loop with those comparisons replaced by their values
//   else, for each row (thread_idx.y, thread_idx.z):
//     [lo, hi) = the thread_idx.x where every comparison has its value
//     [0, lo) and [hi, block_dim.x): the loop as written, kept scalar
//     [lo, hi): the loop with the comparisons replaced
//
// The copies without the guard vectorise into plain loads and stores; only
// the threads that fail a guard run guarded. Every version visits the same
// threads in the same order.
//
// The test. An i32 expression built from thread_idx, uniform values, `+`,
// `-`, unary `-` and `*` by a uniform value, through immutable `let`s, is
// `c0 + cx * tx + cy * ty + cz * tz` with i32 coefficients computed at
// block level (wrapping, as the thread code computes it). The same sum in
// i64 agrees with the i32 value modulo 2^32; over the block's box
// (t in [0, block_dim - 1]) it is smallest and largest at corners, so when
// both extremes fit in i32 the i32 value never wraps and equals the i64
// one. A comparison `L op R` then holds (or fails) for every thread when
// neither side wraps and the extremes of the i64 difference L - R say so.
// Anything else (a wrap, an unknown shape) is simply not proven: that
// block is an edge block. In a row of an edge block each condition ("no
// wrap", the comparison) is `a + c * thread_idx.x >= 0`: a half-line of
// thread_idx.x, so together they hold on one range.
//
// Indices. KIR's i32 arithmetic wraps, so `src[i - w]` as written is an
// i32 value sign-extended per access, which LLVM turns into an induction
// variable only behind a run-time overflow check per row, and whose
// distance to `dst[i]` it cannot see. So the test also proves, for each
// element index of the loop affine in the thread indices, that it fits in
// i32 in every thread: its exact form (i64 coefficients from the
// sign-extended uniform leaves, agreeing with the i32 value modulo 2^32)
// has coefficients in i32 and extremes in i32, so the two values are equal.
// The full-block copy then addresses the element with the form's i64 value
// (HostModuleLowering::lowerWideIndex, useWideIndices). An edge row's full
// range keeps the i32 index.
//
//===----------------------------------------------------------------------===//

#include "FullBlocks.h"

#include "HostLowering.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Expected;
using llvm::isa;
using llvm::Value;

namespace {

/// At most this many comparisons per thread loop go into its test.
constexpr size_t MaxFacts = 8;
/// At most this many element indices per thread loop are proven not to
/// wrap (FullBlockVersioner::emitWideIndexTest).
constexpr size_t MaxWideIndices = 16;
/// How deep the analysis follows `let`s and operators.
constexpr unsigned MaxDepth = 32;

bool isI32(const Expr &E) { return E.Ty.isScalar() && E.Ty.getScalarKind() == ScalarKind::I32; }

/// thread_idx.x, .y, .z: 0, 1, 2; anything else: -1.
int threadIdxField(const Expr &E) {
  const auto *M = dyn_cast<MemberExpr>(&E);
  if (!M)
    return -1;
  const auto *N = dyn_cast<NameExpr>(M->Base.get());
  return N && N->Builtin == BuiltinValue::ThreadIdx ? int(M->Field) : -1;
}

/// True when \p E reads a `var` (or a shared scalar, block memory that
/// any thread may change).
bool readsVar(const Expr &E) {
  switch (E.getKind()) {
  case Expr::Name: {
    const auto &N = cast<NameExpr>(E);
    return N.Decl &&
           (N.Decl->Storage == StorageKind::Var || N.Decl->Storage == StorageKind::Shared);
  }
  case Expr::Unary:
    return readsVar(*cast<UnaryExpr>(E).Operand);
  case Expr::Binary:
    return readsVar(*cast<BinaryExpr>(E).LHS) || readsVar(*cast<BinaryExpr>(E).RHS);
  case Expr::Cond:
    return readsVar(*cast<CondExpr>(E).C) || readsVar(*cast<CondExpr>(E).T) ||
           readsVar(*cast<CondExpr>(E).F);
  case Expr::Cast:
    return readsVar(*cast<CastExpr>(E).Operand);
  case Expr::Call:
    for (const ExprPtr &A : cast<CallExpr>(E).Args)
      if (readsVar(*A))
        return true;
    return false;
  case Expr::Index:
    return readsVar(*cast<IndexExpr>(E).Base) || readsVar(*cast<IndexExpr>(E).Idx);
  case Expr::Member:
    return readsVar(*cast<MemberExpr>(E).Base);
  default:
    return false;
  }
}

/// Every variable declared in \p S.
void collectDecls(const Stmt &S, llvm::DenseSet<const VarDecl *> &Out) {
  switch (S.getKind()) {
  case Stmt::Decl:
    Out.insert(&cast<DeclStmt>(S).Var);
    return;
  case Stmt::Block:
    for (const StmtPtr &C : cast<BlockStmt>(S).Body)
      collectDecls(*C, Out);
    return;
  case Stmt::If: {
    const auto &I = cast<IfStmt>(S);
    collectDecls(*I.Then, Out);
    if (I.Else)
      collectDecls(*I.Else, Out);
    return;
  }
  case Stmt::While:
    if (const Stmt *Init = cast<WhileStmt>(S).Init.get())
      collectDecls(*Init, Out);
    collectDecls(*cast<WhileStmt>(S).Body, Out);
    return;
  case Stmt::For:
    Out.insert(&cast<ForStmt>(S).Index);
    collectDecls(*cast<ForStmt>(S).Body, Out);
    return;
  default:
    return;
  }
}

/// A branch that only leaves (`return`, `break`, `continue`): the `if`
/// around it is an early exit, which full blocks never take.
bool onlyLeaves(const BlockStmt &B) {
  if (B.Body.empty())
    return false;
  for (const StmtPtr &S : B.Body)
    if (!isa<ReturnStmt>(*S) && !isa<BreakStmt>(*S) && !isa<ContinueStmt>(*S))
      return false;
  return true;
}

/// The shape of an i32 expression in the thread indices.
enum class Shape { None, Uniform, Affine };

/// What findGuardFacts needs while it looks at one thread loop.
class FactFinder {
public:
  FactFinder(const BodyPlan &Plan, SyncInfo &Sync,
             const llvm::DenseMap<const VarDecl *, const Expr *> &LetInits,
             const llvm::DenseMap<const Expr *, FrameSlot> &Hoisted,
             const std::vector<const Stmt *> &Stmts, const BinaryExpr *Skip)
      : Plan(Plan), Sync(Sync), LetInits(LetInits), Hoisted(Hoisted), Skip(Skip) {
    for (const Stmt *S : Stmts)
      collectDecls(*S, Local);
  }

  void visit(const Stmt &S) {
    if (const auto *Blk = dyn_cast<BlockStmt>(&S)) {
      for (const StmtPtr &C : Blk->Body)
        visit(*C);
      return;
    }
    const auto *If = dyn_cast<IfStmt>(&S);
    if (!If)
      return;
    // `if i < n { ... }` runs its branch in a full block; `if i >= n {
    // return; }` does not. With an else branch, whichever side the
    // comparisons can decide.
    bool Exit = onlyLeaves(*If->Then);
    size_t Before = Facts.size();
    condition(*If->Cond, !Exit);
    if (Facts.size() == Before && If->Else && !Exit)
      condition(*If->Cond, false);
    visit(*If->Then);
    if (If->Else)
      visit(*If->Else);
  }

  std::vector<GuardFact> Facts;

  /// Collects the indices of the element accesses (`a[i]`) of \p S that
  /// are affine in the thread indices (at most MaxWideIndices).
  void collectIndices(const Stmt &S) {
    anyExprIn(S, [&](const Expr &E) {
      const auto *Ix = dyn_cast<IndexExpr>(&E);
      if (Ix && Indices.size() < MaxWideIndices && shape(*Ix->Idx, false, 0) == Shape::Affine)
        Indices.push_back(Ix->Idx.get());
      return false;
    });
  }

  std::vector<const Expr *> Indices;

private:
  /// Collects the comparisons that make \p E evaluate to \p Want.
  void condition(const Expr &E, bool Want) {
    if (Facts.size() >= MaxFacts || Sync.hasSync(E) || Hoisted.count(&E))
      return;
    if (const auto *U = dyn_cast<UnaryExpr>(&E)) {
      if (U->Op == UnaryOp::Not)
        condition(*U->Operand, !Want);
      return;
    }
    const auto *Bin = dyn_cast<BinaryExpr>(&E);
    if (!Bin)
      return;
    if ((Bin->Op == BinaryOp::LAnd && Want) || (Bin->Op == BinaryOp::LOr && !Want)) {
      condition(*Bin->LHS, Want);
      condition(*Bin->RHS, Want);
      return;
    }
    switch (Bin->Op) {
    case BinaryOp::Lt:
    case BinaryOp::Le:
    case BinaryOp::Gt:
    case BinaryOp::Ge:
      break;
    case BinaryOp::Eq: // provable only as "no thread is equal"
      if (Want)
        return;
      break;
    case BinaryOp::Ne:
      if (!Want)
        return;
      break;
    default:
      return;
    }
    if (Bin == Skip || !isI32(*Bin->LHS) || !isI32(*Bin->RHS))
      return;
    Shape L = shape(*Bin->LHS, false, 0), R = shape(*Bin->RHS, false, 0);
    // A uniform comparison is branched on once per block by LLVM anyway.
    if (L != Shape::None && R != Shape::None && (L == Shape::Affine || R == Shape::Affine))
      Facts.push_back({Bin, Want});
  }

  /// \p ImmutableOnly: \p E is the initializer of a `let` declared before
  /// this thread loop, so a `var` it reads may have changed since.
  Shape shape(const Expr &E, bool ImmutableOnly, unsigned Depth) {
    if (Depth > MaxDepth || !isI32(E) || Sync.hasSync(E) || Hoisted.count(&E))
      return Shape::None;
    if (Plan.isUniform(E))
      return ImmutableOnly && readsVar(E) ? Shape::None : Shape::Uniform;
    if (threadIdxField(E) >= 0)
      return Shape::Affine;
    switch (E.getKind()) {
    case Expr::Name: {
      const VarDecl *D = cast<NameExpr>(E).Decl;
      if (!D || D->Storage != StorageKind::Let)
        return Shape::None;
      const Expr *Init = LetInits.lookup(D);
      if (!Init)
        return Shape::None;
      return shape(*Init, ImmutableOnly || !Local.contains(D), Depth + 1);
    }
    case Expr::Unary: {
      const auto &U = cast<UnaryExpr>(E);
      return U.Op == UnaryOp::Neg ? shape(*U.Operand, ImmutableOnly, Depth + 1) : Shape::None;
    }
    case Expr::Binary: {
      const auto &Bin = cast<BinaryExpr>(E);
      if (Bin.Op != BinaryOp::Add && Bin.Op != BinaryOp::Sub && Bin.Op != BinaryOp::Mul)
        return Shape::None;
      Shape L = shape(*Bin.LHS, ImmutableOnly, Depth + 1);
      Shape R = shape(*Bin.RHS, ImmutableOnly, Depth + 1);
      if (L == Shape::None || R == Shape::None)
        return Shape::None;
      if (Bin.Op == BinaryOp::Mul && L == Shape::Affine && R == Shape::Affine)
        return Shape::None;
      return L == Shape::Affine || R == Shape::Affine ? Shape::Affine : Shape::Uniform;
    }
    default:
      return Shape::None;
    }
  }

  const BodyPlan &Plan;
  SyncInfo &Sync;
  const llvm::DenseMap<const VarDecl *, const Expr *> &LetInits;
  const llvm::DenseMap<const Expr *, FrameSlot> &Hoisted;
  const BinaryExpr *Skip;
  /// The variables declared in this thread loop.
  llvm::DenseSet<const VarDecl *> Local;
};

} // namespace

void FullBlockVersioner::collectLetInits(const Stmt &S) {
  switch (S.getKind()) {
  case Stmt::Decl: {
    const auto &D = cast<DeclStmt>(S);
    if (D.Var.Storage == StorageKind::Let && D.Init)
      LetInits[&D.Var] = D.Init.get();
    return;
  }
  case Stmt::Block:
    for (const StmtPtr &C : cast<BlockStmt>(S).Body)
      collectLetInits(*C);
    return;
  case Stmt::If: {
    const auto &I = cast<IfStmt>(S);
    collectLetInits(*I.Then);
    if (I.Else)
      collectLetInits(*I.Else);
    return;
  }
  case Stmt::While:
    if (const Stmt *Init = cast<WhileStmt>(S).Init.get())
      collectLetInits(*Init);
    collectLetInits(*cast<WhileStmt>(S).Body);
    return;
  case Stmt::For:
    collectLetInits(*cast<ForStmt>(S).Body);
    return;
  default:
    return;
  }
}

FullBlockVersioner::Guards
FullBlockVersioner::findGuardFacts(const std::vector<const Stmt *> &Stmts, const BinaryExpr *Skip) {
  if (!Cur->Plan || !Cur->Kernel)
    return {};
  FactFinder F(*Cur->Plan, L.Sync, LetInits, Cur->Hoisted, Stmts, Skip);
  for (const Stmt *S : Stmts)
    F.visit(*S);
  if (F.Facts.empty())
    return {};
  for (const Stmt *S : Stmts)
    F.collectIndices(*S);
  return {std::move(F.Facts), std::move(F.Indices)};
}

Expected<AffineForm> FullBlockVersioner::emitAffine(const Expr &E) {
  AffineForm F;
  if (Cur->Plan->isUniform(E)) {
    Expected<Value *> V = L.lowerExpr(E);
    if (!V)
      return V.takeError();
    F.C[0] = *V;
    return F;
  }
  if (int D = threadIdxField(E); D >= 0) {
    F.C[D + 1] = B.getInt32(1);
    return F;
  }
  auto Add = [&](Value *A, Value *C) -> Value * {
    if (!A || !C)
      return A ? A : C;
    return B.CreateAdd(A, C);
  };
  switch (E.getKind()) {
  case Expr::Name:
    return emitAffine(*LetInits.lookup(cast<NameExpr>(E).Decl));
  case Expr::Unary: {
    Expected<AffineForm> O = emitAffine(*cast<UnaryExpr>(E).Operand);
    if (!O)
      return O.takeError();
    for (Value *&C : O->C)
      if (C)
        C = B.CreateNeg(C);
    return O;
  }
  case Expr::Binary: {
    const auto &Bin = cast<BinaryExpr>(E);
    Expected<AffineForm> LF = emitAffine(*Bin.LHS);
    if (!LF)
      return LF.takeError();
    Expected<AffineForm> RF = emitAffine(*Bin.RHS);
    if (!RF)
      return RF.takeError();
    if (Bin.Op == BinaryOp::Mul) {
      // One side has no thread index (findGuardFacts checked): it scales
      // the other.
      bool LeftConst = !LF->C[1] && !LF->C[2] && !LF->C[3];
      Value *U = LeftConst ? LF->C[0] : RF->C[0];
      AffineForm Scaled = LeftConst ? *RF : *LF;
      for (Value *&C : Scaled.C)
        if (C)
          C = U ? B.CreateMul(C, U) : nullptr;
      return Scaled;
    }
    for (unsigned I = 0; I < 4; ++I) {
      Value *RC = RF->C[I];
      if (RC && Bin.Op == BinaryOp::Sub)
        RC = B.CreateNeg(RC);
      F.C[I] = Add(LF->C[I], RC);
    }
    return F;
  }
  default:
    return Ctx.error(E.getLoc(), "internal error: not an affine expression of the thread indices");
  }
}

Expected<std::vector<FactForms>>
FullBlockVersioner::emitFactForms(llvm::ArrayRef<GuardFact> Facts) {
  llvm::Type *I64 = B.getInt64Ty();
  std::vector<FactForms> Forms;
  for (const GuardFact &F : Facts) {
    Expected<AffineForm> LF = emitAffine(*F.Cmp->LHS);
    if (!LF)
      return LF.takeError();
    Expected<AffineForm> RF = emitAffine(*F.Cmp->RHS);
    if (!RF)
      return RF.takeError();
    FactForms FF{F, {}, {}, {}};
    for (unsigned I = 0; I < 4; ++I) {
      FF.L[I] = LF->C[I] ? B.CreateSExt(LF->C[I], I64) : nullptr;
      FF.R[I] = RF->C[I] ? B.CreateSExt(RF->C[I], I64) : nullptr;
      if (FF.L[I] && FF.R[I])
        FF.D[I] = B.CreateSub(FF.L[I], FF.R[I], "", false, true);
      else
        FF.D[I] = FF.L[I] ? FF.L[I] : (FF.R[I] ? B.CreateNeg(FF.R[I]) : nullptr);
    }
    Forms.push_back(FF);
  }
  return Forms;
}

/// True when \p F depends on a thread index.
static bool hasThreadTerms(const std::array<Value *, 4> &F) { return F[1] || F[2] || F[3]; }

std::pair<Value *, Value *> FullBlockVersioner::emitExtremes(const std::array<Value *, 4> &F,
                                                             Value *(&Last)[3], bool NoWrap) {
  Value *Zero = B.getInt64(0);
  Value *Lo = F[0] ? F[0] : Zero, *Hi = Lo;
  for (unsigned D = 0; D < 3; ++D) {
    if (!F[D + 1])
      continue;
    if (!Last[D])
      Last[D] = B.CreateSub(B.CreateZExt(Cur->Env.BDim[D], B.getInt64Ty()), B.getInt64(1), "", true,
                            true);
    auto *K = dyn_cast<llvm::ConstantInt>(F[D + 1]);
    Value *P =
        K && K->isOne() ? Last[D] : B.CreateMul(F[D + 1], Last[D], "", /*HasNUW=*/false, NoWrap);
    if (!K || K->isNegative())
      Lo = B.CreateAdd(Lo, K ? P : B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, P, Zero), "",
                       false, NoWrap);
    if (!K || !K->isNegative())
      Hi = B.CreateAdd(Hi, K ? P : B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, P, Zero), "",
                       false, NoWrap);
  }
  return {Lo, Hi};
}

Value *FullBlockVersioner::emitFactsTest(llvm::ArrayRef<FactForms> Forms) {
  Value *Zero = B.getInt64(0);
  // The largest thread index in each dimension, as i64 (when needed).
  Value *Last[3] = {};
  auto Extremes = [&](const std::array<Value *, 4> &F) {
    return emitExtremes(F, Last, /*NoWrap=*/true);
  };
  Value *All = nullptr;
  auto And = [&](Value *C) { All = All ? B.CreateAnd(All, C) : C; };
  for (const FactForms &FF : Forms) {
    // Neither side wraps in any thread: their i32 values are the i64 ones.
    for (const auto *Side : {&FF.L, &FF.R}) {
      if (!hasThreadTerms(*Side))
        continue; // one i32 value for the whole block
      auto [Lo, Hi] = Extremes(*Side);
      And(B.CreateICmpSGE(Lo, B.getInt64(INT32_MIN)));
      And(B.CreateICmpSLE(Hi, B.getInt64(INT32_MAX)));
    }
    // L op R in every thread, from the extremes of L - R.
    auto [Lo, Hi] = Extremes(FF.D);
    bool V = FF.F.Value;
    switch (FF.F.Cmp->Op) {
    case BinaryOp::Lt:
      And(V ? B.CreateICmpSLT(Hi, Zero) : B.CreateICmpSGE(Lo, Zero));
      break;
    case BinaryOp::Le:
      And(V ? B.CreateICmpSLE(Hi, Zero) : B.CreateICmpSGT(Lo, Zero));
      break;
    case BinaryOp::Gt:
      And(V ? B.CreateICmpSGT(Lo, Zero) : B.CreateICmpSLE(Hi, Zero));
      break;
    case BinaryOp::Ge:
      And(V ? B.CreateICmpSGE(Lo, Zero) : B.CreateICmpSLT(Hi, Zero));
      break;
    default: // `==` never holds, `!=` always does: 0 is outside
      And(B.CreateOr(B.CreateICmpSGT(Lo, Zero), B.CreateICmpSLT(Hi, Zero)));
      break;
    }
  }
  return All;
}

Expected<FullBlockVersioner::Form64> FullBlockVersioner::emitExactForm(const Expr &E,
                                                                       ExactForms &Memo) {
  if (auto It = Memo.find(&E); It != Memo.end())
    return It->second;
  Form64 F = {};
  if (Cur->Plan->isUniform(E)) {
    Expected<Value *> V = L.lowerExpr(E);
    if (!V)
      return V.takeError();
    F[0] = B.CreateSExt(*V, B.getInt64Ty());
  } else if (int D = threadIdxField(E); D >= 0) {
    F[D + 1] = B.getInt64(1);
  } else if (const auto *N = dyn_cast<NameExpr>(&E)) {
    Expected<Form64> I = emitExactForm(*LetInits.lookup(N->Decl), Memo);
    if (!I)
      return I.takeError();
    F = *I;
  } else if (const auto *U = dyn_cast<UnaryExpr>(&E)) {
    Expected<Form64> O = emitExactForm(*U->Operand, Memo);
    if (!O)
      return O.takeError();
    for (unsigned I = 0; I < 4; ++I)
      F[I] = (*O)[I] ? B.CreateNeg((*O)[I]) : nullptr;
  } else {
    const auto &Bin = cast<BinaryExpr>(E);
    Expected<Form64> LF = emitExactForm(*Bin.LHS, Memo);
    if (!LF)
      return LF.takeError();
    Expected<Form64> RF = emitExactForm(*Bin.RHS, Memo);
    if (!RF)
      return RF.takeError();
    if (Bin.Op == BinaryOp::Mul) {
      // One side has no thread index (findGuardFacts checked): it
      // scales the other.
      bool LeftConst = !(*LF)[1] && !(*LF)[2] && !(*LF)[3];
      Value *S = LeftConst ? (*LF)[0] : (*RF)[0];
      const Form64 &O = LeftConst ? *RF : *LF;
      for (unsigned I = 0; I < 4; ++I) {
        auto *K = llvm::dyn_cast_or_null<llvm::ConstantInt>(O[I]);
        F[I] = !O[I] || !S ? nullptr : (K && K->isOne() ? S : B.CreateMul(O[I], S));
      }
    } else {
      for (unsigned I = 0; I < 4; ++I) {
        Value *LC = (*LF)[I], *RC = (*RF)[I];
        if (RC && Bin.Op == BinaryOp::Sub)
          RC = B.CreateNeg(RC);
        F[I] = LC && RC ? B.CreateAdd(LC, RC) : (LC ? LC : RC);
      }
    }
  }
  Memo[&E] = F;
  return F;
}

Expected<Value *> FullBlockVersioner::emitWideIndexTest(llvm::ArrayRef<const Expr *> Indices) {
  ExactForms Memo;
  Value *Last[3] = {};
  Value *All = nullptr;
  auto And = [&](Value *C) {
    if (auto *K = dyn_cast<llvm::ConstantInt>(C); !K || !K->isOne())
      All = All ? B.CreateAnd(All, C) : C;
  };
  for (const Expr *E : Indices) {
    Expected<Form64> F = emitExactForm(*E, Memo);
    if (!F)
      return F.takeError();
    // Its coefficients fit in i32, so that its extremes are computed
    // exactly (block dimensions are at most 1024), ...
    for (Value *C : *F) {
      if (!C || isa<llvm::SExtInst>(C)) // an i32 value sign-extended
        continue;
      if (auto *K = dyn_cast<llvm::ConstantInt>(C)) {
        if (!llvm::isInt<32>(K->getSExtValue()))
          And(B.getFalse());
        continue;
      }
      And(B.CreateICmpSGE(C, B.getInt64(INT32_MIN)));
      And(B.CreateICmpSLE(C, B.getInt64(INT32_MAX)));
    }
    // ... and its extremes fit: the form, which agrees with the index's
    // i32 value modulo 2^32, is that value in every thread.
    auto [Lo, Hi] = emitExtremes(*F, Last, /*NoWrap=*/false);
    And(B.CreateICmpSGE(Lo, B.getInt64(INT32_MIN)));
    And(B.CreateICmpSLE(Hi, B.getInt64(INT32_MAX)));
    WideForms[E] = *F;
  }
  return All;
}

namespace {

/// The range [lo, hi) of thread_idx.x in one row (thread_idx.y, .z) of an
/// edge block where conditions of the form `A + C * x >= 0` (i64, computed
/// at block level) all hold: each narrows it, to a half-line of x or, with
/// C = 0, to all of the row or nothing.
class RowRange {
public:
  RowRange(llvm::IRBuilder<> &B, Value *TY, Value *TZ, Value *XLo, Value *XHi)
      : B(B), TY(TY), TZ(TZ), I64(B.getInt64Ty()), Zero(B.getInt64(0)), One(B.getInt64(1)) {
    Lo = B.CreateZExt(XLo, I64);
    Hi = B.CreateZExt(XHi, I64);
    End = Hi;
  }

  /// Narrows the range to the threads where neither side of \p FF wraps
  /// and its comparison has the value the full-block copy assumes;
  /// \p BDimX is block_dim.x.
  void require(const FactForms &FF, Value *BDimX) {
    for (const auto *Side : {&FF.L, &FF.R})
      if (hasThreadTerms(*Side))
        requireFits(*Side);
    Value *R = rowPart(FF.D), *C = FF.D[1];
    bool V = FF.F.Value;
    switch (FF.F.Cmp->Op) {
    case BinaryOp::Lt: // D < 0, or D >= 0
      need(R, C, V, V);
      break;
    case BinaryOp::Le: // D <= 0, or D > 0
      need(R, C, V, !V);
      break;
    case BinaryOp::Gt: // D > 0, or D <= 0
      need(R, C, !V, V);
      break;
    case BinaryOp::Ge: // D >= 0, or D < 0
      need(R, C, !V, !V);
      break;
    default: {
      // D != 0 is no single range of x: the whole row's extremes decide.
      Value *P = C ? B.CreateMul(C, B.CreateZExt(B.CreateSub(BDimX, B.getInt32(1)), I64)) : Zero;
      Value *Min = B.CreateAdd(R, B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, P, Zero));
      Value *Max = B.CreateAdd(R, B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, P, Zero));
      Value *Outside = B.CreateOr(B.CreateICmpSGT(Min, Zero), B.CreateICmpSLT(Max, Zero));
      require(B.CreateSelect(Outside, Zero, B.getInt64(-1)), nullptr);
      break;
    }
    }
  }

  /// Narrows the range to the threads where i64 affine form \p F (with
  /// coefficients in i32) fits in i32: where a side of a fact does not wrap.
  void requireFits(const std::array<Value *, 4> &F) {
    Value *R = rowPart(F), *C = F[1];
    require(B.CreateSub(R, B.getInt64(INT32_MIN)), C);      // R + C x >= INT32_MIN
    require(B.CreateSub(B.getInt64(INT32_MAX), R), neg(C)); // R + C x <= INT32_MAX
  }

  /// The range as i32 (x.full, x.edge), within [\p XLo, the row's end)
  /// and with lo <= hi.
  std::pair<Value *, Value *> finish(Value *XLo) {
    Lo = B.CreateBinaryIntrinsic(
        llvm::Intrinsic::smin,
        B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, Lo, B.CreateZExt(XLo, I64)), End);
    Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin,
                                 B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, Hi, Lo), End);
    return {B.CreateTrunc(Lo, B.getInt32Ty(), "x.full"),
            B.CreateTrunc(Hi, B.getInt32Ty(), "x.edge")};
  }

private:
  llvm::IRBuilder<> &B;
  Value *TY, *TZ;
  llvm::Type *I64;
  Value *Zero, *One;
  Value *Lo, *Hi, *End;
  Value *Idx64[2] = {};

  /// thread_idx.y (0) or .z (1) as i64, made once.
  Value *idx(unsigned D) {
    if (!Idx64[D])
      Idx64[D] = B.CreateZExt(D ? TZ : TY, I64);
    return Idx64[D];
  }
  /// The value of a form in this row, without its thread_idx.x term.
  Value *rowPart(const std::array<Value *, 4> &F) {
    Value *R = F[0] ? F[0] : Zero;
    if (F[2])
      R = B.CreateAdd(R, B.CreateMul(F[2], idx(0), "", false, true), "", false, true);
    if (F[3])
      R = B.CreateAdd(R, B.CreateMul(F[3], idx(1), "", false, true), "", false, true);
    return R;
  }
  Value *neg(Value *V) { return V ? B.CreateNeg(V, "", /*HasNSW=*/true) : nullptr; }
  /// floor(A / D) for D > 0 (sdiv rounds toward zero).
  Value *floorDiv(Value *A, Value *D) {
    if (auto *K = dyn_cast<llvm::ConstantInt>(D); K && K->isOne())
      return A;
    Value *Adj = B.CreateSelect(B.CreateICmpSLT(A, Zero), B.CreateAdd(B.CreateSub(A, D), One), A);
    return B.CreateSDiv(Adj, D);
  }
  /// D >= 0 (D = R + C x), D > 0 with \p Strict (D - 1 >= 0), and the
  /// same for -D with \p Negate.
  void need(Value *R, Value *C, bool Negate, bool Strict) {
    Value *A = Negate ? neg(R) : R;
    require(Strict ? B.CreateSub(A, One) : A, Negate ? neg(C) : C);
  }
  /// Narrows [Lo, Hi) to the x where A + C * x >= 0 (C null: 0).
  void require(Value *A, Value *C) {
    auto *K = llvm::dyn_cast_or_null<llvm::ConstantInt>(C);
    if (!C || (K && K->isZero())) {
      // The same in the whole row: all of it or none.
      Lo = B.CreateSelect(B.CreateICmpSGE(A, Zero), Lo, End);
      return;
    }
    if (K) {
      if (K->isNegative()) // x <= floor(A / -C)
        Hi = B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, Hi,
                                     B.CreateAdd(floorDiv(A, B.CreateNeg(C)), One));
      else // x >= ceil(-A / C) = -floor(A / C)
        Lo = B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, Lo, B.CreateNeg(floorDiv(A, C)));
      return;
    }
    Value *Pos = B.CreateICmpSGT(C, Zero), *IsNeg = B.CreateICmpSLT(C, Zero);
    Value *Abs = B.CreateSelect(Pos, C, B.CreateSelect(IsNeg, B.CreateNeg(C), One));
    Value *Q = floorDiv(A, Abs);
    Lo =
        B.CreateSelect(Pos, B.CreateBinaryIntrinsic(llvm::Intrinsic::smax, Lo, B.CreateNeg(Q)), Lo);
    Hi = B.CreateSelect(
        IsNeg, B.CreateBinaryIntrinsic(llvm::Intrinsic::smin, Hi, B.CreateAdd(Q, One)), Hi);
    Value *ZeroOK = B.CreateOr(B.CreateOr(Pos, IsNeg), B.CreateICmpSGE(A, Zero));
    Lo = B.CreateSelect(ZeroOK, Lo, End);
  }
};

} // namespace

std::pair<Value *, Value *> FullBlockVersioner::emitRowRange(llvm::ArrayRef<FactForms> Forms,
                                                             Value *TY, Value *TZ, Value *XLo,
                                                             Value *XHi) {
  RowRange R(B, TY, TZ, XLo, XHi);
  for (const FactForms &FF : Forms)
    R.require(FF, Cur->Env.BDim[0]);
  return R.finish(XLo);
}

// The wide indices of a full-block copy (HostModuleLowering::lowerWideIndex)
// fit in i32 in every thread, so an i64 index made of one's i32 value,
// sext(trunc(v)), is its i64 value v itself.
void FullBlockVersioner::useWideIndices() {
  for (auto [T, W] : Cur->WideValues)
    if (auto *TI = dyn_cast<llvm::TruncInst>(T))
      for (llvm::User *U : llvm::make_early_inc_range(TI->users()))
        if (auto *S = dyn_cast<llvm::SExtInst>(U); S && S->getType() == W->getType()) {
          S->replaceAllUsesWith(W);
          S->eraseFromParent();
        }
  Cur->WideValues.clear();
}

llvm::Error FullBlockVersioner::emit(const std::vector<const Stmt *> &Stmts,
                                     llvm::function_ref<llvm::Error()> Body, XRange Range,
                                     const BinaryExpr *Skip) {
  if (Cur->Cold)
    return L.Loops.emit(Body, Range);
  auto [Facts, Indices] = findGuardFacts(Stmts, Skip);
  if (Facts.empty())
    return L.Loops.emit(Body, Range);

  Expected<std::vector<FactForms>> Forms = emitFactForms(Facts);
  if (!Forms)
    return Forms.takeError();
  Value *Full = emitFactsTest(*Forms);
  WideForms.clear();
  Expected<Value *> Wide = emitWideIndexTest(Indices);
  if (!Wide)
    return Wide.takeError();
  if (*Wide)
    Full = B.CreateAnd(Full, *Wide);
  llvm::BasicBlock *FullBlock = newBlock("full.block");
  llvm::BasicBlock *EdgeBlock = newBlock("edge.block");
  llvm::BasicBlock *Join = newBlock("full.block.done");
  B.CreateCondBr(Full, FullBlock, EdgeBlock);

  // The statements are lowered three times: with the facts assumed (a full
  // block; the full part of an edge block's row) and as written (the rest
  // of an edge block). Each time they ask for the same frame slots in the
  // same order, so each copy gets the same ones.
  uint64_t FrameStart = Cur->FrameBytes, BlockFrameStart = Cur->BlockFrameBytes;
  std::optional<std::pair<uint64_t, uint64_t>> FrameEnd;
  auto Copy = [&](bool Assume, bool Wide) -> llvm::Error {
    Cur->FrameBytes = FrameStart;
    Cur->BlockFrameBytes = BlockFrameStart;
    if (Assume)
      for (const GuardFact &F : Facts)
        Cur->Assumed[F.Cmp] = F.Value;
    if (Wide)
      Cur->WideIndices = WideForms;
    llvm::Error E = Body();
    Cur->Assumed.clear();
    Cur->WideIndices.clear();
    useWideIndices();
    if (E)
      return E;
    std::pair<uint64_t, uint64_t> End(Cur->FrameBytes, Cur->BlockFrameBytes);
    if (FrameEnd && *FrameEnd != End)
      return Ctx.error(Stmts.front()->getLoc(), "internal error: the copies of a thread loop lay "
                                                "out the frame differently");
    FrameEnd = End;
    return llvm::Error::success();
  };

  B.SetInsertPoint(FullBlock);
  if (llvm::Error E = L.Loops.emit([&] { return Copy(true, true); }, Range))
    return E;
  B.CreateBr(Join);
  B.SetInsertPoint(EdgeBlock);
  // An edge row's full range assumes the facts, but its indices may wrap.
  if (llvm::Error E = L.Loops.emitSplit([&] { return Copy(false, false); },
                                        [&] { return Copy(true, false); }, Range,
                                        [&](Value *TY, Value *TZ, Value *XLo, Value *XHi) {
                                          return emitRowRange(*Forms, TY, TZ, XLo, XHi);
                                        }))
    return E;
  B.CreateBr(Join);
  B.SetInsertPoint(Join);
  return llvm::Error::success();
}
