//===- CheckPrint.cpp - KIR verifier: print's format and arguments --------===//
//
// Part of gridjit. `print("i = {}, v = {}", i, v)`: the format is a string
// literal (CallExpr::Format), read by gridjit/IR/PrintFormat.h; each `{}`
// takes the next argument, which must be a scalar (f16/bf16 included) or a
// pointer. Errors point at the character of the format or the argument
// that is wrong.
//
//===----------------------------------------------------------------------===//

#include "Checker.h"

#include "gridjit/IR/PrintFormat.h"

using namespace gridjit;
using namespace gridjit::sema;

namespace {
std::string count(size_t N, const char *One, const char *Many) {
  return std::to_string(N) + " " + (N == 1 ? One : Many);
}
} // namespace

Type Checker::checkPrintCall(CallExpr &C) {
  if (CurFn)
    CallsPrint.insert(CurFn);
  bool OK = true;
  for (ExprPtr &A : C.Args) {
    Type T = checkValue(A.get(), C.getLoc());
    if (T.isValid() && !isPrintableType(T)) {
      error(startLoc(A), "'print' takes scalars and pointers, found " + quote(T));
      OK = false;
    }
    OK &= T.isValid();
  }
  if (!C.Format) {
    error(C.getLoc(), "'print' needs a format string first: print(\"x = {}\", x)");
    return Type();
  }
  PrintFormat F;
  PrintFormatError Err;
  // The text starts one column after the opening quote (a string is on one
  // line, and every byte is a column).
  if (!parsePrintFormat(*C.Format, F, Err)) {
    error({C.FormatLoc.Line, C.FormatLoc.Col + 1 + static_cast<unsigned>(Err.Offset)}, Err.Message);
    return Type();
  }
  if (F.numArgs() != C.Args.size()) {
    error(C.FormatLoc, "the format of 'print' has " + count(F.numArgs(), "'{}'", "'{}'s") +
                           " but " + count(C.Args.size(), "argument follows", "arguments follow"));
    return Type();
  }
  return OK ? Type::getVoid() : Type();
}
