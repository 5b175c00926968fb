//===- StackCheck.h - A host launch's threads have the stack it needs -*- C++ -*-===//
//
// Part of gridjit (internal header). The host target bounds the stack each
// kernel needs when it compiles it (KernelInfo::StackBytes); before a
// launch the host runtime checks it against the threads that would run the
// blocks: the launching thread, which always runs some, and the pool's
// threads, whose stacks it made (docs/HostTarget.md, "Stack").
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_STACKCHECK_H
#define GRIDJIT_LIB_RUNTIME_STACKCHECK_H

#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>

namespace gridjit {

/// The calling thread's stack: its size, and the bytes left below the
/// caller's frame. std::nullopt where the system cannot say
/// (pthread_getattr_np fails).
struct ThreadStack {
  uint64_t Size = 0;
  uint64_t Left = 0;
};
std::optional<ThreadStack> callingThreadStack();

/// Checks that the threads that would run a launch of \p K have the stack
/// K.StackBytes (0: not known, nothing checked) and
/// hostabi::RuntimeStackBytes more: the calling thread, with what is left
/// of its stack now, and, when \p PoolThreadsRun, the pool's threads
/// (hostabi::WorkerStackBytes each). Error (Configuration): what the
/// kernel needs, what the thread has and what to change.
llvm::Error checkKernelStack(const KernelInfo &K, bool PoolThreadsRun);

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_STACKCHECK_H
