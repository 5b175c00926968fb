//===- DiskCache.h - Compiled artifacts in a directory ----------*- C++ -*-===//
//
// Part of gridjit. A directory of cache entries (CacheEntry.h), one file per
// key, shared by any number of threads and processes:
//
//   gridjit-<64 hex digits of the key>.gjc         an entry
//   gridjit-<key>.tmp-<random>                     an entry being written
//   gridjit-<key>.lock                             the key's compile lock
//
// Entries are written to a temp file and renamed into place, so a reader
// sees a whole entry or none. A bad entry (truncated, corrupt, foreign,
// another format version, another target's, a directory or a link in its
// place) is reported as a miss; a file there is replaced by the next
// store's rename, anything else is left alone. The directory is created
// (mode 0700) on first use. When it cannot be created or written
// (read-only, full disk, no permission), stores stop and the warning
// handler is called once; lookups continue.
//
// Trust (docs/Cache.md, "Sharing a cache directory"): entries are native
// code this process runs. The directory is opened once and every file is
// reached relative to it (openat, O_NOFOLLOW) and checked with fstat on
// the opened descriptor. Without a secret, the directory must be owned by
// this user and not writable by group or others, and so must every entry
// and lock file in it (one that is not is a bad entry); an untrusted
// directory is not used at all, with one warning. With a secret, every
// entry carries an HMAC-SHA256 tag (TaggedEntry.h) that is checked before
// a byte of it is decoded, and the directory may be shared.
//
// Only regular files with the names above are ever removed, one name at a
// time (unlinkat relative to the opened directory): never a directory,
// never recursively, never through a link.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_DISKCACHE_H
#define GRIDJIT_CACHE_DISKCACHE_H

#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Support/TimeSource.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit {

class RemoteCache;

/// Receives the library's warnings (one line, no trailing newline).
using WarningHandler = std::function<void(const std::string &Message)>;

/// The disk cache directory for \p Explicit (a caller's option): \p Explicit
/// when it is not empty, else $GRIDJIT_CACHE_DIR, else
/// $XDG_CACHE_HOME/gridjit (when absolute, as the XDG spec requires), else
/// $HOME/.cache/gridjit, else the password database's home directory
/// + /.cache/gridjit. Error: none of these is known. Nothing is created.
llvm::Expected<std::string> resolveCacheDirectory(std::string_view Explicit = {});

/// The disk tier's secret (DiskCacheOptions::Secret): the content of
/// \p SecretFile when it is not empty, else of the file
/// $GRIDJIT_CACHE_SECRET_FILE names, else \p Remote's secret (so that one
/// secret configured for a fleet covers both tiers); empty when there is
/// none. Errors: as readSecretFile (RemoteCacheConfig.h).
llvm::Expected<std::string> resolveDiskCacheSecret(const std::string &SecretFile = {},
                                                   const RemoteCache *Remote = nullptr);

/// Options of a DiskCache.
struct DiskCacheOptions {
  /// The directory (see resolveCacheDirectory). Required.
  std::string Dir;
  /// Size bound in bytes of the entries; when a store makes the total
  /// exceed it, the least recently used entries are removed until the total
  /// is at most 90% of it. 0: unbounded. Default 512 MiB.
  uint64_t MaxBytes = uint64_t(512) << 20;
  /// The largest entry: a store of a larger one writes nothing (counted as
  /// a store failure), and a lookup treats a larger file in an entry's
  /// place as a bad entry without reading it, so a foreign or damaged file
  /// cannot make a lookup allocate without bound. Default 256 MiB.
  uint64_t MaxEntryBytes = uint64_t(256) << 20;
  /// The least time between two prunes by this object (the first store
  /// always prunes). Zero: prune after every store. Default 60 s.
  std::chrono::milliseconds PruneInterval = std::chrono::seconds(60);
  /// Temp and lock files older than this are leftovers of a killed process
  /// and are removed by pruning. Default 1 hour.
  std::chrono::seconds StaleAfter = std::chrono::hours(1);
  /// The longest lockKey waits for another process that holds the key's
  /// lock (one that is alive and compiling; a killed process's lock is
  /// released by the kernel at once). Then the caller compiles too.
  /// Default 30 s.
  std::chrono::milliseconds LockTimeout = std::chrono::seconds(30);
  /// Called at most once, when stores are turned off. Null: warnings go
  /// to standard error through llvm::WithColor::warning.
  WarningHandler Warning;
  /// What the warning says is lost, after the directory and the reason.
  std::string Consequence = "compiled kernels are cached in memory only";
  /// The shared secret that authenticates entries (HMAC-SHA256, as the
  /// remote tier's; docs/Cache.md, "Sharing a cache directory"). Empty
  /// (the default): entries carry no tag, and the directory, its entries
  /// and lock files must be this user's and not writable by group or
  /// others; a directory that is not is refused (one warning; lookups and
  /// stores off). Set: every entry is written with a tag and read only
  /// with a valid one, and the directory may be anyone's.
  std::string Secret;
  /// The time lockKey waits by (tests: a fake whose sleeps only advance
  /// it). Never null.
  TimeSource *Time = &steadyTime();
};

/// Counters of one DiskCache (monotonic).
struct DiskCacheStats {
  uint64_t Hits = 0;
  uint64_t Misses = 0; ///< no entry
  /// An entry was there but unusable (counted as a miss too): damaged,
  /// foreign, another target's, not a regular file, without a valid tag
  /// (with a secret) or not this user's (without one).
  uint64_t BadEntries = 0;
  uint64_t Stores = 0;
  uint64_t StoreFailures = 0;
  uint64_t LockWaits = 0; ///< lockKey found the lock held by another process
  uint64_t LockTimeouts = 0;
  uint64_t PrunedFiles = 0;
};

/// A directory of cache entries. Thread-safe; no lock is held while
/// reading or writing files.
class DiskCache {
public:
  explicit DiskCache(DiskCacheOptions Opts);
  DiskCache(const DiskCache &) = delete;
  DiskCache &operator=(const DiskCache &) = delete;
  ~DiskCache();

  const std::string &getDirectory() const { return Opts.Dir; }
  /// The path of \p K's entry.
  std::string getEntryPath(const CacheKey &K) const;

  /// The artifact stored under \p K, or std::nullopt on a miss. A bad entry
  /// is a miss; its problem is put in \p Problem when given. With \p Want,
  /// an artifact for another target or architecture is a bad entry.
  std::optional<Artifact> lookup(const CacheKey &K, std::string *Problem = nullptr,
                                 const ArtifactMatch *Want = nullptr);
  /// lookup() again after lockKey: counted in the statistics only when it
  /// hits (the miss or bad entry was counted by the first lookup).
  std::optional<Artifact> lookupAgain(const CacheKey &K, const ArtifactMatch *Want = nullptr);

  /// Stores \p A under \p K (temp file + rename), replacing a file that is
  /// there. False when it was not stored: stores are off, or this store
  /// failed (a failure to write in the directory turns stores off, with
  /// the one warning; a directory in the entry's place only fails this
  /// store, and is left alone).
  bool store(const CacheKey &K, const Artifact &A);

  /// Whether stores are still on.
  bool isWritable() const { return Writable.load(std::memory_order_relaxed); }
  /// Whether the directory was refused as untrusted (no secret; one
  /// warning said why). Lookups and stores are then off.
  bool isRefused() const { return Refused.load(std::memory_order_relaxed); }

  /// The opened directory (DiskCache.cpp).
  struct Directory;

  /// The per-key lock that makes processes missing one key compile it once.
  /// Held from lockKey until release() or destruction; releasing removes
  /// the lock file. It may also come back not held (stores are off, the
  /// file system has no flock, or LockTimeout passed): the caller then
  /// compiles without it. A child of fork() does not hold its parent's
  /// locks: its copy of the descriptor is closed at the fork (an flock
  /// belongs to the open file, which the copy would keep locked after the
  /// parent's release), and a KeyLock that came over the fork releases
  /// nothing.
  class KeyLock {
  public:
    KeyLock() = default;
    KeyLock(KeyLock &&O) noexcept;
    KeyLock &operator=(KeyLock &&O) noexcept;
    ~KeyLock() { release(); }
    bool held() const { return FD >= 0; }
    /// Another process held it when lockKey was called.
    bool waited() const { return Waited; }
    void release();

  private:
    friend class DiskCache;
    int FD = -1;
    std::shared_ptr<const Directory> Dir; ///< the lock file's directory
    std::string Name;
    bool Waited = false;
    uint64_t ForkGeneration = 0; ///< forkGeneration() when it was taken
  };
  /// Takes \p K's lock, waiting for another process that holds it (at most
  /// LockTimeout). Callers look the key up again once they hold it. Not
  /// held when something other than a regular file is in the lock's place,
  /// or (without a secret) a lock file that is not this user's.
  KeyLock lockKey(const CacheKey &K);

  /// Removes stale temp and lock files and, when the entries exceed
  /// MaxBytes, the least recently used entries (by modification time, which
  /// lookups refresh at most once an hour). Touches no other file, and of
  /// these only regular files.
  void prune();

  DiskCacheStats getStats() const;

private:
  std::optional<Artifact> lookupImpl(const CacheKey &K, std::string *Problem,
                                     const ArtifactMatch *Want, bool CountMisses);
  /// The opened, checked directory; null when there is none (yet), it was
  /// refused, or (\p Create) it cannot be created or opened (stores are
  /// then off, with the warning). \p Stale: a handle found to be of a
  /// removed directory, to be opened again.
  std::shared_ptr<const Directory> directory(bool Create, const Directory *Stale = nullptr);
  /// Opens (\p Create: after creating it) and checks the directory.
  std::shared_ptr<const Directory> openDirectory(bool Create);
  void disableStores(const std::string &Why);
  void warn(const std::string &Msg);
  void maybePrune();

  DiskCacheOptions Opts;
  std::atomic<bool> Writable{true};
  std::atomic<bool> Refused{false};
  std::atomic<bool> Warned{false};
  std::mutex DirMu;
  std::shared_ptr<const Directory> Dir; // guarded by DirMu
  std::atomic<int64_t> LastPruneNs{0};
  struct AtomicStats;
  std::unique_ptr<AtomicStats> Counters;
};

} // namespace gridjit

#endif // GRIDJIT_CACHE_DISKCACHE_H
