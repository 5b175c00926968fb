//===- NVPTXTarget.cpp - KIR to PTX through LLVM's NVPTX backend ----------===//
//
// Part of gridjit. The NVPTX target: its lowering registry (the common
// lowerings plus the GPU-specific ones below: thread indices, barriers,
// fences, warp operations, shared memory, grid_sync and libdevice math),
// the optimisation pipeline and PTX emission.
//
//===----------------------------------------------------------------------===//

#include "../../Lower/CommonLowerings.h"
#include "../Pipeline.h"
#include "gridjit/Lower/LoweringContext.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Target/CodegenTarget.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Bitcode/BitcodeReader.h"
#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Linker/Linker.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <mutex>

using namespace gridjit;
using llvm::Expected;
using llvm::Value;

namespace {

constexpr const char *Triple = "nvptx64-nvidia-cuda";

std::string renumberCallSites(llvm::StringRef PTX);

// PTX ISA version per architecture: the lowest that supports the
// architecture, so the PTX loads on the oldest driver that knows the GPU.
constexpr NVPTXArchInfo Archs[] = {
    {"sm_70", 70, 60}, {"sm_72", 72, 61}, {"sm_75", 75, 63}, {"sm_80", 80, 70},
    {"sm_86", 86, 71}, {"sm_87", 87, 74}, {"sm_89", 89, 78}, {"sm_90", 90, 78},
};

/// LLVM keeps its targets in process-wide registries; filling them is
/// idempotent and done once, before the first NVPTX target exists.
void initializeNVPTXBackend() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

class NVPTXTarget : public CodegenTarget {
public:
  NVPTXTarget(const NVPTXArchInfo &Arch, std::string Libdevice, std::string LibdevicePath)
      : CodegenTarget(TargetKind::NVPTX), Arch(Arch), Libdevice(std::move(Libdevice)),
        LibdevicePath(std::move(LibdevicePath)) {}

  llvm::Error init(llvm::ArrayRef<Op> Omit);

  std::string_view getArch() const override { return Arch.Arch; }
  std::string getFingerprint() const override { return Fingerprint; }
  EmitKind getPayloadKind() const override { return EmitKind::Assembly; }
  unsigned getAddrSpace(AddrSpace AS) const override {
    switch (AS) {
    case AddrSpace::Global:
      return 1;
    case AddrSpace::Shared:
      return 3;
    case AddrSpace::Local:
      // Allocas are generic pointers in NVPTX IR (NVPTXLowerAlloca turns
      // them into local accesses), so `ptr<T, local>` is generic.
      return 0;
    }
    return 0;
  }
  llvm::Error prepareModule(llvm::Module &IR) const override {
    IR.setTargetTriple(Triple);
    IR.setDataLayout(DataLayout);
    return llvm::Error::success();
  }
  void markKernel(llvm::Module &IR, llvm::Function &F) const override;
  llvm::Error finishModule(llvm::Module &IR) const override;
  Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(const CompileOptions &Opts) const override {
    return makeTargetMachine(Opts.OptLevel);
  }
  llvm::Error optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                       const CompileOptions &Opts) const override;
  Expected<std::string> codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                EmitKind Kind) const override;

  bool hasLibdevice() const { return !Libdevice.empty(); }

private:
  Expected<std::unique_ptr<llvm::TargetMachine>> makeTargetMachine(unsigned OptLevel) const;

  NVPTXArchInfo Arch;
  std::string Libdevice; ///< libdevice bitcode, read once; empty if absent
  std::string LibdevicePath;
  std::string DataLayout;
  std::string Fingerprint;
};

//===----------------------------------------------------------------------===//
// GPU-specific lowerings
//===----------------------------------------------------------------------===//

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
Expected<Value *> lowerWarpSize(LoweringContext &C, const OpArgs &) { return C.B.getInt32(32); }

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

/// The module's grid barrier function, made on first use. See lowerGridSync.
llvm::Function *getGridSyncFunction(LoweringContext &C) {
  constexpr const char *Name = "__gridjit_grid_sync";
  if (llvm::Function *F = C.IR.getFunction(Name))
    return F;
  llvm::LLVMContext &Ctx = C.getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(Ctx);
  auto MakeCounter = [&](const char *N) {
    return new llvm::GlobalVariable(C.IR, I32, /*isConstant=*/false,
                                    llvm::GlobalValue::InternalLinkage,
                                    llvm::ConstantInt::get(I32, 0), N, nullptr,
                                    llvm::GlobalValue::NotThreadLocal, /*AddressSpace=*/1);
  };
  llvm::GlobalVariable *Count = MakeCounter("__gridjit_grid_count");
  llvm::GlobalVariable *Gen = MakeCounter("__gridjit_grid_generation");

  auto *F = llvm::Function::Create(llvm::FunctionType::get(llvm::Type::getVoidTy(Ctx), false),
                                   llvm::GlobalValue::InternalLinkage, Name, C.IR);
  F->addFnAttr(llvm::Attribute::NoInline);
  F->addFnAttr(llvm::Attribute::Convergent);
  auto *Entry = llvm::BasicBlock::Create(Ctx, "entry", F);
  auto *Leader = llvm::BasicBlock::Create(Ctx, "leader", F);
  auto *Last = llvm::BasicBlock::Create(Ctx, "last", F);
  auto *Wait = llvm::BasicBlock::Create(Ctx, "wait", F);
  auto *Done = llvm::BasicBlock::Create(Ctx, "done", F);
  llvm::IRBuilder<> B(Entry);
  using namespace llvm::Intrinsic;
  auto SReg = [&](llvm::Intrinsic::ID ID) { return B.CreateIntrinsic(ID, {}, {}); };

  // Every thread of the block arrives; thread (0,0,0) then represents it.
  B.CreateIntrinsic(nvvm_barrier0, {}, {});
  Value *Tid =
      B.CreateOr(B.CreateOr(SReg(nvvm_read_ptx_sreg_tid_x), SReg(nvvm_read_ptx_sreg_tid_y)),
                 SReg(nvvm_read_ptx_sreg_tid_z));
  B.CreateCondBr(B.CreateICmpEQ(Tid, B.getInt32(0)), Leader, Done);

  // The leader reads the generation before arriving; the last block to
  // arrive resets the count and bumps the generation, releasing the rest.
  B.SetInsertPoint(Leader);
  Value *Blocks =
      B.CreateMul(B.CreateMul(SReg(nvvm_read_ptx_sreg_nctaid_x), SReg(nvvm_read_ptx_sreg_nctaid_y)),
                  SReg(nvvm_read_ptx_sreg_nctaid_z));
  B.CreateIntrinsic(nvvm_membar_gl, {}, {});
  llvm::LoadInst *MyGen = B.CreateLoad(I32, Gen, /*isVolatile=*/true, "gen");
  // The generation must be read before this block arrives: were the read
  // satisfied after the last block's increment, this leader would wait for
  // an increment that never comes. Relaxed accesses to different addresses
  // may be reordered in PTX, so a fence keeps them in program order.
  B.CreateIntrinsic(nvvm_membar_gl, {}, {});
  Value *Arrived =
      B.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Count, B.getInt32(1), llvm::MaybeAlign(4),
                        llvm::AtomicOrdering::SequentiallyConsistent);
  B.CreateCondBr(B.CreateICmpEQ(Arrived, B.CreateSub(Blocks, B.getInt32(1))), Last, Wait);

  B.SetInsertPoint(Last);
  B.CreateStore(B.getInt32(0), Count, /*isVolatile=*/true);
  B.CreateIntrinsic(nvvm_membar_gl, {}, {});
  B.CreateAtomicRMW(llvm::AtomicRMWInst::Add, Gen, B.getInt32(1), llvm::MaybeAlign(4),
                    llvm::AtomicOrdering::SequentiallyConsistent);
  B.CreateBr(Done);

  B.SetInsertPoint(Wait);
  Value *Now = B.CreateLoad(I32, Gen, /*isVolatile=*/true, "now");
  B.CreateCondBr(B.CreateICmpEQ(Now, MyGen), Wait, Done);

  B.SetInsertPoint(Done);
  B.CreateIntrinsic(nvvm_membar_gl, {}, {});
  B.CreateIntrinsic(nvvm_barrier0, {}, {});
  B.CreateRetVoid();
  return F;
}

// grid_sync(): a grid-wide barrier built from a counter and a generation
// number in global memory (no libcudadevrt). It relies on every block of
// the grid being resident at once, which the cooperative launch that the
// runtime uses for kernels marked Cooperative guarantees. Two cooperative
// launches of one loaded module must not run at the same time (they would
// share the counter); the runtime serialises them.
Expected<Value *> lowerGridSync(LoweringContext &C, const OpArgs &) {
  llvm::CallInst *Call = C.B.CreateCall(getGridSyncFunction(C));
  Call->addFnAttr(llvm::Attribute::Convergent);
  return nullptr;
}

// Warp shuffles: 32-bit values use one shfl.sync; 64-bit ones are split into
// two halves. The clamp operand is 0x1f for idx/down/xor and 0 for up, as in
// CUDA's __shfl_*_sync with the full warp.
Value *shuffle32(LoweringContext &C, BuiltinFunc Kind, Value *V, Value *Lane) {
  using namespace llvm::Intrinsic;
  bool F = V->getType()->isFloatTy();
  llvm::Intrinsic::ID ID;
  unsigned Clamp = 0x1f;
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
                                     Name, nullptr, llvm::GlobalValue::NotThreadLocal, 3);
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
                               nullptr, Name, nullptr, llvm::GlobalValue::NotThreadLocal, 3);
  G->setAlignment(llvm::Align(16));
  return G;
}

// Transcendental math calls libdevice (`__nv_sinf`, `__nv_sin`, ...), which
// meets CUDA's documented accuracy because it is CUDA's implementation.
/// Without libdevice, f32 math falls back to the GPU's approximate
/// instructions (ex2.approx, lg2.approx, sin.approx, cos.approx,
/// rsqrt.approx); docs/Targets.md gives their accuracy, which is below
/// CUDA's bounds for the same functions. There is no such fallback for f64.
Expected<Value *> approximateF32(LoweringContext &C, const OpArgs &A, llvm::StringRef Base) {
  using namespace llvm::Intrinsic;
  llvm::IRBuilder<> &B = C.B;
  Value *X = A.Operands[0];
  auto Approx = [&](llvm::Intrinsic::ID ID, Value *V) { return B.CreateIntrinsic(ID, {}, {V}); };
  auto F = [&](double D) { return llvm::ConstantFP::get(B.getFloatTy(), D); };
  constexpr double Log2E = 1.4426950408889634, Ln2 = 0.6931471805599453,
                   Log10Of2 = 0.30102999566398120;
  if (Base == "rsqrt")
    return Approx(nvvm_rsqrt_approx_f, X);
  if (Base == "exp2")
    return Approx(nvvm_ex2_approx_f, X);
  if (Base == "exp")
    return Approx(nvvm_ex2_approx_f, B.CreateFMul(X, F(Log2E)));
  if (Base == "log2")
    return Approx(nvvm_lg2_approx_f, X);
  if (Base == "log")
    return B.CreateFMul(Approx(nvvm_lg2_approx_f, X), F(Ln2));
  if (Base == "log10")
    return B.CreateFMul(Approx(nvvm_lg2_approx_f, X), F(Log10Of2));
  if (Base == "sin")
    return Approx(nvvm_sin_approx_f, X);
  if (Base == "cos")
    return Approx(nvvm_cos_approx_f, X);
  if (Base == "tan")
    return B.CreateFDiv(Approx(nvvm_sin_approx_f, X), Approx(nvvm_cos_approx_f, X));
  if (Base == "pow") // x^y = 2^(y * log2 x): NaN for x < 0, as powf is for non-integer y
    return Approx(nvvm_ex2_approx_f, B.CreateFMul(A.Operands[1], Approx(nvvm_lg2_approx_f, X)));
  if (Base == "tanh") {
    // tanh|x| = (1 - e) / (1 + e) with e = 2^(-2 log2(e) |x|), sign restored.
    Value *AbsX = B.CreateUnaryIntrinsic(llvm::Intrinsic::fabs, X);
    Value *E = Approx(nvvm_ex2_approx_f, B.CreateFMul(AbsX, F(-2 * Log2E)));
    Value *T = B.CreateFDiv(B.CreateFSub(F(1), E), B.CreateFAdd(F(1), E));
    return B.CreateBinaryIntrinsic(llvm::Intrinsic::copysign, T, X);
  }
  return C.error(A.Loc, "no approximation of '" + Base + "' for f32 on target 'nvptx'");
}

Expected<Value *> callLibdevice(LoweringContext &C, const OpArgs &A, llvm::StringRef Base) {
  const auto &T = static_cast<const NVPTXTarget &>(C.T);
  bool F32 = A.ResultTy.getScalarKind() == ScalarKind::F32;
  if (!T.hasLibdevice()) {
    if (F32)
      return approximateF32(C, A, Base);
    return C.error(A.Loc, "'" + Base +
                              "' on f64 on target 'nvptx' needs libdevice from the "
                              "CUDA toolkit, which was not found (set CUDA_HOME)");
  }
  std::string Name = ("__nv_" + Base + (F32 ? "f" : "")).str();
  llvm::Type *Ty = A.Operands[0]->getType();
  std::vector<llvm::Type *> Params(A.Operands.size(), Ty);
  llvm::FunctionCallee Fn =
      C.IR.getOrInsertFunction(Name, llvm::FunctionType::get(Ty, Params, false));
  return C.B.CreateCall(Fn, A.Operands);
}

#define GRIDJIT_LIBDEVICE(Fn, Base)                                                                \
  Expected<Value *> Fn(LoweringContext &C, const OpArgs &A) { return callLibdevice(C, A, Base); }
GRIDJIT_LIBDEVICE(lowerRsqrt, "rsqrt")
GRIDJIT_LIBDEVICE(lowerExp, "exp")
GRIDJIT_LIBDEVICE(lowerExp2, "exp2")
GRIDJIT_LIBDEVICE(lowerLog, "log")
GRIDJIT_LIBDEVICE(lowerLog2, "log2")
GRIDJIT_LIBDEVICE(lowerLog10, "log10")
GRIDJIT_LIBDEVICE(lowerSin, "sin")
GRIDJIT_LIBDEVICE(lowerCos, "cos")
GRIDJIT_LIBDEVICE(lowerTan, "tan")
GRIDJIT_LIBDEVICE(lowerTanh, "tanh")
GRIDJIT_LIBDEVICE(lowerPow, "pow")
#undef GRIDJIT_LIBDEVICE

//===----------------------------------------------------------------------===//
// NVPTXTarget
//===----------------------------------------------------------------------===//

llvm::Error NVPTXTarget::init(llvm::ArrayRef<Op> Omit) {
  LoweringRegistry &R = getMutableRegistry();
  if (llvm::Error E = registerCommonLowerings(R, Omit))
    return E;
  const LoweringEntry Table[] = {
      {Op::ThreadIdx, lowerThreadIdx},
      {Op::BlockIdx, lowerBlockIdx},
      {Op::BlockDim, lowerBlockDim},
      {Op::GridDim, lowerGridDim},
      {Op::LaneId, lowerLaneId},
      {Op::WarpSize, lowerWarpSize},
      {Op::SharedArray, lowerSharedArray},
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
  };
  if (llvm::Error Err = R.addAll(Table, Omit))
    return Err;
  // Complete before use: a gap here is a bug in gridjit, caught when the
  // target is made rather than when some kernel first needs the op.
  if (Omit.empty() && !R.missing().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: target 'nvptx' has no lowering for '%s'",
                                   std::string(opName(R.missing().front())).c_str());
  R.freeze();

  auto TM = makeTargetMachine(3);
  if (!TM)
    return TM.takeError();
  DataLayout = (*TM)->createDataLayout().getStringRepresentation();

  llvm::BLAKE3 H;
  H.update(R.fingerprint());
  H.update(Arch.Arch);
  H.update(std::to_string(Arch.PtxVersion));
  H.update(Libdevice);
  Fingerprint = llvm::toHex(H.final(), /*LowerCase=*/true);
  return llvm::Error::success();
}

Expected<std::unique_ptr<llvm::TargetMachine>>
NVPTXTarget::makeTargetMachine(unsigned OptLevel) const {
  std::string Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!T)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the NVPTX backend is not available: %s", Err.c_str());
  llvm::TargetOptions Options;
  auto Level = llvm::CodeGenOptLevel::Aggressive;
  if (OptLevel == 0)
    Level = llvm::CodeGenOptLevel::None;
  else if (OptLevel == 1)
    Level = llvm::CodeGenOptLevel::Less;
  else if (OptLevel == 2)
    Level = llvm::CodeGenOptLevel::Default;
  std::string Features = "+ptx" + std::to_string(Arch.PtxVersion);
  std::unique_ptr<llvm::TargetMachine> TM(T->createTargetMachine(
      Triple, Arch.Arch, Features, Options, std::nullopt, std::nullopt, Level));
  if (!TM)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot create an NVPTX target machine for %s", Arch.Arch);
  return std::move(TM);
}

void NVPTXTarget::markKernel(llvm::Module &IR, llvm::Function &F) const {
  // LLVM 19's NVPTX backend recognises kernels by this annotation.
  llvm::LLVMContext &Ctx = IR.getContext();
  llvm::Metadata *MD[] = {
      llvm::ValueAsMetadata::get(&F), llvm::MDString::get(Ctx, "kernel"),
      llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(Ctx), 1))};
  IR.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(Ctx, MD));
}

/// True for names ptxas rejects or reads as something else: `_`, the
/// predefined `WARP_SZ`, and the names NVPTX gives parameters and return
/// values (`param0`, `retval0`, `<kernel>_param_<n>`).
bool isReservedInPTX(llvm::StringRef Name, const llvm::DenseSet<const llvm::Function *> &Kernels) {
  if (Name == "_" || Name == "WARP_SZ")
    return true;
  auto DigitsAfter = [&](llvm::StringRef Prefix) {
    llvm::StringRef Rest = Name;
    return Rest.consume_front(Prefix) && !Rest.empty() &&
           llvm::all_of(Rest, [](char C) { return llvm::isDigit(C); });
  };
  if (DigitsAfter("param") || DigitsAfter("retval"))
    return true;
  for (const llvm::Function *K : Kernels)
    if (DigitsAfter((K->getName() + "_param_").str()))
      return true;
  return false;
}

// Links the libdevice functions the module calls (only those), then makes
// every non-kernel function internal so the optimiser may inline or drop it.
llvm::Error NVPTXTarget::finishModule(llvm::Module &IR) const {
  bool NeedsLibdevice = false;
  for (const llvm::Function &F : IR)
    if (F.isDeclaration() && F.getName().starts_with("__nv_"))
      NeedsLibdevice = true;
  if (NeedsLibdevice) {
    // Lazy loading materialises only the functions the linker pulls in,
    // which is far cheaper than parsing all of libdevice for every compile.
    auto Lib = llvm::getLazyBitcodeModule(llvm::MemoryBufferRef(Libdevice, LibdevicePath),
                                          IR.getContext());
    if (!Lib)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "cannot read libdevice '%s': %s", LibdevicePath.c_str(),
                                     llvm::toString(Lib.takeError()).c_str());
    (*Lib)->setTargetTriple(IR.getTargetTriple());
    (*Lib)->setDataLayout(IR.getDataLayout());
    if (llvm::Linker::linkModules(IR, std::move(*Lib), llvm::Linker::LinkOnlyNeeded))
      return llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot link libdevice '%s'",
                                     LibdevicePath.c_str());
  }
  llvm::DenseSet<const llvm::Function *> Kernels;
  if (llvm::NamedMDNode *A = IR.getNamedMetadata("nvvm.annotations"))
    for (const llvm::MDNode *N : A->operands())
      if (auto *F = llvm::mdconst::dyn_extract_or_null<llvm::Function>(N->getOperand(0)))
        Kernels.insert(F);
  for (const llvm::Function *K : Kernels)
    if (isReservedInPTX(K->getName(), Kernels))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "kernel '%s' cannot be compiled for nvptx: PTX reserves "
                                     "that name; rename the kernel",
                                     K->getName().str().c_str());
  for (llvm::Function &F : IR) {
    if (F.isDeclaration() || Kernels.count(&F))
      continue;
    F.setLinkage(llvm::GlobalValue::InternalLinkage);
    // Internal names are free to change: move device functions off names
    // that PTX gives another meaning (the '__' prefix is not open to KIR).
    if (isReservedInPTX(F.getName(), Kernels))
      F.setName("__gridjit_fn_" + F.getName());
  }
  return llvm::Error::success();
}

llvm::Error NVPTXTarget::optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                                  const CompileOptions &Opts) const {
  return runDefaultPipeline(IR, TM, Opts.OptLevel, llvm::PipelineTuningOptions());
}

Expected<std::string> NVPTXTarget::codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                           EmitKind Kind) const {
  if (Kind == EmitKind::Object)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the nvptx target emits PTX ('--emit=ptx'); a cubin is made "
                                   "by the CUDA driver when the module is loaded");
  auto PTX = runBackend(IR, TM, llvm::CodeGenFileType::AssemblyFile);
  if (!PTX)
    return PTX.takeError();
  return renumberCallSites(*PTX);
}

/// LLVM 19's NVPTX backend numbers call sites ("// callseq 12, 0") from one
/// process-wide counter, so the same module compiled twice in one process
/// gives different text. The numbers only appear in comments (and in the
/// names of indirect-call prototypes, which KIR never makes), so renumber
/// them from 0 in order of appearance: the PTX of a module is then the same
/// in every compile. Workaround; it can go once the counter is per target
/// machine (it is in later LLVM releases).
std::string renumberCallSites(llvm::StringRef PTX) {
  std::string Out;
  Out.reserve(PTX.size());
  llvm::DenseMap<unsigned, unsigned> Renamed;
  constexpr llvm::StringLiteral Key = "callseq ";
  while (true) {
    size_t Pos = PTX.find(Key);
    if (Pos == llvm::StringRef::npos)
      break;
    size_t Digits = Pos + Key.size();
    size_t End = Digits;
    while (End < PTX.size() && llvm::isDigit(PTX[End]))
      ++End;
    Out += PTX.substr(0, Digits);
    unsigned N;
    if (End > Digits && !PTX.substr(Digits, End - Digits).getAsInteger(10, N)) {
      auto [It, New] = Renamed.try_emplace(N, Renamed.size());
      Out += std::to_string(It->second);
    } else {
      Out += PTX.substr(Digits, End - Digits);
    }
    PTX = PTX.substr(End);
  }
  Out += PTX;
  return Out;
}

/// Reads libdevice from \p Path, or from the usual CUDA locations when
/// \p Path is empty. Returns the path used ("" when none was found).
Expected<std::pair<std::string, std::string>> findLibdevice(const std::string &Path) {
  std::vector<std::string> Candidates;
  if (!Path.empty()) {
    Candidates.push_back(Path);
  } else {
    if (std::optional<std::string> Home = getEnv(EnvVar::CudaHome))
      Candidates.push_back(*Home + "/nvvm/libdevice/libdevice.10.bc");
    Candidates.push_back("/usr/local/cuda/nvvm/libdevice/libdevice.10.bc");
  }
  for (const std::string &C : Candidates) {
    auto Buf = llvm::MemoryBuffer::getFile(C);
    if (Buf)
      return std::make_pair(C, (*Buf)->getBuffer().str());
    if (!Path.empty())
      return llvm::createStringError(Buf.getError(), "cannot read libdevice '%s': %s", C.c_str(),
                                     Buf.getError().message().c_str());
  }
  return std::make_pair(std::string(), std::string());
}

} // namespace

llvm::ArrayRef<NVPTXArchInfo> gridjit::getNVPTXArchs() { return Archs; }

Expected<std::unique_ptr<Target>> gridjit::createNVPTXTarget(const NVPTXTargetOptions &Opts) {
  const NVPTXArchInfo *Arch = nullptr;
  for (const NVPTXArchInfo &A : Archs)
    if (Opts.Arch == A.Arch)
      Arch = &A;
  if (!Arch) {
    std::string Known;
    for (const NVPTXArchInfo &A : Archs)
      Known += (Known.empty() ? "" : ", ") + std::string(A.Arch);
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown NVPTX architecture '%s' (known: %s)", Opts.Arch.c_str(),
                                   Known.c_str());
  }
  initializeNVPTXBackend();
  Expected<std::pair<std::string, std::string>> Lib = std::make_pair(std::string(), std::string());
  if (Opts.UseLibdevice)
    Lib = findLibdevice(Opts.LibdevicePath);
  if (!Lib)
    return Lib.takeError();
  auto T = std::make_unique<NVPTXTarget>(*Arch, std::move(Lib->second), std::move(Lib->first));
  if (llvm::Error E = T->init(Opts.OmitLowerings))
    return std::move(E);
  return std::move(T);
}
