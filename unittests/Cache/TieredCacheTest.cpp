//===- TieredCacheTest.cpp - The cache protocol, once for every artifact --===//
//
// Part of gridjit. include/gridjit/Cache/TieredCache.h on a real disk tier
// (a temp directory) and a remote tier in memory on a fake clock
// (FakeRemote.h): the order of the tiers, what is stored where, single
// flight, failures, a refresh, and artifacts of another target. The
// Compiler and the CUDA runtime's cubin cache are its two users (their own
// tests: CompilerTest, RemoteCacheTest, CudaRuntimeTest).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/TieredCache.h"
#include "Cache/CacheTestUtil.h"
#include "Cache/FakeRemote.h"
#include "gridjit/Support/Diagnostics.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using namespace std::chrono_literals;
using ::testing::HasSubstr;

namespace {

const ArtifactMatch Want{TargetKind::Host, "x86-64"};

Artifact artifact(const std::string &Payload, const std::string &Arch = "x86-64") {
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Arch = Arch;
  A.Payload = Payload;
  return A;
}

/// A disk tier in its own directory and a remote tier in memory.
struct Tiers {
  TempDir Dir;
  FakeTime Time;
  MemoryStore *Store = nullptr;
  CacheTiers T;

  explicit Tiers(bool Disk = true, bool Remote = true) {
    if (Disk) {
      DiskCacheOptions DO;
      DO.Dir = Dir.path();
      T.Disk = std::make_shared<DiskCache>(DO);
    }
    if (Remote) {
      auto S = std::make_unique<MemoryStore>(Time);
      Store = S.get();
      RemoteCacheOptions RO;
      RO.URL = "memory";
      T.Remote = std::make_shared<RemoteCache>(RO, std::move(S), Time);
    }
  }
  std::unique_ptr<TieredCache> cache(size_t MemoryCapacity = 0) const {
    return std::make_unique<TieredCache>(TieredCacheOptions{T, MemoryCapacity});
  }
};

/// A producer that counts its calls and makes \p Payload.
struct Producer {
  std::atomic<int> Calls{0};
  std::string Payload = "compiled";
  llvm::Expected<Artifact> operator()() {
    ++Calls;
    return artifact(Payload);
  }
};

/// Waits until \p N requests have passed \p C's memory tier (so that all
/// but the leader have found its flight); bounded, as a hang check.
void waitForRequests(TieredCache &C, uint64_t N) {
  for (int W = 0; W < 20000 && C.getStats().MemoryMisses < N; ++W)
    std::this_thread::sleep_for(1ms);
}

llvm::Expected<CachedArtifactRef> get(TieredCache &C, const CacheKey &K, Producer &P,
                                      TieredRequestInfo &Info,
                                      TieredCache::Mode M = TieredCache::Mode::Lookup) {
  return C.get(K, Want, [&] { return P(); }, Info, M);
}

TEST(TieredCacheTest, EachTierInTurn) {
  Tiers A;
  CacheKey K = testKey("tiered", 1);
  Producer P;
  auto C = A.cache(/*MemoryCapacity=*/4);
  TieredRequestInfo I;
  auto R = get(*C, K, P, I);
  ASSERT_TRUE(succeeded(R));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*R)->Art.Payload, "compiled");
  // Stored in both tiers.
  EXPECT_TRUE(A.T.Disk->lookup(K));
  EXPECT_TRUE(A.Store->value(RemoteCache::entryKey(K)));

  TieredRequestInfo Again;
  auto M = get(*C, K, P, Again);
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(Again.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(*M, *R); // the same shared object

  // A new user of the same tiers (a new process): from the disk.
  TieredRequestInfo FromDisk;
  ASSERT_TRUE(succeeded(get(*A.cache(), K, P, FromDisk)));
  EXPECT_EQ(FromDisk.Outcome, CacheOutcome::DiskHit);

  // Another machine (its own disk, the same server): from the remote, and
  // written to its disk.
  Tiers B(/*Disk=*/true, /*Remote=*/false);
  B.T.Remote = A.T.Remote;
  TieredRequestInfo FromRemote;
  ASSERT_TRUE(succeeded(get(*B.cache(), K, P, FromRemote)));
  EXPECT_EQ(FromRemote.Outcome, CacheOutcome::RemoteHit);
  EXPECT_EQ(B.T.Disk->getStats().Stores, 1u);
  EXPECT_TRUE(B.T.Disk->lookup(K));
  EXPECT_EQ(P.Calls, 1);
}

TEST(TieredCacheTest, StatisticsOfEachStep) {
  Tiers A;
  CacheKey K = testKey("tiered", 2);
  Producer P;
  auto C = A.cache(4);
  TieredRequestInfo I;
  ASSERT_TRUE(succeeded(get(*C, K, P, I)));
  ASSERT_TRUE(succeeded(get(*C, K, P, I)));
  TieredCacheStats S = C->getStats();
  EXPECT_EQ(S.MemoryMisses, 1u);
  EXPECT_EQ(S.MemoryHits, 1u);
  EXPECT_EQ(S.DiskMisses, 1u);
  EXPECT_EQ(S.DiskHits, 0u);
  EXPECT_EQ(S.RemoteMisses, 1u);
  EXPECT_EQ(S.Produced, 1u);
  EXPECT_EQ(S.ProduceFailures, 0u);
  // The remote lease was taken for the compile and given back after it.
  EXPECT_EQ(A.T.Remote->getStats().LeasesTaken, 1u);
  EXPECT_FALSE(A.Store->value(RemoteCache::leaseKey(K)));
}

TEST(TieredCacheTest, TheProducerRunsUnderTheLockAndTheLease) {
  Tiers A;
  CacheKey K = testKey("tiered", 3);
  std::string LockFile = A.Dir.file("gridjit-" + K.hex() + ".lock");
  bool Locked = false, Leased = false;
  auto C = A.cache();
  TieredRequestInfo I;
  auto R = C->get(
      K, Want,
      [&]() -> llvm::Expected<Artifact> {
        Locked = llvm::sys::fs::exists(LockFile);
        Leased = A.Store->value(RemoteCache::leaseKey(K)).has_value();
        return artifact("compiled");
      },
      I);
  ASSERT_TRUE(succeeded(R));
  EXPECT_TRUE(Locked);
  EXPECT_TRUE(Leased);
  // Both let go once the entry is stored.
  EXPECT_FALSE(llvm::sys::fs::exists(LockFile));
  EXPECT_FALSE(A.Store->value(RemoteCache::leaseKey(K)));
}

TEST(TieredCacheTest, OneProducerForManyThreads) {
  Tiers A;
  CacheKey K = testKey("tiered", 4);
  auto C = A.cache(4);
  constexpr int N = 8;
  std::atomic<int> Calls{0};
  // The producer waits until the other seven have found its flight.
  auto Produce = [&]() -> llvm::Expected<Artifact> {
    ++Calls;
    waitForRequests(*C, N);
    return artifact("compiled once");
  };
  std::vector<CachedArtifactRef> Got(N);
  std::vector<CacheOutcome> Outcomes(N);
  std::vector<std::thread> Threads;
  for (int T = 0; T < N; ++T)
    Threads.emplace_back([&, T] {
      TieredRequestInfo I;
      auto R = C->get(K, Want, Produce, I);
      ASSERT_TRUE(succeeded(R));
      Got[T] = *R;
      Outcomes[T] = I.Outcome;
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Calls, 1);
  EXPECT_EQ(C->getStats().SharedWaits, uint64_t(N - 1));
  EXPECT_EQ(std::count(Outcomes.begin(), Outcomes.end(), CacheOutcome::Shared), N - 1);
  for (int T = 1; T < N; ++T)
    EXPECT_EQ(Got[T], Got[0]);
}

TEST(TieredCacheTest, AFailureReachesEveryWaiterAndIsNotCached) {
  Tiers A;
  CacheKey K = testKey("tiered", 5);
  auto C = A.cache(4);
  constexpr int N = 4;
  std::atomic<int> Calls{0};
  auto Fail = [&]() -> llvm::Expected<Artifact> {
    ++Calls;
    waitForRequests(*C, N);
    return llvm::make_error<DiagnosticError>(
        "k.kir", "kernel k() {}\n", std::vector<Diagnostic>{{SourceLoc{1, 8}, "a compile error"}},
        false);
  };
  std::vector<std::string> Texts(N);
  std::vector<std::thread> Threads;
  for (int T = 0; T < N; ++T)
    Threads.emplace_back([&, T] {
      TieredRequestInfo I;
      auto R = C->get(K, Want, Fail, I);
      ASSERT_FALSE(R);
      llvm::Error E = R.takeError();
      EXPECT_TRUE(E.isA<DiagnosticError>());
      Texts[T] = llvm::toString(std::move(E));
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Calls, 1);
  for (int T = 0; T < N; ++T)
    EXPECT_EQ(Texts[T], Texts[0]);
  EXPECT_THAT(Texts[0], HasSubstr("k.kir:1:8: error: a compile error"));
  EXPECT_EQ(C->getStats().ProduceFailures, 1u);
  // Cached nowhere: the next request produces again.
  EXPECT_FALSE(A.T.Disk->lookup(K));
  EXPECT_FALSE(A.Store->value(RemoteCache::entryKey(K)));
  Producer P;
  TieredRequestInfo I;
  ASSERT_TRUE(succeeded(get(*C, K, P, I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
}

// The key covers the target and architecture, so an artifact of another
// one under it is no entry any gridjit wrote there: in each
// tier it is a bad entry, counted as such and never as a hit, replaced on
// disk and deleted from the server (where it would otherwise stay for its
// TTL while every machine compiled), and the request compiles.
TEST(TieredCacheTest, AnArtifactForAnotherTargetIsABadEntry) {
  Tiers A;
  CacheKey K = testKey("tiered", 6);
  ASSERT_TRUE(A.T.Disk->store(K, artifact("other", "znver9")));
  std::string Planted = A.T.Remote->encodeValue(K, artifact("other", "znver9"));
  A.Store->put(RemoteCache::entryKey(K), Planted);
  Producer P;
  TieredRequestInfo I;
  auto C = A.cache();
  auto R = get(*C, K, P, I);
  ASSERT_TRUE(succeeded(R));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(P.Calls, 1);
  EXPECT_EQ(I.BadEntry, "'" + A.T.Disk->getEntryPath(K) +
                            "': the entry is for target 'host' (znver9), not 'host' (x86-64)");
  EXPECT_EQ(I.RemoteProblem,
            "remote entry: the entry is for target 'host' (znver9), not 'host' (x86-64)");
  EXPECT_EQ((*R)->Art.Arch, "x86-64");
  TieredCacheStats S = C->getStats();
  EXPECT_EQ(S.DiskHits, 0u);
  EXPECT_EQ(S.RemoteHits, 0u);
  EXPECT_EQ(S.RemoteMisses, 1u);
  EXPECT_EQ(A.T.Disk->getStats().BadEntries, 1u);
  EXPECT_EQ(A.T.Disk->getStats().Hits, 0u);
  RemoteCacheStats RS = A.T.Remote->getStats();
  EXPECT_EQ(RS.BadEntries, 1u);
  EXPECT_EQ(RS.Hits, 0u);
  EXPECT_EQ(RS.BadDeleted, 1u);
  // Replaced: the disk and the server hold this request's artifact.
  EXPECT_EQ(A.T.Disk->lookup(K)->Arch, "x86-64");
  std::optional<std::string> Now = A.Store->value(RemoteCache::entryKey(K));
  ASSERT_TRUE(Now);
  EXPECT_NE(*Now, Planted);
  EXPECT_EQ(A.T.Remote->lookup(K)->Arch, "x86-64");
}

// The same value found while waiting for another machine's lease is a bad
// entry too, and deleted: the waiter compiles.
TEST(TieredCacheTest, AnArtifactForAnotherTargetFoundWaitingForALeaseIsABadEntry) {
  Tiers A(/*Disk=*/false);
  CacheKey K = testKey("tiered", 16);
  A.Store->put(RemoteCache::leaseKey(K), "another machine's token");
  A.Store->put(RemoteCache::entryKey(K), A.T.Remote->encodeValue(K, artifact("other", "znver9")));
  std::optional<Artifact> Found;
  ArtifactMatch Want{TargetKind::Host, "x86-64"};
  // The lookup's own check comes first: the value is gone after it.
  EXPECT_FALSE(A.T.Remote->lookup(K, nullptr, &Want));
  A.Store->put(RemoteCache::entryKey(K), A.T.Remote->encodeValue(K, artifact("other", "znver9")));
  RemoteCache::Lease L = A.T.Remote->acquireLease(K, Found, &Want);
  EXPECT_FALSE(Found);
  EXPECT_FALSE(L.held());
  RemoteCacheStats RS = A.T.Remote->getStats();
  EXPECT_EQ(RS.BadEntries, 2u);
  EXPECT_EQ(RS.BadDeleted, 2u);
  EXPECT_EQ(RS.Hits, 0u);
  EXPECT_FALSE(A.Store->value(RemoteCache::entryKey(K)));
}

// With a secret, the disk tier's entries carry its tag, a remote hit
// landing on disk included.
TEST(TieredCacheTest, ARemoteHitIsStoredOnDiskWithTheDiskTiersTag) {
  Tiers A;
  CacheKey K = testKey("tiered", 17);
  ASSERT_TRUE(A.T.Remote->store(K, artifact("from the fleet")));
  TempDir Dir;
  DiskCacheOptions DO;
  DO.Dir = Dir.path();
  DO.Secret = "a disk secret of 16+ bytes";
  A.T.Disk = std::make_shared<DiskCache>(DO);
  Producer P;
  TieredRequestInfo I;
  ASSERT_TRUE(succeeded(get(*A.cache(), K, P, I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::RemoteHit);
  std::string OnDisk = readFile(A.T.Disk->getEntryPath(K));
  std::string Entry = encodeCacheEntry(K, artifact("from the fleet"));
  ASSERT_EQ(OnDisk.size(), Entry.size() + 40);
  EXPECT_EQ(OnDisk.substr(0, Entry.size()), Entry);
  EXPECT_EQ(OnDisk.substr(Entry.size(), 8), "GJHMAC01");
  // Read back with the secret; refused with another.
  EXPECT_TRUE(A.T.Disk->lookup(K));
  DO.Secret = "another secret, 16+ bytes";
  DiskCache Other(DO);
  std::string Problem;
  EXPECT_FALSE(Other.lookup(K, &Problem));
  EXPECT_THAT(Problem, HasSubstr("the value's HMAC tag does not match"));
}

TEST(TieredCacheTest, RefreshProducesAfreshAndAsksNoTier) {
  Tiers A;
  CacheKey K = testKey("tiered", 7);
  ASSERT_TRUE(A.T.Disk->store(K, artifact("damaged")));
  A.Store->put(RemoteCache::entryKey(K), A.T.Remote->encodeValue(K, artifact("damaged")));
  auto C = A.cache(4);
  Producer P;
  TieredRequestInfo Hit;
  ASSERT_TRUE(succeeded(get(*C, K, P, Hit)));
  EXPECT_EQ(Hit.Outcome, CacheOutcome::DiskHit);
  int Gets = A.Store->Gets;
  uint64_t DiskHits = A.T.Disk->getStats().Hits;
  TieredRequestInfo I;
  auto R = get(*C, K, P, I, TieredCache::Mode::Refresh);
  ASSERT_TRUE(succeeded(R));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*R)->Art.Payload, "compiled");
  EXPECT_EQ(P.Calls, 1);
  EXPECT_EQ(A.Store->Gets, Gets);
  EXPECT_EQ(A.T.Disk->getStats().Hits, DiskHits);
  // What the tiers held is replaced where it can be (the disk; the remote
  // tier's first writer wins), and the memory tier has the new one.
  EXPECT_EQ(A.T.Disk->lookup(K)->Payload, "compiled");
  TieredRequestInfo Mem;
  EXPECT_EQ((*get(*C, K, P, Mem))->Art.Payload, "compiled");
  EXPECT_EQ(Mem.Outcome, CacheOutcome::MemoryHit);
}

TEST(TieredCacheTest, AnyTierMayBeAbsent) {
  CacheKey K = testKey("tiered", 8);
  for (auto [Disk, Remote] : {std::pair{false, false}, {true, false}, {false, true}}) {
    Tiers A(Disk, Remote);
    Producer P;
    TieredRequestInfo I;
    ASSERT_TRUE(succeeded(get(*A.cache(), K, P, I)));
    EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
    TieredRequestInfo Again;
    ASSERT_TRUE(succeeded(get(*A.cache(), K, P, Again)));
    EXPECT_EQ(Again.Outcome, !Disk && !Remote ? CacheOutcome::Compiled
                             : Disk           ? CacheOutcome::DiskHit
                                              : CacheOutcome::RemoteHit);
  }
}

TEST(TieredCacheTest, MemoryTierIsBounded) {
  Tiers A(/*Disk=*/false, /*Remote=*/false);
  auto C = A.cache(/*MemoryCapacity=*/2);
  Producer P;
  for (unsigned I = 0; I < 3; ++I) {
    TieredRequestInfo Info;
    ASSERT_TRUE(succeeded(get(*C, testKey("lru", I), P, Info)));
  }
  EXPECT_EQ(C->getStats().Evictions, 1u);
  EXPECT_FALSE(C->findInMemory(testKey("lru", 0)));
  EXPECT_TRUE(C->findInMemory(testKey("lru", 2)));
  C->clearMemory();
  EXPECT_FALSE(C->findInMemory(testKey("lru", 2)));
}

} // namespace
