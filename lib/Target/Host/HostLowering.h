//===- HostLowering.h - KIR to thread-loop LLVM IR for the host -*- C++ -*-===//
//
// Part of gridjit (internal header). The host target's replacement for the
// shared structural lowering: every kernel becomes an entry function that
// runs a range of blocks, each block as a sequence of thread loops split
// at synchronisation points (docs/HostTarget.md). Every KIR operation is
// still lowered through the target's registry.
//
// HostModuleLowering drives the lowering of a module and lowers
// statements, as one thread's code (the hooks of the shared
// StructuralLowering) and at block level; its parts, each a class of its
// own, do the rest:
//
//   file                class                what
//   KernelAnalysis.cpp  SyncInfo, BodyPlan   which statements synchronise;
//                                            uniform values; where each
//                                            block-level variable lives
//   ThreadCode.cpp      HostModuleLowering   the module; one thread's
//                                            statements and expressions
//                                            (in thread loops, and device
//                                            functions)
//   BlockCode.cpp       HostModuleLowering   block-level statements:
//                                            control flow, masks and the
//                                            per-thread state word
//   ThreadLoops.cpp     ThreadLoopEmitter    thread loops: the row nest
//                                            and the one x-loop emitter
//   FullBlocks.cpp      FullBlockVersioner   thread loops versioned on a
//                                            block-level test that proves
//                                            their bounds guards
//   Hoisting.cpp        SyncHoister          warp operations, calls of
//                                            synchronising functions
//                                            (inlined) and short circuits,
//                                            evaluated at block level
//   SyncPoints.cpp      SyncPointEmitter     barriers, warp checks,
//                                            grid_sync phases, and the
//                                            SyncHooks at every point
//   KernelEntry.cpp     KernelEntryEmitter   the entry function, the block
//                                            loop, shared memory, the frame
//                                            metadata, the descriptor and
//                                            the error reports
//   ThreadNests.cpp     (functions)          after lowering, at -O1 and
//                                            above: the thread-loop nests
//                                            of a function with more than
//                                            8 moved into functions of
//                                            their own
//   HostLowerings.cpp   (functions)          the registered op lowerings
//                                            that need host state
//   CheckLowering.cpp   (functions)          checked code's lowerings
//                                            (HostTargetOptions::Check):
//                                            the runtime's checks around
//                                            accesses and undefined
//                                            operations
//   HostTarget.cpp      HostTarget           the target: registry,
//                                            pipeline, code generation
//
// What lowering one function changes is in a FunctionState made fresh for
// each kernel and device function (LoweringState.h); HostModuleLowering
// itself holds only what the whole module shares.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H
#define GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H

#include "FullBlocks.h"
#include "Hoisting.h"
#include "KernelAnalysis.h"
#include "KernelEntry.h"
#include "LoweringState.h"
#include "SyncPoints.h"
#include "ThreadLoops.h"

#include "../../Lower/StructuralLowering.h"

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/IR/IRBuilder.h"

#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace gridjit {
class LoweringTarget;
namespace host {

/// The LoweringContext of the host target: the registered host lowerings
/// reach the lowering's state (thread indices, shared memory, barriers)
/// through it.
class HostLoweringContext : public LoweringContext {
public:
  HostLoweringContext(const LoweringTarget &T, const Module &KM, llvm::Module &IR,
                      llvm::IRBuilder<> &B, HostModuleLowering &L)
      : LoweringContext(T, KM, IR, B), L(L) {}
  HostModuleLowering &L;
};

/// Emits `for (i = 0; i < N; ++i) Body(i)` with N >= 1 at the builder's
/// position (blocks \p Name and \p Name.done) and returns the value Body's
/// accumulator has after the last iteration (null when \p Init is null).
/// The loop is a nest for ThreadNests.h (it runs over the block's threads).
llvm::Value *
emitCountedLoop(llvm::IRBuilder<> &B, llvm::Function *F, llvm::Value *N, llvm::Value *Init,
                llvm::function_ref<llvm::Value *(llvm::Value *I, llvm::Value *Acc)> Body,
                const llvm::Twine &Name);

class HostModuleLowering : public StructuralLowering {
public:
  /// Lowers verified \p KM into \p IR with \p T's registry; \p Hooks (null
  /// for none) are called at every synchronisation point of every kernel.
  /// \p IterationMajor: HostTargetOptions::IterationMajor. \p CheckArch:
  /// 0 for unchecked code, else HostTargetOptions::CheckArch of checked
  /// code (the registry of \p T then has the checked lowerings).
  HostModuleLowering(const LoweringTarget &T, const Module &KM, llvm::Module &IR,
                     SyncHooks *Hooks = nullptr, bool IterationMajor = true,
                     unsigned CheckArch = 0);
  llvm::Error run();

  // For the registered lowerings (HostLowerings.cpp).
  llvm::Expected<llvm::Value *> threadValue(BuiltinValue V, unsigned Field, SourceLoc Loc);
  llvm::Expected<llvm::Value *> sharedArray(const VarDecl &V, SourceLoc Loc);
  llvm::Expected<llvm::Value *> dynamicShared(SourceLoc Loc);
  /// `print(...)` (PrintLowering.cpp).
  llvm::Expected<llvm::Value *> lowerPrint(const OpArgs &A);
  SyncPointEmitter &syncPoints() { return SyncPoints; }

  //===--- CheckLowering.cpp: checked code (HostTargetOptions::Check) ----===//
  bool checked() const { return CheckArch != 0; }
  /// The CheckSite constant (hostabi::CheckSite) of an operation at \p Loc:
  /// \p What, \p Kind and \p Space as the ABI names them, \p Bytes and
  /// \p ElemBytes; the memory named from \p Mem (its parameter, name and
  /// place in shared memory).
  llvm::Constant *checkSite(SourceLoc Loc, llvm::StringRef What, uint32_t Kind, uint32_t Space,
                            uint64_t Bytes, uint64_t ElemBytes, const MemoryRef &Mem);
  /// A Load, Store or atomic of \p A (\p Kind, \p What): the address to
  /// access instead of its operand 0, which the runtime checked first.
  /// Local and constant memory are not checked: their address as it is.
  /// \p Stored: for a store, the value stored.
  llvm::Value *checkAccess(const OpArgs &A, uint32_t Kind, llvm::StringRef What,
                           llvm::Value *Stored = nullptr);
  /// In checked code, for an access of a shared scalar's storage \p Addr
  /// (FunctionState::SharedScalars) by loadScalar (\p Stored null) or
  /// storeScalar: checkAccess's address. Otherwise \p Addr.
  llvm::Value *checkSharedScalar(llvm::Value *Addr, Type Ty, llvm::Value *Stored = nullptr);
  /// Calls the runtime's CheckReport with \p Site, \p A and \p B (i64)
  /// where \p Bad (i1) holds; continues after it either way.
  void checkReport(llvm::Value *Bad, llvm::Constant *Site, llvm::Value *A, llvm::Value *B);
  /// At block level of a kernel: tells the runtime that the block passed a
  /// synchronisation point (hostabi::CheckSyncKind) of every warp.
  void checkSync(uint32_t Kind);

private:
  friend class HostLoweringPart;
  friend class ThreadLoopEmitter;
  friend class FullBlockVersioner;
  friend class SyncHoister;
  friend class SyncPointEmitter;
  friend class KernelEntryEmitter;

  //===--- Module --------------------------------------------------------===//
  const LoweringTarget &T;
  const Module &KM;
  llvm::Module &IR;
  /// The context StructuralLowering::Ctx refers to.
  HostLoweringContext HostCtx;
  SyncInfo Sync;
  bool IterationMajor;
  /// HostTargetOptions::CheckArch for checked code, 0 for unchecked.
  unsigned CheckArch;
  std::map<const FunctionDecl *, std::unique_ptr<BodyPlan>> Plans;
  /// {[3 x i32] tid, bid, bdim, gdim, ptr shared, ptr shared offsets, ptr
  /// context}: then the block's shared memory, the kernel's table of
  /// offsets of device functions' shared declarations (FnSharedSlots), and
  /// the entry's BlockContext (print finds the runtime there).
  llvm::StructType *EnvTy = nullptr;
  /// Each `shared` declaration in a device function: its index in every
  /// kernel's table of shared offsets (KernelEntryEmitter::placeSharedArrays).
  llvm::DenseMap<const VarDecl *, unsigned> FnSharedSlots;
  /// The function being lowered; null between functions.
  FunctionState *Cur = nullptr;

  //===--- The parts -----------------------------------------------------===//
  ThreadLoopEmitter Loops;
  FullBlockVersioner FullBlocks;
  SyncHoister Hoister;
  SyncPointEmitter SyncPoints;
  KernelEntryEmitter Entry;

  BodyPlan &planOf(const FunctionDecl &F);
  /// The runtime's BlockContext: the kernel's argument, or a device
  /// function's environment's (print and checked code call the runtime).
  llvm::Value *runtimeContext();
  /// The block's linear index (x fastest), i64.
  llvm::Value *linearBlock();

  //===--- ThreadCode.cpp: one thread's statements and expressions -------===//
  llvm::Error lowerDeviceFunction(const FunctionDecl &F);
  llvm::Error lowerDecl(const DeclStmt &S) override { return lowerDecl(S, /*BlockLevel=*/false); }
  llvm::Error lowerDecl(const DeclStmt &S, bool BlockLevel);
  llvm::Error lowerReturn(const ReturnStmt &S) override;
  llvm::Error lowerBreakContinue(bool IsBreak, SourceLoc Loc) override;
  void enterLoop(llvm::BasicBlock *Break, llvm::BasicBlock *Continue) override {
    Cur->Loops.push_back({Break, Continue, 0, 0});
  }
  void exitLoop() override { Cur->Loops.pop_back(); }
  void bindAddress(const VarDecl &V, llvm::Value *Addr) override {
    Cur->Vars[&V] = {VarSlot::Address, Addr, {}, nullptr};
  }

  /// Reads a synchronising sub-expression's value from the frame.
  llvm::Expected<llvm::Value *> lowerExpr(const Expr &E) override;
  /// Rejects synchronising calls (they run at block level).
  llvm::Expected<llvm::Value *> lowerCall(const CallExpr &E) override;
  llvm::Expected<llvm::Value *> loadVariable(const NameExpr &E) override;
  llvm::Expected<llvm::Value *> addressOfVariable(const NameExpr &N) override;
  llvm::Expected<llvm::Value *> lowerFunctionCall(const CallExpr &E, OpArgs &A,
                                                  llvm::ArrayRef<llvm::Value *> Args) override;
  /// The recomputed value of a Remat variable in the current thread loop.
  llvm::Expected<llvm::Value *> rematValue(const VarDecl &V);
  /// In a full-block copy: an element index its test proved to fit in i32
  /// in every thread, from its exact i64 affine form \p F
  /// (FunctionState::WideIndices); returns its i32 value and records the
  /// i64 one in FunctionState::WideValues.
  llvm::Value *lowerWideIndex(const std::array<llvm::Value *, 4> &F);

  /// Bool is i8 in memory.
  llvm::Value *loadScalar(llvm::Value *Addr, Type Ty) override;
  void storeScalar(llvm::Value *Addr, llvm::Value *V, Type Ty) override;
  /// Thread \p Thread's element of frame slot \p S.
  llvm::Value *slotAddr(const FrameSlot &S, llvm::Value *Thread);

  //===--- BlockCode.cpp: block-level code -------------------------------===//
  llvm::Error lowerBlockLevel(const BlockStmt &Blk);
  llvm::Error lowerBlockLevelStmt(const Stmt &S);
  llvm::Error lowerBlockLevelIf(const IfStmt &S);
  llvm::Error lowerBlockLevelElse(const Stmt &S);
  llvm::Error lowerBlockLevelWhile(const WhileStmt &S);
  llvm::Error lowerBlockLevelSimple(const Stmt &S);
  llvm::Error hoistOperands(const Stmt &S);
  llvm::Error lowerBlockLevelFor(const ForStmt &S);
  /// A for loop whose index is uniform: one index per block.
  llvm::Error lowerUniformFor(const BlockLevelFor &L);
  /// A for loop with per-thread bounds: one index per thread in the frame.
  llvm::Error lowerDivergentFor(const BlockLevelFor &L);
  /// The thread loop that advances a per-thread for loop's indices.
  llvm::Error stepDivergentFor(const BlockLevelFor &L, const ForSlots &Slots);
  /// Begin, end and step of \p L's loop (a missing one is 1).
  llvm::Expected<std::array<llvm::Value *, 3>> evalForBounds(const BlockLevelFor &L);
  /// The body of a block-level loop, with \p BreakCode and \p ContinueCode
  /// as the targets of `break` and `continue` in its thread loops.
  llvm::Error lowerLoopBody(const BlockStmt &Body, int32_t BreakCode, int32_t ContinueCode);
  /// \p L's body (lowerLoopBody) and the start of its latch.
  llvm::Error lowerForBody(const BlockLevelFor &L);
  llvm::Error lowerUniformDecl(const DeclStmt &S);
  bool isUniformDecl(const Stmt &S) const;
  bool isUniformAssign(const Stmt &S) const;
  /// One thread loop running \p Stmts (consecutive block-level statements
  /// without synchronisation) for every active thread, then, in the same
  /// loop, \p Tail (the end of an iteration-major loop's iteration).
  llvm::Error flush(std::vector<const Stmt *> &Stmts, llvm::function_ref<llvm::Error()> Tail = {});
  /// The variable of an iteration-major loop that every thread steps by
  /// the same amount: with its initial value \p Init (pure) and the
  /// uniform \p Step, it is Init + k * Step in iteration k, kept as a
  /// per-block offset instead of a per-thread copy. Null for none.
  const VarDecl *steppedVariable(const WhileStmt &S, const Expr *&Init, const Expr *&Step);
  const VarDecl *steppedVariable(const ForStmt &S);
  /// Gives \p V the storage of a stepped variable from \p Init (offset 0);
  /// returns the offset's alloca.
  llvm::AllocaInst *bindStepped(const VarDecl &V, const Expr &Init);
  /// At block level, after an iteration: offset \p Off += \p Step (1 when
  /// null).
  llvm::Error advanceStepped(llvm::AllocaInst *Off, const Expr *Step);
  /// True when an iteration-major loop with body \p Body runs one thread
  /// loop per iteration (BlockCode.cpp).
  bool fusesIterations(const BlockStmt &Body) const;
  /// One iteration of an iteration-major loop: \p Body's statements, then
  /// \p Update (if any), then \p Tail, in one thread loop whose `break`
  /// gives state \p BreakCode; uniform declarations run before it, at block
  /// level.
  llvm::Error lowerIterationBody(const BlockStmt &Body, const Stmt *Update, int32_t BreakCode,
                                 llvm::function_ref<llvm::Error()> Tail);
  /// An iteration-major `while` (SyncInfo::markIterationMajor) whose body
  /// has no `continue`: one thread loop per iteration running the body,
  /// the update of a general `for` and the next condition.
  llvm::Error lowerIterationMajorWhile(const WhileStmt &S);
  /// The same for a `for` with per-thread bounds (\p Slots set up, every
  /// thread whose range is empty masked with L.BreakCode).
  llvm::Error lowerIterationMajorFor(const BlockLevelFor &L, const ForSlots &Slots);
  /// Loops over iteration-major iterations while a thread is active: the
  /// thread loop \p Iteration runs the body of one, emitted twice: for
  /// when every thread of the block is active (without the state check),
  /// and for when some are; then \p Advance (if any) at block level. When
  /// no thread is left, those that left by a break or at the loop's end
  /// (\p BreakCode) are active again.
  llvm::Error iterateWhileActive(llvm::StringRef Name, int32_t BreakCode,
                                 llvm::function_ref<llvm::Error()> Iteration,
                                 llvm::function_ref<llvm::Error()> Advance = {});
  /// In a thread loop: a per-thread for loop's step, or its end (the
  /// thread gets state L.BreakCode).
  /// With \p Stepped, the index is the stepped variable's (read, not
  /// stored).
  llvm::Error stepOrStop(const BlockLevelFor &L, const ForSlots &Slots, bool Stepped = false);
  /// A thread loop in which every active thread evaluates \p Cond and, where
  /// its value is \p MaskWhen, gets state \p Code (in a block named
  /// \p MaskName): the first half of a masked region.
  llvm::Error maskThreads(llvm::function_ref<llvm::Expected<llvm::Value *>()> Cond, bool MaskWhen,
                          int32_t Code, llvm::StringRef MaskName);
  /// Runs \p Body at block level unless no thread is active (blocks
  /// \p Name and \p Name.done): the second half of a masked region.
  llvm::Error runIfAnyActive(llvm::StringRef Name, llvm::function_ref<llvm::Error()> Body);
  /// For a thread loop running only `if C { ... }` where C (or the left
  /// operand of C's `&&`) compares thread_idx.x with a uniform i32 value
  /// (`t < n`, `t == 0`, ...): that comparison. Analysis only: emits
  /// nothing.
  std::optional<XGuard> findXGuard(const std::vector<const Stmt *> &Stmts);
  /// The range of thread_idx.x for which findXGuard's comparison can hold,
  /// evaluated at block level; none when there is no such comparison (and
  /// then nothing is emitted).
  llvm::Expected<XRange> guardRange(const std::vector<const Stmt *> &Stmts);
  bool isThreadIdxX(const Expr &E) const;
  llvm::AllocaInst *uniformAlloca(llvm::Type *Ty, const llvm::Twine &Name);

  // The per-thread state word: 0 active, 1 returned from the kernel, any
  // other code masked (by a divergent condition, a loop's break or
  // continue, an inlined function's return).
  llvm::Value *stateAddr(llvm::Value *Thread);
  /// Sets the current thread's state to \p Code and ends its iteration.
  void escape(int32_t Code);
  /// The number of active threads of the block (a loop at block level).
  llvm::Value *countActive();
  /// Gives every thread of the block the state \p NewState computes from its
  /// current one.
  void rewriteStates(llvm::function_ref<llvm::Value *(llvm::Value *)> NewState,
                     llvm::StringRef Name);
  /// Threads in state \p From get \p To.
  void remapState(int32_t From, int32_t To);
  /// Active threads get \p ToMasked, threads in \p From become active.
  void swapState(int32_t From, int32_t ToMasked);
};

/// Registers every lowering of the host target (the common ones and the
/// host's own, HostLowerings.cpp) except those in \p Omit; with \p Check,
/// checked code's lowerings (CheckLowering.cpp) instead of those they
/// replace.
llvm::Error registerHostLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit, bool Check = false);
/// The ops checked code lowers differently (registerCheckedLowerings).
std::vector<Op> checkedOps();
/// Registers checked code's lowerings of checkedOps().
llvm::Error registerCheckedLowerings(LoweringRegistry &R);

/// The metadata on the branch from one block's end to the next block's
/// start in a kernel's entry (checked code only).
inline constexpr const char *NextBlockMD = "gridjit.next.block";
/// The metadata on a checked access of a static shared array: the form of
/// its index (SharedForms.h: formMetadata).
inline constexpr const char *SharedFormMD = "gridjit.shared.form";
/// The name of a kernel's proven entry (CheckElision.cpp): its entry with
/// the accesses of the proven shared arrays unchecked, which the entry
/// calls when the block's shape lets the proofs hold.
inline constexpr const char *ProvenPrefix = "__gridjit_proven_";
/// Checked code, after lowering: gives each load that cannot take part in
/// a race or read uninitialised memory the inline fast path of
/// hostabi::CheckFastTable (CheckElision.cpp). Returns the loads given it.
unsigned elideChecks(llvm::Module &IR);

} // namespace host
} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H
