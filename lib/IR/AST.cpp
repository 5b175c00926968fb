//===- AST.cpp - The KIR module -------------------------------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/AST.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Casting.h"

using namespace gridjit;

// Out-of-line virtual destructors anchor the vtables in this file.
Expr::~Expr() = default;
Stmt::~Stmt() = default;
Decl::~Decl() = default;

//===----------------------------------------------------------------------===//
// Destruction without recursion
//===----------------------------------------------------------------------===//

namespace {
/// Nodes whose children have yet to be taken out before they die.
struct Orphans {
  std::vector<ExprPtr> Exprs;
  std::vector<StmtPtr> Stmts;

  void add(ExprPtr &E) {
    if (E)
      Exprs.push_back(std::move(E));
  }
  void add(StmtPtr &S) {
    if (S)
      Stmts.push_back(std::move(S));
  }
  void add(BlockPtr &B) {
    if (B)
      Stmts.push_back(std::move(B));
  }

  /// Moves \p E's children here, leaving it a leaf.
  void takeFrom(Expr &E) {
    if (auto *U = llvm::dyn_cast<UnaryExpr>(&E)) {
      add(U->Operand);
    } else if (auto *B = llvm::dyn_cast<BinaryExpr>(&E)) {
      add(B->LHS);
      add(B->RHS);
    } else if (auto *Q = llvm::dyn_cast<CondExpr>(&E)) {
      add(Q->C);
      add(Q->T);
      add(Q->F);
    } else if (auto *C = llvm::dyn_cast<CastExpr>(&E)) {
      add(C->Operand);
    } else if (auto *Call = llvm::dyn_cast<CallExpr>(&E)) {
      for (ExprPtr &A : Call->Args)
        add(A);
      Call->Args.clear();
    } else if (auto *I = llvm::dyn_cast<IndexExpr>(&E)) {
      add(I->Base);
      add(I->Idx);
    } else if (auto *M = llvm::dyn_cast<MemberExpr>(&E)) {
      add(M->Base);
    }
  }

  /// Moves \p S's children here, leaving it a leaf.
  void takeFrom(Stmt &S) {
    if (auto *B = llvm::dyn_cast<BlockStmt>(&S)) {
      for (StmtPtr &Child : B->Body)
        add(Child);
      B->Body.clear();
    } else if (auto *D = llvm::dyn_cast<DeclStmt>(&S)) {
      add(D->Init);
      add(D->Var.ArraySize);
      for (ExprPtr &Size : D->Var.InnerArraySizes)
        add(Size);
    } else if (auto *A = llvm::dyn_cast<AssignStmt>(&S)) {
      add(A->Target);
      add(A->Value);
    } else if (auto *If = llvm::dyn_cast<IfStmt>(&S)) {
      add(If->Cond);
      add(If->Then);
      add(If->Else);
    } else if (auto *W = llvm::dyn_cast<WhileStmt>(&S)) {
      add(W->Init);
      add(W->Cond);
      add(W->Body);
      add(W->Update);
    } else if (auto *F = llvm::dyn_cast<ForStmt>(&S)) {
      add(F->Begin);
      add(F->End);
      add(F->Step);
      add(F->Body);
    } else if (auto *R = llvm::dyn_cast<ReturnStmt>(&S)) {
      add(R->Value);
    } else if (auto *ES = llvm::dyn_cast<ExprStmt>(&S)) {
      add(ES->E);
    }
  }

  /// Takes the children out of every node here, and theirs, destroying
  /// each node once it is a leaf.
  void drain() {
    while (!Exprs.empty() || !Stmts.empty()) {
      if (!Exprs.empty()) {
        ExprPtr E = std::move(Exprs.back());
        Exprs.pop_back();
        takeFrom(*E);
      } else {
        StmtPtr S = std::move(Stmts.back());
        Stmts.pop_back();
        takeFrom(*S);
      }
    }
  }
};

/// Destroys \p N's subtree without recursion: N's children are taken out
/// (N is about to die) and destroyed as leaves. A node without children
/// allocates nothing here.
template <typename Node> void releaseChildren(Node &N) {
  Orphans O;
  O.takeFrom(N);
  O.drain();
}
} // namespace

UnaryExpr::~UnaryExpr() { releaseChildren<Expr>(*this); }
BinaryExpr::~BinaryExpr() { releaseChildren<Expr>(*this); }
CondExpr::~CondExpr() { releaseChildren<Expr>(*this); }
CastExpr::~CastExpr() { releaseChildren<Expr>(*this); }
CallExpr::~CallExpr() { releaseChildren<Expr>(*this); }
IndexExpr::~IndexExpr() { releaseChildren<Expr>(*this); }
MemberExpr::~MemberExpr() { releaseChildren<Expr>(*this); }
BlockStmt::~BlockStmt() { releaseChildren<Stmt>(*this); }
DeclStmt::~DeclStmt() { releaseChildren<Stmt>(*this); }
AssignStmt::~AssignStmt() { releaseChildren<Stmt>(*this); }
IfStmt::~IfStmt() { releaseChildren<Stmt>(*this); }
WhileStmt::~WhileStmt() { releaseChildren<Stmt>(*this); }
ForStmt::~ForStmt() { releaseChildren<Stmt>(*this); }
ReturnStmt::~ReturnStmt() { releaseChildren<Stmt>(*this); }
ExprStmt::~ExprStmt() { releaseChildren<Stmt>(*this); }

const FunctionDecl *Module::getFunction(std::string_view FnName) const {
  for (const auto &D : Decls)
    if (const auto *F = llvm::dyn_cast<FunctionDecl>(D.get()))
      if (F->Name == FnName)
        return F;
  return nullptr;
}

std::vector<const FunctionDecl *> Module::getKernels() const {
  std::vector<const FunctionDecl *> Kernels;
  for (const auto &D : Decls)
    if (const auto *F = llvm::dyn_cast<FunctionDecl>(D.get()))
      if (F->IsKernel)
        Kernels.push_back(F);
  return Kernels;
}

std::string_view gridjit::spelling(ParamMode M) {
  switch (M) {
  case ParamMode::In:
    return "";
  case ParamMode::Out:
    return "out";
  case ParamMode::InOut:
    return "inout";
  }
  return "?";
}

bool CallExpr::hasOutArgs() const {
  return llvm::any_of(ArgModes, [](ParamMode M) { return M != ParamMode::In; });
}

std::string_view gridjit::spelling(UnaryOp Op) {
  switch (Op) {
  case UnaryOp::Neg:
    return "-";
  case UnaryOp::Not:
    return "!";
  case UnaryOp::BitNot:
    return "~";
  case UnaryOp::AddrOf:
    return "&";
  }
  return "?";
}

std::string_view gridjit::spelling(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Add:
    return "+";
  case BinaryOp::Sub:
    return "-";
  case BinaryOp::Mul:
    return "*";
  case BinaryOp::Div:
    return "/";
  case BinaryOp::Rem:
    return "%";
  case BinaryOp::Shl:
    return "<<";
  case BinaryOp::Shr:
    return ">>";
  case BinaryOp::And:
    return "&";
  case BinaryOp::Or:
    return "|";
  case BinaryOp::Xor:
    return "^";
  case BinaryOp::LAnd:
    return "&&";
  case BinaryOp::LOr:
    return "||";
  case BinaryOp::Eq:
    return "==";
  case BinaryOp::Ne:
    return "!=";
  case BinaryOp::Lt:
    return "<";
  case BinaryOp::Le:
    return "<=";
  case BinaryOp::Gt:
    return ">";
  case BinaryOp::Ge:
    return ">=";
  }
  return "?";
}

std::string_view gridjit::spelling(AssignOp Op) {
  switch (Op) {
  case AssignOp::Assign:
    return "=";
  case AssignOp::Add:
    return "+=";
  case AssignOp::Sub:
    return "-=";
  case AssignOp::Mul:
    return "*=";
  case AssignOp::Div:
    return "/=";
  case AssignOp::Rem:
    return "%=";
  case AssignOp::And:
    return "&=";
  case AssignOp::Or:
    return "|=";
  case AssignOp::Xor:
    return "^=";
  case AssignOp::Shl:
    return "<<=";
  case AssignOp::Shr:
    return ">>=";
  }
  return "?=";
}

SourceLoc gridjit::startLoc(const Expr *E) {
  while (E) {
    const Expr *Inner = nullptr;
    if (const auto *B = llvm::dyn_cast<BinaryExpr>(E))
      Inner = B->LHS.get();
    else if (const auto *Q = llvm::dyn_cast<CondExpr>(E))
      Inner = Q->C.get();
    else if (const auto *C = llvm::dyn_cast<CastExpr>(E))
      Inner = C->Operand.get();
    else if (const auto *I = llvm::dyn_cast<IndexExpr>(E))
      Inner = I->Base.get();
    else if (const auto *Mem = llvm::dyn_cast<MemberExpr>(E))
      Inner = Mem->Base.get();
    if (!Inner)
      return E->getLoc();
    E = Inner;
  }
  return SourceLoc();
}
