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
// A value that fails validation is a miss; it is deleted only if it still
// holds the same bytes. Every operation has a deadline; any error, timeout
// or refusal is a miss (never an error of the compile), and after a few
// consecutive failures a circuit breaker skips the server for a while. No
// SIGPIPE from a closed socket reaches the process, and the process's
// signal dispositions are never changed.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_REMOTECACHE_H
#define GRIDJIT_CACHE_REMOTECACHE_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit {

/// A parsed remote cache URL.
struct RemoteCacheURL {
  bool IsUnix = false;
  std::string Host;       ///< TCP: host name or address
  unsigned Port = 6379;   ///< TCP
  std::string SocketPath; ///< unix: absolute path of the socket
  std::string User;       ///< ACL user; empty: the default user
  std::string Password;   ///< empty: no AUTH
  unsigned Database = 0;  ///< SELECT'ed when not 0
};

/// Parses `redis://[[user]:password@]host[:port][/db]` (IPv6 hosts in
/// brackets, default port 6379) or `redis+unix://[[user]:password@]/path`
/// (optionally `?db=N`). Errors say what is wrong and where.
llvm::Expected<RemoteCacheURL> parseRemoteCacheURL(std::string_view URL);

/// HMAC-SHA256 (RFC 2104) of \p Data under \p Key.
std::array<uint8_t, 32> hmacSHA256(std::string_view Key, std::string_view Data);

/// The secret in file \p Path (its whole content; at least 16 bytes).
/// Errors: the file cannot be read, or is too short.
llvm::Expected<std::string> readRemoteCacheSecret(const std::string &Path);

/// Options of a RemoteCache.
struct RemoteCacheOptions {
  /// The server (parseRemoteCacheURL). Required.
  std::string URL;
  /// Never write (no stores, no leases, no deletes of bad values).
  bool ReadOnly = false;
  /// Deadline of connecting (and of the AUTH/SELECT handshake's each
  /// read or write).
  std::chrono::milliseconds ConnectTimeout{100};
  /// Deadline of each read or write of an operation.
  std::chrono::milliseconds OperationTimeout{1000};
  /// How long an entry lives on the server.
  std::chrono::milliseconds TTL = std::chrono::hours(24 * 7);
  /// Values larger than this are neither stored nor read.
  uint64_t MaxValueBytes = uint64_t(64) << 20;
  /// Consecutive failed operations that open the breaker.
  unsigned BreakerThreshold = 3;
  /// How long an open breaker skips the server before one request probes
  /// it again.
  std::chrono::milliseconds BreakerCooldown{5000};
  /// The cross-machine single-flight lease: its lifetime (what a crashed
  /// holder costs the others), and how often waiters look for the entry.
  /// Zero lease time: no leases.
  std::chrono::milliseconds LeaseTime{10000};
  std::chrono::milliseconds LeasePoll{25};
  /// The HMAC secret; empty: values are written without a tag and read
  /// without checking one. With a secret, a value without a valid tag is
  /// rejected (AuthFailures).
  std::string Secret;
};

/// Counters of one RemoteCache (monotonic).
struct RemoteCacheStats {
  uint64_t Hits = 0;
  uint64_t Misses = 0;        ///< no value (also counted: every failed lookup)
  uint64_t Errors = 0;        ///< connect, I/O, protocol or server errors
  uint64_t Timeouts = 0;      ///< operations that passed a deadline
  uint64_t BadEntries = 0;    ///< values that failed validation
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

/// A Redis server's entries. Thread-safe (a small pool of connections; no
/// lock is held during network I/O).
class RemoteCache {
public:
  /// Errors: a malformed URL. The server is not contacted.
  static llvm::Expected<std::unique_ptr<RemoteCache>> create(RemoteCacheOptions Opts);
  ~RemoteCache();
  RemoteCache(const RemoteCache &) = delete;
  RemoteCache &operator=(const RemoteCache &) = delete;

  /// The Redis key of \p K's entry.
  static std::string entryKey(const CacheKey &K);

  /// The artifact stored under \p K, or std::nullopt (no value, a bad one,
  /// or any failure). A problem is put in \p Problem when given.
  std::optional<Artifact> lookup(const CacheKey &K, std::string *Problem = nullptr);
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
  /// \p Found).
  Lease acquireLease(const CacheKey &K, std::optional<Artifact> &Found);

  RemoteCacheStats getStats() const;
  /// Whether the breaker is open now.
  bool isBreakerOpen() const;
  const RemoteCacheOptions &getOptions() const { return Opts; }

  struct Impl;

private:
  RemoteCache(RemoteCacheOptions Opts, RemoteCacheURL URL);
  RemoteCacheOptions Opts;
  std::unique_ptr<Impl> P;
};

/// The remote cache a caller's options describe, with the environment's
/// defaults (docs/RemoteCache.md): \p Opts.URL, else $GRIDJIT_REMOTE_CACHE;
/// $GRIDJIT_REMOTE_CACHE_READ_ONLY=1 sets ReadOnly; unless \p Opts.Secret
/// is set, the secret is read from \p SecretFile, else from
/// $GRIDJIT_REMOTE_CACHE_SECRET_FILE. Null when there is no URL. Errors: a
/// malformed URL, a secret file that cannot be read or is too short.
llvm::Expected<std::unique_ptr<RemoteCache>> openRemoteCache(RemoteCacheOptions Opts,
                                                             const std::string &SecretFile = {});

} // namespace gridjit

#endif // GRIDJIT_CACHE_REMOTECACHE_H
