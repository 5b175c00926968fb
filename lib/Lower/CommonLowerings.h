//===- CommonLowerings.h - Op lowerings every target shares -----*- C++ -*-===//
//
// Part of gridjit (internal header).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_LOWER_COMMONLOWERINGS_H
#define GRIDJIT_LIB_LOWER_COMMONLOWERINGS_H

#include "gridjit/Lower/LoweringRegistry.h"

namespace gridjit {

/// Registers the target-independent lowerings (arithmetic, comparisons,
/// casts, memory, atomics, select, exact math) except those in \p Omit.
llvm::Error registerCommonLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit = {});

} // namespace gridjit

#endif // GRIDJIT_LIB_LOWER_COMMONLOWERINGS_H
