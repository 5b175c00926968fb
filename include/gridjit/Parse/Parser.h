//===- Parser.h - KIR text to a Module --------------------------*- C++ -*-===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_PARSE_PARSER_H
#define GRIDJIT_PARSE_PARSER_H

#include "gridjit/IR/AST.h"

#include "llvm/Support/Error.h"

#include <memory>
#include <string_view>

namespace gridjit {

/// Parses KIR source text into an unverified Module. \p BufferName is used
/// in diagnostics (a file name, `<stdin>`). On any syntax error returns a
/// DiagnosticError holding every error found (the parser recovers at
/// statement and declaration boundaries). Never crashes on any input; very
/// deep nesting is an error, not a stack overflow.
llvm::Expected<std::unique_ptr<Module>> parseModule(std::string_view Source,
                                                    std::string_view BufferName);

} // namespace gridjit

#endif // GRIDJIT_PARSE_PARSER_H
