//===- Lowering.cpp - Verified KIR to LLVM IR -----------------------------===//
//
// Part of gridjit. The structural part of lowering, shared by every target:
// functions, scopes, control flow, short-circuit operators, lvalues. Every
// operation and builtin is handed to the target's LoweringRegistry, so the
// only target-specific code lives in the registered lowering functions and
// a few Target hooks (address spaces, kernel marking, the module's triple).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Lower/LoweringContext.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Transforms/Utils/Local.h"

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
  default:
    return llvm::Type::getIntNTy(C, scalarBits(K));
  }
}

llvm::Type *LoweringContext::memType(ScalarKind K) const {
  if (K == ScalarKind::Bool)
    return llvm::Type::getInt8Ty(getContext());
  return scalarType(K);
}

llvm::Type *LoweringContext::toLLVM(Type Ty) const {
  switch (Ty.getKind()) {
  case Type::Scalar:
    return scalarType(Ty.getScalarKind());
  case Type::Pointer:
    return llvm::PointerType::get(getContext(), T.getAddrSpace(Ty.getAddrSpace()));
  case Type::Array:
    return llvm::ArrayType::get(memType(Ty.getScalarKind()), Ty.getArrayCount());
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
                               llvm::Twine(T.getName()) + "'");
  return Fn(*this, Args);
}

//===----------------------------------------------------------------------===//
// The structural lowering of one module
//===----------------------------------------------------------------------===//

namespace {

class ModuleLowering {
public:
  ModuleLowering(const Target &T, const Module &KM, llvm::Module &IR)
      : B(IR.getContext()), Ctx(T, KM, IR, B) {}

  llvm::Error run();

private:
  llvm::IRBuilder<> B;
  LoweringContext Ctx;
  llvm::DenseMap<const FunctionDecl *, llvm::Function *> Functions;
  llvm::DenseMap<const VarDecl *, const ConstDecl *> Consts;
  /// Address of each local, parameter copy and array.
  llvm::DenseMap<const VarDecl *, Value *> Slots;
  struct LoopTargets {
    llvm::BasicBlock *Break, *Continue;
  };
  std::vector<LoopTargets> Loops;

  llvm::Error declareFunction(const FunctionDecl &F);
  llvm::Error lowerFunction(const FunctionDecl &F);

  llvm::Error lowerBlock(const BlockStmt &Blk);
  llvm::Error lowerStmt(const Stmt &S);
  llvm::Error lowerDecl(const DeclStmt &S);
  llvm::Error lowerAssign(const AssignStmt &S);
  llvm::Error lowerIf(const IfStmt &S);
  llvm::Error lowerWhile(const WhileStmt &S);
  llvm::Error lowerFor(const ForStmt &S);
  llvm::Error lowerReturn(const ReturnStmt &S);

  Expected<Value *> lowerExpr(const Expr &E);
  Expected<Value *> lowerName(const NameExpr &E);
  Expected<Value *> lowerUnary(const UnaryExpr &E);
  Expected<Value *> lowerBinary(const BinaryExpr &E);
  Expected<Value *> lowerShortCircuit(const BinaryExpr &E);
  Expected<Value *> lowerCall(const CallExpr &E);
  Expected<Value *> lowerAddress(const Expr &E);
  Expected<Value *> constantOf(const ConstValue &V);

  /// True when the current block already ends (after return/break/...).
  bool terminated() const { return B.GetInsertBlock()->getTerminator() != nullptr; }
  /// Continues emission in a fresh block no edge reaches (code after a
  /// `return`, `break` or `continue` is lowered there and later removed).
  void startDeadBlock() {
    B.SetInsertPoint(llvm::BasicBlock::Create(B.getContext(), "dead", Ctx.CurFn));
  }
  llvm::BasicBlock *newBlock(const llvm::Twine &Name) {
    return llvm::BasicBlock::Create(B.getContext(), Name, Ctx.CurFn);
  }
};

llvm::Error ModuleLowering::run() {
  for (const auto &D : Ctx.KM.Decls)
    if (const auto *C = llvm::dyn_cast<ConstDecl>(D.get()))
      Consts[&C->Var] = C;
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
    Params.push_back(Ctx.toLLVM(P->Ty));
  llvm::Type *Ret = F.IsKernel ? B.getVoidTy() : Ctx.toLLVM(F.ReturnTy);
  auto *FT = llvm::FunctionType::get(Ret, Params, /*isVarArg=*/false);
  auto *Fn = llvm::Function::Create(FT,
                                    F.IsKernel ? llvm::GlobalValue::ExternalLinkage
                                               : llvm::GlobalValue::InternalLinkage,
                                    F.Name, Ctx.IR);
  if (Fn->getName() != F.Name)
    return Ctx.error(F.getLoc(), "the name '" + llvm::Twine(F.Name) +
                                     "' clashes with a symbol the target defines");
  for (unsigned I = 0; I < F.Params.size(); ++I)
    Fn->getArg(I)->setName(F.Params[I]->Name);
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
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(Fn->getArg(I)->getType(), F.Params[I]->Name);
    B.CreateStore(Fn->getArg(I), Slot);
    Slots[F.Params[I].get()] = Slot;
  }
  if (llvm::Error E = lowerBlock(*F.Body))
    return E;
  if (!terminated()) {
    if (Fn->getReturnType()->isVoidTy())
      B.CreateRetVoid();
    else
      B.CreateUnreachable(); // the verifier proved the end is not reached
  }
  // Code after a return/break/continue was lowered into blocks no edge
  // reaches; drop them so the IR stays readable at -O0.
  llvm::removeUnreachableBlocks(*Fn);
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerBlock(const BlockStmt &Blk) {
  for (const StmtPtr &S : Blk.Body) {
    if (terminated())
      startDeadBlock();
    if (llvm::Error E = lowerStmt(*S))
      return E;
  }
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerStmt(const Stmt &S) {
  switch (S.getKind()) {
  case Stmt::Decl:
    return lowerDecl(llvm::cast<DeclStmt>(S));
  case Stmt::Assign:
    return lowerAssign(llvm::cast<AssignStmt>(S));
  case Stmt::If:
    return lowerIf(llvm::cast<IfStmt>(S));
  case Stmt::While:
    return lowerWhile(llvm::cast<WhileStmt>(S));
  case Stmt::For:
    return lowerFor(llvm::cast<ForStmt>(S));
  case Stmt::Break:
    B.CreateBr(Loops.back().Break);
    return llvm::Error::success();
  case Stmt::Continue:
    B.CreateBr(Loops.back().Continue);
    return llvm::Error::success();
  case Stmt::Return:
    return lowerReturn(llvm::cast<ReturnStmt>(S));
  case Stmt::ExprS:
    return lowerExpr(*llvm::cast<ExprStmt>(S).E).takeError();
  case Stmt::Block:
    return lowerBlock(llvm::cast<BlockStmt>(S));
  }
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerDecl(const DeclStmt &S) {
  const VarDecl &V = S.Var;
  if (V.Ty.isArray()) {
    Op O = V.Storage == StorageKind::Var       ? Op::LocalArray
           : V.Ty.getArrayCount() == 0         ? Op::DynamicShared
                                               : Op::SharedArray;
    OpArgs A;
    A.Loc = V.Loc;
    A.ResultTy = V.Ty;
    A.Var = &V;
    Expected<Value *> Base = Ctx.lower(O, A);
    if (!Base)
      return Base.takeError();
    Slots[&V] = *Base;
    return llvm::Error::success();
  }
  Expected<Value *> Init = lowerExpr(*S.Init);
  if (!Init)
    return Init.takeError();
  llvm::AllocaInst *Slot = Ctx.createEntryAlloca(Ctx.toLLVM(V.Ty), V.Name);
  B.CreateStore(*Init, Slot);
  Slots[&V] = Slot;
  return llvm::Error::success();
}

/// The op a compound assignment applies.
static Op compoundOp(AssignOp A) {
  switch (A) {
  case AssignOp::Add: return Op::Add;
  case AssignOp::Sub: return Op::Sub;
  case AssignOp::Mul: return Op::Mul;
  case AssignOp::Div: return Op::Div;
  case AssignOp::Rem: return Op::Rem;
  case AssignOp::And: return Op::And;
  case AssignOp::Or: return Op::Or;
  case AssignOp::Xor: return Op::Xor;
  case AssignOp::Shl: return Op::Shl;
  case AssignOp::Shr: return Op::Shr;
  case AssignOp::Assign: break;
  }
  llvm_unreachable("plain assignment has no op");
}

llvm::Error ModuleLowering::lowerAssign(const AssignStmt &S) {
  Type Ty = S.Target->Ty;
  // A `var` name is stored through its slot, an element through its
  // address; both come from lowerAddress.
  Expected<Value *> Addr = lowerAddress(*S.Target);
  if (!Addr)
    return Addr.takeError();
  Expected<Value *> RHS = lowerExpr(*S.Value);
  if (!RHS)
    return RHS.takeError();
  bool IsElement = llvm::isa<IndexExpr>(*S.Target);
  auto Load = [&]() -> Expected<Value *> {
    if (!IsElement)
      return B.CreateLoad(Ctx.toLLVM(Ty), *Addr);
    OpArgs A;
    A.Loc = S.getLoc();
    A.ResultTy = Ty;
    Value *Ops[] = {*Addr};
    A.Operands = Ops;
    return Ctx.lower(Op::Load, A);
  };
  Value *NewVal = *RHS;
  if (S.Op != AssignOp::Assign) {
    Expected<Value *> Old = Load();
    if (!Old)
      return Old.takeError();
    OpArgs A;
    A.Loc = S.getLoc();
    A.OperandTy = Ty;
    A.ResultTy = Ty;
    Value *Ops[] = {*Old, *RHS};
    A.Operands = Ops;
    Op O = compoundOp(S.Op);
    if (Ty.isPointer()) { // `p += i`: the only compound form on pointers
      Ops[1] = Ctx.toIndex(*RHS, S.Value->Ty);
      O = Op::PtrOffset;
    }
    Expected<Value *> V = Ctx.lower(O, A);
    if (!V)
      return V.takeError();
    NewVal = *V;
  }
  if (!IsElement) {
    B.CreateStore(NewVal, *Addr);
    return llvm::Error::success();
  }
  OpArgs A;
  A.Loc = S.getLoc();
  A.ResultTy = Ty;
  Value *Ops[] = {*Addr, NewVal};
  A.Operands = Ops;
  return Ctx.lower(Op::Store, A).takeError();
}

llvm::Error ModuleLowering::lowerIf(const IfStmt &S) {
  Expected<Value *> Cond = lowerExpr(*S.Cond);
  if (!Cond)
    return Cond.takeError();
  llvm::BasicBlock *Then = newBlock("if.then");
  llvm::BasicBlock *Else = S.Else ? newBlock("if.else") : nullptr;
  llvm::BasicBlock *End = newBlock("if.end");
  B.CreateCondBr(*Cond, Then, Else ? Else : End);
  B.SetInsertPoint(Then);
  if (llvm::Error E = lowerBlock(*S.Then))
    return E;
  if (!terminated())
    B.CreateBr(End);
  if (Else) {
    B.SetInsertPoint(Else);
    if (llvm::Error E = lowerStmt(*S.Else))
      return E;
    if (!terminated())
      B.CreateBr(End);
  }
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

llvm::Error ModuleLowering::lowerWhile(const WhileStmt &S) {
  llvm::BasicBlock *Header = newBlock("while.cond");
  llvm::BasicBlock *Body = newBlock("while.body");
  llvm::BasicBlock *End = newBlock("while.end");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Expected<Value *> Cond = lowerExpr(*S.Cond);
  if (!Cond)
    return Cond.takeError();
  B.CreateCondBr(*Cond, Body, End);
  B.SetInsertPoint(Body);
  Loops.push_back({End, Header});
  llvm::Error E = lowerBlock(*S.Body);
  Loops.pop_back();
  if (E)
    return E;
  if (!terminated())
    B.CreateBr(Header);
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

// `for i in a..b step s`: a, b and s are evaluated once. The loop runs
// while i < b; the next index exists only when s < b - i, computed without
// overflow, so a step that would wrap past the end (or a non-positive
// run-time step) ends the loop instead of running forever.
llvm::Error ModuleLowering::lowerFor(const ForStmt &S) {
  Type Ty = S.Index.Ty;
  bool Signed = Ty.isSignedInteger();
  Expected<Value *> Begin = lowerExpr(*S.Begin);
  if (!Begin)
    return Begin.takeError();
  Expected<Value *> End = lowerExpr(*S.End);
  if (!End)
    return End.takeError();
  Value *Step = llvm::ConstantInt::get(Ctx.toLLVM(Ty), 1);
  if (S.Step) {
    Expected<Value *> St = lowerExpr(*S.Step);
    if (!St)
      return St.takeError();
    Step = *St;
  }
  llvm::AllocaInst *Slot = Ctx.createEntryAlloca(Ctx.toLLVM(Ty), S.Index.Name);
  B.CreateStore(*Begin, Slot);
  Slots[&S.Index] = Slot;

  llvm::BasicBlock *Check = newBlock("for.check");
  llvm::BasicBlock *Body = newBlock("for.body");
  llvm::BasicBlock *Latch = newBlock("for.latch");
  llvm::BasicBlock *Next = newBlock("for.next");
  llvm::BasicBlock *Exit = newBlock("for.end");

  // Entry check: a positive step and i < b.
  Value *StepPositive = B.CreateICmpSGT(Step, llvm::ConstantInt::get(Step->getType(), 0));
  if (!Signed)
    StepPositive = B.CreateICmpNE(Step, llvm::ConstantInt::get(Step->getType(), 0));
  B.CreateCondBr(StepPositive, Check, Exit);
  B.SetInsertPoint(Check);
  Value *I = B.CreateLoad(Slot->getAllocatedType(), Slot);
  Value *InRange = Signed ? B.CreateICmpSLT(I, *End) : B.CreateICmpULT(I, *End);
  B.CreateCondBr(InRange, Body, Exit);

  B.SetInsertPoint(Body);
  Loops.push_back({Exit, Latch});
  llvm::Error E = lowerBlock(*S.Body);
  Loops.pop_back();
  if (E)
    return E;
  if (!terminated())
    B.CreateBr(Latch);

  // Latch: i < b holds here, so b - i is positive and fits the unsigned
  // type of the same width.
  B.SetInsertPoint(Latch);
  Value *Cur = B.CreateLoad(Slot->getAllocatedType(), Slot);
  Value *Remaining = B.CreateSub(*End, Cur);
  B.CreateCondBr(B.CreateICmpULT(Step, Remaining), Next, Exit);
  B.SetInsertPoint(Next);
  B.CreateStore(B.CreateAdd(Cur, Step), Slot);
  B.CreateBr(Body);
  B.SetInsertPoint(Exit);
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

Expected<Value *> ModuleLowering::constantOf(const ConstValue &V) {
  llvm::Type *Ty = Ctx.toLLVM(V.Ty);
  if (V.Ty.isFloat())
    return llvm::ConstantFP::get(Ty, V.Float);
  return llvm::ConstantInt::get(Ty, V.Int, /*isSigned=*/V.Ty.isSignedInteger());
}

Expected<Value *> ModuleLowering::lowerExpr(const Expr &E) {
  switch (E.getKind()) {
  case Expr::IntLit: {
    const auto &L = llvm::cast<IntLitExpr>(E);
    if (E.Ty.isFloat())
      return llvm::ConstantFP::get(Ctx.toLLVM(E.Ty), static_cast<double>(L.Value));
    return llvm::ConstantInt::get(Ctx.toLLVM(E.Ty), L.Value);
  }
  case Expr::FloatLit:
    return llvm::ConstantFP::get(Ctx.toLLVM(E.Ty), llvm::cast<FloatLitExpr>(E).Value);
  case Expr::BoolLit:
    return llvm::ConstantInt::get(B.getInt1Ty(), llvm::cast<BoolLitExpr>(E).Value);
  case Expr::Name:
    return lowerName(llvm::cast<NameExpr>(E));
  case Expr::Unary:
    return lowerUnary(llvm::cast<UnaryExpr>(E));
  case Expr::Binary:
    return lowerBinary(llvm::cast<BinaryExpr>(E));
  case Expr::Cast: {
    const auto &C = llvm::cast<CastExpr>(E);
    Expected<Value *> V = lowerExpr(*C.Operand);
    if (!V)
      return V.takeError();
    OpArgs A;
    A.Loc = E.getLoc();
    A.OperandTy = C.Operand->Ty;
    A.ResultTy = E.Ty;
    Value *Ops[] = {*V};
    A.Operands = Ops;
    return Ctx.lower(Op::Cast, A);
  }
  case Expr::Call:
    return lowerCall(llvm::cast<CallExpr>(E));
  case Expr::Index: {
    Expected<Value *> Addr = lowerAddress(E);
    if (!Addr)
      return Addr.takeError();
    OpArgs A;
    A.Loc = E.getLoc();
    A.ResultTy = E.Ty;
    Value *Ops[] = {*Addr};
    A.Operands = Ops;
    return Ctx.lower(Op::Load, A);
  }
  case Expr::Member: {
    const auto &M = llvm::cast<MemberExpr>(E);
    const auto &Base = llvm::cast<NameExpr>(*M.Base);
    OpArgs A;
    A.Loc = E.getLoc();
    A.ResultTy = E.Ty;
    A.Field = M.Field;
    return Ctx.lower(opFor(Base.Builtin), A);
  }
  }
  return Ctx.error(E.getLoc(), "cannot lower this expression");
}

Expected<Value *> ModuleLowering::lowerName(const NameExpr &E) {
  if (!E.Decl) {
    OpArgs A;
    A.Loc = E.getLoc();
    A.ResultTy = E.Ty;
    return Ctx.lower(opFor(E.Builtin), A);
  }
  if (E.Decl->Storage == StorageKind::Const) {
    const ConstDecl *C = Consts.lookup(E.Decl);
    if (!C || !C->Value)
      return Ctx.error(E.getLoc(), "constant '" + llvm::Twine(E.Ident) + "' has no value");
    return constantOf(*C->Value);
  }
  Value *Slot = Slots.lookup(E.Decl);
  if (!Slot)
    return Ctx.error(E.getLoc(), "'" + llvm::Twine(E.Ident) + "' has no storage");
  return B.CreateLoad(Ctx.toLLVM(E.Ty), Slot, E.Ident);
}

Expected<Value *> ModuleLowering::lowerUnary(const UnaryExpr &E) {
  if (E.Op == UnaryOp::AddrOf)
    return lowerAddress(*E.Operand);
  Expected<Value *> V = lowerExpr(*E.Operand);
  if (!V)
    return V.takeError();
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = E.Operand->Ty;
  A.ResultTy = E.Ty;
  Value *Ops[] = {*V};
  A.Operands = Ops;
  return Ctx.lower(opFor(E.Op), A);
}

Expected<Value *> ModuleLowering::lowerBinary(const BinaryExpr &E) {
  if (E.Op == BinaryOp::LAnd || E.Op == BinaryOp::LOr)
    return lowerShortCircuit(E);
  Expected<Value *> L = lowerExpr(*E.LHS);
  if (!L)
    return L.takeError();
  Expected<Value *> R = lowerExpr(*E.RHS);
  if (!R)
    return R.takeError();
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = E.LHS->Ty;
  A.ResultTy = E.Ty;
  Value *Ops[] = {*L, *R};
  A.Operands = Ops;
  if (E.LHS->Ty.isPointer() && E.Op == BinaryOp::Add) {
    // p + i: the index's own type decides how it is extended.
    Value *PtrOps[] = {*L, Ctx.toIndex(*R, E.RHS->Ty)};
    A.Operands = PtrOps;
    return Ctx.lower(Op::PtrOffset, A);
  }
  return Ctx.lower(opFor(E.Op), A);
}

// `a && b` and `a || b` evaluate b only when needed.
Expected<Value *> ModuleLowering::lowerShortCircuit(const BinaryExpr &E) {
  bool IsAnd = E.Op == BinaryOp::LAnd;
  Expected<Value *> L = lowerExpr(*E.LHS);
  if (!L)
    return L.takeError();
  llvm::BasicBlock *LHSEnd = B.GetInsertBlock();
  llvm::BasicBlock *RHSBlock = newBlock(IsAnd ? "and.rhs" : "or.rhs");
  llvm::BasicBlock *End = newBlock(IsAnd ? "and.end" : "or.end");
  if (IsAnd)
    B.CreateCondBr(*L, RHSBlock, End);
  else
    B.CreateCondBr(*L, End, RHSBlock);
  B.SetInsertPoint(RHSBlock);
  Expected<Value *> R = lowerExpr(*E.RHS);
  if (!R)
    return R.takeError();
  llvm::BasicBlock *RHSEnd = B.GetInsertBlock();
  B.CreateBr(End);
  B.SetInsertPoint(End);
  llvm::PHINode *Phi = B.CreatePHI(B.getInt1Ty(), 2);
  Phi->addIncoming(B.getInt1(!IsAnd), LHSEnd);
  Phi->addIncoming(*R, RHSEnd);
  return Phi;
}

Expected<Value *> ModuleLowering::lowerCall(const CallExpr &E) {
  std::vector<Value *> Args;
  for (const ExprPtr &Arg : E.Args) {
    Expected<Value *> V = lowerExpr(*Arg);
    if (!V)
      return V.takeError();
    Args.push_back(*V);
  }
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = E.Args.empty() ? Type() : E.Args[0]->Ty;
  A.ResultTy = E.Ty;
  A.Operands = Args;
  if (E.Fn) {
    A.Callee = E.Fn;
    Value *Callee = Functions.lookup(E.Fn);
    std::vector<Value *> WithCallee = Args;
    WithCallee.insert(WithCallee.begin(), Callee);
    A.Operands = WithCallee;
    return Ctx.lower(Op::CallFunction, A);
  }
  return Ctx.lower(opFor(E.Builtin), A);
}

// The address of an lvalue: a `var` slot, or an element `p[i]` / `a[i]`.
Expected<Value *> ModuleLowering::lowerAddress(const Expr &E) {
  if (const auto *N = llvm::dyn_cast<NameExpr>(&E)) {
    Value *Slot = N->Decl ? Slots.lookup(N->Decl) : nullptr;
    if (!Slot)
      return Ctx.error(E.getLoc(), "'" + llvm::Twine(N->Ident) + "' has no storage");
    return Slot;
  }
  const auto *Ix = llvm::dyn_cast<IndexExpr>(&E);
  if (!Ix)
    return Ctx.error(E.getLoc(), "expression has no address");
  Value *Base;
  if (Ix->Base->Ty.isArray()) {
    Expected<Value *> Slot = lowerAddress(*Ix->Base);
    if (!Slot)
      return Slot.takeError();
    Base = *Slot;
  } else {
    Expected<Value *> P = lowerExpr(*Ix->Base);
    if (!P)
      return P.takeError();
    Base = *P;
  }
  Expected<Value *> Index = lowerExpr(*Ix->Idx);
  if (!Index)
    return Index.takeError();
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = Ix->Base->Ty;
  A.ResultTy = E.Ty;
  Value *Ops[] = {Base, Ctx.toIndex(*Index, Ix->Idx->Ty)};
  A.Operands = Ops;
  return Ctx.lower(Op::ElementAddr, A);
}

} // namespace

//===----------------------------------------------------------------------===//
// Target: the pipeline around the lowering
//===----------------------------------------------------------------------===//

Target::~Target() = default;

const KernelInfo *Artifact::getKernel(std::string_view Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

llvm::Error Target::lowerFunctions(const Module &M, llvm::Module &IR) const {
  ModuleLowering L(*this, M, IR);
  return L.run();
}

Expected<std::unique_ptr<llvm::Module>> Target::lower(const Module &M,
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
                                   M.Name.c_str(), std::string(getName()).c_str(),
                                   Problems.c_str());
  return std::move(IR);
}

/// Bytes of one element of \p K in memory.
static uint64_t elementBytes(ScalarKind K) {
  return K == ScalarKind::Bool ? 1 : scalarBits(K) / 8;
}

/// Adds the static shared bytes and the dynamic-shared flag of every
/// `shared` declaration in \p S to \p K.
static void collectShared(const Stmt &S, KernelInfo &K) {
  auto Visit = [&](const Stmt *Child) {
    if (Child)
      collectShared(*Child, K);
  };
  switch (S.getKind()) {
  case Stmt::Decl: {
    const VarDecl &V = llvm::cast<DeclStmt>(S).Var;
    if (V.Storage != StorageKind::Shared)
      return;
    uint64_t N = V.Ty.getArrayCount();
    if (N == 0)
      K.UsesDynamicShared = true;
    else
      K.StaticSharedBytes += N * elementBytes(V.Ty.getScalarKind());
    return;
  }
  case Stmt::Block:
    for (const StmtPtr &C : llvm::cast<BlockStmt>(S).Body)
      Visit(C.get());
    return;
  case Stmt::If:
    Visit(llvm::cast<IfStmt>(S).Then.get());
    Visit(llvm::cast<IfStmt>(S).Else.get());
    return;
  case Stmt::While:
    Visit(llvm::cast<WhileStmt>(S).Body.get());
    return;
  case Stmt::For:
    Visit(llvm::cast<ForStmt>(S).Body.get());
    return;
  default:
    return;
  }
}

std::vector<KernelInfo> Target::describeKernels(const Module &M) const {
  std::vector<KernelInfo> Kernels;
  for (const FunctionDecl *F : M.getKernels()) {
    KernelInfo K;
    K.Name = F->Name;
    K.Cooperative = F->UsesGridSync;
    for (const auto &P : F->Params) {
      uint32_t Size = P->Ty.isPointer() ? 8 : static_cast<uint32_t>(elementBytes(P->Ty.getScalarKind()));
      K.Params.push_back({P->Name, P->Ty, Size, Size});
    }
    collectShared(*F->Body, K);
    Kernels.push_back(std::move(K));
  }
  return Kernels;
}
