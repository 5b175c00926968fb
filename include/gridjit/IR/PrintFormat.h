//===- PrintFormat.h - The format string of KIR's print -------*- C++ -*-===//
//
// Part of gridjit. `print("i = {}, v = {}", i, v)` takes a string literal
// whose `{}` are replaced by the arguments in order (docs/LangRef.md,
// "Printing"). The AST keeps the literal as written (CallExpr::Format);
// this reads it: the escapes `\n \t \\ \"`, the braces `{{ }}`, and the
// placeholders. The verifier reports its errors at their column; the
// targets lower the pieces; the host runtime formats records from them.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_PRINTFORMAT_H
#define GRIDJIT_IR_PRINTFORMAT_H

#include "gridjit/IR/Type.h"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit {

/// A format split at its placeholders: the literal text before the first
/// `{}`, between each two, and after the last (escapes decoded, `{{` and
/// `}}` as one brace). There is always one more piece than placeholders.
struct PrintFormat {
  std::vector<std::string> Pieces;
  unsigned numArgs() const { return static_cast<unsigned>(Pieces.size()) - 1; }
};

/// What is wrong with a format, and where: a byte offset into the text as
/// written (the verifier adds it to the column after the opening quote).
struct PrintFormatError {
  size_t Offset = 0;
  std::string Message;
};

/// Reads \p Raw, the text between the quotes as written. False (and \p Err
/// set) for an unknown escape, a `{` that is not `{}` or `{{`, a lone `}`,
/// or a control character written raw (write `\n`, `\t`).
bool parsePrintFormat(std::string_view Raw, PrintFormat &Out, PrintFormatError &Err);

/// True for the types print takes: every scalar type and every pointer.
inline bool isPrintableType(const Type &T) { return T.isScalar() || T.isPointer(); }

} // namespace gridjit

#endif // GRIDJIT_IR_PRINTFORMAT_H
