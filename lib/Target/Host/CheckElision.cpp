//===- CheckElision.cpp - Accesses of checked code that need a bounds check only ===//
//
// Part of gridjit. Checked code calls the runtime's CheckAccess before
// every access of global and shared memory (CheckLowering.cpp). Some
// accesses can take part in no race and touch no uninitialised memory, so
// that only their bounds are left to check:
//
// - a load through kernel parameter p when every store and atomic of
//   global memory in the kernel (and in the device functions it calls)
//   goes through a parameter other than p: nothing it reads is written in
//   the launch, once the runtime has seen that no other pointer argument's
//   memory overlaps p's;
// - every access through parameter p when the kernel reaches p only at the
//   thread's global index (PrivateParams.h, which names the slot in the
//   site) and reaches global memory through parameters only: in a
//   one-dimensional launch, and once the runtime has seen that no other
//   pointer argument's memory overlaps p's, no other thread touches what
//   it touches;
// - a load (or an atomic) of static shared array t when no path of the
//   kernel leads from a store or atomic (a load or store) of t to it, or
//   from it to one, without passing a sync_threads(); a store through a
//   shared pointer counts as one of every array. No access of t between
//   the barriers around it can race with it, and once every byte of t was
//   written in the block (the runtime sees that), it touches nothing
//   uninitialised.
//
// The paths are those of the entry function as lowered, before any
// optimisation: its thread loops run each barrier interval's code for every
// thread of the block, so a path from one thread's access to another
// thread's exists exactly when the two may happen between the same
// barriers. The branch from one block's end to the next block's start
// (NextBlockMD) carries nothing: a block's shared memory is its own.
//
// Before that, proveShared looks for proven shared arrays (docs/Check.md,
// "Proven shared arrays"): static shared arrays whose every access carries
// the form of its index (SharedFormMD, SharedForms.h) and whose accesses,
// paired by the same paths, can reach one element from two threads only
// in block shapes it can name: the same injective T, or `T` under
// `if T < s` against `T + s`; every load after a covering store and a
// barrier; every index without a symbol inside the array. It clones the
// entry into ProvenPrefix + the kernel's name, where those accesses call
// nothing (one whose index has a symbol tests the array's bounds inline
// and calls only outside them), and makes the entry call the clone when
// the block's dimensions meet every condition the proofs named.
//
// Such an access gets an inline check of its slot of the table CheckState
// points to (hostabi::CheckFastTable): when its bytes lie in the slot's
// range it goes ahead without a call; otherwise it calls CheckAccess as
// before, which reports what is wrong (or, for a shared array, opens the
// slot when the array is fully written). The fast path gives the address
// the call would have given, and records nothing the checker could need:
// the findings of a launch do not change.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"
#include "SharedForms.h"

#include "gridjit/Target/HostABI.h"

#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/Analysis/ValueTracking.h"
#include "llvm/IR/CFG.h"
#include "llvm/IR/Constants.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/IntrinsicInst.h"
#include "llvm/IR/MDBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Operator.h"
#include "llvm/Transforms/Utils/BasicBlockUtils.h"
#include "llvm/Transforms/Utils/Cloning.h"

#include <array>
#include <map>
#include <optional>
#include <set>
#include <utility>
#include <vector>

using namespace gridjit;
using namespace llvm;

namespace {

namespace abi = gridjit::hostabi;

/// Marks the call that a proven array's inline bounds check makes when the
/// access is outside the array (it reports it); the analysis skips it.
constexpr const char *ProvenCheckMD = "gridjit.proven.check";

// The fields of a CheckSite constant (CheckLowering.cpp's checkSite).
enum SiteField : unsigned {
  FieldKind = 6,
  FieldSpace = 7,
  FieldBytes = 8,
  FieldParam = 10,
  FieldFastSlot = 11,
  FieldSharedOffset = 13,
  FieldSharedBytes = 14,
};

/// The offset of the BlockContext field that \p Callee is loaded from
/// (checked code calls the runtime through `load (gep i8 ctx, Offset)`).
std::optional<int64_t> contextField(const Value *Callee) {
  const auto *L = dyn_cast<LoadInst>(Callee);
  if (!L)
    return std::nullopt;
  const auto *G = dyn_cast<GEPOperator>(L->getPointerOperand());
  if (!G || G->getNumIndices() != 1 || !G->getSourceElementType()->isIntegerTy(8))
    return std::nullopt;
  const auto *Off = dyn_cast<ConstantInt>(G->idx_begin()->get());
  if (!Off)
    return std::nullopt;
  return Off->getSExtValue();
}

/// A CheckAccess call and what its site says.
struct Access {
  CallInst *Call = nullptr;
  GlobalVariable *Site = nullptr;
  uint32_t Kind = 0, Space = 0, Bytes = 0;
  int32_t Param = -1;
  uint64_t SharedOffset = 0, SharedBytes = 0;
  int Array = -1; ///< the static shared array's number, for CheckShared with bytes
  std::optional<host::SharedForm> Form; ///< its index's (SharedFormMD)
  bool isWrite() const { return Kind != abi::CheckLoad; }
};

uint32_t siteField(const GlobalVariable *Site, unsigned Field) {
  return uint32_t(cast<ConstantInt>(cast<ConstantStruct>(Site->getInitializer())->getOperand(Field))
                      ->getZExtValue());
}

std::optional<Access> accessOf(CallInst &Call) {
  if (Call.getCalledFunction() || Call.arg_size() != 6 ||
      contextField(Call.getCalledOperand()) != int64_t(abi::CtxCheckAccess))
    return std::nullopt;
  auto *Site = dyn_cast<GlobalVariable>(Call.getArgOperand(1));
  auto *Init =
      Site && Site->hasInitializer() ? dyn_cast<ConstantStruct>(Site->getInitializer()) : nullptr;
  if (!Init || Init->getNumOperands() <= FieldSharedBytes)
    return std::nullopt;
  auto Field = [&](unsigned I) { return cast<ConstantInt>(Init->getOperand(I)); };
  Access A;
  A.Call = &Call;
  A.Site = Site;
  A.Kind = uint32_t(Field(FieldKind)->getZExtValue());
  A.Space = uint32_t(Field(FieldSpace)->getZExtValue());
  A.Bytes = uint32_t(Field(FieldBytes)->getZExtValue());
  A.Param = int32_t(Field(FieldParam)->getSExtValue());
  A.SharedOffset = Field(FieldSharedOffset)->getZExtValue();
  A.SharedBytes = Field(FieldSharedBytes)->getZExtValue();
  A.Form = host::formFromMetadata(Call.getMetadata(host::SharedFormMD));
  return A;
}

/// What an instruction does to the analysis of shared memory.
struct Event {
  enum KindType { Access, WriteAll, Barrier } Kind;
  unsigned Index = 0; ///< Access: the access
};

/// What a device function (with what it calls) may write.
struct Writes {
  bool Global = false, Shared = false;
  bool GlobalAccess = false; ///< any access of global memory, a load too
};
Writes writesOf(const Function &F, DenseMap<const Function *, Writes> &Memo);

/// Whether \p I may write memory that no check of its function sees: a
/// call the analysis does not know (inline assembly, an unknown function),
/// or a memory intrinsic into memory that is not a thread's own.
bool unknownWrite(const Instruction &I) {
  const auto *Call = dyn_cast<CallBase>(&I);
  if (!Call)
    return false;
  if (const auto *MI = dyn_cast<AnyMemIntrinsic>(Call)) {
    const Value *Dest = getUnderlyingObject(MI->getRawDest());
    if (isa<AllocaInst>(Dest))
      return false;
    // The thread state and block frame (`load (gep i8 ctx, k)`), not
    // shared memory.
    std::optional<int64_t> Field = contextField(Dest);
    return !Field || *Field == int64_t(abi::CtxShared);
  }
  if (const Function *F = Call->getCalledFunction())
    return F->isDeclaration() && !(F->isIntrinsic() || F->doesNotAccessMemory() ||
                                   F->onlyAccessesInaccessibleMemory() || F->onlyReadsMemory());
  if (Call->isInlineAsm())
    return true;
  std::optional<int64_t> Field = contextField(Call->getCalledOperand());
  return !Field ||
         (*Field != int64_t(abi::CtxCheckAccess) && *Field != int64_t(abi::CtxCheckReport) &&
          *Field != int64_t(abi::CtxCheckSync) && *Field != int64_t(abi::CtxPrint));
}

/// The forward analysis of one function's shared-memory accesses: the
/// accesses of static shared arrays that may have happened since the last
/// barrier, and whether a write through a shared pointer may have.
struct State {
  BitVector Pending; ///< by access
  bool All = false;
  bool join(const State &O) {
    BitVector Old = Pending;
    Pending |= O.Pending;
    bool Changed = Old != Pending;
    if (O.All && !All)
      All = Changed = true;
    return Changed;
  }
};

/// Whether two accesses of the same memory between the same barriers can
/// race: unless both read, or both are atomic.
bool conflicts(uint32_t KindA, uint32_t KindB) {
  return !(KindA == abi::CheckLoad && KindB == abi::CheckLoad) &&
         !(KindA == abi::CheckAtomic && KindB == abi::CheckAtomic);
}

// A device function's accesses (before the inliner puts it into the
// entries): a write of global memory names no kernel parameter; a write of
// shared memory may be of any array.
Writes writesOf(const Function &F, DenseMap<const Function *, Writes> &Memo) {
  if (auto It = Memo.find(&F); It != Memo.end())
    return It->second;
  Writes W;
  Memo[&F] = W; // (KIR has no recursion)
  for (const BasicBlock &BB : F)
    for (const Instruction &I : BB) {
      const auto *Call = dyn_cast<CallInst>(&I);
      if (!Call)
        continue;
      if (std::optional<Access> A = accessOf(*const_cast<CallInst *>(Call))) {
        if (A->isWrite() && A->Space == abi::CheckGlobal)
          W.Global = true;
        if (A->Space == abi::CheckGlobal)
          W.GlobalAccess = true;
        if (A->isWrite() && A->Space == abi::CheckShared)
          W.Shared = true;
      } else if (const Function *Callee = Call->getCalledFunction();
                 Callee && !Callee->isDeclaration()) {
        Writes C = writesOf(*Callee, Memo);
        W.Global |= C.Global;
        W.Shared |= C.Shared;
        W.GlobalAccess |= C.GlobalAccess;
      } else if (unknownWrite(I)) {
        W.Global = W.Shared = W.GlobalAccess = true;
      }
    }
  return Memo[&F] = W;
}

class FunctionElision {
public:
  FunctionElision(Function &F, DenseMap<const Function *, Writes> &Memo) : F(F), Memo(Memo) {}
  unsigned run();
  /// The kernel's proven entry (a clone of this entry with the proven
  /// arrays' accesses unchecked), called from this one when the block's
  /// shape lets the proofs hold; null when no array is proven.
  Function *proveShared();

private:
  void collect();
  void analyseShared();
  void rewrite(Access &A, unsigned Slot, bool Volatile);
  /// The slot's start and the limit of the offsets at which an access of
  /// \p N bytes lies inside it.
  std::pair<Value *, Value *> slotRange(CallInst *Call, unsigned Slot, uint64_t N, bool Volatile);

  Function &F;
  DenseMap<const Function *, Writes> &Memo;
  std::vector<Access> Accesses;
  DenseMap<const BasicBlock *, SmallVector<Event, 8>> Events;
  DenseMap<uint64_t, unsigned> Arrays; ///< by shared offset
  BitVector Racy;                      ///< accesses that must stay calls
  /// The pairs of accesses (first <= second) of one array, one at least a
  /// write, that two threads may make between the same barriers.
  std::set<std::pair<unsigned, unsigned>> Pairs;
  /// A write through a shared pointer, or an access of shared memory the
  /// site does not place in an array.
  bool SharedUnknown = false;
  bool Analysed = false;
  bool UnknownGlobalWrites = false;
  /// An access of global memory through a pointer that is no parameter's.
  bool UnknownGlobalAccesses = false;
  BitVector WrittenParams = BitVector(abi::CheckFastPrivateSlots);
  Value *EntryState = nullptr;
  std::map<std::pair<unsigned, uint64_t>, std::pair<Value *, Value *>> EntrySlots;
};

void FunctionElision::collect() {
  for (BasicBlock &BB : F) {
    SmallVector<Event, 8> &Ev = Events[&BB];
    for (Instruction &I : BB) {
      auto *Call = dyn_cast<CallInst>(&I);
      if (Call && Call->getMetadata(ProvenCheckMD))
        continue; // a proven array's bounds check (proveShared)
      if (std::optional<Access> A = Call ? accessOf(*Call) : std::nullopt) {
        if (A->Space == abi::CheckShared && !A->SharedBytes)
          SharedUnknown = true;
        if (A->Space == abi::CheckShared && A->SharedBytes) {
          auto [It, New] = Arrays.try_emplace(A->SharedOffset, unsigned(Arrays.size()));
          A->Array = int(It->second);
          Ev.push_back({Event::Access, unsigned(Accesses.size())});
        } else if (A->Space == abi::CheckShared && A->isWrite()) {
          Ev.push_back({Event::WriteAll}); // a shared pointer's
        }
        // (The dynamic shared array's accesses stay in it: the checker
        // gives one out of its bounds scratch memory instead.)
        if (A->Space == abi::CheckGlobal && A->Param < 0)
          UnknownGlobalAccesses = true;
        if (A->Space == abi::CheckGlobal && A->isWrite()) {
          if (A->Param < 0 || unsigned(A->Param) >= WrittenParams.size())
            UnknownGlobalWrites = true;
          else
            WrittenParams.set(unsigned(A->Param));
        }
        Accesses.push_back(*A);
        continue;
      }
      if (Call && contextField(Call->getCalledOperand()) == int64_t(abi::CtxCheckSync)) {
        auto *Kind = dyn_cast<ConstantInt>(Call->getArgOperand(1));
        if (!Kind || Kind->getZExtValue() == abi::CheckSyncThreads)
          Ev.push_back({Event::Barrier});
        continue;
      }
      Writes W;
      if (const Function *Callee = Call ? Call->getCalledFunction() : nullptr;
          Callee && !Callee->isDeclaration())
        W = writesOf(*Callee, Memo); // a device function (a barrier there is not seen)
      else if (unknownWrite(I))
        W.Global = W.Shared = W.GlobalAccess = true;
      if (W.Shared) {
        Ev.push_back({Event::WriteAll});
        SharedUnknown = true;
      }
      UnknownGlobalWrites |= W.Global;
      UnknownGlobalAccesses |= W.GlobalAccess;
    }
  }
}

void FunctionElision::analyseShared() {
  Racy.resize(Accesses.size());
  auto Empty = [&] {
    State S;
    S.Pending.resize(Accesses.size());
    return S;
  };
  DenseMap<const BasicBlock *, State> In;
  SmallVector<BasicBlock *, 32> Work;
  SmallPtrSet<BasicBlock *, 32> Queued;
  In[&F.getEntryBlock()] = Empty();
  Work.push_back(&F.getEntryBlock());
  Queued.insert(&F.getEntryBlock());
  while (!Work.empty()) {
    BasicBlock *BB = Work.pop_back_val();
    Queued.erase(BB);
    State S = In[BB];
    for (const Event &E : Events[BB]) {
      switch (E.Kind) {
      case Event::Access: {
        const Access &A = Accesses[E.Index];
        if (S.All)
          Racy.set(E.Index);
        for (unsigned P : S.Pending.set_bits())
          if (Accesses[P].Array == A.Array && conflicts(Accesses[P].Kind, A.Kind)) {
            Racy.set(P);
            Racy.set(E.Index);
            Pairs.insert({std::min(P, E.Index), std::max(P, E.Index)});
          }
        S.Pending.set(E.Index);
        break;
      }
      case Event::WriteAll:
        SharedUnknown = true;
        S.All = true;
        Racy |= S.Pending;
        break;
      case Event::Barrier:
        S = Empty();
        break;
      }
    }
    const Instruction *Term = BB->getTerminator();
    bool NextBlock = Term && Term->getMetadata(host::NextBlockMD);
    for (BasicBlock *Succ : successors(BB)) {
      auto [It, New] = In.try_emplace(Succ, Empty());
      bool Changed = It->second.join(NextBlock ? Empty() : S) || New;
      if (Changed && Queued.insert(Succ).second)
        Work.push_back(Succ);
    }
  }
}

std::pair<Value *, Value *> FunctionElision::slotRange(CallInst *Call, unsigned Slot, uint64_t N,
                                                       bool Volatile) {
  // A parameter's slot does not change while the entry runs: read it once,
  // at the entry's start (where the BlockContext is its second argument),
  // so that the loop around the access keeps it in registers.
  bool Once =
      Slot < abi::CheckFastSharedSlots &&
      (F.getName().starts_with(abi::EntryPrefix) || F.getName().starts_with(host::ProvenPrefix)) &&
      F.arg_size() == 4;
  if (Once)
    if (auto It = EntrySlots.find({Slot, N}); It != EntrySlots.end())
      return It->second;
  IRBuilder<> B(Once ? F.getEntryBlock().getTerminator() : Call);
  Value *State = Call->getArgOperand(0);
  if (Once) {
    if (!EntryState)
      EntryState =
          B.CreateLoad(B.getPtrTy(),
                       B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), F.getArg(1), abi::CtxCheckState),
                       "check.state.entry");
    State = EntryState;
  }
  llvm::Type *I64 = B.getInt64Ty();
  Value *Range = B.CreateConstInBoundsGEP1_64(
      B.getInt8Ty(), State, uint64_t(Slot) * sizeof(abi::CheckFastRange), "fast.slot");
  LoadInst *Begin = B.CreateLoad(I64, Range, Volatile, "fast.begin");
  LoadInst *Size = B.CreateLoad(I64, B.CreateConstInBoundsGEP1_64(B.getInt8Ty(), Range, 8),
                                Volatile, "fast.size");
  // The offsets of the first byte that keep all N bytes inside: [0, Limit)
  // (Limit 0: none, a closed slot or one smaller than the access).
  Value *Limit = B.CreateSelect(B.CreateICmpUGE(Size, B.getInt64(N)),
                                B.CreateSub(Size, B.getInt64(N - 1)), B.getInt64(0), "fast.limit");
  if (Once)
    EntrySlots[{Slot, N}] = {Begin, Limit};
  return {Begin, Limit};
}

/// Makes access check \p Call a call only when the address it checks is
/// not inside [Begin, Begin + Limit) (i64 values, Begin an address): inside,
/// the access goes ahead at that address.
static void callOnlyOutside(CallInst *Call, Value *Begin, Value *Limit) {
  IRBuilder<> B(Call);
  Value *Addr = Call->getArgOperand(4);
  Value *Off = B.CreateSub(B.CreatePtrToInt(Addr, B.getInt64Ty()), Begin, "fast.offset");
  Value *Inside = B.CreateICmpULT(Off, Limit, "fast.inside");
  MDNode *Weights = MDBuilder(Call->getContext()).createBranchWeights(1, 1000);
  BasicBlock *Fast = Call->getParent();
  Instruction *SlowTerm =
      SplitBlockAndInsertIfThen(B.CreateNot(Inside), Call, /*Unreachable=*/false, Weights);
  BasicBlock *Slow = SlowTerm->getParent();
  PHINode *Phi = PHINode::Create(Call->getType(), 2, "checked.addr");
  Phi->insertBefore(Call->getParent()->getFirstNonPHIIt());
  Call->replaceAllUsesWith(Phi);
  Call->moveBefore(SlowTerm);
  Phi->addIncoming(Addr, Fast);
  Phi->addIncoming(Call, Slow);
}

void FunctionElision::rewrite(Access &A, unsigned Slot, bool Volatile) {
  auto [Begin, Limit] = slotRange(A.Call, Slot, std::max<uint32_t>(1, A.Bytes), Volatile);
  callOnlyOutside(A.Call, Begin, Limit);
}

/// The conditions on the block's shape under which the proofs of
/// proveShared hold, built as IR at the start of the entry.
class ShapeConditions {
public:
  /// T = C . thread_idx takes no value twice in the block.
  void injective(const int64_t *C) { Injective.insert({C[0], C[1], C[2]}); }
  /// T takes every value of [0, N) exactly once.
  void covers(const int64_t *C, int64_t N) { Covers.insert({C[0], C[1], C[2], N}); }
  /// T + [Lo, Hi] stays inside [0, N).
  void bounded(const int64_t *C, int64_t Hi, int64_t N) {
    Bounded.insert({C[0], C[1], C[2], Hi, N});
  }

  Value *build(IRBuilder<> &B, Value *Ctx) const {
    Value *Dim[3];
    for (unsigned D = 0; D < 3; ++D)
      Dim[D] = B.CreateZExt(
          B.CreateLoad(B.getInt32Ty(),
                       B.CreateConstInBoundsGEP1_32(B.getInt8Ty(), Ctx, abi::CtxBlockDim + 4 * D)),
          B.getInt64Ty(), "proven.dim");
    Value *All = B.getTrue();
    auto And = [&](Value *V) { All = B.CreateAnd(All, V); };
    auto Max = [&](const int64_t *C) {
      Value *M = B.getInt64(0);
      for (unsigned D = 0; D < 3; ++D)
        M = B.CreateAdd(M, B.CreateMul(B.getInt64(C[D]), B.CreateSub(Dim[D], B.getInt64(1))));
      return M;
    };
    // The dimensions in the order of their coefficients; one with none
    // must have one thread; each other's must pass what the ones below it
    // reach (injective), or be one more than that (and so onto [0, max]).
    auto Radix = [&](const int64_t *C, bool Exact) {
      unsigned Order[3] = {0, 1, 2};
      std::sort(std::begin(Order), std::end(Order),
                [&](unsigned X, unsigned Y) { return C[X] < C[Y]; });
      Value *Below = B.getInt64(0);
      for (unsigned D : Order) {
        Value *One = B.CreateICmpEQ(Dim[D], B.getInt64(1));
        if (C[D] == 0) {
          And(One);
          continue;
        }
        Value *Fits = Exact ? B.CreateICmpEQ(B.getInt64(C[D]), B.CreateAdd(Below, B.getInt64(1)))
                            : B.CreateICmpULT(Below, B.getInt64(C[D]));
        And(B.CreateOr(One, Fits));
        Below =
            B.CreateAdd(Below, B.CreateMul(B.getInt64(C[D]), B.CreateSub(Dim[D], B.getInt64(1))));
      }
    };
    for (const auto &C : Injective)
      Radix(C.data(), false);
    for (const auto &C : Covers) {
      Radix(C.data(), true);
      And(B.CreateICmpEQ(Max(C.data()), B.getInt64(C[3] - 1)));
    }
    for (const auto &C : Bounded)
      And(B.CreateICmpSLT(B.CreateAdd(Max(C.data()), B.getInt64(C[3])), B.getInt64(C[4])));
    return All;
  }

  void mergeInto(ShapeConditions &O) const {
    O.Injective.insert(Injective.begin(), Injective.end());
    O.Covers.insert(Covers.begin(), Covers.end());
    O.Bounded.insert(Bounded.begin(), Bounded.end());
  }

private:
  std::set<std::array<int64_t, 3>> Injective;
  std::set<std::array<int64_t, 4>> Covers;
  std::set<std::array<int64_t, 5>> Bounded;
};

Function *FunctionElision::proveShared() {
  collect();
  analyseShared();
  Analysed = true;
  if (SharedUnknown || Arrays.empty() || !F.getName().starts_with(abi::EntryPrefix) ||
      F.arg_size() != 4)
    return nullptr;
  std::vector<SmallVector<unsigned, 8>> ByArray(Arrays.size());
  for (unsigned I = 0; I < Accesses.size(); ++I)
    if (Accesses[I].Array >= 0)
      ByArray[unsigned(Accesses[I].Array)].push_back(I);
  BitVector Proven(Arrays.size());
  ShapeConditions Shape;
  for (unsigned K = 0; K < Arrays.size(); ++K) {
    ShapeConditions Mine;
    bool Ok = true;
    for (unsigned I : ByArray[K]) {
      const Access &A = Accesses[I];
      uint64_t N = A.Bytes ? A.SharedBytes / A.Bytes : 0;
      if (!A.Form || A.Kind == abi::CheckAtomic || !A.Bytes || A.SharedBytes % A.Bytes ||
          A.Form->C[0] < 0 || A.Form->C[1] < 0 || A.Form->C[2] < 0) {
        Ok = false;
        break;
      }
      const auto &Fm = *A.Form;
      // Initialised: a covering store, then a barrier, came first.
      if (A.Kind == abi::CheckLoad) {
        if (!Fm.Covered) {
          Ok = false;
          break;
        }
        Mine.covers(Fm.CoverC, int64_t(N));
      }
      // In bounds: by the shape, or (with a symbol) checked inline.
      if (!Fm.Sym) {
        if (Fm.Lo < 0) {
          Ok = false;
          break;
        }
        Mine.bounded(Fm.C, Fm.Hi, int64_t(N));
      }
    }
    // No two threads reach one element between the same barriers, one of
    // them writing.
    for (const auto &[P, Q] : Pairs) {
      if (!Ok)
        break;
      if (Accesses[P].Array != int(K))
        continue;
      const auto &FP = *Accesses[P].Form, &FQ = *Accesses[Q].Form;
      bool SameT = FP.sameThreadPart(FQ);
      // The same index, an injective function of the thread.
      if (SameT && FP.Lo == FP.Hi && FQ.Lo == FQ.Hi && FP.Lo == FQ.Lo && FP.Sym == FQ.Sym) {
        Mine.injective(FP.C);
        continue;
      }
      // T under `if T < s` against T + s: T(t1) = T(t2) + s >= s.
      auto Guarded = [](const host::SharedForm &X, const host::SharedForm &Y) {
        return X.Guard && X.pureThread() && Y.Sym == X.Guard && Y.Lo == 0 && Y.Hi == 0;
      };
      if (SameT && (Guarded(FP, FQ) || Guarded(FQ, FP)))
        continue;
      Ok = false;
    }
    if (!Ok)
      continue;
    Proven.set(K);
    Mine.mergeInto(Shape);
  }
  if (Proven.none())
    return nullptr;

  // The proven entry: the accesses of proven arrays go ahead, only those
  // with an index the shape does not bound checking it inline.
  ValueToValueMapTy VMap;
  Function *P = CloneFunction(&F, VMap);
  P->setName(std::string(host::ProvenPrefix) +
             F.getName().drop_front(StringRef(abi::EntryPrefix).size()).str());
  P->setLinkage(GlobalValue::InternalLinkage);
  P->addFnAttr(Attribute::NoInline);
  Value *PShared = nullptr;
  for (const Access &A : Accesses) {
    if (A.Array < 0 || !Proven.test(unsigned(A.Array)))
      continue;
    auto *Call = cast<CallInst>(VMap[A.Call]);
    Value *Addr = Call->getArgOperand(4);
    if (!A.Form->Sym) {
      Call->replaceAllUsesWith(Addr);
      Call->eraseFromParent();
      continue;
    }
    if (!PShared) {
      IRBuilder<> EB(&*P->getEntryBlock().getFirstNonPHIOrDbgOrAlloca());
      PShared =
          EB.CreateLoad(EB.getPtrTy(),
                        EB.CreateConstInBoundsGEP1_32(EB.getInt8Ty(), P->getArg(1), abi::CtxShared),
                        "proven.shared");
    }
    IRBuilder<> B(Call);
    Value *Begin = B.CreatePtrToInt(B.CreateGEP(B.getInt8Ty(), PShared, B.getInt64(A.SharedOffset)),
                                    B.getInt64Ty());
    Call->setMetadata(ProvenCheckMD, MDNode::get(F.getContext(), {}));
    callOnlyOutside(Call, Begin, B.getInt64(A.SharedBytes - A.Bytes + 1));
  }

  // The entry calls it when the shape lets the proofs hold.
  Instruction *At = &*F.getEntryBlock().getFirstNonPHIOrDbgOrAlloca();
  IRBuilder<> B(At);
  Value *Holds = Shape.build(B, F.getArg(1));
  Instruction *Then = SplitBlockAndInsertIfThen(Holds, At, /*Unreachable=*/true);
  B.SetInsertPoint(Then);
  SmallVector<Value *, 4> Args;
  for (Argument &Arg : F.args())
    Args.push_back(&Arg);
  CallInst *Call = B.CreateCall(P, Args);
  B.CreateRet(Call);
  Then->eraseFromParent();
  return P;
}

unsigned FunctionElision::run() {
  if (!Analysed) {
    collect();
    analyseShared();
  }
  unsigned Given = 0;
  for (unsigned I = 0; I < Accesses.size(); ++I) {
    Access &A = Accesses[I];
    if (A.Space == abi::CheckGlobal) {
      if (A.Param < 0 || unsigned(A.Param) >= abi::CheckFastPrivateSlots)
        continue;
      // Read only: nothing writes what it reads.
      if (A.Kind == abi::CheckLoad && !UnknownGlobalWrites &&
          !WrittenParams.test(unsigned(A.Param))) {
        rewrite(A, unsigned(A.Param), /*Volatile=*/false);
        ++Given;
        continue;
      }
      // Private: no other thread reaches its element (the lowering named
      // the slot; no access here may go through another pointer).
      uint32_t Slot = siteField(A.Site, FieldFastSlot);
      if (Slot == abi::CheckFastPrivateSlots + unsigned(A.Param) && !UnknownGlobalAccesses) {
        rewrite(A, Slot, /*Volatile=*/false);
        ++Given;
      }
      continue;
    }
    if (A.Kind == abi::CheckStore || A.Array < 0 || Racy.test(I) ||
        abi::CheckFastSharedSlots + unsigned(A.Array) >= abi::CheckFastSlots)
      continue;
    unsigned Slot = abi::CheckFastSharedSlots + unsigned(A.Array);
    // The runtime opens the slot the site names; a site shared by two
    // arrays' loads (never: a site names its array) would keep its first.
    auto *Init = cast<ConstantStruct>(A.Site->getInitializer());
    uint64_t Named = siteField(A.Site, FieldFastSlot);
    if (Named && Named != Slot)
      continue;
    if (!Named) {
      SmallVector<Constant *, 16> Fields;
      for (unsigned F = 0; F < Init->getNumOperands(); ++F)
        Fields.push_back(Init->getOperand(F));
      Fields[FieldFastSlot] = ConstantInt::get(Fields[FieldFastSlot]->getType(), Slot);
      A.Site->setInitializer(ConstantStruct::get(Init->getType(), Fields));
    }
    // Volatile: the runtime opens the slot inside CheckAccess, whose
    // declared effects say it writes no memory the code can see.
    rewrite(A, Slot, /*Volatile=*/true);
    ++Given;
  }
  return Given;
}

} // namespace

unsigned gridjit::host::elideChecks(llvm::Module &IR) {
  unsigned Given = 0;
  DenseMap<const Function *, Writes> Memo;
  std::vector<Function *> Functions;
  for (Function &F : IR)
    if (!F.isDeclaration())
      Functions.push_back(&F);
  for (Function *F : Functions) {
    FunctionElision E(*F, Memo);
    Function *Proven = E.proveShared();
    Given += E.run();
    if (Proven)
      Given += FunctionElision(*Proven, Memo).run();
  }
  return Given;
}
