//===- KernelEntry.cpp - The entry function of a host kernel --------------===//
//
// Part of gridjit. Each kernel becomes
//
//   int32_t __gridjit_entry_<kernel>(void *const *Args, BlockContext *Ctx,
//                                    uint64_t FirstBlock, uint64_t EndBlock)
//
// (gridjit/Target/HostABI.h): it reads the parameters and launch
// dimensions once, places the shared arrays (SharedLayout), and then runs
// blocks [FirstBlock, EndBlock) one after another, each as the block-level
// code of BlockCode.cpp. The per-thread frame the block-level code lays out
// is recorded, with the shared memory size, in the descriptor
// `__gridjit_desc_<kernel>` that the runtime reads before a launch.
//
//===----------------------------------------------------------------------===//

#include "KernelEntry.h"

#include "HostLowering.h"

#include "../SharedLayout.h"

#include "gridjit/Support/Limits.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/SaveAndRestore.h"
#include "llvm/Transforms/Utils/Local.h"

using namespace gridjit;
using namespace gridjit::host;
using llvm::cast;
using llvm::dyn_cast;
using llvm::Expected;
using llvm::Value;

FrameSlot FunctionState::allocFrame(uint64_t Size, uint64_t Align) {
  uint64_t Off = llvm::alignTo(FrameBytes, std::max<uint64_t>(Align, 1));
  FrameBytes = Off + Size;
  return {Off, Size};
}

uint64_t FunctionState::allocBlockFrame(uint64_t Size, uint64_t Align) {
  uint64_t Off = llvm::alignTo(BlockFrameBytes, std::max<uint64_t>(Align, 1));
  BlockFrameBytes = Off + Size;
  return Off;
}

// Scoped no-alias metadata: the plumbing's accesses to frame slots (the
// state word, values kept across thread loops, warp operands, inlined
// functions' parameters and results) get the "private" scope; every other
// access is marked as not aliasing it. That is sound because kernel code
// has no way to point into those slots (it can only point into arrays,
// which are not tagged).
void KernelEntryEmitter::tagMemoryAccesses(llvm::Function &F) {
  if (!PrivateScope) {
    llvm::MDBuilder MDB(L.IR.getContext());
    llvm::MDNode *Domain = MDB.createAnonymousAliasScopeDomain("gridjit.frame");
    llvm::MDNode *Scope = MDB.createAnonymousAliasScope(Domain, "gridjit.private");
    PrivateScope = llvm::MDNode::get(L.IR.getContext(), {Scope});
  }
  auto IsPrivate = [&](Value *Ptr) {
    while (Ptr) {
      if (Cur->PrivateAddrs.contains(Ptr))
        return true;
      auto *GEP = dyn_cast<llvm::GetElementPtrInst>(Ptr);
      Ptr = GEP ? GEP->getPointerOperand() : nullptr;
    }
    return false;
  };
  for (llvm::Instruction &I : llvm::instructions(F)) {
    if (!I.mayReadOrWriteMemory())
      continue;
    Value *Ptr = nullptr;
    if (auto *L = dyn_cast<llvm::LoadInst>(&I))
      Ptr = L->getPointerOperand();
    else if (auto *S = dyn_cast<llvm::StoreInst>(&I))
      Ptr = S->getPointerOperand();
    else if (auto *MS = dyn_cast<llvm::MemSetInst>(&I))
      Ptr = MS->getDest();
    if (Ptr && IsPrivate(Ptr))
      I.setMetadata(llvm::LLVMContext::MD_alias_scope, PrivateScope);
    else
      I.setMetadata(llvm::LLVMContext::MD_noalias, PrivateScope);
  }
}

Value *KernelEntryEmitter::ctxField(unsigned Offset) {
  return B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), Cur->CtxArg, Offset);
}

/// The text of line \p Line (1-based) of \p Source, without its newline.
static llvm::StringRef sourceLine(llvm::StringRef Source, unsigned Line) {
  for (unsigned L = 1; L < Line && !Source.empty(); ++L) {
    size_t NL = Source.find('\n');
    Source = NL == llvm::StringRef::npos ? llvm::StringRef() : Source.substr(NL + 1);
  }
  return Source.take_until([](char C) { return C == '\n' || C == '\r'; });
}

llvm::Constant *KernelEntryEmitter::stringConstant(llvm::StringRef S) {
  auto *Init = llvm::ConstantDataArray::getString(L.IR.getContext(), S);
  auto *G = new llvm::GlobalVariable(L.IR, Init->getType(), true, llvm::GlobalValue::PrivateLinkage,
                                     Init, ".gridjit.str");
  G->setUnnamedAddr(llvm::GlobalValue::UnnamedAddr::Global);
  return G;
}

llvm::StringRef KernelEntryEmitter::sourceLineOf(SourceLoc Loc) const {
  return Loc.isValid() ? sourceLine(L.KM.Source, Loc.Line) : "";
}

// One constant per synchronisation point, for the runtime's messages.
llvm::Constant *KernelEntryEmitter::siteFor(SourceLoc Loc, llvm::StringRef What) {
  std::string Key = std::to_string(Loc.Line) + ":" + std::to_string(Loc.Col) + ":" + What.str();
  llvm::Constant *&Site = Cur->Sites[Key];
  if (Site)
    return Site;
  llvm::LLVMContext &C = L.IR.getContext();
  llvm::Type *Ptr = llvm::PointerType::get(C, 0);
  llvm::Type *I32 = llvm::Type::getInt32Ty(C);
  auto *Ty = llvm::StructType::get(C, {Ptr, I32, I32, Ptr, Ptr, Ptr});
  llvm::Constant *Fields[] = {stringConstant(L.KM.Name),
                              llvm::ConstantInt::get(I32, Loc.Line),
                              llvm::ConstantInt::get(I32, Loc.Col),
                              stringConstant(What),
                              stringConstant(sourceLineOf(Loc)),
                              stringConstant(Cur->Kernel->Name)};
  auto *G = new llvm::GlobalVariable(L.IR, Ty, true, llvm::GlobalValue::PrivateLinkage,
                                     llvm::ConstantStruct::get(Ty, Fields), ".gridjit.site");
  Site = G;
  return Site;
}

void KernelEntryEmitter::emitErrorReturn(llvm::Constant *Site, Value *Arrived, Value *Expected,
                                         Value *Warp) {
  using namespace hostabi;
  B.CreateStore(Site, ctxField(CtxErrSite));
  B.CreateStore(Arrived, ctxField(CtxErrArrived));
  B.CreateStore(Expected, ctxField(CtxErrExpected));
  B.CreateStore(Warp, ctxField(CtxErrWarp));
  B.CreateStore(Cur->BlockId, ctxField(CtxErrBlock));
  B.CreateRet(B.getInt32(EntryError));
}

/// True when a top-level statement of a kernel without synchronisation is
/// an assignment of a uniform variable (it runs between two thread loops,
/// so a thread that returned in the first must be skipped in the second).
static bool splitsBody(const BlockStmt &Body, const BodyPlan &P) {
  for (const StmtPtr &S : Body.Body)
    if (const auto *A = dyn_cast<AssignStmt>(S.get()))
      if (const auto *N = dyn_cast<NameExpr>(A->Target.get()))
        if (N->Decl && P.getStorage(N->Decl) == Storage::Uniform)
          return true;
  return false;
}

llvm::Error KernelEntryEmitter::lowerKernel(const FunctionDecl &K) {
  Expected<llvm::Function *> F = createEntry(K);
  if (!F)
    return F.takeError();
  // A fresh state for this kernel; none of it outlives the call.
  FunctionState State;
  llvm::SaveAndRestore<FunctionState *> Scope(Cur, &State);
  Ctx.CurDecl = &K;
  Ctx.CurFn = *F;
  State.Kernel = &K;
  State.Ret.K = ReturnTarget::Kernel;
  State.Plan = &L.planOf(K);
  State.Cooperative = K.UsesGridSync;
  State.NeedsState = L.Sync.runsAtBlockLevel(*K.Body) ||
                     (containsReturn(*K.Body) && splitsBody(*K.Body, *State.Plan));

  B.SetInsertPoint(llvm::BasicBlock::Create(L.IR.getContext(), "entry", *F));
  State.CtxArg = (*F)->getArg(1);
  loadParameters(K, (*F)->getArg(0));
  loadLaunchDimensions();
  if (llvm::Error E = placeSharedArrays(K))
    return E;
  if (State.NeedsState)
    State.StateSlot = State.allocFrame(4, 4);
  if (llvm::Error E = emitBlockLoop(K, **F))
    return E;
  llvm::removeUnreachableBlocks(**F);
  tagMemoryAccesses(**F);
  emitDescriptor(K);
  return llvm::Error::success();
}

Expected<llvm::Function *> KernelEntryEmitter::createEntry(const FunctionDecl &K) {
  using namespace hostabi;
  llvm::LLVMContext &C = L.IR.getContext();
  std::string EntryName = EntryPrefix + K.Name;
  if (L.IR.getNamedValue(EntryName) || L.IR.getNamedValue(DescriptorPrefix + K.Name))
    return Ctx.error(K.getLoc(), "the name '" + llvm::Twine(K.Name) +
                                     "' clashes with a symbol the host target defines");
  llvm::Type *Ptr = llvm::PointerType::get(C, 0);
  llvm::Type *I64 = llvm::Type::getInt64Ty(C);
  auto *FT = llvm::FunctionType::get(llvm::Type::getInt32Ty(C), {Ptr, Ptr, I64, I64}, false);
  auto *F = llvm::Function::Create(FT, llvm::GlobalValue::ExternalLinkage, EntryName, L.IR);
  F->addFnAttr(llvm::Attribute::NoUnwind);
  const char *ArgNames[] = {"args", "ctx", "first", "end"};
  for (unsigned I = 0; I < 4; ++I)
    F->getArg(I)->setName(ArgNames[I]);
  // Nothing a kernel can name points into the argument array or the
  // context.
  for (unsigned I = 0; I < 2; ++I) {
    F->addParamAttr(I, llvm::Attribute::NoAlias);
    F->addParamAttr(I, llvm::Attribute::NoCapture);
  }
  return F;
}

void KernelEntryEmitter::loadParameters(const FunctionDecl &K, Value *Args) {
  llvm::Type *Ptr = B.getPtrTy();
  for (unsigned I = 0; I < K.Params.size(); ++I) {
    const VarDecl &P = *K.Params[I];
    Value *Slot = B.CreateLoad(Ptr, B.CreateConstInBoundsGEP1_32(Ptr, Args, I));
    Value *V = L.loadScalar(Slot, P.Ty);
    V->setName(P.Name);
    Cur->Vars[&P] = {VarSlot::Value, V, {}, nullptr};
  }
}

static const char *const Axis[] = {"x", "y", "z"};

void KernelEntryEmitter::loadLaunchDimensions() {
  using namespace hostabi;
  ThreadEnv &Env = Cur->Env;
  // The runtime checks these ranges before a launch (HostRuntime.cpp, with
  // the same limits); telling LLVM lets it prove that index
  // arithmetic on thread and block indices does not wrap, which keeps addresses affine
  // (vectorisable).
  llvm::MDBuilder MDB(L.IR.getContext());
  auto Range = [&](uint32_t Max) {
    return MDB.createRange(llvm::APInt(32, 1), llvm::APInt(32, uint64_t(Max) + 1));
  };
  for (unsigned D = 0; D < 3; ++D) {
    auto *G = B.CreateLoad(B.getInt32Ty(), ctxField(CtxGridDim + 4 * D),
                           llvm::Twine("grid_dim.") + Axis[D]);
    G->setMetadata(llvm::LLVMContext::MD_range, Range(limits::MaxGridDim[D]));
    auto *BD = B.CreateLoad(B.getInt32Ty(), ctxField(CtxBlockDim + 4 * D),
                            llvm::Twine("block_dim.") + Axis[D]);
    BD->setMetadata(llvm::LLVMContext::MD_range, Range(limits::MaxBlockDim[D]));
    Env.GDim[D] = G;
    Env.BDim[D] = BD;
  }
  // At most MaxThreadsPerBlock threads (the runtime checks), so no
  // product overflows.
  Cur->NumThreads = B.CreateMul(B.CreateMul(Env.BDim[0], Env.BDim[1], "", true, true), Env.BDim[2],
                                "threads", true, true);
  Cur->NumThreads64 = B.CreateZExt(Cur->NumThreads, B.getInt64Ty(), "threads64");
  llvm::Type *Ptr = B.getPtrTy();
  Cur->SharedBase = B.CreateLoad(Ptr, ctxField(CtxShared), "shared");
  Cur->FrameBase = B.CreateLoad(Ptr, ctxField(CtxFrame), "frame");
  Cur->BlockFrameBase = B.CreateLoad(Ptr, ctxField(CtxBlockFrame), "block.frame");
  Cur->EnvAlloca = B.CreateAlloca(L.EnvTy, nullptr, "env");
  B.CreateStore(Cur->CtxArg, B.CreateStructGEP(L.EnvTy, Cur->EnvAlloca, 6));
}

// Shared arrays and scalars: fixed offsets in the block's shared memory
// (SharedLayout: the same layout the launch metadata describes), lowered
// here so that their addresses dominate every thread loop. A shared
// scalar's slot is that address: every read of its name is a load of
// shared memory, every assignment a store (never a register of one
// thread: KernelAnalysis never makes it uniform, recomputed or private).
llvm::Error KernelEntryEmitter::placeSharedArrays(const FunctionDecl &K) {
  SharedLayout Layout = layoutShared(K);
  Cur->StaticSharedBytes = Layout.StaticBytes;
  for (const SharedLayout::Entry &S : Layout.Arrays) {
    const VarDecl &V = *S.Var;
    Cur->SharedOffsets[&V] = S.Offset;
    OpArgs A;
    A.Loc = V.Loc;
    A.ResultTy = V.Ty;
    A.Var = &V;
    A.Mem = memoryOf(V);
    auto Addr = Ctx.lower(isDynamicShared(V) ? Op::DynamicShared : Op::SharedArray, A);
    if (!Addr)
      return Addr.takeError();
    Cur->Vars[&V] = {VarSlot::Address, *Addr, {}, nullptr};
    if (!V.Ty.isArray())
      Cur->SharedScalars[*Addr] = &V;
  }
  // The device functions it calls find theirs through the environment:
  // the block's shared memory and this kernel's offset of each of their
  // declarations (indexed by L.FnSharedSlots; 0 for those of functions it
  // never calls). Null when it reaches none.
  llvm::Type *I64 = B.getInt64Ty();
  std::vector<llvm::Constant *> Offsets(L.FnSharedSlots.size(), llvm::ConstantInt::get(I64, 0));
  bool CallsShared = false;
  for (const SharedLayout::Entry &S : Layout.Arrays)
    if (auto It = L.FnSharedSlots.find(S.Var); It != L.FnSharedSlots.end()) {
      Offsets[It->second] = llvm::ConstantInt::get(I64, S.Offset);
      CallsShared = true;
    }
  llvm::Value *Table = llvm::ConstantPointerNull::get(B.getPtrTy());
  if (CallsShared) {
    auto *Ty = llvm::ArrayType::get(I64, Offsets.size());
    Table = new llvm::GlobalVariable(
        L.IR, Ty, /*isConstant=*/true, llvm::GlobalValue::PrivateLinkage,
        llvm::ConstantArray::get(Ty, Offsets), "gridjit.shared.offsets." + K.Name);
  }
  B.CreateStore(Cur->SharedBase, B.CreateStructGEP(L.EnvTy, Cur->EnvAlloca, 4));
  B.CreateStore(Table, B.CreateStructGEP(L.EnvTy, Cur->EnvAlloca, 5));
  return llvm::Error::success();
}

// Runs blocks [first, end). The first block's indices need a division;
// the next ones are counted (x fastest), so that small blocks do not pay a
// division each.
llvm::Error KernelEntryEmitter::emitBlockLoop(const FunctionDecl &K, llvm::Function &F) {
  ThreadEnv &Env = Cur->Env;
  llvm::Type *I64 = B.getInt64Ty();
  llvm::BasicBlock *Entry = B.GetInsertBlock();
  llvm::BasicBlock *Head = newBlock("block");
  llvm::BasicBlock *Body = newBlock("block.body");
  llvm::BasicBlock *Latch = newBlock("block.next");
  llvm::BasicBlock *Done = newBlock("done");
  Value *GX = B.CreateZExt(Env.GDim[0], I64), *GY = B.CreateZExt(Env.GDim[1], I64);
  Value *First = F.getArg(2);
  Value *FirstRest = B.CreateUDiv(First, GX);
  Value *FirstIdx[] = {B.CreateTrunc(B.CreateURem(First, GX), B.getInt32Ty()),
                       B.CreateTrunc(B.CreateURem(FirstRest, GY), B.getInt32Ty()),
                       B.CreateTrunc(B.CreateUDiv(FirstRest, GY), B.getInt32Ty())};
  B.CreateBr(Head);
  B.SetInsertPoint(Head);
  llvm::PHINode *Id = B.CreatePHI(I64, 2, "block.id");
  Id->addIncoming(First, Entry);
  llvm::PHINode *Idx[3];
  for (unsigned D = 0; D < 3; ++D) {
    Idx[D] = B.CreatePHI(B.getInt32Ty(), 2, llvm::Twine("block_idx.") + Axis[D]);
    Idx[D]->addIncoming(FirstIdx[D], Entry);
    Env.Bid[D] = Idx[D];
  }
  Cur->BlockId = Id;
  B.CreateCondBr(B.CreateICmpULT(Id, F.getArg(3)), Body, Done);
  B.SetInsertPoint(Body);
  if (llvm::Error E = emitBlockBody(K))
    return E;
  if (!terminated())
    B.CreateBr(Latch);
  B.SetInsertPoint(Latch);
  Value *Next = B.CreateAdd(Id, B.getInt64(1), "", true, true);
  Id->addIncoming(Next, Latch);
  Value *X1 = B.CreateAdd(Idx[0], B.getInt32(1), "", true, true);
  Value *WrapX = B.CreateICmpEQ(X1, Env.GDim[0]);
  Value *Y1 = B.CreateAdd(Idx[1], B.CreateZExt(WrapX, B.getInt32Ty()), "", true, true);
  Value *WrapY = B.CreateICmpEQ(Y1, Env.GDim[1]);
  Idx[0]->addIncoming(B.CreateSelect(WrapX, B.getInt32(0), X1), Latch);
  Idx[1]->addIncoming(B.CreateSelect(WrapY, B.getInt32(0), Y1), Latch);
  Idx[2]->addIncoming(B.CreateAdd(Idx[2], B.CreateZExt(WrapY, B.getInt32Ty()), "", true, true),
                      Latch);
  llvm::BranchInst *ToNext = B.CreateBr(Head);
  // Checked code: the next block starts with shared memory of its own
  // (CheckElision.cpp: no access reaches past this edge unordered).
  if (L.checked())
    ToNext->setMetadata(host::NextBlockMD, llvm::MDNode::get(B.getContext(), {}));
  B.SetInsertPoint(Done);
  B.CreateRet(B.getInt32(hostabi::EntryDone));
  return llvm::Error::success();
}

// One block: in a cooperative kernel, first the jump to the phase to
// resume (grid_sync k returns k and the next call resumes after it); the
// state words cleared; the kernel's body at block level.
llvm::Error KernelEntryEmitter::emitBlockBody(const FunctionDecl &K) {
  if (Cur->Cooperative) {
    llvm::BasicBlock *Start = newBlock("start");
    Cur->ResumeSwitch =
        B.CreateSwitch(B.CreateLoad(B.getInt32Ty(), ctxField(hostabi::CtxResume), "resume"), Start);
    B.SetInsertPoint(Start);
  }
  if (Cur->NeedsState)
    B.CreateMemSet(L.slotAddr(Cur->StateSlot, B.getInt32(0)), B.getInt8(0),
                   B.CreateMul(Cur->NumThreads64, B.getInt64(4)), llvm::MaybeAlign(4));
  if (llvm::Error E = L.SyncPoints.blockStart(K))
    return E;
  if (llvm::Error E = L.lowerBlockLevel(*K.Body))
    return E;
  return terminated() ? llvm::Error::success() : L.SyncPoints.blockEnd(K);
}

// Frame sizes, shared memory and grid_sync count: hostabi::Descriptor.
void KernelEntryEmitter::emitDescriptor(const FunctionDecl &K) {
  using namespace hostabi;
  llvm::Type *I64 = B.getInt64Ty();
  llvm::Constant *Fields[] = {
      llvm::ConstantInt::get(I64, ABIVersion),
      llvm::ConstantInt::get(I64, llvm::alignTo(Cur->FrameBytes, 16)),
      llvm::ConstantInt::get(I64, Cur->BlockFrameBytes),
      llvm::ConstantInt::get(I64, Cur->StaticSharedBytes),
      llvm::ConstantInt::get(I64, Cur->NumGridSyncs),
      llvm::ConstantInt::get(I64, L.checked() ? 1 : 0), // Checked
      llvm::ConstantInt::get(I64, L.CheckArch),         // CheckArch (0 unchecked)
  };
  auto *DescTy = llvm::ArrayType::get(I64, std::size(Fields));
  new llvm::GlobalVariable(L.IR, DescTy, /*isConstant=*/true, llvm::GlobalValue::ExternalLinkage,
                           llvm::ConstantArray::get(DescTy, Fields), DescriptorPrefix + K.Name);
}
