//===- SourceLoc.cpp - Lines and columns of KIR source --------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/SourceLoc.h"

#include <algorithm>

using namespace gridjit;

LineTable::LineTable(std::string_view Source) : Size(Source.size()) {
  Starts.push_back(0);
  for (size_t Pos = Source.find('\n'); Pos != std::string_view::npos;
       Pos = Source.find('\n', Pos + 1))
    Starts.push_back(Pos + 1);
}

std::optional<size_t> LineTable::getOffset(SourceLoc L) const {
  if (!L.isValid() || L.Col == 0 || L.Line > Starts.size())
    return std::nullopt;
  size_t Pos = Starts[L.Line - 1] + (L.Col - 1);
  if (Pos >= Size)
    return std::nullopt;
  return Pos;
}

SourceLoc LineTable::getLoc(size_t Offset) const {
  Offset = std::min(Offset, Size);
  // The last line that starts at or before Offset.
  auto It = std::upper_bound(Starts.begin(), Starts.end(), Offset) - 1;
  return SourceLoc{static_cast<unsigned>(It - Starts.begin() + 1),
                   static_cast<unsigned>(Offset - *It + 1)};
}
