//===- SourceLoc.h - A line and column in KIR source ------------*- C++ -*-===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_SOURCELOC_H
#define GRIDJIT_SUPPORT_SOURCELOC_H

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace gridjit {

/// A position in the source: 1-based line and column (columns count bytes).
/// Line == 0 means "unknown", e.g. a node made by the builder API.
struct SourceLoc {
  unsigned Line = 0;
  unsigned Col = 0;
  bool isValid() const { return Line != 0; }
};

/// Where the lines of one source text start, found by one scan of it, so
/// that turning a SourceLoc into a byte offset and back costs O(log lines)
/// instead of a scan from the start: a pass that locates every declaration
/// stays linear in the size of the module. Lines end at '\n'. The table
/// refers to \p Source, which must outlive it.
class LineTable {
public:
  explicit LineTable(std::string_view Source);

  /// The byte offset of \p L: the start of line L.Line plus L.Col - 1
  /// (columns count bytes; one past the end of a line continues into the
  /// next). None for an invalid location, column 0, or an offset at or past
  /// the end of the source.
  std::optional<size_t> getOffset(SourceLoc L) const;
  /// The line and column of the byte at \p Offset; an offset past the end
  /// is taken as the end of the source.
  SourceLoc getLoc(size_t Offset) const;
  /// The number of lines (a source ending in '\n' has an empty last line).
  unsigned getNumLines() const { return static_cast<unsigned>(Starts.size()); }

private:
  size_t Size;
  /// The offset of each line's first byte; Starts[0] == 0.
  std::vector<size_t> Starts;
};

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_SOURCELOC_H
