//===- StructuralLowering.cpp - Statements and expressions to IR ----------===//
//
// Part of gridjit. The statement and expression lowering shared by the
// structural lowering of every target (Lowering.cpp) and the host's thread
// code (Target/Host/ThreadCode.cpp); see StructuralLowering.h.
//
//===----------------------------------------------------------------------===//

#include "StructuralLowering.h"

#include "llvm/IR/Constants.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace gridjit;
using llvm::Expected;
using llvm::Value;

StructuralLowering::~StructuralLowering() = default;

void StructuralLowering::collectConsts(const Module &KM) {
  for (const auto &D : KM.Decls)
    if (const auto *C = llvm::dyn_cast<ConstDecl>(D.get()))
      Consts[&C->Var] = C;
  createConstantGlobals(KM);
}

llvm::Type *StructuralLowering::paramType(const VarDecl &P) const {
  if (P.Mode == ParamMode::In)
    return Ctx.toLLVM(P.Ty);
  return llvm::PointerType::get(Ctx.getContext(), Ctx.IR.getDataLayout().getAllocaAddrSpace());
}

Value *StructuralLowering::loadScalar(Value *Addr, Type Ty) {
  return B.CreateLoad(Ctx.toLLVM(Ty), Addr);
}

void StructuralLowering::storeScalar(Value *Addr, Value *V, Type Ty) { B.CreateStore(V, Addr); }

llvm::Error StructuralLowering::lowerFunctionBody(const FunctionDecl &F, llvm::Function &Fn) {
  if (llvm::Error E = lowerBlock(*F.Body))
    return E;
  if (!terminated()) {
    if (Fn.getReturnType()->isVoidTy())
      B.CreateRetVoid();
    else
      B.CreateUnreachable(); // the verifier proved the end is not reached
  }
  // Code after a return/break/continue was lowered into blocks no edge
  // reaches; drop them so the IR stays readable at -O0.
  llvm::removeUnreachableBlocks(Fn);
  return llvm::Error::success();
}

llvm::Error StructuralLowering::lowerBlock(const BlockStmt &Blk) {
  for (const StmtPtr &S : Blk.Body) {
    if (terminated())
      startDeadBlock();
    if (llvm::Error E = lowerStmt(*S))
      return E;
  }
  return llvm::Error::success();
}

llvm::Error StructuralLowering::lowerStmt(const Stmt &S) {
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
  case Stmt::Continue:
    return lowerBreakContinue(llvm::isa<BreakStmt>(S), S.getLoc());
  case Stmt::Return:
    return lowerReturn(llvm::cast<ReturnStmt>(S));
  case Stmt::ExprS:
    return lowerExpr(*llvm::cast<ExprStmt>(S).E).takeError();
  case Stmt::Block:
    return lowerBlock(llvm::cast<BlockStmt>(S));
  }
  return llvm::Error::success();
}

/// Fills in what a Load or Store of element \p Elem (`b[i]`, of type
/// \p Ty) says about its address: its memory and its type.
static void setElementAccess(OpArgs &A, const Expr &Elem, Type Ty) {
  A.Mem = memoryOf(Elem);
  A.OperandTy = Type::getPointerTo(Ty, A.Mem.Space);
}

/// Vector operands of an arithmetic op: the op sees their lane type and
/// applies itself to LLVM vector values, lane by lane (`f32x4 + f32x4` is
/// one `fadd <4 x float>`).
static void useLaneType(OpArgs &A) {
  if (A.OperandTy.isVector())
    A.OperandTy = A.ResultTy = A.OperandTy.getAggregate()->Fields[0].Ty;
}

/// True for an element `p[i]`, or a field of one (`p[i].a.b`): memory that
/// Load and Store reach, as opposed to a variable's own storage.
static bool isInMemory(const Expr &E) {
  const Expr *X = &E;
  while (const auto *M = llvm::dyn_cast<MemberExpr>(X)) {
    if (!M->IsField)
      return false;
    X = M->Base.get();
  }
  return llvm::isa<IndexExpr>(X);
}

/// The op a compound assignment applies.
static Op compoundOp(AssignOp A) {
  switch (A) {
  case AssignOp::Add:
    return Op::Add;
  case AssignOp::Sub:
    return Op::Sub;
  case AssignOp::Mul:
    return Op::Mul;
  case AssignOp::Div:
    return Op::Div;
  case AssignOp::Rem:
    return Op::Rem;
  case AssignOp::And:
    return Op::And;
  case AssignOp::Or:
    return Op::Or;
  case AssignOp::Xor:
    return Op::Xor;
  case AssignOp::Shl:
    return Op::Shl;
  case AssignOp::Shr:
    return Op::Shr;
  case AssignOp::Assign:
    break;
  }
  llvm_unreachable("plain assignment has no op");
}

llvm::Error StructuralLowering::lowerAssign(const AssignStmt &S) {
  Type Ty = S.Target->Ty.isValid() ? S.Target->Ty : S.Value->Ty;
  // A `var` name is stored through its storage, an element through its
  // address; both come from lowerAddress.
  Expected<Value *> Addr = lowerAddress(*S.Target);
  if (!Addr)
    return Addr.takeError();
  Expected<Value *> RHS = lowerExpr(*S.Value);
  if (!RHS)
    return RHS.takeError();
  Value *NewVal = *RHS;
  if (S.Op != AssignOp::Assign) {
    Expected<Value *> Old = loadPlace(*S.Target, *Addr, Ty, S.getLoc());
    if (!Old)
      return Old.takeError();
    OpArgs A;
    A.Loc = S.getLoc();
    A.OperandTy = Ty;
    A.ResultTy = Ty;
    Value *Ops[] = {*Old, *RHS};
    A.Operands = Ops;
    useLaneType(A);
    Op O = compoundOp(S.Op);
    if (Ty.isPointer()) { // `p += i` / `p -= i`
      Value *Idx = Ctx.toIndex(*RHS, S.Value->Ty);
      if (S.Op == AssignOp::Sub)
        Idx = B.CreateNeg(Idx);
      Ops[1] = Idx;
      O = Op::PtrOffset;
      A.Mem = memoryOf(*S.Target);
    }
    Expected<Value *> V = Ctx.lower(O, A);
    if (!V)
      return V.takeError();
    NewVal = *V;
  }
  return storePlace(*S.Target, *Addr, NewVal, Ty, S.getLoc());
}

Expected<Value *> StructuralLowering::loadPlace(const Expr &Place, Value *Addr, Type Ty,
                                                SourceLoc Loc) {
  if (!isInMemory(Place))
    return loadScalar(Addr, Ty);
  OpArgs A;
  A.Loc = Loc;
  A.ResultTy = Ty;
  setElementAccess(A, Place, Ty);
  Value *Ops[] = {Addr};
  A.Operands = Ops;
  return Ctx.lower(Op::Load, A);
}

llvm::Error StructuralLowering::storePlace(const Expr &Place, Value *Addr, Value *V, Type Ty,
                                           SourceLoc Loc) {
  if (!isInMemory(Place)) {
    storeScalar(Addr, V, Ty);
    return llvm::Error::success();
  }
  OpArgs A;
  A.Loc = Loc;
  A.ResultTy = Ty;
  setElementAccess(A, Place, Ty);
  Value *Ops[] = {Addr, V};
  A.Operands = Ops;
  return Ctx.lower(Op::Store, A).takeError();
}

llvm::Error StructuralLowering::emitIfElse(llvm::Value *Cond, llvm::StringRef Prefix,
                                           llvm::function_ref<llvm::Error()> Then,
                                           std::optional<llvm::function_ref<llvm::Error()>> Else) {
  llvm::BasicBlock *ThenBB = newBlock(Prefix + ".then");
  llvm::BasicBlock *ElseBB = Else ? newBlock(Prefix + ".else") : nullptr;
  llvm::BasicBlock *End = newBlock(Prefix + ".end");
  B.CreateCondBr(Cond, ThenBB, ElseBB ? ElseBB : End);
  B.SetInsertPoint(ThenBB);
  if (llvm::Error E = Then())
    return E;
  if (!terminated())
    B.CreateBr(End);
  if (ElseBB) {
    B.SetInsertPoint(ElseBB);
    if (llvm::Error E = (*Else)())
      return E;
    if (!terminated())
      B.CreateBr(End);
  }
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

llvm::Error StructuralLowering::lowerIf(const IfStmt &S) {
  Expected<Value *> Cond = lowerExpr(*S.Cond);
  if (!Cond)
    return Cond.takeError();
  std::optional<llvm::function_ref<llvm::Error()>> Else;
  auto LowerElse = [&] { return lowerStmt(*S.Else); };
  if (S.Else)
    Else = LowerElse;
  return emitIfElse(*Cond, "if", [&] { return lowerBlock(*S.Then); }, Else);
}

// `while c`, and the general `for init; c; update`: the init runs once;
// the body's end and `continue` go to the latch, which runs the update
// (when there is one) and goes back to the condition.
llvm::Error StructuralLowering::lowerWhile(const WhileStmt &S) {
  if (S.Init)
    if (llvm::Error E = lowerStmt(*S.Init))
      return E;
  llvm::BasicBlock *Header = newBlock("while.cond");
  llvm::BasicBlock *Body = newBlock("while.body");
  llvm::BasicBlock *Latch = S.Update ? newBlock("while.update") : Header;
  llvm::BasicBlock *End = newBlock("while.end");
  B.CreateBr(Header);
  B.SetInsertPoint(Header);
  Expected<Value *> Cond = lowerExpr(*S.Cond);
  if (!Cond)
    return Cond.takeError();
  B.CreateCondBr(*Cond, Body, End);
  B.SetInsertPoint(Body);
  enterLoop(End, Latch);
  llvm::Error E = lowerBlock(*S.Body);
  exitLoop();
  if (E)
    return E;
  if (!terminated())
    B.CreateBr(Latch);
  if (S.Update) {
    B.SetInsertPoint(Latch);
    if (llvm::Error E = lowerStmt(*S.Update))
      return E;
    B.CreateBr(Header);
  }
  B.SetInsertPoint(End);
  return llvm::Error::success();
}

// `for i in a..b step s`: a, b and s are evaluated once. The loop runs
// while i < b; the next index exists only when s < b - i, computed without
// overflow, so a step that would wrap past the end (or a non-positive
// run-time step) ends the loop instead of running forever.
llvm::Error StructuralLowering::lowerFor(const ForStmt &S) {
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
  bindAddress(S.Index, Slot);

  llvm::BasicBlock *Check = newBlock("for.check");
  llvm::BasicBlock *Body = newBlock("for.body");
  llvm::BasicBlock *Latch = newBlock("for.latch");
  llvm::BasicBlock *Next = newBlock("for.next");
  llvm::BasicBlock *Exit = newBlock("for.end");

  // Entry check: a positive step and i < b.
  Value *Zero = llvm::ConstantInt::get(Step->getType(), 0);
  Value *StepPositive = Signed ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
  B.CreateCondBr(StepPositive, Check, Exit);
  B.SetInsertPoint(Check);
  Value *I = B.CreateLoad(Slot->getAllocatedType(), Slot);
  Value *InRange = Signed ? B.CreateICmpSLT(I, *End) : B.CreateICmpULT(I, *End);
  B.CreateCondBr(InRange, Body, Exit);

  B.SetInsertPoint(Body);
  enterLoop(Exit, Latch);
  llvm::Error E = lowerBlock(*S.Body);
  exitLoop();
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

Expected<Value *> StructuralLowering::constantOf(const ConstValue &V) {
  llvm::Type *Ty = Ctx.toLLVM(V.Ty);
  if (V.Ty.isFloat())
    return llvm::ConstantFP::get(Ty, V.Float);
  return llvm::ConstantInt::get(Ty, V.Int, /*isSigned=*/V.Ty.isSignedInteger());
}

Expected<Value *> StructuralLowering::lowerExpr(const Expr &E) {
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
  case Expr::Cond:
    return lowerCond(llvm::cast<CondExpr>(E));
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
  case Expr::Index:
    return loadElement(E);
  case Expr::Member: {
    const auto &M = llvm::cast<MemberExpr>(E);
    if (M.IsField)
      return lowerField(M);
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

Expected<Value *> StructuralLowering::lowerName(const NameExpr &E) {
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
  return loadVariable(E);
}

Expected<Value *> StructuralLowering::lowerUnary(const UnaryExpr &E) {
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

Expected<Value *> StructuralLowering::lowerBinary(const BinaryExpr &E) {
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
  useLaneType(A);
  if (E.LHS->Ty.isPointer() && E.Op == BinaryOp::Add) {
    // p + i: the index's own type decides how it is extended.
    Value *PtrOps[] = {*L, Ctx.toIndex(*R, E.RHS->Ty)};
    A.Operands = PtrOps;
    A.Mem = memoryOf(*E.LHS);
    return Ctx.lower(Op::PtrOffset, A);
  }
  return Ctx.lower(opFor(E.Op), A);
}

// `a && b` and `a || b` evaluate b only when needed.
Expected<Value *> StructuralLowering::lowerShortCircuit(const BinaryExpr &E) {
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
  Expected<BranchValue> R = lowerBranch(*E.RHS, RHSBlock, End);
  if (!R)
    return R.takeError();
  B.SetInsertPoint(End);
  llvm::PHINode *Phi = B.CreatePHI(B.getInt1Ty(), 2);
  Phi->addIncoming(B.getInt1(!IsAnd), LHSEnd);
  Phi->addIncoming(R->V, R->From);
  return Phi;
}

// E lowered from the start of Block, then a branch to End.
Expected<StructuralLowering::BranchValue>
StructuralLowering::lowerBranch(const Expr &E, llvm::BasicBlock *Block, llvm::BasicBlock *End) {
  B.SetInsertPoint(Block);
  Expected<Value *> V = lowerExpr(E);
  if (!V)
    return V.takeError();
  BranchValue R{*V, B.GetInsertBlock()};
  B.CreateBr(End);
  return R;
}

// `c ? a : b` evaluates only the chosen side: two branches and a phi,
// never a select of both (a side may load out of bounds, divide by zero or
// call a function when not chosen). LLVM may still turn it into a select
// where both sides are safe to evaluate.
Expected<Value *> StructuralLowering::lowerCond(const CondExpr &E) {
  Expected<Value *> C = lowerExpr(*E.C);
  if (!C)
    return C.takeError();
  llvm::BasicBlock *TrueBlock = newBlock("cond.true");
  llvm::BasicBlock *FalseBlock = newBlock("cond.false");
  llvm::BasicBlock *End = newBlock("cond.end");
  B.CreateCondBr(*C, TrueBlock, FalseBlock);
  Expected<BranchValue> T = lowerBranch(*E.T, TrueBlock, End);
  if (!T)
    return T.takeError();
  Expected<BranchValue> F = lowerBranch(*E.F, FalseBlock, End);
  if (!F)
    return F.takeError();
  B.SetInsertPoint(End);
  llvm::PHINode *Phi = B.CreatePHI(T->V->getType(), 2, "cond");
  Phi->addIncoming(T->V, T->From);
  Phi->addIncoming(F->V, F->From);
  return Phi;
}

// An `out` or `inout` argument (copy-in/copy-out, LangRef "Out and inout
// parameters"): the caller's place is located with the other arguments,
// left to right; the callee gets the address of a fresh temporary (holding
// the place's value for `inout`), and after the call the temporary's value
// is stored into the place, argument by argument. The callee never sees
// the caller's storage, so two arguments naming the same element, or an
// argument that is also read through a pointer, cannot alias inside it,
// and the host's private-frame alias tags stay true; after inlining, SROA
// turns the temporary back into registers.
Expected<Value *> StructuralLowering::lowerCall(const CallExpr &E) {
  if (E.Construct)
    return lowerConstruct(E);
  struct CopyOut {
    const Expr *Place;
    Value *Addr, *Temp;
  };
  llvm::SmallVector<CopyOut, 4> Outs;
  std::vector<Value *> Args;
  for (size_t I = 0; I < E.Args.size(); ++I) {
    const Expr &Arg = *E.Args[I];
    if (E.argMode(I) == ParamMode::In) {
      Expected<Value *> V = lowerExpr(Arg);
      if (!V)
        return V.takeError();
      Args.push_back(*V);
      continue;
    }
    Expected<Value *> Addr = lowerAddress(Arg);
    if (!Addr)
      return Addr.takeError();
    // Bool as i8, as the host keeps it in memory; NVPTX's i1 loads and
    // stores through the same pointer are as valid.
    Value *Temp = Ctx.createEntryAlloca(
        Arg.Ty.isScalar() ? Ctx.memType(Arg.Ty.getScalarKind()) : Ctx.toLLVM(Arg.Ty), "out.arg");
    if (E.argMode(I) == ParamMode::InOut) {
      Expected<Value *> Old = loadPlace(Arg, *Addr, Arg.Ty, Arg.getLoc());
      if (!Old)
        return Old.takeError();
      storeScalar(Temp, *Old, Arg.Ty);
    }
    Outs.push_back({&Arg, *Addr, Temp});
    Args.push_back(Temp);
  }
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = E.Args.empty() ? Type() : E.Args[0]->Ty;
  A.ResultTy = E.Ty;
  A.Operands = Args;
  if (A.OperandTy.isPointer()) // the atomics: the memory they update
    A.Mem = memoryOf(*E.Args[0]);
  A.Call = &E;
  if (!E.Fn)
    return Ctx.lower(opFor(E.Builtin), A);
  Expected<Value *> R = lowerFunctionCall(E, A, Args);
  if (!R)
    return R;
  for (const CopyOut &O : Outs)
    if (llvm::Error Err = storePlace(*O.Place, O.Addr, loadScalar(O.Temp, O.Place->Ty), O.Place->Ty,
                                     O.Place->getLoc()))
      return std::move(Err);
  return R;
}

// The address of an lvalue: a variable's storage, or an element `p[i]` /
// `a[i]`.
Expected<Value *> StructuralLowering::lowerAddress(const Expr &E) {
  if (const auto *N = llvm::dyn_cast<NameExpr>(&E)) {
    if (llvm::GlobalVariable *G = N->Decl ? ConstantGlobals.lookup(N->Decl) : nullptr)
      return G; // a table or constant memory
    return addressOfVariable(*N);
  }
  if (const auto *M = llvm::dyn_cast<MemberExpr>(&E); M && M->IsField) {
    Expected<Value *> Base = lowerAddress(*M->Base);
    if (!Base)
      return Base.takeError();
    return fieldAddress(*M, *Base);
  }
  const auto *Ix = llvm::dyn_cast<IndexExpr>(&E);
  if (!Ix)
    return Ctx.error(E.getLoc(), "expression has no address");
  if (Ix->Base->Ty.isArray())
    return lowerArrayElementAddress(*Ix);
  Expected<Value *> Base = lowerExpr(*Ix->Base);
  if (!Base)
    return Base.takeError();
  Expected<Value *> Index = lowerExpr(*Ix->Idx);
  if (!Index)
    return Index.takeError();
  return elementAddress(*Ix, Ix->Base->Ty, *Base, Ctx.toIndex(*Index, Ix->Idx->Ty));
}

// An element of an array of any rank, `a[i]` or `t[y][x]`: one flat,
// row-major index into the whole array (`t[y][x]` of `[[T; 17]; 16]` is
// element y * 17 + x), so that a target sees one ElementAddr on the whole
// array, whose extent it knows (the host keeps the flat index inside it).
Expected<Value *> StructuralLowering::lowerArrayElementAddress(const IndexExpr &E) {
  llvm::SmallVector<const IndexExpr *, MaxArrayRank> Chain; // innermost index first
  const Expr *Root = &E;
  while (const auto *Ix = llvm::dyn_cast<IndexExpr>(Root)) {
    Chain.push_back(Ix);
    Root = Ix->Base.get();
  }
  Expected<Value *> Slot = lowerAddress(*Root);
  if (!Slot)
    return Slot.takeError();
  const Type &ArrayTy = Root->Ty;
  Value *Flat = nullptr;
  for (unsigned Dim = 0; Dim < Chain.size(); ++Dim) {
    const IndexExpr &Ix = *Chain[Chain.size() - 1 - Dim];
    Expected<Value *> Index = lowerExpr(*Ix.Idx);
    if (!Index)
      return Index.takeError();
    Value *I64 = Ctx.toIndex(*Index, Ix.Idx->Ty);
    Flat = Flat ? Ctx.B.CreateAdd(
                      Ctx.B.CreateMul(Flat, Ctx.B.getInt64(ArrayTy.getArrayDim(Dim)), "row.start"),
                      I64, "flat")
                : I64;
  }
  return elementAddress(E, ArrayTy, *Slot, Flat);
}

// The address of element \p E: ElementAddr on \p Base (a pointer, or a
// whole array of type \p BaseTy) and an i64 \p Index.
Expected<Value *> StructuralLowering::elementAddress(const IndexExpr &E, const Type &BaseTy,
                                                     Value *Base, Value *Index) {
  OpArgs A;
  A.Loc = E.getLoc();
  A.OperandTy = BaseTy;
  A.ResultTy = E.Ty;
  A.Mem = memoryOf(E);
  Value *Ops[] = {Base, Index};
  A.Operands = Ops;
  return Ctx.lower(Op::ElementAddr, A);
}

// An element, or a field of one: its address, then one Load of its type.
Expected<Value *> StructuralLowering::loadElement(const Expr &E) {
  Expected<Value *> Addr = lowerAddress(E);
  if (!Addr)
    return Addr.takeError();
  OpArgs A;
  A.Loc = startLoc(&E); // `x[i]` at `x`, not at its `[`
  A.ResultTy = E.Ty;
  setElementAccess(A, E, E.Ty);
  Value *Ops[] = {*Addr};
  A.Operands = Ops;
  return Ctx.lower(Op::Load, A);
}

Value *StructuralLowering::fieldAddress(const MemberExpr &E, Value *Base) {
  const Aggregate &A = *E.Base->Ty.getAggregate();
  if (A.IsVector) // a lane: its byte offset
    return B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Base, A.Fields[E.Field].Offset,
                                        A.Fields[E.Field].Name);
  return B.CreateStructGEP(Ctx.aggregateType(A), Base, E.Field, A.Fields[E.Field].Name);
}

// A field of an element is loaded alone (`p[i].key` reads 4 bytes, not the
// whole Node); a field of a value (a variable, a call's result) is taken
// from the value, which LLVM keeps in registers.
Expected<Value *> StructuralLowering::lowerField(const MemberExpr &E) {
  if (isInMemory(E))
    return loadElement(E);
  Expected<Value *> Base = lowerExpr(*E.Base);
  if (!Base)
    return Base.takeError();
  if (E.Base->Ty.isVector())
    return B.CreateExtractElement(*Base, B.getInt32(E.Field));
  return B.CreateExtractValue(*Base, E.Field);
}

Expected<Value *> StructuralLowering::lowerConstruct(const CallExpr &E) {
  llvm::Type *Ty = Ctx.toLLVM(E.Ty);
  Value *V = llvm::PoisonValue::get(Ty);
  for (unsigned I = 0; I < E.Args.size(); ++I) {
    Expected<Value *> Field = lowerExpr(*E.Args[I]);
    if (!Field)
      return Field.takeError();
    V = E.Ty.isVector() ? B.CreateInsertElement(V, *Field, B.getInt32(I))
                        : B.CreateInsertValue(V, *Field, I);
  }
  return V;
}
