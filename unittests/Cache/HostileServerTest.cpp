//===- HostileServerTest.cpp - The remote tier against a hostile server ---===//
//
// Part of gridjit. What no real Redis does, from fake servers of the
// test's own (ScriptedServer, RedisTestUtil.h), through the whole remote
// tier (RemoteCache over the Redis client), asserting results, counters
// and "returns before a generous bound", never durations:
//
// * the deadline bounds the whole request: a server that
//   trickles its reply a byte at a time, one that trickles the AUTH
//   handshake, one that reads the command a byte at a time, and one that
//   streams a line without end are each cut off, and the breaker counts it;
// * every reply is bounded before it is read: a server that
//   announces a 10 GB bulk string, or an array of 2 x 10^8 elements, and
//   then streams data is refused at the header, counted as a bad reply,
//   and this process's peak memory does not grow by what it announced (or
//   sent).
//
// A request that does not return within the bound fails the test, and the
// server is then stopped, which ends the request, so a regression fails
// rather than hangs.
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "Cache/RedisTestUtil.h"
#include "gridjit/Cache/RemoteCache.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <fstream>
#include <future>
#include <sstream>

using namespace gridjit;
using namespace gridjit::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

/// Far beyond any deadline of these tests, on any machine: a hang bound.
constexpr auto Bound = std::chrono::seconds(60);

/// Deadlines far below the bound.
RemoteCacheOptions options(const std::string &URL) {
  RemoteCacheOptions O;
  O.URL = URL;
  O.ConnectTimeout = 200ms;
  O.OperationTimeout = 300ms;
  O.BreakerThreshold = 1;
  O.BreakerCooldown = 60s;
  O.LeaseTime = 0ms;
  return O;
}

/// Sends \p Byte every 2 ms until the connection or the server ends.
void trickle(int FD, const std::atomic<bool> &Stop, char Byte = 'x') {
  while (ScriptedServer::send(FD, std::string_view(&Byte, 1), Stop))
    std::this_thread::sleep_for(2ms);
}

/// Sends \p Unit over and over, \p Total bytes in all (at full speed).
bool flood(int FD, const std::atomic<bool> &Stop, std::string_view Unit, size_t Total) {
  std::string Chunk;
  while (Chunk.size() < (64 << 10))
    Chunk += Unit;
  for (size_t Sent = 0; Sent < Total; Sent += Chunk.size())
    if (!ScriptedServer::send(FD, Chunk, Stop))
      return false;
  return true;
}

/// Runs \p Op (an operation on the tier) and returns its result, failing
/// the test when it is not back within the bound; the server is then
/// stopped, which ends it.
template <typename T> T withinBound(ScriptedServer &S, std::function<T()> Op) {
  auto F = std::async(std::launch::async, std::move(Op));
  if (F.wait_for(Bound) != std::future_status::ready) {
    ADD_FAILURE() << "the request did not return within " << Bound.count()
                  << " s: its deadline does not bound it";
    S.stop();
  }
  return F.get();
}

/// A lookup of some key on \p RC: its problem (empty for a hit or a plain
/// miss).
std::string lookupProblem(ScriptedServer &S, RemoteCache &RC) {
  return withinBound<std::string>(S, [&] {
    std::string Problem;
    EXPECT_FALSE(RC.lookup(testKey("hostile", 1), &Problem));
    return Problem;
  });
}

std::unique_ptr<RemoteCache> tier(const RemoteCacheOptions &O) {
  auto RC = RemoteCache::create(O);
  EXPECT_TRUE(succeeded(RC));
  return RC ? std::move(*RC) : nullptr;
}

TEST(HostileServerTest, ATrickledReplyIsCutOffByTheDeadline) {
  TempDir D;
  ScriptedServer S(D.file("s"), [](int FD, const std::atomic<bool> &Stop) {
    ScriptedServer::readSome(FD);
    if (ScriptedServer::send(FD, "$100000\r\n", Stop))
      trickle(FD, Stop); // each read() gets a byte long before any deadline
  });
  auto RC = tier(options("redis+unix://" + D.file("s")));
  std::string Problem = lookupProblem(S, *RC);
  EXPECT_THAT(Problem, HasSubstr("timed out: reading the reply"));
  RemoteCacheStats St = RC->getStats();
  EXPECT_EQ(St.Timeouts, 1u);
  EXPECT_EQ(St.BreakerTrips, 1u); // a timeout opens the breaker at once
  EXPECT_TRUE(RC->isBreakerOpen());
  // While it is open, the server is not asked again.
  int Before = S.accepted();
  EXPECT_FALSE(RC->lookup(testKey("hostile", 2)));
  EXPECT_EQ(S.accepted(), Before);
  EXPECT_EQ(RC->getStats().Timeouts, 1u);
}

TEST(HostileServerTest, ALineWithoutEndIsCutOff) {
  TempDir D;
  ScriptedServer S(D.file("s"), [](int FD, const std::atomic<bool> &Stop) {
    ScriptedServer::readSome(FD);
    // A status line that never ends: fast at first (more than any line
    // may hold; a bounded amount, so a regression fails instead of eating
    // the machine's memory), then forever a byte at a time.
    if (ScriptedServer::send(FD, "+", Stop) && flood(FD, Stop, "A", size_t(64) << 20))
      trickle(FD, Stop, 'A');
  });
  auto RC = tier(options("redis+unix://" + D.file("s")));
  std::string Problem = lookupProblem(S, *RC);
  EXPECT_THAT(Problem, HasSubstr("bad reply: a line of more than 65536 bytes"));
  RemoteCacheStats St = RC->getStats();
  EXPECT_EQ(St.BadReplies, 1u);
  EXPECT_EQ(St.Errors + St.Timeouts, 0u);
  EXPECT_EQ(St.BreakerTrips, 1u); // BreakerThreshold 1: the bad reply counted
}

// The handshake (AUTH, before the command) is inside the same deadline.
TEST(HostileServerTest, ATrickledHandshakeIsCutOffByTheDeadline) {
  TempDir D;
  ScriptedServer S(D.file("s"), [](int FD, const std::atomic<bool> &Stop) {
    ScriptedServer::readSome(FD);
    trickle(FD, Stop, '+'); // "+++++..." : an OK that never ends its line
  });
  auto RC = tier(options("redis+unix://:password@" + D.file("s")));
  std::string Problem = lookupProblem(S, *RC);
  EXPECT_THAT(Problem, HasSubstr("handshake: timed out"));
  EXPECT_EQ(RC->getStats().Timeouts, 1u);
  EXPECT_EQ(RC->getStats().BreakerTrips, 1u);
}

// Writing the command is inside it too: a server that reads slowly cannot
// hold a store.
TEST(HostileServerTest, ASlowReaderIsCutOffByTheDeadline) {
  TempDir D;
  ScriptedServer S(D.file("s"), [](int FD, const std::atomic<bool> &Stop) {
    // 200 KB/s: every write() the client makes gets through (a deadline
    // per write would be renewed again and again), the whole never does.
    char B[4096];
    while (!Stop && ::recv(FD, B, sizeof(B), 0) > 0)
      std::this_thread::sleep_for(20ms);
  });
  auto RC = tier(options("redis+unix://" + D.file("s")));
  Artifact A;
  A.Payload.assign(size_t(16) << 20, 'p'); // 80 s at that rate
  bool Stored = withinBound<bool>(S, [&] { return RC->store(testKey("hostile", 3), A); });
  EXPECT_FALSE(Stored);
  EXPECT_EQ(RC->getStats().Timeouts, 1u);
  EXPECT_EQ(RC->getStats().Stores, 0u);
  EXPECT_EQ(RC->getStats().BreakerTrips, 1u);
}

//===----------------------------------------------------------------------===//
// Replies over the bound
//===----------------------------------------------------------------------===//

/// This process's resident memory in kB: now ("VmRSS") or at its peak
/// ("VmHWM"), from /proc/self/status.
uint64_t memoryKb(const std::string &Field) {
  std::ifstream In("/proc/self/status");
  std::string Line;
  while (std::getline(In, Line))
    if (Line.rfind(Field + ":", 0) == 0)
      return std::stoull(Line.substr(Field.size() + 1));
  return 0;
}

/// Resets the peak (VmHWM) to the memory now; false where /proc cannot.
bool resetPeak() {
  std::ofstream Out("/proc/self/clear_refs");
  Out << "5";
  Out.flush();
  return Out.good() && memoryKb("VmHWM") > 0;
}

struct Oversized {
  const char *Name;
  const char *Header;  ///< what the server announces
  const char *Unit;    ///< what it then sends, over and over
  size_t Total;        ///< this many bytes, then it closes
  const char *Refusal; ///< what the problem says
};

class OversizedReplyTest : public ::testing::TestWithParam<Oversized> {};

TEST_P(OversizedReplyTest, IsRefusedAtItsHeaderWithoutAllocatingIt) {
  const Oversized &P = GetParam();
  if (!resetPeak())
    GTEST_SKIP() << "this kernel cannot reset the peak resident memory (/proc/self/clear_refs)";
  TempDir D;
  ScriptedServer S(D.file("s"), [&P](int FD, const std::atomic<bool> &Stop) {
    ScriptedServer::readSome(FD);
    if (ScriptedServer::send(FD, P.Header, Stop))
      flood(FD, Stop, P.Unit, P.Total);
  });
  auto RC = tier(options("redis+unix://" + D.file("s")));
  ASSERT_TRUE(resetPeak());
  uint64_t Before = memoryKb("VmRSS");
  std::string Problem = lookupProblem(S, *RC);
  uint64_t Peak = memoryKb("VmHWM");
  EXPECT_THAT(Problem, HasSubstr(P.Refusal));
  RemoteCacheStats St = RC->getStats();
  EXPECT_EQ(St.BadReplies, 1u);
  EXPECT_EQ(St.BytesRead, 0u);
  EXPECT_EQ(St.BreakerTrips, 1u);
  // Nothing like what was announced or sent was held: the peak grew by
  // far less than the data the server sent (which a reader that buffered
  // it would have had to hold).
  EXPECT_LT(Peak - std::min(Peak, Before), uint64_t(32) << 10)
      << "peak resident memory grew by " << (Peak - Before) / 1024 << " MiB";
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, OversizedReplyTest,
    ::testing::Values(
        Oversized{"TenGigabyteBulkString", "$10000000000\r\n", "x", size_t(256) << 20,
                  "bad reply: a bulk string of 10000000000 bytes, over the limit of 67174400 "
                  "bytes for a reply"},
        Oversized{"ArrayOfTwoHundredMillion", "*200000000\r\n", ":1\r\n", size_t(16) << 20,
                  "bad reply: an array of 200000000 elements, over the limit of 64"}),
    [](const ::testing::TestParamInfo<Oversized> &I) { return std::string(I.param.Name); });

} // namespace
