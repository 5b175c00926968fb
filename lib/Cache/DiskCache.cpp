//===- DiskCache.cpp - Compiled artifacts in a directory ------------------===//
//
// Part of gridjit. The file protocol (docs/Cache.md has the long form):
//
// * The directory is opened once (created 0700 when missing) and checked
//   with fstat on the opened descriptor: this user's and not writable by
//   group or others, or a secret is set (docs/Cache.md, "Sharing a cache
//   directory"). Every file is then reached relative to that descriptor
//   (openat, renameat, unlinkat; O_NOFOLLOW), so neither a path swapped
//   after the check nor a symbolic link leads anywhere else.
// * lookup opens the entry, checks the opened file (a regular file; with
//   no secret, this user's and not writable by group or others), reads it
//   whole (read() into its own memory, never mmap, so that a file
//   truncated underneath cannot fault), checks its tag (with a secret),
//   then decodes it; anything wrong is a miss.
// * store writes a unique temp file in the directory, then renames it
//   over the entry: atomic on POSIX, so readers see the old entry or the
//   new one. A rename replaces a file or a link in the entry's place (the
//   name only: it never follows one); a directory there makes the store
//   fail and is left alone, never removed: another user may have put
//   links to this user's files inside it.
// * lockKey takes flock(LOCK_EX) on gridjit-<key>.lock. The kernel drops
//   the lock when its process dies, so a killed compiler never blocks the
//   others. The holder removes the file before unlocking; a waiter that
//   then gets the lock on the removed file sees (by inode) that it is no
//   longer the file at that name and starts over, so two processes never
//   both believe they hold the lock of one key.
// * prune removes only regular files with names of the three forms above,
//   one name at a time (unlinkat, which never follows a link).
//
// LLVM's Support/Caching.h (localCache) and CachePruning.h (pruneCache) do
// not fit: localCache has no header, checksum, lock or repair of bad
// entries, and pruneCache only looks at "llvmcache-*" files (which a
// ThinLTO cache in the same directory would own), prints its own warnings
// to stderr and works by path. The pruning policy here is the same idea,
// size-bound, least recently used first.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/DiskCache.h"
#include "TaggedEntry.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <dirent.h>
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

/// The opened directory: every file of the cache is reached relative to
/// FD. Shared by the operations using it; closed when the last lets go.
struct DiskCache::Directory {
  int FD = -1;
  /// This user's and not writable by group or others.
  bool Trusted = false;
  ~Directory() {
    if (FD >= 0)
      ::close(FD);
  }
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

/// The name of \p K's file with \p Suffix ("gridjit-<key>.gjc").
std::string keyName(const CacheKey &K, llvm::StringRef Suffix) {
  return (Prefix + K.hex() + Suffix).str();
}

/// The name of user \p Uid, or its number when it has none.
std::string userName(uid_t Uid) {
  struct passwd Pw, *Result = nullptr;
  char Buf[4096];
  if (getpwuid_r(Uid, &Pw, Buf, sizeof(Buf), &Result) == 0 && Result && Pw.pw_name)
    return Pw.pw_name;
  return std::to_string(Uid);
}

/// "alice (uid 1000)".
std::string describeUser(uid_t Uid) { return userName(Uid) + " (uid " + std::to_string(Uid) + ")"; }

/// Why the file \p St describes may hold what another user wrote: it is
/// owned by someone else, or writable by group or others. Empty: it is
/// this user's alone. As Git's safe.directory (CVE-2022-24765) and
/// OpenSSH's StrictModes decide; an ACL that grants another user write
/// access shows as group write permission (the ACL mask), so it counts.
std::string untrustedBecause(const struct stat &St) {
  std::string Why;
  if (St.st_uid != ::geteuid())
    Why =
        "owned by " + describeUser(St.st_uid) + ", not by this user, " + describeUser(::geteuid());
  bool Group = St.st_mode & S_IWGRP, Others = St.st_mode & S_IWOTH;
  if (Group || Others) {
    char Mode[8];
    std::snprintf(Mode, sizeof(Mode), "%04o", unsigned(St.st_mode & 07777));
    Why += std::string(Why.empty() ? "" : ", and ") + "writable by " +
           (Group && Others ? "group and others"
            : Group         ? "group"
                            : "others") +
           " (mode " + Mode + ")";
  }
  return Why;
}

/// Reads all of \p FD into \p Data (sized to what is expected); a short
/// file is read short. 0, or the errno of a failed read.
int readAll(int FD, std::string &Data) {
  size_t Got = 0;
  int Error = 0;
  while (Got < Data.size()) {
    ssize_t N = ::read(FD, Data.data() + Got, Data.size() - Got);
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      Error = errno;
    if (N <= 0)
      break;
    Got += static_cast<size_t>(N);
  }
  Data.resize(Got);
  return Error;
}

/// Writes all of \p Data to \p FD. 0, or the errno of a failed write.
int writeAll(int FD, std::string_view Data) {
  while (!Data.empty()) {
    ssize_t N = ::write(FD, Data.data(), Data.size());
    if (N < 0 && errno == EINTR)
      continue;
    if (N < 0)
      return errno;
    Data.remove_prefix(static_cast<size_t>(N));
  }
  return 0;
}

/// Twelve random hex digits for a temp file's name.
std::string randomSuffix() {
  uint64_t R = (uint64_t(llvm::sys::Process::GetRandomNumber()) << 32) ^
               uint64_t(llvm::sys::Process::GetRandomNumber()) ^ uint64_t(nowNs());
  std::string S = llvm::utohexstr(R & 0xffffffffffffULL, /*LowerCase=*/true);
  return std::string(12 - std::min<size_t>(S.size(), 12), '0') + S;
}

} // namespace

//===----------------------------------------------------------------------===//
// Directory
//===----------------------------------------------------------------------===//
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

llvm::Expected<std::string> gridjit::resolveDiskCacheSecret(const std::string &SecretFile,
                                                            const RemoteCache *Remote) {
  std::string File = SecretFile;
  if (File.empty())
    File = getEnv(EnvVar::GridjitCacheSecretFile).value_or("");
  if (!File.empty())
    return readSecretFile(File, "cache secret file");
  return Remote ? Remote->getOptions().Secret : std::string();
}

DiskCache::DiskCache(DiskCacheOptions O)
    : Opts(std::move(O)), Counters(std::make_unique<AtomicStats>()) {}

DiskCache::~DiskCache() = default;

std::string DiskCache::getEntryPath(const CacheKey &K) const {
  return joinPath(Opts.Dir, keyName(K, EntrySuffix));
}

void DiskCache::warn(const std::string &Msg) {
  // Exactly one warning, from whichever thread gets here first.
  if (Warned.exchange(true))
    return;
  if (Opts.Warning)
    Opts.Warning(Msg);
  else
    llvm::WithColor::warning(llvm::errs(), "gridjit") << Msg << '\n';
}

void DiskCache::disableStores(const std::string &Why) {
  if (!Writable.exchange(false))
    return;
  warn("cache directory '" + Opts.Dir + "' is not usable (" + Why + "); " + Opts.Consequence);
}

std::shared_ptr<const DiskCache::Directory> DiskCache::openDirectory(bool Create) {
  // 0700: nobody else may write here, so the directory is trusted without
  // a secret; its missing parents are made the same way.
  if (Create)
    if (std::error_code EC =
            fs::create_directories(Opts.Dir, /*IgnoreExisting=*/true, fs::perms::owner_all)) {
      disableStores("cannot create it: " + EC.message());
      return nullptr;
    }
  // The directory itself may be reached through a link (a cache on another
  // disk); what is checked is the directory opened.
  int FD = ::open(Opts.Dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (FD < 0) {
    // A lookup only misses; a store says why it cannot use the directory.
    if (Create)
      disableStores(std::string("cannot open it: ") + std::strerror(errno));
    return nullptr;
  }
  auto D = std::make_shared<Directory>();
  D->FD = FD;
  struct stat St;
  if (::fstat(FD, &St) != 0) {
    disableStores(std::string("cannot stat it: ") + std::strerror(errno));
    return nullptr;
  }
  std::string Why = untrustedBecause(St);
  D->Trusted = Why.empty();
  if (!D->Trusted && Opts.Secret.empty()) {
    // Refused: nothing is read from or written to it. One warning.
    Refused.store(true);
    Writable.store(false);
    warn("cache directory '" + Opts.Dir + "' is not trusted: it is " + Why +
         ", so another user could plant entries in it that this process would run as its "
         "own code. Make it yours and private (chown " +
         userName(::geteuid()) + " '" + Opts.Dir + "'; chmod go-w '" + Opts.Dir +
         "'), or give every user of it the same cache secret (GRIDJIT_CACHE_SECRET_FILE; "
         "docs/Cache.md, \"Sharing a cache directory\"); " +
         Opts.Consequence);
    return nullptr;
  }
  return D;
}

std::shared_ptr<const DiskCache::Directory> DiskCache::directory(bool Create,
                                                                 const Directory *Stale) {
  {
    std::lock_guard<std::mutex> G(DirMu);
    if (Stale && Dir.get() == Stale)
      Dir.reset();
    if (Dir)
      return Dir;
  }
  if (Refused.load(std::memory_order_relaxed) || (Create && !isWritable()))
    return nullptr;
  // Opened without the lock held (it is file I/O); of two threads that
  // both open it, the first to get here keeps its handle.
  std::shared_ptr<const Directory> D = openDirectory(Create);
  if (!D)
    return nullptr;
  std::lock_guard<std::mutex> G(DirMu);
  if (!Dir)
    Dir = std::move(D);
  return Dir;
}

//===----------------------------------------------------------------------===//
// Lookup and store
//===----------------------------------------------------------------------===//

std::optional<Artifact> DiskCache::lookup(const CacheKey &K, std::string *Problem,
                                          const ArtifactMatch *Want) {
  return lookupImpl(K, Problem, Want, /*CountMisses=*/true);
}

std::optional<Artifact> DiskCache::lookupAgain(const CacheKey &K, const ArtifactMatch *Want) {
  return lookupImpl(K, nullptr, Want, /*CountMisses=*/false);
}

std::optional<Artifact> DiskCache::lookupImpl(const CacheKey &K, std::string *Problem,
                                              const ArtifactMatch *Want, bool CountMisses) {
  auto Miss = [&]() -> std::optional<Artifact> {
    if (CountMisses)
      Counters->Misses.fetch_add(1, std::memory_order_relaxed);
    return std::nullopt;
  };
  std::string Name = keyName(K, EntrySuffix);
  /// \p Why follows the entry's quoted path: "is not a regular file",
  /// ": invalid cache entry: ...".
  auto Bad = [&](const std::string &Why) -> std::optional<Artifact> {
    if (CountMisses)
      Counters->BadEntries.fetch_add(1, std::memory_order_relaxed);
    if (Problem)
      *Problem = "'" + getEntryPath(K) + "'" + Why;
    return Miss();
  };
  std::shared_ptr<const Directory> D = directory(/*Create=*/false);
  if (!D)
    return Miss(); // none yet, or refused
  // O_NONBLOCK: a FIFO in the entry's place must not block the open (it is
  // then rejected as not a regular file); O_NOFOLLOW: gridjit never makes a
  // symbolic link there, so one (to a FIFO, a device, ...) is a bad entry.
  int FD = ::openat(D->FD, Name.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOFOLLOW);
  if (FD < 0) {
    if (errno == ENOENT || errno == ENOTDIR)
      return Miss();
    return Bad(std::string(" cannot be opened: ") + std::strerror(errno));
  }
  // Every check is of the file opened (fstat), not of a name that could
  // be swapped meanwhile.
  struct stat St;
  if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode)) {
    ::close(FD);
    return Bad(" is not a regular file");
  }
  if (Opts.Secret.empty()) {
    if (std::string Why = untrustedBecause(St); !Why.empty()) {
      ::close(FD);
      return Bad(" is " + Why + ": without a cache secret, only this user's own entries are used");
    }
  }
  if (uint64_t(St.st_size) > Opts.MaxEntryBytes) {
    ::close(FD);
    return Bad(" is " + std::to_string(St.st_size) +
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
  int ReadError = readAll(FD, Data);
  // Lookups refresh the modification time (at most hourly), which is what
  // pruning orders entries by: least recently used go first.
  if (!ReadError &&
      std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(St.st_mtime) >
          std::chrono::hours(1))
    (void)::futimens(FD, nullptr);
  ::close(FD);
  if (ReadError)
    return Bad(std::string(" cannot be read: ") + std::strerror(ReadError));
  // With a secret, the tag is checked before any byte of the entry is
  // decoded.
  std::string Why;
  EntryProblem P;
  std::optional<Artifact> A =
      validateTaggedEntry(Opts.Secret, TagContext::Disk, K, Data, Want, Why, P);
  if (!A)
    return Bad(": " + Why);
  Counters->Hits.fetch_add(1, std::memory_order_relaxed);
  return A;
}

bool DiskCache::store(const CacheKey &K, const Artifact &A) {
  auto Failed = [&] {
    Counters->StoreFailures.fetch_add(1, std::memory_order_relaxed);
    return false;
  };
  if (!isWritable())
    return Failed();
  std::shared_ptr<const Directory> D = directory(/*Create=*/true);
  if (!D)
    return Failed();
  std::string Entry = encodeTaggedEntry(Opts.Secret, TagContext::Disk, K, A);
  if (Entry.size() > Opts.MaxEntryBytes)
    return Failed();

  // A new temp file of this process's own (O_EXCL: never one that is
  // there, nor through a link).
  std::string TempName;
  int FD = -1;
  for (int Attempt = 0; Attempt < 8 && FD < 0; ++Attempt) {
    TempName = keyName(K, TempInfix) + randomSuffix();
    FD = ::openat(D->FD, TempName.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW,
                  0644);
    if (FD >= 0 || errno == EEXIST)
      continue;
    if (errno != ENOENT || Attempt > 0)
      break;
    // The directory was removed while we ran: make it again, once.
    D = directory(/*Create=*/true, D.get());
    if (!D)
      return Failed();
  }
  if (FD < 0) {
    disableStores(std::string("cannot create a file in it: ") + std::strerror(errno));
    return Failed();
  }
  int Error = writeAll(FD, Entry);
  if (::close(FD) != 0 && !Error)
    Error = errno;
  if (Error) {
    ::unlinkat(D->FD, TempName.c_str(), 0);
    disableStores(std::string("cannot write to it: ") + std::strerror(Error));
    return Failed();
  }
  // Replaces a file or a link in the entry's place, never follows one. A
  // directory there (EISDIR) is a bad entry to skip: removing it could
  // remove whatever another user linked inside it.
  if (::renameat(D->FD, TempName.c_str(), D->FD, keyName(K, EntrySuffix).c_str()) != 0) {
    ::unlinkat(D->FD, TempName.c_str(), 0);
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
    : FD(O.FD), Dir(std::move(O.Dir)), Name(std::move(O.Name)), Waited(O.Waited),
      ForkGeneration(O.ForkGeneration) {
  O.FD = -1;
}

DiskCache::KeyLock &DiskCache::KeyLock::operator=(KeyLock &&O) noexcept {
  if (this != &O) {
    release();
    FD = O.FD;
    Dir = std::move(O.Dir);
    Name = std::move(O.Name);
    Waited = O.Waited;
    ForkGeneration = O.ForkGeneration;
    O.FD = -1;
  }
  return *this;
}

namespace {

/// Whether the name \p Name in directory \p DirFD is the file open as \p FD.
bool isSameFile(int DirFD, const std::string &Name, int FD) {
  struct stat Mine, AtName;
  return ::fstat(FD, &Mine) == 0 &&
         ::fstatat(DirFD, Name.c_str(), &AtName, AT_SYMLINK_NOFOLLOW) == 0 &&
         Mine.st_ino == AtName.st_ino && Mine.st_dev == AtName.st_dev;
}

} // namespace

void DiskCache::KeyLock::release() {
  if (FD < 0)
    return;
  if (ForkGeneration != forkGeneration()) {
    FD = -1; // the parent's lock: the fork closed this copy of it
    Dir.reset();
    return;
  }
  removeForkChildClose(FD);
  // Remove the name while still holding the lock (see the file comment),
  // if it is still our file.
  if (isSameFile(Dir->FD, Name, FD))
    ::unlinkat(Dir->FD, Name.c_str(), 0);
  ::close(FD); // releases the flock
  FD = -1;
  Dir.reset();
}

DiskCache::KeyLock DiskCache::lockKey(const CacheKey &K) {
  KeyLock L;
  if (!isWritable())
    return L;
  std::shared_ptr<const Directory> D = directory(/*Create=*/true);
  if (!D)
    return L;
  std::string Name = keyName(K, LockSuffix);
  TimeSource &Time = *Opts.Time;
  auto Deadline = Time.now() + Opts.LockTimeout;
  auto Sleep = std::chrono::microseconds(500);
  while (true) {
    // O_NOFOLLOW: a symbolic link planted in the lock's place must not
    // make us create or lock a file elsewhere; O_NONBLOCK: nor may a FIFO
    // block the open. Only a regular file is a lock. Read-only: flock needs
    // no more, so the users of a shared directory lock each other's files.
    int FD = ::openat(D->FD, Name.c_str(), O_RDONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK,
                      0644);
    if (FD < 0)
      return L; // cannot lock here (read-only, a directory in the way...)
    struct stat St;
    if (::fstat(FD, &St) != 0 || !S_ISREG(St.st_mode) ||
        (Opts.Secret.empty() && !untrustedBecause(St).empty())) {
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
    // Is the file we locked still the one at the name? If its holder
    // removed it in the meantime, start over with the new one.
    if (isSameFile(D->FD, Name, FD)) {
      // Not for a child of fork(), which must not keep it locked.
      addForkChildClose(FD);
      L.FD = FD;
      L.Dir = std::move(D);
      L.Name = std::move(Name);
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
  std::shared_ptr<const Directory> D = directory(/*Create=*/false);
  if (!D)
    return;
  struct Entry {
    std::string Name;
    std::chrono::system_clock::time_point MTime;
    uint64_t Size;
  };
  std::vector<Entry> Entries;
  uint64_t Total = 0;
  auto Now = std::chrono::system_clock::now();
  // One name, never followed, never a directory (no AT_REMOVEDIR).
  auto Remove = [&](const std::string &Name) {
    if (::unlinkat(D->FD, Name.c_str(), 0) == 0)
      Counters->PrunedFiles.fetch_add(1, std::memory_order_relaxed);
  };

  // A descriptor of its own for the listing (its own offset: prunes of
  // several threads do not disturb each other).
  int ListFD = ::openat(D->FD, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  DIR *List = ListFD >= 0 ? ::fdopendir(ListFD) : nullptr;
  if (!List) {
    if (ListFD >= 0)
      ::close(ListFD);
    return;
  }
  while (dirent *E = ::readdir(List)) {
    std::string Name = E->d_name;
    llvm::StringRef Rest;
    if (!isOwnName(Name, Rest))
      continue;
    struct stat St;
    if (::fstatat(D->FD, Name.c_str(), &St, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(St.st_mode))
      continue;
    auto MTime = std::chrono::system_clock::from_time_t(St.st_mtime);
    bool Stale = Now - MTime > Opts.StaleAfter;
    if (Rest == EntrySuffix) {
      Entries.push_back({Name, MTime, uint64_t(St.st_size)});
      Total += uint64_t(St.st_size);
    } else if (Rest.starts_with(TempInfix)) {
      if (Stale)
        Remove(Name);
    } else if (Rest == LockSuffix && Stale) {
      // A lock file outlives its process only when the process was killed
      // (a holder removes its own). Remove it if nobody holds it now.
      int FD = ::openat(D->FD, Name.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);
      if (FD >= 0) {
        if (::flock(FD, LOCK_EX | LOCK_NB) == 0 && isSameFile(D->FD, Name, FD))
          Remove(Name);
        ::close(FD);
      }
    }
  }
  ::closedir(List);
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
    Remove(E.Name);
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
