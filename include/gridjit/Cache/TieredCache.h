//===- TieredCache.h - One lookup protocol over memory, disk and remote -*- C++ -*-===//
//
// Part of gridjit. The cache protocol, written once, for every artifact
// gridjit caches: the Compiler's modules and the CUDA runtime's cubins
// (docs/Cache.md, "The tiered cache"). A request for a key goes:
//
//   1. memory (an LRU of shared artifacts; optional);
//   2. in flight? another thread of this process is producing or loading
//      the key: wait for its outcome (single flight);
//   3. disk; on a miss, the key's lock file (another process may be
//      producing it: wait for it), then disk again;
//   4. remote; on a miss, the key's lease (another machine may be
//      producing it: wait for its entry);
//   5. the producer (a compile), then store: disk, then remote; a remote
//      hit is stored on disk.
//
// Every tier is optional. The tiers that hold data across objects (the
// disk directory, the remote server) are shared objects (CacheTiers), so
// that one directory has one pruning policy and one server one breaker and
// one connection pool, whoever uses them. No lock is held while producing,
// reading or writing a tier, or waiting.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_TIEREDCACHE_H
#define GRIDJIT_CACHE_TIEREDCACHE_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

namespace gridjit {

/// An artifact and the key it is cached under. Immutable and shared: the
/// memory tier and every caller that asked for it hold the same object,
/// which stays valid after the memory tier evicts it.
struct CachedArtifact {
  CacheKey Key;
  Artifact Art;
};
using CachedArtifactRef = std::shared_ptr<const CachedArtifact>;

/// Where a request's artifact came from.
enum class CacheOutcome {
  Compiled,  ///< produced by this request
  MemoryHit, ///< found in the memory tier
  DiskHit,   ///< read from the disk tier
  RemoteHit, ///< read from the remote tier (and written to the disk tier)
  Shared,    ///< another thread was producing (or loading) it; this request waited
};
/// "compiled", "memory hit", "disk hit", "remote hit", "shared".
std::string_view cacheOutcomeName(CacheOutcome O);

/// The tiers that outlive one user: a cache directory and a remote server.
/// Either may be null (no such tier). Share one CacheTiers between the
/// users of one directory (Compiler::getCacheTiers(), then
/// RuntimeOptions::CubinTiers).
struct CacheTiers {
  std::shared_ptr<DiskCache> Disk;
  std::shared_ptr<RemoteCache> Remote;
};

/// What one request did and how long each part took (milliseconds).
struct TieredRequestInfo {
  CacheOutcome Outcome = CacheOutcome::Compiled;
  double LookupMs = 0; ///< memory, disk and remote lookups
  double WaitMs = 0;   ///< waiting for another thread, process or machine
  double StoreMs = 0;  ///< writing the disk and remote entries
  /// Set when the disk held a bad entry for the key (damaged, foreign,
  /// another target's, unauthenticated...): the store replaces a file
  /// there, and leaves anything else alone.
  std::string BadEntry;
  /// Set when the remote tier held a bad entry for the key (deleted if
  /// unchanged), or failed.
  std::string RemoteProblem;
};

/// Counters of one TieredCache (monotonic).
struct TieredCacheStats {
  uint64_t MemoryHits = 0;
  uint64_t MemoryMisses = 0;
  uint64_t SharedWaits = 0; ///< requests that waited for another's flight
  uint64_t DiskHits = 0;
  uint64_t DiskMisses = 0;
  uint64_t RemoteHits = 0;      ///< requests served by the remote tier
  uint64_t RemoteMisses = 0;    ///< requests it could not serve (any reason)
  uint64_t Produced = 0;        ///< producer calls
  uint64_t ProduceFailures = 0; ///< of those, failed
  uint64_t Evictions = 0;       ///< memory tier
};

/// Options of a TieredCache.
struct TieredCacheOptions {
  CacheTiers Tiers;
  /// Artifacts kept in memory (least recently used are evicted first). 0:
  /// no memory tier (single flight stays on).
  size_t MemoryCapacity = 0;
};

/// The protocol over the tiers. Thread-safe.
class TieredCache {
public:
  explicit TieredCache(TieredCacheOptions Opts);
  ~TieredCache();
  TieredCache(const TieredCache &) = delete;
  TieredCache &operator=(const TieredCache &) = delete;

  /// Makes the artifact of a missing key (a compile). Called by one
  /// request per key at a time in this process, with no lock held.
  using Producer = llvm::function_ref<llvm::Expected<Artifact>()>;

  enum class Mode {
    /// The whole protocol above.
    Lookup,
    /// The cached artifact proved unusable (a driver refused it): produce
    /// afresh under the key's disk lock, without looking in any tier or
    /// joining a flight, and replace what the tiers hold.
    Refresh,
  };

  /// \p K's artifact, from the first tier that has one matching \p Want,
  /// or from \p Produce (then stored). A failed produce is given to every
  /// request that was waiting for it (a DiagnosticError stays one,
  /// rendered identically) and is cached nowhere. \p Info is filled in.
  llvm::Expected<CachedArtifactRef> get(const CacheKey &K, const ArtifactMatch &Want,
                                        Producer Produce, TieredRequestInfo &Info,
                                        Mode M = Mode::Lookup);

  /// \p K's artifact if the memory tier has it (made most recent; counted
  /// as a memory hit), else null. Nothing else is looked at.
  CachedArtifactRef findInMemory(const CacheKey &K);
  /// Drops every artifact from the memory tier (callers keep theirs).
  void clearMemory();

  const CacheTiers &getTiers() const;
  TieredCacheStats getStats() const;

private:
  struct Impl;
  std::unique_ptr<Impl> P;
};

} // namespace gridjit

#endif // GRIDJIT_CACHE_TIEREDCACHE_H
