//===- HMACTest.cpp - HMAC-SHA256 against RFC 4231 ------------------------===//
//
// Part of gridjit. include/gridjit/Support/HMAC.h: HMAC-SHA256 against the
// RFC's own test vectors, and the tag comparison.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/HMAC.h"

#include "llvm/ADT/StringExtras.h"

#include "gtest/gtest.h"

#include <string>

using namespace gridjit;

namespace {

std::string hex(std::array<uint8_t, 32> D) { return llvm::toHex(D, /*LowerCase=*/true); }

TEST(HMACTest, MatchesRFC4231) {
  EXPECT_EQ(hex(hmacSHA256(std::string(20, '\x0b'), "Hi There")),
            "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7");
  EXPECT_EQ(hex(hmacSHA256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
  // Test case 6: a key longer than the block is hashed first.
  EXPECT_EQ(hex(hmacSHA256(std::string(131, '\xaa'),
                           "Test Using Larger Than Block-Size Key - Hash Key First")),
            "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54");
}

TEST(HMACTest, TagsEqual) {
  std::array<uint8_t, 32> Tag = hmacSHA256("key", "data");
  std::string Same(reinterpret_cast<const char *>(Tag.data()), Tag.size());
  EXPECT_TRUE(tagsEqual(Same, Tag));
  for (size_t I : {size_t(0), size_t(17), size_t(31)}) {
    std::string Other = Same;
    Other[I] ^= 1;
    EXPECT_FALSE(tagsEqual(Other, Tag)) << "byte " << I;
  }
  EXPECT_FALSE(tagsEqual(Same.substr(0, 31), Tag));
  EXPECT_FALSE(tagsEqual(Same + "x", Tag));
}

} // namespace
