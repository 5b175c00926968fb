//===- KernelFaults.h - A host kernel's memory faults, caught ---*- C++ -*-===//
//
// Part of gridjit (internal header). Runs host kernel code so that a
// SIGSEGV or SIGBUS it causes ends only that call: the runtime's handler
// jumps back out of the kernel, and the launch returns an error. This is
// the one piece of process-wide state gridjit keeps, done the way
// Wasmtime does it (docs/Runtime.md, "Catching a kernel's faults"):
//
// - the handlers are installed when the first live runtime that catches
//   faults first launches (holdFaultHandlers), and removed when the last
//   such runtime goes (releaseFaultHandlers), if they are still the
//   installed ones;
// - a fault is a kernel's only when its thread is inside kernel code (a
//   per-thread gate in initial-exec TLS, set by runCatchingFaults) and the
//   hardware raised it (si_code > 0); every other fault goes to the
//   handler installed before ours exactly as the kernel would have called
//   it (SA_SIGINFO, sa_mask, SA_NODEFER, SA_RESETHAND, SIG_IGN, SIG_DFL);
// - every thread that runs kernel code has an alternate signal stack
//   (SignalStack: the pool's threads from their start, a launch's calling
//   thread from its first launch, ensureThreadSignalStack), so that a
//   kernel that overflows its stack is caught too.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H
#define GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H

#include "GuardedMemory.h"

#include "gridjit/Target/HostABI.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <signal.h>
#include <string>
#include <utility>

namespace gridjit {

/// A fault that a kernel caused.
struct KernelFault {
  int Signal = 0;        ///< SIGSEGV or SIGBUS
  uintptr_t Address = 0; ///< the faulting address (si_addr)
  /// The address was within a page of the faulting thread's stack
  /// pointer: the kernel ran off the end of its thread's stack.
  bool StackOverflow = false;
};

/// Takes a hold on the process's SIGSEGV and SIGBUS handlers for a
/// runtime that catches faults: the first hold of the process (or the
/// first after every hold was released) installs them, saving the
/// handlers they replace. Errors: sigaction refused.
llvm::Error holdFaultHandlers();
/// Gives back a hold. The last one removes the handlers - puts back the
/// ones they replaced - if gridjit's are still the installed ones; if the
/// application installed another handler after them, that one stays and
/// gridjit's stay behind it (with no kernel running, they pass every fault
/// on).
void releaseFaultHandlers();
/// Registers the lock of the two functions above for fork()
/// (gridjit/Support/ForkSafety.h), once per process. A runtime calls it
/// before it registers its own hooks and outside every lock: a runtime's
/// lock is held while taking this one, so this one must be the older.
void forkSafeFaultHandlers();

/// Calls Entry(Args, Ctx, First, End) and returns its result; when the call
/// faults, returns false with \p Fault filled in (what the kernel wrote
/// before the fault stays written; \p Ctx is then undefined). The caller
/// holds the handlers (holdFaultHandlers).
bool runCatchingFaults(hostabi::EntryFn Entry, void *const *Args, hostabi::BlockContext *Ctx,
                       uint64_t First, uint64_t End, int32_t &Result, KernelFault &Fault);

/// Clears the calling thread's fault-catching scope (the one
/// runCatchingFaults set) before code leaves kernel frames by a jump of its
/// own (a checked launch's finding limit, KernelChecker.h): a fault after
/// the jump is then not taken for the kernel's. Nothing when none is set.
void leaveFaultScope();

/// "SIGSEGV at address 0x..." for \p F.
std::string describeFault(const KernelFault &F);

/// An alternate signal stack: 256 KiB between guard regions. Large enough
/// for gridjit's handler and for the handlers it passes faults on to (a
/// sanitizer's or LLVM's crash report, which print a stack trace).
class SignalStack {
public:
  static constexpr uint64_t Bytes = 256u << 10;
  SignalStack() = default;
  SignalStack(SignalStack &&O) noexcept : Memory(O.Memory) { O.Memory = nullptr; }
  SignalStack &operator=(SignalStack &&O) noexcept {
    std::swap(Memory, O.Memory);
    return *this;
  }
  ~SignalStack();
  /// Maps the stack; false when the memory is not there.
  bool allocate();
  bool allocated() const { return Memory != nullptr; }
  void *base() const { return Memory; }
  /// Makes it this thread's alternate signal stack. Returns false, and
  /// leaves the thread's own, when that one is in use (the thread is
  /// running a signal handler on it). \p Old, if given, receives the
  /// thread's stack before.
  bool install(stack_t *Old = nullptr) const;

private:
  char *Memory = nullptr;
};

/// Makes sure the calling thread has an alternate signal stack before it
/// runs kernel code (a launch's calling thread runs blocks too). The first
/// time a thread asks: a thread that has one keeps it, whatever its size
/// (its own handlers already run there, and gridjit's needs little more
/// than the kernel's signal frame); a thread that has none gets one of
/// gridjit's (SignalStack), which stays its alternate stack until the
/// thread exits and is then unmapped. Later calls from the thread only
/// read a thread-local flag: no system call per launch. False when no
/// stack could be mapped.
bool ensureThreadSignalStack();

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H
