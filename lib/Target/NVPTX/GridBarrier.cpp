//===- GridBarrier.cpp - grid_sync() on NVPTX -----------------------------===//
//
// Part of gridjit. grid_sync() is a call to one function per module that
// implements a grid-wide barrier with a counter and a generation number in
// global memory (no libcudadevrt).
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "llvm/IR/IntrinsicsNVPTX.h"
#include "llvm/IR/Module.h"

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;
using llvm::Value;

namespace {

/// The module's grid barrier function, made on first use. See lowerGridSync.
llvm::Function *getGridSyncFunction(LoweringContext &C) {
  constexpr const char *Name = "__gridjit_grid_sync";
  if (llvm::Function *F = C.IR.getFunction(Name))
    return F;
  llvm::LLVMContext &Ctx = C.getContext();
  llvm::Type *I32 = llvm::Type::getInt32Ty(Ctx);
  auto MakeCounter = [&](const char *N) {
    return new llvm::GlobalVariable(
        C.IR, I32, /*isConstant=*/false, llvm::GlobalValue::InternalLinkage,
        llvm::ConstantInt::get(I32, 0), N, nullptr, llvm::GlobalValue::NotThreadLocal, Global);
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

} // namespace

// grid_sync(): a grid-wide barrier built from a counter and a generation
// number in global memory (no libcudadevrt). It relies on every block of
// the grid being resident at once, which the cooperative launch that the
// runtime uses for kernels marked Cooperative guarantees. Two cooperative
// launches of one loaded module must not run at the same time (they would
// share the counter); the runtime serialises them.
Expected<Value *> gridjit::nvptx::lowerGridSync(LoweringContext &C, const OpArgs &) {
  llvm::CallInst *Call = C.B.CreateCall(getGridSyncFunction(C));
  Call->addFnAttr(llvm::Attribute::Convergent);
  return nullptr;
}
