//===- ThreadCode.cpp - One thread's statements and expressions -----------===//
//
// Part of gridjit. The code of one thread, as it runs inside a thread loop
// of a kernel or in a device function: the same structure as the shared
// lowering (lib/Lower/Lowering.cpp), with three differences. Names resolve
// to the storage the host chose (a register, the per-thread frame, a value
// recomputed in this loop); `break`, `continue` and `return` that leave the
// thread loop record the thread's new state instead of branching; and the
// value of a synchronising sub-expression, already computed at block
// level, is read from the frame.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "gridjit/Target/Target.h"

#include "llvm/IR/Constants.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Expected;
using llvm::isa;
using llvm::Value;

HostModuleLowering::HostModuleLowering(const Target &T, const Module &KM, llvm::Module &IR)
    : T(T), KM(KM), IR(IR), B(IR.getContext()), Ctx(T, KM, IR, B, *this) {}

BodyPlan &HostModuleLowering::planOf(const FunctionDecl &F) {
  std::unique_ptr<BodyPlan> &P = Plans[&F];
  if (!P)
    P = std::make_unique<BodyPlan>(*F.Body, F.IsKernel, Sync);
  return *P;
}

llvm::Error HostModuleLowering::run() {
  llvm::LLVMContext &C = IR.getContext();
  llvm::Type *Dim = llvm::ArrayType::get(llvm::Type::getInt32Ty(C), 3);
  EnvTy = llvm::StructType::create(C, {Dim, Dim, Dim, Dim}, "gridjit.env");
  for (const auto &D : KM.Decls)
    if (const auto *Cn = dyn_cast<ConstDecl>(D.get()))
      Consts[&Cn->Var] = Cn;
  // Device functions that synchronise are inlined into the kernels at
  // block level; the others become ordinary functions taking the calling
  // thread's environment as a last, hidden parameter.
  for (const auto &D : KM.Decls) {
    const auto *F = dyn_cast<FunctionDecl>(D.get());
    if (!F || F->IsKernel || Sync.hasSync(*F))
      continue;
    std::vector<llvm::Type *> Params;
    for (const auto &P : F->Params)
      Params.push_back(Ctx.toLLVM(P->Ty));
    Params.push_back(llvm::PointerType::get(C, 0));
    auto *FT = llvm::FunctionType::get(Ctx.toLLVM(F->ReturnTy), Params, false);
    // Prefixed, so that no KIR name can take the name of a C library
    // function the generated code calls (sinf, memset, ...).
    auto *Fn =
        llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage, "kir." + F->Name, IR);
    for (unsigned I = 0; I < F->Params.size(); ++I)
      Fn->getArg(I)->setName(F->Params[I]->Name);
    Fn->getArg(F->Params.size())->setName("gridjit.env");
    // Thread loops only vectorise when the calls in them are inlined; no
    // recursion exists, so this always terminates.
    Fn->addFnAttr(llvm::Attribute::AlwaysInline);
    Fn->addFnAttr(llvm::Attribute::NoUnwind);
    Functions[F] = Fn;
  }
  for (const auto &D : KM.Decls)
    if (const auto *F = dyn_cast<FunctionDecl>(D.get()); F && Functions.count(F))
      if (llvm::Error E = lowerDeviceFunction(*F))
        return E;
  for (const FunctionDecl *K : KM.getKernels())
    if (llvm::Error E = lowerKernel(*K))
      return E;
  return llvm::Error::success();
}

void HostModuleLowering::startDeadBlock() { B.SetInsertPoint(newBlock("dead")); }

llvm::BasicBlock *HostModuleLowering::newBlock(const llvm::Twine &Name) {
  return llvm::BasicBlock::Create(B.getContext(), Name, Ctx.CurFn);
}

/// The in-memory type of a named scalar or pointer value (bool is i8).
static llvm::Type *memTy(const LoweringContext &C, Type Ty) {
  return Ty.isScalar() ? C.memType(Ty.getScalarKind()) : C.toLLVM(Ty);
}

Value *HostModuleLowering::loadScalar(Value *Addr, Type Ty) {
  Value *V = B.CreateLoad(memTy(Ctx, Ty), Addr);
  if (Ty.isBool())
    V = B.CreateICmpNE(V, B.getInt8(0));
  return V;
}

void HostModuleLowering::storeScalar(Value *Addr, Value *V, Type Ty) {
  if (Ty.isBool())
    V = B.CreateZExt(V, B.getInt8Ty());
  B.CreateStore(V, Addr);
}

//===----------------------------------------------------------------------===//
// Device functions
//===----------------------------------------------------------------------===//

llvm::Error HostModuleLowering::lowerDeviceFunction(const FunctionDecl &F) {
  llvm::Function *Fn = Functions.lookup(&F);
  Ctx.CurDecl = &F;
  Ctx.CurFn = Fn;
  Vars.clear();
  Loops.clear();
  Ret = ReturnTarget();
  Env = ThreadEnv();
  Kernel = nullptr;
  ThreadExit = nullptr;
  RematPoint = nullptr;
  B.SetInsertPoint(llvm::BasicBlock::Create(B.getContext(), "entry", Fn));

  // The calling thread's builtin values.
  Value *EnvArg = Fn->getArg(F.Params.size());
  Env.EnvPtr = EnvArg;
  llvm::Value **Fields[] = {Env.Tid, Env.Bid, Env.BDim, Env.GDim};
  const char *Names[] = {"tid", "bid", "bdim", "gdim"};
  for (unsigned I = 0; I < 4; ++I)
    for (unsigned D = 0; D < 3; ++D) {
      Value *Ptr = B.CreateConstInBoundsGEP2_32(EnvTy->getElementType(I),
                                                B.CreateStructGEP(EnvTy, EnvArg, I), 0, D);
      Fields[I][D] = B.CreateLoad(B.getInt32Ty(), Ptr, llvm::Twine(Names[I]) + "." + llvm::Twine("xyz"[D]));
    }
  Env.Linear = B.CreateAdd(
      Env.Tid[0], B.CreateMul(Env.BDim[0], B.CreateAdd(Env.Tid[1], B.CreateMul(Env.BDim[1], Env.Tid[2]))),
      "linear");

  for (unsigned I = 0; I < F.Params.size(); ++I) {
    const VarDecl &P = *F.Params[I];
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(memTy(Ctx, P.Ty), P.Name);
    storeScalar(Slot, Fn->getArg(I), P.Ty);
    Vars[&P] = {VarSlot::Address, Slot, {}, nullptr};
  }
  if (llvm::Error E = lowerThreadBlock(*F.Body))
    return E;
  if (!terminated()) {
    if (Fn->getReturnType()->isVoidTy())
      B.CreateRetVoid();
    else
      B.CreateUnreachable(); // the verifier proved the end is not reached
  }
  llvm::removeUnreachableBlocks(*Fn);
  tagMemoryAccesses(*Fn); // nothing here is private: all marked not aliasing it
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

llvm::Error HostModuleLowering::lowerThreadBlock(const BlockStmt &Blk) {
  for (const StmtPtr &S : Blk.Body) {
    if (terminated())
      startDeadBlock();
    if (llvm::Error E = lowerThreadStmt(*S))
      return E;
  }
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerThreadStmt(const Stmt &S) {
  switch (S.getKind()) {
  case Stmt::Decl:
    return lowerDecl(cast<DeclStmt>(S), /*BlockLevel=*/false);
  case Stmt::Assign:
    return lowerAssign(cast<AssignStmt>(S));
  case Stmt::If:
    return lowerIf(cast<IfStmt>(S));
  case Stmt::While:
    return lowerWhile(cast<WhileStmt>(S));
  case Stmt::For:
    return lowerFor(cast<ForStmt>(S));
  case Stmt::Break:
  case Stmt::Continue:
    return lowerBreakContinue(isa<BreakStmt>(S), S.getLoc());
  case Stmt::Return:
    return lowerReturn(cast<ReturnStmt>(S));
  case Stmt::ExprS:
    return lowerExpr(*cast<ExprStmt>(S).E).takeError();
  case Stmt::Block:
    return lowerThreadBlock(cast<BlockStmt>(S));
  }
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerBreakContinue(bool IsBreak, SourceLoc Loc) {
  if (Loops.empty())
    return Ctx.error(Loc, "internal error: 'break' or 'continue' outside a loop");
  const LoopTarget &L = Loops.back();
  if (L.Break) {
    B.CreateBr(IsBreak ? L.Break : L.Continue);
    return llvm::Error::success();
  }
  // The loop runs at block level: the thread leaves this thread loop and
  // waits, masked, for the loop to end (break) or the iteration (continue).
  escape(IsBreak ? L.BreakCode : L.ContinueCode);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerReturn(const ReturnStmt &S) {
  Value *V = nullptr;
  if (S.Value) {
    Expected<Value *> R = lowerExpr(*S.Value);
    if (!R)
      return R.takeError();
    V = *R;
  }
  switch (Ret.K) {
  case ReturnTarget::Real:
    if (V)
      B.CreateRet(V);
    else
      B.CreateRetVoid();
    break;
  case ReturnTarget::Kernel:
    // The thread is done; later thread loops skip it.
    if (NeedsState)
      escape(1);
    else
      B.CreateBr(ThreadExit);
    break;
  case ReturnTarget::Inline:
    if (V)
      storeScalar(slotAddr(Ret.Result, Env.Linear), V, Ret.ResultTy);
    escape(Ret.Code);
    break;
  }
  return llvm::Error::success();
}

// Declarations in thread code, and block-level declarations whose
// statement runs in a thread loop (BlockLevel: their storage comes from
// the body's plan).
llvm::Error HostModuleLowering::lowerDecl(const DeclStmt &S, bool BlockLevel) {
  const VarDecl &V = S.Var;
  Storage St = BlockLevel && Plan ? Plan->getStorage(&V) : Storage::RegionLocal;
  if (V.Ty.isArray()) {
    if (V.Storage == StorageKind::Shared)
      return llvm::Error::success(); // placed by the kernel's prologue
    OpArgs A;
    A.Loc = V.Loc;
    A.ResultTy = V.Ty;
    A.Var = &V;
    uint64_t Elem = V.Ty.getScalarKind() == ScalarKind::Bool ? 1 : V.Ty.getBits() / 8;
    uint64_t Bytes = Elem * V.Ty.getArrayCount();
    Value *Addr = nullptr;
    if (Kernel && St == Storage::Frame) {
      // Lives across thread loops: one array per thread.
      FrameSlot F = allocFrame(Bytes, Elem);
      F.Array = true;
      Vars[&V] = {VarSlot::Frame, nullptr, F, nullptr};
      Addr = slotAddr(F, Env.Linear);
    } else if (Kernel && Bytes > 64 * 1024) {
      // Too big for a worker's stack; threads of a block run one at a
      // time, so one copy per block serves every thread.
      uint64_t Off = allocBlockFrame(Bytes, 16);
      Addr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), BlockFrameBase, Off, V.Name);
    }
    Value *Ops[] = {Addr};
    if (Addr)
      A.Operands = Ops;
    Expected<Value *> Base = Ctx.lower(Op::LocalArray, A);
    if (!Base)
      return Base.takeError();
    if (!(Kernel && St == Storage::Frame))
      Vars[&V] = {VarSlot::Address, *Base, {}, nullptr};
    return llvm::Error::success();
  }
  Expected<Value *> Init = lowerExpr(*S.Init);
  if (!Init)
    return Init.takeError();
  switch (St) {
  case Storage::Uniform:
    return Ctx.error(V.Loc, "internal error: uniform variable '" + llvm::Twine(V.Name) +
                                "' declared in a thread loop");
  case Storage::Remat:
    Vars[&V] = {VarSlot::Remat, nullptr, {}, S.Init.get()};
    RematValues[&V] = *Init;
    return llvm::Error::success();
  case Storage::Frame: {
    uint64_t Size = V.Ty.isPointer() ? 8 : std::max(1u, V.Ty.getBits() / 8);
    FrameSlot F = allocFrame(Size, Size);
    Vars[&V] = {VarSlot::Frame, nullptr, F, nullptr};
    storeScalar(slotAddr(F, Env.Linear), *Init, V.Ty);
    return llvm::Error::success();
  }
  case Storage::RegionLocal: {
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(memTy(Ctx, V.Ty), V.Name);
    storeScalar(Slot, *Init, V.Ty);
    Vars[&V] = {VarSlot::Address, Slot, {}, nullptr};
    return llvm::Error::success();
  }
  }
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

llvm::Error HostModuleLowering::lowerAssign(const AssignStmt &S) {
  Type Ty = S.Target->Ty.isValid() ? S.Target->Ty : S.Value->Ty;
  Expected<Value *> Addr = lowerAddress(*S.Target);
  if (!Addr)
    return Addr.takeError();
  Expected<Value *> RHS = lowerExpr(*S.Value);
  if (!RHS)
    return RHS.takeError();
  bool IsElement = isa<IndexExpr>(*S.Target);
  Value *NewVal = *RHS;
  if (S.Op != AssignOp::Assign) {
    Value *Old;
    if (IsElement) {
      OpArgs A;
      A.Loc = S.getLoc();
      A.ResultTy = Ty;
      Value *Ops[] = {*Addr};
      A.Operands = Ops;
      Expected<Value *> L = Ctx.lower(Op::Load, A);
      if (!L)
        return L.takeError();
      Old = *L;
    } else {
      Old = loadScalar(*Addr, Ty);
    }
    OpArgs A;
    A.Loc = S.getLoc();
    A.OperandTy = Ty;
    A.ResultTy = Ty;
    Value *Ops[] = {Old, *RHS};
    A.Operands = Ops;
    Op O = compoundOp(S.Op);
    if (Ty.isPointer()) { // `p += i` / `p -= i`
      Value *Idx = Ctx.toIndex(*RHS, S.Value->Ty);
      if (S.Op == AssignOp::Sub)
        Idx = B.CreateNeg(Idx);
      Ops[1] = Idx;
      O = Op::PtrOffset;
    }
    Expected<Value *> V = Ctx.lower(O, A);
    if (!V)
      return V.takeError();
    NewVal = *V;
  }
  if (!IsElement) {
    storeScalar(*Addr, NewVal, Ty);
    return llvm::Error::success();
  }
  OpArgs A;
  A.Loc = S.getLoc();
  A.ResultTy = Ty;
  Value *Ops[] = {*Addr, NewVal};
  A.Operands = Ops;
  return Ctx.lower(Op::Store, A).takeError();
}

llvm::Error HostModuleLowering::lowerIf(const IfStmt &S) {
  Expected<Value *> Cond = lowerExpr(*S.Cond);
  if (!Cond)
    return Cond.takeError();
  llvm::BasicBlock *Then = newBlock("if.then");
  llvm::BasicBlock *Else = S.Else ? newBlock("if.else") : nullptr;
  llvm::BasicBlock *End = newBlock("if.end");
  B.CreateCondBr(*Cond, Then, Else ? Else : End);
  B.SetInsertPoint(Then);
  if (llvm::Error E = lowerThreadBlock(*S.Then))
    return E;
  if (!terminated())
    B.CreateBr(End);
  if (Else) {
    B.SetInsertPoint(Else);
    if (llvm::Error E = lowerThreadStmt(*S.Else))
      return E;
    if (!terminated())
      B.CreateBr(End);
  }
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerWhile(const WhileStmt &S) {
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
  Loops.push_back({End, Header, 0, 0});
  llvm::Error E = lowerThreadBlock(*S.Body);
  Loops.pop_back();
  if (E)
    return E;
  if (!terminated())
    B.CreateBr(Header);
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

// `for i in a..b step s`, exactly as the shared lowering: a, b and s are
// evaluated once; the next index exists only when s < b - i, so a step
// that would wrap past the end (or a non-positive one) ends the loop.
llvm::Error HostModuleLowering::lowerFor(const ForStmt &S) {
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
  Vars[&S.Index] = {VarSlot::Address, Slot, {}, nullptr};

  llvm::BasicBlock *Check = newBlock("for.check");
  llvm::BasicBlock *Body = newBlock("for.body");
  llvm::BasicBlock *Latch = newBlock("for.latch");
  llvm::BasicBlock *Next = newBlock("for.next");
  llvm::BasicBlock *Exit = newBlock("for.end");
  Value *Zero = llvm::ConstantInt::get(Step->getType(), 0);
  B.CreateCondBr(Signed ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero), Check, Exit);
  B.SetInsertPoint(Check);
  Value *I = B.CreateLoad(Slot->getAllocatedType(), Slot);
  B.CreateCondBr(Signed ? B.CreateICmpSLT(I, *End) : B.CreateICmpULT(I, *End), Body, Exit);

  B.SetInsertPoint(Body);
  Loops.push_back({Exit, Latch, 0, 0});
  llvm::Error E = lowerThreadBlock(*S.Body);
  Loops.pop_back();
  if (E)
    return E;
  if (!terminated())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  Value *Cur = B.CreateLoad(Slot->getAllocatedType(), Slot);
  B.CreateCondBr(B.CreateICmpULT(Step, B.CreateSub(*End, Cur)), Next, Exit);
  B.SetInsertPoint(Next);
  B.CreateStore(B.CreateAdd(Cur, Step), Slot);
  B.CreateBr(Body);
  B.SetInsertPoint(Exit);
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Value *HostModuleLowering::constantOf(const ConstValue &V) {
  llvm::Type *Ty = Ctx.toLLVM(V.Ty);
  if (V.Ty.isFloat())
    return llvm::ConstantFP::get(Ty, V.Float);
  return llvm::ConstantInt::get(Ty, V.Int);
}

Expected<Value *> HostModuleLowering::lowerExpr(const Expr &E) {
  // Computed at block level already (a warp operation, a call of a
  // synchronising function, ...): this thread's value is in the frame.
  if (!Hoisted.empty()) {
    auto It = Hoisted.find(&E);
    if (It != Hoisted.end()) {
      if (E.Ty.isVoid())
        return nullptr; // a synchronising function without a result, already run
      if (!Env.Linear)
        return Ctx.error(E.getLoc(), "internal error: block-level value read outside a thread");
      return loadScalar(slotAddr(It->second, Env.Linear), E.Ty);
    }
  }
  switch (E.getKind()) {
  case Expr::IntLit: {
    const auto &L = cast<IntLitExpr>(E);
    if (E.Ty.isFloat())
      return llvm::ConstantFP::get(Ctx.toLLVM(E.Ty), static_cast<double>(L.Value));
    return llvm::ConstantInt::get(Ctx.toLLVM(E.Ty), L.Value);
  }
  case Expr::FloatLit:
    return llvm::ConstantFP::get(Ctx.toLLVM(E.Ty), cast<FloatLitExpr>(E).Value);
  case Expr::BoolLit:
    return llvm::ConstantInt::get(B.getInt1Ty(), cast<BoolLitExpr>(E).Value);
  case Expr::Name:
    return lowerName(cast<NameExpr>(E));
  case Expr::Unary:
    return lowerUnary(cast<UnaryExpr>(E));
  case Expr::Binary:
    return lowerBinary(cast<BinaryExpr>(E));
  case Expr::Cast: {
    const auto &C = cast<CastExpr>(E);
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
    return lowerCall(cast<CallExpr>(E));
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
    const auto &M = cast<MemberExpr>(E);
    const auto &Base = cast<NameExpr>(*M.Base);
    OpArgs A;
    A.Loc = E.getLoc();
    A.ResultTy = E.Ty;
    A.Field = M.Field;
    return Ctx.lower(opFor(Base.Builtin), A);
  }
  }
  return Ctx.error(E.getLoc(), "cannot lower this expression");
}

Expected<Value *> HostModuleLowering::rematValue(const VarDecl &V) {
  auto It = RematValues.find(&V);
  if (It != RematValues.end())
    return It->second;
  const VarSlot &S = Vars[&V];
  if (!RematPoint || !S.Init)
    return Ctx.error(V.Loc, "internal error: '" + llvm::Twine(V.Name) +
                                "' recomputed outside a thread loop");
  // At the top of this thread's iteration, so the value dominates every
  // use in the loop body (the initializer is pure: no control flow, no
  // memory reads).
  llvm::IRBuilderBase::InsertPointGuard Guard(B);
  B.SetInsertPoint(RematPoint);
  Expected<Value *> R = lowerExpr(*S.Init);
  if (!R)
    return R.takeError();
  RematValues[&V] = *R;
  return *R;
}

Expected<Value *> HostModuleLowering::lowerName(const NameExpr &E) {
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
  auto It = Vars.find(E.Decl);
  if (It == Vars.end())
    return Ctx.error(E.getLoc(), "'" + llvm::Twine(E.Ident) + "' has no storage");
  const VarSlot &S = It->second;
  switch (S.K) {
  case VarSlot::Value:
    return S.V;
  case VarSlot::Address:
    return loadScalar(S.V, E.Decl->Ty);
  case VarSlot::Frame:
    if (!Env.Linear)
      break;
    return loadScalar(slotAddr(S.F, Env.Linear), E.Decl->Ty);
  case VarSlot::Remat:
    return rematValue(*E.Decl);
  case VarSlot::None:
    break;
  }
  return Ctx.error(E.getLoc(), "internal error: '" + llvm::Twine(E.Ident) +
                                   "' is not available here");
}

Expected<Value *> HostModuleLowering::lowerUnary(const UnaryExpr &E) {
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

Expected<Value *> HostModuleLowering::lowerBinary(const BinaryExpr &E) {
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
    Value *PtrOps[] = {*L, Ctx.toIndex(*R, E.RHS->Ty)};
    A.Operands = PtrOps;
    return Ctx.lower(Op::PtrOffset, A);
  }
  return Ctx.lower(opFor(E.Op), A);
}

Expected<Value *> HostModuleLowering::lowerShortCircuit(const BinaryExpr &E) {
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

Expected<Value *> HostModuleLowering::lowerCall(const CallExpr &E) {
  if (isSyncBuiltin(E.Builtin) || (E.Fn && !Functions.count(E.Fn)))
    return Ctx.error(E.getLoc(), "internal error: synchronising call '" + llvm::Twine(E.Callee) +
                                     "' inside a thread loop");
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
  if (!E.Fn)
    return Ctx.lower(opFor(E.Builtin), A);
  // A device function gets the calling thread's environment last.
  Value *EnvArg = Env.EnvPtr;
  if (!EnvArg) {
    if (!Env.Linear)
      return Ctx.error(E.getLoc(), "internal error: call outside a thread");
    EnvArg = EnvAlloca;
    llvm::Value **Fields[] = {Env.Tid, Env.Bid, Env.BDim, Env.GDim};
    for (unsigned I = 0; I < 4; ++I)
      for (unsigned D = 0; D < 3; ++D)
        B.CreateStore(Fields[I][D],
                      B.CreateConstInBoundsGEP2_32(EnvTy->getElementType(I),
                                                   B.CreateStructGEP(EnvTy, EnvAlloca, I), 0, D));
  }
  std::vector<Value *> Ops;
  Ops.push_back(Functions.lookup(E.Fn));
  Ops.insert(Ops.end(), Args.begin(), Args.end());
  Ops.push_back(EnvArg);
  A.Callee = E.Fn;
  A.Operands = Ops;
  return Ctx.lower(Op::CallFunction, A);
}

Expected<Value *> HostModuleLowering::arrayBase(const NameExpr &N) {
  auto It = N.Decl ? Vars.find(N.Decl) : Vars.end();
  if (It != Vars.end()) {
    if (It->second.K == VarSlot::Address)
      return It->second.V;
    if (It->second.K == VarSlot::Frame && Env.Linear)
      return slotAddr(It->second.F, Env.Linear);
  }
  return Ctx.error(N.getLoc(), "'" + llvm::Twine(N.Ident) + "' has no storage");
}

// The address of an lvalue: a variable's memory, or an element p[i] / a[i].
Expected<Value *> HostModuleLowering::lowerAddress(const Expr &E) {
  if (const auto *N = dyn_cast<NameExpr>(&E)) {
    auto It = N->Decl ? Vars.find(N->Decl) : Vars.end();
    if (It != Vars.end()) {
      if (It->second.K == VarSlot::Address)
        return It->second.V;
      if (It->second.K == VarSlot::Frame && Env.Linear)
        return slotAddr(It->second.F, Env.Linear);
    }
    return Ctx.error(E.getLoc(), "'" + llvm::Twine(N->Ident) + "' has no storage");
  }
  const auto *Ix = dyn_cast<IndexExpr>(&E);
  if (!Ix)
    return Ctx.error(E.getLoc(), "expression has no address");
  Value *Base;
  if (Ix->Base->Ty.isArray()) {
    Expected<Value *> A = arrayBase(cast<NameExpr>(*Ix->Base));
    if (!A)
      return A.takeError();
    Base = *A;
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
