//===- GuardedMemoryTest.cpp - The layout of guarded regions at the limits -===//
//
// Part of gridjit. lib/Runtime/GuardedMemory.h: a region's layout rounds
// the size asked for up to 64 bytes and to pages and adds two guards; at
// sizes near 2^64 none of that may wrap around (a region of "0 bytes" that
// a kernel then writes 2^64 bytes into), so compute() refuses them.
//
//===----------------------------------------------------------------------===//

#include "Runtime/GuardedMemory.h"

#include "gridjit/Support/Limits.h"

#include "gtest/gtest.h"

#include <cstdint>

using namespace gridjit;

namespace {

TEST(GuardedMemoryTest, LayoutsNeverWrap) {
  const uint64_t Page = pageBytes(), Guard = bufferGuardBytes();
  GuardedLayout L;
  for (uint64_t Asked : {UINT64_MAX, UINT64_MAX - 63, uint64_t(1) << 63, limits::MaxBufferBytes,
                         limits::MaxBufferBytes - Page + 1})
    EXPECT_FALSE(L.compute(Asked, Guard)) << Asked;
  // The largest that has a layout: every sum and rounding in 64 bits.
  uint64_t Largest = limits::MaxBufferBytes - Page;
  ASSERT_TRUE(L.compute(Largest, Guard));
  EXPECT_EQ(L.Bytes, Largest);
  EXPECT_EQ(L.DataBytes, Largest);
  EXPECT_EQ(L.Length, Largest + 2 * Guard);
  EXPECT_GT(L.Length, L.DataBytes);
  // The smallest: 64 bytes at the end of one page.
  ASSERT_TRUE(L.compute(0, Guard));
  EXPECT_EQ(L.Bytes, 64u);
  EXPECT_EQ(L.DataBytes, Page);
  EXPECT_EQ(L.Length, Page + 2 * Guard);
  // Rounded up to 64, then to pages.
  ASSERT_TRUE(L.compute(Page + 1, Guard));
  EXPECT_EQ(L.Bytes, Page + 64);
  EXPECT_EQ(L.DataBytes, 2 * Page);
}

} // namespace
