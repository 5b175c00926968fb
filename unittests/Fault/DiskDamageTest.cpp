//===- DiskDamageTest.cpp - Entries damaged under in-process readers ------===//
//
// Part of gridjit. The in-process half of test/Fault/damage-while-reading
// (which runs jit-run processes): 4 threads, each with its own DiskCache on
// one directory, look entries up and store them again on a miss while a
// mutator thread damages the entries in every way, so that the test can
// count what a lookup could leak: every hit is exactly the stored
// artifact, and afterwards this process has the same open file
// descriptors as before and the directory holds no temp or lock file.
// $GRIDJIT_FAULT_SCALE multiplies the lookups (docs/Faults.md).
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "TestSupport.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/DiskCache.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"

#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <future>
#include <random>
#include <thread>

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

unsigned scaled(unsigned N) {
  const char *S = std::getenv("GRIDJIT_FAULT_SCALE");
  double F = S ? std::atof(S) : 1.0;
  return std::max(1u, static_cast<unsigned>(N * (F > 0 ? F : 1.0)));
}

/// How many file descriptors this process has open.
int openDescriptors() {
  int N = 0;
  if (DIR *D = ::opendir("/proc/self/fd")) {
    while (dirent *E = ::readdir(D))
      N += E->d_name[0] != '.';
    ::closedir(D);
  }
  return N - 1; // the directory stream's own
}

CacheKey key(unsigned I) { return testKey("damage-key-", I); }

Artifact artifact(unsigned I) {
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Arch = "test-cpu";
  A.Payload.resize(64 << 10);
  for (size_t B = 0; B < A.Payload.size(); ++B)
    A.Payload[B] = static_cast<char>((B * 31 + I * 101) & 0xff);
  return A;
}

/// Damages \p Path one way (\p Kind), with \p Good its entry and \p Other
/// another key's valid entry. Races with the readers' stores are fine.
void damage(const std::string &Path, unsigned Kind, const std::string &Good,
            const std::string &Other, const std::string &Fifo, std::mt19937 &Rng) {
  auto Clear = [&] {
    if (::unlink(Path.c_str()) != 0 && errno == EISDIR)
      llvm::sys::fs::remove_directories(Path, /*IgnoreErrors=*/true);
    if (::rmdir(Path.c_str()) != 0 && errno == ENOTEMPTY)
      llvm::sys::fs::remove_directories(Path, /*IgnoreErrors=*/true);
  };
  auto Replace = [&](llvm::StringRef Data) {
    std::string Tmp = Path + ".mutator";
    writeFile(Tmp, Data);
    Clear();
    (void)::rename(Tmp.c_str(), Path.c_str());
  };
  switch (Kind) {
  case 0:
    Clear();
    break;
  case 1: { // in place: the inode a reader may have open
    int FD = ::open(Path.c_str(), O_WRONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (FD >= 0) {
      struct stat St;
      if (::fstat(FD, &St) == 0 && S_ISREG(St.st_mode))
        (void)::ftruncate(FD, Rng() % Good.size());
      ::close(FD);
    }
    break;
  }
  case 2:
    Replace(llvm::StringRef(Good).take_front(Rng() % Good.size()));
    break;
  case 3: {
    std::string Bad = Good;
    Bad[Rng() % Bad.size()] ^= char(1 << (Rng() % 8));
    Replace(Bad);
    break;
  }
  case 4:
    Replace("");
    break;
  case 5:
    Clear();
    (void)::mkdir(Path.c_str(), 0755);
    break;
  case 6:
    Clear();
    (void)::mkfifo(Path.c_str(), 0644);
    break;
  case 7:
    Clear();
    (void)::symlink(Fifo.c_str(), Path.c_str());
    break;
  case 8:
    Replace(Other);
    break;
  default:
    Replace(Good);
    break;
  }
}

TEST(DiskDamageTest, ReadersUnderAMutatorGetTheEntryOrAMissAndLeakNothing) {
  TempDir Work;
  std::string Dir = Work.file("cache"), Fifo = Work.file("fifo");
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0644), 0);
  constexpr unsigned Keys = 2;
  std::vector<Artifact> Expected;
  std::vector<std::string> Paths, Entries;
  {
    DiskCacheOptions O;
    O.Dir = Dir;
    DiskCache C(O);
    for (unsigned I = 0; I < Keys; ++I) {
      Expected.push_back(artifact(I));
      ASSERT_TRUE(C.store(key(I), Expected[I]));
      Paths.push_back(C.getEntryPath(key(I)));
      Entries.push_back(encodeCacheEntry(key(I), Expected[I]));
    }
  }
  int FDsBefore = openDescriptors();
  std::atomic<bool> Stop{false};
  std::atomic<unsigned> Hits{0}, Misses{0}, Bad{0};
  std::thread Mutator([&] {
    std::mt19937 Rng(7);
    while (!Stop) {
      unsigned I = Rng() % Keys;
      damage(Paths[I], Rng() % 10, Entries[I], Entries[(I + 1) % Keys], Fifo, Rng);
      std::this_thread::sleep_for(std::chrono::microseconds(Rng() % 500));
    }
  });
  unsigned Lookups = scaled(1500);
  std::vector<std::thread> Readers;
  for (unsigned T = 0; T < 4; ++T)
    Readers.emplace_back([&, T] {
      DiskCacheOptions O;
      O.Dir = Dir;
      O.Warning = [](const std::string &W) { ADD_FAILURE() << "unexpected warning: " << W; };
      DiskCache C(O);
      for (unsigned N = 0; N < Lookups; ++N) {
        unsigned I = (N + T) % Keys;
        std::optional<Artifact> A = C.lookup(key(I));
        if (!A) {
          ++Misses;
          (void)C.store(key(I), Expected[I]); // as a compiler would
          continue;
        }
        ++Hits;
        if (A->Payload != Expected[I].Payload || A->Arch != Expected[I].Arch)
          ++Bad;
      }
    });
  for (std::thread &T : Readers)
    T.join();
  Stop = true;
  Mutator.join();
  EXPECT_EQ(Bad, 0u) << "a lookup returned another artifact";
  EXPECT_GT(Hits, 0u);
  EXPECT_GT(Misses, 0u);
  EXPECT_EQ(openDescriptors(), FDsBefore) << "file descriptors leaked";
  std::error_code EC;
  for (llvm::sys::fs::directory_iterator It(Dir, EC), End; It != End && !EC; It.increment(EC)) {
    llvm::StringRef Name = It->path();
    EXPECT_FALSE(Name.contains(".tmp-") || Name.ends_with(".lock"))
        << "left behind: " << Name.str();
  }
}

// Something else in a key's lock file's place (a directory, a FIFO, a
// symbolic link to a FIFO or to a path outside the directory): lockKey
// returns without the lock (the caller compiles unlocked), never blocks,
// never creates or locks a file through the link, and a store still works.
TEST(DiskDamageTest, DamagedLockFilesNeverBlockOrLeadElsewhere) {
  TempDir Work;
  std::string Dir = Work.file("cache"), Fifo = Work.file("fifo"), Outside = Work.file("outside");
  ASSERT_EQ(::mkfifo(Fifo.c_str(), 0644), 0);
  DiskCacheOptions O;
  O.Dir = Dir;
  DiskCache C(O);
  ASSERT_TRUE(C.store(key(9), artifact(9))); // makes the directory
  std::string Entry = C.getEntryPath(key(9));
  std::string Lock = Entry.substr(0, Entry.size() - 4) + ".lock";
  for (int Kind = 0; Kind < 4; ++Kind) {
    SCOPED_TRACE("kind " + std::to_string(Kind));
    llvm::sys::fs::remove_directories(Lock, /*IgnoreErrors=*/true);
    ::unlink(Lock.c_str());
    if (Kind == 0)
      ASSERT_EQ(::mkdir(Lock.c_str(), 0755), 0);
    else if (Kind == 1)
      ASSERT_EQ(::mkfifo(Lock.c_str(), 0644), 0);
    else
      ASSERT_EQ(::symlink((Kind == 2 ? Fifo : Outside).c_str(), Lock.c_str()), 0);
    int FDs = openDescriptors();
    // A hang bound, not a speed check.
    auto F = std::async(std::launch::async, [&] { return C.lockKey(key(9)).held(); });
    ASSERT_EQ(F.wait_for(std::chrono::seconds(60)), std::future_status::ready) << "blocked";
    EXPECT_FALSE(F.get());
    EXPECT_EQ(openDescriptors(), FDs);
    EXPECT_FALSE(llvm::sys::fs::exists(Outside)) << "created a file through the link";
    EXPECT_TRUE(C.store(key(9), artifact(9)));
  }
  // A regular lock file is a lock again.
  ::unlink(Lock.c_str());
  EXPECT_TRUE(C.lockKey(key(9)).held());
}

} // namespace
