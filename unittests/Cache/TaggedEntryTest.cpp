//===- TaggedEntryTest.cpp - Cache entries authenticated by a secret ------===//
//
// Part of gridjit. lib/Cache/TaggedEntry.h, what the remote and the disk
// tier store (and fuzz/FuzzRedisReply.cpp and fuzz/FuzzCacheEntry.cpp
// fuzz): a value is written as the entry and its tag, and read back only
// when the tag (with a secret), the entry and its target check out; a tag
// made for one tier does not authenticate the other's.
//
//===----------------------------------------------------------------------===//

#include "Cache/TaggedEntry.h"
#include "gridjit/Cache/CacheEntry.h"

#include <string>

#include "gtest/gtest.h"

using namespace gridjit;

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

std::string tagged(std::string_view Secret, const CacheKey &K, std::string Entry,
                   TagContext C = TagContext::Remote) {
  std::array<uint8_t, 32> T = entryTag(Secret, C, K, Entry);
  Entry.append(TagMagic);
  Entry.append(reinterpret_cast<const char *>(T.data()), T.size());
  return Entry;
}

/// validateTaggedEntry as the remote tier calls it (any target).
std::optional<Artifact> validate(std::string_view Secret, const CacheKey &K, std::string_view Value,
                                 std::string &Problem, EntryProblem &Why) {
  return validateTaggedEntry(Secret, TagContext::Remote, K, Value, nullptr, Problem, Why);
}

TEST(TaggedEntryTest, ValueChecks) {
  CacheKey K = key(7);
  std::string E = entry(K);
  std::string Problem;
  EntryProblem Why;
  // Without a secret: the entry alone; a trailer is ignored.
  EXPECT_TRUE(validate("", K, E, Problem, Why).has_value());
  EXPECT_EQ(Why, EntryProblem::None);
  EXPECT_TRUE(validate("", K, tagged("s3cret", K, E), Problem, Why).has_value());
  // With a secret: the right tag is required.
  EXPECT_TRUE(validate("s3cret", K, tagged("s3cret", K, E), Problem, Why));
  EXPECT_FALSE(validate("s3cret", K, E, Problem, Why));
  EXPECT_EQ(Why, EntryProblem::Auth);
  EXPECT_EQ(Problem, "the value has no HMAC tag");
  EXPECT_FALSE(validate("s3cret", K, tagged("other", K, E), Problem, Why));
  EXPECT_EQ(Why, EntryProblem::Auth);
  EXPECT_EQ(Problem, "the value's HMAC tag does not match");
  // A tag made for another key does not authenticate this one.
  EXPECT_FALSE(validate("s3cret", K, tagged("s3cret", key(8), E), Problem, Why));
  EXPECT_EQ(Why, EntryProblem::Auth);
  // Authentic but not this key's entry, or damaged: a bad entry.
  CacheKey Other = key(9);
  EXPECT_FALSE(validate("s3cret", K, tagged("s3cret", K, entry(Other)), Problem, Why));
  EXPECT_EQ(Why, EntryProblem::BadEntry);
  EXPECT_NE(Problem.find("another key"), std::string::npos) << Problem;
  EXPECT_FALSE(validate("", K, E.substr(0, E.size() - 1), Problem, Why));
  EXPECT_EQ(Why, EntryProblem::BadEntry);
  EXPECT_FALSE(validate("", K, "", Problem, Why));
  EXPECT_EQ(Why, EntryProblem::BadEntry);
}

TEST(TaggedEntryTest, EncodedValuesRoundTrip) {
  CacheKey K = key(3);
  Artifact A;
  A.Kind = TargetKind::NVPTX;
  A.Arch = "sm_80";
  A.Payload = std::string("ptx\0with a NUL", 14);
  for (std::string_view Secret : {std::string_view(), std::string_view("0123456789abcdef")}) {
    std::string V = encodeTaggedEntry(Secret, TagContext::Remote, K, A);
    EXPECT_EQ(V.size(), encodeCacheEntry(K, A).size() + (Secret.empty() ? 0 : TagTrailerSize));
    std::string Problem;
    EntryProblem Why;
    std::optional<Artifact> Back = validate(Secret, K, V, Problem, Why);
    ASSERT_TRUE(Back) << Problem;
    EXPECT_EQ(Back->Payload, A.Payload);
    EXPECT_EQ(Back->Arch, "sm_80");
  }
}

// A tag names its tier: a value tagged for the remote tier is not an
// authentic disk entry (nor the other way round), though the secret is
// the same.
TEST(TaggedEntryTest, ATagAuthenticatesOnlyItsOwnTier) {
  CacheKey K = key(5);
  std::string E = entry(K);
  std::string Problem;
  EntryProblem Why;
  for (TagContext C : {TagContext::Remote, TagContext::Disk}) {
    TagContext Other = C == TagContext::Remote ? TagContext::Disk : TagContext::Remote;
    EXPECT_TRUE(
        validateTaggedEntry("s3cret", C, K, tagged("s3cret", K, E, C), nullptr, Problem, Why));
    EXPECT_FALSE(
        validateTaggedEntry("s3cret", C, K, tagged("s3cret", K, E, Other), nullptr, Problem, Why));
    EXPECT_EQ(Why, EntryProblem::Auth);
  }
  EXPECT_NE(entryTag("s3cret", TagContext::Disk, K, E),
            entryTag("s3cret", TagContext::Remote, K, E));
}

// A valid (and authentic) entry for another target or architecture under
// the key is a bad entry when the caller says what it wants: the key
// covers both, so no gridjit wrote it there.
TEST(TaggedEntryTest, AnotherTargetsEntryIsABadEntry) {
  CacheKey K = key(6);
  std::string E = entry(K); // host, x86-64
  std::string Problem;
  EntryProblem Why;
  ArtifactMatch Host{TargetKind::Host, "x86-64"}, Znver{TargetKind::Host, "znver4"},
      Ptx{TargetKind::NVPTX, "x86-64"};
  EXPECT_TRUE(validateTaggedEntry("", TagContext::Disk, K, E, &Host, Problem, Why));
  for (const ArtifactMatch *W : {&Znver, &Ptx}) {
    EXPECT_FALSE(validateTaggedEntry("", TagContext::Disk, K, E, W, Problem, Why));
    EXPECT_EQ(Why, EntryProblem::BadEntry);
  }
  EXPECT_EQ(Problem, "the entry is for target 'host' (x86-64), not 'nvptx' (x86-64)");
}

} // namespace
