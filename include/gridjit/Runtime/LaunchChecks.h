//===- LaunchChecks.h - Checks every runtime makes before a launch -*- C++ -*-===//
//
// Part of gridjit. The checks of a launch that do not depend on the target:
// the kernel's name, the configuration against the limits of CUDA's
// execution model (gridjit/Support/Limits.h) and the kernel's use of
// dynamic shared memory, and the arguments against the kernel's parameters.
// Every Runtime makes them, in this order, with these messages; a target
// adds its own limits (shared memory, co-residency) between the
// configuration and the argument checks (docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_LAUNCHCHECKS_H
#define GRIDJIT_RUNTIME_LAUNCHCHECKS_H

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <string>

namespace gridjit {

/// "(X, Y, Z)".
std::string formatDim3(const Dim3 &D);

/// "kernel 'K' launched with grid (..) and block (..)": how launch errors
/// about the configuration begin.
std::string describeLaunch(const KernelInfo &K, const LaunchConfig &C);

/// The kernel named \p Name of \p M. Error (NotFound): "no kernel 'N' in
/// the loaded module (kernels: ...)".
llvm::Expected<const KernelInfo &> findKernel(const LoadedModule &M, llvm::StringRef Name);

/// Checks \p C for kernel \p K: every dimension at least 1, the threads
/// per block and the block and grid dimensions within gridjit::limits, and
/// dynamic shared memory given exactly when the kernel declares it. Errors
/// of kind Configuration.
llvm::Error checkLaunchConfig(const KernelInfo &K, const LaunchConfig &C);

/// "kernel 'K': argument N ('p: T')" (N counts from 1; without the
/// parameter when \p Index is not one of \p K's): how every message about
/// one argument begins, in C++, C and Python.
std::string describeArgument(const KernelInfo &K, size_t Index);

/// The error about argument \p Index of \p K: describeArgument, a space and
/// \p Problem (e.g. "must point to f32, but a pointer to i32 was given").
/// Of kind Argument (the argument does not fit its parameter) unless
/// \p Kind says otherwise (InvalidArgument: the API was used wrongly).
llvm::Error argumentError(const KernelInfo &K, size_t Index, const llvm::Twine &Problem,
                          ErrorKind Kind = ErrorKind::Argument);

/// Checks that \p Given arguments are as many as \p K has parameters.
/// Error (Argument): "kernel 'K' takes N arguments (p: T, ...), M given".
/// checkArguments begins with it; the C API calls it first, on the count
/// its caller gave, before it reads or allocates anything for the
/// arguments.
llvm::Error checkArgumentCount(const KernelInfo &K, uint64_t Given);

/// Checks \p Args against the parameters of \p K: their number, scalars of
/// the parameter's type, pointers for pointer parameters (and, when the
/// argument's pointee is known, of the parameter's pointee). Errors of
/// kind Argument.
llvm::Error checkArguments(const KernelInfo &K, llvm::ArrayRef<KernelArg> Args);

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_LAUNCHCHECKS_H
