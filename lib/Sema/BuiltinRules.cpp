//===- BuiltinRules.cpp - KIR verifier: builtin function overloads --------===//
//
// Part of gridjit. The typing rules of the builtin functions, one table row
// per builtin: its shape (which arguments share the generic type T, which
// have a fixed type), the scalar types T may be, and the text that lists
// them when a call matches no overload.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;
using namespace gridjit::sema;

namespace {

/// How a builtin's arguments and result relate to its generic type T.
enum class Shape {
  NoArgs,    ///< `f()` -> void
  AtomicRMW, ///< `f(p: ptr<T>, v: T)` -> T
  AtomicCas, ///< `f(p: ptr<T>, expected: T, desired: T)` -> T
  Shuffle,   ///< `f(v: T, lane: i32)` -> T
  Vote,      ///< `f(b: bool)` -> bool
  Ballot,    ///< `f(b: bool)` -> u32
  Select,    ///< `f(c: bool, a: T, b: T)` -> T, T any scalar or pointer
  Unary,     ///< `f(x: T)` -> T
  Binary,    ///< `f(x: T, y: T)` -> T
  Ternary,   ///< `f(x: T, y: T, z: T)` -> T
  CountBits, ///< `f(x: T)` -> i32
};

/// A set of scalar kinds, one bit per ScalarKind.
using KindSet = uint16_t;
constexpr KindSet bit(ScalarKind K) { return KindSet(1u << static_cast<unsigned>(K)); }
constexpr KindSet Ints3264 =
    bit(ScalarKind::I32) | bit(ScalarKind::U32) | bit(ScalarKind::I64) | bit(ScalarKind::U64);
constexpr KindSet Floats = bit(ScalarKind::F32) | bit(ScalarKind::F64);
constexpr KindSet SignedInts =
    bit(ScalarKind::I8) | bit(ScalarKind::I16) | bit(ScalarKind::I32) | bit(ScalarKind::I64);
constexpr KindSet AllInts = SignedInts | bit(ScalarKind::U8) | bit(ScalarKind::U16) |
                            bit(ScalarKind::U32) | bit(ScalarKind::U64);

struct Rule {
  Shape S;
  KindSet Allowed;     ///< what T may be (unused for fixed shapes and select)
  const char *Accepts; ///< completes "no overload of 'f' for 'T'; ..."
};

constexpr const char *AtomicAll = "it takes pointers to i32, u32, i64, u64, f32 or f64";
constexpr const char *AtomicInt = "it takes integer pointers (i32, u32, i64, u64)";

Rule ruleFor(BuiltinFunc F) {
  switch (F) {
  case BuiltinFunc::SyncThreads:
  case BuiltinFunc::SyncWarp:
  case BuiltinFunc::GridSync:
  case BuiltinFunc::Fence:
  case BuiltinFunc::FenceBlock:
    return {Shape::NoArgs, 0, ""};
  case BuiltinFunc::AtomicAdd:
  case BuiltinFunc::AtomicExch:
    return {Shape::AtomicRMW, Ints3264 | Floats, AtomicAll};
  case BuiltinFunc::AtomicSub:
  case BuiltinFunc::AtomicMin:
  case BuiltinFunc::AtomicMax:
  case BuiltinFunc::AtomicAnd:
  case BuiltinFunc::AtomicOr:
  case BuiltinFunc::AtomicXor:
    return {Shape::AtomicRMW, Ints3264, AtomicInt};
  case BuiltinFunc::AtomicCas:
    return {Shape::AtomicCas, Ints3264, AtomicInt};
  case BuiltinFunc::Shfl:
  case BuiltinFunc::ShflUp:
  case BuiltinFunc::ShflDown:
  case BuiltinFunc::ShflXor:
    return {Shape::Shuffle, Ints3264 | Floats, "it takes i32, u32, i64, u64, f32 or f64"};
  case BuiltinFunc::VoteAny:
  case BuiltinFunc::VoteAll:
    return {Shape::Vote, 0, ""};
  case BuiltinFunc::Ballot:
    return {Shape::Ballot, 0, ""};
  case BuiltinFunc::Select:
    return {Shape::Select, 0, ""};
  case BuiltinFunc::Abs:
    return {Shape::Unary, Floats | SignedInts,
            "it takes f32, f64 or a signed integer (i8, i16, i32, i64)"};
  case BuiltinFunc::Pow:
    return {Shape::Binary, Floats, "it takes f32 or f64"};
  case BuiltinFunc::Min:
  case BuiltinFunc::Max:
    return {Shape::Binary, Floats | AllInts, "it takes integer or float types"};
  case BuiltinFunc::Fma:
    return {Shape::Ternary, Floats, "it takes f32 or f64"};
  case BuiltinFunc::Clz:
  case BuiltinFunc::Popc:
    return {Shape::CountBits, Ints3264, "it takes i32, u32, i64 or u64"};
  case BuiltinFunc::None:
    break;
  default: // the float math functions: sqrt ... trunc
    return {Shape::Unary, Floats, "it takes f32 or f64"};
  }
  return {Shape::NoArgs, 0, ""};
}

unsigned arity(Shape S) {
  switch (S) {
  case Shape::NoArgs:
    return 0;
  case Shape::Vote:
  case Shape::Ballot:
  case Shape::Unary:
  case Shape::CountBits:
    return 1;
  case Shape::AtomicRMW:
  case Shape::Shuffle:
  case Shape::Binary:
    return 2;
  case Shape::AtomicCas:
  case Shape::Select:
  case Shape::Ternary:
    return 3;
  }
  return 0;
}

bool allows(KindSet Set, Type T) { return T.isScalar() && (Set & bit(T.getScalarKind())); }

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
static Type atomicElementType(Checker &Ck, CallExpr &C, const Rule &R) {
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
  if (allows(R.Allowed, T))
    return T;
  Ck.error(startLoc(P),
           "no overload of " + quote(C.Callee) + " for " + quote(PT) + "; " + R.Accepts);
  return Type();
}

Type Checker::checkBuiltinCall(CallExpr &C, BuiltinFunc F, Type Hint) {
  C.Builtin = F;
  Rule R = ruleFor(F);
  if (C.Args.size() != arity(R.S)) {
    error(C.getLoc(), arityMessage(C.Callee, arity(R.S), C.Args.size()));
    for (ExprPtr &A : C.Args)
      checkValue(A.get(), C.getLoc());
    return Type();
  }
  Type Bool = Type::getScalar(ScalarKind::Bool);
  Type T;
  switch (R.S) {
  case Shape::NoArgs:
    if (F == BuiltinFunc::GridSync && CurFn)
      CallsGridSync.insert(CurFn);
    return Type::getVoid();
  case Shape::AtomicRMW:
  case Shape::AtomicCas: {
    T = atomicElementType(*this, C, R);
    bool OK = T.isValid();
    for (unsigned I = 1; I < C.Args.size(); ++I)
      OK &= checkArgAs(C, I, T).isValid();
    return OK ? T : Type();
  }
  case Shape::Vote:
  case Shape::Ballot:
    if (!checkArgAs(C, 0, Bool).isValid())
      return Type();
    return R.S == Shape::Vote ? Bool : Type::getScalar(ScalarKind::U32);
  case Shape::Select: {
    bool CondOK = checkArgAs(C, 0, Bool).isValid();
    T = inferGenericType(C, {1, 2}, Hint);
    return CondOK ? T : Type();
  }
  case Shape::Shuffle: {
    T = inferGenericType(C, {0}, Hint);
    bool LaneOK = checkArgAs(C, 1, Type::getScalar(ScalarKind::I32)).isValid();
    if (!LaneOK)
      return Type();
    break;
  }
  case Shape::Unary:
    T = inferGenericType(C, {0}, Hint);
    break;
  case Shape::CountBits:
    T = inferGenericType(C, {0}, Type());
    break;
  case Shape::Binary:
    T = inferGenericType(C, {0, 1}, Hint);
    break;
  case Shape::Ternary:
    T = inferGenericType(C, {0, 1, 2}, Hint);
    break;
  }
  if (!T.isValid())
    return Type();
  if (!allows(R.Allowed, T)) {
    error(C.getLoc(), "no overload of " + quote(C.Callee) + " for " + quote(T) + "; " + R.Accepts);
    return Type();
  }
  return R.S == Shape::CountBits ? Type::getScalar(ScalarKind::I32) : T;
}
