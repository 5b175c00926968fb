//===- RemoteTierTest.cpp - Entries, leases and the breaker, without a server ===//
//
// Part of gridjit. RemoteCache (include/gridjit/Cache/RemoteCache.h) over a
// store in memory and a fake clock (FakeRemote.h): the entry and lease
// logic and its use of the breaker, every path checked by its counters and
// the store's contents, with no server and no sleeping. The same tier on a
// real redis-server is RemoteCacheTest.
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "Cache/FakeRemote.h"
#include "gridjit/Cache/RemoteCache.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

Artifact artifact(const std::string &Payload = "object code") {
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Arch = "x86-64";
  A.Payload = Payload;
  KernelInfo KI;
  KI.Name = "k";
  A.Kernels.push_back(KI);
  return A;
}

/// A RemoteCache over a MemoryStore it can reach, on a fake clock.
struct Tier {
  FakeTime Time;
  MemoryStore *Store = nullptr;
  std::unique_ptr<RemoteCache> RC;

  explicit Tier(RemoteCacheOptions O = options()) {
    auto S = std::make_unique<MemoryStore>(Time);
    Store = S.get();
    RC = std::make_unique<RemoteCache>(std::move(O), std::move(S), Time);
  }
  static RemoteCacheOptions options() {
    RemoteCacheOptions O;
    O.URL = "memory";
    O.BreakerThreshold = 2;
    O.BreakerCooldown = 1s;
    O.LeaseTime = 10s;
    O.LeasePoll = 25ms;
    return O;
  }
  RemoteCacheStats stats() const { return RC->getStats(); }
};

TEST(RemoteTierTest, StoreThenLookup) {
  Tier T;
  CacheKey K = testKey("tier", 1);
  EXPECT_FALSE(T.RC->lookup(K));
  EXPECT_EQ(T.stats().Misses, 1u);
  EXPECT_TRUE(T.RC->store(K, artifact()));
  EXPECT_EQ(T.Store->value(RemoteCache::entryKey(K)), T.RC->encodeValue(K, artifact()));
  std::optional<Artifact> A = T.RC->lookup(K);
  ASSERT_TRUE(A);
  EXPECT_EQ(A->Payload, "object code");
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.Hits, 1u);
  EXPECT_EQ(S.Stores, 1u);
  EXPECT_EQ(S.BytesRead, S.BytesWritten);
  // First writer wins: a second store writes nothing.
  EXPECT_FALSE(T.RC->store(K, artifact("another compile")));
  EXPECT_EQ(T.stats().StoreExisting, 1u);
  EXPECT_EQ(T.RC->lookup(K)->Payload, "object code");
}

TEST(RemoteTierTest, StoresExpireAfterTheTTL) {
  RemoteCacheOptions O = Tier::options();
  O.TTL = 5min;
  Tier T(O);
  CacheKey K = testKey("tier", 2);
  ASSERT_TRUE(T.RC->store(K, artifact()));
  T.Time.advance(5min - 1ms);
  EXPECT_TRUE(T.RC->lookup(K));
  T.Time.advance(1ms);
  EXPECT_FALSE(T.RC->lookup(K));
}

TEST(RemoteTierTest, BadValueIsAMissAndDeleted) {
  Tier T;
  CacheKey K = testKey("tier", 3);
  T.Store->put(RemoteCache::entryKey(K), "not an entry");
  std::string Problem;
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_THAT(Problem, HasSubstr("remote entry: "));
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.BadEntries, 1u);
  EXPECT_EQ(S.Misses, 1u);
  EXPECT_EQ(S.BadDeleted, 1u);
  EXPECT_FALSE(T.Store->value(RemoteCache::entryKey(K)));
  // Another key's valid entry under this key is just as bad.
  T.Store->put(RemoteCache::entryKey(K), T.RC->encodeValue(testKey("tier", 4), artifact()));
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_THAT(Problem, HasSubstr("another key"));
  EXPECT_EQ(T.stats().BadDeleted, 2u);
}

TEST(RemoteTierTest, WithASecretAnUnsignedValueIsRejected) {
  RemoteCacheOptions O = Tier::options();
  O.Secret = "0123456789abcdef";
  Tier T(O);
  CacheKey K = testKey("tier", 5);
  Tier Plain;
  T.Store->put(RemoteCache::entryKey(K), Plain.RC->encodeValue(K, artifact()));
  EXPECT_FALSE(T.RC->lookup(K));
  EXPECT_EQ(T.stats().AuthFailures, 1u);
  EXPECT_EQ(T.stats().BadDeleted, 1u);
  ASSERT_TRUE(T.RC->store(K, artifact()));
  EXPECT_TRUE(T.RC->lookup(K));
}

TEST(RemoteTierTest, ReadOnlyNeverWrites) {
  RemoteCacheOptions O = Tier::options();
  O.ReadOnly = true;
  Tier T(O);
  CacheKey K = testKey("tier", 6);
  T.Store->put(RemoteCache::entryKey(K), "not an entry");
  EXPECT_FALSE(T.RC->lookup(K));
  EXPECT_EQ(T.stats().BadDeleted, 0u);
  EXPECT_TRUE(T.Store->value(RemoteCache::entryKey(K))); // left there
  EXPECT_FALSE(T.RC->store(K, artifact()));
  std::optional<Artifact> Found;
  EXPECT_FALSE(T.RC->acquireLease(K, Found).held());
  EXPECT_EQ(T.Store->Sets, 0);
  EXPECT_EQ(T.Store->Deletes, 0);
}

TEST(RemoteTierTest, OversizeValuesAreNeitherReadNorWritten) {
  RemoteCacheOptions O = Tier::options();
  O.MaxValueBytes = 64;
  Tier T(O);
  CacheKey K = testKey("tier", 7);
  T.Store->put(RemoteCache::entryKey(K), std::string(1000, 'x'));
  std::string Problem;
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_EQ(Problem, "the value holds 1000 bytes, over the limit of 64");
  EXPECT_FALSE(T.RC->store(testKey("tier", 8), artifact()));
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.Oversize, 2u);
  EXPECT_EQ(S.BytesRead, 0u);
  EXPECT_EQ(T.Store->Sets, 0);
}

//===----------------------------------------------------------------------===//
// Leases
//===----------------------------------------------------------------------===//

TEST(RemoteTierTest, LeaseIsTakenAndReleased) {
  Tier T;
  CacheKey K = testKey("lease", 1);
  std::optional<Artifact> Found;
  {
    RemoteCache::Lease L = T.RC->acquireLease(K, Found);
    EXPECT_TRUE(L.held());
    EXPECT_FALSE(Found);
    EXPECT_TRUE(T.Store->value(RemoteCache::leaseKey(K)));
  }
  EXPECT_FALSE(T.Store->value(RemoteCache::leaseKey(K)));
  EXPECT_EQ(T.stats().LeasesTaken, 1u);
  EXPECT_EQ(T.stats().LeaseWaits, 0u);
  EXPECT_EQ(T.Time.Sleeps, 0);
}

TEST(RemoteTierTest, EntryStoredJustBeforeTheTakeIsFound) {
  // The previous holder stored and let go between our lookup and our take.
  Tier T;
  CacheKey K = testKey("lease", 2);
  EXPECT_FALSE(T.RC->lookup(K));
  Tier Other;
  T.Store->put(RemoteCache::entryKey(K), Other.RC->encodeValue(K, artifact()));
  std::optional<Artifact> Found;
  RemoteCache::Lease L = T.RC->acquireLease(K, Found);
  EXPECT_FALSE(L.held());
  ASSERT_TRUE(Found);
  EXPECT_EQ(T.stats().LeasesTaken, 1u);
  EXPECT_EQ(T.stats().Hits, 1u);
  EXPECT_FALSE(T.Store->value(RemoteCache::leaseKey(K))); // given back at once
}

TEST(RemoteTierTest, WaiterGetsTheHoldersEntry) {
  Tier T;
  CacheKey K = testKey("lease", 3);
  T.Store->put(RemoteCache::leaseKey(K), "another machine");
  Tier Other;
  std::string Value = Other.RC->encodeValue(K, artifact());
  // The holder stores its entry while the waiter sleeps its third poll.
  T.Time.OnSleep = [&] {
    if (T.Time.Sleeps == 3)
      T.Store->put(RemoteCache::entryKey(K), Value);
  };
  std::optional<Artifact> Found;
  RemoteCache::Lease L = T.RC->acquireLease(K, Found);
  EXPECT_FALSE(L.held());
  ASSERT_TRUE(Found);
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.LeaseWaits, 1u);
  EXPECT_EQ(S.LeaseWaitHits, 1u);
  EXPECT_EQ(S.LeaseExpired, 0u);
  EXPECT_EQ(T.Time.Sleeps, 3);
}

TEST(RemoteTierTest, HolderThatLetsGoWithoutStoringHandsTheLeaseOn) {
  Tier T;
  CacheKey K = testKey("lease", 4);
  // A holder whose lease runs out after 100 ms (it crashed, or its compile
  // failed and it let go): the waiter takes the lease at its next poll.
  T.Store->put(RemoteCache::leaseKey(K), "a crashed machine", 100ms);
  std::optional<Artifact> Found;
  RemoteCache::Lease L = T.RC->acquireLease(K, Found);
  EXPECT_TRUE(L.held());
  EXPECT_FALSE(Found);
  EXPECT_EQ(T.Time.Sleeps, 4); // 4 polls of 25 ms
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.LeaseWaits, 1u);
  EXPECT_EQ(S.LeasesTaken, 1u);
  EXPECT_EQ(S.LeaseExpired, 0u);
  EXPECT_NE(T.Store->value(RemoteCache::leaseKey(K)), "a crashed machine");
}

TEST(RemoteTierTest, WaitRunsOutAfterTheLeaseTime) {
  Tier T; // LeaseTime 10 s, LeasePoll 25 ms
  CacheKey K = testKey("lease", 5);
  T.Store->put(RemoteCache::leaseKey(K), "a live but slow machine", 1h);
  std::optional<Artifact> Found;
  RemoteCache::Lease L = T.RC->acquireLease(K, Found);
  EXPECT_FALSE(L.held());
  EXPECT_FALSE(Found);
  EXPECT_EQ(T.stats().LeaseExpired, 1u);
  EXPECT_EQ(T.Time.Sleeps, 400); // 10 s of 25 ms polls, and no more
}

TEST(RemoteTierTest, ServerFailingDuringTheWaitEndsIt) {
  Tier T;
  CacheKey K = testKey("lease", 6);
  T.Store->put(RemoteCache::leaseKey(K), "another machine", 1h);
  T.Time.OnSleep = [&] { T.Store->Mode = RemoteStatus::Failed; };
  std::optional<Artifact> Found;
  RemoteCache::Lease L = T.RC->acquireLease(K, Found);
  EXPECT_FALSE(L.held());
  EXPECT_EQ(T.Time.Sleeps, 1);
  EXPECT_EQ(T.stats().Errors, 1u);
  EXPECT_EQ(T.stats().LeaseExpired, 0u);
}

//===----------------------------------------------------------------------===//
// The breaker
//===----------------------------------------------------------------------===//

TEST(RemoteTierTest, FailuresOpenTheBreakerThenAProbeClosesIt) {
  Tier T; // threshold 2, cooldown 1 s
  CacheKey K = testKey("breaker", 1);
  T.Store->Mode = RemoteStatus::Failed;
  std::string Problem;
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_EQ(Problem, "failed: fake");
  EXPECT_FALSE(T.RC->lookup(K));
  EXPECT_TRUE(T.RC->isBreakerOpen());
  int Gets = T.Store->Gets;
  // Open: nothing reaches the server; a store returns before encoding.
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_EQ(Problem, "skipped: the remote cache's breaker is open");
  EXPECT_FALSE(T.RC->store(K, artifact()));
  std::optional<Artifact> Found;
  EXPECT_FALSE(T.RC->acquireLease(K, Found).held());
  EXPECT_EQ(T.Store->Gets, Gets);
  EXPECT_EQ(T.Store->Sets, 0);
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.Errors, 2u);
  EXPECT_EQ(S.BreakerTrips, 1u);
  EXPECT_EQ(S.BreakerSkips, 3u);
  EXPECT_EQ(S.Misses, 3u);
  // The server is back; after the cooldown one request probes it and
  // closes the breaker.
  T.Store->Mode = RemoteStatus::OK;
  T.Time.advance(1s);
  EXPECT_TRUE(T.RC->store(K, artifact()));
  EXPECT_FALSE(T.RC->isBreakerOpen());
  EXPECT_TRUE(T.RC->lookup(K));
}

TEST(RemoteTierTest, ATimeoutOpensTheBreakerAtOnce) {
  Tier T;
  CacheKey K = testKey("breaker", 2);
  T.Store->Mode = RemoteStatus::TimedOut;
  std::string Problem;
  EXPECT_FALSE(T.RC->lookup(K, &Problem));
  EXPECT_EQ(Problem, "timed out: fake");
  EXPECT_TRUE(T.RC->isBreakerOpen());
  RemoteCacheStats S = T.stats();
  EXPECT_EQ(S.Timeouts, 1u);
  EXPECT_EQ(S.Errors, 0u);
  EXPECT_EQ(S.BreakerTrips, 1u);
}

} // namespace
