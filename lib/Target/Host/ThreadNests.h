//===- ThreadNests.h - Thread-loop nests as functions of their own -*- C++ -*-===//
//
// Part of gridjit (internal header). A kernel with many synchronisation
// points has many thread-loop nests in its one entry function, and LLVM's
// loop passes and the code generator's loop strength reduction take time
// that grows faster than the number of loops in one function (a chain of
// synchronising device functions compiled in time quadratic in its
// length). Above a threshold, each nest is moved into a function of its
// own (as the oneAPI Construction Kit does with barrier regions), which
// bounds every per-function analysis. See docs/HostTarget.md, "Compile
// time".
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_THREADNESTS_H
#define GRIDJIT_LIB_TARGET_HOST_THREADNESTS_H

#include "llvm/ADT/StringRef.h"

namespace llvm {
class BranchInst;
class Module;
} // namespace llvm

namespace gridjit::host {

/// A function with more nests (markThreadNest) than this has them outlined.
/// Below it a kernel keeps one function: an outlined nest is a call per
/// block and per visit, and loses what LLVM hoisted out of block-level
/// loops across nests (the tiled matrix multiply of bench-HostExecBench,
/// 6 nests, ran 1.5 times slower outlined). Every `examples/` kernel has
/// at most 6.
inline constexpr unsigned MaxInlineThreadNests = 8;

/// The name of an outlined nest is its function's, then this, then its
/// number: `__gridjit_entry_K.threads0`.
inline constexpr llvm::StringLiteral OutlinedNestSuffix = ".threads";

/// Marks \p Latch, the latch of the outermost loop of a thread-loop nest
/// (ThreadLoops.cpp) or of a block-level loop over the threads' state
/// words (emitCountedLoop: a barrier's check), as the end of a nest. A
/// marked loop inside another marked loop is part of the outer one's nest.
void markThreadNest(llvm::BranchInst &Latch);

/// Removes the marks of markThreadNest from \p IR; with \p Outline, first
/// moves each marked nest of a function with more than
/// MaxInlineThreadNests of them into an internal, never inlined function
/// of its own, with the scalar locals of the function promoted to values
/// and the local arrays that only one nest uses moved into it.
void outlineThreadNests(llvm::Module &IR, bool Outline);

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_THREADNESTS_H
