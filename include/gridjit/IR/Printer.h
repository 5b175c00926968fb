//===- Printer.h - Canonical KIR text ---------------------------*- C++ -*-===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_PRINTER_H
#define GRIDJIT_IR_PRINTER_H

#include "gridjit/IR/AST.h"

#include <string>

namespace llvm {
class raw_ostream;
}

namespace gridjit {

/// Prints the module in canonical form: independent of the spacing,
/// comments, parentheses and number spellings of the input, and it parses
/// back to the same module (print(parse(print(M))) == print(M)). Works on
/// unverified modules too.
void printModule(const Module &M, llvm::raw_ostream &OS);
std::string printModule(const Module &M);
/// One expression, with the fewest parentheses that keep its meaning.
std::string printExpr(const Expr &E);

} // namespace gridjit

#endif // GRIDJIT_IR_PRINTER_H
