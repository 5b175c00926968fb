//===- LineTableTest.cpp - Lines and columns of a source text -------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/SourceLoc.h"

#include "gtest/gtest.h"

#include <string>

using namespace gridjit;

namespace {

TEST(LineTableTest, OffsetsAndLocationsRoundTrip) {
  std::string Src = "ab\n\ncde\nf";
  LineTable T(Src);
  EXPECT_EQ(T.getNumLines(), 4u);
  for (size_t Off = 0; Off < Src.size(); ++Off) {
    SourceLoc L = T.getLoc(Off);
    ASSERT_EQ(T.getOffset(L), Off) << Off;
  }
  EXPECT_EQ(T.getLoc(0).Line, 1u);
  EXPECT_EQ(T.getLoc(2).Col, 3u);  // the first '\n' ends line 1
  EXPECT_EQ(T.getLoc(3).Line, 2u); // the empty line
  EXPECT_EQ(T.getLoc(4).Line, 3u);
  EXPECT_EQ(T.getLoc(4).Col, 1u);
  EXPECT_EQ(T.getLoc(8).Line, 4u);
}

TEST(LineTableTest, OutsideTheSourceIsNone) {
  std::string Src = "ab\ncd\n";
  LineTable T(Src);
  EXPECT_FALSE(T.getOffset({}).has_value());
  EXPECT_FALSE(T.getOffset({1, 0}).has_value());
  EXPECT_FALSE(T.getOffset({3, 1}).has_value()); // the empty line after the last '\n'
  EXPECT_FALSE(T.getOffset({4, 1}).has_value());
  EXPECT_EQ(T.getOffset({2, 3}), 5u); // the last '\n'
  // Columns count bytes and run on into the next line, as before.
  EXPECT_EQ(T.getOffset({1, 4}), 3u);
  EXPECT_FALSE(T.getOffset({2, 4}).has_value());
  // Past the end: the end.
  EXPECT_EQ(T.getLoc(100).Line, 3u);
  EXPECT_EQ(T.getLoc(100).Col, 1u);
}

TEST(LineTableTest, EmptySource) {
  LineTable T("");
  EXPECT_EQ(T.getNumLines(), 1u);
  EXPECT_FALSE(T.getOffset({1, 1}).has_value());
  EXPECT_EQ(T.getLoc(0).Line, 1u);
  EXPECT_EQ(T.getLoc(0).Col, 1u);
}

} // namespace
