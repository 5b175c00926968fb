//===- DiskTrustTest.cpp - A cache directory shared with other users ------===//
//
// Part of gridjit. Entries are native code the process runs, so a cache
// directory others can write to is hostile ground (docs/Cache.md, "Sharing
// a cache directory"):
//
// * without a secret, a directory owned by another user or writable by
//   group or others is refused with one warning, and a valid entry planted
//   in it is never run; in a trusted directory, an entry or lock file that
//   is not this user's own and private is a bad entry (no lock);
// * with a secret, the same directory is used, every entry carries an
//   HMAC tag, and planted entries (unsigned with valid checksums, re-keyed
//   from another key's signed entry, signed with another secret) are
//   refused;
// * directories gridjit creates are 0700;
// * nothing in an entry's, a temp file's or a lock's place is followed or
//   removed: a directory there (holding links to the victim's files and a
//   symbolic link in place of a subdirectory) stays as it is, and the
//   victim's files survive every lookup, store and prune.
//
// "Another user" is nobody (uid 65534), made the owner with chown, which
// needs root: those cases are skipped elsewhere, saying so (the tests run
// as root in CI).
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "Runtime/RuntimeTestUtil.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Compiler/Compiler.h"

#include "llvm/Support/FileSystem.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;
namespace fs = llvm::sys::fs;

namespace {

using ::testing::HasSubstr;

constexpr uid_t Nobody = 65534;
const char *const Secret = "the team's cache secret";

/// Skips the test where this process cannot give a file to another user.
#define REQUIRE_ROOT()                                                                             \
  if (::geteuid() != 0)                                                                            \
  GTEST_SKIP() << "needs root, to make a file another user's (chown)"

mode_t modeOf(const std::string &Path) {
  struct stat St;
  EXPECT_EQ(::lstat(Path.c_str(), &St), 0) << Path;
  return St.st_mode & 07777;
}

/// The names in \p Dir.
std::vector<std::string> listDir(const std::string &Dir) {
  std::vector<std::string> Names;
  if (DIR *D = ::opendir(Dir.c_str())) {
    while (dirent *E = ::readdir(D))
      if (std::string(E->d_name) != "." && std::string(E->d_name) != "..")
        Names.push_back(E->d_name);
    ::closedir(D);
  }
  std::sort(Names.begin(), Names.end());
  return Names;
}

/// Saxpy's key and artifact, compiled without a cache.
std::pair<CacheKey, Artifact> saxpy() {
  auto C = makeCompiler("");
  CompileInfo I;
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  EXPECT_TRUE(succeeded(M));
  return {I.Key, M ? (*M)->Art : Artifact()};
}

/// An entry another user planted under \p K: a valid one (right key,
/// target, checksums) whose payload is not what compiling gives.
std::string plantedEntry(const CacheKey &K, Artifact A) {
  A.Payload = "// planted by another user\n" + A.Payload;
  return encodeCacheEntry(K, A);
}

const char *const PlantedMark = "// planted by another user";

/// A compiler on \p Dir with \p SecretFile as its cache secret file.
std::unique_ptr<Compiler> compilerWithSecret(const std::string &Dir, const std::string &SecretFile,
                                             std::vector<std::string> *Warnings = nullptr) {
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.CacheDir = Dir;
  O.CacheSecretFile = SecretFile;
  O.UseRemoteCache = false;
  O.Warning = [Warnings](const std::string &W) {
    if (Warnings)
      Warnings->push_back(W);
    else
      ADD_FAILURE() << "unexpected warning: " << W;
  };
  auto C = Compiler::create(std::move(O));
  EXPECT_TRUE(succeeded(C));
  return C ? std::move(*C) : nullptr;
}

//===----------------------------------------------------------------------===//
// An untrusted directory without a secret
//===----------------------------------------------------------------------===//

struct Untrusted {
  const char *Name;
  mode_t Mode;
  bool OtherOwner;
  const char *Says; ///< what the warning says was found
};

class UntrustedDirectoryTest : public ::testing::TestWithParam<Untrusted> {};

TEST_P(UntrustedDirectoryTest, IsRefusedWithOneWarningAndAPlantedEntryNeverRuns) {
  const Untrusted &U = GetParam();
  if (U.OtherOwner)
    REQUIRE_ROOT();
  auto [Key, Art] = saxpy();
  TempDir T;
  std::string Dir = T.file("shared");
  ASSERT_EQ(::mkdir(Dir.c_str(), 0700), 0);
  std::string EntryName = "gridjit-" + Key.hex() + ".gjc";
  std::string Planted = plantedEntry(Key, Art);
  writeFile(Dir + "/" + EntryName, Planted);
  ASSERT_EQ(::chmod(Dir.c_str(), U.Mode), 0);
  if (U.OtherOwner) {
    ASSERT_EQ(::chown(Dir.c_str(), Nobody, Nobody), 0);
    ASSERT_EQ(::chown((Dir + "/" + EntryName).c_str(), Nobody, Nobody), 0);
  }

  std::vector<std::string> Warnings;
  auto C = makeCompiler(Dir, &Warnings);
  CompileInfo I1, I2;
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I1);
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(I1.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*M)->Art.Payload, Art.Payload);
  EXPECT_THAT((*M)->Art.Payload, ::testing::Not(HasSubstr(PlantedMark)));
  ASSERT_TRUE(succeeded(C->compile(SaxpySource, "saxpy.kir", {}, &I2)));
  EXPECT_EQ(I2.Outcome, CacheOutcome::MemoryHit);
  ASSERT_TRUE(succeeded(C->compile(makeKernel(1), "k.kir")));

  ASSERT_EQ(Warnings.size(), 1u);
  EXPECT_THAT(Warnings[0], HasSubstr("cache directory '" + Dir + "' is not trusted: it is " +
                                     std::string(U.Says)));
  EXPECT_THAT(Warnings[0], HasSubstr("chmod go-w '" + Dir + "'"));
  EXPECT_THAT(Warnings[0], HasSubstr("GRIDJIT_CACHE_SECRET_FILE"));
  EXPECT_THAT(Warnings[0], HasSubstr("; compiled kernels are cached in memory only"));
  CompilerStats S = C->getStats();
  EXPECT_EQ(S.DiskHits, 0u);
  EXPECT_EQ(S.Disk.Hits, 0u);
  EXPECT_EQ(S.Disk.Stores, 0u);
  EXPECT_EQ(S.Compiles, 2u);
  // Nothing read, written or removed there.
  EXPECT_EQ(listDir(Dir), std::vector<std::string>{EntryName});
  EXPECT_EQ(readFile(Dir + "/" + EntryName), Planted);
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, UntrustedDirectoryTest,
    ::testing::Values(Untrusted{"World", 0777, false, "writable by group and others (mode 0777)"},
                      Untrusted{"Sticky", 01777, false, "writable by group and others (mode 1777)"},
                      Untrusted{"Group", 0770, false, "writable by group (mode 0770)"},
                      Untrusted{"Others", 0703, false, "writable by others (mode 0703)"},
                      Untrusted{"OtherOwner", 0755, true,
                                "owned by nobody (uid 65534), not by this user"}),
    [](const ::testing::TestParamInfo<Untrusted> &I) { return std::string(I.param.Name); });

//===----------------------------------------------------------------------===//
// The same directory with a secret
//===----------------------------------------------------------------------===//

TEST(DiskTrustTest, WithASecretASharedDirectoryIsUsedAndPlantedEntriesAreRefused) {
  auto [Key, Art] = saxpy();
  TempDir T;
  std::string Dir = T.file("shared"), SecretFile = T.file("secret");
  writeFile(SecretFile, Secret);
  ASSERT_EQ(::mkdir(Dir.c_str(), 0700), 0);
  ASSERT_EQ(::chmod(Dir.c_str(), 0777), 0);
  std::string Entry = Dir + "/gridjit-" + Key.hex() + ".gjc";

  // Each kind of planted entry is refused by its tag, before it is
  // decoded: a valid unsigned entry (what a user without the secret can
  // make), another key's signed entry copied (re-keyed) here, an entry
  // signed with another secret.
  CacheKey OtherKey = testKey("another kernel", 1);
  DiskCacheOptions Signer;
  Signer.Dir = T.file("signer");
  Signer.Secret = Secret;
  DiskCache SignedElsewhere(Signer);
  Artifact PlantedArt = Art;
  PlantedArt.Payload = std::string(PlantedMark) + "\n" + Art.Payload;
  ASSERT_TRUE(SignedElsewhere.store(OtherKey, PlantedArt));
  Signer.Dir = T.file("signer-2");
  Signer.Secret = "somebody else's secret";
  DiskCache WrongSecret(Signer);
  ASSERT_TRUE(WrongSecret.store(Key, PlantedArt));
  struct Plant {
    const char *What;
    std::string Bytes;
    const char *Problem;
  } Plants[] = {
      {"unsigned", plantedEntry(Key, Art), "the value has no HMAC tag"},
      {"re-keyed", readFile(SignedElsewhere.getEntryPath(OtherKey)),
       "the value's HMAC tag does not match"},
      {"another secret", readFile(WrongSecret.getEntryPath(Key)),
       "the value's HMAC tag does not match"},
  };
  for (const Plant &P : Plants) {
    SCOPED_TRACE(P.What);
    writeFile(Entry, P.Bytes);
    auto C = compilerWithSecret(Dir, SecretFile);
    CompileInfo I;
    auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
    ASSERT_TRUE(succeeded(M));
    EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
    EXPECT_THAT(I.BadEntry, HasSubstr(P.Problem));
    EXPECT_EQ((*M)->Art.Payload, Art.Payload);
    EXPECT_EQ(C->getStats().Disk.BadEntries, 1u);
    // Replaced by a signed entry, which the next user with the secret
    // reads.
    std::string Stored = readFile(Entry);
    EXPECT_EQ(Stored.size(), encodeCacheEntry(Key, Art).size() + 40);
    auto Next = compilerWithSecret(Dir, SecretFile);
    CompileInfo I2;
    auto Hit = Next->compile(SaxpySource, "saxpy.kir", {}, &I2);
    ASSERT_TRUE(succeeded(Hit));
    EXPECT_EQ(I2.Outcome, CacheOutcome::DiskHit);
    EXPECT_EQ((*Hit)->Art.Payload, Art.Payload);
  }

  // A user without the secret is refused the directory (one warning) and
  // never touches the signed entry.
  std::vector<std::string> Warnings;
  auto NoSecret = makeCompiler(Dir, &Warnings);
  CompileInfo I;
  ASSERT_TRUE(succeeded(NoSecret->compile(SaxpySource, "saxpy.kir", {}, &I)));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(Warnings.size(), 1u);
}

TEST(DiskTrustTest, ADirectoryOfAnotherUserWithASecret) {
  REQUIRE_ROOT();
  auto [Key, Art] = saxpy();
  TempDir T;
  std::string Dir = T.file("theirs"), SecretFile = T.file("secret");
  writeFile(SecretFile, Secret);
  ASSERT_EQ(::mkdir(Dir.c_str(), 0755), 0);
  std::string Entry = Dir + "/gridjit-" + Key.hex() + ".gjc";
  writeFile(Entry, plantedEntry(Key, Art));
  ASSERT_EQ(::chown(Entry.c_str(), Nobody, Nobody), 0);
  ASSERT_EQ(::chown(Dir.c_str(), Nobody, Nobody), 0);
  auto C = compilerWithSecret(Dir, SecretFile);
  CompileInfo I;
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_THAT(I.BadEntry, HasSubstr("the value has no HMAC tag"));
  EXPECT_EQ((*M)->Art.Payload, Art.Payload);
}

// The secret reaches the disk tier from $GRIDJIT_CACHE_SECRET_FILE, or
// from the remote tier's configuration when the disk has none of its own.
TEST(DiskTrustTest, TheSecretComesFromTheOptionsTheEnvironmentOrTheRemoteTier) {
  TempDir T;
  writeFile(T.file("secret"), Secret);
  writeFile(T.file("remote-secret"), "the fleet's remote secret");
  ScopedEnv NoDisk("GRIDJIT_CACHE_SECRET_FILE", nullptr);
  ScopedEnv NoRemote("GRIDJIT_REMOTE_CACHE", nullptr);
  ScopedEnv NoRemoteSecret("GRIDJIT_REMOTE_CACHE_SECRET_FILE", nullptr);
  {
    auto S = resolveDiskCacheSecret(T.file("secret"));
    ASSERT_TRUE(succeeded(S));
    EXPECT_EQ(*S, "the team's cache secret");
  }
  {
    auto None = resolveDiskCacheSecret();
    ASSERT_TRUE(succeeded(None));
    EXPECT_EQ(*None, "");
  }
  ::setenv("GRIDJIT_CACHE_SECRET_FILE", T.file("secret").c_str(), 1);
  {
    auto S = resolveDiskCacheSecret();
    ASSERT_TRUE(succeeded(S));
    EXPECT_EQ(*S, "the team's cache secret");
  }
  ::unsetenv("GRIDJIT_CACHE_SECRET_FILE");
  // A compiler with a remote tier and its secret: the disk uses it too.
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.CacheDir = T.file("cache");
  O.Remote.URL = "redis+unix://" + T.file("nobody-listens.sock");
  O.RemoteSecretFile = T.file("remote-secret");
  auto Tiers = openCacheTiers(O);
  ASSERT_TRUE(succeeded(Tiers));
  ASSERT_TRUE(Tiers->Disk && Tiers->Remote);
  auto FromRemote = resolveDiskCacheSecret({}, Tiers->Remote.get());
  ASSERT_TRUE(succeeded(FromRemote));
  EXPECT_EQ(*FromRemote, "the fleet's remote secret");
  CacheKey K = testKey("secret source", 1);
  Artifact A;
  A.Payload = "p";
  ASSERT_TRUE(Tiers->Disk->store(K, A));
  std::string Stored = readFile(Tiers->Disk->getEntryPath(K));
  EXPECT_EQ(Stored.size(), encodeCacheEntry(K, A).size() + 40); // tagged
  // A secret file that cannot be used is an error of Compiler::create.
  O.CacheSecretFile = T.file("missing");
  auto Bad = Compiler::create(O);
  ASSERT_TRUE(failed(Bad));
  EXPECT_THAT(llvm::toString(Bad.takeError()),
              HasSubstr("cannot read the cache secret file '" + T.file("missing") + "'"));
}

//===----------------------------------------------------------------------===//
// A trusted directory: entries and locks that are not this user's own
//===----------------------------------------------------------------------===//

struct Foreign {
  const char *Name;
  mode_t Mode;
  bool OtherOwner;
  const char *Says;
};

class ForeignEntryTest : public ::testing::TestWithParam<Foreign> {};

TEST_P(ForeignEntryTest, IsABadEntryInATrustedDirectory) {
  const Foreign &F = GetParam();
  if (F.OtherOwner)
    REQUIRE_ROOT();
  auto [Key, Art] = saxpy();
  TempDir T;
  std::string Dir = T.file("mine");
  ASSERT_EQ(::mkdir(Dir.c_str(), 0700), 0);
  std::string Entry = Dir + "/gridjit-" + Key.hex() + ".gjc";
  writeFile(Entry, plantedEntry(Key, Art));
  ASSERT_EQ(::chmod(Entry.c_str(), F.Mode), 0);
  if (F.OtherOwner)
    ASSERT_EQ(::chown(Entry.c_str(), Nobody, Nobody), 0);
  std::vector<std::string> Warnings;
  auto C = makeCompiler(Dir, &Warnings);
  CompileInfo I;
  auto M = C->compile(SaxpySource, "saxpy.kir", {}, &I);
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ((*M)->Art.Payload, Art.Payload);
  EXPECT_THAT(I.BadEntry, HasSubstr("'" + Entry + "' is " + F.Says));
  EXPECT_THAT(I.BadEntry,
              HasSubstr("without a cache secret, only this user's own entries are used"));
  EXPECT_EQ(C->getStats().Disk.BadEntries, 1u);
  EXPECT_TRUE(Warnings.empty());
  // The store replaced the name with this user's private entry.
  struct stat St;
  ASSERT_EQ(::lstat(Entry.c_str(), &St), 0);
  EXPECT_EQ(St.st_uid, ::geteuid());
  EXPECT_EQ(St.st_mode & 022, 0u);
  EXPECT_EQ(readFile(Entry), encodeCacheEntry(Key, Art));
}

INSTANTIATE_TEST_SUITE_P(
    Kinds, ForeignEntryTest,
    ::testing::Values(
        Foreign{"WorldWritable", 0666, false, "writable by group and others (mode 0666)"},
        Foreign{"GroupWritable", 0660, false, "writable by group (mode 0660)"},
        Foreign{"OtherOwner", 0644, true, "owned by nobody (uid 65534), not by this user"},
        Foreign{"OtherOwnerAndWritable", 0646, true,
                "owned by nobody (uid 65534), not by this user, root (uid 0), and "
                "writable by others (mode 0646)"}),
    [](const ::testing::TestParamInfo<Foreign> &I) { return std::string(I.param.Name); });

TEST(DiskTrustTest, ALockFileNotThisUsersOwnIsNoLockAndIsLeftAlone) {
  TempDir T;
  std::string Dir = T.file("mine");
  CacheKey K = testKey("lock", 1);
  DiskCacheOptions O;
  O.Dir = Dir;
  O.Warning = [](const std::string &W) { ADD_FAILURE() << "unexpected warning: " << W; };
  DiskCache C(O);
  std::string Entry = C.getEntryPath(K);
  std::string Lock = Entry.substr(0, Entry.size() - 4) + ".lock";
  ASSERT_TRUE(C.lockKey(K).held()); // makes the directory; a lock of ours
  writeFile(Lock, "");
  ASSERT_EQ(::chmod(Lock.c_str(), 0666), 0);
  EXPECT_FALSE(C.lockKey(K).held());
  EXPECT_TRUE(fs::exists(Lock));
  if (::geteuid() == 0) {
    ASSERT_EQ(::chmod(Lock.c_str(), 0644), 0);
    ASSERT_EQ(::chown(Lock.c_str(), Nobody, Nobody), 0);
    EXPECT_FALSE(C.lockKey(K).held());
    EXPECT_TRUE(fs::exists(Lock));
  }
  // With a secret, the users of a shared directory lock each other's
  // files.
  O.Secret = Secret;
  DiskCache Shared(O);
  DiskCache::KeyLock L = Shared.lockKey(K);
  EXPECT_TRUE(L.held());
}

//===----------------------------------------------------------------------===//
// Directories gridjit creates
//===----------------------------------------------------------------------===//

TEST(DiskTrustTest, DirectoriesGridjitCreatesArePrivate) {
  TempDir T;
  DiskCacheOptions O;
  O.Dir = T.file("a/b/cache");
  DiskCache C(O);
  Artifact A;
  A.Payload = "p";
  ASSERT_TRUE(C.store(testKey("private", 1), A));
  for (const char *D : {"a", "a/b", "a/b/cache"})
    EXPECT_EQ(modeOf(T.file(D)), 0700u) << D;

  // The default directory, $HOME/.cache/gridjit, and the .cache it makes.
  ScopedEnv Home("HOME", T.file("home").c_str());
  ScopedEnv NoDir("GRIDJIT_CACHE_DIR", nullptr);
  ScopedEnv NoXdg("XDG_CACHE_HOME", nullptr);
  ASSERT_EQ(::mkdir(T.file("home").c_str(), 0755), 0);
  auto Dir = resolveCacheDirectory();
  ASSERT_TRUE(succeeded(Dir));
  EXPECT_EQ(*Dir, T.file("home/.cache/gridjit"));
  auto Comp = makeCompiler(*Dir);
  ASSERT_TRUE(succeeded(Comp->compile(SaxpySource, "saxpy.kir")));
  EXPECT_EQ(modeOf(T.file("home/.cache")), 0700u);
  EXPECT_EQ(modeOf(T.file("home/.cache/gridjit")), 0700u);
  EXPECT_EQ(modeOf(T.file("home")), 0755u); // it was there: left as it was
}

//===----------------------------------------------------------------------===//
// Nothing in an entry's place is followed or removed
//===----------------------------------------------------------------------===//

/// A victim's files, and checks that they survive.
struct Victim {
  TempDir T;
  Victim() {
    EXPECT_EQ(::mkdir(T.file("docs").c_str(), 0755), 0);
    writeFile(T.file("precious"), "the victim's file");
    writeFile(T.file("docs/thesis"), "the victim's thesis");
  }
  void expectIntact() {
    EXPECT_EQ(readFile(T.file("precious")), "the victim's file");
    EXPECT_EQ(readFile(T.file("docs/thesis")), "the victim's thesis");
  }
};

TEST(DiskTrustTest, ADirectoryInAnEntrysPlaceIsNeverFollowedOrRemoved) {
  Victim V;
  TempDir T;
  DiskCacheOptions O;
  O.Dir = T.file("cache");
  O.MaxBytes = 1; // prune everything prunable
  O.PruneInterval = std::chrono::milliseconds(0);
  std::vector<std::string> Warnings;
  O.Warning = [&](const std::string &W) { Warnings.push_back(W); };
  DiskCache C(O);
  CacheKey K = testKey("squatted", 1);
  Artifact A;
  A.Payload = "p";
  ASSERT_TRUE(C.store(testKey("squatted", 2), A)); // makes the directory
  // Another user's directory where K's entry goes: a link to the victim's
  // file, a link where a subdirectory would be, and a real subdirectory
  // holding another link.
  std::string Squat = C.getEntryPath(K);
  ASSERT_EQ(::mkdir(Squat.c_str(), 0777), 0);
  ASSERT_EQ(::symlink(V.T.file("precious").c_str(), (Squat + "/link").c_str()), 0);
  ASSERT_EQ(::symlink(V.T.file("docs").c_str(), (Squat + "/sub").c_str()), 0);
  ASSERT_EQ(::mkdir((Squat + "/real").c_str(), 0777), 0);
  ASSERT_EQ(::symlink(V.T.file("docs/thesis").c_str(), (Squat + "/real/link").c_str()), 0);

  std::string Problem;
  EXPECT_FALSE(C.lookup(K, &Problem));
  EXPECT_THAT(Problem, HasSubstr("is not a regular file"));
  EXPECT_FALSE(C.store(K, A)); // a bad entry to skip, not to clean
  EXPECT_TRUE(C.isWritable());
  C.prune();
  EXPECT_FALSE(C.lookup(K));
  EXPECT_TRUE(Warnings.empty());
  DiskCacheStats S = C.getStats();
  EXPECT_EQ(S.BadEntries, 2u);
  EXPECT_EQ(S.StoreFailures, 1u);

  // All still there, the victim's files intact.
  EXPECT_TRUE(fs::is_directory(Squat));
  EXPECT_EQ(listDir(Squat), (std::vector<std::string>{"link", "real", "sub"}));
  EXPECT_EQ(listDir(Squat + "/real"), std::vector<std::string>{"link"});
  V.expectIntact();
  EXPECT_EQ(listDir(V.T.file("docs")), std::vector<std::string>{"thesis"});
  // And the store went nowhere else: the directory holds only the squat
  // (the other entry was pruned) and no temp file.
  EXPECT_EQ(listDir(O.Dir), std::vector<std::string>{"gridjit-" + K.hex() + ".gjc"});
}

TEST(DiskTrustTest, LinksInPlaceOfAnEntryATempFileOrALockLeadNowhere) {
  Victim V;
  TempDir T;
  DiskCacheOptions O;
  O.Dir = T.file("cache");
  O.StaleAfter = std::chrono::seconds(0); // every temp and lock file is stale
  DiskCache C(O);
  CacheKey K = testKey("linked", 1);
  Artifact A;
  A.Payload = "p";
  ASSERT_TRUE(C.store(testKey("linked", 2), A));
  std::string Entry = C.getEntryPath(K);
  std::string Base = Entry.substr(0, Entry.size() - 4);
  ASSERT_EQ(::symlink(V.T.file("precious").c_str(), Entry.c_str()), 0);
  ASSERT_EQ(::symlink(V.T.file("precious").c_str(), (Base + ".tmp-aaaaaaaaaaaa").c_str()), 0);
  ASSERT_EQ(::symlink(V.T.file("docs").c_str(), (Base + ".tmp-bbbbbbbbbbbb").c_str()), 0);
  ASSERT_EQ(::mkdir((Base + ".tmp-cccccccccccc").c_str(), 0777), 0);
  ASSERT_EQ(::symlink(V.T.file("docs/thesis").c_str(), (Base + ".lock").c_str()), 0);

  std::string Problem;
  EXPECT_FALSE(C.lookup(K, &Problem));
  EXPECT_THAT(Problem, HasSubstr("cannot be opened"));
  EXPECT_FALSE(C.lockKey(K).held());
  C.prune();
  V.expectIntact();
  // Stale names that are not regular files are not removed by pruning.
  struct stat St;
  for (const char *Suffix :
       {".tmp-aaaaaaaaaaaa", ".tmp-bbbbbbbbbbbb", ".tmp-cccccccccccc", ".lock"})
    EXPECT_EQ(::lstat((Base + Suffix).c_str(), &St), 0) << Suffix;
  // A store replaces the link in the entry's place (the name, never its
  // target).
  EXPECT_TRUE(C.store(K, A));
  EXPECT_FALSE(fs::is_symlink_file(Entry));
  EXPECT_EQ(C.lookup(K)->Payload, "p");
  V.expectIntact();
}

} // namespace
