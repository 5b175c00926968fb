//===- AST.cpp - The KIR module -------------------------------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/AST.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;

// Out-of-line virtual destructors anchor the vtables in this file.
Expr::~Expr() = default;
Stmt::~Stmt() = default;
Decl::~Decl() = default;

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
