//===- ThreadLoops.cpp - Loops over the threads of a block ----------------===//
//
// Part of gridjit. See ThreadLoops.h. A thread loop is
//
//   tz: for thread_idx.z in [0, block_dim.z)
//   ty:   for thread_idx.y in [0, block_dim.y)      row = (tz * bdim.y + ty) * bdim.x
//   tx:     for thread_idx.x in [lo, hi)            thread = row + thread_idx.x
//             if the thread is active: its statements
//
// with [lo, hi) the whole row, a range the caller proved (a lone
// `if thread_idx.x < u`), or the parts of an edge row (FullBlocks.cpp).
//
// No thread loop is unrolled by a run-time trip count: LLVM would unroll
// the x loop's scalar remainder after vectorising it (four copies and a
// prologue loop) and the y and z loops around it, copies that the later
// loop passes and LSR then walk, for loops that run a few times per block
// (the remainder runs only when block_dim.x is not a multiple of the
// vector width). bench-CompileBench measures it: docs/HostTarget.md,
// "Compile time".
//
//===----------------------------------------------------------------------===//

#include "ThreadLoops.h"

#include "HostLowering.h"
#include "ThreadNests.h"

#include "llvm/IR/Constants.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::Value;

// [lo, hi) within [0, block_dim.x): nothing to run when it is empty.
ThreadLoopEmitter::XSpan ThreadLoopEmitter::enterXRange(XRange Range) {
  if (!Range)
    return {B.getInt32(0), Cur->Env.BDim[0], nullptr};
  Value *XHi = B.CreateBinaryIntrinsic(llvm::Intrinsic::umin, Range->second, Cur->Env.BDim[0],
                                       nullptr, "x.end");
  llvm::BasicBlock *Skip = newBlock("threads.none");
  llvm::BasicBlock *Run = newBlock("threads.some");
  B.CreateCondBr(B.CreateICmpULT(Range->first, XHi), Run, Skip);
  B.SetInsertPoint(Run);
  return {Range->first, XHi, Skip};
}

ThreadLoopEmitter::RowNest
ThreadLoopEmitter::openRowNest(llvm::function_ref<void()> MakeInnerBlocks) {
  RowNest N;
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  N.ZH = newBlock("tz");
  N.YH = newBlock("ty");
  MakeInnerBlocks();
  N.YL = newBlock("ty.next");
  N.ZL = newBlock("tz.next");
  N.Exit = newBlock("threads.done");
  llvm::Type *I32 = B.getInt32Ty();
  B.CreateBr(N.ZH);
  B.SetInsertPoint(N.ZH);
  N.TZ = B.CreatePHI(I32, 2, "thread_idx.z");
  N.TZ->addIncoming(B.getInt32(0), Pre);
  B.CreateBr(N.YH);
  B.SetInsertPoint(N.YH);
  N.TY = B.CreatePHI(I32, 2, "thread_idx.y");
  N.TY->addIncoming(B.getInt32(0), N.ZH);
  N.Row = B.CreateMul(
      B.CreateAdd(B.CreateMul(N.TZ, Cur->Env.BDim[1], "", true, true), N.TY, "", true, true),
      Cur->Env.BDim[0], "row", true, true);
  N.Row64 = B.CreateZExt(N.Row, B.getInt64Ty(), "row64");
  return N;
}

/// Gives the loop that \p Latch closes a new loop ID holding \p Hints
/// (each an MDNode of a `llvm.loop.*` name and its value, if any).
static void setLoopHints(llvm::BranchInst &Latch,
                         std::initializer_list<llvm::ArrayRef<llvm::Metadata *>> Hints) {
  llvm::LLVMContext &C = Latch.getContext();
  llvm::SmallVector<llvm::Metadata *, 3> Ops = {nullptr};
  for (llvm::ArrayRef<llvm::Metadata *> H : Hints)
    Ops.push_back(llvm::MDNode::get(C, H));
  llvm::MDNode *Loop = llvm::MDNode::getDistinct(C, Ops);
  Loop->replaceOperandWith(0, Loop);
  Latch.setMetadata(llvm::LLVMContext::MD_loop, Loop);
}

/// Marks the loop that \p Latch closes not to be vectorised or unrolled:
/// the guarded threads at a row's ends. Vectorised, the guard would become
/// masked loads and stores, slow on many x86 CPUs, for a few threads;
/// unrolled, they would only cost compile time.
static void keepScalar(llvm::BranchInst &Latch) {
  llvm::LLVMContext &C = Latch.getContext();
  setLoopHints(Latch, {{llvm::MDString::get(C, "llvm.loop.vectorize.enable"),
                        llvm::ConstantAsMetadata::get(llvm::ConstantInt::getFalse(C))},
                       {llvm::MDString::get(C, "llvm.loop.unroll.disable")}});
}

/// Marks the loop that \p Latch closes not to be unrolled by a run-time
/// trip count (every thread loop but the guarded ends of edge rows, which
/// keepScalar marks); LLVM may still vectorise and interleave it, or
/// unroll it fully.
static void noRuntimeUnroll(llvm::BranchInst &Latch) {
  setLoopHints(Latch,
               {{llvm::MDString::get(Latch.getContext(), "llvm.loop.unroll.runtime.disable")}});
}

void ThreadLoopEmitter::closeRowNest(const RowNest &N, llvm::BasicBlock *Skip) {
  B.SetInsertPoint(N.YL);
  Value *TYN = B.CreateAdd(N.TY, B.getInt32(1), "", true, true);
  N.TY->addIncoming(TYN, N.YL);
  llvm::BranchInst *YLatch = B.CreateCondBr(B.CreateICmpULT(TYN, Cur->Env.BDim[1]), N.YH, N.ZL);
  B.SetInsertPoint(N.ZL);
  Value *TZN = B.CreateAdd(N.TZ, B.getInt32(1), "", true, true);
  N.TZ->addIncoming(TZN, N.ZL);
  llvm::BranchInst *ZLatch = B.CreateCondBr(B.CreateICmpULT(TZN, Cur->Env.BDim[2]), N.ZH, N.Exit);
  noRuntimeUnroll(*YLatch);
  noRuntimeUnroll(*ZLatch);
  markThreadNest(*ZLatch);
  B.SetInsertPoint(N.Exit);
  if (Skip) {
    B.CreateBr(Skip);
    B.SetInsertPoint(Skip);
  }
}

ThreadLoopEmitter::XLoopBlocks ThreadLoopEmitter::makeXLoopBlocks(bool OwnExit) {
  XLoopBlocks X;
  X.Head = newBlock("tx");
  X.Run = newBlock("thread");
  X.Latch = newBlock("tx.next");
  X.Exit = OwnExit ? newBlock("tx.done") : nullptr;
  return X;
}

llvm::Error ThreadLoopEmitter::emitXLoop(const XLoopBlocks &X, const RowNest &N, Value *Lo,
                                         Value *Hi, bool MayBeEmpty,
                                         llvm::function_ref<llvm::Error()> Body, bool Vectorize) {
  llvm::Type *I32 = B.getInt32Ty();
  llvm::BasicBlock *Pre = B.GetInsertBlock();
  if (MayBeEmpty)
    B.CreateCondBr(B.CreateICmpULT(Lo, Hi), X.Head, X.Exit);
  else
    B.CreateBr(X.Head);
  // The thread's environment.
  B.SetInsertPoint(X.Head);
  llvm::PHINode *TX = B.CreatePHI(I32, 2, "thread_idx.x");
  TX->addIncoming(Lo, Pre);
  Value *Linear = B.CreateAdd(N.Row, TX, "thread", true, true);
  ThreadEnv &Env = Cur->Env;
  Env.Tid[0] = TX;
  Env.Tid[1] = N.TY;
  Env.Tid[2] = N.TZ;
  Env.Linear = Linear;
  Env.Linear64 = B.CreateAdd(N.Row64, B.CreateZExt(TX, B.getInt64Ty()), "thread64", true, true);
  Cur->RematValues.clear();
  // The state check (a thread that is masked or has returned does
  // nothing), which is also where recomputed values go: it dominates the
  // whole body.
  if (Cur->maybeInactive())
    Cur->RematPoint = B.CreateCondBr(
        B.CreateICmpEQ(B.CreateLoad(I32, L.stateAddr(Linear), "state"), B.getInt32(0)), X.Run,
        X.Latch);
  else
    Cur->RematPoint = B.CreateBr(X.Run);
  B.SetInsertPoint(X.Run);
  Cur->ThreadExit = X.Latch;
  if (llvm::Error E = Body())
    return E;
  if (!terminated())
    B.CreateBr(X.Latch);
  // The latch.
  B.SetInsertPoint(X.Latch);
  Value *TXN = B.CreateAdd(TX, B.getInt32(1), "", true, true);
  TX->addIncoming(TXN, X.Latch);
  llvm::BranchInst *Latch = B.CreateCondBr(B.CreateICmpULT(TXN, Hi), X.Head, X.Exit);
  if (!Vectorize)
    keepScalar(*Latch);
  else
    noRuntimeUnroll(*Latch);
  B.SetInsertPoint(X.Exit);
  return llvm::Error::success();
}

llvm::Error ThreadLoopEmitter::emit(llvm::function_ref<llvm::Error()> Body, XRange Range) {
  auto [XLo, XHi, Skip] = enterXRange(Range);
  XLoopBlocks X;
  RowNest N = openRowNest([&] { X = makeXLoopBlocks(/*OwnExit=*/false); });
  X.Exit = N.YL;
  if (llvm::Error E =
          emitXLoop(X, N, XLo, XHi, /*MayBeEmpty=*/false, Body, /*Vectorize=*/!Cur->Cold))
    return E;
  closeRowNest(N, Skip);
  leave();
  return llvm::Error::success();
}

llvm::Error ThreadLoopEmitter::emitSplit(
    llvm::function_ref<llvm::Error()> Outside, llvm::function_ref<llvm::Error()> Inside,
    XRange Range,
    llvm::function_ref<std::pair<Value *, Value *>(Value *TY, Value *TZ, Value *XLo, Value *XHi)>
        RowRange) {
  auto [XLo, XHi, Skip] = enterXRange(Range);
  llvm::BasicBlock *SH, *Mid, *SL;
  RowNest N = openRowNest([&] {
    SH = newBlock("row.part");
    Mid = newBlock("row.full");
    SL = newBlock("row.part.next");
  });
  auto [Lo, Hi] = RowRange(N.TY, N.TZ, XLo, XHi);
  llvm::BasicBlock *RowPre = B.GetInsertBlock();
  B.CreateBr(SH);
  // Part 0: [XLo, lo) outside, then [lo, hi) inside; part 1: [hi, XHi)
  // outside.
  B.SetInsertPoint(SH);
  llvm::PHINode *Part = B.CreatePHI(B.getInt1Ty(), 2, "second");
  Part->addIncoming(B.getFalse(), RowPre);
  Value *PLo = B.CreateSelect(Part, Hi, XLo), *PHi = B.CreateSelect(Part, XHi, Lo);
  if (llvm::Error E = emitXLoop(makeXLoopBlocks(/*OwnExit=*/true), N, PLo, PHi,
                                /*MayBeEmpty=*/true, Outside, /*Vectorize=*/false))
    return E;
  B.CreateCondBr(Part, SL, Mid);
  B.SetInsertPoint(Mid);
  if (llvm::Error E = emitXLoop(makeXLoopBlocks(/*OwnExit=*/true), N, Lo, Hi,
                                /*MayBeEmpty=*/true, Inside, /*Vectorize=*/true))
    return E;
  B.CreateBr(SL);
  B.SetInsertPoint(SL);
  Part->addIncoming(B.getTrue(), SL);
  B.CreateCondBr(Part, N.YL, SH);
  closeRowNest(N, Skip);
  leave();
  return llvm::Error::success();
}

// Back at block level: no thread's values are available.
void ThreadLoopEmitter::leave() {
  for (Value *&V : Cur->Env.Tid)
    V = nullptr;
  Cur->Env.Linear = nullptr;
  Cur->Env.Linear64 = nullptr;
  Cur->ThreadExit = nullptr;
  Cur->RematPoint = nullptr;
  Cur->RematValues.clear();
}
