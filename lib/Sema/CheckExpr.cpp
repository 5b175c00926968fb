//===- CheckExpr.cpp - KIR verifier: expressions and literal typing -------===//
//
// Part of gridjit. Expression typing. Types flow bottom-up except for
// untyped literal expressions (unsuffixed literals combined with unary and
// arithmetic operators), which take the type their context expects: the
// other operand, the declared or parameter type, the generic builtin's T.
// There are no implicit conversions.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>

using namespace gridjit;
using namespace gridjit::sema;

//===----------------------------------------------------------------------===//
// Untyped literal expressions
//===----------------------------------------------------------------------===//

static bool isArithmetic(BinaryOp Op) { return Op <= BinaryOp::Xor; }

bool sema::isNullLiteral(const Expr *E) {
  // `null` is a keyword, so no declaration can hide it.
  const auto *N = llvm::dyn_cast_or_null<NameExpr>(E);
  return N && N->Ident == builtinValueName(BuiltinValue::Null);
}

// An expression made only of unsuffixed numeric literals.
static bool isUntypedNumber(const Expr *E) {
  if (!E)
    return false;
  switch (E->getKind()) {
  case Expr::IntLit:
    return !cast<IntLitExpr>(E)->Suffix;
  case Expr::FloatLit:
    return !cast<FloatLitExpr>(E)->Suffix;
  case Expr::Unary: {
    const auto *U = cast<UnaryExpr>(E);
    return (U->Op == UnaryOp::Neg || U->Op == UnaryOp::BitNot) && isUntypedNumber(U->Operand.get());
  }
  case Expr::Binary: {
    const auto *B = cast<BinaryExpr>(E);
    return isArithmetic(B->Op) && isUntypedNumber(B->LHS.get()) && isUntypedNumber(B->RHS.get());
  }
  default:
    return false;
  }
}

bool sema::isUntypedLiteral(const Expr *E) { return isUntypedNumber(E) || isNullLiteral(E); }

bool sema::containsFloatLit(const Expr *E) {
  if (!E)
    return false;
  switch (E->getKind()) {
  case Expr::FloatLit:
    return true;
  case Expr::Unary:
    return containsFloatLit(cast<UnaryExpr>(E)->Operand.get());
  case Expr::Binary:
    return containsFloatLit(cast<BinaryExpr>(E)->LHS.get()) ||
           containsFloatLit(cast<BinaryExpr>(E)->RHS.get());
  default:
    return false;
  }
}

Type sema::defaultLiteralType(bool HasFloat) {
  return Type::getScalar(HasFloat ? ScalarKind::F32 : ScalarKind::I32);
}

bool sema::hintUsable(bool HasFloat, Type Hint) {
  return Hint.isNumeric() && (!HasFloat || Hint.isFloat());
}

Type Checker::typeLiteral(Expr &E, Type Hint) {
  if (isNullLiteral(&E)) {
    auto &N = cast<NameExpr>(E);
    N.Builtin = BuiltinValue::Null;
    if (Hint.isValid() && !Hint.isPointer())
      error(N.getLoc(), "'null' is a pointer, where " + quote(Hint) + " is needed");
    else if (!Hint.isValid())
      error(N.getLoc(), "'null' takes its pointer type from its context, and there is none here: "
                        "write 'null as ptr<T>', or compare or assign it to a pointer");
    return N.Ty = Hint.isPointer() ? Hint : Type();
  }
  bool HasFloat = containsFloatLit(&E);
  assignLiteralType(E, hintUsable(HasFloat, Hint) ? Hint : defaultLiteralType(HasFloat));
  return E.Ty;
}

void Checker::assignLiteralType(Expr &E, Type T) {
  E.Ty = T;
  switch (E.getKind()) {
  case Expr::IntLit:
    if (!checkIntLitFits(cast<IntLitExpr>(E), T, /*Negated=*/false, E.getLoc()))
      E.Ty = Type();
    return;
  case Expr::FloatLit:
    if (!checkFloatLitFits(cast<FloatLitExpr>(E), T))
      E.Ty = Type();
    return;
  case Expr::Unary: {
    auto &U = cast<UnaryExpr>(E);
    // `-128` is one literal for the range check: -128 fits i8, 128 not.
    if (auto *Lit = dyn_cast<IntLitExpr>(U.Operand.get()); Lit && U.Op == UnaryOp::Neg) {
      Lit->Ty = T;
      if (!checkIntLitFits(*Lit, T, /*Negated=*/true, U.getLoc()))
        E.Ty = Lit->Ty = Type();
      else
        E.Ty = unaryResult(U.Op, T, U.getLoc());
      return;
    }
    assignLiteralType(*U.Operand, T);
    E.Ty = U.Operand->Ty.isValid() ? unaryResult(U.Op, T, U.getLoc()) : Type();
    return;
  }
  case Expr::Binary: {
    auto &B = cast<BinaryExpr>(E);
    assignLiteralType(*B.LHS, T);
    assignLiteralType(*B.RHS, T);
    E.Ty = binaryResult(B.Op, binaryOpSpelling(B.Op), B.LHS->Ty, B.RHS->Ty, B.getLoc(),
                        startLoc(B.RHS));
    return;
  }
  default:
    return;
  }
}

/// Does the integer \p Mag (negated when \p Negated) fit the integer type
/// \p T?
static bool intFits(uint64_t Mag, bool Negated, Type T) {
  unsigned Bits = T.getBits();
  if (Negated) {
    if (Mag == 0)
      return true;
    return T.isSignedInteger() && Mag <= (uint64_t(1) << (Bits - 1));
  }
  if (T.isSignedInteger())
    return Mag <= (uint64_t(1) << (Bits - 1)) - 1;
  return Bits == 64 || Mag <= (uint64_t(1) << Bits) - 1;
}

const llvm::fltSemantics &sema::floatSemantics(Type T) {
  switch (T.getScalarKind()) {
  case ScalarKind::F16:
    return llvm::APFloat::IEEEhalf();
  case ScalarKind::BF16:
    return llvm::APFloat::BFloat();
  case ScalarKind::F32:
    return llvm::APFloat::IEEEsingle();
  default:
    return llvm::APFloat::IEEEdouble();
  }
}

double sema::roundToFloatType(Type T, double D) {
  llvm::APFloat F(D);
  bool LosesInfo;
  F.convert(floatSemantics(T), llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return F.convertToDouble();
}

bool Checker::checkIntLitFits(const IntLitExpr &L, Type T, bool Negated, SourceLoc At) {
  std::string Text = (Negated ? "-" : "") + std::to_string(L.Value);
  if (T.isInteger()) {
    if (intFits(L.Value, Negated, T))
      return true;
    error(At, "integer literal " + Text + " does not fit in type " + quote(T));
    return false;
  }
  if (T.isFloat()) {
    llvm::APFloat F(floatSemantics(T));
    if (F.convertFromAPInt(llvm::APInt(64, L.Value), /*IsSigned=*/false,
                           llvm::APFloat::rmNearestTiesToEven) == llvm::APFloat::opOK)
      return true;
    error(At, "integer literal " + Text + " cannot be represented exactly in type " + quote(T));
    return false;
  }
  error(At, "integer literal " + Text + " cannot have type " + quote(T));
  return false;
}

bool Checker::checkFloatLitFits(const FloatLitExpr &L, Type T) {
  if (!T.isFloat()) {
    error(L.getLoc(), "float literal " + literalText(L) + " cannot have type " + quote(T));
    return false;
  }
  bool Fits = std::isfinite(L.Value) && std::isfinite(roundToFloatType(T, L.Value));
  if (!Fits)
    error(L.getLoc(), "float literal " + literalText(L) + " does not fit in type " + quote(T));
  return Fits;
}

// Diagnostics quote a float literal as written (`1e39`, not `1e+39`); a
// built module has no source, and then the value is printed.
std::string Checker::literalText(const Expr &E) const {
  if (std::optional<size_t> Pos = sourceOffset(E.getLoc())) {
    llvm::StringRef Rest = llvm::StringRef(M.Source).drop_front(*Pos);
    size_t N = 0;
    while (N < Rest.size() && (llvm::isAlnum(Rest[N]) || Rest[N] == '.' || Rest[N] == '_' ||
                               ((Rest[N] == '+' || Rest[N] == '-') && N &&
                                (Rest[N - 1] == 'e' || Rest[N - 1] == 'E'))))
      ++N;
    if (N && llvm::isDigit(Rest[0]))
      return Rest.take_front(N).str();
  }
  if (const auto *F = dyn_cast<FloatLitExpr>(&E)) {
    std::string S;
    llvm::raw_string_ostream(S) << llvm::format("%g", F->Value);
    return S;
  }
  if (const auto *I = dyn_cast<IntLitExpr>(&E))
    return std::to_string(I->Value);
  return "?";
}

//===----------------------------------------------------------------------===//
// Entry points
//===----------------------------------------------------------------------===//

Type Checker::checkExpr(Expr *E, SourceLoc ParentLoc, Type Hint) {
  if (!E) {
    error(ParentLoc, "malformed module: missing expression");
    return Type();
  }
  if (isUntypedLiteral(E))
    return typeLiteral(*E, Hint);
  Type T;
  switch (E->getKind()) {
  case Expr::IntLit:
    T = checkIntLit(*cast<IntLitExpr>(E));
    break;
  case Expr::FloatLit:
    T = checkFloatLit(*cast<FloatLitExpr>(E));
    break;
  case Expr::BoolLit:
    T = Type::getScalar(ScalarKind::Bool);
    break;
  case Expr::Name:
    T = checkName(*cast<NameExpr>(E), /*AllowArray=*/false);
    break;
  case Expr::Unary:
    T = checkUnary(*cast<UnaryExpr>(E), Hint);
    break;
  case Expr::Binary:
    T = checkBinary(*cast<BinaryExpr>(E), Hint);
    break;
  case Expr::Cond:
    T = checkCond(*cast<CondExpr>(E), Hint);
    break;
  case Expr::Cast:
    T = checkCast(*cast<CastExpr>(E));
    break;
  case Expr::Call:
    T = checkCall(*cast<CallExpr>(E), Hint);
    break;
  case Expr::Index:
    T = checkIndex(*cast<IndexExpr>(E));
    break;
  case Expr::Member:
    T = checkMember(*cast<MemberExpr>(E));
    break;
  }
  E->Ty = T;
  return T;
}

Type Checker::checkValue(Expr *E, SourceLoc ParentLoc, Type Hint) {
  Type T = checkExpr(E, ParentLoc, Hint);
  if (!T.isVoid())
    return T;
  // Only calls have type void.
  if (auto *C = dyn_cast<CallExpr>(E))
    error(E->getLoc(), quote(C->Callee) + " does not return a value");
  else
    error(E->getLoc(), "expression does not have a value");
  return Type();
}

//===----------------------------------------------------------------------===//
// Literals and names
//===----------------------------------------------------------------------===//

Type Checker::checkIntLit(IntLitExpr &L) {
  Type T = Type::getScalar(L.Suffix.value_or(ScalarKind::I32));
  return checkIntLitFits(L, T, /*Negated=*/false, L.getLoc()) ? T : Type();
}

Type Checker::checkFloatLit(FloatLitExpr &L) {
  Type T = Type::getScalar(L.Suffix.value_or(ScalarKind::F32));
  return checkFloatLitFits(L, T) ? T : Type();
}

const VarDecl *Checker::lookupLocal(llvm::StringRef Name) const {
  for (auto It = Scopes.rbegin(); It != Scopes.rend(); ++It) {
    auto Found = It->find(Name);
    if (Found != It->end())
      return Found->second;
  }
  return nullptr;
}

Resolved Checker::resolveName(llvm::StringRef Name) const {
  Resolved R;
  if ((R.Var = lookupLocal(Name)))
    return R;
  if (Decl *D = ModuleNames.lookup(Name)) {
    if ((R.Const = dyn_cast<ConstDecl>(D)))
      R.Var = &R.Const->Var;
    else if (!(R.Struct = dyn_cast<StructDecl>(D)))
      R.Fn = cast<FunctionDecl>(D);
    return R;
  }
  R.Value = lookupBuiltinValue(Name);
  R.Func = lookupBuiltinFunc(Name);
  return R;
}

static bool isVectorBuiltin(BuiltinValue V) {
  return V != BuiltinValue::None && getBuiltinValueInfo(V).isVector();
}

Type Checker::checkName(NameExpr &N, bool AllowArray) {
  Resolved R = resolveName(N.Ident);
  Type T;
  if (R.Const)
    requireConst(*R.Const, N.getLoc());
  if (R.Var) {
    N.Decl = R.Var;
    if (!BadDecls.contains(R.Var)) {
      T = R.Var->Ty;
      if (T.isArray() && !AllowArray) {
        error(N.getLoc(),
              "array " + quote(N.Ident) + " cannot be used as a value; use an element of it");
        T = Type();
      }
    }
  } else if (R.Fn || R.Func != BuiltinFunc::None) {
    error(N.getLoc(), quote(N.Ident) + " is a function, not a value");
  } else if (R.Struct) {
    error(N.getLoc(), quote(N.Ident) +
                          " is a struct type, not a value; a value of it is written '" + N.Ident +
                          " { FIELD: VALUE, ... }'");
  } else if (R.Value != BuiltinValue::None) {
    N.Builtin = R.Value;
    if (R.Value == BuiltinValue::Null) // where no context types it (`null[0]`)
      T = typeLiteral(N, Type());
    else if (isVectorBuiltin(R.Value))
      error(N.getLoc(), quote(N.Ident) + " must be used with '.x', '.y' or '.z'");
    else
      T = Type::getScalar(ScalarKind::I32);
  } else {
    error(N.getLoc(), "use of undeclared name " + quote(N.Ident) + cudaSpellingHint(N.Ident));
  }
  N.Ty = T;
  return T;
}

Type Checker::checkMember(MemberExpr &Mem) {
  if (isFieldAccess(Mem))
    return checkField(Mem);
  static constexpr const char *Fields[] = {".x", ".y", ".z"};
  std::string Field = Mem.Field < 3 ? Fields[Mem.Field] : "." + std::to_string(Mem.Field);
  auto *N = dyn_cast_or_null<NameExpr>(Mem.Base.get());
  if (N) {
    Resolved R = resolveName(N->Ident);
    if (!R.Var && !R.Fn && isVectorBuiltin(R.Value)) {
      N->Builtin = R.Value;
      if (Mem.Field < 3)
        return Mem.Ty = Type::getScalar(ScalarKind::I32);
      if (!Mem.FieldName.empty())
        error(fieldNameLoc(Mem), quote(N->Ident) + " has no field " + quote(Mem.FieldName) +
                                     "; it has '.x', '.y' and '.z'");
      else
        error(Mem.getLoc(), "malformed module: member " + Field + " does not exist");
      return Type();
    }
    if (R.Struct) {
      checkName(*N, /*AllowArray=*/false); // says it is a type
      return Type();
    }
    if (R.Var && (!R.Var->Ty.isValid() || BadDecls.count(R.Var)))
      return Type(); // its declaration was reported already

    if (!R.Var && !R.Fn && R.Value == BuiltinValue::None && R.Func == BuiltinFunc::None) {
      error(N->getLoc(), "use of undeclared name " + quote(N->Ident) + cudaSpellingHint(N->Ident));
      return Type();
    }
  } else if (!checkExpr(Mem.Base.get(), Mem.getLoc()).isValid()) {
    return Type();
  }
  std::string Note = N ? hiddenBuiltinNote(N->Ident, lookupLocal(N->Ident)) : std::string();
  if (Mem.Field > 2) {
    error(fieldNameLoc(Mem),
          "'." + Mem.FieldName + "' needs a struct or vector value before it" + Note);
    return Type();
  }
  error(Mem.getLoc(),
        quote(Field) + " can only follow thread_idx, block_idx, block_dim or grid_dim" + Note);
  return Type();
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

bool Checker::checkNotStorageOnly(Type T, llvm::StringRef OpText, SourceLoc Loc) {
  if (!T.isScalar() || !isStorageOnlyScalar(T.getScalarKind()))
    return true;
  error(Loc, "operator " + quote(OpText) + " does not take " + quote(T) +
                 ", a storage type: convert it with 'as f32' first");
  return false;
}

Type Checker::unaryResult(UnaryOp Op, Type T, SourceLoc Loc) {
  if (!T.isValid())
    return T;
  if (Op != UnaryOp::AddrOf && !checkNotStorageOnly(T, spelling(Op), Loc))
    return Type();
  switch (Op) {
  case UnaryOp::Neg:
    if (T.isSignedInteger() || T.isFloat())
      return T;
    if (T.isUnsignedInteger())
      error(Loc, "unary '-' on unsigned type " + quote(T));
    else
      error(Loc, "unary '-' needs a signed integer or float operand, found " + quote(T));
    return Type();
  case UnaryOp::Not:
    if (T.isBool())
      return T;
    error(Loc, "unary '!' needs a 'bool' operand, found " + quote(T));
    return Type();
  case UnaryOp::BitNot:
    if (T.isInteger())
      return T;
    error(Loc, "unary '~' needs an integer operand, found " + quote(T));
    return Type();
  case UnaryOp::AddrOf:
    break;
  }
  return Type();
}

Type Checker::checkUnary(UnaryExpr &U, Type Hint) {
  if (U.Op == UnaryOp::AddrOf)
    return checkAddrOf(U);
  // A suffixed literal under '-': `-128i8` is in range.
  if (auto *Lit = dyn_cast_or_null<IntLitExpr>(U.Operand.get()); Lit && U.Op == UnaryOp::Neg) {
    Type T = Type::getScalar(Lit->Suffix.value_or(ScalarKind::I32));
    if (!checkIntLitFits(*Lit, T, /*Negated=*/true, U.getLoc()))
      return Type();
    Lit->Ty = T;
    return unaryResult(U.Op, T, U.getLoc());
  }
  // `-e` and `~e` have the type of e, so the context's type is e's too.
  Type OperandHint = U.Op == UnaryOp::Not ? Type() : Hint;
  return unaryResult(U.Op, checkValue(U.Operand.get(), U.getLoc(), OperandHint), U.getLoc());
}

Type Checker::checkAddrOf(UnaryExpr &U) {
  auto *I = dyn_cast_or_null<IndexExpr>(U.Operand.get());
  // `&count` of a shared scalar: its address in shared memory.
  if (auto *N = dyn_cast_or_null<NameExpr>(U.Operand.get())) {
    Resolved R = resolveName(N->Ident);
    if (R.Var && R.Var->Storage == StorageKind::Shared && !R.Var->Ty.isArray()) {
      Type T = checkName(*N, /*AllowArray=*/false);
      if (!T.isValid())
        return Type();
      return Type::getPointerTo(T, AddrSpace::Shared);
    }
  }
  // `&p[i].key`, `&acc.count`: a field of an element, in the element's
  // memory, or of a shared struct.
  Expr *Root = nullptr;
  if (auto *M = dyn_cast_or_null<MemberExpr>(U.Operand.get())) {
    Root = M;
    while (auto *Inner = dyn_cast<MemberExpr>(Root))
      Root = Inner->Base.get();
  }
  auto *RootName = dyn_cast_or_null<NameExpr>(Root);
  const VarDecl *RootVar = RootName ? resolveName(RootName->Ident).Var : nullptr;
  if (llvm::isa_and_nonnull<IndexExpr>(Root) ||
      (RootVar && RootVar->Storage == StorageKind::Shared && RootVar->Ty.isStruct())) {
    Type Field = checkExpr(U.Operand.get(), U.getLoc());
    if (!Field.isValid())
      return Type();
    return Type::getPointerTo(Field, RootVar ? AddrSpace::Shared
                                             : elementAddrSpace(*cast<IndexExpr>(Root)));
  }
  if (!I) {
    // Reported even when the operand has errors of its own: `&x` is wrong
    // whatever x is.
    if (U.Operand && isa<NameExpr>(*U.Operand))
      checkName(cast<NameExpr>(*U.Operand), /*AllowArray=*/true);
    else
      checkExpr(U.Operand.get(), U.getLoc());
    error(U.getLoc(), "'&' can only take the address of an element or of a shared "
                      "variable, as in '&p[i]', '&a[i]' or '&count'");
    return Type();
  }
  Type Elem = checkIndex(*I);
  if (!Elem.isValid() || !checkWritable(*I, "take the address of"))
    return Type();
  return Type::getPointerTo(Elem, elementAddrSpace(*I));
}

AddrSpace Checker::elementAddrSpace(const IndexExpr &I) {
  Type BaseTy = I.Base->Ty;
  AddrSpace AS = BaseTy.isPointer() ? BaseTy.getAddrSpace() : AddrSpace::Local;
  if (BaseTy.isArray()) {
    const VarDecl *V = indexedName(I)->Decl;
    if (V && V->Storage == StorageKind::Shared)
      AS = AddrSpace::Shared;
  }
  return AS;
}

// Literal operands adopt the type of the other operand; when both are
// literals (only comparisons and `&&`/`||` get here: arithmetic of two
// literals is itself an untyped literal) they share a default type. The
// operands of arithmetic have the result's type, so the context's type
// (\p Hint) reaches them, e.g. `let x: f64 = sqrt(2) + 1.0`.
Type Checker::checkBinary(BinaryExpr &B, Type Hint) {
  if (!isArithmetic(B.Op))
    Hint = Type();
  auto [L, R] = checkOperandPair(B.LHS.get(), B.RHS.get(), B.getLoc(), Hint);
  return binaryResult(B.Op, binaryOpSpelling(B.Op), L, R, B.getLoc(),
                      B.RHS ? startLoc(B.RHS) : B.getLoc());
}

// One untyped literal takes the other's type; two take the context's type
// (\p Hint) where it suits them, else the default one.
std::pair<Type, Type> Checker::checkOperandPair(Expr *A, Expr *B, SourceLoc Loc, Type Hint) {
  bool AU = isUntypedLiteral(A), BU = isUntypedLiteral(B);
  Type TA, TB;
  if (AU && BU) {
    bool HasFloat = containsFloatLit(A) || containsFloatLit(B);
    Type D = hintUsable(HasFloat, Hint) ? Hint : defaultLiteralType(HasFloat);
    // `null` beside `null` or a number has no pointer type to take.
    TA = typeLiteral(*A, isNullLiteral(A) ? Type() : D);
    TB = typeLiteral(*B, isNullLiteral(B) ? Type() : D);
  } else if (AU) {
    TB = checkValue(B, Loc, Hint);
    if (TB.isValid())
      TA = typeLiteral(*A, TB);
  } else if (BU) {
    TA = checkValue(A, Loc, Hint);
    if (TA.isValid())
      TB = typeLiteral(*B, TA);
  } else {
    TA = checkValue(A, Loc, Hint);
    TB = checkValue(B, Loc, Hint);
  }
  return {TA, TB};
}

// `c ? a : b`: c is bool; a and b have one type, which is the result's.
// An untyped literal side takes the other side's type, as a literal
// operand of a binary operator does; two literal sides take the context's
// type (\p Hint) or the default one. `c ? 1 : x` with x: f32 is thus
// fine (1 is typed f32), `c ? 1 : 2u8` too.
Type Checker::checkCond(CondExpr &Q, Type Hint) {
  checkCondition(Q.C.get(), Q.getLoc());
  auto [T, F] = checkOperandPair(Q.T.get(), Q.F.get(), Q.getLoc(), Hint);
  if (!T.isValid() || !F.isValid() || !Q.C || !Q.C->Ty.isBool())
    return Type();
  if (T != F) {
    error(Q.getLoc(),
          "both sides of '?:' must have the same type, found " + quote(T) + " and " + quote(F));
    return Type();
  }
  return T;
}

namespace {
/// The operand types a binary operator accepts.
enum class OperandClass { Numeric, Integer, IntegerOrBool, Bool, Comparable };
} // namespace

static OperandClass operandClass(BinaryOp Op) {
  switch (Op) {
  case BinaryOp::Add:
  case BinaryOp::Sub:
  case BinaryOp::Mul:
  case BinaryOp::Div:
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Gt:
  case BinaryOp::Ge:
    return OperandClass::Numeric;
  case BinaryOp::Rem:
  case BinaryOp::Shl:
  case BinaryOp::Shr:
    return OperandClass::Integer;
  case BinaryOp::And:
  case BinaryOp::Or:
  case BinaryOp::Xor:
    return OperandClass::IntegerOrBool;
  case BinaryOp::LAnd:
  case BinaryOp::LOr:
    return OperandClass::Bool;
  case BinaryOp::Eq:
  case BinaryOp::Ne:
    return OperandClass::Comparable;
  }
  return OperandClass::Numeric;
}

static bool accepts(OperandClass C, Type T) {
  switch (C) {
  case OperandClass::Numeric:
    return T.isNumeric();
  case OperandClass::Integer:
    return T.isInteger();
  case OperandClass::IntegerOrBool:
    return T.isInteger() || T.isBool();
  case OperandClass::Bool:
    return T.isBool();
  case OperandClass::Comparable:
    return T.isScalar() || T.isPointer();
  }
  return false;
}

static llvm::StringRef describe(OperandClass C) {
  switch (C) {
  case OperandClass::Numeric:
    return "numeric operands";
  case OperandClass::Integer:
    return "integer operands";
  case OperandClass::IntegerOrBool:
    return "integer or 'bool' operands";
  case OperandClass::Bool:
    return "'bool' operands";
  case OperandClass::Comparable:
    return "scalar or pointer operands";
  }
  return "";
}

Type Checker::binaryResult(BinaryOp Op, llvm::StringRef OpText, Type L, Type R, SourceLoc OpLoc,
                           SourceLoc RLoc) {
  if (!L.isValid() || !R.isValid())
    return Type();
  if (Op == BinaryOp::Add && L.isPointer()) {
    if (R.isInteger())
      return L;
    error(RLoc, "pointer offset must be an integer, found " + quote(R));
    return Type();
  }
  if (!checkNotStorageOnly(L, OpText, OpLoc) || !checkNotStorageOnly(R, OpText, OpLoc))
    return Type();
  if (L.isVector() || R.isVector())
    return vectorResult(Op, OpText, L, R, OpLoc);
  OperandClass Class = operandClass(Op);
  if (!accepts(Class, L)) {
    error(OpLoc, "operator " + quote(OpText) + " needs " + describe(Class) + ", found " + quote(L));
    return Type();
  }
  if (L != R) {
    error(OpLoc, "operands of " + quote(OpText) + " must have the same type, found " + quote(L) +
                     " and " + quote(R));
    return Type();
  }
  bool IsComparison = Op >= BinaryOp::Eq;
  return IsComparison ? Type::getScalar(ScalarKind::Bool) : L;
}

Type Checker::checkCast(CastExpr &C) {
  Type Dest = C.DestTy;
  // A pointer cast gives `null` its type: `null as ptr<f32>`.
  Type Src = checkValue(C.Operand.get(), C.getLoc(), Dest.isPointer() ? Dest : Type());
  if (Dest.isPointer()) {
    if (!Src.isValid())
      return Type();
    if (!Src.isPointer()) {
      error(C.getLoc(), "cannot cast " + quote(Src) + " to " + quote(Dest) +
                            "; only a pointer casts to a pointer type");
      return Type();
    }
    if (Src.getAddrSpace() != Dest.getAddrSpace()) {
      error(C.getLoc(), "cannot cast " + quote(Src) + " to " + quote(Dest) +
                            "; a pointer cast changes the element type, never the address space");
      return Type();
    }
    return Dest;
  }
  if (!Dest.isScalar()) {
    error(C.getLoc(), "cannot cast to " + quote(Dest) + "; 'as' converts between scalars");
    return Type();
  }
  if (!Src.isValid())
    return Type();
  if (!Src.isScalar()) {
    error(C.getLoc(), "cannot cast " + quote(Src) + " to " + quote(Dest) +
                          "; 'as' converts between scalars, or between pointers");
    return Type();
  }
  if (Dest.isBool() && !Src.isBool()) {
    error(C.getLoc(), "cannot cast " + quote(Src) + " to 'bool'; write 'x != 0'");
    return Type();
  }
  return Dest;
}

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

Type Checker::checkIndex(IndexExpr &I, bool AllowArray) {
  Type BaseTy;
  if (auto *N = dyn_cast_or_null<NameExpr>(I.Base.get()))
    BaseTy = checkName(*N, /*AllowArray=*/true);
  else if (auto *Row = dyn_cast_or_null<IndexExpr>(I.Base.get()))
    BaseTy = Row->Ty = checkIndex(*Row, /*AllowArray=*/true); // `t[y]` of `t[y][x]`
  else
    BaseTy = checkValue(I.Base.get(), I.getLoc());
  Type IdxTy = checkValue(I.Idx.get(), I.getLoc());

  bool OK = BaseTy.isValid() && IdxTy.isValid();
  if (IdxTy.isValid() && !IdxTy.isInteger()) {
    error(startLoc(I.Idx), "index must be an integer, found " + quote(IdxTy));
    OK = false;
  }
  if (BaseTy.isValid() && !BaseTy.isArray() && !BaseTy.isPointer()) {
    error(startLoc(I.Base), "cannot index a value of type " + quote(BaseTy));
    OK = false;
  }
  if (!OK)
    return Type();

  // A constant index into a sized array (or a row of one) is checked
  // against the bounds of its own dimension.
  const NameExpr *Root = indexedName(I);
  bool IsRow = BaseTy.isArray() && Root != I.Base.get();
  if (BaseTy.isArray() && BaseTy.getArrayCount() != 0) {
    ConstValue V;
    const Expr *Culprit = nullptr;
    if (fold(*I.Idx, V, Culprit) == FoldStatus::Constant) {
      bool Negative = IdxTy.isSignedInteger() && static_cast<int64_t>(V.Int) < 0;
      if (Negative || V.Int >= BaseTy.getArrayCount()) {
        error(startLoc(I.Idx),
              "index " +
                  (Negative ? std::to_string(static_cast<int64_t>(V.Int)) : std::to_string(V.Int)) +
                  " is out of bounds for " + (IsRow ? "a row of array " : "array ") +
                  quote(Root->Ident) + " of type " + quote(IsRow ? BaseTy : Root->Ty));
        return Type();
      }
    }
  }
  if (!BaseTy.isArray())
    return BaseTy.getPointeeType();
  Type Elem = BaseTy.getArrayElementType();
  if (Elem.isArray() && !AllowArray) {
    // A row, as an array's name, is not a value: `t[y]` alone.
    error(startLoc(&I), "a row of array " + quote(Root->Ident) + " (of type " + quote(Elem) +
                            ") cannot be used as a value; use an element of it");
    return Type();
  }
  return Elem;
}

//===----------------------------------------------------------------------===//
// Calls
//===----------------------------------------------------------------------===//

std::string sema::arityMessage(llvm::StringRef Callee, size_t Expected, size_t Found) {
  return quote(Callee) + " takes " + std::to_string(Expected) +
         (Expected == 1 ? " argument" : " arguments") + ", found " + std::to_string(Found);
}

Type Checker::checkCall(CallExpr &C, Type Hint) {
  Decl *D = ModuleNames.lookup(C.Callee);
  if (const VarDecl *Local = lookupLocal(C.Callee)) {
    // A local hides a builtin function of its name, as any other name.
    error(C.getLoc(), quote(C.Callee) + " is not a function" + hiddenBuiltinNote(C.Callee, Local));
  } else if (auto *F = dyn_cast_or_null<FunctionDecl>(D)) {
    if (!F->IsKernel)
      return checkFunctionCall(C, *F);
    error(C.getLoc(), "cannot call kernel " + quote(C.Callee));
  } else if (const Aggregate *A = aggregateNamed(C.Callee)) {
    return checkConstruct(C, *A);
  } else if (!C.FieldNames.empty()) {
    error(C.getLoc(), "unknown struct " + quote(C.Callee));
  } else if (BuiltinFunc BF = lookupBuiltinFunc(C.Callee); BF != BuiltinFunc::None) {
    rejectArgModes(C);
    return checkBuiltinCall(C, BF, Hint);
  } else {
    Resolved R = resolveName(C.Callee);
    if (R.Var || R.Value != BuiltinValue::None)
      error(C.getLoc(), quote(C.Callee) + " is not a function");
    else
      error(C.getLoc(),
            "call to undeclared function " + quote(C.Callee) + cudaSpellingHint(C.Callee));
  }
  for (ExprPtr &A : C.Args)
    checkValue(A.get(), C.getLoc());
  return Type();
}

Type Checker::checkArgAs(CallExpr &C, unsigned I, Type T) {
  Expr *A = C.Args[I].get();
  Type AT = checkValue(A, C.getLoc(), T);
  if (!T.isValid() || !AT.isValid() || AT == T)
    return AT;
  error(startLoc(A), "argument " + std::to_string(I + 1) + " of " + quote(C.Callee) +
                         " must have type " + quote(T) + ", found " + quote(AT));
  return Type();
}

Type Checker::checkFunctionCall(CallExpr &C, const FunctionDecl &Fn) {
  C.Fn = &Fn;
  if (CurFn) {
    auto &Edges = Calls[CurFn];
    if (llvm::none_of(Edges, [&](const auto &E) { return E.first == &Fn; }))
      Edges.push_back({&Fn, C.getLoc()});
  }
  Type Result = Fn.ReturnTy.isVoid() || Fn.ReturnTy.isScalar() || Fn.ReturnTy.isStruct()
                    ? Fn.ReturnTy
                    : Type();
  if (C.Args.size() != Fn.Params.size()) {
    error(C.getLoc(), arityMessage(C.Callee, Fn.Params.size(), C.Args.size()));
    for (ExprPtr &A : C.Args)
      checkValue(A.get(), C.getLoc());
    return Type();
  }
  bool OK = true;
  for (unsigned I = 0; I < C.Args.size(); ++I) {
    const VarDecl *P = Fn.Params[I].get();
    if (P && (P->Mode != ParamMode::In || C.argMode(I) != ParamMode::In))
      OK &= checkModedArg(C, I, *P);
    else
      OK &= checkArgAs(C, I, P && !BadDecls.contains(P) ? P->Ty : Type()).isValid();
  }
  if (C.hasOutArgs())
    checkOutAliasing(C);
  return OK ? Result : Type();
}
