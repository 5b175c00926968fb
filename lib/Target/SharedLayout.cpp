//===- SharedLayout.cpp - Where a kernel's shared arrays live -------------===//
//
// Part of gridjit. See SharedLayout.h.
//
//===----------------------------------------------------------------------===//

#include "SharedLayout.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/MathExtras.h"

using namespace gridjit;

/// Calls \p F on every `shared` declaration in \p S, in source order.
static void forEachShared(const Stmt &S, llvm::function_ref<void(const VarDecl &)> F) {
  auto Visit = [&](const Stmt *Child) {
    if (Child)
      forEachShared(*Child, F);
  };
  switch (S.getKind()) {
  case Stmt::Decl:
    if (const VarDecl &V = llvm::cast<DeclStmt>(S).Var; V.Storage == StorageKind::Shared)
      F(V);
    return;
  case Stmt::Block:
    for (const StmtPtr &C : llvm::cast<BlockStmt>(S).Body)
      Visit(C.get());
    return;
  case Stmt::If:
    Visit(llvm::cast<IfStmt>(S).Then.get());
    Visit(llvm::cast<IfStmt>(S).Else.get());
    return;
  case Stmt::While:
    Visit(llvm::cast<WhileStmt>(S).Body.get());
    return;
  case Stmt::For:
    Visit(llvm::cast<ForStmt>(S).Body.get());
    return;
  default:
    return;
  }
}

SharedLayout gridjit::layoutShared(const FunctionDecl &K) {
  SharedLayout L;
  if (!K.Body)
    return L;
  forEachShared(*K.Body, [&](const VarDecl &V) { L.Arrays.push_back({&V, 0}); });
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
