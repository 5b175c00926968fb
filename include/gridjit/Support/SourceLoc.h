//===- SourceLoc.h - A line and column in KIR source ------------*- C++ -*-===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_SOURCELOC_H
#define GRIDJIT_SUPPORT_SOURCELOC_H

namespace gridjit {

/// A position in the source: 1-based line and column (columns count bytes).
/// Line == 0 means "unknown", e.g. a node made by the builder API.
struct SourceLoc {
  unsigned Line = 0;
  unsigned Col = 0;
  bool isValid() const { return Line != 0; }
};

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_SOURCELOC_H
