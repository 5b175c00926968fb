//===- DiskCache.cpp - Compiled artifacts in a directory ------------------===//
//
// Part of gridjit. The file protocol (docs/Cache.md has the long form):
//
// * lookup opens the entry, reads it whole (read() into its own memory,
//   never mmap, so that a file truncated underneath cannot fault) and
//   decodes it; anything wrong is a miss.
// * store writes a unique temp file in the directory, then rename()s it
//   over the entry: atomic on POSIX, so readers see the old entry or the
//   new one. A directory squatting on the entry's name is removed first.
// * lockKey takes flock(LOCK_EX) on gridjit-<key>.lock. The kernel drops
//   the lock when its process dies, so a killed compiler never blocks the
//   others. The holder removes the file before unlocking; a waiter that
//   then gets the lock on the removed file sees (by inode) that it is no
//   longer the file at that path and starts over, so two processes never
//   both believe they hold the lock of one key.
// * prune removes only names of the three forms above.
//
// LLVM's Support/Caching.h (localCache) and CachePruning.h (pruneCache) do
// not fit: localCache has no header, checksum, lock or repair of bad
// entries, and pruneCache only looks at "llvmcache-*" files (which a
// ThinLTO cache in the same directory would own) and prints its own
// warnings to stderr. The pruning policy here is the same idea, size-bound,
// least recently used first.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <fcntl.h>
#include <pwd.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gridjit;
namespace fs = llvm::sys::fs;

struct DiskCache::AtomicStats {
  std::atomic<uint64_t> Hits{0}, Misses{0}, BadEntries{0}, Stores{0}, StoreFailures{0},
      LockWaits{0}, LockTimeouts{0}, PrunedFiles{0};
};

namespace {

constexpr llvm::StringLiteral Prefix = "gridjit-";
constexpr llvm::StringLiteral EntrySuffix = ".gjc";
constexpr llvm::StringLiteral LockSuffix = ".lock";
constexpr llvm::StringLiteral TempInfix = ".tmp-";

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

/// "gridjit-<64 hex>" followed by \p Rest: the names this cache owns.
bool isOwnName(llvm::StringRef Name, llvm::StringRef &Rest) {
  if (!Name.starts_with(Prefix) || Name.size() < Prefix.size() + 64)
    return false;
  CacheKey K;
  if (!CacheKey::fromHex(Name.substr(Prefix.size(), 64), K))
    return false;
  Rest = Name.substr(Prefix.size() + 64);
  return true;
}

std::string joinPath(llvm::StringRef Dir, llvm::StringRef Name) {
  llvm::SmallString<256> P(Dir);
  llvm::sys::path::append(P, Name);
  return std::string(P);
}

} // namespace

//===----------------------------------------------------------------------===//
// Directory
//===----------------------------------------------------------------------===//

llvm::Expected<std::string> gridjit::resolveCacheDirectory(std::string_view Explicit) {
  if (!Explicit.empty())
    return std::string(Explicit);
  if (std::optional<std::string> D = getEnv(EnvVar::GridjitCacheDir); D && !D->empty())
    return *D;
  // The XDG base directory spec: a relative path is invalid and ignored.
  if (std::optional<std::string> X = getEnv(EnvVar::XdgCacheHome);
      X && llvm::sys::path::is_absolute(*X))
    return joinPath(*X, "gridjit");
  std::optional<std::string> Home = getEnv(EnvVar::Home);
  if (!Home || Home->empty()) {
    // Not llvm::sys::path::home_directory: it reads $HOME itself, which
    // would be a read of the environment outside the table.
    struct passwd Pw, *Result = nullptr;
    char Buf[4096];
    if (getpwuid_r(getuid(), &Pw, Buf, sizeof(Buf), &Result) == 0 && Result && Pw.pw_dir &&
        *Pw.pw_dir)
      Home = std::string(Pw.pw_dir);
  }
  if (Home && !Home->empty())
    return joinPath(joinPath(*Home, ".cache"), "gridjit");
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 "no cache directory: none was given and GRIDJIT_CACHE_DIR, "
                                 "XDG_CACHE_HOME and HOME are unset");
}

DiskCache::DiskCache(DiskCacheOptions O)
    : Opts(std::move(O)), Counters(std::make_unique<AtomicStats>()) {}

DiskCache::~DiskCache() = default;

std::string DiskCache::getEntryPath(const CacheKey &K) const {
  return joinPath(Opts.Dir, (Prefix + K.hex() + EntrySuffix).str());
}

void DiskCache::disableStores(const std::string &Why) {
  // Exactly one warning, from whichever thread gets here first.
  if (!Writable.exchange(false))
    return;
  std::string Msg =
      "cache directory '" + Opts.Dir + "' is not usable (" + Why + "); " + Opts.Consequence;
  if (Opts.Warning)
    Opts.Warning(Msg);
  else
    llvm::WithColor::warning(llvm::errs(), "gridjit") << Msg << '\n';
}

bool DiskCache::ensureDirectory() {
  if (DirectoryReady.load(std::memory_order_acquire))
    return true;
  if (std::error_code EC = fs::create_directories(Opts.Dir)) {
    disableStores("cannot create it: " + EC.message());
    return false;
  }
  DirectoryReady.store(true, std::memory_order_release);
  return true;
}

//===----------------------------------------------------------------------===//
// Lookup and store
//===----------------------------------------------------------------------===//

std::optional<Artifact> DiskCache::lookup(const CacheKey &K, std::string *Problem) {
  return lookupImpl(K, Problem, /*CountMisses=*/true);
}

std::optional<Artifact> DiskCache::lookupAgain(const CacheKey &K) {
  return lookupImpl(K, nullptr, /*CountMisses=*/false);
}

std::optional<Artifact> DiskCache::lookupImpl(const CacheKey &K, std::string *Problem,
                                              bool CountMisses) {
  std::string Path = getEntryPath(K);
  auto Bad = [&](const std::string &Why) -> std::optional<Artifact> {
    if (CountMisses) {
      Counters->BadEntries.fetch_add(1, std::memory_order_relaxed);
      Counters->Misses.fetch_add(1, std::memory_order_relaxed);
    }
    if (Problem)
      *Problem = Why;
    return std::nullopt;
  };
  // O_NONBLOCK: a FIFO in the entry's place must not block the open (it is
  // then rejected as not a regular file); O_NOFOLLOW: gridjit never makes a
  // symbolic link there, so one (to a FIFO, a device, ...) is a bad entry.
  int FD = ::open(Path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (FD < 0) {
    if (errno == ENOENT || errno == ENOTDIR) {
      if (CountMisses)
        Counters->Misses.fetch_add(1, std::memory_order_relaxed);
      return std::nullopt;
    }
    return Bad("cannot open '" + Path + "': " + std::strerror(errno));
  }
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(FD);
    return Bad("'" + Path + "' is not a regular file");
  }
  if (uint64_t(St.st_size) > Opts.MaxEntryBytes) {
    ::close(FD);
    return Bad("'" + Path + "' is " + std::to_string(St.st_size) +
               " bytes, more than any entry gridjit writes (DiskCacheOptions::MaxEntryBytes = " +
               std::to_string(Opts.MaxEntryBytes) + ")");
  }
  // Read it whole with read() into memory of our own, never mapped: a
  // foreign writer may truncate the file in place, and a mapping of it
  // would then raise SIGBUS in the reader (MemoryBuffer::getOpenFile maps
  // files of 16 KiB and more even when told they are volatile, unless a
  // NUL terminator is required). A file that shrinks meanwhile is read
  // short, and decoding rejects it.
  std::string Data(static_cast<size_t>(St.st_size), '\0');
  size_t Got = 0;
  int ReadError = 0;
  while (Got < Data.size()) {
    ssize_t N = ::read(FD, Data.data() + Got, Data.size() - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      ReadError = errno;
    if (N <= 0)
      break;
    Got += static_cast<size_t>(N);
  }
  Data.resize(Got);
  // Lookups refresh the modification time (at most hourly), which is what
  // pruning orders entries by: least recently used go first.
  if (!ReadError &&
      std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(St.st_mtime) >
          std::chrono::hours(1))
    (void)::futimens(FD, nullptr);
  ::close(FD);
  if (ReadError)
    return Bad("cannot read '" + Path + "': " + std::strerror(ReadError));
  auto A = decodeCacheEntry(std::string_view(Data.data(), Data.size()), K);
  if (!A)
    return Bad("'" + Path + "': " + llvm::toString(A.takeError()));
  Counters->Hits.fetch_add(1, std::memory_order_relaxed);
  return std::move(*A);
}

bool DiskCache::store(const CacheKey &K, const Artifact &A) {
  auto Failed = [&] {
    Counters->StoreFailures.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
  if (!isWritable() || !ensureDirectory())
    return Failed();
  std::string Entry = encodeCacheEntry(K, A);
  if (Entry.size() > Opts.MaxEntryBytes)
    return Failed();
  std::string Path = getEntryPath(K);
  std::string Model = joinPath(Opts.Dir, (Prefix + K.hex() + TempInfix + "%%%%%%%%%%%%").str());

  int FD = -1;
  llvm::SmallString<256> TempPath;
  std::error_code EC = fs::createUniqueFile(Model, FD, TempPath, fs::OF_None, 0644);
  if (EC == std::errc::no_such_file_or_directory) {
    // The directory was removed while we ran: make it again, once.
    DirectoryReady.store(false, std::memory_order_release);
    if (!ensureDirectory())
      return Failed();
    EC = fs::createUniqueFile(Model, FD, TempPath, fs::OF_None, 0644);
  }
  if (EC) {
    disableStores("cannot create a file in it: " + EC.message());
    return Failed();
  }
  {
    llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
    OS << Entry;
    OS.close();
    if (OS.has_error()) {
      EC = OS.error();
      OS.clear_error();
    }
  }
  if (EC) {
    fs::remove(TempPath);
    disableStores("cannot write to it: " + EC.message());
    return Failed();
  }
  EC = fs::rename(TempPath, Path);
  if (EC) {
    // Something that is not a file holds the entry's name (a directory,
    // say): it is ours by its name, so remove it and try again once.
    fs::file_status St;
    if (!fs::status(Path, St, /*Follow=*/false) && fs::is_directory(St))
      fs::remove_directories(Path, /*IgnoreErrors=*/true);
    EC = fs::rename(TempPath, Path);
  }
  if (EC) {
    fs::remove(TempPath);
    return Failed();
  }
  Counters->Stores.fetch_add(1, std::memory_order_relaxed);
  maybePrune();
  return true;
}

//===----------------------------------------------------------------------===//
// Locks
//===----------------------------------------------------------------------===//

DiskCache::KeyLock::KeyLock(KeyLock &&O) noexcept
    : FD(O.FD), Path(std::move(O.Path)), Waited(O.Waited), ForkGeneration(O.ForkGeneration) {
  O.FD = -1;
}

DiskCache::KeyLock &DiskCache::KeyLock::operator=(KeyLock &&O) noexcept {
  if (this != &O) {
    release();
    FD = O.FD;
    Path = std::move(O.Path);
    Waited = O.Waited;
    ForkGeneration = O.ForkGeneration;
    O.FD = -1;
  }
  return *this;
}

void DiskCache::KeyLock::release() {
  if (FD < 0)
    return;
  if (ForkGeneration != forkGeneration()) {
    FD = -1; // the parent's lock: the fork closed this copy of it
    return;
  }
  removeForkChildClose(FD);
  // Remove the name while still holding the lock (see the file comment).
  ::unlink(Path.c_str());
  ::close(FD); // releases the flock
  FD = -1;
}

DiskCache::KeyLock DiskCache::lockKey(const CacheKey &K) {
  KeyLock L;
  if (!isWritable() || !ensureDirectory())
    return L;
  std::string Path = joinPath(Opts.Dir, (Prefix + K.hex() + LockSuffix).str());
  TimeSource &Time = *Opts.Time;
  auto Deadline = Time.now() + Opts.LockTimeout;
  auto Sleep = std::chrono::microseconds(500);
  while (true) {
    // O_NOFOLLOW: a symbolic link planted in the lock's place must not
    // make us create or lock a file elsewhere; O_NONBLOCK: nor may a FIFO
    // block the open. Only a regular file is a lock.
    int FD = ::open(Path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK, 0644);
    if (FD < 0)
      return L; // cannot lock here (read-only, a directory in the way...)
    if (struct stat St; ::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
      ::close(FD);
      return L; // something else squats on the lock's name: no lock
    }
    bool Locked = false;
    while (true) {
      if (::flock(FD, LOCK_EX | LOCK_NB) == 0) {
        Locked = true;
        break;
      }
      if (errno == EINTR)
        continue;
      if (errno != EWOULDBLOCK) // no flock on this file system
        break;
      if (!L.Waited) {
        L.Waited = true;
        Counters->LockWaits.fetch_add(1, std::memory_order_relaxed);
      }
      if (Time.now() >= Deadline) {
        Counters->LockTimeouts.fetch_add(1, std::memory_order_relaxed);
        break;
      }
      Time.sleepFor(Sleep);
      Sleep = std::min<std::chrono::microseconds>(Sleep * 2, std::chrono::milliseconds(20));
    }
    if (!Locked) {
      ::close(FD);
      return L;
    }
    // Is the file we locked still the one at Path? If its holder removed it
    // in the meantime, start over with the new one.
    struct stat Mine, AtPath;
    if (::fstat(FD, &Mine) == 0 && ::stat(Path.c_str(), &AtPath) == 0 &&
        Mine.st_ino == AtPath.st_ino && Mine.st_dev == AtPath.st_dev) {
      // Not for a child of fork(), which must not keep it locked.
      addForkChildClose(FD);
      L.FD = FD;
      L.Path = std::move(Path);
      L.ForkGeneration = forkGeneration();
      return L;
    }
    ::close(FD);
    L.Waited = true;
    if (Time.now() >= Deadline) {
      Counters->LockTimeouts.fetch_add(1, std::memory_order_relaxed);
      return L;
    }
  }
}

//===----------------------------------------------------------------------===//
// Pruning
//===----------------------------------------------------------------------===//

void DiskCache::maybePrune() {
  // The first store of this object prunes, then at most one per interval;
  // of the threads storing at once, one prunes and the others go on.
  int64_t Now = nowNs();
  int64_t Last = LastPruneNs.load(std::memory_order_relaxed);
  auto Interval = std::chrono::duration_cast<std::chrono::nanoseconds>(Opts.PruneInterval);
  if (Last != 0 && Now - Last < Interval.count())
    return;
  if (!LastPruneNs.compare_exchange_strong(Last, Now))
    return;
  prune();
}

void DiskCache::prune() {
  struct Entry {
    std::string Path;
    std::chrono::system_clock::time_point MTime;
    uint64_t Size;
  };
  std::vector<Entry> Entries;
  uint64_t Total = 0;
  auto Now = std::chrono::system_clock::now();
  auto Remove = [&](const std::string &Path) {
    if (!fs::remove(Path, /*IgnoreNonExisting=*/true))
      Counters->PrunedFiles.fetch_add(1, std::memory_order_relaxed);
  };

  std::error_code EC;
  for (fs::directory_iterator It(Opts.Dir, EC), End; It != End && !EC; It.increment(EC)) {
    llvm::StringRef Name = llvm::sys::path::filename(It->path());
    llvm::StringRef Rest;
    if (!isOwnName(Name, Rest))
      continue;
    fs::file_status St;
    if (fs::status(It->path(), St, /*Follow=*/false))
      continue;
    auto MTime = std::chrono::time_point_cast<std::chrono::system_clock::duration>(
        St.getLastModificationTime());
    bool Stale = Now - MTime > Opts.StaleAfter;
    if (Rest == EntrySuffix) {
      if (fs::is_regular_file(St)) {
        Entries.push_back({It->path(), MTime, St.getSize()});
        Total += St.getSize();
      }
    } else if (Rest.starts_with(TempInfix)) {
      if (Stale && fs::is_regular_file(St))
        Remove(It->path());
    } else if (Rest == LockSuffix) {
      // A lock file outlives its process only when the process was killed
      // (a holder removes its own). Remove it if nobody holds it now.
      if (Stale && fs::is_regular_file(St)) {
        int FD = ::open(It->path().c_str(), O_RDWR | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
        if (FD >= 0) {
          if (::flock(FD, LOCK_EX | LOCK_NB) == 0)
            Remove(It->path());
          ::close(FD);
        }
      }
    }
  }
  if (Opts.MaxBytes == 0 || Total <= Opts.MaxBytes)
    return;
  // Least recently used first, down to 90% of the bound, so that the next
  // few stores do not each prune again.
  std::sort(Entries.begin(), Entries.end(),
            [](const Entry &A, const Entry &B) { return A.MTime < B.MTime; });
  uint64_t Goal = Opts.MaxBytes / 10 * 9;
  for (const Entry &E : Entries) {
    if (Total <= Goal)
      break;
    Remove(E.Path);
    Total -= E.Size;
  }
}

DiskCacheStats DiskCache::getStats() const {
  DiskCacheStats S;
  S.Hits = Counters->Hits.load();
  S.Misses = Counters->Misses.load();
  S.BadEntries = Counters->BadEntries.load();
  S.Stores = Counters->Stores.load();
  S.StoreFailures = Counters->StoreFailures.load();
  S.LockWaits = Counters->LockWaits.load();
  S.LockTimeouts = Counters->LockTimeouts.load();
  S.PrunedFiles = Counters->PrunedFiles.load();
  return S;
}
