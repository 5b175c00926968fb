//===- KernelFaults.h - A host kernel's memory faults, caught ---*- C++ -*-===//
//
// Part of gridjit (internal header). Runs host kernel code so that a
// SIGSEGV or SIGBUS it causes ends only that call: the runtime's handler
// jumps back out of the kernel, and the launch returns an error. The
// handlers are installed once per process, at the first call, and pass
// every fault that is not a kernel's to the handlers that were there before
// (the application's, a sanitizer's, LLVM's crash report, or the default).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H
#define GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H

#include "gridjit/Target/HostABI.h"

#include <cstdint>
#include <string>

namespace gridjit {

/// A fault that a kernel caused.
struct KernelFault {
  int Signal = 0;        ///< SIGSEGV or SIGBUS
  uintptr_t Address = 0; ///< the faulting address (si_addr)
};

/// Calls Entry(Args, Ctx, First, End) and returns its result; when the call
/// faults, returns false with \p Fault filled in (what the kernel wrote
/// before the fault stays written; \p Ctx is then undefined).
bool runCatchingFaults(hostabi::EntryFn Entry, void *const *Args, hostabi::BlockContext *Ctx,
                       uint64_t First, uint64_t End, int32_t &Result, KernelFault &Fault);

/// "SIGSEGV at address 0x..." for \p F.
std::string describeFault(const KernelFault &F);

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_KERNELFAULTS_H
