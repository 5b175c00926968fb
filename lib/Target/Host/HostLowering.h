//===- HostLowering.h - KIR to thread-loop LLVM IR for the host -*- C++ -*-===//
//
// Part of gridjit (internal header). The host target's replacement for the
// shared structural lowering: every kernel becomes an entry function that
// runs a range of blocks, each block as a sequence of thread loops split
// at synchronisation points (docs/HostTarget.md). Every KIR operation is
// still lowered through the target's registry.
//
// The class is implemented in four files, one per stage:
//   ThreadCode.cpp   statements and expressions of one thread (inside a
//                    thread loop, and device functions): the host's hooks
//                    of the shared StructuralLowering
//   BlockCode.cpp    block-level code: thread loops, barriers, masks,
//                    divergence checks, warp operations, inlining,
//                    grid_sync phases
//   FullBlocks.cpp   thread loops versioned on a block-level test that
//                    proves their bounds guards for the whole block
//   KernelEntry.cpp  the entry function, the frame, shared memory and the
//                    descriptor the runtime reads
//   HostLowerings.cpp the registered op lowerings that need host state
//
// HostModuleLowering itself holds only what the whole module shares; what
// lowering one function changes is in a FunctionState made fresh for each
// kernel and device function.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H
#define GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H

#include "KernelAnalysis.h"

#include "../../Lower/StructuralLowering.h"

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/IR/IRBuilder.h"

#include <array>
#include <map>
#include <memory>
#include <optional>
#include <vector>

namespace gridjit {
class LoweringTarget;
namespace host {

class HostModuleLowering;

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

/// One value per thread in the block's frame: threads × Size bytes at
/// Offset × threads, thread t's element at t × Size.
struct FrameSlot {
  uint64_t Offset = 0;
  uint64_t Size = 0;
  /// A thread's local array: kernel code can take its elements' addresses,
  /// so its accesses are not tagged as private (see tagMemoryAccesses).
  bool Array = false;
};

/// Where a named value lives while its function is lowered.
struct VarSlot {
  enum Kind : uint8_t {
    None,
    Value,   ///< an SSA value (kernel parameters)
    Address, ///< memory at V: an alloca, a shared array, a per-block copy
    Frame,   ///< one element per thread in the frame (F)
    Remat,   ///< recomputed from Init in every thread loop
  } K = None;
  llvm::Value *V = nullptr;
  FrameSlot F;
  const Expr *Init = nullptr;
};

/// The builtin values at the current insertion point.
struct ThreadEnv {
  llvm::Value *Tid[3] = {};      ///< null outside thread code
  llvm::Value *Linear = nullptr; ///< linear thread id (x fastest)
  /// The same as i64, computed so that frame addresses stay affine in the
  /// loop's induction variable (LLVM then vectorises them).
  llvm::Value *Linear64 = nullptr;
  llvm::Value *Bid[3] = {};      ///< block index
  llvm::Value *BDim[3] = {};     ///< block dimensions
  llvm::Value *GDim[3] = {};     ///< grid dimensions
  llvm::Value *EnvPtr = nullptr; ///< device functions: their environment
};

/// Where `break` / `continue` in a loop go.
struct LoopTarget {
  llvm::BasicBlock *Break = nullptr, *Continue = nullptr; ///< a loop in thread code
  int32_t BreakCode = 0, ContinueCode = 0;                ///< a block-level loop
};

/// What `return` does.
struct ReturnTarget {
  enum Kind { Real, Kernel, Inline } K = Real;
  int32_t Code = 0; ///< Inline: the mask code of the call
  FrameSlot Result; ///< Inline: where the value goes
  Type ResultTy;
};

/// A uniform variable in scope at block level: its register (an alloca of
/// the entry) and, in a cooperative kernel, where grid_sync spills it.
struct UniformVar {
  llvm::AllocaInst *A;
  uint64_t Spill; ///< offset in the block frame (grid_sync spills)
};

/// A block-level for loop being lowered (BlockCode.cpp).
struct BlockLevelFor {
  const ForStmt &S;
  llvm::Type *LTy; ///< the index type
  bool Signed;     ///< a signed index
  bool Leaves;     ///< the body may break or continue (or return, inlined)
  int32_t BreakCode = 0, ContinueCode = 0;
  llvm::BasicBlock *BodyEntry = nullptr, *Body = nullptr, *Latch = nullptr, *Exit = nullptr;
};

/// The frame slots of a for loop with per-thread bounds.
struct ForSlots {
  FrameSlot Index, End, Step;
};

/// A comparison `thread_idx.x Op Bound` (mirrored when thread_idx.x is the
/// right operand) that bounds the threads a thread loop has to visit.
struct XGuard {
  BinaryOp Op;
  const Expr *Bound;
  const BinaryExpr *Cmp; ///< the comparison as written
};

/// A comparison in a thread loop (`i < n`, `row >= h`, ...) whose value a
/// block-level test can prove for every thread of the block at once
/// (FullBlocks.cpp).
struct GuardFact {
  const BinaryExpr *Cmp;
  bool Value; ///< the value the test proves
};

/// An i32 value affine in the thread indices, `C[0] + C[1] * thread_idx.x +
/// C[2] * thread_idx.y + C[3] * thread_idx.z`, with uniform terms (null: 0)
/// evaluated at block level (FullBlocks.cpp).
struct AffineForm {
  llvm::Value *C[4] = {};
};

/// A fact's two sides and their difference L - R as i64 affine forms
/// (sign-extended coefficients; null: 0), evaluated at block level.
struct FactForms {
  GuardFact F;
  std::array<llvm::Value *, 4> L, R, D;
};

/// Everything that lowering one function (a kernel's entry or a device
/// function) changes. Each function gets a fresh one (see
/// HostModuleLowering::lowerKernel and lowerDeviceFunction), so nothing
/// carries over from one function to the next and nothing is reset by
/// hand. The kernel fields keep their defaults in a device function.
struct FunctionState {
  //===--- Any function ----------------------------------------------===//
  llvm::DenseMap<const VarDecl *, VarSlot> Vars;
  std::vector<LoopTarget> Loops;
  ReturnTarget Ret;
  ThreadEnv Env;

  //===--- A kernel: the entry, frame and shared memory ----------------===//
  const FunctionDecl *Kernel = nullptr;
  bool NeedsState = false;  ///< the kernel keeps a per-thread state word
  bool Cooperative = false; ///< calls grid_sync
  llvm::Value *CtxArg = nullptr;
  llvm::Value *NumThreads = nullptr; ///< i32 threads per block
  llvm::Value *FrameBase = nullptr, *BlockFrameBase = nullptr, *SharedBase = nullptr;
  llvm::Value *BlockId = nullptr; ///< i64 linear block index
  llvm::Value *NumThreads64 = nullptr;
  llvm::AllocaInst *EnvAlloca = nullptr;
  uint64_t FrameBytes = 0;      ///< per thread
  uint64_t BlockFrameBytes = 0; ///< per block
  /// The kernel's SharedLayout: its StaticBytes (where the dynamic array
  /// starts) and the offset of each array.
  uint64_t StaticSharedBytes = 0;
  llvm::DenseMap<const VarDecl *, uint64_t> SharedOffsets;
  FrameSlot StateSlot;
  llvm::SwitchInst *ResumeSwitch = nullptr;
  unsigned NumGridSyncs = 0;
  /// One constant per synchronisation point (siteFor).
  std::map<std::string, llvm::Constant *> Sites;
  /// Addresses of frame slots that only the generated plumbing accesses
  /// (never an array: no kernel pointer can point into them).
  llvm::DenseSet<llvm::Value *> PrivateAddrs;

  //===--- A kernel: block-level code ----------------------------------===//
  const BodyPlan *Plan = nullptr;
  bool InKernelBody = true; ///< false inside an inlined function body
  int32_t NextCode = 2;     ///< state codes: 0 active, 1 returned from the kernel
  /// Some thread may be masked (divergent condition, break, continue, a
  /// function's return) / may have returned from the kernel.
  bool Masked = false, ExitSeen = false;
  llvm::DenseMap<const Expr *, FrameSlot> Hoisted;
  /// While the full-block version of a thread loop is lowered: the
  /// comparisons its block-level test proved, with their values.
  llvm::DenseMap<const Expr *, bool> Assumed;
  std::vector<UniformVar> UniformScope;
  // Inside a thread loop:
  llvm::BasicBlock *ThreadExit = nullptr;
  llvm::Instruction *RematPoint = nullptr;
  llvm::DenseMap<const VarDecl *, llvm::Value *> RematValues;
};

class HostModuleLowering : public StructuralLowering {
public:
  HostModuleLowering(const LoweringTarget &T, const Module &KM, llvm::Module &IR);
  llvm::Error run();

  // For the registered lowerings (HostLowerings.cpp).
  llvm::Expected<llvm::Value *> threadValue(BuiltinValue V, unsigned Field, SourceLoc Loc);
  llvm::Expected<llvm::Value *> sharedArray(const VarDecl &V, SourceLoc Loc);
  llvm::Expected<llvm::Value *> dynamicShared(SourceLoc Loc);
  llvm::Expected<llvm::Constant *> barrierSite(SourceLoc Loc, BuiltinFunc What,
                                               llvm::StringRef Scope);
  llvm::Error blockBarrier(SourceLoc Loc, BuiltinFunc What);
  llvm::Error warpBarrier(SourceLoc Loc, BuiltinFunc What);
  llvm::Error gridSync(SourceLoc Loc);

private:
  friend class HostLoweringContext;

  //===--- Module --------------------------------------------------------===//
  const LoweringTarget &T;
  const Module &KM;
  llvm::Module &IR;
  /// The context StructuralLowering::Ctx refers to.
  HostLoweringContext HostCtx;
  SyncInfo Sync;
  std::map<const FunctionDecl *, std::unique_ptr<BodyPlan>> Plans;
  /// The initializer of every scalar `let` of the module.
  llvm::DenseMap<const VarDecl *, const Expr *> LetInits;
  llvm::StructType *EnvTy = nullptr;    ///< {[3 x i32] tid, bid, bdim, gdim}
  llvm::MDNode *PrivateScope = nullptr; ///< alias scope list of the frame's private slots
  /// The function being lowered; null between functions.
  FunctionState *Cur = nullptr;

  BodyPlan &planOf(const FunctionDecl &F);

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

  /// Bool is i8 in memory.
  llvm::Value *loadScalar(llvm::Value *Addr, Type Ty) override;
  void storeScalar(llvm::Value *Addr, llvm::Value *V, Type Ty) override;

  //===--- KernelEntry.cpp: the entry, frame and shared memory -----------===//
  llvm::Error lowerKernel(const FunctionDecl &K);
  /// The entry function's declaration (its signature and attributes).
  llvm::Expected<llvm::Function *> createEntry(const FunctionDecl &K);
  /// Loads the kernel's parameters from the argument array.
  void loadParameters(const FunctionDecl &K, llvm::Value *Args);
  /// Loads the launch dimensions and the block memory's bases from the
  /// context.
  void loadLaunchDimensions();
  /// Addresses the shared arrays (SharedLayout) in the entry block.
  llvm::Error placeSharedArrays(const FunctionDecl &K);
  /// The loop over blocks [first, end), with the kernel's body inside.
  llvm::Error emitBlockLoop(const FunctionDecl &K, llvm::Function &F);
  /// One block: the resumption of a cooperative kernel, the state words,
  /// the kernel's body.
  llvm::Error emitBlockBody(const FunctionDecl &K);
  /// The descriptor `__gridjit_desc_<kernel>` the runtime reads.
  void emitDescriptor(const FunctionDecl &K);
  FrameSlot allocFrame(uint64_t Size, uint64_t Align);
  uint64_t allocBlockFrame(uint64_t Size, uint64_t Align);
  llvm::Value *slotAddr(const FrameSlot &S, llvm::Value *Thread);
  /// Tells LLVM that the plumbing's frame accesses and every other memory
  /// access in \p F never alias, so that a value kept in the frame does
  /// not stop thread loops from being vectorised.
  void tagMemoryAccesses(llvm::Function &F);
  llvm::Value *ctxField(unsigned Offset);
  llvm::Constant *siteFor(SourceLoc Loc, llvm::StringRef What);
  /// Stores the error report in the context and returns EntryError.
  void emitErrorReturn(llvm::Constant *Site, llvm::Value *Arrived, llvm::Value *Expected,
                       llvm::Value *Warp);

  //===--- BlockCode.cpp: block-level code -------------------------------===//
  bool maybeInactive() const { return Cur->NeedsState && (Cur->Masked || Cur->ExitSeen); }
  llvm::Error lowerBlockLevel(const BlockStmt &Blk);
  llvm::Error lowerBlockLevelStmt(const Stmt &S);
  llvm::Error lowerBlockLevelIf(const IfStmt &S);
  llvm::Error lowerBlockLevelElse(const Stmt &S);
  llvm::Error lowerBlockLevelWhile(const WhileStmt &S);
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
  /// without synchronisation) for every active thread.
  llvm::Error flush(std::vector<const Stmt *> &Stmts);
  /// Emits a loop over the threads of the block running \p Body for each
  /// (only for active ones when the state may say otherwise).
  /// With \p XRange, only threads with thread_idx.x in [first, second)
  /// (clamped to the block) run: the caller has proved that the others
  /// would do nothing.
  llvm::Error emitThreadLoop(llvm::function_ref<llvm::Error()> Body,
                             std::optional<std::pair<llvm::Value *, llvm::Value *>> XRange = {});
  /// The thread_idx.x range [Lo, Hi) a thread loop runs, and the block
  /// after the loop that an empty range branches to (null without a range).
  struct XSpan {
    llvm::Value *Lo, *Hi;
    llvm::BasicBlock *Skip;
  };
  /// Without \p XRange, the whole row [0, block_dim.x). With it, its end
  /// clamped to the block, and a branch around the thread loop when the
  /// range is empty.
  XSpan enterXRange(std::optional<std::pair<llvm::Value *, llvm::Value *>> XRange);
  /// Forgets the thread loop's values (thread indices, remat values).
  void leaveThreadLoop();
  /// The z and y loops around a thread loop's x loop(s), and the row they
  /// are at (tz * bdim.y + ty) * bdim.x, in i32 and i64.
  struct RowNest {
    llvm::BasicBlock *ZH, *YH, *YL, *ZL, *Exit;
    llvm::PHINode *TZ, *TY;
    llvm::Value *Row, *Row64;
  };
  /// Opens the z and y loops from the current block: makes their header
  /// blocks, then the caller's inner blocks (\p MakeInnerBlocks, so that
  /// blocks keep the order of the code), then the latches and the exit;
  /// leaves the builder at the end of the y header, where the x loop goes.
  RowNest openRowNest(llvm::function_ref<void()> MakeInnerBlocks);
  /// Emits the y and z latches of \p N (the x loop branches to N.YL when a
  /// row is done) and the exit, joining \p Skip (enterXRange's block) when
  /// given; leaves the builder after the loops.
  void closeRowNest(const RowNest &N, llvm::BasicBlock *Skip);
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
  llvm::Expected<std::optional<std::pair<llvm::Value *, llvm::Value *>>>
  guardRange(const std::vector<const Stmt *> &Stmts);
  bool isThreadIdxX(const Expr &E) const;

  //===--- FullBlocks.cpp: thread loops without their bounds guards --------===//
  /// Emits the thread loop of flush(): when a comparison of \p Stmts' `if`
  /// conditions is affine in the thread indices (and \p Skip is not it),
  /// in two versions behind a block-level test that proves the comparisons
  /// for every thread of the block: a full block runs a copy in which they
  /// are constants, a block at the edge of the data splits each row
  /// (emitSplitThreadLoop).
  llvm::Error emitGuardedThreadLoop(const std::vector<const Stmt *> &Stmts,
                                    llvm::function_ref<llvm::Error()> Body,
                                    std::optional<std::pair<llvm::Value *, llvm::Value *>> XRange,
                                    const BinaryExpr *Skip);
  /// The comparisons of \p Stmts' `if` conditions (and of the `if`s nested
  /// in their branches) that the block-level test can prove, each with the
  /// value that lets the loop skip its edge handling.
  std::vector<GuardFact> findGuardFacts(const std::vector<const Stmt *> &Stmts,
                                        const BinaryExpr *Skip);
  /// Evaluates the affine forms of \p Facts at block level.
  llvm::Expected<std::vector<FactForms>> emitFactForms(llvm::ArrayRef<GuardFact> Facts);
  /// The block-level test: true when every fact holds for every thread.
  llvm::Value *emitFactsTest(llvm::ArrayRef<FactForms> Forms);
  /// In a row (\p TY, \p TZ) of a block at the edge: the i32 range [lo,
  /// hi) within [\p XLo, \p XHi) of thread_idx.x where every fact holds.
  std::pair<llvm::Value *, llvm::Value *> emitRowRange(llvm::ArrayRef<FactForms> Forms,
                                                       llvm::Value *TY, llvm::Value *TZ,
                                                       llvm::Value *XLo, llvm::Value *XHi);
  /// The thread loop of a block at the edge: each row runs the threads
  /// before emitRowRange's range with \p Guarded, the range with
  /// \p Unguarded (the facts assumed), the threads after it with
  /// \p Guarded again, in thread order.
  llvm::Error emitSplitThreadLoop(llvm::function_ref<llvm::Error()> Guarded,
                                  llvm::function_ref<llvm::Error()> Unguarded,
                                  std::optional<std::pair<llvm::Value *, llvm::Value *>> XRange,
                                  llvm::ArrayRef<FactForms> Forms);
  /// One loop over thread_idx.x in [\p Lo, \p Hi) of the row \p Row
  /// (nothing when empty), running \p Body; \p Vectorize false marks it
  /// not to be vectorised.
  llvm::Error emitXLoop(llvm::Value *Lo, llvm::Value *Hi, llvm::Value *Row, llvm::Value *Row64,
                        llvm::Value *TY, llvm::Value *TZ, llvm::function_ref<llvm::Error()> Body,
                        bool Vectorize);
  /// \p E's affine form, evaluated at block level (E passed
  /// findGuardFacts' checks).
  llvm::Expected<AffineForm> emitAffine(const Expr &E);
  void collectLetInits(const Stmt &S);
  /// Evaluates the synchronising parts of \p E at block level.
  llvm::Error hoist(const Expr &E);
  /// `a && b` / `a || b` whose b synchronises.
  llvm::Error hoistShortCircuit(const BinaryExpr &E);
  llvm::Error hoistWarpOp(const CallExpr &E);
  llvm::Expected<FrameSlot> inlineCall(const CallExpr &E);
  llvm::Value *stateAddr(llvm::Value *Thread);
  /// Sets the current thread's state to \p Code and ends its iteration.
  void escape(int32_t Code);
  llvm::Value *countActive();
  /// Gives every thread of the block the state \p NewState computes from its
  /// current one.
  void rewriteStates(llvm::function_ref<llvm::Value *(llvm::Value *)> NewState,
                     llvm::StringRef Name);
  /// Threads in state \p From get \p To.
  void remapState(int32_t From, int32_t To);
  /// Active threads get \p ToMasked, threads in \p From become active.
  void swapState(int32_t From, int32_t ToMasked);
  void emitSyncCheck(llvm::Value *Arrived, llvm::Value *Expected, llvm::Constant *Site,
                     llvm::Value *Warp);
  llvm::AllocaInst *uniformAlloca(llvm::Type *Ty, const llvm::Twine &Name);
};

/// Registers every lowering of the host target (the common ones and the
/// host's own, HostLowerings.cpp) except those in \p Omit.
llvm::Error registerHostLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit);

} // namespace host
} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_HOST_HOSTLOWERING_H
