//===- RedisClientTest.cpp - The Redis client: pool, deadlines, handshake -===//
//
// Part of gridjit. lib/Cache/Redis/RedisClient.h against a redis-server of
// the test's own (RedisTestUtil.h; skipped where none is installed): the
// pool reuses a connection and replaces one the server closed, an error
// reply is a failure that keeps the connection, AUTH and SELECT, a hung
// server's deadline, no server at all. The SIGPIPE guard is tested through
// the whole tier (RemoteCacheTest.NoSigpipe*).
//
//===----------------------------------------------------------------------===//

#include "Cache/Redis/RedisClient.h"
#include "Cache/RedisTestUtil.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::redis;
using namespace gridjit::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

/// A client of \p URL with deadlines no loaded machine passes (the
/// deadline test shortens them).
std::unique_ptr<RedisClient> client(const std::string &URL) {
  auto U = parseRemoteCacheURL(URL);
  EXPECT_TRUE(succeeded(U));
  if (!U)
    return nullptr;
  ClientOptions O;
  O.URL = *U;
  O.ConnectTimeout = 5s;
  O.OperationTimeout = 10s;
  return std::make_unique<RedisClient>(std::move(O));
}

/// The server's id of the connection \p C runs its next command on.
long long clientId(RedisClient &C) {
  CommandResult R = C.run({"CLIENT", "ID"});
  EXPECT_EQ(R.Status, RemoteStatus::OK) << R.Why;
  return R.Reply && R.Reply->Type == redis::Reply::Integer ? R.Reply->Int : -1;
}

TEST(RedisClientTest, CommandsShareOnePooledConnection) {
  REQUIRE_REDIS();
  RedisServer S;
  auto C = client(S.url());
  CommandResult Set = C->run({"SET", "k", std::string_view("a\0b", 3)});
  ASSERT_EQ(Set.Status, RemoteStatus::OK) << Set.Why;
  CommandResult Get = C->run({"GET", "k"});
  ASSERT_EQ(Get.Status, RemoteStatus::OK);
  ASSERT_EQ(Get.Reply->Type, redis::Reply::String);
  EXPECT_EQ(Get.Reply->Str, std::string("a\0b", 3));
  long long Id = clientId(*C);
  for (int I = 0; I < 5; ++I)
    EXPECT_EQ(clientId(*C), Id);
  EXPECT_EQ(C->idleConnections(), 1u);
}

TEST(RedisClientTest, AConnectionTheServerClosedIsReplacedOnce) {
  REQUIRE_REDIS();
  RedisServer S;
  auto C = client(S.url());
  long long Id = clientId(*C);
  test::Reply Killed = S.cmd({"CLIENT", "KILL", "ID", std::to_string(Id)});
  ASSERT_TRUE(Killed && Killed->type == REDIS_REPLY_INTEGER && Killed->integer == 1);
  // The pooled connection fails at once; the command is run again on a
  // new one, and succeeds.
  CommandResult R = C->run({"PING"});
  EXPECT_EQ(R.Status, RemoteStatus::OK) << R.Why;
  EXPECT_NE(clientId(*C), Id);
}

TEST(RedisClientTest, AnErrorReplyIsAFailureThatKeepsTheConnection) {
  REQUIRE_REDIS();
  RedisServer S;
  auto C = client(S.url());
  long long Id = clientId(*C);
  CommandResult R = C->run({"NO-SUCH-COMMAND"});
  EXPECT_EQ(R.Status, RemoteStatus::Failed);
  EXPECT_FALSE(R.Reply);
  EXPECT_THAT(R.Why, HasSubstr("server error: ERR unknown command"));
  EXPECT_EQ(clientId(*C), Id);
}

TEST(RedisClientTest, HandshakeAuthAndSelect) {
  REQUIRE_REDIS();
  RedisServer S({"--requirepass", "open-sesame"});
  auto Good = client("redis+unix://:open-sesame@" + S.socketPath() + "?db=3");
  ASSERT_EQ(Good->run({"SET", "in-db-3", "yes"}).Status, RemoteStatus::OK);
  test::Reply InDb0 = S.cmd({"EXISTS", "in-db-3"}); // unauthenticated: refused
  EXPECT_TRUE(InDb0 && InDb0->type == REDIS_REPLY_ERROR);
  auto Zero = client("redis+unix://default:open-sesame@" + S.socketPath());
  CommandResult Missing = Zero->run({"EXISTS", "in-db-3"});
  ASSERT_EQ(Missing.Status, RemoteStatus::OK);
  EXPECT_EQ(Missing.Reply->Int, 0); // it is in database 3, not 0

  auto Wrong = client("redis+unix://:wrong@" + S.socketPath());
  CommandResult R = Wrong->run({"PING"});
  EXPECT_EQ(R.Status, RemoteStatus::Failed);
  EXPECT_THAT(R.Why, HasSubstr("AUTH: "));
  EXPECT_EQ(Wrong->idleConnections(), 0u); // a failed handshake keeps nothing
}

TEST(RedisClientTest, AHungServerTimesOut) {
  REQUIRE_REDIS();
  RedisServer S;
  auto U = parseRemoteCacheURL(S.url());
  ASSERT_TRUE(succeeded(U));
  ClientOptions O;
  O.URL = *U;
  O.ConnectTimeout = 200ms;
  O.OperationTimeout = 200ms;
  RedisClient C(O);
  ASSERT_EQ(C.run({"PING"}).Status, RemoteStatus::OK);
  S.signal(SIGSTOP);
  CommandResult R = C.run({"PING"}); // returns: the deadline holds
  S.signal(SIGCONT);
  EXPECT_EQ(R.Status, RemoteStatus::TimedOut) << R.Why;
  EXPECT_THAT(R.Why, HasSubstr("timed out: "));
  EXPECT_EQ(C.idleConnections(), 0u); // never reused: a late reply is not read
  EXPECT_EQ(C.run({"PING"}).Status, RemoteStatus::OK);
}

TEST(RedisClientTest, NoServer) {
  TempDir D;
  auto C = client("redis+unix://" + D.file("nobody.sock"));
  CommandResult R = C->run({"PING"});
  EXPECT_EQ(R.Status, RemoteStatus::Failed);
  EXPECT_THAT(R.Why, HasSubstr("cannot connect: "));
}

} // namespace
