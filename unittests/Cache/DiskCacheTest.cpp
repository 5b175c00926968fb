//===- DiskCacheTest.cpp - Bad entries, bad directories, pruning, locks ---===//
//
// Part of gridjit. Every kind of bad entry (truncated, a flipped byte, zero
// length, another format version, a foreign file under its name) is a miss
// that is recompiled and replaced, and a directory in its place a miss
// that is left alone (DiskTrustTest has the links inside it); an unusable
// directory gives exactly one warning and memory-only caching; pruning
// keeps the size bound and touches only the cache's own files; a lock left
// by a killed process does not block.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/DiskCache.h"
#include "Cache/CacheTestUtil.h"
#include "Cache/FakeRemote.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Compiler/Compiler.h"

#include "llvm/Support/Endian.h"
#include "llvm/Support/FileSystem.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <chrono>
#include <csignal>
#include <thread>

#include <fcntl.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;
namespace fs = llvm::sys::fs;

namespace {

using ::testing::HasSubstr;

enum class Damage { Truncate, FlipByte, ZeroLength, WrongVersion, Directory, ForeignFile };

const char *damageName(Damage D) {
  switch (D) {
  case Damage::Truncate:
    return "truncate";
  case Damage::FlipByte:
    return "flip a byte";
  case Damage::ZeroLength:
    return "zero length";
  case Damage::WrongVersion:
    return "wrong version";
  case Damage::Directory:
    return "a directory where the file should be";
  case Damage::ForeignFile:
    return "a foreign file under the entry's name";
  }
  return "?";
}

void damage(const std::string &Path, Damage D) {
  std::string Data = readFile(Path);
  ASSERT_GT(Data.size(), CacheEntryHeaderSize);
  switch (D) {
  case Damage::Truncate:
    writeFile(Path, Data.substr(0, Data.size() / 2));
    break;
  case Damage::FlipByte:
    Data[Data.size() / 2] ^= 0x20;
    writeFile(Path, Data);
    break;
  case Damage::ZeroLength:
    writeFile(Path, "");
    break;
  case Damage::WrongVersion:
    // An entry written by another gridjit: a consistent header of another
    // format version.
    llvm::support::endian::write32le(Data.data() + 8, CacheFormatVersion + 7);
    writeFile(Path, Data);
    break;
  case Damage::Directory:
    ASSERT_FALSE(fs::remove(Path));
    ASSERT_FALSE(fs::create_directory(Path));
    writeFile(Path + "/inside", "a file inside the directory");
    break;
  case Damage::ForeignFile:
    writeFile(Path, "#!/bin/sh\necho this file is not a gridjit cache entry\n");
    break;
  }
}

/// Compiles saxpy with a compiler of its own on \p Dir: the payload it
/// compiled and the path of the entry it stored ("" after a failure).
std::pair<std::string, std::string> storeSaxpy(const TempDir &Dir) {
  CompileInfo I;
  auto C = makeCompiler(Dir.path());
  if (!C) {
    ADD_FAILURE() << "no compiler";
    return {};
  }
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  EXPECT_TRUE(succeeded(M));
  if (!M)
    return {};
  std::string Entry = Dir.file("gridjit-" + I.Key.hex() + ".gjc");
  EXPECT_TRUE(fs::exists(Entry));
  return {(*M)->Art.Payload, Entry};
}

class BadEntryTest : public ::testing::TestWithParam<Damage> {};

TEST_P(BadEntryTest, IsAMissThatIsRecompiledAndReplaced) {
  TempDir Dir;
  auto [GoodPayload, Entry] = storeSaxpy(Dir);
  ASSERT_FALSE(Entry.empty());
  std::string GoodBytes = readFile(Entry);

  damage(Entry, GetParam());

  std::vector<std::string> Warnings;
  auto Second = makeCompiler(Dir.path(), &Warnings);
  ASSERT_TRUE(Second);
  CompileInfo I2;
  auto Again = Second->compile(SaxpySource, "saxpy.kir", {}, &I2);
  ASSERT_TRUE(succeeded(Again)) << damageName(GetParam());
  EXPECT_EQ(I2.Outcome, CacheOutcome::Compiled) << damageName(GetParam());
  EXPECT_FALSE(I2.BadEntry.empty()) << damageName(GetParam());
  CompilerStats S = Second->getStats();
  EXPECT_EQ(S.Compiles, 1u);
  EXPECT_EQ(S.Disk.BadEntries, 1u) << damageName(GetParam());
  EXPECT_EQ(S.Disk.Stores, 1u) << damageName(GetParam());
  EXPECT_TRUE(Warnings.empty()) << Warnings.front();
  EXPECT_EQ((*Again)->Art.Payload, GoodPayload);

  // Repaired: a regular file with the same bytes as the first entry, and a
  // third compiler finds it.
  EXPECT_TRUE(fs::is_regular_file(Entry)) << damageName(GetParam());
  EXPECT_EQ(readFile(Entry), GoodBytes) << damageName(GetParam());
  auto Third = makeCompiler(Dir.path());
  CompileInfo I3;
  auto Hit = Third->compile(SaxpySource, "saxpy.kir", {}, &I3);
  ASSERT_TRUE(succeeded(Hit));
  EXPECT_EQ(I3.Outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(Third->getStats().Compiles, 0u);
}

INSTANTIATE_TEST_SUITE_P(AllKinds, BadEntryTest,
                         ::testing::Values(Damage::Truncate, Damage::FlipByte, Damage::ZeroLength,
                                           Damage::WrongVersion, Damage::ForeignFile));

// A directory in an entry's place is a bad entry too, but one to skip, not
// to clean: removing it could remove what another user linked inside it.
// Each compile misses, the store fails without a warning,
// and the directory and its file stay.
TEST(DiskCacheTest, ADirectoryInAnEntrysPlaceIsAMissLeftAlone) {
  TempDir Dir;
  auto [GoodPayload, Entry] = storeSaxpy(Dir);
  ASSERT_FALSE(Entry.empty());
  damage(Entry, Damage::Directory);
  for (int Round = 0; Round < 2; ++Round) {
    std::vector<std::string> Warnings;
    auto C = makeCompiler(Dir.path(), &Warnings);
    CompileInfo I;
    auto Again = C->compile(SaxpySource, "saxpy.kir", {}, &I);
    ASSERT_TRUE(succeeded(Again));
    EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
    EXPECT_THAT(I.BadEntry, HasSubstr("is not a regular file"));
    EXPECT_EQ((*Again)->Art.Payload, GoodPayload);
    CompilerStats S = C->getStats();
    EXPECT_EQ(S.Disk.BadEntries, 1u);
    EXPECT_EQ(S.Disk.Stores, 0u);
    EXPECT_EQ(S.Disk.StoreFailures, 1u);
    EXPECT_TRUE(Warnings.empty()) << Warnings.front();
    EXPECT_TRUE(fs::is_directory(Entry));
    EXPECT_EQ(readFile(Entry + "/inside"), "a file inside the directory");
  }
}

// A file in an entry's place larger than any entry (DiskCacheOptions::
// MaxEntryBytes) is a bad entry, found without reading it: here a sparse
// 64 GiB file, which a reader that trusted the size would try to allocate.
TEST(DiskCacheTest, OversizedFileIsABadEntryNotRead) {
  TempDir Dir;
  std::string Entry = storeSaxpy(Dir).second;
  ASSERT_FALSE(Entry.empty());
  ASSERT_EQ(::truncate(Entry.c_str(), off_t(64) << 30), 0) << std::strerror(errno);

  auto Second = makeCompiler(Dir.path());
  CompileInfo I2;
  auto Again = Second->compile(SaxpySource, "saxpy.kir", {}, &I2);
  ASSERT_TRUE(succeeded(Again));
  EXPECT_EQ(I2.Outcome, CacheOutcome::Compiled);
  EXPECT_THAT(I2.BadEntry, HasSubstr("is 68719476736 bytes, more than any entry gridjit writes"));
  EXPECT_EQ(Second->getStats().Disk.BadEntries, 1u);
  // Replaced by a good entry.
  EXPECT_LT(readFile(Entry).size(), size_t(1) << 20);
}

// A store of an entry above the bound writes nothing.
TEST(DiskCacheTest, EntryAboveTheBoundIsNotStored) {
  TempDir Dir;
  DiskCacheOptions O;
  O.Dir = Dir.path();
  O.MaxEntryBytes = 64; // less than any entry's header and payload
  DiskCache C(O);
  CacheKey K;
  K.Bytes.fill(0x6b);
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Payload = "payload";
  EXPECT_FALSE(C.store(K, A));
  EXPECT_FALSE(fs::exists(C.getEntryPath(K)));
  EXPECT_EQ(C.getStats().StoreFailures, 1u);
  EXPECT_FALSE(C.lookup(K));
}

TEST(DiskCacheTest, EntryOfAnotherKeyUnderThisName) {
  // A valid entry copied to another key's name is rejected by its key.
  TempDir Dir;
  auto C = makeCompiler(Dir.path());
  CompileInfo IA, IB;
  ASSERT_TRUE(succeeded(C->compile(makeKernel(1), "a.kir", {}, &IA)));
  ASSERT_TRUE(succeeded(C->compile(makeKernel(2), "b.kir", {}, &IB)));
  std::string A = Dir.file("gridjit-" + IA.Key.hex() + ".gjc");
  std::string B = Dir.file("gridjit-" + IB.Key.hex() + ".gjc");
  ASSERT_FALSE(fs::copy_file(A, B));
  auto D = makeCompiler(Dir.path());
  CompileInfo I;
  auto R = D->compile(makeKernel(2), "b.kir", {}, &I);
  ASSERT_TRUE(succeeded(R));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_THAT(I.BadEntry, HasSubstr("another key"));
  EXPECT_THAT((*R)->Art.Payload, HasSubstr(".entry k2"));
}

TEST(DiskCacheTest, ForeignFilesInTheDirectoryAreIgnoredAndKept) {
  TempDir Dir;
  writeFile(Dir.file("notes.txt"), "mine");
  writeFile(Dir.file("llvmcache-1234"), "a ThinLTO cache's");
  writeFile(Dir.file("gridjit-not-a-key.gjc"), "looks like ours, is not");
  auto C = makeCompiler(Dir.path());
  CompileInfo I;
  ASSERT_TRUE(succeeded(C->compile(SaxpySource, "s.kir", {}, &I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  DiskCacheOptions O;
  O.Dir = Dir.path();
  O.MaxBytes = 1; // prune everything of ours
  DiskCache D(O);
  D.prune();
  EXPECT_FALSE(fs::exists(Dir.file("gridjit-" + I.Key.hex() + ".gjc")));
  EXPECT_EQ(readFile(Dir.file("notes.txt")), "mine");
  EXPECT_TRUE(fs::exists(Dir.file("llvmcache-1234")));
  EXPECT_TRUE(fs::exists(Dir.file("gridjit-not-a-key.gjc")));
}

TEST(DiskCacheTest, UncreatableDirectoryWarnsOnceAndCachesInMemory) {
  TempDir Dir;
  writeFile(Dir.file("file"), "a file, so file/cache cannot be a directory");
  std::vector<std::string> Warnings;
  auto C = makeCompiler(Dir.file("file/cache"), &Warnings);
  ASSERT_TRUE(C);
  for (unsigned I = 0; I < 5; ++I) {
    auto R = C->compile(makeKernel(I), "k.kir");
    ASSERT_TRUE(succeeded(R));
  }
  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_THAT(Warnings[0], HasSubstr("memory only"));
  CompileInfo I;
  ASSERT_TRUE(succeeded(C->compile(makeKernel(3), "k.kir", {}, &I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::MemoryHit);
  EXPECT_EQ(C->getStats().Disk.Stores, 0u);
}

TEST(DiskCacheTest, ReadOnlyDirectoryWarnsOnce) {
  if (::geteuid() == 0)
    GTEST_SKIP() << "root writes into read-only directories";
  TempDir Dir;
  std::string RO = Dir.file("ro");
  ASSERT_FALSE(fs::create_directory(RO));
  ASSERT_EQ(::chmod(RO.c_str(), 0555), 0);
  std::vector<std::string> Warnings;
  auto C = makeCompiler(RO, &Warnings);
  for (unsigned I = 0; I < 3; ++I)
    ASSERT_TRUE(succeeded(C->compile(makeKernel(I), "k.kir")));
  EXPECT_EQ(Warnings.size(), 1u);
  ::chmod(RO.c_str(), 0755);
}

TEST(DiskCacheTest, FullDiskWarnsOnce) {
  // A file size limit makes writes fail with EFBIG, as a full disk fails
  // with ENOSPC; both are write errors of the temp file. Done in a child
  // process so that the limit and the ignored SIGXFSZ stay there.
  TempDir Dir;
  pid_t Pid = ::fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit L = {64, 64};
    ::setrlimit(RLIMIT_FSIZE, &L);
    std::vector<std::string> Warnings;
    auto C = makeCompiler(Dir.path(), &Warnings);
    bool Ok = C != nullptr;
    for (unsigned I = 0; I < 3 && Ok; ++I)
      Ok = static_cast<bool>(C->compile(makeKernel(I), "k.kir"));
    Ok = Ok && Warnings.size() == 1 && C->getStats().Disk.Stores == 0;
    // No temp file is left behind.
    std::error_code EC;
    for (fs::directory_iterator It(Dir.path(), EC), End; It != End && !EC; It.increment(EC))
      if (llvm::StringRef(It->path()).contains(".tmp-"))
        Ok = false;
    ::_exit(Ok ? 0 : 1);
  }
  int Status = 0;
  ASSERT_EQ(::waitpid(Pid, &Status, 0), Pid);
  ASSERT_TRUE(WIFEXITED(Status));
  EXPECT_EQ(WEXITSTATUS(Status), 0);
}

TEST(DiskCacheTest, PruningKeepsTheBoundAndTheNewest) {
  TempDir Dir;
  auto C = makeCompiler(Dir.path());
  CompileInfo I;
  ASSERT_TRUE(succeeded(C->compile(makeKernel(0), "k.kir", {}, &I)));
  uint64_t EntrySize = readFile(Dir.file("gridjit-" + I.Key.hex() + ".gjc")).size();
  ASSERT_GT(EntrySize, 0u);

  TempDir Small;
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.CacheDir = Small.path();
  O.DiskCacheMaxBytes = EntrySize * 5 + EntrySize / 2;
  O.DiskPruneInterval = std::chrono::milliseconds(0);
  auto P = Compiler::create(O);
  ASSERT_TRUE(succeeded(P));
  std::vector<CacheKey> Keys;
  for (unsigned K = 0; K < 20; ++K) {
    CompileInfo KI;
    ASSERT_TRUE(succeeded((*P)->compile(makeKernel(K), "k.kir", {}, &KI)));
    Keys.push_back(KI.Key);
    // Distinct modification times, so "oldest" is well defined.
    auto T = std::chrono::system_clock::now() - std::chrono::hours(100 - K);
    int FD;
    ASSERT_FALSE(fs::openFileForWrite(Small.file("gridjit-" + KI.Key.hex() + ".gjc"), FD,
                                      fs::CD_OpenExisting, fs::OF_Append));
    ASSERT_FALSE(fs::setLastAccessAndModificationTime(
        FD, llvm::sys::toTimePoint(std::chrono::system_clock::to_time_t(T))));
    ::close(FD);
  }
  uint64_t Total = 0;
  unsigned Count = 0;
  std::error_code EC;
  for (fs::directory_iterator It(Small.path(), EC), End; It != End && !EC; It.increment(EC)) {
    Total += readFile(It->path()).size();
    ++Count;
  }
  EXPECT_LE(Total, O.DiskCacheMaxBytes);
  EXPECT_GE(Count, 3u);
  // The newest survive, the oldest are gone.
  EXPECT_TRUE(fs::exists(Small.file("gridjit-" + Keys.back().hex() + ".gjc")));
  EXPECT_FALSE(fs::exists(Small.file("gridjit-" + Keys.front().hex() + ".gjc")));
  EXPECT_GT((*P)->getStats().Disk.PrunedFiles, 0u);
}

TEST(DiskCacheTest, PruningRemovesStaleTempAndLockFilesOnly) {
  TempDir Dir;
  std::string Hex(64, 'a');
  std::string OldTmp = Dir.file("gridjit-" + Hex + ".tmp-abc123");
  std::string NewTmp = Dir.file("gridjit-" + Hex + ".tmp-def456");
  std::string OldLock = Dir.file("gridjit-" + std::string(64, 'b') + ".lock");
  writeFile(OldTmp, "half an entry");
  writeFile(NewTmp, "an entry being written now");
  writeFile(OldLock, "");
  auto Old = llvm::sys::toTimePoint(std::time(nullptr) - 3 * 3600);
  for (const std::string &P : {OldTmp, OldLock}) {
    int FD;
    ASSERT_FALSE(fs::openFileForWrite(P, FD, fs::CD_OpenExisting, fs::OF_Append));
    ASSERT_FALSE(fs::setLastAccessAndModificationTime(FD, Old));
    ::close(FD);
  }
  DiskCacheOptions O;
  O.Dir = Dir.path();
  DiskCache D(O);
  D.prune();
  EXPECT_FALSE(fs::exists(OldTmp));
  EXPECT_FALSE(fs::exists(OldLock));
  EXPECT_TRUE(fs::exists(NewTmp));
}

TEST(DiskCacheTest, LockOfAKilledProcessDoesNotBlock) {
  TempDir Dir;
  FakeTime Time;
  DiskCacheOptions O;
  O.Dir = Dir.path();
  O.LockTimeout = std::chrono::milliseconds(300);
  O.Time = &Time;
  DiskCache D(O);
  CacheKey K;
  K.Bytes.fill(7);
  std::string LockPath = Dir.file("gridjit-" + K.hex() + ".lock");

  int Pipe[2];
  ASSERT_EQ(::pipe(Pipe), 0);
  pid_t Pid = ::fork();
  ASSERT_GE(Pid, 0);
  if (Pid == 0) {
    // The child takes the lock as a compiling process would, and is then
    // killed while holding it.
    int FD = ::open(LockPath.c_str(), O_RDWR | O_CREAT, 0644);
    if (FD < 0 || ::flock(FD, LOCK_EX) != 0)
      ::_exit(1);
    char C = 'x';
    (void)!::write(Pipe[1], &C, 1);
    while (true)
      ::pause();
  }
  char C;
  ASSERT_EQ(::read(Pipe[0], &C, 1), 1);

  // While the child lives, a waiter gives up once LockTimeout has passed
  // (on the fake clock: exactly when, without the test waiting for it).
  auto Start = Time.now();
  DiskCache::KeyLock L = D.lockKey(K);
  EXPECT_FALSE(L.held());
  EXPECT_TRUE(L.waited());
  EXPECT_GE(Time.now() - Start, O.LockTimeout);
  EXPECT_LT(Time.now() - Start, O.LockTimeout + std::chrono::milliseconds(20)); // one sleep more
  EXPECT_EQ(D.getStats().LockTimeouts, 1u);

  ::kill(Pid, SIGKILL);
  int Status;
  ::waitpid(Pid, &Status, 0);
  ::close(Pipe[0]);
  ::close(Pipe[1]);

  // Killed: its lock file is still there, but the lock is free at once:
  // taken at the first try, without waiting for anyone.
  EXPECT_TRUE(fs::exists(LockPath));
  DiskCache::KeyLock L2 = D.lockKey(K);
  EXPECT_TRUE(L2.held());
  EXPECT_FALSE(L2.waited());
  EXPECT_EQ(D.getStats().LockWaits, 1u); // only the first lockKey's
  L2.release();
  EXPECT_FALSE(fs::exists(LockPath)); // the holder removes it
}

TEST(DiskCacheTest, LockIsExclusiveAcrossObjects) {
  // Two DiskCache objects stand for two processes (flock locks belong to
  // open files, so two opens in one process exclude each other too).
  TempDir Dir;
  DiskCacheOptions O;
  O.Dir = Dir.path();
  DiskCache A(O), B(O);
  CacheKey K;
  K.Bytes.fill(9);
  std::atomic<int> Inside{0}, MaxInside{0};
  auto Work = [&](DiskCache &D) {
    for (unsigned I = 0; I < 50; ++I) {
      DiskCache::KeyLock L = D.lockKey(K);
      ASSERT_TRUE(L.held());
      int Now = ++Inside;
      int Prev = MaxInside.load();
      while (Now > Prev && !MaxInside.compare_exchange_weak(Prev, Now)) {
      }
      std::this_thread::sleep_for(std::chrono::microseconds(200));
      --Inside;
    }
  };
  std::thread T1(Work, std::ref(A)), T2(Work, std::ref(B)), T3(Work, std::ref(A));
  T1.join();
  T2.join();
  T3.join();
  EXPECT_EQ(MaxInside.load(), 1);
  EXPECT_FALSE(fs::exists(Dir.file("gridjit-" + K.hex() + ".lock")));
}

TEST(DiskCacheTest, ResolveDirectoryPrefersTheExplicitOne) {
  auto D = resolveCacheDirectory("/some/where");
  ASSERT_TRUE(succeeded(D));
  EXPECT_EQ(*D, "/some/where");
  // Without one, some directory ending in "gridjit" (or named by
  // GRIDJIT_CACHE_DIR) is found; the lit tests check each variable.
  auto E = resolveCacheDirectory();
  ASSERT_TRUE(succeeded(E));
  EXPECT_FALSE(E->empty());
}

} // namespace
