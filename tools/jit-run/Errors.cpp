//===- Errors.cpp - The kinds of error jit-run reports --------------------===//
//
// Part of gridjit. See Errors.h.
//
//===----------------------------------------------------------------------===//

#include "Errors.h"

using namespace jitrun;

char UsageError::ID = 0;
char CommandLineError::ID = 0;
char ClosedPipeError::ID = 0;

llvm::Error jitrun::usageError(const llvm::Twine &Msg) {
  return llvm::make_error<UsageError>(Msg.str());
}
