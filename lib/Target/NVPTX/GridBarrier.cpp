//===- GridBarrier.cpp - grid_sync() on NVPTX -----------------------------===//
//
// Part of gridjit. grid_sync() is a call to one function per module that
// implements a grid-wide barrier with a counter and a generation number in
// global memory (no libcudadevrt). The two counters belong to the launch,
// not to the module: a cooperative kernel takes the address of 8 bytes of
// zeroed global memory as a hidden last parameter (the runtime passes a
// fresh one to every launch), and its thread (0,0,0) of each block keeps
// that address in a shared variable, where the barrier function, reached
// through any device functions, finds it. So cooperative launches of one
// loaded module may run at once, from several threads or streams
// (docs/Targets.md, "grid_sync").
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;
using llvm::Value;

namespace {

constexpr const char *GridStateParam = "__gridjit_grid_state";

/// The shared variable that holds the launch's barrier state address
/// (written and read by each block's thread (0,0,0) only).
llvm::GlobalVariable *getGridStateSlot(llvm::Module &IR) {
  constexpr const char *Name = "__gridjit_grid_state_addr";
  if (llvm::GlobalVariable *G = IR.getGlobalVariable(Name, /*AllowInternal=*/true))
    return G;
  llvm::Type *Ty = llvm::PointerType::get(IR.getContext(), Global);
  auto *G = new llvm::GlobalVariable(IR, Ty, /*isConstant=*/false,
                                     llvm::GlobalValue::InternalLinkage, llvm::UndefValue::get(Ty),
                                     Name, nullptr, llvm::GlobalValue::NotThreadLocal, Shared);
  G->setAlignment(llvm::Align(8));
  return G;
}

/// tid.x | tid.y | tid.z: zero exactly in the block's thread (0,0,0).
Value *threadBits(llvm::IRBuilder<> &B) {
  using namespace llvm::Intrinsic;
  auto SReg = [&](llvm::Intrinsic::ID ID) { return B.CreateIntrinsic(ID, {}, {}); };
  return B.CreateOr(B.CreateOr(SReg(nvvm_read_ptx_sreg_tid_x), SReg(nvvm_read_ptx_sreg_tid_y)),
                    SReg(nvvm_read_ptx_sreg_tid_z));
}

/// The module's grid barrier function, made on first use. See lowerGridSync.
llvm::Function *getGridSyncFunction(LoweringContext &C) {
  constexpr const char *Name = "__gridjit_grid_sync";
  if (llvm::Function *F = C.IR.getFunction(Name))
    return F;
  llvm::LLVMContext &Ctx = C.getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(Ctx);
  llvm::GlobalVariable *Slot = getGridStateSlot(C.IR);

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
  B.CreateCondBr(B.CreateICmpEQ(threadBits(B), B.getInt32(0)), Leader, Done);

  // The leader reads the generation before arriving; the last block to
  // arrive resets the count and bumps the generation, releasing the rest.
  // The launch's state: the count, then the generation.
  B.SetInsertPoint(Leader);
  Value *State = B.CreateLoad(Slot->getValueType(), Slot, "state");
  Value *Count = State;
  Value *Gen = B.CreateConstInBoundsGEP1_32(I32, State, 1, "generation");
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

  // The count is back to 0 when the launch ends, so the state needs no
  // clearing to serve the next barrier of the launch.
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

} // namespace

void NVPTXTarget::addHiddenKernelParams(const FunctionDecl &K, llvm::LLVMContext &Ctx,
                                        std::vector<llvm::Type *> &Params) const {
  if (K.UsesGridSync)
    Params.push_back(llvm::PointerType::get(Ctx, Global));
}

// Thread (0,0,0) of each block, the one that runs the barrier's leader
// part, keeps the state's address in the shared slot: no other thread
// reads it, so no barrier is needed before the first grid_sync().
llvm::Error NVPTXTarget::emitKernelPrologue(LoweringContext &C) const {
  if (!C.CurDecl->UsesGridSync)
    return llvm::Error::success();
  llvm::Argument *State = C.CurFn->getArg(unsigned(C.CurDecl->Params.size()));
  State->setName(GridStateParam);
  llvm::LLVMContext &Ctx = C.getContext();
  auto *Keep = llvm::BasicBlock::Create(Ctx, "grid_state.keep", C.CurFn);
  auto *Body = llvm::BasicBlock::Create(Ctx, "body", C.CurFn);
  C.B.CreateCondBr(C.B.CreateICmpEQ(threadBits(C.B), C.B.getInt32(0)), Keep, Body);
  C.B.SetInsertPoint(Keep);
  C.B.CreateStore(State, getGridStateSlot(C.IR));
  C.B.CreateBr(Body);
  C.B.SetInsertPoint(Body);
  return llvm::Error::success();
}

// grid_sync(): a grid-wide barrier built from a counter and a generation
// number in global memory (no libcudadevrt), at the address the launch
// passed (see the file comment). It relies on every block of the grid
// being resident at once, which the cooperative launch that the runtime
// uses for kernels marked Cooperative guarantees.
Expected<Value *> gridjit::nvptx::lowerGridSync(LoweringContext &C, const OpArgs &) {
  llvm::CallInst *Call = C.B.CreateCall(getGridSyncFunction(C));
  Call->addFnAttr(llvm::Attribute::Convergent);
  return nullptr;
}
