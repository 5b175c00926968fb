//===- HostABI.h - Contract between host kernel code and the runtime -*- C++ -*-===//
//
// Part of gridjit. The host target (lib/Target/Host) compiles each kernel
// into one entry function that runs a range of blocks, and a descriptor
// constant; the host runtime (lib/Runtime) calls the one and reads the
// other. Both sides include this header, so the layout below is their only
// agreement. Bump ABIVersion whenever it changes. It belongs to the target
// layer, which the runtime sits on; it has no LLVM types.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TARGET_HOSTABI_H
#define GRIDJIT_TARGET_HOSTABI_H

#include "gridjit/Support/Limits.h"

#include <cstddef>
#include <cstdint>

namespace gridjit::hostabi {

// Version 3 grew, for checked code only, CheckSite::FastSlot (padding
// before) and the CheckFastTable that CheckState points to. Checked code of
// before reads neither, so the runtime runs it as it was; the checked
// target's fingerprint changed, so the cache never gives a runtime checked
// code it predates; unchecked code did not change at all.
constexpr uint64_t ABIVersion = 3;

/// The stack of a pool thread that runs kernel code (the runtime's worker
/// pool): device functions' locals and the kernels' smaller local arrays
/// live there.
constexpr uint64_t WorkerStackBytes = 16u << 20;
/// The largest local array the compiler puts on the stack; a larger one
/// of a kernel gets one copy per block in the block frame (the threads of a
/// block run one at a time); a device function may have none larger (the
/// verifier's limit).
constexpr uint64_t MaxStackArrayBytes = limits::MaxStackArrayBytes;
static_assert(MaxStackArrayBytes * 16 <= WorkerStackBytes,
              "a kernel's stack arrays must leave most of a worker's stack to the rest "
              "(several arrays, device functions, the runtime's own frames)");

/// The stack a kernel's code may use besides its module's own frames:
/// the C library functions it calls (libm, memset, memcpy). Part of
/// KernelInfo::StackBytes.
constexpr uint64_t LibraryCallStackBytes = 16u << 10;
/// What a thread that runs kernels keeps for the rest of its stack: the
/// runtime's own frames between the launch and the kernel (the pool's
/// loop, fault catching), the thread's start and, on a pool thread, its
/// TLS. A kernel's KernelInfo::StackBytes must fit in what is left.
constexpr uint64_t RuntimeStackBytes = 256u << 10;
/// The most stack a kernel may need: a pool thread's, less what the
/// runtime keeps. The host target refuses to compile a kernel that needs
/// more (no thread gridjit starts could run it).
constexpr uint64_t MaxKernelStackBytes = WorkerStackBytes - RuntimeStackBytes;

/// Symbol prefixes; the kernel's name follows.
constexpr const char *EntryPrefix = "__gridjit_entry_";
constexpr const char *DescriptorPrefix = "__gridjit_desc_";
/// Constant memory (`constant NAME: [T; N];`): a global the runtime writes
/// before a launch.
constexpr const char *ConstantPrefix = "__gridjit_constant_";

/// A synchronisation point, as the compiler records it for messages: one
/// constant per sync_threads(), sync_warp(), grid_sync() and warp
/// operation in the generated code.
struct SyncSite {
  const char *Module;     ///< the module name (the file name as given)
  uint32_t Line, Col;     ///< 1-based; 0 when unknown
  const char *What;       ///< "sync_threads()", "shfl_down()", ...
  const char *SourceLine; ///< the text of line Line ("" when unknown)
  const char *Kernel;     ///< the kernel's name
};

/// How the host runtime formats one argument of print (docs/LangRef.md,
/// "Printing"); the value comes as 64 bits (PrintFn).
enum PrintArg : uint8_t {
  PrintSigned,   ///< a signed integer, sign-extended
  PrintUnsigned, ///< an unsigned integer, zero-extended
  PrintBool,     ///< 0 or 1: `false` / `true`
  PrintFloat,    ///< the bits of a double (f16, bf16 and f32 widened exactly)
  PrintPointer,  ///< an address: `0x` and lower-case hex digits
};

/// One print call in the generated code (a constant).
struct PrintSite {
  const char *Format;   ///< the format as written between the quotes, NUL-terminated
  const uint8_t *Kinds; ///< a PrintArg per argument
  uint32_t NumArgs;
};

/// Records one print: thread \p Thread (linear, x fastest) of block
/// \p Block (linear) printed \p Site with \p Values (NumArgs of them).
/// Called from kernel code of any worker thread at once.
using PrintFn = void (*)(void *State, const PrintSite *Site, const uint64_t *Values, uint64_t Block,
                         uint32_t Thread);

/// Checked code (HostTargetOptions::Check, docs/Check.md): what an
/// instrumented operation is. The first three are memory accesses, checked
/// by CheckAccessFn; the others are found by the kernel's own code, which
/// calls CheckReportFn with two numbers (A, B) whose meaning the kind gives.
enum CheckKind : uint32_t {
  CheckLoad,   ///< a load (a read)
  CheckStore,  ///< a store (a write); Value points to the bytes stored
  CheckAtomic, ///< an atomic read-modify-write (a read and a write, atomic)
  /// A local array's index out of range: A = the index (sign-extended to
  /// 64 bits), B = the array's element count. The code then clamps it as
  /// unchecked code does.
  CheckLocalIndex,
  /// Integer `/` or `%` by zero: A = the dividend, B = 0.
  CheckDivByZero,
  /// Signed `MIN / -1` or `MIN % -1`: A = the dividend, B = -1.
  CheckDivOverflow,
  /// `<<` or `>>` by an amount that is negative or not below the width:
  /// A = the amount (sign-extended), B = the width in bits.
  CheckShiftAmount,
  /// A warp operation reads a lane that does not exist (past the end of a
  /// partial last warp): A = the lane read, B = the lanes the warp has.
  CheckWarpLane,
};

/// The memory an access site names (CheckSite::Space).
enum CheckSpace : uint32_t {
  CheckGlobal,        ///< through a pointer into a kernel's global memory
  CheckShared,        ///< a static shared array or shared scalar
  CheckDynamicShared, ///< the dynamic shared array (`shared t: [T];`)
  CheckNotMemory,     ///< kinds that are not accesses
};

/// One instrumented operation in checked code (a constant): where it is,
/// and what the runtime needs to check it and to say what is wrong.
struct CheckSite {
  const char *Module;     ///< the module name (the file name as given)
  uint32_t Line, Col;     ///< 1-based; 0 when unknown
  const char *SourceLine; ///< the text of line Line ("" when unknown)
  const char *Kernel;     ///< the kernel's name
  const char *What;       ///< "load", "store", "atomic_add", "/", "<<", "shfl_down()", ...
  uint32_t Kind;          ///< CheckKind
  uint32_t Space;         ///< CheckSpace
  /// Bytes the access reads or writes (0 for the kinds that are not
  /// accesses), and the bytes of one element of the memory it names (for
  /// reporting an index: (address - start) / ElemBytes).
  uint32_t Bytes, ElemBytes;
  /// The kernel parameter (0-based) the address derives from through `[]`,
  /// `&`, `+` and `-` (MemoryRef::Var), when that parameter is never
  /// assigned in the kernel; -1 otherwise (a pointer variable, a device
  /// function's parameter, a shared array). With a parameter the access is
  /// checked against that argument's extent; without, against whichever
  /// known buffer holds the address.
  int32_t Param;
  /// The slot of CheckFastTable that this access's inline fast path may
  /// read: a static shared array's (>= CheckFastSharedSlots), which the
  /// runtime opens when the call comes (the fast path failed) and the
  /// array is fully written, so that later accesses take it; or a private
  /// parameter's ([CheckFastPrivateSlots, CheckFastSharedSlots)). 0: none
  /// (a read-only parameter's slot is its index). Both kinds of parameter
  /// slot are filled at the launch's start. In what was padding, zero in
  /// older checked code.
  uint32_t FastSlot;
  /// The variable the address derives from (the parameter, pointer variable
  /// or shared array), "" when none.
  const char *Memory;
  /// CheckShared: the array's offset in the block's shared memory and its
  /// bytes (KernelInfo::StaticSharedBytes' layout). CheckDynamicShared:
  /// offset Descriptor::StaticSharedBytes, bytes 0 (the launch's).
  uint64_t SharedOffset, SharedBytes;
};

/// Checked code's fast path (docs/Check.md, "Cost"): an access the compiler
/// proved cannot take part in a race or touch uninitialised memory (a load
/// through a parameter the kernel never writes through; a load or atomic
/// of a static shared array that no access it conflicts with may come
/// between the barriers around it) does not call
/// CheckAccess when its bytes lie in its slot's range [Begin, Begin + Size)
/// of the table that CheckState points to. Size 0 closes a slot: the
/// access calls CheckAccess. Slots [0, CheckFastPrivateSlots): kernel
/// parameter i's, open when its extent is known and no other pointer
/// argument's memory overlaps it (for loads through a parameter the kernel
/// never writes through); [CheckFastPrivateSlots, CheckFastSharedSlots):
/// parameter i's at CheckFastPrivateSlots + i, open under the same
/// conditions in a launch whose grid and blocks are one-dimensional, with
/// fewer than 2^31 threads (for every access of a parameter the kernel
/// reaches only at the thread's global index); [CheckFastSharedSlots,
/// CheckFastSlots): a static shared array's (CheckSite::FastSlot), opened
/// by the runtime once every byte of the array was written in the running
/// block, closed when a block starts.
struct CheckFastRange {
  uint64_t Begin, Size;
};
constexpr unsigned CheckFastPrivateSlots = 64, CheckFastSharedSlots = 128, CheckFastSlots = 256;
struct CheckFastTable {
  CheckFastRange Slot[CheckFastSlots];
};

/// Checks an access of Site->Bytes bytes at \p Addr by thread \p Thread
/// (linear) of block \p Block (linear), before it happens; \p Value: the
/// bytes a store writes (null for loads and atomics). Returns the address
/// to access: \p Addr, or, for an access the checker found out of bounds
/// (or into no known memory) when the launch goes on collecting findings,
/// a scratch area of the runtime's (zeros to a load) so that checked code
/// never touches memory it may not. When a finding ends the launch it does
/// not return (the runtime leaves the kernel's frames, as for a fault).
using CheckAccessFn = void *(*)(void *State, const CheckSite *Site, uint64_t Block, uint32_t Thread,
                                void *Addr, const void *Value);
/// Reports a finding that checked code found itself (CheckKind after
/// CheckAtomic). Returns when the launch goes on; the code then does what
/// unchecked code does.
using CheckReportFn = void (*)(void *State, const CheckSite *Site, uint64_t Block, uint32_t Thread,
                               uint64_t A, uint64_t B);
/// What a synchronisation point is, for CheckSyncFn.
enum CheckSyncKind : uint32_t {
  CheckSyncThreads, ///< sync_threads(): orders every access of the block before it
  CheckSyncWarp, ///< sync_warp(): orders the accesses of warp Warp's lanes (NoWarp: every warp's)
};
/// Called by checked code at block level each time the block passes a
/// synchronisation point (not for grid_sync, which the runtime sees).
using CheckSyncFn = void (*)(void *State, uint32_t Kind, uint64_t Block, uint32_t Warp);

/// What the runtime passes to an entry, one per worker thread (or one per
/// block for cooperative kernels, whose blocks keep their state between
/// grid-wide phases).
struct BlockContext {
  uint32_t GridDim[3];  ///< in
  uint32_t BlockDim[3]; ///< in
  /// In: 0 to start the blocks, k to resume them after grid_sync number k.
  uint32_t Resume;
  uint32_t ErrArrived; ///< out: threads (or lanes) that reached ErrSite
  /// In: the block's shared memory: the static arrays at the offsets the
  /// compiler chose, then (16-byte aligned) the dynamic shared memory.
  char *Shared;
  /// In: per-thread state, Descriptor::FrameBytesPerThread × threads of
  /// the block. 64-byte aligned.
  char *Frame;
  /// In: per-block state, Descriptor::FrameBytesPerBlock. 64-byte aligned.
  char *BlockFrame;
  /// Out, when the entry returns EntryError (or suspends): the sync point.
  const SyncSite *ErrSite;
  uint64_t ErrBlock;    ///< out: linear index of the failing block
  uint32_t ErrExpected; ///< out: threads (or lanes) that should have come
  uint32_t ErrWarp;     ///< out: the warp, or NoWarp for block-level sync
  /// In, for a kernel that prints (KernelInfo::Prints): what its print
  /// calls call, with PrintState first. Null for other kernels.
  void *PrintState;
  PrintFn Print;
  /// In, for checked code (Descriptor::Checked): what its checks call,
  /// with CheckState first (it points to a CheckFastTable). Null for
  /// unchecked code.
  void *CheckState;
  CheckAccessFn CheckAccess;
  CheckReportFn CheckReport;
  CheckSyncFn CheckSync;
};
constexpr uint32_t NoWarp = 0xffffffffu;

// Byte offsets that the code generator uses.
constexpr unsigned CtxGridDim = offsetof(BlockContext, GridDim);
constexpr unsigned CtxBlockDim = offsetof(BlockContext, BlockDim);
constexpr unsigned CtxResume = offsetof(BlockContext, Resume);
constexpr unsigned CtxErrArrived = offsetof(BlockContext, ErrArrived);
constexpr unsigned CtxShared = offsetof(BlockContext, Shared);
constexpr unsigned CtxFrame = offsetof(BlockContext, Frame);
constexpr unsigned CtxBlockFrame = offsetof(BlockContext, BlockFrame);
constexpr unsigned CtxErrSite = offsetof(BlockContext, ErrSite);
constexpr unsigned CtxErrBlock = offsetof(BlockContext, ErrBlock);
constexpr unsigned CtxErrExpected = offsetof(BlockContext, ErrExpected);
constexpr unsigned CtxErrWarp = offsetof(BlockContext, ErrWarp);
constexpr unsigned CtxPrintState = offsetof(BlockContext, PrintState);
constexpr unsigned CtxPrint = offsetof(BlockContext, Print);
constexpr unsigned CtxCheckState = offsetof(BlockContext, CheckState);
constexpr unsigned CtxCheckAccess = offsetof(BlockContext, CheckAccess);
constexpr unsigned CtxCheckReport = offsetof(BlockContext, CheckReport);
constexpr unsigned CtxCheckSync = offsetof(BlockContext, CheckSync);
static_assert(CtxGridDim == 0 && CtxBlockDim == 12 && CtxResume == 24 && CtxErrArrived == 28 &&
                  CtxShared == 32 && CtxFrame == 40 && CtxBlockFrame == 48 && CtxErrSite == 56 &&
                  CtxErrBlock == 64 && CtxErrExpected == 72 && CtxErrWarp == 76 &&
                  CtxPrintState == 80 && CtxPrint == 88 && CtxCheckState == 96 &&
                  CtxCheckAccess == 104 && CtxCheckReport == 112 && CtxCheckSync == 120,
              "the generated code assumes this layout");

/// `__gridjit_desc_<kernel>`: what the runtime allocates for a block.
struct Descriptor {
  uint64_t Version;             ///< ABIVersion
  uint64_t FrameBytesPerThread; ///< a multiple of 16
  uint64_t FrameBytesPerBlock;
  /// Bytes of the static shared arrays as laid out (each 16-byte aligned,
  /// the total rounded up to 16): KernelInfo::StaticSharedBytes, from the
  /// same layout. The dynamic shared memory starts here.
  uint64_t StaticSharedBytes;
  uint64_t NumGridSyncs; ///< grid_sync() points; 0 for other kernels
  /// 1: checked code (HostTargetOptions::Check), which needs the
  /// BlockContext's Check* fields; 0: unchecked.
  uint64_t Checked;
  /// Checked code: the GPU architecture whose limits a checked launch is
  /// held to (HostTargetOptions::CheckArch: 80 for sm_80); 0 unchecked.
  uint64_t CheckArch;
};

/// Status returned by an entry.
constexpr int32_t EntryDone = 0;
/// A sync point was reached by only part of a block or warp; the context's
/// Err* fields say where.
constexpr int32_t EntryError = -1;
// A positive value k: every block in the range stopped at grid_sync number
// k (with ErrSite naming it); call again with Resume = k once every block
// of the grid has.

/// `int32_t __gridjit_entry_<kernel>(void *const *Args, BlockContext *Ctx,
///                                    uint64_t FirstBlock, uint64_t EndBlock)`
/// runs blocks [FirstBlock, EndBlock) (linear indices: x fastest). Args[i]
/// points to parameter i's value (pointers as 8 bytes, bool as 1 byte).
/// Cooperative kernels are always called with one block.
using EntryFn = int32_t (*)(void *const *Args, BlockContext *Ctx, uint64_t FirstBlock,
                            uint64_t EndBlock);

} // namespace gridjit::hostabi

#endif // GRIDJIT_TARGET_HOSTABI_H
