//===- SharedForms.cpp - Shared-array indices as linear forms of the thread ===//
//
// Part of gridjit. See SharedForms.h. A walk of a verified kernel's tree:
//
// 1. The candidates: the kernel's own one-dimensional static shared arrays
//    of scalars whose name appears only as `t[i]` (loaded, or assigned),
//    never under `&` (an atomic's address, a pointer) or alone.
// 2. Each access's index as a SharedForm, through `let`s, widening casts,
//    `+`, `-`, `*` and `<<` by constants. An array with one access without
//    a form gets none.
// 3. Guards: an access in the `then` of `if T < s` (or of a `&&` with that
//    term) whose index is exactly T.
// 4. Coverage: in a statement list that every thread of the block runs
//    (the kernel's body, or the body of a uniform loop in one, with no
//    `break` or `continue` out of it; the kernel has no `return`), a
//    top-level `t[T] = ...` (or an if/else whose branches both do that at
//    their top level, with the same T), then a top-level sync_threads():
//    every access of t nested in a later statement of the list is Covered.
//    Whether T covers the whole array is the launch's question
//    (CheckElision.cpp asks it of the block's size).
//
//===----------------------------------------------------------------------===//

#include "SharedForms.h"

#include "KernelAnalysis.h"

#include "gridjit/IR/AST.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/Metadata.h"
#include "llvm/Support/Casting.h"

#include <optional>

using namespace gridjit;
using namespace gridjit::host;

namespace {

// Bounds that keep every form's value, and every partial sum of it, far
// inside i32 for blocks of up to 1024 threads in each dimension.
constexpr int64_t MaxCoef = int64_t(1) << 16, MaxRange = int64_t(1) << 24;

bool isSyncThreads(const Stmt &S) {
  const auto *E = llvm::dyn_cast<ExprStmt>(&S);
  const auto *C = E ? llvm::dyn_cast<CallExpr>(E->E.get()) : nullptr;
  return C && C->Builtin == BuiltinFunc::SyncThreads;
}

/// The last statement of \p B is sync_threads().
bool endsWithBarrier(const BlockStmt *B) {
  return B && !B->Body.empty() && isSyncThreads(*B->Body.back());
}

class Finder {
public:
  Finder(const Module &M, const FunctionDecl &K) : K(K), Plan(*K.Body, /*IsKernel=*/true, Sync) {
    for (const auto &D : M.Decls)
      if (const auto *C = llvm::dyn_cast<ConstDecl>(D.get()))
        if (C->Var.Storage == StorageKind::Const && C->Value && C->Var.Ty.isInteger())
          Consts[&C->Var] = int64_t(C->Value->Int);
    for (const auto &P : K.Params)
      if (P->Ty.isSignedInteger() && !P->Mutable)
        SymVars.insert(P.get());
  }

  SharedForms run() {
    collect(*K.Body);
    // Drop the arrays with an access that has no form.
    for (const auto &[Loc, A] : Found)
      if (!A.Form)
        Bad.insert(A.Array);
    if (!containsReturn(*K.Body))
      cover(*K.Body, CoverMap());
    SharedForms R;
    R.Symbols = Symbols;
    for (auto &[Loc, A] : Found) {
      if (Bad.contains(A.Array) || !Arrays.contains(A.Array))
        continue;
      SharedForm F = *A.Form;
      if (auto It = Covers.find(Loc); It != Covers.end()) {
        F.Covered = true;
        std::copy(std::begin(It->second.C), std::end(It->second.C), F.CoverC);
      }
      R.ByLoc[Loc] = {A.Array, F};
    }
    return R;
  }

private:
  using LocKey = std::pair<unsigned, unsigned>;
  struct Found1 {
    const VarDecl *Array = nullptr;
    std::optional<SharedForm> Form;
  };

  static LocKey key(const Expr &E) {
    SourceLoc L = startLoc(&E);
    return {L.Line, L.Col};
  }

  /// The candidate array \p E names (its base), if any.
  const VarDecl *arrayOf(const Expr *E) const {
    const auto *N = llvm::dyn_cast_or_null<NameExpr>(E);
    return N && N->Decl && Arrays.contains(N->Decl) ? N->Decl : nullptr;
  }

  // The declarations, `let`s, loops and symbols, then every use.
  void collect(const Stmt &S) {
    if (const auto *D = llvm::dyn_cast<DeclStmt>(&S)) {
      const VarDecl &V = D->Var;
      if (V.Storage == StorageKind::Let && !V.Mutable && D->Init && !D->CopyOf)
        Lets[&V] = D->Init.get();
      if (V.Storage == StorageKind::Shared && V.Ty.isArray() && V.ArraySize &&
          V.InnerArraySizes.empty() && V.Ty.getArrayElementType().isScalar())
        Arrays.insert(&V);
    } else if (const auto *F = llvm::dyn_cast<ForStmt>(&S)) {
      std::optional<int64_t> B = constant(F->Begin.get()), E = constant(F->End.get());
      bool Unit = !F->Step || constant(F->Step.get()) == int64_t(1);
      if (Sync.hasSync(*F)) {
        if (barrierLoop(*F->Body, &F->Index) && F->Index.Ty.isSignedInteger())
          SymVars.insert(&F->Index);
      } else if (B && E && Unit && *B >= -MaxRange && *E <= MaxRange) {
        Ranges[&F->Index] = {*B, std::max(*B, *E - 1)};
      }
    } else if (const auto *W = llvm::dyn_cast<WhileStmt>(&S)) {
      const auto *Init = llvm::dyn_cast_or_null<DeclStmt>(W->Init.get());
      if (Init && Sync.hasSync(*W) && barrierLoop(*W->Body, &Init->Var) &&
          Init->Var.Ty.isSignedInteger())
        SymVars.insert(&Init->Var);
    }
    forEachPart(
        S, [&](const Expr &E) { visit(E); },
        [&](const Stmt &C) {
          if (const auto *I = llvm::dyn_cast<IfStmt>(&C))
            return visitIf(*I);
          collect(C);
        });
  }

  /// The index of a loop whose body \p Body ends with sync_threads(),
  /// leaves no other way and does not change it, the loop being uniform:
  /// every thread of the block sees one value of it between two barriers.
  bool barrierLoop(const BlockStmt &Body, const VarDecl *V) const {
    return endsWithBarrier(&Body) && !leavesStmt(Body, /*CountReturns=*/true) &&
           !mayChange(Body, V) && Plan.getStorage(V) == Storage::Uniform;
  }

  void visitIf(const IfStmt &I) {
    visit(*I.Cond);
    std::vector<std::pair<SharedForm, unsigned>> G;
    guards(*I.Cond, G);
    Guards.push_back(std::move(G));
    if (I.Then)
      collect(*I.Then);
    Guards.pop_back();
    if (I.Else)
      collect(*I.Else);
  }

  /// The `T < s` terms of condition \p E.
  void guards(const Expr &E, std::vector<std::pair<SharedForm, unsigned>> &Out) {
    const auto *B = llvm::dyn_cast<BinaryExpr>(&E);
    if (!B)
      return;
    if (B->Op == BinaryOp::LAnd) {
      guards(*B->LHS, Out);
      guards(*B->RHS, Out);
      return;
    }
    if (B->Op != BinaryOp::Lt)
      return;
    std::optional<SharedForm> L = form(B->LHS.get()), R = form(B->RHS.get());
    if (L && R && L->pureThread() && R->Sym && R->Lo == 0 && R->Hi == 0 && !R->C[0] && !R->C[1] &&
        !R->C[2])
      Out.push_back({*L, R->Sym});
  }

  /// Every use of a candidate in \p E.
  void visit(const Expr &E) {
    switch (E.getKind()) {
    case Expr::Name:
      if (const VarDecl *A = arrayOf(&E))
        Bad.insert(A); // the array itself, not an element
      return;
    case Expr::Index: {
      const auto &X = llvm::cast<IndexExpr>(E);
      if (const VarDecl *A = arrayOf(X.Base.get())) {
        Found1 &F = Found[key(X)];
        if (F.Array && F.Array != A)
          Bad.insert(F.Array);
        F.Array = A;
        F.Form = form(X.Idx.get());
        if (F.Form && F.Form->pureThread())
          for (const auto &Level : Guards)
            for (const auto &[T, S] : Level)
              if (T.sameThreadPart(*F.Form))
                F.Form->Guard = S;
        visit(*X.Idx);
        return;
      }
      break;
    }
    case Expr::Unary: {
      const auto &U = llvm::cast<UnaryExpr>(E);
      if (U.Op == UnaryOp::AddrOf)
        if (const auto *X = llvm::dyn_cast<IndexExpr>(U.Operand.get()))
          if (const VarDecl *A = arrayOf(X->Base.get()))
            Bad.insert(A);
      break;
    }
    default:
      break;
    }
    forEachChild(E, [&](const Expr &C) { visit(C); });
  }

  std::optional<int64_t> constant(const Expr *E) const {
    std::optional<SharedForm> F = form(E);
    if (F && !F->Sym && !F->C[0] && !F->C[1] && !F->C[2] && F->Lo == F->Hi)
      return F->Lo;
    return std::nullopt;
  }

  static bool inRange(const SharedForm &F) {
    for (int64_t C : F.C)
      if (C < -MaxCoef || C > MaxCoef)
        return false;
    return F.Lo >= -MaxRange && F.Hi <= MaxRange;
  }

  /// \p E as a form, or none.
  std::optional<SharedForm> form(const Expr *E, unsigned Depth = 0) const {
    // (At least 32 bits: no value of a form, or of a part of one, wraps.)
    if (!E || Depth > 64 || !E->Ty.isInteger() || E->Ty.getSizeInBytes() < 4)
      return std::nullopt;
    SharedForm F;
    switch (E->getKind()) {
    case Expr::IntLit: {
      int64_t V = int64_t(llvm::cast<IntLitExpr>(E)->Value);
      if (V < -MaxRange || V > MaxRange)
        return std::nullopt;
      F.Lo = F.Hi = V;
      return F;
    }
    case Expr::Member: {
      const auto &M = *llvm::cast<MemberExpr>(E);
      const auto *N = llvm::dyn_cast<NameExpr>(M.Base.get());
      if (M.IsField || !N || N->Builtin != BuiltinValue::ThreadIdx || M.Field > 2)
        return std::nullopt;
      F.C[M.Field] = 1;
      return F;
    }
    case Expr::Name: {
      const VarDecl *V = llvm::cast<NameExpr>(E)->Decl;
      if (!V)
        return std::nullopt;
      if (auto It = Consts.find(V); It != Consts.end()) {
        if (It->second < -MaxRange || It->second > MaxRange)
          return std::nullopt;
        F.Lo = F.Hi = It->second;
        return F;
      }
      if (auto It = Lets.find(V); It != Lets.end())
        return form(It->second, Depth + 1);
      if (auto It = Ranges.find(V); It != Ranges.end()) {
        F.Lo = It->second.first;
        F.Hi = It->second.second;
        return F;
      }
      if (SymVars.contains(V)) {
        F.Sym = symbol(V);
        return F;
      }
      return std::nullopt;
    }
    case Expr::Cast: {
      const auto &C = *llvm::cast<CastExpr>(E);
      std::optional<SharedForm> O = form(C.Operand.get(), Depth + 1);
      // A widening of a value known to be small and not negative.
      if (!O || O->Sym || !C.DestTy.isInteger() ||
          C.DestTy.getSizeInBytes() < C.Operand->Ty.getSizeInBytes() || O->Lo < 0 || O->C[0] < 0 ||
          O->C[1] < 0 || O->C[2] < 0)
        return std::nullopt;
      return O;
    }
    case Expr::Unary: {
      const auto &U = *llvm::cast<UnaryExpr>(E);
      std::optional<SharedForm> O = form(U.Operand.get(), Depth + 1);
      if (U.Op != UnaryOp::Neg || !O || O->Sym)
        return std::nullopt;
      return scale(*O, -1);
    }
    case Expr::Binary: {
      const auto &B = *llvm::cast<BinaryExpr>(E);
      std::optional<SharedForm> L = form(B.LHS.get(), Depth + 1);
      std::optional<SharedForm> R = form(B.RHS.get(), Depth + 1);
      if (!L || !R)
        return std::nullopt;
      auto Const = [](const SharedForm &X) -> std::optional<int64_t> {
        if (X.Sym || X.C[0] || X.C[1] || X.C[2] || X.Lo != X.Hi)
          return std::nullopt;
        return X.Lo;
      };
      switch (B.Op) {
      case BinaryOp::Add:
        return add(*L, *R);
      case BinaryOp::Sub:
        if (R->Sym)
          return std::nullopt;
        return add(*L, scale(*R, -1));
      case BinaryOp::Mul:
        if (std::optional<int64_t> K = Const(*R); K && (!L->Sym || *K == 1))
          return checked(scale(*L, *K));
        if (std::optional<int64_t> K = Const(*L); K && (!R->Sym || *K == 1))
          return checked(scale(*R, *K));
        return std::nullopt;
      case BinaryOp::Shl:
        if (std::optional<int64_t> K = Const(*R); K && *K >= 0 && *K < 16 && !L->Sym)
          return checked(scale(*L, int64_t(1) << *K));
        return std::nullopt;
      default:
        return std::nullopt;
      }
    }
    default:
      return std::nullopt;
    }
  }

  static SharedForm scale(SharedForm F, int64_t K) {
    for (int64_t &C : F.C)
      C *= K;
    F.Lo *= K;
    F.Hi *= K;
    if (K < 0)
      std::swap(F.Lo, F.Hi);
    return F;
  }
  static std::optional<SharedForm> checked(const SharedForm &F) {
    return inRange(F) ? std::optional<SharedForm>(F) : std::nullopt;
  }
  static std::optional<SharedForm> add(SharedForm L, const SharedForm &R) {
    if (L.Sym && R.Sym)
      return std::nullopt;
    for (unsigned I = 0; I < 3; ++I)
      L.C[I] += R.C[I];
    L.Lo += R.Lo;
    L.Hi += R.Hi;
    L.Sym = L.Sym ? L.Sym : R.Sym;
    return checked(L);
  }
  unsigned symbol(const VarDecl *V) const {
    for (unsigned I = 0; I < Symbols.size(); ++I)
      if (Symbols[I] == V)
        return I + 1;
    Symbols.push_back(V);
    return unsigned(Symbols.size());
  }

  /// A covering store of \p S at its top level: the array and its T.
  std::optional<std::pair<const VarDecl *, SharedForm>> coveringStore(const Stmt &S) const {
    if (const auto *A = llvm::dyn_cast<AssignStmt>(&S)) {
      const auto *X = llvm::dyn_cast<IndexExpr>(A->Target.get());
      const VarDecl *Arr = X ? arrayOf(X->Base.get()) : nullptr;
      if (A->Op != AssignOp::Assign || !Arr)
        return std::nullopt;
      auto It = Found.find(key(*X));
      if (It == Found.end() || !It->second.Form || !It->second.Form->pureThread())
        return std::nullopt;
      return std::make_pair(Arr, *It->second.Form);
    }
    return std::nullopt;
  }
  /// The arrays both branches of if/else \p I store at their top level
  /// with the same T.
  void coveringIf(const IfStmt &I, std::vector<std::pair<const VarDecl *, SharedForm>> &Out) const {
    const auto *Else = llvm::dyn_cast_or_null<BlockStmt>(I.Else.get());
    if (!I.Then || !Else)
      return;
    for (const StmtPtr &T : I.Then->Body)
      if (auto A = coveringStore(*T))
        for (const StmtPtr &E : Else->Body)
          if (auto B = coveringStore(*E))
            if (A->first == B->first && A->second.sameThreadPart(B->second))
              Out.push_back(*A);
  }

  using CoverMap = llvm::DenseMap<const VarDecl *, SharedForm>;

  /// Statement list \p B, which every thread runs, with \p In covered.
  void cover(const BlockStmt &B, CoverMap In) {
    CoverMap Pending;
    for (const StmtPtr &S : B.Body) {
      // This statement's accesses see what was covered before it.
      markCovered(*S, In);
      if (isSyncThreads(*S)) {
        for (auto &[A, F] : Pending)
          In[A] = F;
        Pending.clear();
        continue;
      }
      std::vector<std::pair<const VarDecl *, SharedForm>> Stores;
      if (auto C = coveringStore(*S))
        Stores.push_back(*C);
      else if (const auto *I = llvm::dyn_cast<IfStmt>(S.get()))
        coveringIf(*I, Stores);
      for (auto &[A, F] : Stores)
        Pending[A] = F;
      // A uniform loop's body: every thread runs each iteration.
      const BlockStmt *Body = nullptr;
      if (const auto *F = llvm::dyn_cast<ForStmt>(S.get());
          F && Sync.hasSync(*F) && Plan.isUniform(*F->Begin) && Plan.isUniform(*F->End) &&
          (!F->Step || Plan.isUniform(*F->Step)))
        Body = F->Body.get();
      else if (const auto *W = llvm::dyn_cast<WhileStmt>(S.get());
               W && Sync.hasSync(*W) && Plan.isUniform(*W->Cond))
        Body = W->Body.get();
      if (Body && !leavesStmt(*Body, /*CountReturns=*/true))
        cover(*Body, In);
    }
  }

  /// Records \p In for every access in \p S.
  void markCovered(const Stmt &S, const CoverMap &In) {
    if (In.empty())
      return;
    anyExprIn(S, [&](const Expr &E) {
      if (const auto *X = llvm::dyn_cast<IndexExpr>(&E))
        if (const VarDecl *A = arrayOf(X->Base.get()))
          if (auto It = In.find(A); It != In.end())
            Covers.try_emplace(key(*X), It->second);
      return false;
    });
  }

  const FunctionDecl &K;
  SyncInfo Sync;
  BodyPlan Plan;
  llvm::DenseMap<const VarDecl *, int64_t> Consts;
  llvm::DenseMap<const VarDecl *, const Expr *> Lets;
  llvm::DenseMap<const VarDecl *, std::pair<int64_t, int64_t>> Ranges;
  llvm::DenseSet<const VarDecl *> SymVars, Arrays, Bad;
  mutable std::vector<const VarDecl *> Symbols;
  std::vector<std::vector<std::pair<SharedForm, unsigned>>> Guards;
  std::map<LocKey, Found1> Found;
  std::map<LocKey, SharedForm> Covers;
};

} // namespace

SharedForms gridjit::host::sharedForms(const Module &M, const FunctionDecl &Kernel) {
  if (!Kernel.Body)
    return {};
  return Finder(M, Kernel).run();
}

// The fields in order: C[0..2], Lo, Hi, Sym, Guard, Covered, CoverC[0..2].
llvm::MDNode *gridjit::host::formMetadata(llvm::LLVMContext &Ctx, const SharedForm &F) {
  int64_t Fields[] = {F.C[0],  F.C[1],    F.C[2],      F.Lo,        F.Hi,       F.Sym,
                      F.Guard, F.Covered, F.CoverC[0], F.CoverC[1], F.CoverC[2]};
  std::vector<llvm::Metadata *> Ops;
  for (int64_t V : Fields)
    Ops.push_back(llvm::ConstantAsMetadata::get(
        llvm::ConstantInt::get(llvm::Type::getInt64Ty(Ctx), uint64_t(V))));
  return llvm::MDTuple::get(Ctx, Ops);
}

std::optional<SharedForm> gridjit::host::formFromMetadata(const llvm::MDNode *MD) {
  if (!MD || MD->getNumOperands() != 11)
    return std::nullopt;
  int64_t V[11];
  for (unsigned I = 0; I < 11; ++I) {
    auto *C = llvm::mdconst::dyn_extract_or_null<llvm::ConstantInt>(MD->getOperand(I));
    if (!C)
      return std::nullopt;
    V[I] = C->getSExtValue();
  }
  SharedForm F;
  std::copy(V, V + 3, F.C);
  F.Lo = V[3];
  F.Hi = V[4];
  F.Sym = unsigned(V[5]);
  F.Guard = unsigned(V[6]);
  F.Covered = V[7] != 0;
  std::copy(V + 8, V + 11, F.CoverC);
  return F;
}
