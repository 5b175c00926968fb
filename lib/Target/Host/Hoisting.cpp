//===- Hoisting.cpp - Synchronising sub-expressions at block level --------===//
//
// Part of gridjit. See Hoisting.h.
//
//===----------------------------------------------------------------------===//

#include "Hoisting.h"

#include "HostLowering.h"

#include "gridjit/Support/Limits.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::Expected;
using llvm::isa;
using llvm::Value;

// Evaluates, at block level and in evaluation order, every part of E that
// synchronises: a warp operation (operands in one thread loop, results in
// the next), a call of a synchronising function (inlined), `a && b` /
// `a || b` whose b synchronises (b then runs with the threads that need
// it, the others masked) and `c ? a : b` whose a or b synchronises (a runs
// with the threads for which c holds, then b with the others). Each leaves one value per thread in
// the frame (Hoisted); the thread code of the statement reads it from there. The other parts of the
// statement are evaluated after these.
llvm::Error SyncHoister::hoist(const Expr &E) {
  if (!L.Sync.hasSync(E))
    return llvm::Error::success();
  auto HoistAll = [&](std::initializer_list<const Expr *> Es) -> llvm::Error {
    for (const Expr *C : Es)
      if (C)
        if (llvm::Error Err = hoist(*C))
          return Err;
    return llvm::Error::success();
  };
  switch (E.getKind()) {
  case Expr::Call: {
    const auto &C = cast<CallExpr>(E);
    if (isWarpOp(C.Builtin))
      return hoistWarpOp(C);
    if (isBarrierBuiltin(C.Builtin))
      return Ctx.error(C.getLoc(), "'" + llvm::Twine(C.Callee) +
                                       "()' returns nothing and cannot be part of an expression");
    for (const ExprPtr &A : C.Args)
      if (llvm::Error Err = hoist(*A))
        return Err;
    if (C.Fn && L.Sync.hasSync(*C.Fn)) {
      Expected<FrameSlot> R = inlineCall(C);
      if (!R)
        return R.takeError();
      Cur->Hoisted[&C] = *R;
    }
    return llvm::Error::success();
  }
  case Expr::Binary: {
    const auto &Bin = cast<BinaryExpr>(E);
    if ((Bin.Op != BinaryOp::LAnd && Bin.Op != BinaryOp::LOr) || !L.Sync.hasSync(*Bin.RHS))
      return HoistAll({Bin.LHS.get(), Bin.RHS.get()});
    return hoistShortCircuit(Bin);
  }
  case Expr::Cond: {
    const auto &Q = cast<CondExpr>(E);
    if (!L.Sync.hasSync(*Q.T) && !L.Sync.hasSync(*Q.F))
      return hoist(*Q.C);
    return hoistCond(Q);
  }
  case Expr::Unary:
    return hoist(*cast<UnaryExpr>(E).Operand);
  case Expr::Cast:
    return hoist(*cast<CastExpr>(E).Operand);
  case Expr::Index:
    return HoistAll({cast<IndexExpr>(E).Base.get(), cast<IndexExpr>(E).Idx.get()});
  default:
    return llvm::Error::success();
  }
}

// `a && b` / `a || b` whose b synchronises, as a masked region: the
// threads where a decides the result wait, masked, while b runs for the
// others; the result of each thread is in a frame slot.
llvm::Error SyncHoister::hoistShortCircuit(const BinaryExpr &E) {
  if (llvm::Error Err = hoist(*E.LHS))
    return Err;
  bool IsAnd = E.Op == BinaryOp::LAnd;
  FrameSlot R = Cur->allocFrame(1, 1);
  int32_t Skip = Cur->NextCode++;
  Type Bool = Type::getScalar(ScalarKind::Bool);
  bool SavedMasked = Cur->Masked;
  llvm::Error Err = L.maskThreads(
      [&]() -> Expected<Value *> {
        Expected<Value *> Lhs = L.lowerExpr(*E.LHS);
        if (Lhs)
          L.storeScalar(L.slotAddr(R, Cur->Env.Linear), *Lhs, Bool);
        return Lhs;
      },
      /*MaskWhen=*/!IsAnd, Skip, "decided");
  if (Err)
    return Err;
  Cur->Masked = true;
  Err = L.runIfAnyActive("rhs", [&] { return evaluateInto(*E.RHS, R); });
  if (Err)
    return Err;
  L.remapState(Skip, 0);
  Cur->Masked = SavedMasked;
  Cur->Hoisted[&E] = R;
  return llvm::Error::success();
}

// `c ? a : b` whose a or b synchronises, as an if-else at block level: the
// threads for which c is false wait, masked, while a runs for the others;
// then the roles swap for b. Each side is evaluated only by the threads
// that chose it; the result of each thread is in a frame slot.
llvm::Error SyncHoister::hoistCond(const CondExpr &E) {
  if (llvm::Error Err = hoist(*E.C))
    return Err;
  uint64_t Size = E.Ty.getSizeInBytes();
  FrameSlot R = Cur->allocFrame(Size, Size);
  int32_t FalseMask = Cur->NextCode++;
  bool SavedMasked = Cur->Masked;
  if (llvm::Error Err = L.maskThreads([&] { return L.lowerExpr(*E.C); }, /*MaskWhen=*/false,
                                      FalseMask, "cond.mask"))
    return Err;
  Cur->Masked = true;
  if (llvm::Error Err = L.runIfAnyActive("cond.true", [&] { return evaluateInto(*E.T, R); }))
    return Err;
  int32_t TrueMask = Cur->NextCode++;
  L.swapState(FalseMask, TrueMask);
  if (llvm::Error Err = L.runIfAnyActive("cond.false", [&] { return evaluateInto(*E.F, R); }))
    return Err;
  L.remapState(TrueMask, 0);
  Cur->Masked = SavedMasked;
  Cur->Hoisted[&E] = R;
  return llvm::Error::success();
}

llvm::Error SyncHoister::evaluateInto(const Expr &E, FrameSlot R) {
  if (llvm::Error Err = hoist(E))
    return Err;
  return L.Loops.emit([&]() -> llvm::Error {
    Expected<Value *> V = L.lowerExpr(E);
    if (!V)
      return V.takeError();
    L.storeScalar(L.slotAddr(R, Cur->Env.Linear), *V, E.Ty);
    return llvm::Error::success();
  });
}

llvm::Error SyncHoister::hoistWarpOp(const CallExpr &C) {
  for (const ExprPtr &A : C.Args)
    if (llvm::Error Err = hoist(*A))
      return Err;
  bool IsShuffle = C.Args.size() == 2;
  Type ValTy = C.Args[0]->Ty;
  FrameSlot Val = Cur->allocFrame(ValTy.getSizeInBytes(), ValTy.getSizeInBytes());
  FrameSlot Lane = IsShuffle ? Cur->allocFrame(4, 4) : FrameSlot();
  // Every active thread publishes its operands...
  llvm::Error E = L.Loops.emit([&]() -> llvm::Error {
    Expected<Value *> V = L.lowerExpr(*C.Args[0]);
    if (!V)
      return V.takeError();
    L.storeScalar(L.slotAddr(Val, Cur->Env.Linear), *V, ValTy);
    if (IsShuffle) {
      Expected<Value *> SrcLane = L.lowerExpr(*C.Args[1]);
      if (!SrcLane)
        return SrcLane.takeError();
      B.CreateStore(*SrcLane, L.slotAddr(Lane, Cur->Env.Linear));
    }
    return llvm::Error::success();
  });
  if (E)
    return E;
  // ...every warp must be complete...
  if (llvm::Error Err = L.SyncPoints.warpBarrier(C.getLoc(), C.Builtin))
    return Err;
  // ...and each thread computes its result from its warp's operands.
  FrameSlot R = Cur->allocFrame(C.Ty.getSizeInBytes(), C.Ty.getSizeInBytes());
  E = L.Loops.emit([&]() -> llvm::Error {
    Value *First = B.CreateAnd(Cur->Env.Linear, B.getInt32(~limits::LaneMask), "warp.first");
    Value *LaneId = B.CreateAnd(Cur->Env.Linear, B.getInt32(limits::LaneMask), "lane");
    Value *Width =
        B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, B.getInt32(limits::WarpSize),
                                B.CreateSub(Cur->NumThreads, First), nullptr, "warp.width");
    Value *Lanes = L.slotAddr(Val, First);
    OpArgs A;
    A.Loc = C.getLoc();
    A.OperandTy = ValTy;
    A.ResultTy = C.Ty;
    std::vector<Value *> Ops;
    if (IsShuffle)
      Ops = {Lanes, B.CreateLoad(B.getInt32Ty(), L.slotAddr(Lane, Cur->Env.Linear)), LaneId, Width};
    else
      Ops = {Lanes, Width};
    A.Operands = Ops;
    Expected<Value *> V = Ctx.lower(opFor(C.Builtin), A);
    if (!V)
      return V.takeError();
    L.storeScalar(L.slotAddr(R, Cur->Env.Linear), *V, C.Ty);
    return llvm::Error::success();
  });
  if (E)
    return E;
  Cur->Hoisted[&C] = R;
  return llvm::Error::success();
}

// A call of a function that synchronises: its body is lowered here, at
// block level, with its parameters and result in the frame. A `return` in
// it masks the thread until the call ends. An `out`/`inout` parameter is a
// frame slot too, copied into the caller's place after the body, as
// StructuralLowering::lowerCall does: the place is located before the call
// (an element's address kept in the frame; a variable's storage does not
// move), and `inout` copies the place's value in.
Expected<FrameSlot> SyncHoister::inlineCall(const CallExpr &C) {
  const FunctionDecl &F = *C.Fn;
  BodyPlan &P = L.planOf(F);
  std::vector<FrameSlot> Params, Places;
  for (size_t I = 0; I < F.Params.size(); ++I) {
    uint64_t Size = F.Params[I]->Ty.getSizeInBytes();
    Params.push_back(Cur->allocFrame(Size, Size));
    bool IsElement = C.argMode(I) != ParamMode::In && isa<IndexExpr>(*C.Args[I]);
    Places.push_back(IsElement ? Cur->allocFrame(sizeof(void *), alignof(void *)) : FrameSlot());
  }
  llvm::Error E = L.Loops.emit([&]() -> llvm::Error {
    for (size_t I = 0; I < F.Params.size(); ++I) {
      const Expr &Arg = *C.Args[I];
      if (C.argMode(I) == ParamMode::In) {
        Expected<Value *> V = L.lowerExpr(Arg);
        if (!V)
          return V.takeError();
        L.storeScalar(L.slotAddr(Params[I], Cur->Env.Linear), *V, F.Params[I]->Ty);
        continue;
      }
      Expected<Value *> Addr = L.lowerAddress(Arg);
      if (!Addr)
        return Addr.takeError();
      if (isa<IndexExpr>(Arg))
        B.CreateStore(*Addr, L.slotAddr(Places[I], Cur->Env.Linear));
      if (C.argMode(I) == ParamMode::InOut) {
        Expected<Value *> Old = L.loadPlace(Arg, *Addr, Arg.Ty, Arg.getLoc());
        if (!Old)
          return Old.takeError();
        L.storeScalar(L.slotAddr(Params[I], Cur->Env.Linear), *Old, Arg.Ty);
      }
    }
    return llvm::Error::success();
  });
  if (E)
    return std::move(E);
  for (size_t I = 0; I < F.Params.size(); ++I)
    Cur->Vars[F.Params[I].get()] = {VarSlot::Frame, nullptr, Params[I], nullptr};
  FrameSlot Result;
  if (!F.ReturnTy.isVoid()) {
    uint64_t Size = F.ReturnTy.getSizeInBytes();
    Result = Cur->allocFrame(Size, Size);
  }
  int32_t Code = Cur->NextCode++;
  std::vector<LoopTarget> SavedLoops;
  SavedLoops.swap(Cur->Loops);
  ReturnTarget SavedRet = Cur->Ret;
  const BodyPlan *SavedPlan = Cur->Plan;
  bool SavedInKernel = Cur->InKernelBody, SavedMasked = Cur->Masked;
  Cur->Ret = {ReturnTarget::Inline, Code, Result, F.ReturnTy};
  Cur->Plan = &P;
  Cur->InKernelBody = false;
  E = L.lowerBlockLevel(*F.Body);
  Cur->Loops.swap(SavedLoops);
  Cur->Ret = SavedRet;
  Cur->Plan = SavedPlan;
  Cur->InKernelBody = SavedInKernel;
  if (E)
    return std::move(E);
  if (containsReturn(*F.Body))
    L.remapState(Code, 0);
  Cur->Masked = SavedMasked;
  if (!C.hasOutArgs())
    return Result;
  E = L.Loops.emit([&]() -> llvm::Error {
    for (size_t I = 0; I < F.Params.size(); ++I) {
      const Expr &Arg = *C.Args[I];
      if (C.argMode(I) == ParamMode::In)
        continue;
      Value *V = L.loadScalar(L.slotAddr(Params[I], Cur->Env.Linear), Arg.Ty);
      Expected<Value *> Addr =
          isa<IndexExpr>(Arg)
              ? B.CreateLoad(B.getPtrTy(), L.slotAddr(Places[I], Cur->Env.Linear), "out.place")
              : L.lowerAddress(Arg);
      if (!Addr)
        return Addr.takeError();
      if (llvm::Error Err = L.storePlace(Arg, *Addr, V, Arg.Ty, Arg.getLoc()))
        return Err;
    }
    return llvm::Error::success();
  });
  if (E)
    return std::move(E);
  return Result;
}
