//===- SharedLayout.cpp - Where a kernel's shared arrays live -------------===//
//
// Part of gridjit. See SharedLayout.h.
//
//===----------------------------------------------------------------------===//

#include "SharedLayout.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/MathExtras.h"

using namespace gridjit;

namespace {
/// Visits a function body: every `shared` declaration (OnShared) and every
/// device function called (OnCall), in source order.
struct BodyWalker {
  llvm::function_ref<void(const VarDecl &)> OnShared;
  llvm::function_ref<void(const FunctionDecl &)> OnCall;

  void expr(const Expr *E) {
    if (!E)
      return;
    switch (E->getKind()) {
    case Expr::Call: {
      const auto &C = llvm::cast<CallExpr>(*E);
      for (const ExprPtr &A : C.Args)
        expr(A.get());
      if (C.Fn)
        OnCall(*C.Fn);
      return;
    }
    case Expr::Unary:
      return expr(llvm::cast<UnaryExpr>(*E).Operand.get());
    case Expr::Binary:
      expr(llvm::cast<BinaryExpr>(*E).LHS.get());
      return expr(llvm::cast<BinaryExpr>(*E).RHS.get());
    case Expr::Cond:
      expr(llvm::cast<CondExpr>(*E).C.get());
      expr(llvm::cast<CondExpr>(*E).T.get());
      return expr(llvm::cast<CondExpr>(*E).F.get());
    case Expr::Cast:
      return expr(llvm::cast<CastExpr>(*E).Operand.get());
    case Expr::Index:
      expr(llvm::cast<IndexExpr>(*E).Base.get());
      return expr(llvm::cast<IndexExpr>(*E).Idx.get());
    case Expr::Member:
      return expr(llvm::cast<MemberExpr>(*E).Base.get());
    default:
      return; // literals and names call nothing
    }
  }

  void stmt(const Stmt *S) {
    if (!S)
      return;
    switch (S->getKind()) {
    case Stmt::Decl: {
      const auto &D = llvm::cast<DeclStmt>(*S);
      if (D.Var.Storage == StorageKind::Shared)
        OnShared(D.Var);
      return expr(D.Init.get());
    }
    case Stmt::Assign:
      expr(llvm::cast<AssignStmt>(*S).Target.get());
      return expr(llvm::cast<AssignStmt>(*S).Value.get());
    case Stmt::Block:
      for (const StmtPtr &C : llvm::cast<BlockStmt>(*S).Body)
        stmt(C.get());
      return;
    case Stmt::If:
      expr(llvm::cast<IfStmt>(*S).Cond.get());
      stmt(llvm::cast<IfStmt>(*S).Then.get());
      return stmt(llvm::cast<IfStmt>(*S).Else.get());
    case Stmt::While: {
      const auto &W = llvm::cast<WhileStmt>(*S);
      stmt(W.Init.get());
      expr(W.Cond.get());
      stmt(W.Body.get());
      return stmt(W.Update.get());
    }
    case Stmt::For: {
      const auto &F = llvm::cast<ForStmt>(*S);
      expr(F.Begin.get());
      expr(F.End.get());
      expr(F.Step.get());
      return stmt(F.Body.get());
    }
    case Stmt::Return:
      return expr(llvm::cast<ReturnStmt>(*S).Value.get());
    case Stmt::ExprS:
      return expr(llvm::cast<ExprStmt>(*S).E.get());
    default:
      return;
    }
  }
};
} // namespace

void gridjit::forEachOwnShared(const FunctionDecl &F,
                               llvm::function_ref<void(const VarDecl &)> OnShared) {
  if (F.Body)
    BodyWalker{OnShared, [](const FunctionDecl &) {}}.stmt(F.Body.get());
}

SharedLayout gridjit::layoutShared(const FunctionDecl &K) {
  SharedLayout L;
  // The kernel's own declarations, then those of each device function it
  // reaches, once per function, in the order the calls are first met
  // (depth first: a function's callees come after it). KIR has no
  // recursion, so the walk ends.
  llvm::SmallPtrSet<const FunctionDecl *, 8> Seen;
  std::vector<const FunctionDecl *> Work{&K};
  Seen.insert(&K);
  for (size_t I = 0; I < Work.size(); ++I) {
    const FunctionDecl &F = *Work[I];
    if (!F.Body)
      continue;
    std::vector<const FunctionDecl *> Callees;
    BodyWalker{[&](const VarDecl &V) { L.Arrays.push_back({&V, 0}); },
               [&](const FunctionDecl &C) {
                 if (Seen.insert(&C).second)
                   Callees.push_back(&C);
               }}
        .stmt(F.Body.get());
    Work.insert(Work.begin() + I + 1, Callees.begin(), Callees.end());
  }
  uint64_t End = 0;
  for (SharedLayout::Entry &E : L.Arrays) {
    if (isDynamicShared(*E.Var))
      continue; // the dynamic arrays: after all the static ones
    E.Offset = llvm::alignTo(End, SharedLayout::Align);
    End = E.Offset + E.Var->Ty.getSizeInBytes();
  }
  L.StaticBytes = llvm::alignTo(End, SharedLayout::Align);
  for (SharedLayout::Entry &E : L.Arrays)
    if (isDynamicShared(*E.Var)) {
      E.Offset = L.StaticBytes;
      L.UsesDynamic = true;
    }
  return L;
}
