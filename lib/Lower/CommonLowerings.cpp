//===- CommonLowerings.cpp - Op lowerings every target shares -------------===//
//
// Part of gridjit. One small function per op: arithmetic, comparisons,
// casts, memory, atomics, selection and the integer and exactly-rounded
// float math that LLVM expresses the same way on every target (sqrt, fma,
// the roundings, abs, min, max, copysign, fdim, modf, the
// classifications). Targets
// register these in their constructors next to their own lowerings (thread
// indices, barriers, warp operations, transcendental math, shared memory).
//
// Semantics that C leaves undefined are defined here, the same on every
// target: integer division and remainder by zero give 0 and never trap
// (see lowerIntDivRem), shift amounts are taken modulo the width, and
// float → int conversions saturate (NaN → 0).
//
//===----------------------------------------------------------------------===//

#include "CommonLowerings.h"

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/IR/Intrinsics.h"
#include "llvm/TargetParser/Triple.h"

using namespace gridjit;
using llvm::Expected;
using llvm::Value;

namespace {

Value *op0(const OpArgs &A) { return A.Operands[0]; }
Value *op1(const OpArgs &A) { return A.Operands[1]; }

//===----------------------------------------------------------------------===//
// Arithmetic
//===----------------------------------------------------------------------===//

Expected<Value *> lowerAdd(LoweringContext &C, const OpArgs &A) {
  return A.OperandTy.isFloat() ? C.B.CreateFAdd(op0(A), op1(A)) : C.B.CreateAdd(op0(A), op1(A));
}
Expected<Value *> lowerSub(LoweringContext &C, const OpArgs &A) {
  return A.OperandTy.isFloat() ? C.B.CreateFSub(op0(A), op1(A)) : C.B.CreateSub(op0(A), op1(A));
}
Expected<Value *> lowerMul(LoweringContext &C, const OpArgs &A) {
  return A.OperandTy.isFloat() ? C.B.CreateFMul(op0(A), op1(A)) : C.B.CreateMul(op0(A), op1(A));
}

// Integer x / y and x % y never trap: a zero divisor gives 0, and for
// signed types MIN / -1 gives MIN (the wrapped quotient) and MIN % -1 gives
// 0. The divisor is made safe first so the division itself is defined.
Value *lowerIntDivRem(LoweringContext &C, const OpArgs &A, bool IsRem) {
  llvm::IRBuilder<> &B = C.B;
  Value *X = op0(A), *Y = op1(A);
  llvm::Type *Ty = X->getType();
  Value *Zero = llvm::ConstantInt::get(Ty, 0);
  Value *One = llvm::ConstantInt::get(Ty, 1);
  Value *IsZero = B.CreateICmpEQ(Y, Zero);
  if (!A.OperandTy.isSignedInteger()) {
    Value *SafeY = B.CreateSelect(IsZero, One, Y);
    Value *R = IsRem ? B.CreateURem(X, SafeY) : B.CreateUDiv(X, SafeY);
    return B.CreateSelect(IsZero, Zero, R);
  }
  // y == -1 is handled without dividing: x / -1 == 0 - x (wrapping),
  // x % -1 == 0.
  Value *IsMinusOne = B.CreateICmpEQ(Y, llvm::ConstantInt::getSigned(Ty, -1));
  Value *Special = B.CreateOr(IsZero, IsMinusOne);
  Value *SafeY = B.CreateSelect(Special, One, Y);
  Value *R = IsRem ? B.CreateSRem(X, SafeY) : B.CreateSDiv(X, SafeY);
  Value *MinusOneResult = IsRem ? Zero : B.CreateSub(Zero, X);
  return B.CreateSelect(IsZero, Zero, B.CreateSelect(IsMinusOne, MinusOneResult, R));
}

Expected<Value *> lowerDiv(LoweringContext &C, const OpArgs &A) {
  if (A.OperandTy.isFloat())
    return C.B.CreateFDiv(op0(A), op1(A));
  return lowerIntDivRem(C, A, /*IsRem=*/false);
}
Expected<Value *> lowerRem(LoweringContext &C, const OpArgs &A) {
  if (A.OperandTy.isFloat()) // not reachable from verified KIR; kept total
    return C.B.CreateFRem(op0(A), op1(A));
  return lowerIntDivRem(C, A, /*IsRem=*/true);
}

// Shift amounts are taken modulo the width (as on x86), so every shift has
// a defined result.
Value *shiftAmount(LoweringContext &C, Value *Amt) {
  unsigned Bits = Amt->getType()->getIntegerBitWidth();
  return C.B.CreateAnd(Amt, llvm::ConstantInt::get(Amt->getType(), Bits - 1));
}
Expected<Value *> lowerShl(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateShl(op0(A), shiftAmount(C, op1(A)));
}
Expected<Value *> lowerShr(LoweringContext &C, const OpArgs &A) {
  Value *Amt = shiftAmount(C, op1(A));
  return A.OperandTy.isSignedInteger() ? C.B.CreateAShr(op0(A), Amt) : C.B.CreateLShr(op0(A), Amt);
}
Expected<Value *> lowerAnd(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateAnd(op0(A), op1(A));
}
Expected<Value *> lowerOr(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateOr(op0(A), op1(A));
}
Expected<Value *> lowerXor(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateXor(op0(A), op1(A));
}

//===----------------------------------------------------------------------===//
// Comparisons: floats compare ordered, except != which is true for NaN (C).
//===----------------------------------------------------------------------===//

Value *compare(LoweringContext &C, const OpArgs &A, llvm::CmpInst::Predicate F,
               llvm::CmpInst::Predicate S, llvm::CmpInst::Predicate U) {
  if (A.OperandTy.isFloat())
    return C.B.CreateFCmp(F, op0(A), op1(A));
  bool Signed = A.OperandTy.isSignedInteger();
  return C.B.CreateICmp(Signed ? S : U, op0(A), op1(A));
}
using P = llvm::CmpInst::Predicate;
Expected<Value *> lowerEq(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_OEQ, P::ICMP_EQ, P::ICMP_EQ);
}
Expected<Value *> lowerNe(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_UNE, P::ICMP_NE, P::ICMP_NE);
}
Expected<Value *> lowerLt(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_OLT, P::ICMP_SLT, P::ICMP_ULT);
}
Expected<Value *> lowerLe(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_OLE, P::ICMP_SLE, P::ICMP_ULE);
}
Expected<Value *> lowerGt(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_OGT, P::ICMP_SGT, P::ICMP_UGT);
}
Expected<Value *> lowerGe(LoweringContext &C, const OpArgs &A) {
  return compare(C, A, P::FCMP_OGE, P::ICMP_SGE, P::ICMP_UGE);
}

//===----------------------------------------------------------------------===//
// Unary operators and casts
//===----------------------------------------------------------------------===//

Expected<Value *> lowerNeg(LoweringContext &C, const OpArgs &A) {
  return A.OperandTy.isFloat() ? C.B.CreateFNeg(op0(A)) : C.B.CreateNeg(op0(A));
}
Expected<Value *> lowerNot(LoweringContext &C, const OpArgs &A) { return C.B.CreateNot(op0(A)); }
Expected<Value *> lowerBitNot(LoweringContext &C, const OpArgs &A) { return C.B.CreateNot(op0(A)); }

// An f32 or f64 \p V rounded to bf16, to nearest, ties to even, subnormals
// kept. An f64 is first rounded to f32 to odd (toward zero, then the last
// bit set when inexact), so that the rounding to bf16 is the one rounding
// of the f64 (f32 has more than two bits beyond bf16's). From f32, NVPTX
// has an instruction (cvt.rn.bf16.f32, sm_80 and later); elsewhere integer
// operations round: LLVM lowers the fptrunc on x86 to AVX512-BF16's
// vcvtneps2bf16, which flushes subnormals to zero, or to __truncsfbf2,
// which a process may not have.
static Value *truncToBF16(LoweringContext &C, Value *V) {
  llvm::IRBuilder<> &B = C.B;
  if (V->getType()->isDoubleTy()) {
    Value *F = B.CreateFPTrunc(V, B.getFloatTy());
    Value *Back = B.CreateFPExt(F, B.getDoubleTy());
    Value *Bits = B.CreateBitCast(F, B.getInt32Ty());
    Value *RoundedUp = B.CreateFCmpOGT(B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Back),
                                       B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, V));
    Bits = B.CreateSelect(RoundedUp, B.CreateSub(Bits, B.getInt32(1)), Bits);
    Bits = B.CreateOr(Bits, B.CreateZExt(B.CreateFCmpONE(Back, V), B.getInt32Ty()));
    V = B.CreateBitCast(Bits, B.getFloatTy());
  }
  if (llvm::Triple(C.IR.getTargetTriple()).isNVPTX())
    return B.CreateFPTrunc(V, B.getBFloatTy());
  Value *Bits = B.CreateBitCast(V, B.getInt32Ty());
  Value *High = B.CreateLShr(Bits, 16);
  Value *Bias = B.CreateAdd(B.getInt32(0x7FFF), B.CreateAnd(High, 1));
  Value *Rounded = B.CreateLShr(B.CreateAdd(Bits, Bias), 16);
  Value *Quiet = B.CreateOr(High, 0x40);
  Value *R = B.CreateSelect(B.CreateFCmpUNO(V, V), Quiet, Rounded);
  return B.CreateBitCast(B.CreateTrunc(R, B.getInt16Ty()), B.getBFloatTy());
}

// `e as T` with the spec's semantics (docs/LangRef.md, "Types").
// A cast to a pointer to a struct or vector type that needs more alignment
// than the source's pointee has (`p as ptr<f32x4>` of a `ptr<f32>`): a
// misaligned address would make every access through the result undefined
// (NVPTX's ld.v4 needs 16 bytes' alignment), so it gives `null` instead,
// and an access through it faults as any through null does (LangRef,
// "Vector types"). An aligned address is kept as it is.
Value *alignedOrNull(LoweringContext &C, Value *V, unsigned Align) {
  llvm::IRBuilder<> &B = C.B;
  // null must stay a faulting address, not undefined behaviour (lowerNull).
  B.GetInsertBlock()->getParent()->addFnAttr(llvm::Attribute::NullPointerIsValid);
  Value *Low = B.CreateAnd(B.CreatePtrToInt(V, B.getInt64Ty()), B.getInt64(Align - 1));
  auto *Null = llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(V->getType()));
  return B.CreateSelect(B.CreateICmpEQ(Low, B.getInt64(0)), V, Null, "aligned");
}

Expected<Value *> lowerCast(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  Type From = A.OperandTy, To = A.ResultTy;
  Value *V = op0(A);
  // A pointer cast keeps the address space (the verifier checks it), and
  // LLVM's pointers have no element type: the address as it is.
  if (From.isPointer() && To.isPointer() && To.getAggregate() &&
      To.getPointeeType().getAlignInBytes() > From.getPointeeType().getAlignInBytes())
    return alignedOrNull(C, V, To.getPointeeType().getAlignInBytes());
  if (From == To || (From.isPointer() && To.isPointer()))
    return V;
  llvm::Type *DestTy = C.toLLVM(To);
  // f16 and bf16 (storage types) convert through f32, which holds each of
  // them exactly: every other conversion is then one of f32's, and the
  // result is rounded once. To them: from f32 and f64 by one fptrunc (one
  // rounding), from integers through f64 (exact up to 2^53 in magnitude).
  if (From.isScalar() && isStorageOnlyScalar(From.getScalarKind())) {
    V = B.CreateFPExt(V, B.getFloatTy());
    From = Type::getScalar(ScalarKind::F32);
    if (From == To)
      return V;
  }
  if (isStorageOnlyScalar(To.getScalarKind()) && !From.isFloat()) {
    V = From.isSignedInteger() ? B.CreateSIToFP(V, B.getDoubleTy())
                               : B.CreateUIToFP(V, B.getDoubleTy());
    From = Type::getScalar(ScalarKind::F64);
  }
  if (To.isScalar() && To.getScalarKind() == ScalarKind::BF16)
    return truncToBF16(C, V);
  if (From.isFloat() && To.isFloat())
    return B.CreateFPCast(V, DestTy);
  if (From.isFloat()) {
    // Rounds toward zero and saturates; NaN gives 0.
    llvm::Intrinsic::ID ID =
        To.isSignedInteger() ? llvm::Intrinsic::fptosi_sat : llvm::Intrinsic::fptoui_sat;
    return B.CreateIntrinsic(ID, {DestTy, V->getType()}, {V});
  }
  bool SrcSigned = From.isSignedInteger(); // bool extends as unsigned (0/1)
  if (To.isFloat())
    return SrcSigned ? B.CreateSIToFP(V, DestTy) : B.CreateUIToFP(V, DestTy);
  return B.CreateIntCast(V, DestTy, SrcSigned);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

// `null`: the null pointer of the type its context gave it. An access
// through it must fault (LangRef, section 2), but LLVM takes a load or
// store through a null pointer of address space 0 (every pointer on the
// host) for undefined behaviour and deletes the code around it, unless
// the function says null is an address like any other. The null pointer
// may reach any function of the module (a call's argument), so
// runDefaultPipeline gives every function the attribute once one has it.
Expected<Value *> lowerNull(LoweringContext &C, const OpArgs &A) {
  C.B.GetInsertBlock()->getParent()->addFnAttr(llvm::Attribute::NullPointerIsValid);
  return llvm::ConstantPointerNull::get(llvm::cast<llvm::PointerType>(C.toLLVM(A.ResultTy)));
}

Expected<Value *> lowerPtrOffset(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateGEP(C.elementMemType(A.OperandTy), op0(A), op1(A), "offset");
}

// The base is a pointer, or the address of an array; operand 1 is an i64.
Expected<Value *> lowerElementAddr(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateGEP(C.elementMemType(A.OperandTy), op0(A), op1(A), "elt");
}

// A struct or vector is one load or store of its LLVM type, at its
// alignment: NVPTX makes `ld.global.v4.f32` of an f32x4, the host a vector
// load.
Expected<Value *> lowerLoad(LoweringContext &C, const OpArgs &A) {
  if (A.ResultTy.isStruct())
    return C.B.CreateAlignedLoad(C.toLLVM(A.ResultTy), op0(A),
                                 llvm::Align(A.ResultTy.getAlignInBytes()));
  ScalarKind K = A.ResultTy.getScalarKind();
  Value *V = C.B.CreateLoad(C.memType(K), op0(A));
  if (K == ScalarKind::Bool)
    V = C.B.CreateICmpNE(V, C.B.getInt8(0));
  return V;
}

Expected<Value *> lowerStore(LoweringContext &C, const OpArgs &A) {
  Value *V = op1(A);
  if (A.ResultTy.isBool())
    V = C.B.CreateZExt(V, C.B.getInt8Ty());
  if (A.ResultTy.isStruct()) {
    C.B.CreateAlignedStore(V, op0(A), llvm::Align(A.ResultTy.getAlignInBytes()));
    return nullptr;
  }
  C.B.CreateStore(V, op0(A));
  return nullptr;
}

// `var a: [T; N];` is zero-filled every time the declaration runs.
Expected<Value *> lowerLocalArray(LoweringContext &C, const OpArgs &A) {
  llvm::Type *Ty = C.toLLVM(A.ResultTy);
  llvm::AllocaInst *Slot = C.createEntryAlloca(Ty, A.Var ? A.Var->Name : "array");
  const llvm::DataLayout &DL = C.IR.getDataLayout();
  C.B.CreateMemSet(Slot, C.B.getInt8(0), DL.getTypeAllocSize(Ty), Slot->getAlign());
  return Slot;
}

Expected<Value *> lowerCallFunction(LoweringContext &C, const OpArgs &A) {
  auto *Callee = llvm::cast<llvm::Function>(op0(A));
  return C.B.CreateCall(Callee, A.Operands.drop_front());
}

//===----------------------------------------------------------------------===//
// Atomics: relaxed (monotonic), returning the old value, in the scope the
// target gives the memory they update (LoweringTarget::getAtomicScope).
//===----------------------------------------------------------------------===//

Value *atomicRMW(LoweringContext &C, const OpArgs &A, llvm::AtomicRMWInst::BinOp Op) {
  return C.B.CreateAtomicRMW(Op, op0(A), op1(A), llvm::MaybeAlign(),
                             llvm::AtomicOrdering::Monotonic, C.T.getAtomicScope(A.Mem.Space));
}
Expected<Value *> lowerAtomicAdd(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A,
                   A.ResultTy.isFloat() ? llvm::AtomicRMWInst::FAdd : llvm::AtomicRMWInst::Add);
}
Expected<Value *> lowerAtomicSub(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A, llvm::AtomicRMWInst::Sub);
}
Expected<Value *> lowerAtomicExch(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A, llvm::AtomicRMWInst::Xchg);
}
Expected<Value *> lowerAtomicMin(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(
      C, A, A.ResultTy.isSignedInteger() ? llvm::AtomicRMWInst::Min : llvm::AtomicRMWInst::UMin);
}
Expected<Value *> lowerAtomicMax(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(
      C, A, A.ResultTy.isSignedInteger() ? llvm::AtomicRMWInst::Max : llvm::AtomicRMWInst::UMax);
}
Expected<Value *> lowerAtomicAnd(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A, llvm::AtomicRMWInst::And);
}
Expected<Value *> lowerAtomicOr(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A, llvm::AtomicRMWInst::Or);
}
Expected<Value *> lowerAtomicXor(LoweringContext &C, const OpArgs &A) {
  return atomicRMW(C, A, llvm::AtomicRMWInst::Xor);
}
Expected<Value *> lowerAtomicCas(LoweringContext &C, const OpArgs &A) {
  auto *I = C.B.CreateAtomicCmpXchg(
      op0(A), op1(A), A.Operands[2], llvm::MaybeAlign(), llvm::AtomicOrdering::Monotonic,
      llvm::AtomicOrdering::Monotonic, C.T.getAtomicScope(A.Mem.Space));
  return C.B.CreateExtractValue(I, 0, "old");
}

//===----------------------------------------------------------------------===//
// Selection and math that is exact (or exactly rounded) everywhere.
//===----------------------------------------------------------------------===//

Expected<Value *> lowerSelect(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateSelect(op0(A), op1(A), A.Operands[2]);
}

Value *unaryIntrinsic(LoweringContext &C, llvm::Intrinsic::ID ID, Value *V) {
  return C.B.CreateUnaryIntrinsic(ID, V);
}

Expected<Value *> lowerSqrt(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::sqrt, op0(A));
}
Expected<Value *> lowerFloor(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::floor, op0(A));
}
Expected<Value *> lowerCeil(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::ceil, op0(A));
}
// CUDA's round(): halfway cases away from zero.
Expected<Value *> lowerRound(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::round, op0(A));
}
Expected<Value *> lowerTrunc(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::trunc, op0(A));
}
Expected<Value *> lowerFma(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateIntrinsic(llvm::Intrinsic::fma, {op0(A)->getType()},
                             {op0(A), op1(A), A.Operands[2]});
}
Expected<Value *> lowerAbs(LoweringContext &C, const OpArgs &A) {
  if (A.ResultTy.isFloat())
    return unaryIntrinsic(C, llvm::Intrinsic::fabs, op0(A));
  // abs(MIN) is MIN (wrapping), not poison.
  return C.B.CreateBinaryIntrinsic(llvm::Intrinsic::abs, op0(A), C.B.getFalse());
}
// Floats: CUDA's fminf/fmaxf return the other operand when one is NaN.
Expected<Value *> lowerMin(LoweringContext &C, const OpArgs &A) {
  llvm::Intrinsic::ID ID = A.ResultTy.isFloat()           ? llvm::Intrinsic::minnum
                           : A.ResultTy.isSignedInteger() ? llvm::Intrinsic::smin
                                                          : llvm::Intrinsic::umin;
  return C.B.CreateBinaryIntrinsic(ID, op0(A), op1(A));
}
Expected<Value *> lowerMax(LoweringContext &C, const OpArgs &A) {
  llvm::Intrinsic::ID ID = A.ResultTy.isFloat()           ? llvm::Intrinsic::maxnum
                           : A.ResultTy.isSignedInteger() ? llvm::Intrinsic::smax
                                                          : llvm::Intrinsic::umax;
  return C.B.CreateBinaryIntrinsic(ID, op0(A), op1(A));
}
Expected<Value *> lowerCopysign(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, op0(A), op1(A));
}
// rint and nearbyint round halfway cases to even (the default rounding
// mode, the only one KIR has), and raise no exceptions KIR could observe.
Expected<Value *> lowerRint(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::rint, op0(A));
}
Expected<Value *> lowerNearbyint(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::nearbyint, op0(A));
}
// fdim(x, y): x - y when x > y, +0 when x <= y, NaN when either is NaN
// (the subtraction gives it).
Expected<Value *> lowerFdim(LoweringContext &C, const OpArgs &A) {
  Value *Le = C.B.CreateFCmpOLE(op0(A), op1(A));
  Value *Zero = llvm::ConstantFP::get(op0(A)->getType(), 0.0);
  return C.B.CreateSelect(Le, Zero, C.B.CreateFSub(op0(A), op1(A)));
}
// modf(x): the integral part is trunc(x); the fraction x - trunc(x) is
// exact, takes x's sign (modf(-3.0) = -0.0) and is ±0 for ±inf.
Expected<Value *> lowerModfInt(LoweringContext &C, const OpArgs &A) {
  return unaryIntrinsic(C, llvm::Intrinsic::trunc, op0(A));
}
Expected<Value *> lowerModfFrac(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  Value *X = op0(A);
  Value *Frac = B.CreateFSub(X, unaryIntrinsic(C, llvm::Intrinsic::trunc, X));
  Value *Inf = llvm::ConstantFP::getInfinity(X->getType());
  Value *IsInf = B.CreateFCmpOEQ(unaryIntrinsic(C, llvm::Intrinsic::fabs, X), Inf);
  Frac = B.CreateSelect(IsInf, llvm::ConstantFP::get(X->getType(), 0.0), Frac);
  return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, Frac, X);
}
// The classifications give bool.
Expected<Value *> lowerIsNan(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateFCmpUNO(op0(A), op0(A));
}
Expected<Value *> lowerIsInf(LoweringContext &C, const OpArgs &A) {
  Value *Abs = unaryIntrinsic(C, llvm::Intrinsic::fabs, op0(A));
  return C.B.CreateFCmpOEQ(Abs, llvm::ConstantFP::getInfinity(Abs->getType()));
}
Expected<Value *> lowerIsFinite(LoweringContext &C, const OpArgs &A) {
  Value *Abs = unaryIntrinsic(C, llvm::Intrinsic::fabs, op0(A));
  return C.B.CreateFCmpOLT(Abs, llvm::ConstantFP::getInfinity(Abs->getType()));
}
// signbit: the sign bit itself, so signbit(-0.0) and signbit(-nan) are true.
Expected<Value *> lowerSignbit(LoweringContext &C, const OpArgs &A) {
  llvm::Type *Ty = op0(A)->getType();
  Value *Bits = C.B.CreateBitCast(op0(A), C.B.getIntNTy(Ty->getPrimitiveSizeInBits()));
  return C.B.CreateICmpSLT(Bits, llvm::ConstantInt::get(Bits->getType(), 0));
}
// clz(0) is the width, as CUDA's __clz.
Expected<Value *> lowerClz(LoweringContext &C, const OpArgs &A) {
  Value *N = C.B.CreateBinaryIntrinsic(llvm::Intrinsic::ctlz, op0(A), C.B.getFalse());
  return C.B.CreateIntCast(N, C.B.getInt32Ty(), /*isSigned=*/false);
}
Expected<Value *> lowerPopc(LoweringContext &C, const OpArgs &A) {
  Value *N = C.B.CreateUnaryIntrinsic(llvm::Intrinsic::ctpop, op0(A));
  return C.B.CreateIntCast(N, C.B.getInt32Ty(), /*isSigned=*/false);
}
// brev(x): bit i of the result is bit (width - 1 - i) of x, as CUDA's __brev.
Expected<Value *> lowerBrev(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateUnaryIntrinsic(llvm::Intrinsic::bitreverse, op0(A));
}

} // namespace

llvm::Error gridjit::registerCommonLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit) {
  const LoweringEntry Table[] = {
      {Op::Add, lowerAdd},
      {Op::Sub, lowerSub},
      {Op::Mul, lowerMul},
      {Op::Div, lowerDiv},
      {Op::Rem, lowerRem},
      {Op::Shl, lowerShl},
      {Op::Shr, lowerShr},
      {Op::And, lowerAnd},
      {Op::Or, lowerOr},
      {Op::Xor, lowerXor},
      {Op::Eq, lowerEq},
      {Op::Ne, lowerNe},
      {Op::Lt, lowerLt},
      {Op::Le, lowerLe},
      {Op::Gt, lowerGt},
      {Op::Ge, lowerGe},
      {Op::Neg, lowerNeg},
      {Op::Not, lowerNot},
      {Op::BitNot, lowerBitNot},
      {Op::Cast, lowerCast},
      {Op::Null, lowerNull},
      {Op::PtrOffset, lowerPtrOffset},
      {Op::ElementAddr, lowerElementAddr},
      {Op::Load, lowerLoad},
      {Op::Store, lowerStore},
      {Op::LocalArray, lowerLocalArray},
      {Op::CallFunction, lowerCallFunction},
      {Op::BuiltinAtomicAdd, lowerAtomicAdd},
      {Op::BuiltinAtomicSub, lowerAtomicSub},
      {Op::BuiltinAtomicExch, lowerAtomicExch},
      {Op::BuiltinAtomicMin, lowerAtomicMin},
      {Op::BuiltinAtomicMax, lowerAtomicMax},
      {Op::BuiltinAtomicAnd, lowerAtomicAnd},
      {Op::BuiltinAtomicOr, lowerAtomicOr},
      {Op::BuiltinAtomicXor, lowerAtomicXor},
      {Op::BuiltinAtomicCas, lowerAtomicCas},
      {Op::BuiltinSelect, lowerSelect},
      {Op::BuiltinSqrt, lowerSqrt},
      {Op::BuiltinFloor, lowerFloor},
      {Op::BuiltinCeil, lowerCeil},
      {Op::BuiltinRound, lowerRound},
      {Op::BuiltinTrunc, lowerTrunc},
      {Op::BuiltinFma, lowerFma},
      {Op::BuiltinAbs, lowerAbs},
      {Op::BuiltinMin, lowerMin},
      {Op::BuiltinMax, lowerMax},
      {Op::BuiltinCopysign, lowerCopysign},
      {Op::BuiltinRint, lowerRint},
      {Op::BuiltinNearbyint, lowerNearbyint},
      {Op::BuiltinFdim, lowerFdim},
      {Op::BuiltinModfInt, lowerModfInt},
      {Op::BuiltinModfFrac, lowerModfFrac},
      {Op::BuiltinIsNan, lowerIsNan},
      {Op::BuiltinIsInf, lowerIsInf},
      {Op::BuiltinIsFinite, lowerIsFinite},
      {Op::BuiltinSignbit, lowerSignbit},
      {Op::BuiltinClz, lowerClz},
      {Op::BuiltinPopc, lowerPopc},
      {Op::BuiltinBrev, lowerBrev},
  };
  return R.addAll(Table, Omit);
}
