//===- ThreadNests.cpp - Thread-loop nests as functions of their own ------===//
//
// Part of gridjit. See ThreadNests.h. Runs on the lowered module, before
// LLVM's pipeline:
//
//   1. the entry block's promotable allocas (a thread's scalar locals)
//      become SSA values, so that no nest reads or writes the caller's
//      stack for them;
//   2. an alloca (a local array) that only one nest uses moves into a new
//      preheader of that nest, which the nest's function then owns;
//   3. each nest, with its preheader, becomes `F.threadsN` (LLVM's
//      CodeExtractor: the values it reads are its arguments; a nest that
//      leaves on more than one edge returns which), marked noinline so
//      the inliner does not undo it.
//
//===----------------------------------------------------------------------===//

#include "ThreadNests.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SmallPtrSet.h"
#include "llvm/Analysis/LoopInfo.h"
#include "llvm/IR/Dominators.h"
#include "llvm/IR/Instructions.h"
#include "llvm/IR/Module.h"
#include "llvm/Transforms/Utils/CodeExtractor.h"
#include "llvm/Transforms/Utils/LoopUtils.h"
#include "llvm/Transforms/Utils/PromoteMemToReg.h"

using namespace gridjit;
using namespace gridjit::host;

static constexpr llvm::StringLiteral NestMark = "gridjit.thread.nest";

void gridjit::host::markThreadNest(llvm::BranchInst &Latch) {
  Latch.setMetadata(NestMark, llvm::MDNode::get(Latch.getContext(), {}));
}

/// Step 1: the promotable allocas of \p F's entry block become values.
static void promoteLocals(llvm::Function &F, llvm::DominatorTree &DT) {
  std::vector<llvm::AllocaInst *> Promote;
  for (llvm::Instruction &I : F.getEntryBlock())
    if (auto *AI = llvm::dyn_cast<llvm::AllocaInst>(&I); AI && llvm::isAllocaPromotable(AI))
      Promote.push_back(AI);
  if (!Promote.empty())
    llvm::PromoteMemToReg(Promote, DT);
}

/// The nest (1-based index into the nests whose blocks \p NestOf maps)
/// that every use of \p AI, through any chain of users, is in; 0 if none
/// or more than one.
static unsigned onlyNestUsing(llvm::AllocaInst &AI,
                              const llvm::DenseMap<llvm::BasicBlock *, unsigned> &NestOf) {
  unsigned Nest = 0;
  llvm::SmallVector<llvm::Instruction *, 8> Work = {&AI};
  while (!Work.empty()) {
    llvm::Instruction *V = Work.pop_back_val();
    for (llvm::User *U : V->users()) {
      auto *UI = llvm::cast<llvm::Instruction>(U);
      unsigned N = NestOf.lookup(UI->getParent());
      if (!N || (Nest && N != Nest))
        return 0;
      Nest = N;
      if (UI->getType()->isPointerTy()) // an address in it, used in turn
        Work.push_back(UI);
    }
  }
  return Nest;
}

/// The three steps for the nests of \p F whose outermost latches are
/// \p Latches (a marked loop inside another is part of that one's nest),
/// if there are more than MaxInlineThreadNests.
static void outlineNests(llvm::Function &F, llvm::ArrayRef<llvm::Instruction *> Latches) {
  std::vector<std::vector<llvm::BasicBlock *>> Regions;
  {
    llvm::DominatorTree DT(F);
    llvm::LoopInfo LI(DT);
    std::vector<llvm::Loop *> Nests;
    llvm::DenseMap<llvm::BasicBlock *, unsigned> NestOf;
    llvm::SmallPtrSet<llvm::Loop *, 16> Marked;
    for (llvm::Instruction *Latch : Latches)
      Marked.insert(LI.getLoopFor(Latch->getParent()));
    for (llvm::Instruction *Latch : Latches) {
      llvm::Loop *L = LI.getLoopFor(Latch->getParent());
      bool Inner = false; // the lanes of a warp check, in its loop over warps
      for (llvm::Loop *P = L->getParentLoop(); P && !Inner; P = P->getParentLoop())
        Inner = Marked.contains(P);
      if (Inner || NestOf.count(L->getHeader()))
        continue;
      Nests.push_back(L);
      for (llvm::BasicBlock *BB : L->getBlocks())
        NestOf[BB] = Nests.size();
    }
    if (Nests.size() <= MaxInlineThreadNests)
      return;
    promoteLocals(F, DT); // changes no block: DT and LI stay valid
    std::vector<std::vector<llvm::AllocaInst *>> Owned(Nests.size());
    for (llvm::Instruction &I : F.getEntryBlock())
      if (auto *AI = llvm::dyn_cast<llvm::AllocaInst>(&I); AI && AI->isStaticAlloca())
        if (unsigned N = onlyNestUsing(*AI, NestOf))
          Owned[N - 1].push_back(AI);
    for (size_t I = 0; I < Nests.size(); ++I) {
      llvm::BasicBlock *Pre = llvm::InsertPreheaderForLoop(Nests[I], &DT, &LI, nullptr, false);
      for (llvm::AllocaInst *AI : Owned[I])
        AI->moveBefore(Pre->getFirstNonPHI());
      std::vector<llvm::BasicBlock *> Blocks = {Pre};
      Blocks.insert(Blocks.end(), Nests[I]->getBlocks().begin(), Nests[I]->getBlocks().end());
      Regions.push_back(std::move(Blocks));
    }
  }
  // One analysis cache for all of them (extracting a region keeps it
  // valid), and no dominator tree (each region is a loop and its
  // preheader: one entry by construction): rebuilding either per nest
  // made the outlining itself quadratic in the number of nests.
  llvm::CodeExtractorAnalysisCache CEAC(F);
  unsigned Next = 0;
  for (const std::vector<llvm::BasicBlock *> &Blocks : Regions) {
    llvm::CodeExtractor CE(Blocks, /*DT=*/nullptr, /*AggregateArgs=*/false, nullptr, nullptr,
                           nullptr, /*AllowVarArgs=*/false, /*AllowAlloca=*/true, nullptr,
                           OutlinedNestSuffix.drop_front().str() + std::to_string(Next++));
    if (!CE.isEligible())
      continue; // stays where it is: slower to compile, the same result
    if (llvm::Function *Nest = CE.extractCodeRegion(CEAC)) {
      Nest->addFnAttr(llvm::Attribute::NoInline);
      Nest->addFnAttr(llvm::Attribute::NoUnwind);
    }
  }
}

void gridjit::host::outlineThreadNests(llvm::Module &IR, bool Outline) {
  unsigned Kind = IR.getContext().getMDKindID(NestMark);
  std::vector<std::pair<llvm::Function *, std::vector<llvm::Instruction *>>> Work;
  for (llvm::Function &F : IR) {
    std::vector<llvm::Instruction *> Latches;
    for (llvm::BasicBlock &BB : F)
      if (llvm::Instruction *T = BB.getTerminator(); T && T->getMetadata(Kind)) {
        T->setMetadata(Kind, nullptr);
        Latches.push_back(T);
      }
    if (Outline && Latches.size() > MaxInlineThreadNests)
      Work.emplace_back(&F, std::move(Latches));
  }
  for (auto &[F, Latches] : Work)
    outlineNests(*F, Latches);
}
