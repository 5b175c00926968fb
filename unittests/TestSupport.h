//===- TestSupport.h - Helpers shared by the unit tests ---------*- C++ -*-===//
//
// Part of gridjit. LLVM's llvm/Testing/Support matchers need a library
// Debian does not ship, so the tests use these small helpers instead.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_TESTSUPPORT_H
#define GRIDJIT_UNITTESTS_TESTSUPPORT_H

#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>
#include <string_view>

namespace gridjit::test {

/// The rendering of \p E as it would be printed (empty for success);
/// consumes it. Diagnostics come with their source line and caret.
inline std::string errorText(llvm::Error E) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) { EI.log(OS); });
  return S;
}

/// print(parse(Text)), or "PARSE ERROR: ..." so that a failure shows why.
inline std::string canonical(std::string_view Text, std::string_view Name = "test.kir") {
  auto M = parseModule(Text, Name);
  if (!M)
    return "PARSE ERROR: " + errorText(M.takeError());
  return printModule(**M);
}

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_TESTSUPPORT_H
