//===- BlockCode.cpp - Block-level code: control flow and masks -----------===//
//
// Part of gridjit. A synchronising body (a kernel, or a device function
// inlined because it synchronises) runs at block level, once per block:
//
//  - consecutive statements without synchronisation become one thread
//    loop (`for tz, ty, tx { statements }`), which LLVM can vectorise;
//  - sync_threads() is the boundary between two thread loops; sync_warp()
//    and the warp operations are boundaries too, at warp granularity: the
//    operands are computed in one loop, the results (from the other lanes'
//    operands) in the next;
//  - a synchronising if/while/for runs its control at block level: a
//    uniform condition (the same in every thread) is evaluated once; any
//    other condition is evaluated per thread, and the threads for which it
//    does not hold are masked (their state word says why) until the
//    construct ends;
//  - `break`, `continue` and `return` in thread loops record the thread's
//    state, and later thread loops skip it;
//  - at a synchronisation point every thread of the block (or warp) must
//    be active, or none: anything else is the divergence CUDA leaves
//    undefined, and the entry returns an error naming the point;
//  - grid_sync() ends a phase: the block's registers are saved, the entry
//    returns, and the next call resumes there.
//
// This file holds the statements and the masks; the thread loops are
// ThreadLoopEmitter's (ThreadLoops.cpp), the synchronising
// sub-expressions SyncHoister's (Hoisting.cpp) and the synchronisation
// points SyncPointEmitter's (SyncPoints.cpp).
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"
#include "ThreadNests.h"

#include "gridjit/Support/Limits.h"

#include "llvm/IR/Constants.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Expected;
using llvm::isa;
using llvm::Value;

//===----------------------------------------------------------------------===//
// The state word
//===----------------------------------------------------------------------===//

Value *HostModuleLowering::stateAddr(Value *Thread) { return slotAddr(Cur->StateSlot, Thread); }

void HostModuleLowering::escape(int32_t Code) {
  B.CreateStore(B.getInt32(Code), stateAddr(Cur->Env.Linear));
  B.CreateBr(Cur->ThreadExit);
}

Value *host::emitCountedLoop(llvm::IRBuilder<> &B, llvm::Function *F, Value *N, Value *Init,
                             llvm::function_ref<Value *(Value *I, Value *Acc)> Body,
                             const llvm::Twine &Name) {
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  llvm::BasicBlock *Loop = llvm::BasicBlock::Create(B.getContext(), Name, F);
  llvm::BasicBlock *Exit = llvm::BasicBlock::Create(B.getContext(), Name + ".done", F);
  B.CreateBr(Loop);
  B.SetInsertPoint(Loop);
  llvm::PHINode *I = B.CreatePHI(N->getType(), 2, "i");
  I->addIncoming(llvm::ConstantInt::get(N->getType(), 0), Pre);
  llvm::PHINode *Acc = nullptr;
  if (Init) {
    Acc = B.CreatePHI(Init->getType(), 2, "acc");
    Acc->addIncoming(Init, Pre);
  }
  Value *NewAcc = Body(I, Acc);
  llvm::BasicBlock *End = B.GetInsertBlock();
  Value *Next = B.CreateAdd(I, llvm::ConstantInt::get(N->getType(), 1), "", true, true);
  I->addIncoming(Next, End);
  if (Acc)
    Acc->addIncoming(NewAcc, End);
  markThreadNest(*B.CreateCondBr(B.CreateICmpULT(Next, N), Loop, Exit));
  B.SetInsertPoint(Exit);
  return NewAcc;
}

Value *HostModuleLowering::countActive() {
  return emitCountedLoop(
      B, Ctx.CurFn, Cur->NumThreads, B.getInt32(0),
      [&](Value *T, Value *Acc) {
        Value *S = B.CreateLoad(B.getInt32Ty(), stateAddr(T));
        return B.CreateAdd(Acc, B.CreateZExt(B.CreateICmpEQ(S, B.getInt32(0)), B.getInt32Ty()));
      },
      "count.active");
}

void HostModuleLowering::rewriteStates(llvm::function_ref<Value *(Value *)> NewState,
                                       llvm::StringRef Name) {
  emitCountedLoop(
      B, Ctx.CurFn, Cur->NumThreads, nullptr,
      [&](Value *T, Value *) {
        Value *Addr = stateAddr(T);
        Value *S = B.CreateLoad(B.getInt32Ty(), Addr);
        B.CreateStore(NewState(S), Addr);
        return nullptr;
      },
      Name);
}

void HostModuleLowering::remapState(int32_t From, int32_t To) {
  rewriteStates(
      [&](Value *S) {
        return B.CreateSelect(B.CreateICmpEQ(S, B.getInt32(From)), B.getInt32(To), S);
      },
      "state.remap");
}

void HostModuleLowering::swapState(int32_t From, int32_t ToMasked) {
  rewriteStates(
      [&](Value *S) {
        Value *R = B.CreateSelect(B.CreateICmpEQ(S, B.getInt32(From)), B.getInt32(0), S);
        return B.CreateSelect(B.CreateICmpEQ(S, B.getInt32(0)), B.getInt32(ToMasked), R);
      },
      "state.swap");
}

llvm::AllocaInst *HostModuleLowering::uniformAlloca(llvm::Type *Ty, const llvm::Twine &Name) {
  llvm::AllocaInst *A = Ctx.createEntryAlloca(Ty, Name);
  // A cooperative kernel leaves the entry at every grid_sync; the values
  // in scope are saved in the block frame and restored on resumption.
  uint64_t Spill = Cur->Cooperative ? Cur->allocBlockFrame(8, 8) : 0;
  Cur->UniformScope.push_back({A, Spill});
  return A;
}

bool HostModuleLowering::isThreadIdxX(const Expr &E) const {
  if (const auto *M = dyn_cast<MemberExpr>(&E))
    return M->Field == 0 && cast<NameExpr>(*M->Base).Builtin == BuiltinValue::ThreadIdx;
  // `let t: i32 = thread_idx.x;` recomputed in every thread loop.
  const auto *N = dyn_cast<NameExpr>(&E);
  if (!N || !N->Decl)
    return false;
  auto It = Cur->Vars.find(N->Decl);
  return It != Cur->Vars.end() && It->second.K == VarSlot::Remat && It->second.Init &&
         isThreadIdxX(*It->second.Init);
}

// A thread loop whose only statement is `if C { ... }` does nothing for a
// thread where C is false. When C is (or starts with `&&`) a comparison of
// thread_idx.x with a uniform i32 value, the loop can skip the threads for
// which it is false: the tree steps of a reduction (`if t < stride`) and
// single-thread epilogues (`if t == 0`) then cost what they do, not a pass
// over the whole block. The condition is still evaluated in the loop.
std::optional<XGuard> HostModuleLowering::findXGuard(const std::vector<const Stmt *> &Stmts) {
  if (Stmts.size() != 1 || !Cur->Plan)
    return std::nullopt;
  const auto *If = dyn_cast<IfStmt>(Stmts[0]);
  if (!If || If->Else)
    return std::nullopt;
  const Expr *C = If->Cond.get();
  while (const auto *And = dyn_cast<BinaryExpr>(C)) {
    if (And->Op != BinaryOp::LAnd)
      break;
    C = And->LHS.get();
  }
  const auto *Cmp = dyn_cast<BinaryExpr>(C);
  if (!Cmp || Cur->Hoisted.count(Cmp) || !Cmp->LHS->Ty.isScalar() ||
      Cmp->LHS->Ty.getScalarKind() != ScalarKind::I32)
    return std::nullopt;
  XGuard G{Cmp->Op, nullptr, Cmp};
  if (isThreadIdxX(*Cmp->LHS)) {
    G.Bound = Cmp->RHS.get();
  } else if (isThreadIdxX(*Cmp->RHS)) {
    G.Bound = Cmp->LHS.get(); // mirror: U > x is x < U, ...
    switch (G.Op) {
    case BinaryOp::Gt:
      G.Op = BinaryOp::Lt;
      break;
    case BinaryOp::Ge:
      G.Op = BinaryOp::Le;
      break;
    case BinaryOp::Lt:
      G.Op = BinaryOp::Gt;
      break;
    case BinaryOp::Le:
      G.Op = BinaryOp::Ge;
      break;
    default:
      break;
    }
  }
  if (!G.Bound || Sync.hasSync(*G.Bound) || !Cur->Plan->isUniform(*G.Bound))
    return std::nullopt;
  switch (G.Op) {
  case BinaryOp::Lt:
  case BinaryOp::Le:
  case BinaryOp::Eq:
  case BinaryOp::Ge:
  case BinaryOp::Gt:
    return G;
  default:
    return std::nullopt;
  }
}

Expected<XRange> HostModuleLowering::guardRange(const std::vector<const Stmt *> &Stmts) {
  std::optional<XGuard> G = findXGuard(Stmts);
  if (!G)
    return std::nullopt;
  // The bound is uniform: block-level code can evaluate it, as it does a
  // uniform condition; failing to is an error, not a missed optimisation.
  Expected<Value *> U = lowerExpr(*G->Bound);
  if (!U)
    return U.takeError();
  // thread_idx.x is in [0, MaxBlockDim.x): a negative bound (as unsigned,
  // huge) must give an empty range for < and <=, and all threads for > and
  // >=.
  Value *Neg = B.CreateICmpSLT(*U, B.getInt32(0));
  Value *Zero = B.getInt32(0), *All = B.getInt32(limits::MaxBlockDim[0]);
  auto PlusOne = [&] {
    return B.CreateAdd(B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, *U, All), B.getInt32(1));
  };
  switch (G->Op) {
  case BinaryOp::Lt: // x < U: [0, U)
    return std::make_pair(Zero, B.CreateSelect(Neg, Zero, *U));
  case BinaryOp::Le: // x <= U: [0, U + 1)
    return std::make_pair(Zero, B.CreateSelect(Neg, Zero, PlusOne()));
  case BinaryOp::Eq: { // x == U: [U, U + 1)
    Value *Lo = B.CreateSelect(Neg, All, *U);
    return std::make_pair(Lo, B.CreateSelect(Neg, All, PlusOne()));
  }
  case BinaryOp::Ge: // x >= U: [U, block_dim.x)
    return std::make_pair(B.CreateSelect(Neg, Zero, *U), All);
  case BinaryOp::Gt: // x > U: [U + 1, block_dim.x)
    return std::make_pair(B.CreateSelect(Neg, Zero, PlusOne()), All);
  default:
    llvm_unreachable("findXGuard returns only these comparisons");
  }
}

//===----------------------------------------------------------------------===//
// Statement lists
//===----------------------------------------------------------------------===//

bool HostModuleLowering::isUniformDecl(const Stmt &S) const {
  const auto *D = dyn_cast<DeclStmt>(&S);
  return D && !D->Var.Ty.isArray() && Cur->Plan &&
         Cur->Plan->getStorage(&D->Var) == Storage::Uniform;
}

bool HostModuleLowering::isUniformAssign(const Stmt &S) const {
  const auto *A = dyn_cast<AssignStmt>(&S);
  if (!A)
    return false;
  const auto *N = dyn_cast<NameExpr>(A->Target.get());
  return N && N->Decl && Cur->Plan && Cur->Plan->getStorage(N->Decl) == Storage::Uniform &&
         N->Decl->Storage != StorageKind::Param;
}

llvm::Error HostModuleLowering::lowerUniformDecl(const DeclStmt &S) {
  Expected<Value *> Init = lowerExpr(*S.Init);
  if (!Init)
    return Init.takeError();
  llvm::Type *Ty = S.Var.Ty.isBool() ? B.getInt8Ty() : Ctx.toLLVM(S.Var.Ty);
  llvm::AllocaInst *A = uniformAlloca(Ty, S.Var.Name);
  storeScalar(A, *Init, S.Var.Ty);
  Cur->Vars[&S.Var] = {VarSlot::Address, A, {}, nullptr};
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::flush(std::vector<const Stmt *> &Pending,
                                      llvm::function_ref<llvm::Error()> Tail) {
  // With a tail (an iteration-major iteration's step and condition) the
  // loop runs even for an empty body, and visits every thread: a thread
  // that skips the body must still step.
  if (Pending.empty() && !Tail)
    return llvm::Error::success();
  std::vector<const Stmt *> Stmts;
  Stmts.swap(Pending);
  std::optional<XGuard> G;
  Expected<XRange> Range = std::nullopt;
  if (!Tail) {
    G = findXGuard(Stmts);
    Range = guardRange(Stmts);
  }
  if (!Range)
    return Range.takeError();
  llvm::Error E = FullBlocks.emit(
      Stmts,
      [&]() -> llvm::Error {
        for (const Stmt *S : Stmts) {
          if (terminated())
            startDeadBlock();
          llvm::Error E =
              isa<DeclStmt>(S) ? lowerDecl(cast<DeclStmt>(*S), /*BlockLevel=*/true) : lowerStmt(*S);
          if (E)
            return E;
        }
        if (!Tail)
          return llvm::Error::success();
        if (terminated())
          startDeadBlock();
        return Tail();
      },
      *Range, G ? G->Cmp : nullptr);
  if (E)
    return E;
  for (const Stmt *S : Stmts) {
    if (Cur->InKernelBody && containsReturn(*S))
      Cur->ExitSeen = true;
    if (leavesStmt(*S, /*CountReturns=*/!Cur->InKernelBody))
      Cur->Masked = true;
  }
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerBlockLevel(const BlockStmt &Blk) {
  size_t ScopeMark = Cur->UniformScope.size();
  std::vector<const Stmt *> Pending;
  auto Fail = [&](llvm::Error E) {
    Cur->UniformScope.resize(ScopeMark);
    return E;
  };
  for (const StmtPtr &SP : Blk.Body) {
    const Stmt &S = *SP;
    if (!Sync.runsAtBlockLevel(S)) {
      if (isUniformDecl(S)) {
        // Runs once per block; nothing pending can refer to it yet.
        if (llvm::Error E = lowerUniformDecl(cast<DeclStmt>(S)))
          return Fail(std::move(E));
      } else if (isUniformAssign(S)) {
        if (llvm::Error E = flush(Pending))
          return Fail(std::move(E));
        if (llvm::Error E = lowerAssign(cast<AssignStmt>(S)))
          return Fail(std::move(E));
      } else {
        Pending.push_back(&S);
      }
      continue;
    }
    if (llvm::Error E = flush(Pending))
      return Fail(std::move(E));
    llvm::Error E = llvm::Error::success();
    switch (S.getKind()) {
    case Stmt::ExprS: {
      const auto *C = dyn_cast<CallExpr>(cast<ExprStmt>(S).E.get());
      if (C && isBarrierBuiltin(C->Builtin)) {
        OpArgs A;
        A.Loc = C->getLoc();
        E = Ctx.lower(opFor(C->Builtin), A).takeError();
        break;
      }
      E = Hoister.hoist(*cast<ExprStmt>(S).E);
      Pending.push_back(&S);
      break;
    }
    case Stmt::Decl:
    case Stmt::Assign:
      E = hoistOperands(S);
      Pending.push_back(&S);
      break;
    case Stmt::Return:
      E = Hoister.hoist(*cast<ReturnStmt>(S).Value);
      Pending.push_back(&S);
      break;
    default:
      E = lowerBlockLevelStmt(S);
      break;
    }
    if (E)
      return Fail(std::move(E));
  }
  if (llvm::Error E = flush(Pending))
    return Fail(std::move(E));
  Cur->UniformScope.resize(ScopeMark);
  return llvm::Error::success();
}

// The synchronising parts (warp operations, calls of synchronising
// functions) of a declaration's initializer or an assignment's operands,
// computed at block level before the thread loop that runs the statement.
llvm::Error HostModuleLowering::hoistOperands(const Stmt &S) {
  if (const auto *D = dyn_cast<DeclStmt>(&S)) // no initializer: nothing to hoist
    return D->Init ? Hoister.hoist(*D->Init) : llvm::Error::success();
  const auto &A = cast<AssignStmt>(S);
  if (llvm::Error E = Hoister.hoist(*A.Target))
    return E;
  return Hoister.hoist(*A.Value);
}

// The init or the update of a general `for` at block level: a uniform
// declaration or assignment runs once per block, anything else in a thread
// loop of its own.
llvm::Error HostModuleLowering::lowerBlockLevelSimple(const Stmt &S) {
  if (!Sync.hasSync(S)) {
    if (isUniformDecl(S))
      return lowerUniformDecl(cast<DeclStmt>(S));
    if (isUniformAssign(S))
      return lowerAssign(cast<AssignStmt>(S));
  } else if (llvm::Error E = hoistOperands(S)) {
    return E;
  }
  std::vector<const Stmt *> One = {&S};
  return flush(One);
}

llvm::Error HostModuleLowering::lowerBlockLevelStmt(const Stmt &S) {
  switch (S.getKind()) {
  case Stmt::Block:
    return lowerBlockLevel(cast<BlockStmt>(S));
  case Stmt::If:
    return lowerBlockLevelIf(cast<IfStmt>(S));
  case Stmt::While:
    return lowerBlockLevelWhile(cast<WhileStmt>(S));
  case Stmt::For:
    return lowerBlockLevelFor(cast<ForStmt>(S));
  default:
    return Ctx.error(S.getLoc(), "internal error: unexpected synchronising statement");
  }
}

//===----------------------------------------------------------------------===//
// Control flow at block level
//===----------------------------------------------------------------------===//

llvm::Error HostModuleLowering::lowerBlockLevelElse(const Stmt &S) {
  if (const auto *Blk = dyn_cast<BlockStmt>(&S))
    return lowerBlockLevel(*Blk);
  if (Sync.runsAtBlockLevel(S))
    return lowerBlockLevelIf(cast<IfStmt>(S));
  std::vector<const Stmt *> One = {&S};
  return flush(One);
}

// A masked region, first half: threads for which a per-thread condition
// does not hold get a state code, and every later thread loop skips them.
llvm::Error HostModuleLowering::maskThreads(llvm::function_ref<Expected<Value *>()> Cond,
                                            bool MaskWhen, int32_t Code, llvm::StringRef MaskName) {
  return Loops.emit([&]() -> llvm::Error {
    Expected<Value *> C = Cond();
    if (!C)
      return C.takeError();
    llvm::BasicBlock *Mask = newBlock(MaskName);
    if (MaskWhen)
      B.CreateCondBr(*C, Mask, Cur->ThreadExit);
    else
      B.CreateCondBr(*C, Cur->ThreadExit, Mask);
    B.SetInsertPoint(Mask);
    escape(Code);
    return llvm::Error::success();
  });
}

// A masked region, second half: the block-level code for the threads still
// active, skipped when there are none.
llvm::Error HostModuleLowering::runIfAnyActive(llvm::StringRef Name,
                                               llvm::function_ref<llvm::Error()> Body) {
  llvm::BasicBlock *Run = newBlock(Name);
  llvm::BasicBlock *After = newBlock(Name + ".done");
  B.CreateCondBr(B.CreateICmpEQ(countActive(), B.getInt32(0)), After, Run);
  B.SetInsertPoint(Run);
  if (llvm::Error E = Body())
    return E;
  B.CreateBr(After);
  B.SetInsertPoint(After);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerBlockLevelIf(const IfStmt &S) {
  if (!Sync.hasSync(*S.Cond) && Cur->Plan->isUniform(*S.Cond)) {
    // Every thread agrees: branch once.
    Expected<Value *> C = lowerExpr(*S.Cond);
    if (!C)
      return C.takeError();
    std::optional<llvm::function_ref<llvm::Error()>> Else;
    auto LowerElse = [&] { return lowerBlockLevelElse(*S.Else); };
    if (S.Else)
      Else = LowerElse;
    return emitIfElse(*C, "uif", [&] { return lowerBlockLevel(*S.Then); }, Else);
  }

  // Per-thread condition: the threads for which it is false wait, masked,
  // while the others run the then-branch; then the roles swap.
  if (llvm::Error E = Hoister.hoist(*S.Cond))
    return E;
  int32_t ElseMask = Cur->NextCode++;
  bool SavedMasked = Cur->Masked;
  if (llvm::Error E =
          maskThreads([&] { return lowerExpr(*S.Cond); }, /*MaskWhen=*/false, ElseMask, "mask"))
    return E;
  Cur->Masked = true;
  if (llvm::Error E = runIfAnyActive("dif.then", [&] { return lowerBlockLevel(*S.Then); }))
    return E;
  if (S.Else) {
    int32_t ThenMask = Cur->NextCode++;
    swapState(ElseMask, ThenMask);
    if (llvm::Error E = runIfAnyActive("dif.else", [&] { return lowerBlockLevelElse(*S.Else); }))
      return E;
    remapState(ThenMask, 0);
  } else {
    remapState(ElseMask, 0);
  }
  Cur->Masked = SavedMasked || leavesStmt(S, !Cur->InKernelBody);
  return llvm::Error::success();
}

// A block-level for loop's body and the start of its latch, where the
// threads that continued become active again.
llvm::Error HostModuleLowering::lowerForBody(const BlockLevelFor &L) {
  B.SetInsertPoint(L.Body);
  if (llvm::Error E = lowerLoopBody(*L.S.Body, L.BreakCode, L.ContinueCode))
    return E;
  B.CreateBr(L.Latch);
  B.SetInsertPoint(L.Latch);
  if (L.Leaves)
    remapState(L.ContinueCode, 0);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerLoopBody(const BlockStmt &Body, int32_t BreakCode,
                                              int32_t ContinueCode) {
  Cur->Loops.push_back({nullptr, nullptr, BreakCode, ContinueCode});
  llvm::Error E = lowerBlockLevel(Body);
  Cur->Loops.pop_back();
  return E;
}

/// True when an iteration-major loop's body can be one thread loop per
/// iteration: no `continue` (it would skip the update and the condition),
/// and no statement that runs once per block at its top level (the
/// uniformity analysis keeps none there, since the loop's threads diverge;
/// a uniform declaration is hoisted, see lowerIterationBody).
bool HostModuleLowering::fusesIterations(const BlockStmt &Body) const {
  return !continuesStmt(Body) &&
         llvm::none_of(Body.Body, [&](const StmtPtr &S) { return isUniformAssign(*S); });
}

llvm::Error HostModuleLowering::lowerBlockLevelWhile(const WhileStmt &S) {
  // A loop chosen iteration-major may have turned out uniform once at block
  // level (its variable no longer dropped by a thread loop's assignment):
  // then it is an ordinary uniform loop.
  bool Uniform = !Sync.hasSync(*S.Cond) && Cur->Plan->isUniform(*S.Cond);
  if (Sync.isIterationMajor(S) && !Uniform && fusesIterations(*S.Body))
    return lowerIterationMajorWhile(S);
  if (S.Init)
    if (llvm::Error E = lowerBlockLevelSimple(*S.Init))
      return E;
  bool Leaves = leavesStmt(*S.Body, !Cur->InKernelBody);
  int32_t BreakCode = Cur->NextCode++, ContinueCode = Cur->NextCode++;
  bool SavedMasked = Cur->Masked;
  if (!Uniform || Leaves)
    Cur->Masked = true;
  if (Cur->InKernelBody && containsReturn(*S.Body))
    Cur->ExitSeen = true;
  bool HeadCheck = Cur->maybeInactive();

  llvm::BasicBlock *Head = newBlock("uwhile.cond");
  llvm::BasicBlock *Body = newBlock("uwhile.body");
  llvm::BasicBlock *Exit = newBlock("uwhile.end");
  B.CreateBr(Head);
  B.SetInsertPoint(Head);
  if (Uniform) {
    Expected<Value *> C = lowerExpr(*S.Cond);
    if (!C)
      return C.takeError();
    if (HeadCheck) {
      // Stop as well when no thread is left (all broke out or returned).
      llvm::BasicBlock *Check = newBlock("uwhile.active");
      B.CreateCondBr(*C, Check, Exit);
      B.SetInsertPoint(Check);
      B.CreateCondBr(B.CreateICmpEQ(countActive(), B.getInt32(0)), Exit, Body);
    } else {
      B.CreateCondBr(*C, Body, Exit);
    }
  } else {
    // Threads whose condition fails wait, masked, for the loop's end.
    if (llvm::Error E = Hoister.hoist(*S.Cond))
      return E;
    if (llvm::Error E =
            maskThreads([&] { return lowerExpr(*S.Cond); }, /*MaskWhen=*/false, BreakCode, "stop"))
      return E;
    B.CreateCondBr(B.CreateICmpEQ(countActive(), B.getInt32(0)), Exit, Body);
  }
  B.SetInsertPoint(Body);
  if (llvm::Error E = lowerLoopBody(*S.Body, BreakCode, ContinueCode))
    return E;
  if (Leaves)
    remapState(ContinueCode, 0);
  if (S.Update)
    if (llvm::Error E = lowerBlockLevelSimple(*S.Update))
      return E;
  B.CreateBr(Head);
  B.SetInsertPoint(Exit);
  if (!Uniform || Leaves)
    remapState(BreakCode, 0);
  Cur->Masked = SavedMasked || (!Cur->InKernelBody && containsReturn(*S.Body));
  return llvm::Error::success();
}

/// `step > 0` (signed) or `step != 0` (unsigned): the loop advances.
static Value *stepOK(llvm::IRBuilder<> &B, const BlockLevelFor &L, Value *Step) {
  Value *Zero = llvm::ConstantInt::get(L.LTy, 0);
  return L.Signed ? B.CreateICmpSGT(Step, Zero) : B.CreateICmpNE(Step, Zero);
}

/// `i < end` in the index type's signedness.
static Value *inRange(llvm::IRBuilder<> &B, const BlockLevelFor &L, Value *I, Value *End) {
  return L.Signed ? B.CreateICmpSLT(I, End) : B.CreateICmpULT(I, End);
}

Expected<std::array<Value *, 3>> HostModuleLowering::evalForBounds(const BlockLevelFor &L) {
  auto Eval = [&](const Expr *E) -> Expected<Value *> {
    if (!E)
      return llvm::ConstantInt::get(L.LTy, 1);
    return lowerExpr(*E);
  };
  Expected<Value *> Begin = Eval(L.S.Begin.get()), End = Eval(L.S.End.get()),
                    Step = Eval(L.S.Step.get());
  if (!Begin || !End || !Step) {
    llvm::Error E = llvm::joinErrors(Begin.takeError(), End.takeError());
    return llvm::joinErrors(std::move(E), Step.takeError());
  }
  return std::array<Value *, 3>{*Begin, *End, *Step};
}

llvm::Error HostModuleLowering::lowerBlockLevelFor(const ForStmt &S) {
  BlockLevelFor L{S, Ctx.toLLVM(S.Index.Ty), S.Index.Ty.isSignedInteger(),
                  leavesStmt(*S.Body, !Cur->InKernelBody)};
  L.BreakCode = Cur->NextCode++;
  L.ContinueCode = Cur->NextCode++;
  bool SavedMasked = Cur->Masked;
  L.BodyEntry = newBlock("ufor.entry");
  L.Body = newBlock("ufor.body");
  L.Latch = newBlock("ufor.latch");
  L.Exit = newBlock("ufor.end");
  bool Uniform = Cur->Plan->getStorage(&S.Index) == Storage::Uniform;
  if (llvm::Error E = Uniform ? lowerUniformFor(L) : lowerDivergentFor(L))
    return E;
  Cur->Masked = SavedMasked || (!Cur->InKernelBody && containsReturn(*S.Body));
  return llvm::Error::success();
}

// Bounds the same in every thread: one index per block, in registers.
llvm::Error HostModuleLowering::lowerUniformFor(const BlockLevelFor &L) {
  const ForStmt &S = L.S;
  Expected<std::array<Value *, 3>> Bounds = evalForBounds(L);
  if (!Bounds)
    return Bounds.takeError();
  auto [Begin, End, Step] = *Bounds;
  llvm::AllocaInst *I = uniformAlloca(L.LTy, S.Index.Name);
  llvm::AllocaInst *EndA = uniformAlloca(L.LTy, S.Index.Name + ".end");
  llvm::AllocaInst *StepA = uniformAlloca(L.LTy, S.Index.Name + ".step");
  B.CreateStore(Begin, I);
  B.CreateStore(End, EndA);
  B.CreateStore(Step, StepA);
  Cur->Vars[&S.Index] = {VarSlot::Address, I, {}, nullptr};
  B.CreateCondBr(B.CreateAnd(stepOK(B, L, Step), inRange(B, L, Begin, End)), L.BodyEntry, L.Exit);
  if (L.Leaves)
    Cur->Masked = true;
  if (Cur->InKernelBody && containsReturn(*S.Body))
    Cur->ExitSeen = true;
  B.SetInsertPoint(L.BodyEntry);
  if (Cur->maybeInactive())
    B.CreateCondBr(B.CreateICmpEQ(countActive(), B.getInt32(0)), L.Exit, L.Body);
  else
    B.CreateBr(L.Body);
  if (llvm::Error E = lowerForBody(L))
    return E;
  Value *Index = B.CreateLoad(L.LTy, I);
  Value *StepV = B.CreateLoad(L.LTy, StepA);
  llvm::BasicBlock *Next = newBlock("ufor.next");
  // index + step < end, without overflow: step < end - index.
  B.CreateCondBr(B.CreateICmpULT(StepV, B.CreateSub(B.CreateLoad(L.LTy, EndA), Index)), Next,
                 L.Exit);
  B.SetInsertPoint(Next);
  B.CreateStore(B.CreateAdd(Index, StepV), I);
  B.CreateBr(L.BodyEntry);
  B.SetInsertPoint(L.Exit);
  if (L.Leaves)
    remapState(L.BreakCode, 0);
  return llvm::Error::success();
}

// Bounds per thread: one index per thread in the frame; threads whose
// range ends wait, masked, for the others.
llvm::Error HostModuleLowering::lowerDivergentFor(const BlockLevelFor &L) {
  const ForStmt &S = L.S;
  for (const Expr *E : {S.Begin.get(), S.End.get(), S.Step.get()})
    if (E)
      if (llvm::Error Err = Hoister.hoist(*E))
        return Err;
  bool Fused = Sync.isIterationMajor(S) && fusesIterations(*S.Body);
  bool Stepped = Fused && steppedVariable(S);
  // A stepped index is not kept per thread (lowerIterationMajorFor binds it).
  uint64_t Size = S.Index.Ty.getSizeInBytes();
  ForSlots Slots{Stepped ? FrameSlot() : Cur->allocFrame(Size, Size), Cur->allocFrame(Size, Size),
                 Cur->allocFrame(Size, Size)};
  if (!Stepped)
    Cur->Vars[&S.Index] = {VarSlot::Frame, nullptr, Slots.Index, nullptr};
  // An iteration-major loop's first condition runs once per block.
  bool SavedCold = Cur->Cold;
  Cur->Cold = Cur->Cold || Fused;
  llvm::Error E = maskThreads(
      [&]() -> Expected<Value *> {
        Expected<std::array<Value *, 3>> Bounds = evalForBounds(L);
        if (!Bounds)
          return Bounds.takeError();
        auto [Begin, End, Step] = *Bounds;
        if (!Stepped)
          B.CreateStore(Begin, slotAddr(Slots.Index, Cur->Env.Linear));
        B.CreateStore(End, slotAddr(Slots.End, Cur->Env.Linear));
        B.CreateStore(Step, slotAddr(Slots.Step, Cur->Env.Linear));
        return B.CreateAnd(stepOK(B, L, Step), inRange(B, L, Begin, End));
      },
      /*MaskWhen=*/false, L.BreakCode, "stop");
  Cur->Cold = SavedCold;
  if (E)
    return E;
  Cur->Masked = true;
  if (Cur->InKernelBody && containsReturn(*S.Body))
    Cur->ExitSeen = true;
  if (Fused)
    return lowerIterationMajorFor(L, Slots);
  B.CreateBr(L.BodyEntry);
  B.SetInsertPoint(L.BodyEntry);
  B.CreateCondBr(B.CreateICmpEQ(countActive(), B.getInt32(0)), L.Exit, L.Body);
  if (llvm::Error E = lowerForBody(L))
    return E;
  if (llvm::Error E = stepDivergentFor(L, Slots))
    return E;
  B.CreateBr(L.BodyEntry);
  B.SetInsertPoint(L.Exit);
  remapState(L.BreakCode, 0);
  return llvm::Error::success();
}

// In a thread loop: each active thread steps its index, or, at the end of
// its range, waits masked for the loop to end.
llvm::Error HostModuleLowering::stepOrStop(const BlockLevelFor &L, const ForSlots &Slots,
                                           bool Stepped) {
  Value *Index;
  if (Stepped) {
    Expected<Value *> I = rematValue(L.S.Index);
    if (!I)
      return I.takeError();
    Index = *I;
  } else {
    Index = B.CreateLoad(L.LTy, slotAddr(Slots.Index, Cur->Env.Linear));
  }
  // A stepped loop's step is uniform, and so may be its end: then they
  // are evaluated again (the same values: a uniform variable is never
  // assigned inside a loop whose threads diverge) instead of loaded from
  // every thread's slot.
  auto Bound = [&](const Expr *E, const FrameSlot &Slot) -> Expected<Value *> {
    if (!Stepped || (E && (Sync.hasSync(*E) || !Cur->Plan->isUniform(*E))))
      return B.CreateLoad(L.LTy, slotAddr(Slot, Cur->Env.Linear));
    if (!E)
      return llvm::ConstantInt::get(L.LTy, 1);
    return lowerExpr(*E);
  };
  Expected<Value *> StepE = Bound(L.S.Step.get(), Slots.Step),
                    EndE = Bound(L.S.End.get(), Slots.End);
  if (!StepE || !EndE)
    return llvm::joinErrors(StepE.takeError(), EndE.takeError());
  Value *StepV = *StepE, *EndV = *EndE;
  llvm::BasicBlock *Next = newBlock("next");
  llvm::BasicBlock *Stop = newBlock("stop");
  B.CreateCondBr(B.CreateICmpULT(StepV, B.CreateSub(EndV, Index)), Next, Stop);
  B.SetInsertPoint(Next);
  if (!Stepped)
    B.CreateStore(B.CreateAdd(Index, StepV), slotAddr(Slots.Index, Cur->Env.Linear));
  B.CreateBr(Cur->ThreadExit);
  B.SetInsertPoint(Stop);
  escape(L.BreakCode);
  return llvm::Error::success();
}

// The latch of a per-thread for loop, a thread loop of its own.
llvm::Error HostModuleLowering::stepDivergentFor(const BlockLevelFor &L, const ForSlots &Slots) {
  return Loops.emit([&]() -> llvm::Error { return stepOrStop(L, Slots); });
}

//===----------------------------------------------------------------------===//
// Iteration-major loops
//===----------------------------------------------------------------------===//
//
// A loop without a synchronisation point whose trip count may differ
// between threads (SyncInfo::markIterationMajor) runs at block level like
// a synchronising one, but an iteration is a single thread loop: every
// thread still in the loop runs the body, steps, and evaluates whether it
// goes on; one that does not is masked until no thread is left. The
// threads of a block then take the loop's iterations together, which CUDA
// allows (nothing orders a block's threads between synchronisation
// points): a grid-stride loop's consecutive threads touch consecutive
// elements in every iteration instead of each walking its whole stride.

llvm::Error HostModuleLowering::iterateWhileActive(llvm::StringRef Name, int32_t BreakCode,
                                                   llvm::function_ref<llvm::Error()> Iteration,
                                                   llvm::function_ref<llvm::Error()> Advance) {
  llvm::BasicBlock *Head = newBlock(Name + ".cond");
  llvm::BasicBlock *Some = newBlock(Name + ".some");
  llvm::BasicBlock *All = newBlock(Name + ".all");
  llvm::BasicBlock *Body = newBlock(Name + ".body");
  llvm::BasicBlock *Next = newBlock(Name + ".next");
  llvm::BasicBlock *Exit = newBlock(Name + ".end");
  B.CreateBr(Head);
  B.SetInsertPoint(Head);
  Value *Active = countActive();
  B.CreateCondBr(B.CreateICmpEQ(Active, B.getInt32(0)), Exit, Some);
  B.SetInsertPoint(Some);
  B.CreateCondBr(B.CreateICmpEQ(Active, Cur->NumThreads), All, Body);
  // Every thread of the block still in the loop (the usual case until the
  // last iterations): the copy without the per-thread state check.
  // The body is lowered twice, asking for the same frame slots in the same
  // order each time (as FullBlocks' copies do).
  uint64_t FrameStart = Cur->FrameBytes, BlockFrameStart = Cur->BlockFrameBytes;
  B.SetInsertPoint(All);
  bool SavedMasked = Cur->Masked, SavedExit = Cur->ExitSeen;
  Cur->Masked = Cur->ExitSeen = false;
  llvm::Error E = Iteration();
  Cur->Masked = SavedMasked;
  Cur->ExitSeen = SavedExit;
  if (E)
    return E;
  B.CreateBr(Next);
  uint64_t FrameEnd = Cur->FrameBytes, BlockFrameEnd = Cur->BlockFrameBytes;
  Cur->FrameBytes = FrameStart;
  Cur->BlockFrameBytes = BlockFrameStart;
  // With threads out of the loop: usually a block's last iterations.
  B.SetInsertPoint(Body);
  llvm::SaveAndRestore<bool> Cold(Cur->Cold, true);
  if (llvm::Error E = Iteration())
    return E;
  B.CreateBr(Next);
  Cur->FrameBytes = std::max(FrameEnd, Cur->FrameBytes);
  Cur->BlockFrameBytes = std::max(BlockFrameEnd, Cur->BlockFrameBytes);
  B.SetInsertPoint(Next);
  if (Advance)
    if (llvm::Error E = Advance())
      return E;
  B.CreateBr(Head);
  B.SetInsertPoint(Exit);
  remapState(BreakCode, 0);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerIterationBody(const BlockStmt &Body, const Stmt *Update,
                                                   int32_t BreakCode,
                                                   llvm::function_ref<llvm::Error()> Tail) {
  // A uniform declaration (`let s: i32 = 2 * n;`) has the same value in
  // every iteration (nothing it reads is assigned in a divergent loop): it
  // runs once per iteration at block level, before the thread loop.
  size_t ScopeMark = Cur->UniformScope.size();
  std::vector<const Stmt *> Stmts;
  for (const StmtPtr &S : Body.Body) {
    if (!isUniformDecl(*S)) {
      Stmts.push_back(S.get());
      continue;
    }
    if (llvm::Error E = lowerUniformDecl(cast<DeclStmt>(*S)))
      return E;
  }
  if (Update)
    Stmts.push_back(Update);
  Cur->Loops.push_back({nullptr, nullptr, BreakCode, BreakCode});
  llvm::Error E = flush(Stmts, Tail);
  Cur->Loops.pop_back();
  Cur->UniformScope.resize(ScopeMark);
  return E;
}

// `for var i: T = init; ...; i += step` where init is pure, step uniform,
// and the body leaves i alone.
const VarDecl *HostModuleLowering::steppedVariable(const WhileStmt &S, const Expr *&Init,
                                                   const Expr *&Step) {
  const auto *D = llvm::dyn_cast_or_null<DeclStmt>(S.Init.get());
  const auto *U = llvm::dyn_cast_or_null<AssignStmt>(S.Update.get());
  if (!D || !U || !D->Init || !D->Var.Ty.isInteger() || U->Op != AssignOp::Add)
    return nullptr;
  const auto *N = dyn_cast<NameExpr>(U->Target.get());
  if (!N || N->Decl != &D->Var || Sync.hasSync(*D->Init) || !Cur->Plan->isPure(*D->Init) ||
      Sync.hasSync(*U->Value) || !Cur->Plan->isUniform(*U->Value) || mayChange(*S.Body, &D->Var))
    return nullptr;
  Init = D->Init.get();
  Step = U->Value.get();
  return &D->Var;
}

// `for i in begin..end step s` where begin is pure and s uniform.
const VarDecl *HostModuleLowering::steppedVariable(const ForStmt &S) {
  if (Sync.hasSync(*S.Begin) || !Cur->Plan->isPure(*S.Begin) ||
      (S.Step && (Sync.hasSync(*S.Step) || !Cur->Plan->isUniform(*S.Step))) ||
      mayChange(*S.Body, &S.Index))
    return nullptr;
  return &S.Index;
}

llvm::AllocaInst *HostModuleLowering::bindStepped(const VarDecl &V, const Expr &Init) {
  // Live only while the loop runs, which has no synchronisation point: a
  // grid_sync never has to keep it.
  llvm::Type *Ty = Ctx.toLLVM(V.Ty);
  llvm::AllocaInst *Off = Ctx.createEntryAlloca(Ty, V.Name + ".offset");
  B.CreateStore(llvm::ConstantInt::get(Ty, 0), Off);
  Cur->Vars[&V] = {VarSlot::Stepped, Off, {}, &Init};
  return Off;
}

llvm::Error HostModuleLowering::advanceStepped(llvm::AllocaInst *Off, const Expr *Step) {
  Value *S = llvm::ConstantInt::get(Off->getAllocatedType(), 1);
  if (Step) {
    Expected<Value *> V = lowerExpr(*Step);
    if (!V)
      return V.takeError();
    S = *V;
  }
  B.CreateStore(B.CreateAdd(B.CreateLoad(Off->getAllocatedType(), Off), S), Off);
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerIterationMajorWhile(const WhileStmt &S) {
  int32_t BreakCode = Cur->NextCode++;
  bool SavedMasked = Cur->Masked;
  auto Cond = [&]() -> llvm::Expected<Value *> { return lowerExpr(*S.Cond); };
  const Expr *Init = nullptr, *Step = nullptr;
  const VarDecl *V = steppedVariable(S, Init, Step);
  llvm::AllocaInst *Off = nullptr;
  // Every thread's stepped variable is Init + Off; another loop's variable
  // is in the frame, set by its init.
  if (V)
    Off = bindStepped(*V, *Init);
  else if (S.Init)
    if (llvm::Error E = lowerBlockLevelSimple(*S.Init))
      return E;
  {
    // Once per block.
    llvm::SaveAndRestore<bool> Cold(Cur->Cold, true);
    if (llvm::Error E = maskThreads(Cond, /*MaskWhen=*/false, BreakCode, "stop"))
      return E;
  }
  Cur->Masked = true;
  if (Cur->InKernelBody && containsReturn(*S.Body))
    Cur->ExitSeen = true;
  // The end of an iteration: the update, then the condition for the next
  // one, which masks the thread when it fails. A stepped variable's next
  // value is its value plus the step (Off advances after the thread loop).
  auto Next = [&]() -> llvm::Error {
    Value *Now = nullptr;
    if (V) {
      Expected<Value *> N = rematValue(*V);
      if (!N)
        return N.takeError();
      Expected<Value *> D = lowerExpr(*Step);
      if (!D)
        return D.takeError();
      Now = *N;
      Cur->RematValues[V] = B.CreateAdd(Now, *D, V->Name + ".next");
    }
    Expected<Value *> C = Cond();
    if (V)
      Cur->RematValues[V] = Now;
    if (!C)
      return C.takeError();
    llvm::BasicBlock *Stop = newBlock("stop");
    B.CreateCondBr(*C, Cur->ThreadExit, Stop);
    B.SetInsertPoint(Stop);
    escape(BreakCode);
    return llvm::Error::success();
  };
  llvm::Error E = iterateWhileActive(
      "iwhile", BreakCode,
      [&] { return lowerIterationBody(*S.Body, V ? nullptr : S.Update.get(), BreakCode, Next); },
      V ? [&] { return advanceStepped(Off, Step); } : llvm::function_ref<llvm::Error()>());
  if (E)
    return E;
  Cur->Masked = SavedMasked || (!Cur->InKernelBody && containsReturn(*S.Body));
  return llvm::Error::success();
}

llvm::Error HostModuleLowering::lowerIterationMajorFor(const BlockLevelFor &L,
                                                       const ForSlots &Slots) {
  bool Stepped = steppedVariable(L.S);
  llvm::AllocaInst *Off = Stepped ? bindStepped(L.S.Index, *L.S.Begin) : nullptr;
  return iterateWhileActive(
      "ifor", L.BreakCode,
      [&] {
        return lowerIterationBody(*L.S.Body, nullptr, L.BreakCode,
                                  [&] { return stepOrStop(L, Slots, Stepped); });
      },
      Stepped ? [&] { return advanceStepped(Off, L.S.Step.get()); }
              : llvm::function_ref<llvm::Error()>());
}
