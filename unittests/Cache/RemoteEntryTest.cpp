//===- RemoteEntryTest.cpp - What the remote tier stores under a key ------===//
//
// Part of gridjit. lib/Cache/RemoteEntry.h, the part of the remote tier that
// fuzz/FuzzRedisReply.cpp fuzzes after hiredis: a value is written as the
// entry and its tag, and read back only when the tag (with a secret) and
// the entry check out.
//
//===----------------------------------------------------------------------===//

#include "Cache/RemoteEntry.h"
#include "gridjit/Cache/CacheEntry.h"

#include <string>

#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::remote;

namespace {

CacheKey key(uint8_t Fill) {
  CacheKey K;
  K.Bytes.fill(Fill);
  return K;
}

std::string entry(const CacheKey &K) {
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Arch = "x86-64";
  A.Payload = "payload";
  KernelInfo KI;
  KI.Name = "k";
  A.Kernels.push_back(KI);
  return encodeCacheEntry(K, A);
}

std::string tagged(std::string_view Secret, const CacheKey &K, std::string Entry) {
  std::array<uint8_t, 32> T = valueTag(Secret, K, Entry);
  Entry.append(TagMagic);
  Entry.append(reinterpret_cast<const char *>(T.data()), T.size());
  return Entry;
}

TEST(RemoteEntryTest, ValueChecks) {
  CacheKey K = key(7);
  std::string E = entry(K);
  std::string Problem;
  ValueProblem Why;
  // Without a secret: the entry alone; a trailer is ignored.
  EXPECT_TRUE(validateRemoteValue("", K, E, Problem, Why).has_value());
  EXPECT_EQ(Why, ValueProblem::None);
  EXPECT_TRUE(validateRemoteValue("", K, tagged("s3cret", K, E), Problem, Why).has_value());
  // With a secret: the right tag is required.
  EXPECT_TRUE(validateRemoteValue("s3cret", K, tagged("s3cret", K, E), Problem, Why));
  EXPECT_FALSE(validateRemoteValue("s3cret", K, E, Problem, Why));
  EXPECT_EQ(Why, ValueProblem::Auth);
  EXPECT_EQ(Problem, "the value has no HMAC tag");
  EXPECT_FALSE(validateRemoteValue("s3cret", K, tagged("other", K, E), Problem, Why));
  EXPECT_EQ(Why, ValueProblem::Auth);
  EXPECT_EQ(Problem, "the value's HMAC tag does not match");
  // A tag made for another key does not authenticate this one.
  EXPECT_FALSE(validateRemoteValue("s3cret", K, tagged("s3cret", key(8), E), Problem, Why));
  EXPECT_EQ(Why, ValueProblem::Auth);
  // Authentic but not this key's entry, or damaged: a bad entry.
  CacheKey Other = key(9);
  EXPECT_FALSE(validateRemoteValue("s3cret", K, tagged("s3cret", K, entry(Other)), Problem, Why));
  EXPECT_EQ(Why, ValueProblem::BadEntry);
  EXPECT_NE(Problem.find("another key"), std::string::npos) << Problem;
  EXPECT_FALSE(validateRemoteValue("", K, E.substr(0, E.size() - 1), Problem, Why));
  EXPECT_EQ(Why, ValueProblem::BadEntry);
  EXPECT_FALSE(validateRemoteValue("", K, "", Problem, Why));
  EXPECT_EQ(Why, ValueProblem::BadEntry);
}

TEST(RemoteEntryTest, EncodedValuesRoundTrip) {
  CacheKey K = key(3);
  Artifact A;
  A.Kind = TargetKind::NVPTX;
  A.Arch = "sm_80";
  A.Payload = std::string("ptx\0with a NUL", 14);
  for (std::string_view Secret : {std::string_view(), std::string_view("0123456789abcdef")}) {
    std::string V = encodeRemoteValue(Secret, K, A);
    EXPECT_EQ(V.size(), encodeCacheEntry(K, A).size() + (Secret.empty() ? 0 : TagTrailerSize));
    std::string Problem;
    ValueProblem Why;
    std::optional<Artifact> Back = validateRemoteValue(Secret, K, V, Problem, Why);
    ASSERT_TRUE(Back) << Problem;
    EXPECT_EQ(Back->Payload, A.Payload);
    EXPECT_EQ(Back->Arch, "sm_80");
  }
}

} // namespace
