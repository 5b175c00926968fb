//===- RemoteCache.cpp - Compiled artifacts shared through a server -------===//
//
// Part of gridjit. The remote tier's entries and leases (docs/RemoteCache.md,
// "Entries" and "Lease"), over any RemoteStore: every operation goes through
// the circuit breaker (CircuitBreaker.h) and is counted here; values are
// written and checked by TaggedEntry.h; the server itself is the store's
// business (lib/Cache/Redis for Redis).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/RemoteCache.h"
#include "CircuitBreaker.h"
#include "TaggedEntry.h"

#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <atomic>
#include <mutex>
#include <random>

#include <unistd.h>

using namespace gridjit;

RemoteStore::~RemoteStore() = default;

namespace {

/// What a lease holder puts in the lease: random per RemoteCache object
/// (and its process), then a count, so no two holders share one.
std::string randomTokenBase() {
  std::random_device RD;
  std::string T;
  for (int I = 0; I < 4; ++I)
    T += llvm::utohexstr(RD(), /*LowerCase=*/true);
  return T + "-" + std::to_string(::getpid()) + "-";
}

CircuitBreaker::Options breakerOptions(const RemoteCacheOptions &O) {
  return {O.BreakerThreshold, O.BreakerCooldown};
}

} // namespace

struct RemoteCache::Impl {
  const RemoteCacheOptions &Opts;
  std::unique_ptr<RemoteStore> Store;
  TimeSource &Time;
  CircuitBreaker Breaker;
  // Lease tokens: made on the first lease (a tier that only reads never
  // pays for the random device).
  std::once_flag TokenOnce;
  std::string TokenBase;
  std::atomic<uint64_t> TokenCount{0};

  std::atomic<uint64_t> Hits{0}, Misses{0}, Errors{0}, Timeouts{0}, BadReplies{0}, BadEntries{0},
      AuthFailures{0}, Oversize{0}, BadDeleted{0}, Stores{0}, StoreExisting{0}, LeasesTaken{0},
      LeaseWaits{0}, LeaseWaitHits{0}, LeaseExpired{0}, BytesRead{0}, BytesWritten{0};

  Impl(const RemoteCacheOptions &O, std::unique_ptr<RemoteStore> S, TimeSource &T)
      : Opts(O), Store(std::move(S)), Time(T), Breaker(breakerOptions(O), T) {}

  std::string newToken() {
    std::call_once(TokenOnce, [this] { TokenBase = randomTokenBase(); });
    return TokenBase + std::to_string(TokenCount.fetch_add(1, std::memory_order_relaxed));
  }

  static void count(std::atomic<uint64_t> &C, uint64_t N = 1) {
    C.fetch_add(N, std::memory_order_relaxed);
  }

  /// Runs one operation of the store (\p Op) through the breaker. Its
  /// answer, or std::nullopt: skipped (the breaker is open) or failed
  /// (counted, and the breaker told); \p Why then says which, when given.
  template <typename T, typename OpT> std::optional<T> run(OpT Op, std::string *Why = nullptr) {
    if (!Breaker.admit()) {
      if (Why)
        *Why = "skipped: the remote cache's breaker is open";
      return std::nullopt;
    }
    RemoteResult<T> R = Op();
    if (R.ok()) {
      Breaker.recordSuccess();
      return std::move(R.Value);
    }
    bool Timeout = R.Status == RemoteStatus::TimedOut;
    count(Timeout ? Timeouts : R.Status == RemoteStatus::BadReply ? BadReplies : Errors);
    Breaker.recordFailure(Timeout);
    if (Why)
      *Why = std::move(R.Why);
    return std::nullopt;
  }

  /// Reads \p Key's value within MaxValueBytes into \p Value. False for no
  /// value, with \p Problem set on a failure or an oversize value.
  bool get(const std::string &Key, std::string &Value, std::string &Problem) {
    std::optional<StoredValue> G =
        run<StoredValue>([&] { return Store->get(Key, Opts.MaxValueBytes); }, &Problem);
    if (!G || G->Kind == StoredValue::Missing)
      return false;
    if (G->Kind == StoredValue::Oversize) {
      count(Oversize);
      Problem = "the value holds " + std::to_string(G->Size) + " bytes, over the limit of " +
                std::to_string(Opts.MaxValueBytes);
      return false;
    }
    Value = std::move(G->Bytes);
    count(BytesRead, Value.size());
    return true;
  }

  /// Validates \p Value as \p K's entry (for \p Want's target, when
  /// given); counts and explains a bad one.
  std::optional<Artifact> validate(const CacheKey &K, std::string_view Value,
                                   const ArtifactMatch *Want, std::string &Problem) {
    EntryProblem Why = EntryProblem::None;
    std::optional<Artifact> A =
        validateTaggedEntry(Opts.Secret, TagContext::Remote, K, Value, Want, Problem, Why);
    if (Why == EntryProblem::Auth)
      count(AuthFailures);
    else if (Why == EntryProblem::BadEntry)
      count(BadEntries);
    return A;
  }

  /// get and validate: \p K's entry, counted as a hit, or std::nullopt.
  /// \p Bad is set when a value was there but unusable (damaged, foreign,
  /// unauthenticated, for another target): such a value is deleted, if the
  /// server still holds the same bytes, so that a good one can be written.
  std::optional<Artifact> fetch(const CacheKey &K, const ArtifactMatch *Want, std::string &Problem,
                                bool &Bad) {
    Bad = false;
    std::string Value;
    if (!get(entryKey(K), Value, Problem))
      return std::nullopt;
    std::optional<Artifact> A = validate(K, Value, Want, Problem);
    Bad = !A;
    if (A)
      count(Hits);
    else if (!Opts.ReadOnly && deleteIfEquals(entryKey(K), Value))
      count(BadDeleted);
    return A;
  }

  /// Deletes \p Key if it still holds \p Value.
  bool deleteIfEquals(const std::string &Key, std::string_view Value) {
    std::optional<bool> Deleted = run<bool>([&] { return Store->deleteIfEquals(Key, Value); });
    return Deleted && *Deleted;
  }

  /// Sets \p Key to \p Value unless it has one: true written, false held
  /// by another, std::nullopt failed.
  std::optional<bool> setIfAbsent(const std::string &Key, std::string_view Value,
                                  std::chrono::milliseconds TTL) {
    return run<bool>([&] {
      return Store->setIfAbsent(Key, Value, std::max(TTL, std::chrono::milliseconds(1)));
    });
  }

  Lease takenLease(RemoteCache &Owner, const CacheKey &K, std::string LeaseKey, std::string Token,
                   std::optional<Artifact> &Found, const ArtifactMatch *Want);
  Lease waitForHolder(RemoteCache &Owner, const CacheKey &K, const std::string &LeaseKey,
                      const std::string &Token, std::optional<Artifact> &Found,
                      const ArtifactMatch *Want);
};

RemoteCache::RemoteCache(RemoteCacheOptions O, std::unique_ptr<RemoteStore> Store, TimeSource &Time)
    : Opts(std::move(O)), P(std::make_unique<Impl>(Opts, std::move(Store), Time)) {}

RemoteCache::~RemoteCache() = default;

std::string RemoteCache::entryKey(const CacheKey &K) {
  return "gridjit:v" + std::to_string(CacheFormatVersion) + ":" + K.hex();
}

std::string RemoteCache::leaseKey(const CacheKey &K) {
  return "gridjit:lease:v" + std::to_string(CacheFormatVersion) + ":" + K.hex();
}

std::string RemoteCache::encodeValue(const CacheKey &K, const Artifact &A) const {
  return encodeTaggedEntry(Opts.Secret, TagContext::Remote, K, A);
}

//===----------------------------------------------------------------------===//
// Entries
//===----------------------------------------------------------------------===//

std::optional<Artifact> RemoteCache::lookup(const CacheKey &K, std::string *ProblemOut,
                                            const ArtifactMatch *Want) {
  if (P->Breaker.skipIfOpen()) {
    Impl::count(P->Misses);
    if (ProblemOut)
      *ProblemOut = "skipped: the remote cache's breaker is open";
    return std::nullopt;
  }
  std::string Problem;
  bool Bad = false;
  if (std::optional<Artifact> A = P->fetch(K, Want, Problem, Bad))
    return A;
  Impl::count(P->Misses);
  if (ProblemOut && !Problem.empty())
    *ProblemOut = Bad ? "remote entry: " + Problem : Problem;
  return std::nullopt;
}

bool RemoteCache::store(const CacheKey &K, const Artifact &A) {
  if (Opts.ReadOnly || P->Breaker.skipIfOpen())
    return false;
  std::string V = encodeValue(K, A);
  if (V.size() > Opts.MaxValueBytes) {
    Impl::count(P->Oversize);
    return false;
  }
  std::optional<bool> Written = P->setIfAbsent(entryKey(K), V, Opts.TTL);
  if (!Written)
    return false;
  if (!*Written) {
    Impl::count(P->StoreExisting);
    return false;
  }
  Impl::count(P->Stores);
  Impl::count(P->BytesWritten, V.size());
  return true;
}

//===----------------------------------------------------------------------===//
// Leases
//===----------------------------------------------------------------------===//

RemoteCache::Lease::Lease(Lease &&O) noexcept
    : Owner(O.Owner), Key(std::move(O.Key)), Token(std::move(O.Token)) {
  O.Owner = nullptr;
}

RemoteCache::Lease &RemoteCache::Lease::operator=(Lease &&O) noexcept {
  if (this != &O) {
    release();
    Owner = O.Owner;
    Key = std::move(O.Key);
    Token = std::move(O.Token);
    O.Owner = nullptr;
  }
  return *this;
}

void RemoteCache::Lease::release() {
  if (!Owner)
    return;
  Owner->P->deleteIfEquals(Key, Token);
  Owner = nullptr;
}

RemoteCache::Lease RemoteCache::acquireLease(const CacheKey &K, std::optional<Artifact> &Found,
                                             const ArtifactMatch *Want) {
  if (Opts.ReadOnly || Opts.LeaseTime.count() <= 0 || P->Breaker.skipIfOpen())
    return Lease();
  std::string LeaseKey = leaseKey(K);
  std::string Token = P->newToken();
  std::optional<bool> Taken = P->setIfAbsent(LeaseKey, Token, Opts.LeaseTime);
  if (!Taken)
    return Lease(); // the server failed: compile
  if (*Taken)
    return P->takenLease(*this, K, std::move(LeaseKey), std::move(Token), Found, Want);
  Impl::count(P->LeaseWaits);
  return P->waitForHolder(*this, K, LeaseKey, Token, Found, Want);
}

/// The lease is ours. But the previous holder may have stored the entry
/// and let go between the caller's lookup (or our last poll) and the take;
/// the store happened before the release, so one more look settles it.
RemoteCache::Lease RemoteCache::Impl::takenLease(RemoteCache &Owner, const CacheKey &K,
                                                 std::string LeaseKey, std::string Token,
                                                 std::optional<Artifact> &Found,
                                                 const ArtifactMatch *Want) {
  count(LeasesTaken);
  Lease L;
  L.Owner = &Owner;
  L.Key = std::move(LeaseKey);
  L.Token = std::move(Token);
  std::optional<bool> There = run<bool>([&] { return Store->exists(entryKey(K)); });
  if (!There || !*There)
    return L;
  L.release();
  std::string Problem;
  bool Bad;
  Found = fetch(K, Want, Problem, Bad);
  return L;
}

/// Another machine holds the lease: poll for its entry every LeasePoll, up
/// to LeaseTime. If the holder lets go without storing (its compile failed,
/// its lease expired), take the lease ourselves.
RemoteCache::Lease RemoteCache::Impl::waitForHolder(RemoteCache &Owner, const CacheKey &K,
                                                    const std::string &LeaseKey,
                                                    const std::string &Token,
                                                    std::optional<Artifact> &Found,
                                                    const ArtifactMatch *Want) {
  auto Deadline = Time.now() + Opts.LeaseTime;
  while (Time.now() < Deadline) {
    Time.sleepFor(std::max(Opts.LeasePoll, std::chrono::milliseconds(1)));
    std::string Problem;
    bool Bad;
    if ((Found = fetch(K, Want, Problem, Bad))) {
      count(LeaseWaitHits);
      return Lease();
    }
    if (Bad || !Problem.empty())
      return Lease(); // a bad value or a failing server: compile
    std::optional<bool> Held = run<bool>([&] { return Store->exists(LeaseKey); });
    if (!Held)
      return Lease();
    if (*Held)
      continue;
    std::optional<bool> Taken = setIfAbsent(LeaseKey, Token, Opts.LeaseTime);
    if (!Taken)
      return Lease();
    if (*Taken)
      return takenLease(Owner, K, LeaseKey, Token, Found, Want);
  }
  count(LeaseExpired);
  return Lease();
}

//===----------------------------------------------------------------------===//
// State
//===----------------------------------------------------------------------===//

bool RemoteCache::isBreakerOpen() const { return P->Breaker.isOpen(); }

RemoteCacheStats RemoteCache::getStats() const {
  RemoteCacheStats S;
  S.Hits = P->Hits.load();
  S.Misses = P->Misses.load();
  S.Errors = P->Errors.load();
  S.Timeouts = P->Timeouts.load();
  S.BadReplies = P->BadReplies.load();
  S.BadEntries = P->BadEntries.load();
  S.AuthFailures = P->AuthFailures.load();
  S.Oversize = P->Oversize.load();
  S.BadDeleted = P->BadDeleted.load();
  S.Stores = P->Stores.load();
  S.StoreExisting = P->StoreExisting.load();
  S.BreakerTrips = P->Breaker.trips();
  S.BreakerSkips = P->Breaker.skips();
  S.LeasesTaken = P->LeasesTaken.load();
  S.LeaseWaits = P->LeaseWaits.load();
  S.LeaseWaitHits = P->LeaseWaitHits.load();
  S.LeaseExpired = P->LeaseExpired.load();
  S.BytesRead = P->BytesRead.load();
  S.BytesWritten = P->BytesWritten.load();
  return S;
}
