//===- LoweringState.h - What the parts of the host lowering share -*- C++ -*-===//
//
// Part of gridjit (internal header). The state of one function while the
// host target lowers it (FunctionState: where each variable lives, the
// thread loop being emitted, the kernel's frame and shared memory), the
// small records its parts pass each other, and HostLoweringPart, the base
// of each part (HostLowering.h lists them).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_LOWERINGSTATE_H
#define GRIDJIT_LIB_TARGET_HOST_LOWERINGSTATE_H

#include "KernelAnalysis.h"
#include "SharedForms.h"

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SmallBitVector.h"
#include "llvm/IR/IRBuilder.h"

#include <array>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gridjit::host {

class HostModuleLowering;

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
    Stepped, ///< Init recomputed in every thread loop, plus the uniform
             ///< offset at V (an iteration-major loop's variable)
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

/// The thread_idx.x range [first, second) a thread loop may be limited to
/// (its end is clamped to the block); none: the whole row.
using XRange = std::optional<std::pair<llvm::Value *, llvm::Value *>>;

/// Everything that lowering one function (a kernel's entry or a device
/// function) changes. Each function gets a fresh one (see
/// KernelEntryEmitter::lowerKernel and HostModuleLowering::
/// lowerDeviceFunction), so nothing carries over from one function to the
/// next and nothing is reset by hand. The kernel fields keep their defaults
/// in a device function.
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
  /// Checked code: the kernel's private parameters (PrivateParams.h),
  /// found at its first access site.
  std::optional<llvm::SmallBitVector> PrivateParams;
  /// Checked code: the forms of its shared arrays' indices (SharedForms.h),
  /// found at its first access of shared memory.
  std::optional<SharedForms> SharedIndexForms;
  /// The address of each shared scalar (a kernel's or a device function's
  /// own), which loads and stores of its name reach: checked code checks
  /// them (HostModuleLowering::checkSharedScalar) at SharedScalarLoc: the
  /// name being read (loadVariable), or else the last assignment target
  /// (addressOfVariable).
  llvm::DenseMap<llvm::Value *, const VarDecl *> SharedScalars;
  SourceLoc SharedScalarLoc;
  FrameSlot StateSlot;
  llvm::SwitchInst *ResumeSwitch = nullptr;
  unsigned NumGridSyncs = 0;
  /// One constant per synchronisation point (KernelEntryEmitter::siteFor).
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
  /// The thread loops emitted now run rarely or once per block (an
  /// iteration-major loop's first condition, and its iterations with
  /// threads already out of the loop): one plain version, not vectorised
  /// or unrolled, which saves compile time where it cannot pay back.
  bool Cold = false;
  llvm::DenseMap<const Expr *, FrameSlot> Hoisted;
  /// While the full-block version of a thread loop is lowered: the
  /// comparisons its block-level test proved, with their values.
  llvm::DenseMap<const Expr *, bool> Assumed;
  /// ... and the element indices it proved to fit in i32 in every thread,
  /// each with its exact value as an i64 affine form (c0 + cx * tx + cy *
  /// ty + cz * tz, coefficients computed at block level; null: 0); the
  /// `trunc` that gave each use its i32 value, with that i64 value.
  llvm::DenseMap<const Expr *, std::array<llvm::Value *, 4>> WideIndices;
  llvm::DenseMap<llvm::Value *, llvm::Value *> WideValues;
  std::vector<UniformVar> UniformScope;
  // Inside a thread loop:
  llvm::BasicBlock *ThreadExit = nullptr;
  llvm::Instruction *RematPoint = nullptr;
  llvm::DenseMap<const VarDecl *, llvm::Value *> RematValues;

  /// A slot of \p Size bytes per thread in the frame, aligned to \p Align.
  FrameSlot allocFrame(uint64_t Size, uint64_t Align);
  /// \p Size bytes in the block frame, aligned to \p Align: the offset.
  uint64_t allocBlockFrame(uint64_t Size, uint64_t Align);
  /// Some thread of the block may be inactive here (masked, or returned):
  /// thread loops test the state word, and synchronisation points count.
  bool maybeInactive() const { return NeedsState && (Masked || ExitSeen); }
};

/// The base of each part of the host lowering: the lowering it belongs to,
/// the builder and context they all share, and the state of the function
/// being lowered (null between functions). A part reaches the others
/// through L.
class HostLoweringPart {
protected:
  explicit HostLoweringPart(HostModuleLowering &L);

  HostModuleLowering &L;
  llvm::IRBuilder<> &B;
  LoweringContext &Ctx;
  FunctionState *&Cur;

  llvm::BasicBlock *newBlock(const llvm::Twine &Name);
  bool terminated() const { return B.GetInsertBlock()->getTerminator() != nullptr; }
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_LOWERINGSTATE_H
