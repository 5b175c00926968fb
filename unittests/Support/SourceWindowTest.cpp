//===- SourceWindowTest.cpp - The window a diagnostic shows of a line -----===//
//
// Part of gridjit. windowSourceLine at its boundaries: a line that just
// fits and one that just does not, the caret at the start, the middle and
// the end, tabs and UTF-8; and a diagnostic on a 1 MB line, which must stay
// a few lines of output.
//
//===----------------------------------------------------------------------===//

#include "Support/SourceWindow.h"

#include "TestSupport.h"

#include "gtest/gtest.h"

#include <string>

using namespace gridjit;
using namespace gridjit::test;

namespace {

/// The columns \p S takes on a terminal with tab stops every 8 columns.
size_t columns(const std::string &S) {
  size_t Col = 0;
  for (char C : S) {
    if (C == '\t')
      Col = (Col / 8 + 1) * 8;
    else if ((static_cast<unsigned char>(C) & 0xC0) != 0x80)
      ++Col;
  }
  return Col;
}

/// "abcd...xyzabc...": a line whose every window is a different text.
std::string letters(size_t N) {
  std::string S;
  for (size_t I = 0; I < N; ++I)
    S += static_cast<char>('a' + I % 26);
  return S;
}

TEST(SourceWindowTest, ALineThatFitsIsShownWhole) {
  std::string Line = letters(MaxSourceColumns);
  for (size_t Caret : {size_t(0), size_t(60), Line.size() - 1, Line.size()}) {
    SourceWindow W = windowSourceLine(Line, Caret);
    EXPECT_FALSE(W.Cut);
    EXPECT_EQ(W.Text, Line);
    EXPECT_EQ(W.CaretIndent, std::string(Caret, ' '));
  }
}

TEST(SourceWindowTest, OneColumnMoreIsCut) {
  std::string Line = letters(MaxSourceColumns + 1);
  SourceWindow W = windowSourceLine(Line, 0);
  EXPECT_TRUE(W.Cut);
  EXPECT_EQ(W.Text, Line.substr(0, MaxSourceColumns - 3) + "...");
  EXPECT_EQ(W.CaretIndent, "");
}

TEST(SourceWindowTest, CaretAtTheStartKeepsTheStart) {
  std::string Line = letters(1000);
  SourceWindow W = windowSourceLine(Line, 0);
  EXPECT_EQ(W.Text, Line.substr(0, 117) + "...");
  EXPECT_EQ(W.CaretIndent, "");
  W = windowSourceLine(Line, 1);
  EXPECT_EQ(W.Text, Line.substr(0, 117) + "...");
  EXPECT_EQ(W.CaretIndent, " ");
}

TEST(SourceWindowTest, CaretAtTheEndKeepsTheEnd) {
  std::string Line = letters(1000);
  // On the last character...
  SourceWindow W = windowSourceLine(Line, 999);
  EXPECT_EQ(W.Text, "..." + Line.substr(1000 - 117));
  EXPECT_EQ(W.CaretIndent, std::string(3 + 116, ' '));
  // ...and one past it (an error at the end of the line).
  W = windowSourceLine(Line, 1000);
  EXPECT_EQ(W.Text, "..." + Line.substr(1000 - 117));
  EXPECT_EQ(W.CaretIndent, std::string(3 + 117, ' '));
}

TEST(SourceWindowTest, CaretInTheMiddleIsCentred) {
  std::string Line = letters(1000);
  SourceWindow W = windowSourceLine(Line, 500);
  // 114 columns between the two "...": the caret's character, 56 before
  // it and 57 after.
  EXPECT_EQ(W.Text, "..." + Line.substr(500 - 56, 114) + "...");
  EXPECT_EQ(W.CaretIndent, std::string(3 + 56, ' '));
}

// Wherever the caret is, the window fits, holds the caret's character
// under the caret, and is the line with its cut ends replaced by "...".
TEST(SourceWindowTest, EveryCaretPositionNearTheBoundaries) {
  for (size_t N : {size_t(MaxSourceColumns + 1), size_t(200), size_t(1000)}) {
    std::string Line = letters(N);
    for (size_t Caret : {size_t(0), size_t(1), size_t(56), size_t(57), size_t(58), size_t(59),
                         size_t(60), N / 2, N - 61, N - 60, N - 59, N - 58, N - 2, N - 1, N}) {
      SCOPED_TRACE("line " + std::to_string(N) + ", caret " + std::to_string(Caret));
      SourceWindow W = windowSourceLine(Line, Caret);
      ASSERT_TRUE(W.Cut);
      EXPECT_LE(columns(W.Text), MaxSourceColumns);
      size_t Begin = W.Text.starts_with("...") ? 3 : 0;
      size_t End = W.Text.ends_with("...") ? W.Text.size() - 3 : W.Text.size();
      std::string Shown = W.Text.substr(Begin, End - Begin);
      // The caret stands under its character: the window starts there.
      ASSERT_EQ(W.CaretIndent, std::string(W.CaretIndent.size(), ' '));
      ASSERT_LE(W.CaretIndent.size() - Begin, Caret);
      size_t From = Caret - (W.CaretIndent.size() - Begin);
      EXPECT_EQ(Line.substr(From, Shown.size()), Shown);
      EXPECT_EQ(Begin != 0, From != 0);
      EXPECT_EQ(End != W.Text.size(), From + Shown.size() != N);
      // A window with one cut end uses the columns of the other "...".
      EXPECT_EQ(columns(W.Text), MaxSourceColumns);
      if (Caret < N)
        EXPECT_EQ(W.Text[W.CaretIndent.size()], Line[Caret]);
      else
        EXPECT_EQ(W.CaretIndent.size(), W.Text.size());
    }
  }
}

TEST(SourceWindowTest, UTF8CharactersAreNeverSplit) {
  // 300 two-byte characters ("é") and 300 three-byte ones ("€").
  std::string Line;
  for (int I = 0; I < 300; ++I)
    Line += "\xc3\xa9";
  for (int I = 0; I < 300; ++I)
    Line += "\xe2\x82\xac";
  size_t Caret = 600; // the first "€"
  SourceWindow W = windowSourceLine(Line, Caret);
  EXPECT_EQ(W.Text, "..." + std::string(Line, 600 - 2 * 56, 2 * 56) +
                        std::string(Line, 600, 3 * 58) + "...");
  EXPECT_EQ(W.CaretIndent, std::string(3 + 56, ' '));
  // A caret on a continuation byte points at its character.
  EXPECT_EQ(windowSourceLine(Line, Caret + 2).Text, W.Text);
  EXPECT_EQ(windowSourceLine(Line, Caret + 2).CaretIndent, W.CaretIndent);
}

TEST(SourceWindowTest, TabsCountAsWholeTabStops) {
  // 15 tabs take exactly 120 columns: shown whole, tabs kept in the caret
  // line; one more character and the line is cut.
  std::string Tabs(15, '\t');
  SourceWindow W = windowSourceLine(Tabs, 15);
  EXPECT_FALSE(W.Cut);
  EXPECT_EQ(W.CaretIndent, Tabs);
  W = windowSourceLine(Tabs + "x", 15);
  EXPECT_TRUE(W.Cut);
  // A tab counts as 8 columns wherever it lands: 14 tabs (112) and the
  // "x" and "..." fit in 120, a 15th does not.
  EXPECT_EQ(W.Text, "..." + std::string(14, '\t') + "x");
  EXPECT_EQ(W.CaretIndent, "   " + std::string(14, '\t'));
  EXPECT_LE(columns(W.Text), MaxSourceColumns);
}

TEST(SourceWindowTest, ADiagnosticOnAMegabyteLineIsShort) {
  std::string Line = "kernel k() { let x: i32 = " + std::string(1 << 20, ' ') + "y; }";
  size_t Y = Line.find('y');
  DiagnosticEngine D("long.kir", Line + "\n");
  D.error({1, static_cast<unsigned>(Y + 1)}, "use of undeclared name 'y'");
  // Near the end: only the start is cut, and the window is 120 columns.
  std::string Expected = "long.kir:1:" + std::to_string(Y + 1) +
                         ": error: use of undeclared name 'y'\n"
                         "..." +
                         std::string(113, ' ') + "y; }\n" + std::string(3 + 113, ' ') + "^\n";
  EXPECT_EQ(errorText(D.takeError()), Expected);
}

} // namespace
