//===- PrivateParams.cpp - Parameters each thread reaches only at its own index ===//
//
// Part of gridjit. For checked code (CheckElision.cpp): the pointer
// parameters of a kernel that it reaches only as `p[i]` (or `&p[i]` as
// the address of an atomic) where i is the thread's global index in a
// one-dimensional launch, `block_idx.x * block_dim.x + thread_idx.x`, or
// a grid-stride loop's index starting there and stepping by the whole
// grid, `block_dim.x * grid_dim.x` (either through `let`s). In a launch
// whose grid and blocks are one-dimensional, with fewer than 2^31
// threads, element e of such a parameter is reached by thread e mod T (T
// the threads of the grid) alone: no two threads reach the same bytes.
//
//===----------------------------------------------------------------------===//

#include "PrivateParams.h"

#include "KernelAnalysis.h"

#include "gridjit/IR/AST.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/Support/Casting.h"

#include <optional>

using namespace gridjit;

namespace {

class Finder {
public:
  explicit Finder(const FunctionDecl &K) : K(K), Private(K.Params.size()) {
    for (size_t I = 0; I < K.Params.size(); ++I) {
      const VarDecl &P = *K.Params[I];
      if (P.Ty.isPointer() && !P.Mutable) {
        Private.set(I);
        Index[&P] = unsigned(I);
      }
    }
  }

  llvm::SmallBitVector run() {
    if (K.Body) {
      collect(*K.Body);
      visit(*K.Body);
    }
    return Private;
  }

private:
  // The `let`s and the loop indices, by declaration.
  void collect(const Stmt &S) {
    if (const auto *D = llvm::dyn_cast<DeclStmt>(&S)) {
      if (D->Var.Storage == StorageKind::Let && !D->Var.Mutable && D->Init && !D->CopyOf)
        Lets[&D->Var] = D->Init.get();
    } else if (const auto *F = llvm::dyn_cast<ForStmt>(&S)) {
      Loops[&F->Index] = F;
    }
    host::forEachPart(S, [](const Expr &) {}, [&](const Stmt &C) { collect(C); });
  }

  static bool isBuiltin(const Expr *E, BuiltinValue B, unsigned Field) {
    const auto *M = llvm::dyn_cast<MemberExpr>(E);
    if (!M || M->IsField || M->Field != Field)
      return false;
    const auto *N = llvm::dyn_cast<NameExpr>(M->Base.get());
    return N && N->Builtin == B;
  }
  static bool isProduct(const Expr *E, BuiltinValue A, BuiltinValue B) {
    const auto *Mul = llvm::dyn_cast<BinaryExpr>(E);
    return Mul && Mul->Op == BinaryOp::Mul &&
           ((isBuiltin(Mul->LHS.get(), A, 0) && isBuiltin(Mul->RHS.get(), B, 0)) ||
            (isBuiltin(Mul->LHS.get(), B, 0) && isBuiltin(Mul->RHS.get(), A, 0)));
  }
  /// \p E through the `let`s it names.
  const Expr *resolve(const Expr *E) const {
    for (unsigned Depth = 0; Depth < 64; ++Depth) {
      const auto *N = llvm::dyn_cast<NameExpr>(E);
      auto It = N && N->Decl ? Lets.find(N->Decl) : Lets.end();
      if (It == Lets.end())
        return E;
      E = It->second;
    }
    return E;
  }
  /// `block_dim.x * grid_dim.x`, the threads of a one-dimensional grid.
  bool isGridStride(const Expr *E) const {
    return isProduct(resolve(E), BuiltinValue::BlockDim, BuiltinValue::GridDim);
  }
  /// A signed integer that is the thread's global index, or a grid-stride
  /// loop's index from there.
  bool isGlobalIndex(const Expr *E, unsigned Depth = 0) const {
    if (!E || Depth > 64 || !E->Ty.isSignedInteger())
      return false;
    if (const auto *C = llvm::dyn_cast<CastExpr>(E)) // a widening of a signed index
      return C->DestTy.isSignedInteger() && C->Operand &&
             C->DestTy.getSizeInBytes() >= C->Operand->Ty.getSizeInBytes() &&
             isGlobalIndex(C->Operand.get(), Depth + 1);
    if (const auto *N = llvm::dyn_cast<NameExpr>(E)) {
      if (auto It = N->Decl ? Lets.find(N->Decl) : Lets.end(); It != Lets.end())
        return isGlobalIndex(It->second, Depth + 1);
      if (auto It = N->Decl ? Loops.find(N->Decl) : Loops.end(); It != Loops.end())
        return It->second->Step && isGridStride(It->second->Step.get()) &&
               isGlobalIndex(It->second->Begin.get(), Depth + 1);
      return false;
    }
    const auto *Add = llvm::dyn_cast<BinaryExpr>(E);
    if (!Add || Add->Op != BinaryOp::Add)
      return false;
    auto IsBase = [](const Expr *X) {
      return isProduct(X, BuiltinValue::BlockIdx, BuiltinValue::BlockDim);
    };
    return (IsBase(Add->LHS.get()) && isBuiltin(Add->RHS.get(), BuiltinValue::ThreadIdx, 0)) ||
           (IsBase(Add->RHS.get()) && isBuiltin(Add->LHS.get(), BuiltinValue::ThreadIdx, 0));
  }

  /// The parameter \p E names, if it is one of the candidates.
  std::optional<unsigned> param(const Expr *E) const {
    const auto *N = llvm::dyn_cast_or_null<NameExpr>(E);
    auto It = N && N->Decl ? Index.find(N->Decl) : Index.end();
    return It == Index.end() ? std::nullopt : std::optional<unsigned>(It->second);
  }

  /// `p[i]`: p stays private when i is the global index.
  bool visitElement(const IndexExpr &X) {
    std::optional<unsigned> P = param(X.Base.get());
    if (!P)
      return false;
    if (!isGlobalIndex(X.Idx.get()))
      Private.reset(*P);
    visit(X.Idx.get());
    return true;
  }

  void visit(const Expr *E) {
    if (!E)
      return;
    switch (E->getKind()) {
    case Expr::Name:
      if (std::optional<unsigned> P = param(E))
        Private.reset(*P); // any other use of the pointer itself
      break;
    case Expr::Index: {
      const auto &X = *static_cast<const IndexExpr *>(E);
      // `p[i][j]`: j may reach past element i (only the buffer's extent
      // bounds it).
      if (const auto *Inner = llvm::dyn_cast<IndexExpr>(X.Base.get()))
        if (std::optional<unsigned> P = param(Inner->Base.get()))
          Private.reset(*P);
      if (!visitElement(X)) {
        visit(X.Base.get());
        visit(X.Idx.get());
      }
      break;
    }
    case Expr::Unary: {
      const auto &U = *static_cast<const UnaryExpr *>(E);
      // `&p[i]` outside an atomic's address: a pointer that may go anywhere.
      if (U.Op == UnaryOp::AddrOf)
        if (const auto *X = llvm::dyn_cast<IndexExpr>(U.Operand.get()))
          if (std::optional<unsigned> P = param(X->Base.get()))
            Private.reset(*P);
      visit(U.Operand.get());
      break;
    }
    case Expr::Call: {
      const auto &C = *static_cast<const CallExpr *>(E);
      bool Atomic = C.Builtin >= BuiltinFunc::AtomicAdd && C.Builtin <= BuiltinFunc::AtomicCas;
      for (size_t I = 0; I < C.Args.size(); ++I) {
        const auto *U = llvm::dyn_cast<UnaryExpr>(C.Args[I].get());
        const auto *X =
            U && U->Op == UnaryOp::AddrOf ? llvm::dyn_cast<IndexExpr>(U->Operand.get()) : nullptr;
        if (Atomic && I == 0 && X && visitElement(*X))
          continue;
        visit(C.Args[I].get());
      }
      break;
    }
    default:
      host::forEachChild(*E, [&](const Expr &C) { visit(&C); });
      break;
    }
  }

  void visit(const Stmt &S) {
    host::forEachPart(S, [&](const Expr &E) { visit(&E); }, [&](const Stmt &C) { visit(C); });
  }

  const FunctionDecl &K;
  llvm::SmallBitVector Private;
  llvm::DenseMap<const VarDecl *, unsigned> Index;
  llvm::DenseMap<const VarDecl *, const Expr *> Lets;
  llvm::DenseMap<const VarDecl *, const ForStmt *> Loops;
};

} // namespace

llvm::SmallBitVector gridjit::host::privateParams(const FunctionDecl &Kernel) {
  return Finder(Kernel).run();
}
