//===- RemoteReplyTest.cpp - What the remote tier makes of Redis's answers ===//
//
// Part of gridjit. lib/Cache/RemoteReply.h, the part of RemoteCache that
// fuzz/FuzzRedisReply.cpp fuzzes: the meaning of each kind of reply to the
// bounded GET, and the checks of a value (HMAC trailer, cache entry), on
// replies parsed by hiredis's own reader from protocol bytes.
//
//===----------------------------------------------------------------------===//

#include "Cache/RemoteReply.h"
#include "gridjit/Cache/CacheEntry.h"

#include <hiredis/read.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::remote;

namespace {

/// The first reply hiredis reads from \p Bytes, interpreted.
GetReply replyFor(std::string_view Bytes) {
  std::unique_ptr<redisReader, void (*)(redisReader *)> R(redisReaderCreate(), redisReaderFree);
  EXPECT_EQ(redisReaderFeed(R.get(), Bytes.data(), Bytes.size()), REDIS_OK);
  void *Reply = nullptr;
  EXPECT_EQ(redisReaderGetReply(R.get(), &Reply), REDIS_OK);
  EXPECT_NE(Reply, nullptr);
  if (!Reply)
    return {};
  GetReply G = interpretGetReply(*static_cast<redisReply *>(Reply));
  freeReplyObject(Reply);
  return G;
}

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

TEST(RemoteReplyTest, ReplyKinds) {
  GetReply V = replyFor(std::string_view("$5\r\na\0b\r\n\r\n", 11));
  EXPECT_EQ(V.Kind, GetReply::Found);
  EXPECT_EQ(V.Value, std::string("a\0b\r\n", 5)); // binary-safe
  GetReply O = replyFor(":123456789\r\n");
  EXPECT_EQ(O.Kind, GetReply::Oversize);
  EXPECT_EQ(O.ValueBytes, 123456789);
  EXPECT_EQ(replyFor("$-1\r\n").Kind, GetReply::Missing);
  EXPECT_EQ(replyFor("+OK\r\n").Kind, GetReply::Missing);
  EXPECT_EQ(replyFor("*1\r\n$1\r\na\r\n").Kind, GetReply::Missing);
}

TEST(RemoteReplyTest, ValueChecks) {
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

} // namespace
