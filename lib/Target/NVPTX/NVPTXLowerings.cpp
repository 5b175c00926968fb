//===- NVPTXLowerings.cpp - GPU-specific op lowerings of NVPTX -------------===//
//
// Part of gridjit. The NVPTX lowerings of what has no target-independent
// form: thread indices (PTX special registers), barriers and fences, warp
// shuffles and votes, and shared memory. grid_sync is GridBarrier.cpp's, the
// math builtins Libdevice.cpp's.
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "gridjit/Support/Limits.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;
using llvm::Value;

namespace {

Value *readSReg(LoweringContext &C, llvm::Intrinsic::ID X, llvm::Intrinsic::ID Y,
                llvm::Intrinsic::ID Z, unsigned Field) {
  llvm::Intrinsic::ID IDs[] = {X, Y, Z};
  return C.B.CreateIntrinsic(IDs[Field], {}, {});
}

Expected<Value *> lowerThreadIdx(LoweringContext &C, const OpArgs &A) {
  using namespace llvm::Intrinsic;
  return readSReg(C, nvvm_read_ptx_sreg_tid_x, nvvm_read_ptx_sreg_tid_y, nvvm_read_ptx_sreg_tid_z,
                  A.Field);
}
Expected<Value *> lowerBlockIdx(LoweringContext &C, const OpArgs &A) {
  using namespace llvm::Intrinsic;
  return readSReg(C, nvvm_read_ptx_sreg_ctaid_x, nvvm_read_ptx_sreg_ctaid_y,
                  nvvm_read_ptx_sreg_ctaid_z, A.Field);
}
Expected<Value *> lowerBlockDim(LoweringContext &C, const OpArgs &A) {
  using namespace llvm::Intrinsic;
  return readSReg(C, nvvm_read_ptx_sreg_ntid_x, nvvm_read_ptx_sreg_ntid_y,
                  nvvm_read_ptx_sreg_ntid_z, A.Field);
}
Expected<Value *> lowerGridDim(LoweringContext &C, const OpArgs &A) {
  using namespace llvm::Intrinsic;
  return readSReg(C, nvvm_read_ptx_sreg_nctaid_x, nvvm_read_ptx_sreg_nctaid_y,
                  nvvm_read_ptx_sreg_nctaid_z, A.Field);
}
Expected<Value *> lowerLaneId(LoweringContext &C, const OpArgs &) {
  return C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_read_ptx_sreg_laneid, {}, {});
}
Expected<Value *> lowerWarpSize(LoweringContext &C, const OpArgs &) {
  return C.B.getInt32(limits::WarpSize);
}

Expected<Value *> lowerSyncThreads(LoweringContext &C, const OpArgs &) {
  C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_barrier0, {}, {});
  return nullptr;
}
Expected<Value *> lowerSyncWarp(LoweringContext &C, const OpArgs &) {
  C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_bar_warp_sync, {}, {C.B.getInt32(-1)});
  return nullptr;
}
Expected<Value *> lowerFence(LoweringContext &C, const OpArgs &) {
  C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_gl, {}, {});
  return nullptr;
}
Expected<Value *> lowerFenceBlock(LoweringContext &C, const OpArgs &) {
  C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_membar_cta, {}, {});
  return nullptr;
}

// Warp shuffles: 32-bit values use one shfl.sync; 64-bit ones are split into
// two halves. The clamp operand is the lane mask (0x1f) for idx/down/xor and
// 0 for up, as in CUDA's __shfl_*_sync with the full warp.
Value *shuffle32(LoweringContext &C, BuiltinFunc Kind, Value *V, Value *Lane) {
  using namespace llvm::Intrinsic;
  bool F = V->getType()->isFloatTy();
  llvm::Intrinsic::ID ID;
  unsigned Clamp = limits::LaneMask;
  switch (Kind) {
  case BuiltinFunc::ShflUp:
    ID = F ? nvvm_shfl_sync_up_f32 : nvvm_shfl_sync_up_i32;
    Clamp = 0;
    break;
  case BuiltinFunc::ShflDown:
    ID = F ? nvvm_shfl_sync_down_f32 : nvvm_shfl_sync_down_i32;
    break;
  case BuiltinFunc::ShflXor:
    ID = F ? nvvm_shfl_sync_bfly_f32 : nvvm_shfl_sync_bfly_i32;
    break;
  default:
    ID = F ? nvvm_shfl_sync_idx_f32 : nvvm_shfl_sync_idx_i32;
    break;
  }
  return C.B.CreateIntrinsic(ID, {}, {C.B.getInt32(-1), V, Lane, C.B.getInt32(Clamp)});
}

Value *shuffle(LoweringContext &C, BuiltinFunc Kind, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  Value *V = A.Operands[0], *Lane = A.Operands[1];
  llvm::Type *Ty = V->getType();
  if (Ty->getPrimitiveSizeInBits() == 32)
    return shuffle32(C, Kind, V, Lane);
  Value *Bits = Ty->isDoubleTy() ? B.CreateBitCast(V, B.getInt64Ty()) : V;
  Value *Lo = shuffle32(C, Kind, B.CreateTrunc(Bits, B.getInt32Ty()), Lane);
  Value *Hi = shuffle32(C, Kind, B.CreateTrunc(B.CreateLShr(Bits, 32), B.getInt32Ty()), Lane);
  Value *R = B.CreateOr(B.CreateZExt(Lo, B.getInt64Ty()),
                        B.CreateShl(B.CreateZExt(Hi, B.getInt64Ty()), 32));
  return Ty->isDoubleTy() ? B.CreateBitCast(R, Ty) : R;
}
Expected<Value *> lowerShfl(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, BuiltinFunc::Shfl, A);
}
Expected<Value *> lowerShflUp(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, BuiltinFunc::ShflUp, A);
}
Expected<Value *> lowerShflDown(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, BuiltinFunc::ShflDown, A);
}
Expected<Value *> lowerShflXor(LoweringContext &C, const OpArgs &A) {
  return shuffle(C, BuiltinFunc::ShflXor, A);
}
Expected<Value *> lowerVoteAny(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_any_sync, {},
                             {C.B.getInt32(-1), A.Operands[0]});
}
Expected<Value *> lowerVoteAll(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_all_sync, {},
                             {C.B.getInt32(-1), A.Operands[0]});
}
Expected<Value *> lowerBallot(LoweringContext &C, const OpArgs &A) {
  return C.B.CreateIntrinsic(llvm::Intrinsic::nvvm_vote_ballot_sync, {},
                             {C.B.getInt32(-1), A.Operands[0]});
}

// `shared t: [T; N];` is a module-level array in the shared address space,
// one per declaration, named after the kernel and the variable.
Expected<Value *> lowerSharedArray(LoweringContext &C, const OpArgs &A) {
  llvm::Type *Ty = C.toLLVM(A.ResultTy);
  std::string Name = C.CurDecl->Name + "." + A.Var->Name;
  auto *G = new llvm::GlobalVariable(C.IR, Ty, /*isConstant=*/false,
                                     llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(Ty),
                                     Name, nullptr, llvm::GlobalValue::NotThreadLocal, Shared);
  G->setAlignment(llvm::Align(16));
  return G;
}

// `shared t: [T];`: every kernel's dynamic shared memory starts at the same
// external symbol; the launch decides its size.
Expected<Value *> lowerDynamicShared(LoweringContext &C, const OpArgs &) {
  constexpr const char *Name = "__gridjit_dynamic_shared";
  if (llvm::GlobalVariable *G = C.IR.getGlobalVariable(Name))
    return G;
  llvm::Type *Ty = llvm::ArrayType::get(C.B.getInt8Ty(), 0);
  auto *G =
      new llvm::GlobalVariable(C.IR, Ty, /*isConstant=*/false, llvm::GlobalValue::ExternalLinkage,
                               nullptr, Name, nullptr, llvm::GlobalValue::NotThreadLocal, Shared);
  G->setAlignment(llvm::Align(16));
  return G;
}

} // namespace

llvm::Error gridjit::nvptx::registerNVPTXLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit) {
  const LoweringEntry Table[] = {
      {Op::ThreadIdx, lowerThreadIdx},
      {Op::BlockIdx, lowerBlockIdx},
      {Op::BlockDim, lowerBlockDim},
      {Op::GridDim, lowerGridDim},
      {Op::LaneId, lowerLaneId},
      {Op::WarpSize, lowerWarpSize},
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
  };
  return R.addAll(Table, Omit);
}
