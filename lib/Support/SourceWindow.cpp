//===- SourceWindow.cpp - The part of a source line a diagnostic shows ----===//
//
// Part of gridjit. See SourceWindow.h.
//
//===----------------------------------------------------------------------===//

#include "SourceWindow.h"

#include <algorithm>
#include <cstdint>

using namespace gridjit;

namespace {

constexpr size_t TabStop = 8;
constexpr std::string_view Dots = "...";

bool isContinuation(char C) { return (static_cast<uint8_t>(C) & 0xC0) == 0x80; }

/// The columns \p Line takes printed from the first column.
size_t columnsOf(std::string_view Line) {
  size_t Col = 0;
  for (char C : Line) {
    if (C == '\t')
      Col = (Col / TabStop + 1) * TabStop;
    else if (!isContinuation(C))
      ++Col;
  }
  return Col;
}

/// A blank for each UTF-8 character of \p Prefix, a tab for each tab.
std::string indentFor(std::string_view Prefix) {
  std::string Indent;
  for (char C : Prefix) {
    if (C == '\t')
      Indent += '\t';
    else if (!isContinuation(C))
      Indent += ' ';
  }
  return Indent;
}

} // namespace

SourceWindow gridjit::windowSourceLine(std::string_view Line, size_t CaretByte,
                                       unsigned MaxColumns) {
  CaretByte = std::min(CaretByte, Line.size());
  while (CaretByte > 0 && CaretByte < Line.size() && isContinuation(Line[CaretByte]))
    --CaretByte;
  if (columnsOf(Line) <= MaxColumns)
    return {std::string(Line), indentFor(Line.substr(0, CaretByte)), false};

  // Grow [Begin, End) from the caret's character, a character at a time on
  // alternate sides, while it fits; a tab counts as a whole tab stop
  // wherever it lands, so the window never takes more than the budget.
  auto Width = [](char C) { return C == '\t' ? TabStop : 1; };
  auto Next = [&](size_t P) {
    for (++P; P < Line.size() && isContinuation(Line[P]);)
      ++P;
    return P;
  };
  auto Prev = [&](size_t P) {
    for (--P; P > 0 && isContinuation(Line[P]);)
      --P;
    return P;
  };
  size_t Begin = CaretByte, End = CaretByte, Used = 0;
  if (End < Line.size()) { // the caret's own character, whatever its width
    Used = Width(Line[End]);
    End = Next(End);
  }
  auto Grow = [&](size_t Budget) {
    for (bool Right = true;; Right = !Right) {
      bool CanLeft = Begin > 0 && Used + Width(Line[Prev(Begin)]) <= Budget;
      bool CanRight = End < Line.size() && Used + Width(Line[End]) <= Budget;
      if (!CanLeft && !CanRight)
        return;
      if (CanRight && (Right || !CanLeft)) {
        Used += Width(Line[End]);
        End = Next(End);
      } else {
        Begin = Prev(Begin);
        Used += Width(Line[Begin]);
      }
    }
  };
  size_t Marks = 2 * Dots.size();
  Grow(MaxColumns > Marks ? MaxColumns - Marks : 0);
  // Only one end is cut: the other `...` is not needed, its columns are.
  if (Begin == 0 || End == Line.size())
    Grow(MaxColumns > Dots.size() ? MaxColumns - Dots.size() : 0);

  SourceWindow W;
  W.Cut = true;
  if (Begin > 0) {
    W.Text = Dots;
    W.CaretIndent.assign(Dots.size(), ' ');
  }
  W.Text += Line.substr(Begin, End - Begin);
  if (End < Line.size())
    W.Text += Dots;
  W.CaretIndent += indentFor(Line.substr(Begin, CaretByte - Begin));
  return W;
}
