//===- PrintFormat.cpp - The format string of KIR's print -----------------===//
//
// Part of gridjit. See gridjit/IR/PrintFormat.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/PrintFormat.h"

using namespace gridjit;

bool gridjit::parsePrintFormat(std::string_view Raw, PrintFormat &Out, PrintFormatError &Err) {
  Out.Pieces.assign(1, std::string());
  auto Fail = [&](size_t At, std::string Message) {
    Err = {At, std::move(Message)};
    return false;
  };
  for (size_t I = 0; I < Raw.size(); ++I) {
    char C = Raw[I];
    auto Next = [&] { return I + 1 < Raw.size() ? Raw[I + 1] : '\0'; };
    if (C == '\\') {
      switch (Next()) {
      case 'n':
        Out.Pieces.back() += '\n';
        break;
      case 't':
        Out.Pieces.back() += '\t';
        break;
      case '\\':
      case '"':
        Out.Pieces.back() += Next();
        break;
      default:
        return Fail(I, "unknown escape in a string: KIR has '\\n', '\\t', '\\\\' and '\\\"'");
      }
      ++I;
    } else if (C == '{') {
      if (Next() == '{') {
        Out.Pieces.back() += '{';
      } else if (Next() == '}') {
        Out.Pieces.emplace_back();
      } else {
        return Fail(I, "'{' not closed in the format: '{}' takes an argument, '{{' is a brace");
      }
      ++I;
    } else if (C == '}') {
      if (Next() != '}')
        return Fail(I, "unmatched '}' in the format: '}}' is a brace");
      Out.Pieces.back() += '}';
      ++I;
    } else if (static_cast<unsigned char>(C) < 0x20 || C == 0x7f) {
      return Fail(I, "control character in a string: write '\\n' or '\\t'");
    } else {
      Out.Pieces.back() += C;
    }
  }
  return true;
}
