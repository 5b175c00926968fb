//===- ExtensibleStructTest.cpp - The rule by which C structs grow --------===//
//
// Part of gridjit. lib/CAPI/ExtensibleStruct.h at the boundary sizes: a
// struct of this library's size, one of the oldest accepted, one between,
// smaller than the oldest, not a multiple of 8; larger with a zero tail,
// with its last byte or its first unknown byte set; reserved bytes inside
// this library's size; and what is written into a caller's struct, never
// beyond its size.
//
//===----------------------------------------------------------------------===//

#include "CAPI/ExtensibleStruct.h"
#include "TestSupport.h"

#include "gtest/gtest.h"

#include <array>
#include <cstdint>
#include <cstring>
#include <vector>

using namespace gridjit;
using namespace gridjit::capi;
using namespace gridjit::test;

namespace {

/// A struct of 32 bytes whose version 1 had 16; the last 8 are reserved.
constexpr StructLayout L = {"gj_test", 16, 24, 32};

/// \p N bytes counting up from 1, then 8 bytes of 0xee to catch writes
/// beyond the size.
std::array<unsigned char, 64> caller(size_t N) {
  std::array<unsigned char, 64> A;
  A.fill(0xee);
  for (size_t I = 0; I < N; ++I)
    A[I] = static_cast<unsigned char>(I + 1);
  return A;
}

TEST(ExtensibleStructTest, SizesAccepted) {
  for (size_t N : {16, 24, 32, 40, 56})
    EXPECT_TRUE(succeeded(checkStructSize(L, N, "struct_size"))) << N;
  EXPECT_EQ(errorText(checkStructSize(L, 8, "struct_size")),
            "gj_test has 8 bytes (struct_size), fewer than the 16 of its first version (set "
            "struct_size to its sizeof)");
  EXPECT_EQ(errorText(checkStructSize(L, 0, "arg_size")),
            "gj_test has 0 bytes (arg_size), fewer than the 16 of its first version (set "
            "arg_size to its sizeof)");
  EXPECT_EQ(errorText(checkStructSize(L, 20, "struct_size")),
            "gj_test has 20 bytes (struct_size), not a multiple of 8 as every version's size is "
            "(set struct_size to its sizeof)");
}

// A size beyond MaxStructBytes is refused before a byte is read or
// written: at 2^64 - 1, 2^63, 2^64 - 8 (a multiple of 8: written as zeros
// before) and MaxStructBytes + 8; MaxStructBytes itself is accepted.
TEST(ExtensibleStructTest, SizesAreBounded) {
  for (size_t N : {SIZE_MAX, size_t(1) << 63, SIZE_MAX - 7, MaxStructBytes + 8}) {
    EXPECT_EQ(errorText(checkStructSize(L, N, "struct_size")),
              "gj_test has " + std::to_string(N) +
                  " bytes (struct_size), more than the limit of 4096 for any version of a struct "
                  "of this API (set struct_size to its sizeof)");
    std::array<unsigned char, 64> Buf;
    Buf.fill(0xee);
    unsigned char Src[32] = {};
    EXPECT_TRUE(failed(copyStructOut(L, Src, Buf.data(), N, "struct_size")));
    EXPECT_TRUE(failed(copyStructIn(L, Buf.data(), N, "struct_size", Src)));
    for (unsigned char B : Buf)
      EXPECT_EQ(B, 0xee);
  }
  std::vector<unsigned char> Largest(MaxStructBytes, 0);
  std::array<unsigned char, 32> Out;
  Out.fill(0xd0);
  EXPECT_TRUE(
      succeeded(copyStructIn(L, Largest.data(), MaxStructBytes, "struct_size", Out.data())));
}

TEST(ExtensibleStructTest, ReadingASmallerStructKeepsTheDefaults) {
  for (size_t N : {16, 24}) {
    auto In = caller(N);
    std::array<unsigned char, 32> Out;
    Out.fill(0xd0); // the defaults
    ASSERT_TRUE(succeeded(copyStructIn(L, In.data(), N, "struct_size", Out.data())));
    for (size_t I = 0; I < 32; ++I)
      EXPECT_EQ(Out[I], I < N ? I + 1 : 0xd0) << N << " " << I;
  }
}

TEST(ExtensibleStructTest, ReadingAStructOfThisSizeNeedsZeroReservedBytes) {
  auto In = caller(24);
  std::fill(In.begin() + 24, In.begin() + 32, 0);
  std::array<unsigned char, 32> Out;
  Out.fill(0xd0);
  ASSERT_TRUE(succeeded(copyStructIn(L, In.data(), 32, "struct_size", Out.data())));
  for (size_t I = 0; I < 32; ++I)
    EXPECT_EQ(Out[I], I < 24 ? I + 1 : 0xd0) << I;
  In[31] = 1;
  Out.fill(0xd0);
  EXPECT_EQ(errorText(copyStructIn(L, In.data(), 32, "struct_size", Out.data())),
            "gj_test has 32 bytes (struct_size) and this library knows 24: byte 31 is not zero, "
            "a field this library does not have");
  for (unsigned char B : Out)
    EXPECT_EQ(B, 0xd0); // unchanged on error
}

TEST(ExtensibleStructTest, ReadingALargerStructNeedsAZeroTail) {
  auto In = caller(24);
  std::fill(In.begin() + 24, In.begin() + 48, 0);
  std::array<unsigned char, 32> Out;
  EXPECT_TRUE(succeeded(copyStructIn(L, In.data(), 48, "struct_size", Out.data())));
  In[32] = 9; // the first byte beyond this library's size
  EXPECT_EQ(errorText(copyStructIn(L, In.data(), 48, "struct_size", Out.data())),
            "gj_test has 48 bytes (struct_size) and this library knows 24: byte 32 is not zero, "
            "a field this library does not have");
  In[32] = 0;
  In[47] = 9; // the caller's last byte
  EXPECT_EQ(errorText(copyStructIn(L, In.data(), 48, "struct_size", Out.data())),
            "gj_test has 48 bytes (struct_size) and this library knows 24: byte 47 is not zero, "
            "a field this library does not have");
}

TEST(ExtensibleStructTest, WritingStopsAtTheCallersSize) {
  std::array<unsigned char, 32> Full;
  for (size_t I = 0; I < 32; ++I)
    Full[I] = static_cast<unsigned char>(0x80 + I);
  for (size_t N : {16, 24, 32, 40, 48}) {
    std::array<unsigned char, 64> Out;
    Out.fill(0xee);
    ASSERT_TRUE(succeeded(copyStructOut(L, Full.data(), Out.data(), N, "struct_size")));
    for (size_t I = 0; I < 64; ++I)
      EXPECT_EQ(Out[I], I < std::min<size_t>(N, 32) ? 0x80 + I : I < N ? 0 : 0xee) << N << " " << I;
  }
  std::array<unsigned char, 64> Out;
  Out.fill(0xee);
  EXPECT_EQ(errorText(copyStructOut(L, Full.data(), Out.data(), 20, "size")),
            "gj_test has 20 bytes (size), not a multiple of 8 as every version's size is (set "
            "size to its sizeof)");
  for (unsigned char B : Out)
    EXPECT_EQ(B, 0xee);
}

} // namespace
