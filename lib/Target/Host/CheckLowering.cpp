//===- CheckLowering.cpp - Checked code: the runtime's checks, inline -----===//
//
// Part of gridjit. Checked code (HostTargetOptions::Check, docs/Check.md)
// is the host target's code with calls of the checker in the host runtime
// (gridjit/Target/HostABI.h) through the BlockContext, each with a
// constant CheckSite that says where it is and what it does:
//
// - every Load, Store and atomic of global or (static or dynamic) shared
//   memory calls CheckAccess first and accesses the address it returns
//   (the runtime's scratch for an access it refused); a store passes the
//   bytes it stores. A thread's own local memory and constant memory are
//   not accesses the checker needs;
// - a local or constant array's index out of range, an integer division
//   by zero or MIN / -1, a shift amount out of range and a warp shuffle
//   from a lane a partial warp does not have call CheckReport, and then
//   do what unchecked code does (docs/LangRef.md defines it);
// - sync_threads() and sync_warp() call CheckSync at block level
//   (SyncPoints.cpp).
//
// The lowerings here wrap those of unchecked code: they compute the checked
// operands and call the unchecked lowering of the same op, so that the two
// compute the same.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "../SharedLayout.h"
#include "PrivateParams.h"
#include "SharedForms.h"

#include "gridjit/Support/Limits.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/IR/Constants.h"
#include "llvm/Support/MathExtras.h"

#include <cstddef>

using namespace gridjit;
using namespace gridjit::host;
using llvm::Expected;
using llvm::Value;

static_assert(offsetof(hostabi::CheckSite, Kind) == 40 &&
                  offsetof(hostabi::CheckSite, Param) == 56 &&
                  offsetof(hostabi::CheckSite, FastSlot) == 60 &&
                  offsetof(hostabi::CheckSite, Memory) == 64 &&
                  offsetof(hostabi::CheckSite, SharedBytes) == 80 &&
                  sizeof(hostabi::CheckSite) == 88,
              "checkSite lays the constant out as LLVM's natural struct layout");

namespace {

HostModuleLowering &state(LoweringContext &C) { return static_cast<HostLoweringContext &>(C).L; }

/// Unchecked code's lowering of \p O, which a checked lowering calls with
/// its checked operands (a registry of its own, made once).
LowerFn unchecked(Op O) {
  static LoweringRegistry Unchecked("host");
  static const bool Filled = [] {
    llvm::cantFail(registerHostLowerings(Unchecked, {}, /*Check=*/false));
    Unchecked.freeze();
    return true;
  }();
  (void)Filled;
  return Unchecked.lookup(O);
}

/// The value of \p V (an integer of KIR type \p Ty) as an i64: signed
/// types sign-extended.
Value *toI64(llvm::IRBuilder<> &B, Value *V, Type Ty) {
  return Ty.isSignedInteger() ? B.CreateSExtOrTrunc(V, B.getInt64Ty())
                              : B.CreateZExtOrTrunc(V, B.getInt64Ty());
}

/// The bytes of one element of what \p Mem names (a pointer's pointee, an
/// array's element), \p Accessed's when it names nothing.
uint64_t elementBytes(const MemoryRef &Mem, Type Accessed) {
  if (const VarDecl *V = Mem.Var) {
    if (V->Ty.isPointer())
      return V->Ty.getPointeeType().getSizeInBytes();
    if (V->Ty.isArray())
      return V->Ty.getElementBytes();
    return V->Ty.getSizeInBytes();
  }
  return Accessed.getSizeInBytes();
}

//===----------------------------------------------------------------------===//
// Accesses
//===----------------------------------------------------------------------===//

/// Calls unchecked code's lowering of \p O with operand 0 replaced.
Expected<Value *> withAddress(LoweringContext &C, Op O, const OpArgs &A, Value *Addr) {
  llvm::SmallVector<Value *, 3> Ops(A.Operands.begin(), A.Operands.end());
  Ops[0] = Addr;
  OpArgs Checked = A;
  Checked.Operands = Ops;
  return unchecked(O)(C, Checked);
}

Expected<Value *> lowerLoad(LoweringContext &C, const OpArgs &A) {
  return withAddress(C, Op::Load, A, state(C).checkAccess(A, hostabi::CheckLoad, "load"));
}
Expected<Value *> lowerStore(LoweringContext &C, const OpArgs &A) {
  return withAddress(C, Op::Store, A,
                     state(C).checkAccess(A, hostabi::CheckStore, "store", A.Operands[1]));
}

template <Op O> constexpr const char *atomicName();
#define GRIDJIT_CHECKED_ATOMIC(OpName, Spelling)                                                   \
  template <> constexpr const char *atomicName<Op::OpName>() { return Spelling; }
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicAdd, "atomic_add")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicSub, "atomic_sub")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicExch, "atomic_exch")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicMin, "atomic_min")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicMax, "atomic_max")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicAnd, "atomic_and")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicOr, "atomic_or")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicXor, "atomic_xor")
GRIDJIT_CHECKED_ATOMIC(BuiltinAtomicCas, "atomic_cas")
#undef GRIDJIT_CHECKED_ATOMIC

template <Op O> Expected<Value *> lowerAtomic(LoweringContext &C, const OpArgs &A) {
  return withAddress(C, O, A, state(C).checkAccess(A, hostabi::CheckAtomic, atomicName<O>()));
}

// `a[i]` of a local or constant array: an index out of range is reported,
// then clamped as in unchecked code (there only for arrays on the stack
// and in constant memory; here for every local array, so that a launch
// that goes on after the report stays inside the array).
Expected<Value *> lowerElementAddr(LoweringContext &C, const OpArgs &A) {
  const Type &Ty = A.OperandTy;
  if (!Ty.isArray() || Ty.getArrayCount() == 0 ||
      (Ty.getAddrSpace() != AddrSpace::Local && Ty.getAddrSpace() != AddrSpace::Constant))
    return unchecked(Op::ElementAddr)(C, A);
  llvm::IRBuilder<> &B = C.B;
  bool Constant = Ty.getAddrSpace() == AddrSpace::Constant;
  uint64_t Count = Ty.getArrayElementCount();
  Value *Index = A.Operands[1];
  Value *Last = llvm::ConstantInt::get(Index->getType(), Count - 1);
  Value *InRange = B.CreateICmpULE(Index, Last, "in.range");
  uint64_t Elem = Ty.getElementBytes();
  state(C).checkReport(B.CreateNot(InRange),
                       state(C).checkSite(A.Loc, Constant ? "constant array" : "local array",
                                          hostabi::CheckLocalIndex, hostabi::CheckNotMemory, Elem,
                                          Elem, A.Mem),
                       B.CreateSExtOrTrunc(Index, B.getInt64Ty()), B.getInt64(Count));
  Value *Ops[] = {A.Operands[0], B.CreateSelect(InRange, Index, Last, "index.clamped")};
  OpArgs Clamped = A;
  Clamped.Operands = Ops;
  return unchecked(Op::ElementAddr)(C, Clamped);
}

//===----------------------------------------------------------------------===//
// Undefined operations (integers; vector operands are not checked)
//===----------------------------------------------------------------------===//

/// The site of operator \p What on \p A's operands.
llvm::Constant *operatorSite(LoweringContext &C, const OpArgs &A, llvm::StringRef What,
                             uint32_t Kind) {
  uint64_t Bytes = A.OperandTy.getSizeInBytes();
  return state(C).checkSite(A.Loc, What, Kind, hostabi::CheckNotMemory, Bytes, Bytes, MemoryRef());
}

bool isCheckedInteger(const OpArgs &A) {
  return A.OperandTy.isInteger() && A.Operands[0]->getType()->isIntegerTy();
}

Expected<Value *> lowerDivRem(LoweringContext &C, const OpArgs &A, Op O, llvm::StringRef What) {
  if (isCheckedInteger(A)) {
    llvm::IRBuilder<> &B = C.B;
    Value *X = A.Operands[0], *Y = A.Operands[1];
    llvm::Type *Ty = X->getType();
    state(C).checkReport(B.CreateICmpEQ(Y, llvm::ConstantInt::get(Ty, 0)),
                         operatorSite(C, A, What, hostabi::CheckDivByZero),
                         toI64(B, X, A.OperandTy), B.getInt64(0));
    if (A.OperandTy.isSignedInteger()) {
      unsigned Bits = Ty->getIntegerBitWidth();
      Value *Overflow = B.CreateAnd(
          B.CreateICmpEQ(X, llvm::ConstantInt::get(Ty, llvm::APInt::getSignedMinValue(Bits))),
          B.CreateICmpEQ(Y, llvm::ConstantInt::getSigned(Ty, -1)));
      state(C).checkReport(Overflow, operatorSite(C, A, What, hostabi::CheckDivOverflow),
                           toI64(B, X, A.OperandTy), B.getInt64(~uint64_t(0)));
    }
  }
  return unchecked(O)(C, A);
}
Expected<Value *> lowerDiv(LoweringContext &C, const OpArgs &A) {
  return lowerDivRem(C, A, Op::Div, "/");
}
Expected<Value *> lowerRem(LoweringContext &C, const OpArgs &A) {
  return lowerDivRem(C, A, Op::Rem, "%");
}

// An amount that is negative (signed) or not below the width is, as an
// unsigned number, not below the width.
Expected<Value *> lowerShift(LoweringContext &C, const OpArgs &A, Op O, llvm::StringRef What) {
  if (isCheckedInteger(A)) {
    llvm::IRBuilder<> &B = C.B;
    Value *Amt = A.Operands[1];
    unsigned Bits = A.Operands[0]->getType()->getIntegerBitWidth();
    state(C).checkReport(B.CreateICmpUGE(Amt, llvm::ConstantInt::get(Amt->getType(), Bits)),
                         operatorSite(C, A, What, hostabi::CheckShiftAmount),
                         toI64(B, Amt, A.OperandTy), B.getInt64(Bits));
  }
  return unchecked(O)(C, A);
}
Expected<Value *> lowerShl(LoweringContext &C, const OpArgs &A) {
  return lowerShift(C, A, Op::Shl, "<<");
}
Expected<Value *> lowerShr(LoweringContext &C, const OpArgs &A) {
  return lowerShift(C, A, Op::Shr, ">>");
}

//===----------------------------------------------------------------------===//
// Warp shuffles. Operands as in HostLowerings.cpp: lane 0's operand, the
// lane or delta, this thread's lane, the warp's width. A source lane below
// 32 (the full mask's clamp) that the warp does not have (a partial last
// warp) is reported; shfl_up never reads past the thread's own lane.
//===----------------------------------------------------------------------===//

template <Op O> Expected<Value *> lowerShuffle(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  Value *Arg = A.Operands[1], *Lane = A.Operands[2], *Width = A.Operands[3];
  Value *Bits = B.CreateAnd(Arg, B.getInt32(limits::LaneMask));
  Value *Src = nullptr;
  const char *What = "";
  switch (O) {
  case Op::BuiltinShfl:
    Src = Bits, What = "shfl()";
    break;
  case Op::BuiltinShflDown:
    Src = B.CreateAdd(Lane, Bits), What = "shfl_down()";
    break;
  case Op::BuiltinShflXor:
    Src = B.CreateXor(Lane, Bits), What = "shfl_xor()";
    break;
  default:
    break;
  }
  if (Src) {
    Value *Missing = B.CreateAnd(B.CreateICmpUGE(Src, Width),
                                 B.CreateICmpULT(Src, B.getInt32(limits::WarpSize)));
    uint64_t Bytes = A.ResultTy.getSizeInBytes();
    state(C).checkReport(Missing,
                         state(C).checkSite(A.Loc, What, hostabi::CheckWarpLane,
                                            hostabi::CheckNotMemory, Bytes, Bytes, MemoryRef()),
                         B.CreateZExt(Src, B.getInt64Ty()), B.CreateZExt(Width, B.getInt64Ty()));
  }
  return unchecked(O)(C, A);
}

const LoweringEntry CheckedTable[] = {
    {Op::Load, lowerLoad},
    {Op::Store, lowerStore},
    {Op::ElementAddr, lowerElementAddr},
    {Op::BuiltinAtomicAdd, lowerAtomic<Op::BuiltinAtomicAdd>},
    {Op::BuiltinAtomicSub, lowerAtomic<Op::BuiltinAtomicSub>},
    {Op::BuiltinAtomicExch, lowerAtomic<Op::BuiltinAtomicExch>},
    {Op::BuiltinAtomicMin, lowerAtomic<Op::BuiltinAtomicMin>},
    {Op::BuiltinAtomicMax, lowerAtomic<Op::BuiltinAtomicMax>},
    {Op::BuiltinAtomicAnd, lowerAtomic<Op::BuiltinAtomicAnd>},
    {Op::BuiltinAtomicOr, lowerAtomic<Op::BuiltinAtomicOr>},
    {Op::BuiltinAtomicXor, lowerAtomic<Op::BuiltinAtomicXor>},
    {Op::BuiltinAtomicCas, lowerAtomic<Op::BuiltinAtomicCas>},
    {Op::Div, lowerDiv},
    {Op::Rem, lowerRem},
    {Op::Shl, lowerShl},
    {Op::Shr, lowerShr},
    {Op::BuiltinShfl, lowerShuffle<Op::BuiltinShfl>},
    {Op::BuiltinShflDown, lowerShuffle<Op::BuiltinShflDown>},
    {Op::BuiltinShflXor, lowerShuffle<Op::BuiltinShflXor>},
};

} // namespace

std::vector<Op> gridjit::host::checkedOps() {
  std::vector<Op> Ops;
  for (const LoweringEntry &E : CheckedTable)
    Ops.push_back(E.O);
  return Ops;
}

llvm::Error gridjit::host::registerCheckedLowerings(LoweringRegistry &R) {
  return R.addAll(CheckedTable);
}

//===----------------------------------------------------------------------===//
// The calls
//===----------------------------------------------------------------------===//

llvm::Constant *HostModuleLowering::checkSite(SourceLoc Loc, llvm::StringRef What, uint32_t Kind,
                                              uint32_t Space, uint64_t Bytes, uint64_t ElemBytes,
                                              const MemoryRef &Mem) {
  // The parameter: a kernel's (never assigned: a `var` parameter's uses
  // name its local copy).
  int32_t Param = -1;
  uint64_t SharedOffset = 0, SharedBytes = 0;
  if (const VarDecl *V = Mem.Var) {
    if (Cur->Kernel && V->Storage == StorageKind::Param)
      for (size_t I = 0; I < Cur->Kernel->Params.size(); ++I)
        if (Cur->Kernel->Params[I].get() == V)
          Param = static_cast<int32_t>(I);
    if (Space == hostabi::CheckDynamicShared) {
      SharedOffset = Cur->StaticSharedBytes;
    } else if (Space == hostabi::CheckShared) {
      // A kernel's own array; a device function's is placed per kernel
      // (unknown here: 0 and 0, as for a shared pointer).
      if (auto It = Cur->SharedOffsets.find(V); It != Cur->SharedOffsets.end()) {
        SharedOffset = It->second;
        SharedBytes = V->Ty.getSizeInBytes();
      }
    }
  }
  // A private parameter's accesses may take the fast path of its private
  // slot (CheckElision.cpp).
  uint32_t FastSlot = 0;
  if (Space == hostabi::CheckGlobal && Param >= 0 &&
      unsigned(Param) < hostabi::CheckFastSharedSlots - hostabi::CheckFastPrivateSlots) {
    if (!Cur->PrivateParams)
      Cur->PrivateParams = privateParams(*Cur->Kernel);
    if (Cur->PrivateParams->test(unsigned(Param)))
      FastSlot = hostabi::CheckFastPrivateSlots + uint32_t(Param);
  }
  llvm::StringRef Memory = Mem.Var ? llvm::StringRef(Mem.Var->Name) : "";
  std::string Key = "check " + std::to_string(Loc.Line) + ":" + std::to_string(Loc.Col) + " " +
                    What.str() + " " + std::to_string(Kind) + " " + std::to_string(Space) + " " +
                    std::to_string(Bytes) + " " + std::to_string(ElemBytes) + " " +
                    std::to_string(Param) + " " + std::to_string(FastSlot) + " " + Memory.str() +
                    " " + std::to_string(SharedOffset) + " " + std::to_string(SharedBytes);
  llvm::Constant *&Site = Cur->Sites[Key];
  if (Site)
    return Site;
  llvm::LLVMContext &C = IR.getContext();
  llvm::Type *Ptr = B.getPtrTy(), *I32 = B.getInt32Ty(), *I64 = B.getInt64Ty();
  // As hostabi::CheckSite.
  auto *Ty = llvm::StructType::get(
      C, {Ptr, I32, I32, Ptr, Ptr, Ptr, I32, I32, I32, I32, I32, I32, Ptr, I64, I64});
  llvm::Constant *Fields[] = {Entry.stringConstant(KM.Name),
                              llvm::ConstantInt::get(I32, Loc.Line),
                              llvm::ConstantInt::get(I32, Loc.Col),
                              Entry.stringConstant(Entry.sourceLineOf(Loc)),
                              Entry.stringConstant(Cur->Kernel ? Cur->Kernel->Name : ""),
                              Entry.stringConstant(What),
                              llvm::ConstantInt::get(I32, Kind),
                              llvm::ConstantInt::get(I32, Space),
                              llvm::ConstantInt::get(I32, Bytes),
                              llvm::ConstantInt::get(I32, ElemBytes),
                              llvm::ConstantInt::getSigned(I32, Param),
                              llvm::ConstantInt::get(I32, FastSlot), // (CheckElision.cpp)
                              Entry.stringConstant(Memory),
                              llvm::ConstantInt::get(I64, SharedOffset),
                              llvm::ConstantInt::get(I64, SharedBytes)};
  auto *G = new llvm::GlobalVariable(IR, Ty, true, llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantStruct::get(Ty, Fields), ".gridjit.check");
  G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  Site = G;
  return Site;
}

/// The runtime's function at \p Offset of the context and its state.
static std::pair<Value *, Value *> runtimeFunction(llvm::IRBuilder<> &B, Value *Context,
                                                   unsigned Offset) {
  auto Field = [&](unsigned Off, const char *Name) {
    return B.CreateLoad(B.getPtrTy(), B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), Context, Off),
                        Name);
  };
  return {Field(hostabi::CtxCheckState, "check.state"), Field(Offset, "check.fn")};
}

/// The checker's calls read their arguments' memory and change only the
/// runtime's own: LLVM may keep the kernel's values in registers across
/// them.
static void setCheckerEffects(llvm::CallInst *Call) {
  Call->setMemoryEffects(llvm::MemoryEffects::argMemOnly(llvm::ModRefInfo::Ref) |
                         llvm::MemoryEffects::inaccessibleMemOnly());
}

Value *HostModuleLowering::checkAccess(const OpArgs &A, uint32_t Kind, llvm::StringRef What,
                                       Value *Stored) {
  Value *Addr = A.Operands[0];
  if (A.Mem.Space != AddrSpace::Global && A.Mem.Space != AddrSpace::Shared)
    return Addr; // a thread's own local memory, or constant memory
  uint32_t Space = hostabi::CheckGlobal;
  if (A.Mem.Space == AddrSpace::Shared)
    Space = A.Mem.Var && isDynamicShared(*A.Mem.Var) ? hostabi::CheckDynamicShared
                                                     : hostabi::CheckShared;
  uint64_t Bytes = A.ResultTy.getSizeInBytes();
  llvm::Constant *Site =
      checkSite(A.Loc, What, Kind, Space, Bytes, elementBytes(A.Mem, A.ResultTy), A.Mem);
  llvm::PointerType *Ptr = B.getPtrTy();
  Value *ValuePtr = llvm::ConstantPointerNull::get(Ptr);
  if (Stored) {
    // The bytes as the store writes them (bool as a byte).
    llvm::Type *MemTy =
        A.ResultTy.isScalar() ? Ctx.memType(A.ResultTy.getScalarKind()) : Ctx.toLLVM(A.ResultTy);
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(MemTy, "check.value");
    if (A.ResultTy.isBool())
      Stored = B.CreateZExt(Stored, B.getInt8Ty());
    B.CreateStore(Stored, Slot);
    ValuePtr = Slot;
  }
  auto [State, Fn] = runtimeFunction(B, runtimeContext(), hostabi::CtxCheckAccess);
  auto *FnTy =
      llvm::FunctionType::get(Ptr, {Ptr, Ptr, B.getInt64Ty(), B.getInt32Ty(), Ptr, Ptr}, false);
  Value *Thread = Cur->Env.Linear ? Cur->Env.Linear : B.getInt32(0);
  llvm::CallInst *Call =
      B.CreateCall(FnTy, Fn, {State, Site, linearBlock(), Thread, Addr, ValuePtr}, "checked.addr");
  setCheckerEffects(Call);
  if (Space == hostabi::CheckShared && Cur->Kernel) {
    // The form of its index, for CheckElision.cpp's proofs.
    if (!Cur->SharedIndexForms)
      Cur->SharedIndexForms = sharedForms(KM, *Cur->Kernel);
    auto It = Cur->SharedIndexForms->ByLoc.find({A.Loc.Line, A.Loc.Col});
    if (It != Cur->SharedIndexForms->ByLoc.end() && It->second.first == A.Mem.Var) {
      Call->setMetadata(SharedFormMD, formMetadata(IR.getContext(), It->second.second));
    }
  }
  return Call;
}

Value *HostModuleLowering::checkSharedScalar(Value *Addr, Type Ty, Value *Stored) {
  if (!checked() || !Cur)
    return Addr;
  auto It = Cur->SharedScalars.find(Addr);
  if (It == Cur->SharedScalars.end())
    return Addr;
  OpArgs A;
  A.Loc = Cur->SharedScalarLoc;
  A.ResultTy = Ty;
  A.Mem = memoryOf(*It->second);
  Value *Ops[] = {Addr};
  A.Operands = Ops;
  return checkAccess(A, Stored ? hostabi::CheckStore : hostabi::CheckLoad,
                     Stored ? "store" : "load", Stored);
}

void HostModuleLowering::checkReport(Value *Bad, llvm::Constant *Site, Value *A, Value *BVal) {
  // A recomputed `let` (VarSlot::Remat) is evaluated again before a thread
  // loop's state check, in the middle of a block: for threads that may be
  // masked, and after its declaration has checked it. Nothing to report
  // there (and no block to split).
  if (B.GetInsertPoint() != B.GetInsertBlock()->end())
    return;
  llvm::BasicBlock *Report = newBlock("check.report"), *Cont = newBlock("check.done");
  B.CreateCondBr(Bad, Report, Cont);
  B.SetInsertPoint(Report);
  auto [State, Fn] = runtimeFunction(B, runtimeContext(), hostabi::CtxCheckReport);
  llvm::Type *Ptr = B.getPtrTy(), *I64 = B.getInt64Ty();
  auto *FnTy =
      llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr, I64, B.getInt32Ty(), I64, I64}, false);
  Value *Thread = Cur->Env.Linear ? Cur->Env.Linear : B.getInt32(0);
  setCheckerEffects(B.CreateCall(FnTy, Fn, {State, Site, linearBlock(), Thread, A, BVal}));
  B.CreateBr(Cont);
  B.SetInsertPoint(Cont);
}

void HostModuleLowering::checkSync(uint32_t Kind) {
  auto [State, Fn] = runtimeFunction(B, runtimeContext(), hostabi::CtxCheckSync);
  llvm::Type *I32 = B.getInt32Ty();
  auto *FnTy =
      llvm::FunctionType::get(B.getVoidTy(), {B.getPtrTy(), I32, B.getInt64Ty(), I32}, false);
  B.CreateCall(FnTy, Fn, {State, B.getInt32(Kind), linearBlock(), B.getInt32(hostabi::NoWarp)});
}
