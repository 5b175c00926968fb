//===- Verifier.h - Type checking and semantic rules of KIR -----*- C++ -*-===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SEMA_VERIFIER_H
#define GRIDJIT_SEMA_VERIFIER_H

#include "gridjit/IR/AST.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string_view>

namespace gridjit {

/// Checks every rule of the KIR spec (docs/LangRef.md) and fills in the
/// module's semantic fields: expression types (literal types from context),
/// name and call resolution, array sizes, folded constants, loop index
/// types, UsesGridSync. On success sets M.Verified. On failure returns a
/// DiagnosticError with every independent error found. Verifying a module
/// twice is allowed and gives the same result.
llvm::Error verifyModule(Module &M);

} // namespace gridjit

#endif // GRIDJIT_SEMA_VERIFIER_H
