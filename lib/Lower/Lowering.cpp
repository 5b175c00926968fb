//===- Lowering.cpp - Verified KIR to LLVM IR -----------------------------===//
//
// Part of gridjit. The structural part of lowering, shared by every target
// but the host: functions and the storage of their variables; statements
// and expressions are StructuralLowering's (StructuralLowering.cpp). Every
// operation and builtin is handed to the target's LoweringRegistry, so the
// only target-specific code lives in the registered lowering functions and
// a few LoweringTarget hooks (address spaces, kernel marking, the module's
// triple).
//
//===----------------------------------------------------------------------===//

#include "StructuralLowering.h"

#include "gridjit/Lower/LoweringContext.h"
#include "gridjit/Lower/LoweringTarget.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

using namespace gridjit;
using llvm::Expected;
using llvm::Value;

//===----------------------------------------------------------------------===//
// LoweringContext
//===----------------------------------------------------------------------===//

llvm::Type *LoweringContext::scalarType(ScalarKind K) const {
  llvm::LLVMContext &C = getContext();
  switch (K) {
  case ScalarKind::Bool:
    return llvm::Type::getInt1Ty(C);
  case ScalarKind::F32:
    return llvm::Type::getFloatTy(C);
  case ScalarKind::F64:
    return llvm::Type::getDoubleTy(C);
  case ScalarKind::F16:
    return llvm::Type::getHalfTy(C);
  case ScalarKind::BF16:
    return llvm::Type::getBFloatTy(C);
  default:
    return llvm::Type::getIntNTy(C, scalarBits(K));
  }
}

llvm::Type *LoweringContext::memType(ScalarKind K) const {
  if (K == ScalarKind::Bool)
    return llvm::Type::getInt8Ty(getContext());
  return scalarType(K);
}

llvm::Type *LoweringContext::aggregateType(const Aggregate &A) const {
  if (A.IsVector)
    return llvm::FixedVectorType::get(toLLVM(A.Fields[0].Ty), A.Fields.size());
  std::vector<llvm::Type *> Fields;
  for (const AggregateField &F : A.Fields)
    Fields.push_back(toLLVM(F.Ty)); // never bool: its i1 is not its memory
  return llvm::StructType::get(getContext(), Fields);
}

llvm::Type *LoweringContext::elementMemType(Type Ty) const {
  if (const Aggregate *A = Ty.getAggregate())
    return aggregateType(*A);
  return memType(Ty.getScalarKind());
}

llvm::Type *LoweringContext::toLLVM(Type Ty) const {
  switch (Ty.getKind()) {
  case Type::Struct:
    return aggregateType(*Ty.getAggregate());
  case Type::Scalar:
    return scalarType(Ty.getScalarKind());
  case Type::Pointer:
    return llvm::PointerType::get(getContext(), T.getAddrSpace(Ty.getAddrSpace()));
  case Type::Array:
    // One flat array of every element, row-major: `[[f32; 17]; 16]` is
    // [272 x float]; an element's address is one GEP on a flat index.
    return llvm::ArrayType::get(elementMemType(Ty), Ty.getArrayElementCount());
  case Type::Void:
  case Type::Invalid:
    break;
  }
  return llvm::Type::getVoidTy(getContext());
}

Value *LoweringContext::toIndex(Value *V, Type Ty) const {
  llvm::Type *I64 = B.getInt64Ty();
  return Ty.isSignedInteger() ? B.CreateSExtOrTrunc(V, I64) : B.CreateZExtOrTrunc(V, I64);
}

llvm::AllocaInst *LoweringContext::createEntryAlloca(llvm::Type *Ty, const llvm::Twine &Name) {
  llvm::BasicBlock &Entry = CurFn->getEntryBlock();
  llvm::IRBuilder<> EB(&Entry, Entry.getFirstInsertionPt());
  return EB.CreateAlloca(Ty, nullptr, Name);
}

llvm::Error LoweringContext::error(SourceLoc Loc, const llvm::Twine &Msg) const {
  DiagnosticEngine D(KM.Name, KM.Source);
  D.error(Loc, Msg.str());
  return D.takeError();
}

Expected<Value *> LoweringContext::lower(Op O, const OpArgs &Args) {
  LowerFn Fn = T.getRegistry().lookup(O);
  if (!Fn)
    return error(Args.Loc, "no lowering for '" + llvm::Twine(opName(O)) + "' on target '" +
                               llvm::Twine(T.getRegistry().getTargetName()) + "'");
  return Fn(*this, Args);
}

//===----------------------------------------------------------------------===//
// The structural lowering of one module
//===----------------------------------------------------------------------===//

namespace {

class ModuleLowering : public StructuralLowering {
public:
  ModuleLowering(const LoweringTarget &T, const Module &KM, llvm::Module &IR)
      : StructuralLowering(IR.getContext(), Context), Context(T, KM, IR, B) {}

  llvm::Error run();

private:
  LoweringContext Context;
  /// Address of each local, parameter copy and array.
  llvm::DenseMap<const VarDecl *, Value *> Slots;
  struct LoopTargets {
    llvm::BasicBlock *Break, *Continue;
  };
  std::vector<LoopTargets> Loops;

  llvm::Error declareFunction(const FunctionDecl &F);
  llvm::Error lowerFunction(const FunctionDecl &F);

  llvm::Error lowerDecl(const DeclStmt &S) override;
  llvm::Error lowerReturn(const ReturnStmt &S) override;
  llvm::Error lowerBreakContinue(bool IsBreak, SourceLoc Loc) override {
    B.CreateBr(IsBreak ? Loops.back().Break : Loops.back().Continue);
    return llvm::Error::success();
  }
  void enterLoop(llvm::BasicBlock *Break, llvm::BasicBlock *Continue) override {
    Loops.push_back({Break, Continue});
  }
  void exitLoop() override { Loops.pop_back(); }
  void bindAddress(const VarDecl &V, Value *Addr) override { Slots[&V] = Addr; }
  Expected<Value *> loadVariable(const NameExpr &E) override;
  Expected<Value *> addressOfVariable(const NameExpr &N) override;
  Expected<Value *> lowerFunctionCall(const CallExpr &E, OpArgs &A,
                                      llvm::ArrayRef<Value *> Args) override;
};

llvm::Error ModuleLowering::run() {
  collectConsts(Ctx.KM);
  for (const auto &D : Ctx.KM.Decls)
    if (const auto *F = llvm::dyn_cast<FunctionDecl>(D.get()))
      if (llvm::Error E = declareFunction(*F))
        return E;
  for (const auto &D : Ctx.KM.Decls)
    if (const auto *F = llvm::dyn_cast<FunctionDecl>(D.get()))
      if (llvm::Error E = lowerFunction(*F))
        return E;
  return llvm::Error::success();
}

llvm::Error ModuleLowering::declareFunction(const FunctionDecl &F) {
  std::vector<llvm::Type *> Params;
  for (const auto &P : F.Params)
    Params.push_back(paramType(*P));
  if (F.IsKernel)
    Ctx.T.addHiddenKernelParams(F, B.getContext(), Params);
  llvm::Type *Ret = F.IsKernel ? B.getVoidTy() : Ctx.toLLVM(F.ReturnTy);
  auto *FT = llvm::FunctionType::get(Ret, Params, /*isVarArg=*/false);
  auto *Fn = llvm::Function::Create(
      FT, F.IsKernel ? llvm::GlobalValue::ExternalLinkage : llvm::GlobalValue::InternalLinkage,
      F.Name, Ctx.IR);
  if (Fn->getName() != F.Name)
    return Ctx.error(F.getLoc(), "the name '" + llvm::Twine(F.Name) +
                                     "' clashes with a symbol the target defines");
  for (unsigned I = 0; I < F.Params.size(); ++I) {
    Fn->getArg(I)->setName(F.Params[I]->Name);
    // An `out`/`inout` parameter points to a temporary of the caller's
    // that nothing else can reach (lowerCall).
    if (F.Params[I]->Mode != ParamMode::In) {
      Fn->addParamAttr(I, llvm::Attribute::NoAlias);
      Fn->addParamAttr(I, llvm::Attribute::NoCapture);
    }
  }
  // As clang does for CUDA: every function may contain a barrier or a warp
  // operation, so no transformation may make a call to it control-dependent
  // on more values than it was (e.g. duplicate it into divergent branches).
  // The optimiser drops the attribute where it proves it unnecessary.
  Fn->addFnAttr(llvm::Attribute::Convergent);
  if (F.IsKernel)
    Ctx.T.markKernel(Ctx.IR, *Fn);
  Functions[&F] = Fn;
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerFunction(const FunctionDecl &F) {
  llvm::Function *Fn = Functions.lookup(&F);
  Ctx.CurDecl = &F;
  Ctx.CurFn = Fn;
  Slots.clear();
  B.SetInsertPoint(llvm::BasicBlock::Create(B.getContext(), "entry", Fn));
  // Parameters are immutable, but giving each a slot keeps name lookup
  // uniform; mem2reg removes the copies.
  for (unsigned I = 0; I < F.Params.size(); ++I) {
    // `out` / `inout`: the body reads and assigns the caller's temporary.
    if (F.Params[I]->Mode != ParamMode::In) {
      Slots[F.Params[I].get()] = Fn->getArg(I);
      continue;
    }
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(Fn->getArg(I)->getType(), F.Params[I]->Name);
    B.CreateStore(Fn->getArg(I), Slot);
    Slots[F.Params[I].get()] = Slot;
  }
  if (F.IsKernel)
    if (llvm::Error E = Ctx.T.emitKernelPrologue(Ctx))
      return E;
  return lowerFunctionBody(F, *Fn);
}

llvm::Error ModuleLowering::lowerDecl(const DeclStmt &S) {
  const VarDecl &V = S.Var;
  // A shared scalar is lowered as a one-element shared array would be:
  // its slot is its address in shared memory, read and written by name.
  if (V.Ty.isArray() || V.Storage == StorageKind::Shared) {
    Op O = V.Storage == StorageKind::Var                 ? Op::LocalArray
           : V.Ty.isArray() && V.Ty.getArrayCount() == 0 ? Op::DynamicShared
                                                         : Op::SharedArray;
    OpArgs A;
    A.Loc = V.Loc;
    A.ResultTy = V.Ty;
    A.Var = &V;
    A.Mem = memoryOf(V);
    Expected<Value *> Base = Ctx.lower(O, A);
    if (!Base)
      return Base.takeError();
    Slots[&V] = *Base;
    return llvm::Error::success();
  }
  llvm::AllocaInst *Slot = Ctx.createEntryAlloca(Ctx.toLLVM(V.Ty), V.Name);
  Slots[&V] = Slot;
  // Without an initializer nothing is stored: the verifier has proved
  // that every read follows an assignment (definite assignment), so the
  // slot is never read before it is written and costs nothing.
  if (!S.Init)
    return llvm::Error::success();
  Expected<Value *> Init = lowerExpr(*S.Init);
  if (!Init)
    return Init.takeError();
  B.CreateStore(*Init, Slot);
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerReturn(const ReturnStmt &S) {
  if (!S.Value) {
    B.CreateRetVoid();
    return llvm::Error::success();
  }
  Expected<Value *> V = lowerExpr(*S.Value);
  if (!V)
    return V.takeError();
  B.CreateRet(*V);
  return llvm::Error::success();
}

Expected<Value *> ModuleLowering::loadVariable(const NameExpr &E) {
  Value *Slot = Slots.lookup(E.Decl);
  if (!Slot)
    return Ctx.error(E.getLoc(), "'" + llvm::Twine(E.Ident) + "' has no storage");
  return B.CreateLoad(Ctx.toLLVM(E.Ty), Slot, E.Ident);
}

Expected<Value *> ModuleLowering::addressOfVariable(const NameExpr &N) {
  Value *Slot = N.Decl ? Slots.lookup(N.Decl) : nullptr;
  if (!Slot)
    return Ctx.error(N.getLoc(), "'" + llvm::Twine(N.Ident) + "' has no storage");
  return Slot;
}

// The callee is the first operand of CallFunction.
Expected<Value *> ModuleLowering::lowerFunctionCall(const CallExpr &E, OpArgs &A,
                                                    llvm::ArrayRef<Value *> Args) {
  A.Callee = E.Fn;
  Value *Callee = Functions.lookup(E.Fn);
  std::vector<Value *> WithCallee(Args.begin(), Args.end());
  WithCallee.insert(WithCallee.begin(), Callee);
  A.Operands = WithCallee;
  return Ctx.lower(Op::CallFunction, A);
}

} // namespace

//===----------------------------------------------------------------------===//
// LoweringTarget: the steps around the lowering of functions
//===----------------------------------------------------------------------===//

LoweringTarget::~LoweringTarget() = default;

llvm::Error LoweringTarget::lowerFunctions(const Module &M, llvm::Module &IR) const {
  ModuleLowering L(*this, M, IR);
  return L.run();
}

Expected<std::unique_ptr<llvm::Module>> LoweringTarget::lower(const Module &M,
                                                              llvm::LLVMContext &Ctx) const {
  if (!M.Verified)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "module '%s' must be verified before it is lowered",
                                   M.Name.c_str());
  auto IR = std::make_unique<llvm::Module>(M.Name, Ctx);
  if (llvm::Error E = prepareModule(*IR))
    return std::move(E);
  if (llvm::Error E = lowerFunctions(M, *IR))
    return std::move(E);
  if (llvm::Error E = finishModule(*IR))
    return std::move(E);
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  if (llvm::verifyModule(*IR, &OS))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: lowering of '%s' for %s produced invalid "
                                   "LLVM IR:\n%s",
                                   M.Name.c_str(), getRegistry().getTargetName().c_str(),
                                   Problems.c_str());
  return std::move(IR);
}
