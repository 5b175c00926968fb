//===- PrintLowering.cpp - print on NVPTX: a call of vprintf ---------------===//
//
// Part of gridjit. `print("i = {}", i)` becomes CUDA's device-side
// `vprintf(format, args)`: the format translated to printf's conversions
// (`%` doubled, each `{}` the conversion of its argument's type, a newline
// appended), a private string in global memory (`.global .align 1 .b8` in
// the PTX), and the arguments packed into a local buffer with C's varargs
// promotions (each at its natural alignment, as vprintf reads them). What
// the driver does with the output: docs/CUDA.md, "Printing".
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "gridjit/IR/PrintFormat.h"

#include "llvm/IR/Module.h"

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;
using llvm::Value;

namespace {

/// A NUL-terminated string in global memory, as a generic pointer.
Value *globalString(LoweringContext &C, llvm::StringRef S, const llvm::Twine &Name) {
  llvm::Constant *Init = llvm::ConstantDataArray::getString(C.getContext(), S);
  auto *G = new llvm::GlobalVariable(C.IR, Init->getType(), /*isConstant=*/true,
                                     llvm::GlobalValue::PrivateLinkage, Init, Name, nullptr,
                                     llvm::GlobalValue::NotThreadLocal, Global);
  G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  G->setAlignment(llvm::Align(1));
  return C.B.CreateAddrSpaceCast(G, C.B.getPtrTy(Generic));
}

/// The value of one argument as vprintf reads it, and its conversion.
std::pair<Value *, const char *> promote(LoweringContext &C, Value *V, Type T) {
  llvm::IRBuilder<> &B = C.B;
  if (T.isPointer())
    return {B.CreatePtrToInt(V, B.getInt64Ty()), "0x%llx"};
  ScalarKind K = T.getScalarKind();
  if (K == ScalarKind::Bool)
    return {B.CreateSelect(V, globalString(C, "true", "gridjit.print.true"),
                           globalString(C, "false", "gridjit.print.false")),
            "%s"};
  if (isFloatScalar(K)) {
    if (isStorageOnlyScalar(K)) // f16, bf16: exactly, through f32
      V = B.CreateFPExt(V, B.getFloatTy());
    return {B.CreateFPCast(V, B.getDoubleTy()), "%g"};
  }
  bool Signed = isSignedScalar(K);
  if (V->getType()->getIntegerBitWidth() == 64)
    return {V, Signed ? "%lld" : "%llu"};
  return {Signed ? B.CreateSExt(V, B.getInt32Ty()) : B.CreateZExt(V, B.getInt32Ty()),
          Signed ? "%d" : "%u"};
}

Expected<Value *> lowerPrint(LoweringContext &C, const OpArgs &A) {
  llvm::IRBuilder<> &B = C.B;
  PrintFormat F;
  PrintFormatError Err;
  if (!A.Call || !A.Call->Format || !parsePrintFormat(*A.Call->Format, F, Err) ||
      F.numArgs() != A.Operands.size())
    return C.error(A.Loc, "internal error: 'print' without a verified format");
  std::string Printf;
  std::vector<Value *> Values;
  std::vector<llvm::Type *> Fields;
  for (unsigned I = 0; I <= F.numArgs(); ++I) {
    for (char Ch : F.Pieces[I])
      Printf += Ch == '%' ? std::string("%%") : std::string(1, Ch);
    if (I == F.numArgs())
      break;
    auto [V, Conv] = promote(C, A.Operands[I], A.Call->Args[I]->Ty);
    Printf += Conv;
    Values.push_back(V);
    Fields.push_back(V->getType());
  }
  Printf += '\n';
  Value *Fmt = globalString(C, Printf, "gridjit.print.fmt");
  Value *Buf = llvm::ConstantPointerNull::get(B.getPtrTy(Generic));
  if (!Values.empty()) {
    // A struct lays each value out at its natural alignment, as vprintf
    // reads its buffer.
    auto *Ty = llvm::StructType::get(C.getContext(), Fields);
    llvm::AllocaInst *Slot = C.createEntryAlloca(Ty, "print.args");
    for (unsigned I = 0; I < Values.size(); ++I)
      B.CreateStore(Values[I], B.CreateStructGEP(Ty, Slot, I));
    Buf = B.CreatePointerBitCastOrAddrSpaceCast(Slot, B.getPtrTy(Generic));
  }
  llvm::FunctionCallee VPrintf = C.IR.getOrInsertFunction(
      "vprintf",
      llvm::FunctionType::get(B.getInt32Ty(), {B.getPtrTy(Generic), B.getPtrTy(Generic)}, false));
  B.CreateCall(VPrintf, {Fmt, Buf});
  return nullptr;
}

} // namespace

llvm::Error gridjit::nvptx::registerPrintLowering(LoweringRegistry &R, llvm::ArrayRef<Op> Omit) {
  const LoweringEntry Table[] = {{Op::BuiltinPrint, lowerPrint}};
  return R.addAll(Table, Omit);
}
