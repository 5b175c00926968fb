//===- ConstEval.cpp - KIR verifier: folding constant expressions ---------===//
//
// Part of gridjit. Folds checked expressions made of literals, consts,
// unary and binary operators and casts, with the run-time semantics of the
// spec: integers wrap at their width (two's complement) -- except where a
// constant is required (a const's initializer, an array size: fold()'s
// Required), where a result that does not fit is an error --, `>>` is arithmetic
// for signed types, f32 arithmetic rounds to f32 after every operation,
// float->int casts round toward zero and saturate (NaN gives 0).
//
// ConstValue::Int holds integers sign-extended (signed types) or
// zero-extended (unsigned types) to 64 bits, and bool as 0/1.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/APInt.h"
#include "llvm/Support/Casting.h"

#include <cmath>

using namespace gridjit;
using namespace gridjit::sema;
using llvm::APInt;

//===----------------------------------------------------------------------===//
// Value helpers
//===----------------------------------------------------------------------===//

static unsigned intBits(Type T) { return T.isBool() ? 1 : T.getBits(); }

static APInt toAPInt(const ConstValue &V) { return APInt(64, V.Int).trunc(intBits(V.Ty)); }

static ConstValue fromAPInt(Type T, const APInt &A) {
  ConstValue V;
  V.Ty = T;
  V.Int = T.isSignedInteger() ? static_cast<uint64_t>(A.getSExtValue()) : A.getZExtValue();
  return V;
}

static ConstValue makeBool(bool B) {
  ConstValue V;
  V.Ty = Type::getScalar(ScalarKind::Bool);
  V.Int = B;
  return V;
}

/// A float value of type \p T; values of narrower types are rounded to them.
static ConstValue makeFloat(Type T, double D) {
  ConstValue V;
  V.Ty = T;
  V.Float = roundToFloatType(T, D);
  return V;
}

/// int -> float, rounding once to the nearest value of \p T.
static ConstValue intToFloat(Type T, const APInt &A, bool IsSigned) {
  llvm::APFloat F(floatSemantics(T));
  F.convertFromAPInt(A, IsSigned, llvm::APFloat::rmNearestTiesToEven);
  bool LosesInfo;
  F.convert(llvm::APFloat::IEEEdouble(), llvm::APFloat::rmNearestTiesToEven, &LosesInfo);
  return makeFloat(T, F.convertToDouble());
}

/// float -> int: round toward zero, saturate, NaN -> 0.
static ConstValue floatToInt(Type T, double X) {
  unsigned Bits = T.getBits();
  APInt R(Bits, 0);
  if (!std::isnan(X)) {
    X = std::trunc(X);
    if (T.isSignedInteger()) {
      double Lim = std::ldexp(1.0, Bits - 1);
      if (X <= -Lim)
        R = APInt::getSignedMinValue(Bits);
      else if (X >= Lim)
        R = APInt::getSignedMaxValue(Bits);
      else
        R = APInt(64, static_cast<uint64_t>(static_cast<int64_t>(X))).trunc(Bits);
    } else {
      double Lim = std::ldexp(1.0, Bits);
      if (X >= Lim)
        R = APInt::getMaxValue(Bits);
      else if (X > 0)
        R = APInt(64, static_cast<uint64_t>(X)).trunc(Bits);
    }
  }
  return fromAPInt(T, R);
}

static ConstValue castValue(const ConstValue &V, Type To) {
  Type From = V.Ty;
  if (From == To)
    return V;
  if (To.isFloat()) {
    if (From.isFloat())
      return makeFloat(To, V.Float);
    return intToFloat(To, toAPInt(V), From.isSignedInteger());
  }
  if (From.isFloat())
    return floatToInt(To, V.Float);
  // int/bool -> int: extend by the source's signedness, or truncate.
  APInt A = toAPInt(V);
  unsigned Bits = To.getBits();
  return fromAPInt(To, From.isSignedInteger() ? A.sextOrTrunc(Bits) : A.zextOrTrunc(Bits));
}

//===----------------------------------------------------------------------===//
// Operators
//===----------------------------------------------------------------------===//

static FoldStatus foldUnary(UnaryOp Op, const ConstValue &A, ConstValue &Out) {
  Type T = A.Ty;
  switch (Op) {
  case UnaryOp::Neg:
    Out = T.isFloat() ? makeFloat(T, -A.Float) : fromAPInt(T, -toAPInt(A));
    return FoldStatus::Constant;
  case UnaryOp::Not:
    Out = makeBool(!A.Int);
    return FoldStatus::Constant;
  case UnaryOp::BitNot:
    Out = fromAPInt(T, ~toAPInt(A));
    return FoldStatus::Constant;
  case UnaryOp::AddrOf:
    break;
  }
  return FoldStatus::NotConstant;
}

static bool compareFloats(BinaryOp Op, double X, double Y) {
  switch (Op) {
  case BinaryOp::Eq:
    return X == Y;
  case BinaryOp::Ne:
    return X != Y;
  case BinaryOp::Lt:
    return X < Y;
  case BinaryOp::Le:
    return X <= Y;
  case BinaryOp::Gt:
    return X > Y;
  case BinaryOp::Ge:
    return X >= Y;
  default:
    return false;
  }
}

static bool compareInts(BinaryOp Op, const APInt &X, const APInt &Y, bool Signed) {
  switch (Op) {
  case BinaryOp::Eq:
    return X == Y;
  case BinaryOp::Ne:
    return X != Y;
  case BinaryOp::Lt:
    return Signed ? X.slt(Y) : X.ult(Y);
  case BinaryOp::Le:
    return Signed ? X.sle(Y) : X.ule(Y);
  case BinaryOp::Gt:
    return Signed ? X.sgt(Y) : X.ugt(Y);
  case BinaryOp::Ge:
    return Signed ? X.sge(Y) : X.uge(Y);
  default:
    return false;
  }
}

/// One of + - * / (the only float operators that fold) in the precision F.
template <typename F> static F floatOp(BinaryOp Op, F A, F B) {
  switch (Op) {
  case BinaryOp::Add:
    return A + B;
  case BinaryOp::Sub:
    return A - B;
  case BinaryOp::Mul:
    return A * B;
  default:
    return A / B;
  }
}

/// Float arithmetic in the precision of \p T.
static double floatArith(BinaryOp Op, Type T, double X, double Y) {
  if (T.getBits() == 32)
    return floatOp<float>(Op, static_cast<float>(X), static_cast<float>(Y));
  return floatOp<double>(Op, X, Y);
}

/// The value of a signed or unsigned integer for a message.
static std::string intText(const APInt &A, bool Signed) {
  return Signed ? std::to_string(A.getSExtValue()) : std::to_string(A.getZExtValue());
}

namespace {
/// Folds one binary operator; reports division by zero and shift amounts
/// outside the type's width at \p Loc, and, when \p Required, integer
/// arithmetic whose exact result does not fit the type.
struct BinaryFolder {
  Checker &C;
  SourceLoc Loc;
  bool Required;

  /// Reports `X op Y` overflowing type \p T.
  FoldStatus overflow(BinaryOp Op, const APInt &X, const APInt &Y, bool Signed, Type T) {
    C.error(Loc, "integer overflow in constant expression: " + intText(X, Signed) + " " +
                     binaryOpSpelling(Op) + " " + intText(Y, Signed) + " does not fit in type " +
                     quote(T));
    return FoldStatus::Failed;
  }

  FoldStatus fold(BinaryOp Op, const ConstValue &L, const ConstValue &R, ConstValue &Out) {
    Type T = L.Ty;
    if (Op >= BinaryOp::Eq) {
      Out = makeBool(T.isFloat() ? compareFloats(Op, L.Float, R.Float)
                                 : compareInts(Op, toAPInt(L), toAPInt(R), T.isSignedInteger()));
      return FoldStatus::Constant;
    }
    if (T.isFloat()) {
      Out = makeFloat(T, floatArith(Op, T, L.Float, R.Float));
      return FoldStatus::Constant;
    }
    APInt X = toAPInt(L), Y = toAPInt(R);
    bool Signed = T.isSignedInteger();
    bool Overflow = false;
    switch (Op) {
    case BinaryOp::Add:
      X = Signed ? X.sadd_ov(Y, Overflow) : X.uadd_ov(Y, Overflow);
      break;
    case BinaryOp::Sub:
      X = Signed ? X.ssub_ov(Y, Overflow) : X.usub_ov(Y, Overflow);
      break;
    case BinaryOp::Mul:
      X = Signed ? X.smul_ov(Y, Overflow) : X.umul_ov(Y, Overflow);
      break;
    case BinaryOp::Div:
    case BinaryOp::Rem:
      if (Y.isZero()) {
        C.error(Loc, "division by zero in constant expression");
        return FoldStatus::Failed;
      }
      // sdiv/srem wrap: INT_MIN / -1 == INT_MIN (an overflow),
      // INT_MIN % -1 == 0 (exact).
      if (Op == BinaryOp::Div)
        X = Signed ? X.sdiv_ov(Y, Overflow) : X.udiv(Y);
      else
        X = Signed ? X.srem(Y) : X.urem(Y);
      break;
    case BinaryOp::Shl:
    case BinaryOp::Shr:
      if ((Signed && Y.isNegative()) || Y.uge(X.getBitWidth())) {
        C.error(Loc,
                "shift amount " +
                    (Signed ? std::to_string(Y.getSExtValue()) : std::to_string(Y.getZExtValue())) +
                    " is out of range for type " + quote(T) + " in constant expression");
        return FoldStatus::Failed;
      }
      if (Op == BinaryOp::Shl)
        X = X.shl(Y);
      else
        X = Signed ? X.ashr(Y) : X.lshr(Y);
      break;
    case BinaryOp::And:
    case BinaryOp::LAnd:
      X &= Y;
      break;
    case BinaryOp::Or:
    case BinaryOp::LOr:
      X |= Y;
      break;
    case BinaryOp::Xor:
      X ^= Y;
      break;
    default:
      break;
    }
    // The operands, for the message: X holds the wrapped result now.
    if (Overflow && Required)
      return overflow(Op, toAPInt(L), toAPInt(R), Signed, T);
    Out = fromAPInt(T, X);
    return FoldStatus::Constant;
  }
};
} // namespace

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

const Expr *Checker::findNonConstantNode(const Expr *E) {
  if (!E)
    return nullptr;
  switch (E->getKind()) {
  case Expr::IntLit:
  case Expr::FloatLit:
  case Expr::BoolLit:
  case Expr::Name:
    return nullptr;
  case Expr::Unary: {
    const auto *U = cast<UnaryExpr>(E);
    return U->Op == UnaryOp::AddrOf ? E : findNonConstantNode(U->Operand.get());
  }
  case Expr::Binary: {
    const auto *B = cast<BinaryExpr>(E);
    if (const Expr *L = findNonConstantNode(B->LHS.get()))
      return L;
    return findNonConstantNode(B->RHS.get());
  }
  case Expr::Cond: {
    const auto *Q = cast<CondExpr>(E);
    for (const Expr *Part : {Q->C.get(), Q->T.get(), Q->F.get()})
      if (const Expr *N = findNonConstantNode(Part))
        return N;
    return nullptr;
  }
  case Expr::Cast:
    return findNonConstantNode(cast<CastExpr>(E)->Operand.get());
  case Expr::Call:
  case Expr::Index:
  case Expr::Member:
    return E;
  }
  return E;
}

std::string Checker::describeNonConstant(const Expr &E) {
  if (const auto *N = dyn_cast<NameExpr>(&E)) {
    std::string Name = quote(N->Ident);
    if (!N->Decl)
      return Name + " is a builtin value, known only at run time";
    switch (N->Decl->Storage) {
    case StorageKind::Param:
      return Name + " is a parameter, known only at run time";
    case StorageKind::LoopIndex:
      return Name + " is a loop index, known only at run time";
    case StorageKind::Shared:
      return Name + (N->Decl->Ty.isArray() ? " is a shared array"
                                           : " is a shared variable, known only at run time");
    case StorageKind::Let:
    case StorageKind::Var:
      return Name + " is a local variable, known only at run time (a constant is declared "
                    "'const' at module level)";
    case StorageKind::Const:
      break;
    case StorageKind::Constant:
      return Name + " is constant memory, set by the host at run time";
    }
    return Name + " is not a constant";
  }
  switch (E.getKind()) {
  case Expr::Call:
    return "a call (" + quote(cast<CallExpr>(E).Callee) + ") is evaluated at run time";
  case Expr::Index:
    return "an element is read from memory at run time";
  case Expr::Member:
    return "a thread or block index is known only at run time";
  case Expr::Unary:
    return "an address ('&') is known only at run time";
  default:
    return "it is evaluated at run time";
  }
}

std::string Checker::notConstantMessage(const llvm::Twine &What, const Expr &E) {
  return (What + " must be a constant expression, but " + describeNonConstant(E) +
          "; a constant expression is made of literals, consts, operators, '?:' and 'as'")
      .str();
}

FoldStatus Checker::fold(const Expr &E, ConstValue &Out, const Expr *&Culprit, bool Required) {
  Type T = E.Ty;
  if (!T.isScalar())
    return FoldStatus::Failed;
  switch (E.getKind()) {
  case Expr::IntLit: {
    uint64_t V = cast<IntLitExpr>(E).Value;
    if (T.isFloat())
      Out = makeFloat(T, static_cast<double>(V)); // exact: checked on typing
    else
      Out = fromAPInt(T, APInt(64, V).trunc(intBits(T)));
    return FoldStatus::Constant;
  }
  case Expr::FloatLit:
    Out = makeFloat(T, cast<FloatLitExpr>(E).Value);
    return FoldStatus::Constant;
  case Expr::BoolLit:
    Out = makeBool(cast<BoolLitExpr>(E).Value);
    return FoldStatus::Constant;
  case Expr::Name: {
    const auto &N = cast<NameExpr>(E);
    auto It = N.Decl ? ConstOf.find(N.Decl) : ConstOf.end();
    if (It == ConstOf.end()) {
      Culprit = &E;
      return FoldStatus::NotConstant;
    }
    if (!It->second->Value)
      return FoldStatus::Failed;
    Out = *It->second->Value;
    return FoldStatus::Constant;
  }
  case Expr::Unary: {
    const auto &U = cast<UnaryExpr>(E);
    if (U.Op == UnaryOp::AddrOf) {
      Culprit = &E;
      return FoldStatus::NotConstant;
    }
    ConstValue A;
    FoldStatus S = fold(*U.Operand, A, Culprit, Required);
    if (S != FoldStatus::Constant)
      return S;
    // `-128i8` is one literal, checked when typed; `-(-128i8)` overflows.
    if (Required && U.Op == UnaryOp::Neg && T.isSignedInteger() && toAPInt(A).isMinSignedValue() &&
        !isa<IntLitExpr>(*U.Operand)) {
      error(U.getLoc(), "integer overflow in constant expression: -(" +
                            intText(toAPInt(A), /*Signed=*/true) + ") does not fit in type " +
                            quote(T));
      return FoldStatus::Failed;
    }
    return foldUnary(U.Op, A, Out);
  }
  case Expr::Binary: {
    const auto &B = cast<BinaryExpr>(E);
    ConstValue L, R;
    FoldStatus SL = fold(*B.LHS, L, Culprit, Required);
    if (SL == FoldStatus::NotConstant)
      return SL;
    FoldStatus SR = fold(*B.RHS, R, Culprit, Required);
    if (SL != FoldStatus::Constant || SR != FoldStatus::Constant)
      return SR == FoldStatus::NotConstant ? SR : FoldStatus::Failed;
    return BinaryFolder{*this, B.getLoc(), Required}.fold(B.Op, L, R, Out);
  }
  case Expr::Cond: {
    // Only the chosen side is evaluated, as at run time.
    const auto &Q = cast<CondExpr>(E);
    ConstValue C;
    FoldStatus S = fold(*Q.C, C, Culprit, Required);
    if (S != FoldStatus::Constant)
      return S;
    return fold(C.Int ? *Q.T : *Q.F, Out, Culprit, Required);
  }
  case Expr::Cast: {
    ConstValue A;
    FoldStatus S = fold(*cast<CastExpr>(E).Operand, A, Culprit, Required);
    if (S == FoldStatus::Constant)
      Out = castValue(A, T);
    return S;
  }
  case Expr::Call:
  case Expr::Index:
  case Expr::Member:
    Culprit = &E;
    return FoldStatus::NotConstant;
  }
  return FoldStatus::Failed;
}
