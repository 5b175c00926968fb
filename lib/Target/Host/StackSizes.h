//===- StackSizes.h - The stack a host kernel's code needs ------*- C++ -*-===//
//
// Part of gridjit (internal header). The host target bounds the stack each
// kernel needs when it compiles it (docs/HostTarget.md, "Stack"): the code
// generator writes every function's frame size into the object
// (TargetOptions::StackSizeSection, the `.stack_sizes` section clang's
// -fstack-size-section writes), and these functions read it back and add
// up what a kernel's calls can need at once.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_STACKSIZES_H
#define GRIDJIT_LIB_TARGET_HOST_STACKSIZES_H

#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>

namespace gridjit::host {

/// The frame bytes of every function defined in the ELF object \p Object
/// that has a record in its `.stack_sizes` section, by symbol name: the
/// bytes its prologue takes from the stack pointer, spills and callee-saved
/// registers included (the return address is not). A function that
/// allocates a dynamic amount of stack has no record. Errors: not an ELF
/// object, a malformed section.
llvm::Expected<llvm::StringMap<uint64_t>> readStackSizes(llvm::StringRef Object);

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_STACKSIZES_H
