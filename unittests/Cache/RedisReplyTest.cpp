//===- RedisReplyTest.cpp - What a Redis reply to a bounded read means ----===//
//
// Part of gridjit. lib/Cache/Redis/RedisReply.h, on replies parsed by
// hiredis's own reader from protocol bytes: the meaning of each kind of
// reply to the bounded read.
//
//===----------------------------------------------------------------------===//

#include "Cache/Redis/RedisReply.h"

#include <hiredis/read.h>

#include <memory>
#include <string>

#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::redis;

namespace {

/// The first reply hiredis reads from \p Bytes, interpreted.
StoredValue replyFor(std::string_view Bytes) {
  std::unique_ptr<redisReader, void (*)(redisReader *)> R(redisReaderCreate(), redisReaderFree);
  EXPECT_EQ(redisReaderFeed(R.get(), Bytes.data(), Bytes.size()), REDIS_OK);
  void *Reply = nullptr;
  EXPECT_EQ(redisReaderGetReply(R.get(), &Reply), REDIS_OK);
  EXPECT_NE(Reply, nullptr);
  if (!Reply)
    return {};
  StoredValue G = interpretGetReply(*static_cast<redisReply *>(Reply));
  freeReplyObject(Reply);
  return G;
}

TEST(RedisReplyTest, ReplyKinds) {
  StoredValue V = replyFor(std::string_view("$5\r\na\0b\r\n\r\n", 11));
  EXPECT_EQ(V.Kind, StoredValue::Found);
  EXPECT_EQ(V.Bytes, std::string("a\0b\r\n", 5)); // binary-safe
  StoredValue O = replyFor(":123456789\r\n");
  EXPECT_EQ(O.Kind, StoredValue::Oversize);
  EXPECT_EQ(O.Size, 123456789u);
  EXPECT_EQ(replyFor("$-1\r\n").Kind, StoredValue::Missing);
  EXPECT_EQ(replyFor("+OK\r\n").Kind, StoredValue::Missing);
  EXPECT_EQ(replyFor("*1\r\n$1\r\na\r\n").Kind, StoredValue::Missing);
}

} // namespace
