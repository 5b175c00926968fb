//===- RemoteCache.h - Compiled artifacts shared through Redis --*- C++ -*-===//
//
// Part of gridjit. The remote tier under the disk cache: a Redis server
// that a fleet of machines shares, so that a kernel is compiled once for
// all of them. docs/RemoteCache.md describes it; in short:
//
//   key   gridjit:v<format>:<64 hex digits of the cache key>
//   value one cache entry (CacheEntry.h), optionally followed by a
//         40-byte trailer "GJHMAC01" + HMAC-SHA256(secret, key || entry),
//         written at once with SET NX PX (first writer wins, all expire)
//
// A value that fails validation (damaged, foreign, unauthenticated, or a
// valid entry for another target than the request's) is a miss and a bad
// entry; it is deleted only if it still holds the same bytes. Every
// operation has one deadline for all of it, and every reply a bound
// before it is read; any error, timeout, bad reply or refusal is a miss
// (never an error of the compile), and after a few consecutive failures a
// circuit breaker skips the server for a while. No SIGPIPE from a closed
// socket reaches the process, and the process's signal dispositions are
// never changed.
//
// The parts, each with its own tests (docs/RemoteCache.md, "Code"):
// RemoteCacheConfig.h (options, URL, secret, environment), the value's
// format and check (lib/Cache/TaggedEntry.h), the breaker
// (lib/Cache/CircuitBreaker.h), this class (entries and leases, over any
// RemoteStore), and the Redis client (lib/Cache/Redis: the gridjitCacheRedis
// library, the only code that links hiredis; it defines create() and
// openRemoteCache()).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_REMOTECACHE_H
#define GRIDJIT_CACHE_REMOTECACHE_H

#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Cache/RemoteCacheConfig.h"
#include "gridjit/Cache/RemoteStore.h"
#include "gridjit/Support/TimeSource.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

namespace gridjit {

/// Counters of one RemoteCache (monotonic).
struct RemoteCacheStats {
  uint64_t Hits = 0;
  uint64_t Misses = 0;        ///< no value (also counted: every failed lookup)
  uint64_t Errors = 0;        ///< connect, I/O or server errors
  uint64_t Timeouts = 0;      ///< operations that passed their deadline
  uint64_t BadReplies = 0;    ///< replies that broke the protocol or a bound
  uint64_t BadEntries = 0;    ///< values that failed validation (or another target's)
  uint64_t AuthFailures = 0;  ///< values without a valid HMAC (secret set)
  uint64_t Oversize = 0;      ///< values over MaxValueBytes (read or write)
  uint64_t BadDeleted = 0;    ///< bad values deleted (still the same bytes)
  uint64_t Stores = 0;        ///< values written
  uint64_t StoreExisting = 0; ///< SET NX found a value there already
  uint64_t BreakerTrips = 0;  ///< times the breaker opened
  uint64_t BreakerSkips = 0;  ///< operations skipped while it was open
  uint64_t LeasesTaken = 0;
  uint64_t LeaseWaits = 0;    ///< another machine held the lease
  uint64_t LeaseWaitHits = 0; ///< of those, the entry arrived in time
  uint64_t LeaseExpired = 0;  ///< of those, the wait ran out
  uint64_t BytesRead = 0;     ///< value bytes received
  uint64_t BytesWritten = 0;  ///< value bytes stored
};

/// A shared server's entries. Thread-safe (the store is; no lock is held
/// here during network I/O).
class RemoteCache {
public:
  /// The tier over the Redis server \p Opts.URL names. Errors: a malformed
  /// URL. The server is not contacted. (Defined in gridjitCacheRedis.)
  static llvm::Expected<std::unique_ptr<RemoteCache>> create(RemoteCacheOptions Opts);
  /// The tier over \p Store, its time from \p Time (the tests: a store in
  /// memory and a fake clock). \p Opts.URL only names it.
  RemoteCache(RemoteCacheOptions Opts, std::unique_ptr<RemoteStore> Store,
              TimeSource &Time = steadyTime());
  ~RemoteCache();
  RemoteCache(const RemoteCache &) = delete;
  RemoteCache &operator=(const RemoteCache &) = delete;

  /// The Redis key of \p K's entry.
  static std::string entryKey(const CacheKey &K);
  /// The Redis key of \p K's lease.
  static std::string leaseKey(const CacheKey &K);

  /// The artifact stored under \p K, or std::nullopt (no value, a bad one,
  /// or any failure). A problem is put in \p Problem when given. With
  /// \p Want, an artifact for another target or architecture is a bad
  /// entry (counted, deleted, not a hit), as a damaged one is.
  std::optional<Artifact> lookup(const CacheKey &K, std::string *Problem = nullptr,
                                 const ArtifactMatch *Want = nullptr);
  /// Writes \p A under \p K unless a value is there (SET NX). False when
  /// nothing was written.
  bool store(const CacheKey &K, const Artifact &A);

  /// The value store() writes for \p A under \p K (for tests and tools).
  std::string encodeValue(const CacheKey &K, const Artifact &A) const;

  /// A held cross-machine lease on one key; released on destruction.
  class Lease {
  public:
    Lease() = default;
    Lease(Lease &&O) noexcept;
    Lease &operator=(Lease &&O) noexcept;
    ~Lease() { release(); }
    bool held() const { return Owner != nullptr; }
    void release();

  private:
    friend class RemoteCache;
    RemoteCache *Owner = nullptr;
    std::string Key, Token;
  };
  /// Takes \p K's lease, or waits while another holds it (at most
  /// LeaseTime) for its entry, which is put in \p Found. Not held: the
  /// entry was found, the wait ran out, leases are off (read-only, zero
  /// LeaseTime) or the server failed; the caller then compiles (or uses
  /// \p Found). \p Want as for lookup.
  Lease acquireLease(const CacheKey &K, std::optional<Artifact> &Found,
                     const ArtifactMatch *Want = nullptr);

  RemoteCacheStats getStats() const;
  /// Whether the breaker is open now.
  bool isBreakerOpen() const;
  const RemoteCacheOptions &getOptions() const { return Opts; }

  struct Impl;

private:
  RemoteCacheOptions Opts;
  std::unique_ptr<Impl> P;
};

/// The remote cache a caller's options describe, with the environment's
/// defaults (resolveRemoteCacheOptions), on Redis (RemoteCache::create).
/// Null when there is no URL. Errors: a malformed URL, a secret file that
/// cannot be read or is too short. (Defined in gridjitCacheRedis.)
llvm::Expected<std::unique_ptr<RemoteCache>> openRemoteCache(RemoteCacheOptions Opts,
                                                             const std::string &SecretFile = {});

} // namespace gridjit

#endif // GRIDJIT_CACHE_REMOTECACHE_H
