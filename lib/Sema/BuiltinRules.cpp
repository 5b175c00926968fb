//===- BuiltinRules.cpp - KIR verifier: builtin function overloads --------===//
//
// Part of gridjit. The typing rules of the builtin functions, from their
// rows in Builtins.def: the shape says which arguments share the generic
// type T and which have a fixed type, the types column what T may be. This
// file adds the text that lists those types when a call matches no
// overload.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;
using namespace gridjit::sema;

namespace {

/// For f16 and bf16, what to do instead (LangRef, section 2); else "".
std::string storageHint(Type T) {
  if (!T.isScalar() || !isStorageOnlyScalar(T.getScalarKind()))
    return "";
  return " (" + quote(T) + " is a storage type: convert it with 'as f32' first)";
}

/// Completes "no overload of 'f' for 'T'; ..." for a builtin whose T may be
/// \p Types. \p Pointer: the message names the pointer type (atomics).
const char *acceptsText(BuiltinTypes Types, bool Pointer) {
  switch (Types) {
  case BuiltinTypes::None:
  case BuiltinTypes::Any:
    return "";
  case BuiltinTypes::Int32_64:
    return Pointer ? "it takes integer pointers (i32, u32, i64, u64)"
                   : "it takes i32, u32, i64 or u64";
  case BuiltinTypes::Int32_64OrFloat:
    return Pointer ? "it takes pointers to i32, u32, i64, u64, f32 or f64"
                   : "it takes i32, u32, i64, u64, f32 or f64";
  case BuiltinTypes::Float:
    return "it takes f32 or f64";
  case BuiltinTypes::FloatOrSignedInt:
    return "it takes f32, f64 or a signed integer (i8, i16, i32, i64)";
  case BuiltinTypes::IntOrFloat:
    return "it takes integer or float types";
  }
  return "";
}

} // namespace

Type Checker::inferGenericType(CallExpr &C, llvm::ArrayRef<unsigned> Idx, Type Hint) {
  std::vector<Type> Types(C.Args.size());
  Type First;
  bool TypedInvalid = false, LiteralHasFloat = false;
  for (unsigned I : Idx) {
    Expr *A = C.Args[I].get();
    if (isUntypedLiteral(A)) {
      LiteralHasFloat |= containsFloatLit(A);
      continue;
    }
    Types[I] = checkValue(A, C.getLoc());
    TypedInvalid |= !Types[I].isValid();
    if (!First.isValid())
      First = Types[I];
  }
  // Literals adopt the first typed argument's type; with none, the context
  // type when it suits all of them, else their common default.
  Type LitTy = First;
  if (!LitTy.isValid() && !TypedInvalid)
    LitTy = hintUsable(LiteralHasFloat, Hint) ? Hint : defaultLiteralType(LiteralHasFloat);
  if (!LitTy.isValid())
    return Type();
  for (unsigned I : Idx)
    if (isUntypedLiteral(C.Args[I].get()))
      Types[I] = typeLiteral(*C.Args[I], LitTy);

  Type T;
  for (unsigned I : Idx) {
    if (!Types[I].isValid())
      return Type();
    if (!T.isValid()) {
      T = Types[I];
    } else if (Types[I] != T) {
      error(startLoc(C.Args[I]), "arguments of " + quote(C.Callee) +
                                     " must have the same type, found " + quote(T) + " and " +
                                     quote(Types[I]));
      return Type();
    }
  }
  return T;
}

// Atomics take their T from the pointer: ptr<T> or ptr<T, shared>.
static Type atomicElementType(Checker &Ck, CallExpr &C, const BuiltinFuncInfo &R) {
  Expr *P = C.Args[0].get();
  Type PT = Ck.checkValue(P, C.getLoc());
  if (!PT.isValid())
    return Type();
  if (!PT.isPointer()) {
    Ck.error(startLoc(P),
             "argument 1 of " + quote(C.Callee) + " must be a pointer, found " + quote(PT));
    return Type();
  }
  if (PT.getAddrSpace() == AddrSpace::Local) {
    Ck.error(startLoc(P),
             quote(C.Callee) + " needs a pointer to global or shared memory, found " + quote(PT));
    return Type();
  }
  Type T = Type::getScalar(PT.getScalarKind());
  if (allowsType(R.Types, T))
    return T;
  Ck.error(startLoc(P), "no overload of " + quote(C.Callee) + " for " + quote(PT) + "; " +
                            acceptsText(R.Types, /*Pointer=*/true) + storageHint(T));
  return Type();
}

Type Checker::checkBuiltinCall(CallExpr &C, BuiltinFunc F, Type Hint) {
  C.Builtin = F;
  const BuiltinFuncInfo &R = getBuiltinFuncInfo(F);
  if (R.Shape == BuiltinShape::Format)
    return checkPrintCall(C);
  unsigned Arity = getArity(R.Shape);
  if (C.Args.size() != Arity) {
    error(C.getLoc(), arityMessage(C.Callee, Arity, C.Args.size()));
    for (ExprPtr &A : C.Args)
      checkValue(A.get(), C.getLoc());
    return Type();
  }
  Type Bool = Type::getScalar(ScalarKind::Bool);
  Type T;
  switch (R.Shape) {
  case BuiltinShape::NoArgs:
    if (F == BuiltinFunc::GridSync && CurFn)
      CallsGridSync.insert(CurFn);
    return Type::getVoid();
  case BuiltinShape::AtomicRMW:
  case BuiltinShape::AtomicCas: {
    T = atomicElementType(*this, C, R);
    bool OK = T.isValid();
    for (unsigned I = 1; I < C.Args.size(); ++I)
      OK &= checkArgAs(C, I, T).isValid();
    return OK ? T : Type();
  }
  case BuiltinShape::Vote:
  case BuiltinShape::Ballot:
    if (!checkArgAs(C, 0, Bool).isValid())
      return Type();
    return R.Shape == BuiltinShape::Vote ? Bool : Type::getScalar(ScalarKind::U32);
  case BuiltinShape::Select: {
    bool CondOK = checkArgAs(C, 0, Bool).isValid();
    T = inferGenericType(C, {1, 2}, Hint);
    return CondOK ? T : Type();
  }
  case BuiltinShape::Shuffle: {
    T = inferGenericType(C, {0}, Hint);
    bool LaneOK = checkArgAs(C, 1, Type::getScalar(ScalarKind::I32)).isValid();
    if (!LaneOK)
      return Type();
    break;
  }
  case BuiltinShape::Unary:
    T = inferGenericType(C, {0}, Hint);
    break;
  case BuiltinShape::CountBits:
  case BuiltinShape::FloatClass:
    // The result's type says nothing about the operand's.
    T = inferGenericType(C, {0}, Type());
    break;
  case BuiltinShape::Ldexp: {
    T = inferGenericType(C, {0}, Hint);
    if (!checkArgAs(C, 1, Type::getScalar(ScalarKind::I32)).isValid())
      return Type();
    break;
  }
  case BuiltinShape::Binary:
    T = inferGenericType(C, {0, 1}, Hint);
    break;
  case BuiltinShape::Ternary:
    T = inferGenericType(C, {0, 1, 2}, Hint);
    break;
  case BuiltinShape::Format: // checkPrintCall, above
    return Type();
  }
  if (!T.isValid())
    return Type();
  if (!allowsType(R.Types, T)) {
    error(C.getLoc(), "no overload of " + quote(C.Callee) + " for " + quote(T) + "; " +
                          acceptsText(R.Types, /*Pointer=*/false) + storageHint(T));
    return Type();
  }
  if (R.Shape == BuiltinShape::CountBits)
    return Type::getScalar(ScalarKind::I32);
  return R.Shape == BuiltinShape::FloatClass ? Bool : T;
}
