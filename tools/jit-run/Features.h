//===- Features.h - What this build of jit-run can do here ------*- C++ -*-===//
//
// Part of gridjit. `jit-run --print-features` prints the features of this
// build on this machine, one per line; test/lit.cfg.py asks for them once,
// so that the tests and jit-run agree on what is available.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TOOLS_JITRUN_FEATURES_H
#define GRIDJIT_TOOLS_JITRUN_FEATURES_H

#include "llvm/Support/raw_ostream.h"

namespace jitrun {

/// Prints the name of every feature that is available, one per line, in
/// the order of the feature table (Features.cpp).
void printFeatures(llvm::raw_ostream &OS);

} // namespace jitrun

#endif // GRIDJIT_TOOLS_JITRUN_FEATURES_H
