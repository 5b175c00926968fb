//===- ThreadCode.cpp - One thread's statements and expressions -----------===//
//
// Part of gridjit. The code of one thread, as it runs inside a thread loop
// of a kernel or in a device function. The statements and expressions are
// lowered by the shared StructuralLowering (lib/Lower/StructuralLowering.h);
// this file supplies its hooks, for three differences. Names resolve
// to the storage the host chose (a register, the per-thread frame, a value
// recomputed in this loop); `break`, `continue` and `return` that leave the
// thread loop record the thread's new state instead of branching; and the
// value of a synchronising sub-expression, already computed at block
// level, is read from the frame.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"

#include "../SharedLayout.h"

#include "gridjit/Target/HostABI.h"

#include "llvm/IR/Constants.h"
#include "llvm/Support/SaveAndRestore.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Expected;
using llvm::isa;
using llvm::Value;

HostModuleLowering::HostModuleLowering(const LoweringTarget &T, const Module &KM, llvm::Module &IR,
                                       SyncHooks *Hooks, bool IterationMajor, unsigned CheckArch)
    : StructuralLowering(IR.getContext(), HostCtx), T(T), KM(KM), IR(IR),
      HostCtx(T, KM, IR, B, *this), IterationMajor(IterationMajor), CheckArch(CheckArch),
      Loops(*this), FullBlocks(*this), Hoister(*this), SyncPoints(*this, Hooks), Entry(*this) {}

HostLoweringPart::HostLoweringPart(HostModuleLowering &L) : L(L), B(L.B), Ctx(L.Ctx), Cur(L.Cur) {}

llvm::BasicBlock *HostLoweringPart::newBlock(const llvm::Twine &Name) { return L.newBlock(Name); }

BodyPlan &HostModuleLowering::planOf(const FunctionDecl &F) {
  std::unique_ptr<BodyPlan> &P = Plans[&F];
  if (!P) {
    P = std::make_unique<BodyPlan>(*F.Body, F.IsKernel, Sync);
    // Iteration-major loops run at block level, which changes where the
    // variables around them live: plan again.
    if (IterationMajor && Sync.markIterationMajor(*F.Body, *P))
      P = std::make_unique<BodyPlan>(*F.Body, F.IsKernel, Sync);
  }
  return *P;
}

llvm::Error HostModuleLowering::run() {
  llvm::LLVMContext &C = IR.getContext();
  llvm::Type *Dim = llvm::ArrayType::get(llvm::Type::getInt32Ty(C), 3);
  llvm::Type *Ptr = llvm::PointerType::get(C, 0);
  EnvTy = llvm::StructType::create(C, {Dim, Dim, Dim, Dim, Ptr, Ptr, Ptr}, "gridjit.env");
  for (const auto &D : KM.Decls)
    if (const auto *F = dyn_cast<FunctionDecl>(D.get()); F && !F->IsKernel)
      forEachOwnShared(
          *F, [&](const VarDecl &V) { FnSharedSlots.try_emplace(&V, FnSharedSlots.size()); });
  collectConsts(KM);
  for (const auto &D : KM.Decls)
    if (const auto *F = dyn_cast<FunctionDecl>(D.get()); F && F->Body)
      FullBlocks.collectLetInits(*F->Body);
  // Device functions that synchronise are inlined into the kernels at
  // block level; the others become ordinary functions taking the calling
  // thread's environment as a last, hidden parameter.
  for (const auto &D : KM.Decls) {
    const auto *F = dyn_cast<FunctionDecl>(D.get());
    if (!F || F->IsKernel || Sync.hasSync(*F))
      continue;
    std::vector<llvm::Type *> Params;
    for (const auto &P : F->Params)
      Params.push_back(paramType(*P));
    Params.push_back(llvm::PointerType::get(C, 0));
    auto *FT = llvm::FunctionType::get(Ctx.toLLVM(F->ReturnTy), Params, false);
    // Prefixed, so that no KIR name can take the name of a C library
    // function the generated code calls (sinf, memset, ...).
    auto *Fn = llvm::Function::Create(FT, llvm::GlobalValue::InternalLinkage, "kir." + F->Name, IR);
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
    if (llvm::Error E = Entry.lowerKernel(*K))
      return E;
  return llvm::Error::success();
}

/// The in-memory type of a named scalar or pointer value (bool is i8).
static llvm::Type *memTy(const LoweringContext &C, Type Ty) {
  return Ty.isScalar() ? C.memType(Ty.getScalarKind()) : C.toLLVM(Ty);
}

Value *HostModuleLowering::loadScalar(Value *Addr, Type Ty) {
  Addr = checkSharedScalar(Addr, Ty);
  Value *V = B.CreateLoad(memTy(Ctx, Ty), Addr);
  if (Ty.isBool())
    V = B.CreateICmpNE(V, B.getInt8(0));
  return V;
}

void HostModuleLowering::storeScalar(Value *Addr, Value *V, Type Ty) {
  Addr = checkSharedScalar(Addr, Ty, V);
  if (Ty.isBool())
    V = B.CreateZExt(V, B.getInt8Ty());
  B.CreateStore(V, Addr);
}

// Thread t's element of a slot: Frame + threads * Offset + t * Size. Slot
// offsets are multiples of the element's alignment, so every element is
// aligned, and consecutive threads' elements are adjacent (vector loads).
Value *HostModuleLowering::slotAddr(const FrameSlot &S, Value *Thread) {
  Value *Base = Cur->FrameBase;
  if (S.Offset)
    Base =
        B.CreateInBoundsGEP(B.getInt8Ty(), Cur->FrameBase,
                            B.CreateMul(Cur->NumThreads64, B.getInt64(S.Offset), "", true, true));
  Value *T64 = Thread == Cur->Env.Linear && Cur->Env.Linear64
                   ? Cur->Env.Linear64
                   : B.CreateZExt(Thread, B.getInt64Ty());
  Value *Addr = B.CreateInBoundsGEP(B.getInt8Ty(), Base,
                                    B.CreateMul(T64, B.getInt64(S.Size), "", true, true));
  if (!S.Array)
    Cur->PrivateAddrs.insert(Addr);
  return Addr;
}

//===----------------------------------------------------------------------===//
// Device functions
//===----------------------------------------------------------------------===//

llvm::Error HostModuleLowering::lowerDeviceFunction(const FunctionDecl &F) {
  llvm::Function *Fn = Functions.lookup(&F);
  Ctx.CurDecl = &F;
  Ctx.CurFn = Fn;
  // A fresh state for this function; none of it outlives the call.
  FunctionState State;
  llvm::SaveAndRestore<FunctionState *> Scope(Cur, &State);
  B.SetInsertPoint(llvm::BasicBlock::Create(B.getContext(), "entry", Fn));

  // The calling thread's builtin values.
  Value *EnvArg = Fn->getArg(F.Params.size());
  Cur->Env.EnvPtr = EnvArg;
  llvm::Value **Fields[] = {Cur->Env.Tid, Cur->Env.Bid, Cur->Env.BDim, Cur->Env.GDim};
  const char *Names[] = {"tid", "bid", "bdim", "gdim"};
  for (unsigned I = 0; I < 4; ++I)
    for (unsigned D = 0; D < 3; ++D) {
      Value *Ptr = B.CreateConstInBoundsGEP2_32(EnvTy->getElementType(I),
                                                B.CreateStructGEP(EnvTy, EnvArg, I), 0, D);
      Fields[I][D] =
          B.CreateLoad(B.getInt32Ty(), Ptr, llvm::Twine(Names[I]) + "." + llvm::Twine("xyz"[D]));
    }
  // Its shared declarations: at the offsets the calling kernel's table
  // gives (each kernel lays them out after its own, SharedLayout.h).
  Value *SharedBase = nullptr, *SharedTable = nullptr;
  forEachOwnShared(F, [&](const VarDecl &V) {
    if (!SharedBase) {
      SharedBase = B.CreateLoad(B.getPtrTy(), B.CreateStructGEP(EnvTy, EnvArg, 4), "shared");
      SharedTable =
          B.CreateLoad(B.getPtrTy(), B.CreateStructGEP(EnvTy, EnvArg, 5), "shared.offsets");
    }
    Value *Off =
        B.CreateLoad(B.getInt64Ty(), B.CreateConstInBoundsGEP1_64(B.getInt64Ty(), SharedTable,
                                                                  FnSharedSlots.lookup(&V)));
    Value *Addr = B.CreateInBoundsGEP(B.getInt8Ty(), SharedBase, Off, V.Name);
    Cur->Vars[&V] = {VarSlot::Address, Addr, {}, nullptr};
    if (!V.Ty.isArray())
      Cur->SharedScalars[Addr] = &V;
  });
  Cur->Env.Linear = B.CreateAdd(
      Cur->Env.Tid[0],
      B.CreateMul(Cur->Env.BDim[0],
                  B.CreateAdd(Cur->Env.Tid[1], B.CreateMul(Cur->Env.BDim[1], Cur->Env.Tid[2]))),
      "linear");

  for (unsigned I = 0; I < F.Params.size(); ++I) {
    const VarDecl &P = *F.Params[I];
    // `out` / `inout`: the body reads and assigns the caller's temporary.
    if (P.Mode != ParamMode::In) {
      Cur->Vars[&P] = {VarSlot::Address, Fn->getArg(I), {}, nullptr};
      continue;
    }
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(memTy(Ctx, P.Ty), P.Name);
    storeScalar(Slot, Fn->getArg(I), P.Ty);
    Cur->Vars[&P] = {VarSlot::Address, Slot, {}, nullptr};
  }
  if (llvm::Error E = lowerFunctionBody(F, *Fn))
    return E;
  Entry.tagMemoryAccesses(*Fn); // nothing here is private: all marked not aliasing it
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

llvm::Error HostModuleLowering::lowerBreakContinue(bool IsBreak, SourceLoc Loc) {
  if (Cur->Loops.empty())
    return Ctx.error(Loc, "internal error: 'break' or 'continue' outside a loop");
  const LoopTarget &L = Cur->Loops.back();
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
  switch (Cur->Ret.K) {
  case ReturnTarget::Real:
    if (V)
      B.CreateRet(V);
    else
      B.CreateRetVoid();
    break;
  case ReturnTarget::Kernel:
    // The thread is done; later thread loops skip it.
    if (Cur->NeedsState)
      escape(1);
    else
      B.CreateBr(Cur->ThreadExit);
    break;
  case ReturnTarget::Inline:
    if (V)
      storeScalar(slotAddr(Cur->Ret.Result, Cur->Env.Linear), V, Cur->Ret.ResultTy);
    escape(Cur->Ret.Code);
    break;
  }
  return llvm::Error::success();
}

// Declarations in thread code, and block-level declarations whose
// statement runs in a thread loop (BlockLevel: their storage comes from
// the body's plan).
llvm::Error HostModuleLowering::lowerDecl(const DeclStmt &S, bool BlockLevel) {
  const VarDecl &V = S.Var;
  Storage St = BlockLevel && Cur->Plan ? Cur->Plan->getStorage(&V) : Storage::RegionLocal;
  if (V.Storage == StorageKind::Shared)
    return llvm::Error::success(); // an array or scalar placed by the kernel's prologue
  if (V.Ty.isArray()) {
    OpArgs A;
    A.Loc = V.Loc;
    A.ResultTy = V.Ty;
    A.Var = &V;
    A.Mem = memoryOf(V);
    uint64_t Elem = V.Ty.getElementBytes();
    uint64_t Bytes = V.Ty.getSizeInBytes();
    Value *Addr = nullptr;
    if (Cur->Kernel && St == Storage::Frame) {
      // Lives across thread loops: one array per thread.
      FrameSlot F = Cur->allocFrame(Bytes, Elem);
      F.Array = true;
      Cur->Vars[&V] = {VarSlot::Frame, nullptr, F, nullptr};
      Addr = slotAddr(F, Cur->Env.Linear);
    } else if (Cur->Kernel && Bytes > hostabi::MaxStackArrayBytes) {
      // Too big for a worker's stack; threads of a block run one at a
      // time, so one copy per block serves every thread.
      uint64_t Off = Cur->allocBlockFrame(Bytes, 16);
      Addr = B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Cur->BlockFrameBase, Off, V.Name);
    }
    Value *Ops[] = {Addr};
    if (Addr)
      A.Operands = Ops;
    Expected<Value *> Base = Ctx.lower(Op::LocalArray, A);
    if (!Base)
      return Base.takeError();
    if (!(Cur->Kernel && St == Storage::Frame))
      Cur->Vars[&V] = {VarSlot::Address, *Base, {}, nullptr};
    return llvm::Error::success();
  }
  // Without an initializer (`var x: f32;`) the slot is made and nothing
  // stored: the verifier has proved that no read comes before an
  // assignment. Such a variable is never uniform nor recomputed
  // (KernelAnalysis.cpp plans both only for an initializer).
  Value *Init = nullptr;
  if (S.Init) {
    Expected<Value *> I = lowerExpr(*S.Init);
    if (!I)
      return I.takeError();
    Init = *I;
  } else if (St == Storage::Uniform || St == Storage::Remat) {
    return Ctx.error(V.Loc, "internal error: '" + llvm::Twine(V.Name) +
                                "' has no initializer to keep uniform or recompute");
  }
  switch (St) {
  case Storage::Uniform:
    return Ctx.error(V.Loc, "internal error: uniform variable '" + llvm::Twine(V.Name) +
                                "' declared in a thread loop");
  case Storage::Remat:
    Cur->Vars[&V] = {VarSlot::Remat, nullptr, {}, S.Init.get()};
    Cur->RematValues[&V] = Init;
    return llvm::Error::success();
  case Storage::Frame: {
    uint64_t Size = V.Ty.getSizeInBytes();
    // A struct's alignment is its largest field's, not its size.
    FrameSlot F = Cur->allocFrame(Size, V.Ty.getAlignInBytes());
    Cur->Vars[&V] = {VarSlot::Frame, nullptr, F, nullptr};
    if (Init)
      storeScalar(slotAddr(F, Cur->Env.Linear), Init, V.Ty);
    return llvm::Error::success();
  }
  case Storage::RegionLocal: {
    llvm::AllocaInst *Slot = Ctx.createEntryAlloca(memTy(Ctx, V.Ty), V.Name);
    if (Init)
      storeScalar(Slot, Init, V.Ty);
    Cur->Vars[&V] = {VarSlot::Address, Slot, {}, nullptr};
    return llvm::Error::success();
  }
  }
  return llvm::Error::success();
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

Expected<Value *> HostModuleLowering::lowerExpr(const Expr &E) {
  // In the full-block copy of a thread loop: a comparison its block-level
  // test proved for every thread (FullBlocks.cpp).
  if (!Cur->Assumed.empty()) {
    auto It = Cur->Assumed.find(&E);
    if (It != Cur->Assumed.end())
      return B.getInt1(It->second);
  }
  // Computed at block level already (a warp operation, a call of a
  // synchronising function, ...): this thread's value is in the frame.
  if (!Cur->Hoisted.empty()) {
    auto It = Cur->Hoisted.find(&E);
    if (It != Cur->Hoisted.end()) {
      if (E.Ty.isVoid())
        return nullptr; // a synchronising function without a result, already run
      if (!Cur->Env.Linear)
        return Ctx.error(E.getLoc(), "internal error: block-level value read outside a thread");
      return loadScalar(slotAddr(It->second, Cur->Env.Linear), E.Ty);
    }
  }
  if (!Cur->WideIndices.empty() && Cur->Env.Linear) {
    auto It = Cur->WideIndices.find(&E);
    if (It != Cur->WideIndices.end())
      return lowerWideIndex(It->second);
  }
  return StructuralLowering::lowerExpr(E);
}

// An element index that the full block's test proved to fit in i32 in every
// thread (FullBlocks.cpp): its value is its exact affine form, computed in
// i64 from the block-level coefficients and this thread's indices, and its
// i32 value that form truncated. FullBlockVersioner::useWideIndices then
// gives the element's address the i64 value instead of the i32 one
// sign-extended, so LLVM sees `src[i - w]` as one i64 induction variable,
// as it does in C where signed overflow is undefined: no run-time overflow
// checks and no sign extension per access, and alias checks on constant
// distances, hoisted out of the thread loops. (Marking the i32 arithmetic
// `nsw` is not enough: LLVM drops the flags when it reassociates.)
Value *HostModuleLowering::lowerWideIndex(const std::array<Value *, 4> &F) {
  llvm::Type *I64 = B.getInt64Ty();
  Value *V = F[0] ? F[0] : B.getInt64(0);
  for (unsigned D = 0; D < 3; ++D) {
    Value *C = F[D + 1];
    if (!C)
      continue;
    Value *T = B.CreateZExt(Cur->Env.Tid[D], I64);
    auto *K = dyn_cast<llvm::ConstantInt>(C);
    V = B.CreateAdd(V, K && K->isOne() ? T : B.CreateMul(C, T));
  }
  Value *T = B.CreateTrunc(V, B.getInt32Ty());
  Cur->WideValues[T] = V;
  return T;
}

Expected<Value *> HostModuleLowering::rematValue(const VarDecl &V) {
  auto It = Cur->RematValues.find(&V);
  if (It != Cur->RematValues.end())
    return It->second;
  const VarSlot &S = Cur->Vars[&V];
  if (!Cur->RematPoint || !S.Init)
    return Ctx.error(V.Loc, "internal error: '" + llvm::Twine(V.Name) +
                                "' recomputed outside a thread loop");
  // At the top of this thread's iteration, so the value dominates every
  // use in the loop body (the initializer is pure: no control flow, no
  // memory reads).
  llvm::IRBuilderBase::InsertPointGuard Guard(B);
  B.SetInsertPoint(Cur->RematPoint);
  Expected<Value *> R = lowerExpr(*S.Init);
  if (!R)
    return R.takeError();
  Value *Val = *R;
  if (S.K == VarSlot::Stepped) // the offset is the same in the whole thread loop
    Val = B.CreateAdd(Val, B.CreateLoad(Val->getType(), S.V, V.Name + ".offset"), V.Name);
  Cur->RematValues[&V] = Val;
  return Val;
}

Expected<Value *> HostModuleLowering::loadVariable(const NameExpr &E) {
  auto It = Cur->Vars.find(E.Decl);
  if (It == Cur->Vars.end())
    return Ctx.error(E.getLoc(), "'" + llvm::Twine(E.Ident) + "' has no storage");
  const VarSlot &S = It->second;
  switch (S.K) {
  case VarSlot::Value:
    return S.V;
  case VarSlot::Address: {
    // A shared scalar's load is checked at this name; an assignment's
    // target (addressOfVariable) keeps its own location.
    SourceLoc Target = std::exchange(Cur->SharedScalarLoc, E.getLoc());
    Value *V = loadScalar(S.V, E.Decl->Ty);
    Cur->SharedScalarLoc = Target;
    return V;
  }
  case VarSlot::Frame:
    if (!Cur->Env.Linear)
      break;
    return loadScalar(slotAddr(S.F, Cur->Env.Linear), E.Decl->Ty);
  case VarSlot::Remat:
  case VarSlot::Stepped:
    return rematValue(*E.Decl);
  case VarSlot::None:
    break;
  }
  return Ctx.error(E.getLoc(),
                   "internal error: '" + llvm::Twine(E.Ident) + "' is not available here");
}

Expected<Value *> HostModuleLowering::lowerCall(const CallExpr &E) {
  if (isSyncBuiltin(E.Builtin) || (E.Fn && !Functions.count(E.Fn)))
    return Ctx.error(E.getLoc(), "internal error: synchronising call '" + llvm::Twine(E.Callee) +
                                     "' inside a thread loop");
  return StructuralLowering::lowerCall(E);
}

// A device function gets the calling thread's environment last.
Expected<Value *> HostModuleLowering::lowerFunctionCall(const CallExpr &E, OpArgs &A,
                                                        llvm::ArrayRef<Value *> Args) {
  Value *EnvArg = Cur->Env.EnvPtr;
  if (!EnvArg) {
    if (!Cur->Env.Linear)
      return Ctx.error(E.getLoc(), "internal error: call outside a thread");
    EnvArg = Cur->EnvAlloca;
    llvm::Value **Fields[] = {Cur->Env.Tid, Cur->Env.Bid, Cur->Env.BDim, Cur->Env.GDim};
    for (unsigned I = 0; I < 4; ++I)
      for (unsigned D = 0; D < 3; ++D)
        B.CreateStore(Fields[I][D], B.CreateConstInBoundsGEP2_32(
                                        EnvTy->getElementType(I),
                                        B.CreateStructGEP(EnvTy, Cur->EnvAlloca, I), 0, D));
  }
  std::vector<Value *> Ops;
  Ops.push_back(Functions.lookup(E.Fn));
  Ops.insert(Ops.end(), Args.begin(), Args.end());
  Ops.push_back(EnvArg);
  A.Callee = E.Fn;
  A.Operands = Ops;
  return Ctx.lower(Op::CallFunction, A);
}

// A variable's memory: its own, or this thread's element of the frame.
Expected<Value *> HostModuleLowering::addressOfVariable(const NameExpr &N) {
  Cur->SharedScalarLoc = N.getLoc();
  auto It = N.Decl ? Cur->Vars.find(N.Decl) : Cur->Vars.end();
  if (It != Cur->Vars.end()) {
    if (It->second.K == VarSlot::Address)
      return It->second.V;
    if (It->second.K == VarSlot::Frame && Cur->Env.Linear)
      return slotAddr(It->second.F, Cur->Env.Linear);
  }
  return Ctx.error(N.getLoc(), "'" + llvm::Twine(N.Ident) + "' has no storage");
}
