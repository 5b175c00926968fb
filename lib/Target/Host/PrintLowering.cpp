//===- PrintLowering.cpp - print on the host: a record for the runtime ----===//
//
// Part of gridjit. `print("i = {}", i)` in host code calls the runtime's
// PrintFn (gridjit/Target/HostABI.h) through the BlockContext: a constant
// PrintSite (the format as written, a PrintArg per argument), the
// arguments widened to 64 bits each, and the thread's linear block and
// thread index, by which the runtime orders the records after the launch
// (docs/HostTarget.md, "Printing"). A device function finds the context in
// its environment.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "gridjit/IR/PrintFormat.h"
#include "gridjit/Target/HostABI.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::Expected;
using llvm::Value;

namespace {

/// \p V of type \p T as 64 bits, and how the runtime shows it.
std::pair<Value *, hostabi::PrintArg> widen(llvm::IRBuilder<> &B, Value *V, Type T) {
  llvm::Type *I64 = B.getInt64Ty();
  if (T.isPointer())
    return {B.CreatePtrToInt(V, I64), hostabi::PrintPointer};
  ScalarKind K = T.getScalarKind();
  if (K == ScalarKind::Bool)
    return {B.CreateZExt(V, I64), hostabi::PrintBool};
  if (isFloatScalar(K)) {
    if (isStorageOnlyScalar(K)) // f16, bf16: exactly, through f32
      V = B.CreateFPExt(V, B.getFloatTy());
    return {B.CreateBitCast(B.CreateFPCast(V, B.getDoubleTy()), I64), hostabi::PrintFloat};
  }
  if (isSignedScalar(K))
    return {B.CreateSExtOrTrunc(V, I64), hostabi::PrintSigned};
  return {B.CreateZExtOrTrunc(V, I64), hostabi::PrintUnsigned};
}

} // namespace

Expected<Value *> HostModuleLowering::lowerPrint(const OpArgs &A) {
  const CallExpr *Call = A.Call;
  PrintFormat F;
  PrintFormatError Err;
  if (!Call || !Call->Format || !parsePrintFormat(*Call->Format, F, Err) ||
      F.numArgs() != A.Operands.size())
    return Ctx.error(A.Loc, "internal error: 'print' without a verified format");
  if (!Cur->Env.Linear || (!Cur->CtxArg && !Cur->Env.EnvPtr))
    return Ctx.error(A.Loc, "internal error: 'print' outside a thread");
  llvm::LLVMContext &C = B.getContext();
  llvm::Type *I64 = B.getInt64Ty();
  llvm::PointerType *Ptr = B.getPtrTy();

  // The arguments, in a slot of the function's entry.
  std::vector<uint8_t> Kinds;
  Value *Values = llvm::ConstantPointerNull::get(Ptr);
  if (!A.Operands.empty()) {
    auto *ArrTy = llvm::ArrayType::get(I64, A.Operands.size());
    Values = Ctx.createEntryAlloca(ArrTy, "print.args");
    for (unsigned I = 0; I < A.Operands.size(); ++I) {
      auto [V, Kind] = widen(B, A.Operands[I], Call->Args[I]->Ty);
      B.CreateStore(V, B.CreateConstInBoundsGEP2_32(ArrTy, Values, 0, I));
      Kinds.push_back(Kind);
    }
  }
  // The site: {ptr format, ptr kinds, i32 count}, as hostabi::PrintSite.
  auto Private = [&](llvm::Constant *Init, const llvm::Twine &Name) {
    auto *G = new llvm::GlobalVariable(IR, Init->getType(), /*isConstant=*/true,
                                       llvm::GlobalValue::PrivateLinkage, Init, Name);
    G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
    return G;
  };
  auto *SiteTy = llvm::StructType::get(C, {Ptr, Ptr, B.getInt32Ty()});
  llvm::Constant *Site = Private(
      llvm::ConstantStruct::get(
          SiteTy, {Private(llvm::ConstantDataArray::getString(C, *Call->Format), "print.format"),
                   Private(llvm::ConstantDataArray::get(C, Kinds), "print.kinds"),
                   B.getInt32(Kinds.size())}),
      "print.site");

  Value *Context = runtimeContext();
  Value *State = B.CreateLoad(
      Ptr, B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), Context, hostabi::CtxPrintState));
  Value *Fn =
      B.CreateLoad(Ptr, B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), Context, hostabi::CtxPrint));
  Value *Block = linearBlock();
  auto *FnTy = llvm::FunctionType::get(B.getVoidTy(), {Ptr, Ptr, Ptr, I64, B.getInt32Ty()}, false);
  // A context without a print function (a launch that thought the kernel
  // does not print: never the compiler's metadata, but a mistake there must
  // not become a call of null) prints nothing.
  llvm::BasicBlock *CallBB = newBlock("print.call"), *Done = newBlock("print.done");
  B.CreateCondBr(B.CreateIsNull(Fn), Done, CallBB);
  B.SetInsertPoint(CallBB);
  B.CreateCall(FnTy, Fn, {State, Site, Values, Block, Cur->Env.Linear});
  B.CreateBr(Done);
  B.SetInsertPoint(Done);
  return nullptr;
}

// The context: the kernel's argument, or a device function's environment.
Value *HostModuleLowering::runtimeContext() {
  if (Cur->CtxArg)
    return Cur->CtxArg;
  return B.CreateLoad(B.getPtrTy(), B.CreateStructGEP(EnvTy, Cur->Env.EnvPtr, 6), "ctx");
}

Value *HostModuleLowering::linearBlock() {
  if (Cur->BlockId)
    return Cur->BlockId;
  auto Z = [&](Value *V) { return B.CreateZExt(V, B.getInt64Ty()); };
  return B.CreateAdd(Z(Cur->Env.Bid[0]),
                     B.CreateMul(Z(Cur->Env.GDim[0]),
                                 B.CreateAdd(Z(Cur->Env.Bid[1]), B.CreateMul(Z(Cur->Env.GDim[1]),
                                                                             Z(Cur->Env.Bid[2])))));
}
