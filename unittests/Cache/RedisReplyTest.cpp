//===- RedisReplyTest.cpp - Redis replies, read within bounds -------------===//
//
// Part of gridjit. lib/Cache/Redis/RedisReply.h: the parser of the
// client's replies (every kind of reply, binary-safe; what a beginning
// needs; garbage), its bounds (a bulk string, an array, a line, nesting:
// each refused when its header is read, before what it announces has
// arrived), and the meaning of each kind of reply to the bounded read.
//
//===----------------------------------------------------------------------===//

#include "Cache/Redis/RedisReply.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <string>

using namespace gridjit;
using namespace gridjit::redis;
using ::testing::HasSubstr;

namespace {

ReplyLimits limits() {
  ReplyLimits L;
  L.MaxReplyBytes = 1 << 20;
  return L;
}

/// \p Bytes parsed as one whole reply.
Reply parsed(std::string_view Bytes) {
  Reply R;
  size_t Used = 0;
  std::string Why;
  EXPECT_EQ(parseReply(Bytes, limits(), R, Used, Why), ParseStatus::Complete) << Why;
  EXPECT_EQ(Used, Bytes.size());
  return R;
}

/// Why \p Bytes (the beginning of a reply, or all of one) is refused.
std::string refused(std::string_view Bytes, const ReplyLimits &L = limits()) {
  Reply R;
  size_t Used = 0;
  std::string Why;
  EXPECT_EQ(parseReply(Bytes, L, R, Used, Why), ParseStatus::Bad)
      << "accepted: " << Bytes.substr(0, 40);
  return Why;
}

TEST(RedisReplyTest, EveryKindOfReply) {
  Reply S = parsed(std::string_view("$5\r\na\0b\r\n\r\n", 11));
  EXPECT_EQ(S.Type, Reply::String);
  EXPECT_EQ(S.Str, std::string("a\0b\r\n", 5)); // binary-safe
  EXPECT_EQ(parsed("$0\r\n\r\n").Str, "");
  EXPECT_EQ(parsed("+OK\r\n").Type, Reply::Status);
  Reply E = parsed("-ERR unknown command\r\n");
  EXPECT_EQ(E.Type, Reply::Error);
  EXPECT_EQ(E.Str, "ERR unknown command");
  EXPECT_EQ(parsed(":-42\r\n").Int, -42);
  EXPECT_EQ(parsed(":9223372036854775807\r\n").Int, INT64_MAX);
  EXPECT_EQ(parsed(":-9223372036854775808\r\n").Int, INT64_MIN);
  EXPECT_EQ(parsed("$-1\r\n").Type, Reply::Nil);
  EXPECT_EQ(parsed("*-1\r\n").Type, Reply::Nil);
  Reply A = parsed("*3\r\n$1\r\na\r\n:7\r\n*1\r\n+x\r\n");
  ASSERT_EQ(A.Type, Reply::Array);
  ASSERT_EQ(A.Elements.size(), 3u);
  EXPECT_EQ(A.Elements[0].Str, "a");
  EXPECT_EQ(A.Elements[1].Int, 7);
  EXPECT_EQ(A.Elements[2].Elements[0].Str, "x");
}

// Every proper beginning of a reply is incomplete, and says how many bytes
// it needs at least: more than it has, never more than the whole reply.
TEST(RedisReplyTest, ABeginningNeedsMore) {
  for (std::string_view Whole :
       {std::string_view("$5\r\nhello\r\n"), std::string_view("*2\r\n:1\r\n$3\r\nabc\r\n"),
        std::string_view("-ERR no\r\n")}) {
    for (size_t N = 0; N < Whole.size(); ++N) {
      Reply R;
      size_t Need = 0;
      std::string Why;
      ASSERT_EQ(parseReply(Whole.substr(0, N), limits(), R, Need, Why), ParseStatus::Incomplete)
          << Whole << " cut at " << N;
      EXPECT_GT(Need, N);
      EXPECT_LE(Need, Whole.size());
    }
  }
  // A bulk string's header says how much is coming.
  Reply R;
  size_t Need = 0;
  std::string Why;
  ASSERT_EQ(parseReply("$1000\r\nabc", limits(), R, Need, Why), ParseStatus::Incomplete);
  EXPECT_EQ(Need, 7u + 1000u + 2u); // header, bytes, CRLF
}

// What a server announces is checked when its header is read: nothing it
// announces needs to arrive (or be buffered) for the reply to be refused.
TEST(RedisReplyTest, AnnouncedSizesOverTheLimitsAreRefusedAtTheHeader) {
  EXPECT_THAT(refused("$10000000000\r\n"),
              HasSubstr("a bulk string of 10000000000 bytes, over the limit of 1048576 bytes"));
  // At the boundary: the largest bulk string that fits, and one byte more.
  ReplyLimits L = limits();
  std::string Header = "$" + std::to_string(L.MaxReplyBytes - 10 - 2) + "\r\n";
  ASSERT_EQ(Header.size(), 10u);
  Reply R;
  size_t Need = 0;
  std::string Why;
  EXPECT_EQ(parseReply(Header, L, R, Need, Why), ParseStatus::Incomplete);
  EXPECT_EQ(Need, L.MaxReplyBytes);
  Header = "$" + std::to_string(L.MaxReplyBytes - 10 - 2 + 1) + "\r\n";
  EXPECT_THAT(refused(Header, L), HasSubstr("over the limit"));

  EXPECT_THAT(refused("*200000000\r\n"),
              HasSubstr("an array of 200000000 elements, over the limit of 64"));
  EXPECT_EQ(parsed(std::string("*64\r\n") +
                   [] {
                     std::string S;
                     for (int I = 0; I < 64; ++I)
                       S += ":1\r\n";
                     return S;
                   }())
                .Elements.size(),
            64u);
  EXPECT_THAT(refused("*65\r\n"), HasSubstr("an array of 65 elements"));
  EXPECT_THAT(refused("*1\r\n*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n"), HasSubstr("nested more than 4"));
  // Elements count towards the reply's bound too.
  EXPECT_THAT(refused("*2\r\n$600000\r\n" + std::string(600000, 'a') + "\r\n$600000\r\n"),
              HasSubstr("over the limit"));
}

// A line (status, error, integer, header: what follows the type byte, and
// its CRLF) whose end does not come within the bound is refused as soon as
// the bound is passed, not read on.
TEST(RedisReplyTest, ALineWithoutEndIsRefusedAtTheBound) {
  ReplyLimits L = limits();
  std::string Long = "+" + std::string(L.MaxLineBytes, 'A');
  EXPECT_THAT(refused(Long), HasSubstr("a line of more than 65536 bytes"));
  // Just within: a line of exactly MaxLineBytes with its CRLF.
  std::string Fits = "+" + std::string(L.MaxLineBytes - 2, 'A') + "\r\n";
  EXPECT_EQ(parsed(Fits).Str.size(), L.MaxLineBytes - 2);
  EXPECT_THAT(refused("+" + std::string(L.MaxLineBytes - 1, 'A') + "\r\n"),
              HasSubstr("a line of more than"));
  EXPECT_THAT(refused("$" + std::string(L.MaxLineBytes, '1')), HasSubstr("a line of more than"));
}

TEST(RedisReplyTest, GarbageIsRefused) {
  EXPECT_THAT(refused("%1\r\n+a\r\n+b\r\n"), HasSubstr("type byte 0x25")); // RESP3 map
  EXPECT_THAT(refused("_\r\n"), HasSubstr("type byte 0x5f"));              // RESP3 null
  EXPECT_THAT(refused("HTTP/1.1 400 Bad Request\r\n"), HasSubstr("type byte 0x48"));
  EXPECT_THAT(refused(":12a\r\n"), HasSubstr("an integer that is not a number"));
  EXPECT_THAT(refused(":9223372036854775808\r\n"), HasSubstr("not a number"));
  EXPECT_THAT(refused(":\r\n"), HasSubstr("not a number"));
  EXPECT_THAT(refused("$-2\r\n"), HasSubstr("negative length"));
  EXPECT_THAT(refused("*-5\r\n"), HasSubstr("negative count"));
  EXPECT_THAT(refused("$3\r\nabcXY"), HasSubstr("not followed by CRLF"));
}

TEST(RedisReplyTest, WhatTheBoundedReadGets) {
  StoredValue V = interpretGetReply(parsed(std::string_view("$5\r\na\0b\r\n\r\n", 11)));
  EXPECT_EQ(V.Kind, StoredValue::Found);
  EXPECT_EQ(V.Bytes, std::string("a\0b\r\n", 5));
  StoredValue O = interpretGetReply(parsed(":123456789\r\n"));
  EXPECT_EQ(O.Kind, StoredValue::Oversize);
  EXPECT_EQ(O.Size, 123456789u);
  EXPECT_EQ(interpretGetReply(parsed("$-1\r\n")).Kind, StoredValue::Missing);
  EXPECT_EQ(interpretGetReply(parsed("+OK\r\n")).Kind, StoredValue::Missing);
  EXPECT_EQ(interpretGetReply(parsed("*1\r\n$1\r\na\r\n")).Kind, StoredValue::Missing);
}

} // namespace
