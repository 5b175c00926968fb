//===- Printer.cpp - Canonical KIR text -----------------------------------===//
//
// Part of gridjit. Prints a Module in the one canonical form that the cache
// key, `jit-run --emit=kir` and the round-trip tests rely on. The rules
// (docs/LangRef.md, "Canonical form") are:
//
//  * Declarations in source order, separated by exactly one blank line; the
//    text ends with a single '\n' (an empty module prints as nothing).
//  * Two spaces of indentation per block level; one statement per line.
//  * Every block opens with ` {` at the end of the line that introduces it
//    and closes with `}` on a line of its own, so an empty block prints as
//    `{` newline `}`. `else` and `else if` follow the `}` on the same line.
//  * Binary operators (and `=`, `+=`, ...) are surrounded by single spaces;
//    unary operators are written without a space; `e as T`; `f(a, b)`;
//    `p[i]`; `thread_idx.x`; ranges are written `a..b` without spaces.
//  * Expressions carry the fewest parentheses that keep the tree: an operand
//    is wrapped only when its precedence is lower than its parent's, or
//    equal and on the right of a left-associative operator, or when both
//    are comparisons (which do not associate); the condition of `c ? a : b`
//    is wrapped when it is itself a conditional, its middle never, its last
//    operand never (`?:` is right-associative). Two exceptions keep tokens
//    apart: `-(-x)` (not `--x`) and `&(&x)` (not the `&&` token).
//  * Integer literals in decimal followed by their suffix, if one was
//    written. Float literals as the shortest decimal that reads back as the
//    same double (as the same float for an `f32`-suffixed value that is
//    exactly a float), always with a '.' in the mantissa: fixed notation for
//    decimal exponents -4..15 (`1.0`, `0.0025`, `100.0`), otherwise
//    `d.ddd` `e` exponent without '+' or leading zeros (`1.0e20`,
//    `2.5e-7`); followed by their suffix, if one was written.
//  * Array sizes as written (the constant expression, not its value), and
//    a declaration's type only when written (`let x = e;` stays so).
//
// The printer reads only the syntactic fields of the AST, so verified and
// unverified modules print the same.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Printer.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include <charconv>
#include <cmath>
#include <cstdlib>

using namespace gridjit;
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;

namespace {

//===----------------------------------------------------------------------===//
// Operator spellings and precedence
//===----------------------------------------------------------------------===//

/// Precedence levels from the spec, lowest first. A larger number binds
/// tighter.
enum Prec : unsigned {
  PrecCond = 1, ///< `c ? a : b` (right-associative)
  PrecLOr,
  PrecLAnd,
  PrecCompare,
  PrecBitOr,
  PrecBitXor,
  PrecBitAnd,
  PrecShift,
  PrecAdd,
  PrecMul,
  PrecCast,
  PrecUnary,
  PrecPostfix, ///< postfix operators and primary expressions
};

unsigned binaryOpPrec(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::LOr:
    return PrecLOr;
  case BinaryOp::LAnd:
    return PrecLAnd;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return PrecCompare;
  case BinaryOp::Or:
    return PrecBitOr;
  case BinaryOp::Xor:
    return PrecBitXor;
  case BinaryOp::And:
    return PrecBitAnd;
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return PrecShift;
  case BinaryOp::Add:
  case BinaryOp::Sub:
    return PrecAdd;
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Rem:
    return PrecMul;
  }
  return PrecPostfix;
}

/// The precedence of the operator at the root of \p E.
unsigned exprPrec(const Expr &E) {
  switch (E.getKind()) {
  case Expr::Binary:
    return binaryOpPrec(cast<BinaryExpr>(E).Op);
  case Expr::Cond:
    return PrecCond;
  case Expr::Cast:
    return PrecCast;
  case Expr::Unary:
    return PrecUnary;
  default:
    return PrecPostfix;
  }
}

/// The first character that printing \p E without parentheses would
/// write, as far as it matters for gluing tokens: '-' or '&' or '!' or '~'
/// for unary operators and negative literals, 0 otherwise.
char firstCharOf(const Expr &E) {
  if (const auto *U = dyn_cast<UnaryExpr>(&E))
    return spelling(U->Op)[0];
  if (const auto *F = dyn_cast<FloatLitExpr>(&E))
    return std::signbit(F->Value) ? '-' : 0;
  return 0;
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// Rewrites the shortest scientific form that std::to_chars produced
/// (`d[.ddd]e[+-]XX`) into KIR's canonical spelling: fixed notation for
/// decimal exponents -4..15 (as Python's repr), scientific otherwise, and
/// always a '.' in the mantissa so that the text lexes as a float.
std::string canonicalFloatText(std::string_view Sci) {
  size_t EPos = Sci.find('e');
  std::string_view Mant = Sci.substr(0, EPos);
  int Exp = std::atoi(std::string(Sci.substr(EPos + 1)).c_str());
  std::string Digits;
  for (char C : Mant)
    if (C != '.')
      Digits += C;
  while (Digits.size() > 1 && Digits.back() == '0')
    Digits.pop_back();

  std::string Out;
  if (Exp >= -4 && Exp < 16) {
    if (Exp < 0) {
      Out = "0." + std::string(-Exp - 1, '0') + Digits;
    } else {
      size_t IntLen = static_cast<size_t>(Exp) + 1;
      if (Digits.size() <= IntLen) {
        Out = Digits + std::string(IntLen - Digits.size(), '0') + ".0";
      } else {
        Out = Digits.substr(0, IntLen) + "." + Digits.substr(IntLen);
      }
    }
    return Out;
  }
  Out = Digits.substr(0, 1) + ".";
  Out += Digits.size() > 1 ? Digits.substr(1) : std::string("0");
  Out += "e" + std::to_string(Exp);
  return Out;
}

/// The canonical text of a float literal's value (without the suffix).
/// Values that KIR cannot spell (infinities, NaN) come out as `1.0e999`,
/// which reads back as infinity and which the verifier rejects as out of
/// range; a negative value (only a hand-made node has one: the parser and
/// the builder make `-` an operator) gets a '-'.
std::string formatFloat(double V, bool AsF32) {
  if (std::isnan(V) || std::isinf(V))
    return std::signbit(V) ? "-1.0e999" : "1.0e999";
  std::string Sign = std::signbit(V) ? "-" : "";
  V = std::fabs(V);
  char Buf[64];
  std::to_chars_result R;
  // A value that is exactly a float and is typed f32 prints with the
  // shortest digits that identify it as a float (`0.1f32`, not
  // `0.10000000149011612f32`).
  if (AsF32 && static_cast<double>(static_cast<float>(V)) == V)
    R = std::to_chars(Buf, Buf + sizeof(Buf), static_cast<float>(V), std::chars_format::scientific);
  else
    R = std::to_chars(Buf, Buf + sizeof(Buf), V, std::chars_format::scientific);
  return Sign + canonicalFloatText(std::string_view(Buf, R.ptr - Buf));
}

//===----------------------------------------------------------------------===//
// The printer
//===----------------------------------------------------------------------===//

class Printer {
public:
  explicit Printer(llvm::raw_ostream &OS) : OS(OS) {}

  void printModule(const Module &M);
  void printExpr(const Expr *E);

private:
  void printDecl(const Decl &D);
  void printFunction(const FunctionDecl &F);
  void printStmt(const Stmt &S);
  void printSimpleStmt(const Stmt &S);
  /// Prints `{`, the statements one level deeper, and `}` at the current
  /// level. The caller has already written what precedes the `{`.
  void printBlockBody(const BlockStmt *B);
  void printIf(const IfStmt &S);
  void printVarType(const VarDecl &V);
  /// A constant table's `[a, b]` / `[[a, b], [c, d]]`.
  void printArrayInit(const ArrayInit &I);
  /// Prints \p E, in parentheses when \p Parens is true.
  void printOperand(const Expr *E, bool Parens);
  void printLiteralSuffix(std::optional<ScalarKind> Suffix);
  void indent() { OS.indent(2 * Depth); }

  llvm::raw_ostream &OS;
  unsigned Depth = 0;
};

void Printer::printModule(const Module &M) {
  bool First = true;
  for (const auto &D : M.Decls) {
    if (!D)
      continue;
    if (!First)
      OS << '\n';
    First = false;
    printDecl(*D);
  }
}

void Printer::printDecl(const Decl &D) {
  if (const auto *C = dyn_cast<ConstDecl>(&D)) {
    OS << (C->isConstantMemory() ? "constant " : "const ") << C->Var.Name << ": ";
    printVarType(C->Var);
    // `const B: i32;` parses (the verifier rejects it): print it as written,
    // like a local declaration without an initializer, so that it parses back.
    if (C->Init) {
      OS << " = ";
      printExpr(C->Init.get());
    } else if (C->Table) {
      OS << " = ";
      printArrayInit(*C->Table);
    }
    OS << ";\n";
    return;
  }
  if (const auto *S = dyn_cast<StructDecl>(&D)) {
    OS << "struct " << S->Agg.Name << " {\n";
    for (const AggregateField &F : S->Agg.Fields)
      OS << "  " << F.Name << ": " << F.Ty.str() << ",\n";
    OS << "}\n";
    return;
  }
  printFunction(cast<FunctionDecl>(D));
}

void Printer::printArrayInit(const ArrayInit &I) {
  OS << '[';
  bool First = true;
  auto Sep = [&] {
    if (!First)
      OS << ", ";
    First = false;
  };
  for (const ArrayInit &Row : I.Rows) {
    Sep();
    printArrayInit(Row);
  }
  for (const ExprPtr &E : I.Elems) {
    Sep();
    printExpr(E.get());
  }
  OS << ']';
}

void Printer::printFunction(const FunctionDecl &F) {
  OS << (F.IsKernel ? "kernel " : "fn ") << F.Name << '(';
  bool First = true;
  for (const auto &P : F.Params) {
    if (!First)
      OS << ", ";
    First = false;
    if (P->Mode != ParamMode::In)
      OS << spelling(P->Mode) << ' ';
    OS << (P->Mutable ? "var " : "") << P->Name << ": ";
    printVarType(*P);
  }
  OS << ')';
  if (!F.ReturnTy.isVoid())
    OS << " -> " << F.ReturnTy.str();
  OS << ' ';
  printBlockBody(F.Body.get());
  OS << '\n';
}

void Printer::printVarType(const VarDecl &V) {
  if (!V.Ty.isArray()) {
    OS << V.Ty.str();
    return;
  }
  // Innermost dimension first, as written: `[[f32; 17]; 16]`; each size as
  // its expression where there is one.
  unsigned Rank = V.Ty.getArrayRank();
  for (unsigned I = 0; I < Rank; ++I)
    OS << '[';
  OS << V.Ty.getPointeeType().str();
  for (unsigned I = Rank; I-- > 0;) {
    if (const Expr *Size = arraySizeExpr(V, I)) {
      OS << "; ";
      printExpr(Size);
    } else if (V.Ty.getArrayDim(I) != 0) {
      OS << "; " << V.Ty.getArrayDim(I);
    }
    OS << ']';
  }
}

void Printer::printBlockBody(const BlockStmt *B) {
  OS << "{\n";
  ++Depth;
  if (B)
    for (const auto &S : B->Body) {
      // A mutable parameter's copy is the verifier's; `var` on the
      // parameter stands for it.
      const auto *D = dyn_cast_or_null<DeclStmt>(S.get());
      if (S && !(D && D->CopyOf))
        printStmt(*S);
    }
  --Depth;
  indent();
  OS << '}';
}

void Printer::printIf(const IfStmt &S) {
  OS << "if ";
  printExpr(S.Cond.get());
  OS << ' ';
  printBlockBody(S.Then.get());
  if (!S.Else)
    return;
  OS << " else ";
  if (const auto *ElseIf = dyn_cast<IfStmt>(S.Else.get())) {
    printIf(*ElseIf);
    return;
  }
  if (const auto *ElseBlock = dyn_cast<BlockStmt>(S.Else.get())) {
    printBlockBody(ElseBlock);
    return;
  }
  // Not something the parser or the builder makes; keep it readable.
  OS << "{\n";
  ++Depth;
  printStmt(*S.Else);
  --Depth;
  indent();
  OS << '}';
}

// A declaration or an assignment without its ';' (also the init and the
// update of a general `for`).
void Printer::printSimpleStmt(const Stmt &S) {
  if (const auto *A = dyn_cast<AssignStmt>(&S)) {
    printExpr(A->Target.get());
    OS << ' ' << spelling(A->Op) << ' ';
    printExpr(A->Value.get());
    return;
  }
  const auto *D = dyn_cast<DeclStmt>(&S);
  if (!D) {
    OS << "<malformed statement>";
    return;
  }
  switch (D->Var.Storage) {
  case StorageKind::Var:
    OS << "var ";
    break;
  case StorageKind::Shared:
    OS << "shared ";
    break;
  default:
    OS << "let ";
    break;
  }
  OS << D->Var.Name;
  // An inferred type stays left out: the printer reads only what was
  // written, so verified and unverified modules print alike.
  if (!D->Var.TypeInferred) {
    OS << ": ";
    printVarType(D->Var);
  }
  if (D->Init) {
    OS << " = ";
    printExpr(D->Init.get());
  }
}

void Printer::printStmt(const Stmt &S) {
  indent();
  switch (S.getKind()) {
  case Stmt::Decl:
  case Stmt::Assign:
    printSimpleStmt(S);
    OS << ";\n";
    return;
  case Stmt::If:
    printIf(cast<IfStmt>(S));
    OS << '\n';
    return;
  case Stmt::While: {
    const auto &W = cast<WhileStmt>(S);
    if (W.isGeneralFor()) {
      // `for init; cond; update {`: the init's ';' is part of the syntax.
      OS << "for ";
      if (W.Init)
        printSimpleStmt(*W.Init);
      OS << "; ";
      printExpr(W.Cond.get());
      OS << ';';
      if (W.Update) {
        OS << ' ';
        printSimpleStmt(*W.Update);
      }
    } else {
      OS << "while ";
      printExpr(W.Cond.get());
    }
    OS << ' ';
    printBlockBody(W.Body.get());
    OS << '\n';
    return;
  }
  case Stmt::For: {
    const auto &F = cast<ForStmt>(S);
    OS << "for " << F.Index.Name << " in ";
    printExpr(F.Begin.get());
    OS << "..";
    printExpr(F.End.get());
    if (F.Step) {
      OS << " step ";
      printExpr(F.Step.get());
    }
    OS << ' ';
    printBlockBody(F.Body.get());
    OS << '\n';
    return;
  }
  case Stmt::Break:
    OS << "break;\n";
    return;
  case Stmt::Continue:
    OS << "continue;\n";
    return;
  case Stmt::Return: {
    const auto &R = cast<ReturnStmt>(S);
    OS << "return";
    if (R.Value) {
      OS << ' ';
      printExpr(R.Value.get());
    }
    OS << ";\n";
    return;
  }
  case Stmt::ExprS:
    printExpr(cast<ExprStmt>(S).E.get());
    OS << ";\n";
    return;
  case Stmt::Block:
    printBlockBody(&cast<BlockStmt>(S));
    OS << '\n';
    return;
  }
}

void Printer::printOperand(const Expr *E, bool Parens) {
  if (Parens)
    OS << '(';
  printExpr(E);
  if (Parens)
    OS << ')';
}

void Printer::printLiteralSuffix(std::optional<ScalarKind> Suffix) {
  if (Suffix)
    OS << scalarName(*Suffix);
}

void Printer::printExpr(const Expr *E) {
  if (!E) {
    // Only a hand-made, broken tree has a hole; show it rather than crash.
    OS << "<null>";
    return;
  }
  switch (E->getKind()) {
  case Expr::IntLit: {
    const auto &L = cast<IntLitExpr>(*E);
    if (L.Suffix && isFloatScalar(*L.Suffix)) {
      // `3f32` is a float literal; print it the way it reads back.
      OS << formatFloat(static_cast<double>(L.Value), *L.Suffix == ScalarKind::F32);
    } else {
      OS << L.Value;
    }
    printLiteralSuffix(L.Suffix);
    return;
  }
  case Expr::FloatLit: {
    const auto &L = cast<FloatLitExpr>(*E);
    OS << formatFloat(L.Value, L.Suffix == ScalarKind::F32);
    printLiteralSuffix(L.Suffix);
    return;
  }
  case Expr::BoolLit:
    OS << (cast<BoolLitExpr>(*E).Value ? "true" : "false");
    return;
  case Expr::Name:
    OS << cast<NameExpr>(*E).Ident;
    return;
  case Expr::Unary: {
    const auto &U = cast<UnaryExpr>(*E);
    OS << spelling(U.Op);
    const Expr *Op = U.Operand.get();
    bool Parens = Op && exprPrec(*Op) < PrecUnary;
    // `&(&x)` must not become the `&&` token, and `-(-x)` reads better
    // than `--x` (which a C programmer takes for a decrement). `!!x` and
    // `~~x` are fine as they are.
    if (Op && !Parens && (U.Op == UnaryOp::Neg || U.Op == UnaryOp::AddrOf) &&
        firstCharOf(*Op) == spelling(U.Op)[0])
      Parens = true;
    printOperand(Op, Parens);
    return;
  }
  case Expr::Binary: {
    const auto &B = cast<BinaryExpr>(*E);
    unsigned P = binaryOpPrec(B.Op);
    auto NeedsParens = [&](const Expr *Op, bool IsRight) {
      if (!Op)
        return false;
      unsigned OpPrec = exprPrec(*Op);
      if (OpPrec != P)
        return OpPrec < P;
      return IsRight || P == PrecCompare;
    };
    printOperand(B.LHS.get(), NeedsParens(B.LHS.get(), false));
    OS << ' ' << spelling(B.Op) << ' ';
    printOperand(B.RHS.get(), NeedsParens(B.RHS.get(), true));
    return;
  }
  case Expr::Cond: {
    const auto &Q = cast<CondExpr>(*E);
    const Expr *C = Q.C.get();
    printOperand(C, C && exprPrec(*C) <= PrecCond);
    OS << " ? ";
    printExpr(Q.T.get());
    OS << " : ";
    printExpr(Q.F.get());
    return;
  }
  case Expr::Cast: {
    const auto &C = cast<CastExpr>(*E);
    const Expr *Op = C.Operand.get();
    printOperand(Op, Op && exprPrec(*Op) < PrecCast);
    OS << " as " << C.DestTy.str();
    return;
  }
  case Expr::Call: {
    const auto &C = cast<CallExpr>(*E);
    if (!C.FieldNames.empty()) { // a struct literal
      OS << C.Callee << " { ";
      for (size_t I = 0; I < C.Args.size(); ++I) {
        OS << (I ? ", " : "") << (I < C.FieldNames.size() ? C.FieldNames[I] : "?") << ": ";
        printExpr(C.Args[I].get());
      }
      OS << " }";
      return;
    }
    OS << C.Callee << '(';
    bool First = true;
    if (C.Format) { // print's format, as written (so the text reads back the same)
      OS << '"' << *C.Format << '"';
      First = false;
    }
    for (size_t I = 0; I < C.Args.size(); ++I) {
      if (!First)
        OS << ", ";
      First = false;
      if (C.argMode(I) != ParamMode::In)
        OS << spelling(C.argMode(I)) << ' ';
      printExpr(C.Args[I].get());
    }
    OS << ')';
    return;
  }
  case Expr::Index: {
    const auto &I = cast<IndexExpr>(*E);
    const Expr *Base = I.Base.get();
    printOperand(Base, Base && exprPrec(*Base) < PrecPostfix);
    OS << '[';
    printExpr(I.Idx.get());
    OS << ']';
    return;
  }
  case Expr::Member: {
    const auto &M = cast<MemberExpr>(*E);
    const Expr *Base = M.Base.get();
    printOperand(Base, Base && exprPrec(*Base) < PrecPostfix);
    if (!M.FieldName.empty())
      OS << '.' << M.FieldName;
    else
      OS << '.' << (M.Field < 3 ? "xyz"[M.Field] : '?');
    return;
  }
  }
}

} // namespace

void gridjit::printModule(const Module &M, llvm::raw_ostream &OS) { Printer(OS).printModule(M); }

std::string gridjit::printModule(const Module &M) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  printModule(M, OS);
  OS.flush();
  return S;
}

std::string gridjit::printExpr(const Expr &E) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  Printer(OS).printExpr(&E);
  OS.flush();
  return S;
}
