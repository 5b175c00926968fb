//===- SourceWindow.h - The part of a source line a diagnostic shows -*- C++ -*-===//
//
// Part of gridjit (internal header of lib/Support, used by Diagnostics.cpp
// and its unit test). A diagnostic shows the source line and a caret under
// the column; a line longer than a screen (generated or minified code, a
// 1 MB line) is shown as a window around the caret instead, as clang does,
// so that one diagnostic stays a few lines of output.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_SUPPORT_SOURCEWINDOW_H
#define GRIDJIT_LIB_SUPPORT_SOURCEWINDOW_H

#include <cstddef>
#include <string>
#include <string_view>

namespace gridjit {

/// The widest source line a diagnostic shows whole, in columns (a tab
/// advances to the next multiple of 8, a UTF-8 character takes one). A
/// wider line is shown as a window of at most this many columns, `...`
/// included.
inline constexpr unsigned MaxSourceColumns = 120;

/// What a diagnostic prints of one source line.
struct SourceWindow {
  /// The line, or its window with `...` in place of each cut end.
  std::string Text;
  /// What goes before the caret on the next line: a blank for each UTF-8
  /// character of Text before the caret's (a tab for a tab, so the caret
  /// lines up however the terminal sets its tab stops).
  std::string CaretIndent;
  /// True when Text is a window (the line was cut).
  bool Cut = false;
};

/// The part of \p Line to show for a caret at byte \p CaretByte (at most
/// Line.size(): one past the last character points at the line's end): the
/// whole line when it fits in \p MaxColumns columns, else a window around
/// the caret's character of at most \p MaxColumns columns, counting a tab
/// as 8, cut only between UTF-8 characters, with the caret near its middle
/// unless the line's start or end is near.
SourceWindow windowSourceLine(std::string_view Line, size_t CaretByte,
                              unsigned MaxColumns = MaxSourceColumns);

} // namespace gridjit

#endif // GRIDJIT_LIB_SUPPORT_SOURCEWINDOW_H
