//===- HostLowerings.cpp - The host target's own op lowerings -------------===//
//
// Part of gridjit. One small function per op that the host lowers
// differently from the common lowerings: builtin values (from the thread
// loops), shared memory (the block's buffer), local arrays (the frame for
// those that live across thread loops), barriers (divergence checks at
// block level), fences, warp operations (computed from the warp's operands
// in the frame) and libm math.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "../../Lower/CommonLowerings.h"
#include "gridjit/Support/Limits.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::Expected;
using llvm::Value;

namespace {

HostModuleLowering &state(LoweringContext &C) { return static_cast<HostLoweringContext &>(C).L; }

//===----------------------------------------------------------------------===//
// Builtin values
//===----------------------------------------------------------------------===//

Expected<Value *> lowerThreadIdx(LoweringContext &C, const OpArgs &A) {
  return state(C).threadValue(BuiltinValue::ThreadIdx, A.Field, A.Loc);
}
Expected<Value *> lowerBlockIdx(LoweringContext &C, const OpArgs &A) {
  return state(C).threadValue(BuiltinValue::BlockIdx, A.Field, A.Loc);
}
Expected<Value *> lowerBlockDim(LoweringContext &C, const OpArgs &A) {
  return state(C).threadValue(BuiltinValue::BlockDim, A.Field, A.Loc);
}
Expected<Value *> lowerGridDim(LoweringContext &C, const OpArgs &A) {
  return state(C).threadValue(BuiltinValue::GridDim, A.Field, A.Loc);
}
Expected<Value *> lowerPrint(LoweringContext &C, const OpArgs &A) { return state(C).lowerPrint(A); }
Expected<Value *> lowerLaneId(LoweringContext &C, const OpArgs &A) {
  return state(C).threadValue(BuiltinValue::LaneId, 0, A.Loc);
}
Expected<Value *> lowerWarpSize(LoweringContext &C, const OpArgs &) {
  return C.B.getInt32(limits::WarpSize);
}

//===----------------------------------------------------------------------===//
// Memory
//===----------------------------------------------------------------------===//

Expected<Value *> lowerSharedArray(LoweringContext &C, const OpArgs &A) {
  return state(C).sharedArray(*A.Var, A.Loc);
}
Expected<Value *> lowerDynamicShared(LoweringContext &C, const OpArgs &A) {
  return state(C).dynamicShared(A.Loc);
}

// `var a: [T; N];` is zero-filled every time the declaration runs. With an
// operand, the array lives there (a thread's array in the frame, or a
// large array's per-block copy); otherwise on the stack.
Expected<Value *> lowerLocalArray(LoweringContext &C, const OpArgs &A) {
  llvm::Type *Ty = C.toLLVM(A.ResultTy);
  const llvm::DataLayout &DL = C.IR.getDataLayout();
  if (!A.Operands.empty()) {
    Value *Addr = A.Operands[0];
    C.B.CreateMemSet(Addr, C.B.getInt8(0), DL.getTypeAllocSize(Ty),
                     llvm::MaybeAlign(DL.getABITypeAlign(Ty->getArrayElementType())));
    return Addr;
  }
  llvm::AllocaInst *Slot = C.createEntryAlloca(Ty, A.Var ? A.Var->Name : "array");
  C.B.CreateMemSet(Slot, C.B.getInt8(0), DL.getTypeAllocSize(Ty), Slot->getAlign());
  return Slot;
}

// `a[i]` (or `t[y][x]`) of a local array on the stack: an index outside the
// array is clamped to its last element, so a kernel's overrun stays in its own array
// and can never reach the saved registers, return addresses or scheduling
// state on the stack of the runtime's thread (docs/HostTarget.md). So is
// an index into a constant table or constant memory (a global): a read
// past it never reaches the JIT-ed module's other data. Arrays
// in block memory (shared, frame, block frame) are not clamped: that
// memory is the kernel's own, between guard pages. A constant index is
// checked by the front end; an index that LLVM proves in range (a loop
// over the array) folds the clamp away.
Expected<Value *> lowerElementAddr(LoweringContext &C, const OpArgs &A) {
  llvm::Type *ElemTy = C.elementMemType(A.OperandTy);
  Value *Index = A.Operands[1];
  if (A.OperandTy.isArray() && A.OperandTy.getArrayCount() != 0 &&
      (llvm::isa<llvm::AllocaInst>(A.Operands[0]->stripPointerCasts()) ||
       A.OperandTy.getAddrSpace() == AddrSpace::Constant)) {
    // A multi-dimensional array's index is the flat, row-major one
    // (StructuralLowering): the clamp keeps it inside the whole array.
    Value *Last = llvm::ConstantInt::get(Index->getType(), A.OperandTy.getArrayElementCount() - 1);
    Value *InRange = C.B.CreateICmpULE(Index, Last, "in.range");
    Index = C.B.CreateSelect(InRange, Index, Last, "index.clamped");
  }
  return C.B.CreateGEP(ElemTy, A.Operands[0], Index, "elt");
}

//===----------------------------------------------------------------------===//
// Synchronisation and fences
//===----------------------------------------------------------------------===//

Expected<Value *> lowerSyncThreads(LoweringContext &C, const OpArgs &A) {
  if (llvm::Error E = state(C).syncPoints().blockBarrier(A.Loc, BuiltinFunc::SyncThreads))
    return std::move(E);
  return nullptr;
}
Expected<Value *> lowerSyncWarp(LoweringContext &C, const OpArgs &A) {
  if (llvm::Error E = state(C).syncPoints().warpBarrier(A.Loc, BuiltinFunc::SyncWarp))
    return std::move(E);
  return nullptr;
}
Expected<Value *> lowerGridSync(LoweringContext &C, const OpArgs &A) {
  if (llvm::Error E = state(C).syncPoints().gridSync(A.Loc))
    return std::move(E);
  return nullptr;
}
// Blocks run on different worker threads: a device-scope fence is a full
// hardware fence.
Expected<Value *> lowerFence(LoweringContext &C, const OpArgs &) {
  C.B.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent);
  return nullptr;
}
// The threads of a block run on one worker thread, one after another: a
// block-scope fence only has to keep the compiler from moving memory
// accesses across it.
Expected<Value *> lowerFenceBlock(LoweringContext &C, const OpArgs &) {
  C.B.CreateFence(llvm::AtomicOrdering::SequentiallyConsistent,
                  C.getContext().getOrInsertSyncScopeID("singlethread"));
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Warp operations. The block-level code has stored every lane's operand;
// the operands here are: the address of lane 0's operand, (for shuffles)
// this thread's second operand, its lane and the width of its warp (32,
// or less for the last warp of a block whose size is not a multiple of
// 32). As in PTX's shfl.sync with a full mask and clamp 31: the lane or
// delta uses its low five bits, and a source lane outside the warp gives
// the thread's own value.
//===----------------------------------------------------------------------===//

enum class ShuffleKind { Idx, Up, Down, Xor };

Value *shuffle(LoweringContext &C, const OpArgs &A, ShuffleKind K) {
  llvm::IRBuilder<> &B = C.B;
  Value *Lanes = A.Operands[0], *Arg = A.Operands[1], *Lane = A.Operands[2], *Width = A.Operands[3];
  Value *Bits = B.CreateAnd(Arg, B.getInt32(limits::LaneMask));
  Value *Src, *Valid;
  switch (K) {
  case ShuffleKind::Idx:
    Src = Bits;
    Valid = B.CreateICmpULT(Src, Width);
    break;
  case ShuffleKind::Up:
    Src = B.CreateSub(Lane, Bits);
    Valid = B.CreateICmpUGE(Lane, Bits);
    break;
  case ShuffleKind::Down:
    Src = B.CreateAdd(Lane, Bits);
    Valid = B.CreateICmpULT(Src, Width);
    break;
  case ShuffleKind::Xor:
    Src = B.CreateXor(Lane, Bits);
    Valid = B.CreateICmpULT(Src, Width);
    break;
  }
  Src = B.CreateSelect(Valid, Src, Lane, "src.lane");
  llvm::Type *Ty = C.memType(A.ResultTy.getScalarKind());
  return B.CreateLoad(Ty, B.CreateInBoundsGEP(Ty, Lanes, B.CreateZExt(Src, B.getInt64Ty())));
}
Expected<Value *> lowerShfl(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, A, ShuffleKind::Idx);
}
Expected<Value *> lowerShflUp(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, A, ShuffleKind::Up);
}
Expected<Value *> lowerShflDown(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, A, ShuffleKind::Down);
}
Expected<Value *> lowerShflXor(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, A, ShuffleKind::Xor);
}

enum class VoteKind { Any, All, Ballot };

// The lanes' predicates are bytes (0 or 1); the vote loops over the warp.
Value *vote(LoweringContext &C, const OpArgs &A, VoteKind K) {
  llvm::IRBuilder<> &B = C.B;
  Value *Lanes = A.Operands[0], *Width = A.Operands[1];
  llvm::Function *F = B.GetInsertBlock()->getParent();
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  llvm::BasicBlock *Loop = llvm::BasicBlock::Create(C.getContext(), "vote", F);
  llvm::BasicBlock *Exit = llvm::BasicBlock::Create(C.getContext(), "vote.done", F);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *I = B.CreatePHI(B.getInt32Ty(), 2, "lane");
  llvm::PHINode *Acc = B.CreatePHI(B.getInt32Ty(), 2, "acc");
  I->addIncoming(B.getInt32(0), Pre);
  Acc->addIncoming(B.getInt32(K == VoteKind::All ? 1 : 0), Pre);
  Value *P = B.CreateZExt(
      B.CreateICmpNE(
          B.CreateLoad(B.getInt8Ty(),
                       B.CreateInBoundsGEP(B.getInt8Ty(), Lanes, B.CreateZExt(I, B.getInt64Ty()))),
          B.getInt8(0)),
      B.getInt32Ty());
  Value *Next;
  switch (K) {
  case VoteKind::Any:
    Next = B.CreateOr(Acc, P);
    break;
  case VoteKind::All:
    Next = B.CreateAnd(Acc, P);
    break;
  case VoteKind::Ballot:
    Next = B.CreateOr(Acc, B.CreateShl(P, I));
    break;
  }
  Value *INext = B.CreateAdd(I, B.getInt32(1), "", true, true);
  I->addIncoming(INext, Loop);
  Acc->addIncoming(Next, Loop);
  B.CreateCondBr(B.CreateICmpULT(INext, Width), Loop, Exit);
  B.SetInsertPoint(Exit);
  if (K == VoteKind::Ballot)
    return Next;
  return B.CreateICmpNE(Next, B.getInt32(0));
}
Expected<Value *> lowerVoteAny(LoweringContext &C, const OpArgs &A) {
  return vote(C, A, VoteKind::Any);
}
Expected<Value *> lowerVoteAll(LoweringContext &C, const OpArgs &A) {
  return vote(C, A, VoteKind::All);
}
Expected<Value *> lowerBallot(LoweringContext &C, const OpArgs &A) {
  return vote(C, A, VoteKind::Ballot);
}

//===----------------------------------------------------------------------===//
// Math: the C library's functions (glibc's are within 1 ulp for f32 and
// f64 where CUDA allows 1 to 4; see docs/HostTarget.md). They are declared
// without side effects: gridjit never reads errno.
//===----------------------------------------------------------------------===//

/// A call of the C library's \p Base (f64) or \p Base`f` (f32, by the
/// type of \p Ops[0]), whose parameters and result all have that type.
/// \p ArgMem: the function writes through its pointer operand (lgamma_r's
/// sign); otherwise it accesses no memory.
Value *callLibm(LoweringContext &C, llvm::StringRef Base, llvm::ArrayRef<Value *> Ops,
                bool ArgMem = false) {
  llvm::Type *Ty = Ops[0]->getType();
  // The f32 version of `lgamma_r` is `lgammaf_r`.
  llvm::StringRef Stem = Base, Suffix;
  if (Base.ends_with("_r")) {
    Stem = Base.drop_back(2);
    Suffix = "_r";
  }
  std::string Name = (Stem + (Ty->isFloatTy() ? "f" : "") + Suffix).str();
  std::vector<llvm::Type *> Params;
  for (Value *V : Ops)
    Params.push_back(V->getType());
  llvm::FunctionCallee Fn =
      C.IR.getOrInsertFunction(Name, llvm::FunctionType::get(Ty, Params, false));
  llvm::CallInst *Call = C.B.CreateCall(Fn, Ops);
  auto SetPure = [ArgMem](auto *X) {
    if (ArgMem)
      X->setOnlyAccessesArgMemory();
    else
      X->setDoesNotAccessMemory();
    X->setDoesNotThrow();
  };
  if (auto *F = llvm::dyn_cast<llvm::Function>(Fn.getCallee())) {
    SetPure(F);
    F->setWillReturn();
  }
  SetPure(Call);
  return Call;
}
Value *callLibm(LoweringContext &C, const OpArgs &A, llvm::StringRef Base) {
  return callLibm(C, Base, A.Operands);
}

#define GRIDJIT_LIBM(Fn, Base)                                                                     \
  Expected<Value *> Fn(LoweringContext &C, const OpArgs &A) { return callLibm(C, A, Base); }
GRIDJIT_LIBM(lowerExp, "exp")
GRIDJIT_LIBM(lowerExp2, "exp2")
GRIDJIT_LIBM(lowerExp10, "exp10")
GRIDJIT_LIBM(lowerExpm1, "expm1")
GRIDJIT_LIBM(lowerLog, "log")
GRIDJIT_LIBM(lowerLog2, "log2")
GRIDJIT_LIBM(lowerLog10, "log10")
GRIDJIT_LIBM(lowerLog1p, "log1p")
GRIDJIT_LIBM(lowerSin, "sin")
GRIDJIT_LIBM(lowerCos, "cos")
GRIDJIT_LIBM(lowerTan, "tan")
GRIDJIT_LIBM(lowerAsin, "asin")
GRIDJIT_LIBM(lowerAcos, "acos")
GRIDJIT_LIBM(lowerAtan, "atan")
GRIDJIT_LIBM(lowerAtan2, "atan2")
GRIDJIT_LIBM(lowerSinh, "sinh")
GRIDJIT_LIBM(lowerCosh, "cosh")
GRIDJIT_LIBM(lowerTanh, "tanh")
GRIDJIT_LIBM(lowerAsinh, "asinh")
GRIDJIT_LIBM(lowerAcosh, "acosh")
GRIDJIT_LIBM(lowerAtanh, "atanh")
GRIDJIT_LIBM(lowerErf, "erf")
GRIDJIT_LIBM(lowerErfc, "erfc")
GRIDJIT_LIBM(lowerTgamma, "tgamma")
GRIDJIT_LIBM(lowerFmod, "fmod")
GRIDJIT_LIBM(lowerRemainder, "remainder")
GRIDJIT_LIBM(lowerHypot, "hypot")
GRIDJIT_LIBM(lowerCbrt, "cbrt")
GRIDJIT_LIBM(lowerPow, "pow")
#undef GRIDJIT_LIBM

// lgamma through the reentrant lgamma_r: plain lgamma writes the global
// signgam, which the threads of a launch would race on.
Expected<Value *> lowerLgamma(LoweringContext &C, const OpArgs &A) {
  llvm::AllocaInst *Sign = C.createEntryAlloca(C.B.getInt32Ty(), "lgamma.sign");
  return callLibm(C, "lgamma_r", {A.Operands[0], Sign}, /*ArgMem=*/true);
}

// rcbrt(x) = 1 / cbrt(x); f32 computes it in f64 and rounds once.
Expected<Value *> lowerRcbrt(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  llvm::Type *Ty = A.Operands[0]->getType();
  Value *X = B.CreateFPExt(A.Operands[0], B.getDoubleTy());
  Value *R = B.CreateFDiv(llvm::ConstantFP::get(B.getDoubleTy(), 1.0), callLibm(C, "cbrt", {X}));
  return B.CreateFPCast(R, Ty);
}

// erfinv, which C's library lacks, computed in f64: a first guess from
// Giles' single-precision approximation ("Approximating the erfinv
// function", GPU Computing Gems, 2011) while w = -log(1 - y^2) < 20 (|y|
// below about 1 - 1e-9, where its fit holds), from the asymptotic form of
// erfc beyond; then Newton steps on erf(x) = |y| (for |y| <= 0.5) or on
// log erfc(x) = log(1 - |y|) (beyond, where 1 - |y| is exact and erf has
// no precision left). One step leaves f32 correctly rounded over the test
// sweep, three leave f64 within 1 ulp (docs/LangRef.md, "Accuracy").
Value *poly(llvm::IRBuilder<> &B, Value *W, std::initializer_list<double> Coeffs) {
  Value *P = nullptr;
  for (double K : Coeffs) {
    Value *Kv = llvm::ConstantFP::get(B.getDoubleTy(), K);
    P = P ? B.CreateFAdd(Kv, B.CreateFMul(P, W)) : Kv;
  }
  return P;
}
Expected<Value *> lowerErfinv(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  llvm::Type *Ty = A.Operands[0]->getType();
  auto K = [&](double D) { return llvm::ConstantFP::get(B.getDoubleTy(), D); };
  auto Libm = [&](llvm::StringRef F, Value *V) { return callLibm(C, F, {V}); };
  Value *Y = B.CreateFPExt(A.Operands[0], B.getDoubleTy());
  Value *Abs = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, Y);
  Value *Q = B.CreateFSub(K(1), Abs); // exact for |y| >= 0.5
  Value *W = B.CreateFNeg(Libm("log", B.CreateFMul(Q, B.CreateFAdd(K(1), Abs))));
  Value *Central = poly(B, B.CreateFSub(W, K(2.5)),
                        {2.81022636e-08, 3.43273939e-07, -3.5233877e-06, -4.39150654e-06,
                         0.00021858087, -0.00125372503, -0.00417768164, 0.246640727, 1.50140941});
  Value *Tail = poly(B, B.CreateFSub(B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, W), K(3)),
                     {-0.000200214257, 0.000100950558, 0.00134934322, -0.00367342844, 0.00573950773,
                      -0.0076224613, 0.00943887047, 1.00167406, 2.83297682});
  // x^2 = -log(q) - log(sqrt(pi) x), from erfc(x) ~ exp(-x^2) / (x sqrt(pi)).
  Value *LogQ = Libm("log", Q);
  Value *Far = B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, B.CreateFNeg(LogQ));
  for (int I = 0; I < 2; ++I)
    Far = B.CreateUnaryIntrinsic(
        llvm::Intrinsic::sqrt,
        B.CreateFSub(B.CreateFNeg(LogQ), Libm("log", B.CreateFMul(K(1.7724538509055159), Far))));
  Value *X =
      B.CreateSelect(B.CreateFCmpOLT(W, K(5)), B.CreateFMul(Central, Abs),
                     B.CreateSelect(B.CreateFCmpOLT(W, K(20)), B.CreateFMul(Tail, Abs), Far));
  Value *Small = B.CreateFCmpOLE(Abs, K(0.5));
  for (int I = 0, Steps = Ty->isFloatTy() ? 1 : 3; I < Steps; ++I) {
    // The derivative of erf: 2/sqrt(pi) exp(-x^2).
    Value *D = B.CreateFMul(K(1.1283791670955126), Libm("exp", B.CreateFNeg(B.CreateFMul(X, X))));
    Value *ErfStep = B.CreateFDiv(B.CreateFSub(Libm("erf", X), Abs), D);
    Value *Erfc = Libm("erfc", X);
    Value *LogStep = B.CreateFDiv(B.CreateFMul(B.CreateFSub(LogQ, Libm("log", Erfc)), Erfc), D);
    X = B.CreateFSub(X, B.CreateSelect(Small, ErfStep, LogStep));
  }
  // erfinv(±0) = ±0, erfinv(±1) = ±inf, NaN beyond (and for NaN).
  X = B.CreateSelect(B.CreateFCmpOEQ(Abs, K(0)), K(0), X);
  X = B.CreateSelect(B.CreateFCmpOEQ(Abs, K(1)), llvm::ConstantFP::getInfinity(B.getDoubleTy()), X);
  X = B.CreateSelect(B.CreateFCmpUGT(Abs, K(1)), llvm::ConstantFP::getNaN(B.getDoubleTy()), X);
  X = B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, X, Y);
  return B.CreateFPCast(X, Ty);
}

// ldexp and frexp are LLVM intrinsics; the backend calls the C library's
// ldexp[f]/frexp[f] where the CPU has no instruction for them.
Expected<Value *> lowerLdexp(LoweringContext &C, const OpArgs &A) {
  llvm::Type *Ty = A.Operands[0]->getType();
  return C.B.CreateIntrinsic(llvm::Intrinsic::ldexp, {Ty, C.B.getInt32Ty()}, A.Operands);
}
Value *hostFrexp(LoweringContext &C, const OpArgs &A, unsigned Result) {
  llvm::Type *Ty = A.Operands[0]->getType();
  Value *R = C.B.CreateIntrinsic(llvm::Intrinsic::frexp, {Ty, C.B.getInt32Ty()}, A.Operands);
  return C.B.CreateExtractValue(R, Result);
}
Expected<Value *> lowerFrexpMant(LoweringContext &C, const OpArgs &A) { return hostFrexp(C, A, 0); }
Expected<Value *> lowerFrexpExp(LoweringContext &C, const OpArgs &A) { return hostFrexp(C, A, 1); }

// rsqrt(x) = 1 / sqrt(x), both correctly rounded: within 1 ulp of the
// exact value (CUDA's rsqrtf allows 2).
Expected<Value *> lowerRsqrt(LoweringContext &C, const OpArgs &A) {
  Value *S = C.B.CreateUnaryIntrinsic(llvm::Intrinsic::sqrt, A.Operands[0]);
  return C.B.CreateFDiv(llvm::ConstantFP::get(S->getType(), 1.0), S);
}

} // namespace

llvm::Error gridjit::host::registerHostLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit,
                                                 bool Check) {
  // Checked code's lowerings replace those of the ops they check.
  std::vector<Op> HostOmit(Omit.begin(), Omit.end());
  if (Check) {
    std::vector<Op> Checked = checkedOps();
    HostOmit.insert(HostOmit.end(), Checked.begin(), Checked.end());
    if (llvm::Error E = registerCheckedLowerings(R))
      return E;
  }
  // The common local_array (frame) and element address (clamped) lowerings
  // are replaced by the host's.
  std::vector<Op> CommonOmit = HostOmit;
  CommonOmit.push_back(Op::LocalArray);
  CommonOmit.push_back(Op::ElementAddr);
  if (llvm::Error E = registerCommonLowerings(R, CommonOmit))
    return E;
  const LoweringEntry Table[] = {
      {Op::ThreadIdx, lowerThreadIdx},
      {Op::BlockIdx, lowerBlockIdx},
      {Op::BlockDim, lowerBlockDim},
      {Op::GridDim, lowerGridDim},
      {Op::LaneId, lowerLaneId},
      {Op::WarpSize, lowerWarpSize},
      {Op::LocalArray, lowerLocalArray},
      {Op::ElementAddr, lowerElementAddr},
      // 2: the artifact's KernelInfo::StaticSharedBytes is the SharedLayout
      // (version 1's cached artifacts carry the unpadded sum).
      {Op::SharedArray, lowerSharedArray, 2},
      {Op::DynamicShared, lowerDynamicShared},
      {Op::BuiltinSyncThreads, lowerSyncThreads},
      {Op::BuiltinSyncWarp, lowerSyncWarp},
      {Op::BuiltinGridSync, lowerGridSync},
      {Op::BuiltinFence, lowerFence},
      {Op::BuiltinFenceBlock, lowerFenceBlock},
      {Op::BuiltinShfl, lowerShfl},
      {Op::BuiltinShflUp, lowerShflUp},
      {Op::BuiltinShflDown, lowerShflDown},
      {Op::BuiltinShflXor, lowerShflXor},
      {Op::BuiltinVoteAny, lowerVoteAny},
      {Op::BuiltinVoteAll, lowerVoteAll},
      {Op::BuiltinBallot, lowerBallot},
      {Op::BuiltinRsqrt, lowerRsqrt},
      {Op::BuiltinExp, lowerExp},
      {Op::BuiltinExp2, lowerExp2},
      {Op::BuiltinLog, lowerLog},
      {Op::BuiltinLog2, lowerLog2},
      {Op::BuiltinLog10, lowerLog10},
      {Op::BuiltinSin, lowerSin},
      {Op::BuiltinCos, lowerCos},
      {Op::BuiltinTan, lowerTan},
      {Op::BuiltinTanh, lowerTanh},
      {Op::BuiltinPow, lowerPow},
      {Op::BuiltinExp10, lowerExp10},
      {Op::BuiltinExpm1, lowerExpm1},
      {Op::BuiltinLog1p, lowerLog1p},
      {Op::BuiltinAsin, lowerAsin},
      {Op::BuiltinAcos, lowerAcos},
      {Op::BuiltinAtan, lowerAtan},
      {Op::BuiltinAtan2, lowerAtan2},
      {Op::BuiltinSinh, lowerSinh},
      {Op::BuiltinCosh, lowerCosh},
      {Op::BuiltinAsinh, lowerAsinh},
      {Op::BuiltinAcosh, lowerAcosh},
      {Op::BuiltinAtanh, lowerAtanh},
      {Op::BuiltinErf, lowerErf},
      {Op::BuiltinErfc, lowerErfc},
      {Op::BuiltinErfinv, lowerErfinv},
      {Op::BuiltinLgamma, lowerLgamma},
      {Op::BuiltinTgamma, lowerTgamma},
      {Op::BuiltinFmod, lowerFmod},
      {Op::BuiltinRemainder, lowerRemainder},
      {Op::BuiltinHypot, lowerHypot},
      {Op::BuiltinCbrt, lowerCbrt},
      {Op::BuiltinRcbrt, lowerRcbrt},
      {Op::BuiltinLdexp, lowerLdexp},
      {Op::BuiltinFrexpMant, lowerFrexpMant},
      {Op::BuiltinFrexpExp, lowerFrexpExp},
      {Op::BuiltinPrint, lowerPrint},
  };
  return R.addAll(Table, HostOmit);
}

//===----------------------------------------------------------------------===//
// The state those lowerings read
//===----------------------------------------------------------------------===//

Expected<Value *> HostModuleLowering::threadValue(BuiltinValue V, unsigned Field, SourceLoc Loc) {
  Value *R = nullptr;
  switch (V) {
  case BuiltinValue::ThreadIdx:
    R = Field < 3 ? Cur->Env.Tid[Field] : nullptr;
    break;
  case BuiltinValue::BlockIdx:
    R = Field < 3 ? Cur->Env.Bid[Field] : nullptr;
    break;
  case BuiltinValue::BlockDim:
    R = Field < 3 ? Cur->Env.BDim[Field] : nullptr;
    break;
  case BuiltinValue::GridDim:
    R = Field < 3 ? Cur->Env.GDim[Field] : nullptr;
    break;
  case BuiltinValue::LaneId:
    R = Cur->Env.Linear ? B.CreateAnd(Cur->Env.Linear, B.getInt32(limits::LaneMask), "lane_id")
                        : nullptr;
    break;
  case BuiltinValue::WarpSize: // a constant, lowered by lowerWarpSize
  case BuiltinValue::Null:     // a constant, lowered by lowerNull
  case BuiltinValue::None:
    break;
  }
  if (!R)
    return Ctx.error(Loc, "internal error: '" + llvm::Twine(builtinValueName(V)) +
                              "' is not available here");
  return R;
}

Expected<Value *> HostModuleLowering::sharedArray(const VarDecl &V, SourceLoc Loc) {
  auto It = Cur->SharedOffsets.find(&V);
  if (!Cur->SharedBase || It == Cur->SharedOffsets.end())
    return Ctx.error(Loc, "internal error: shared array '" + llvm::Twine(V.Name) + "' not placed");
  return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Cur->SharedBase, It->second, V.Name);
}

Expected<Value *> HostModuleLowering::dynamicShared(SourceLoc Loc) {
  if (!Cur->SharedBase)
    return Ctx.error(Loc, "internal error: dynamic shared memory outside a kernel");
  return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Cur->SharedBase, Cur->StaticSharedBytes,
                                      "dynamic.shared");
}
