//===- RemoteCacheConfigTest.cpp - Options, URL, secret, environment -----===//
//
// Part of gridjit. include/gridjit/Cache/RemoteCacheConfig.h: the URL's
// grammar and its errors, the secret file (what is read, and what is
// refused: a device, a FIFO, a directory, too many or too few bytes), and
// the environment's defaults (the one place that reads
// $GRIDJIT_REMOTE_CACHE and its companions).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/RemoteCacheConfig.h"
#include "Cache/CacheTestUtil.h"
#include "Runtime/RuntimeTestUtil.h"

#include "gridjit/Support/Errors.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <future>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

TEST(RemoteCacheConfigTest, ParsesURLs) {
  auto U = parseRemoteCacheURL("redis://cache.example:7000/3");
  ASSERT_TRUE(succeeded(U));
  EXPECT_FALSE(U->IsUnix);
  EXPECT_EQ(U->Host, "cache.example");
  EXPECT_EQ(U->Port, 7000u);
  EXPECT_EQ(U->Database, 3u);
  EXPECT_TRUE(U->Password.empty());

  U = parseRemoteCacheURL("redis://alice:p@ss@10.0.0.1");
  ASSERT_TRUE(succeeded(U));
  EXPECT_EQ(U->User, "alice");
  EXPECT_EQ(U->Password, "p@ss");
  EXPECT_EQ(U->Host, "10.0.0.1");
  EXPECT_EQ(U->Port, 6379u);

  U = parseRemoteCacheURL("redis://:secret@[::1]:6380");
  ASSERT_TRUE(succeeded(U));
  EXPECT_TRUE(U->User.empty());
  EXPECT_EQ(U->Password, "secret");
  EXPECT_EQ(U->Host, "::1");
  EXPECT_EQ(U->Port, 6380u);

  U = parseRemoteCacheURL("redis+unix:///run/redis/redis.sock?db=2");
  ASSERT_TRUE(succeeded(U));
  EXPECT_TRUE(U->IsUnix);
  EXPECT_EQ(U->SocketPath, "/run/redis/redis.sock");
  EXPECT_EQ(U->Database, 2u);

  struct Bad {
    const char *URL, *Says;
  } Bads[] = {
      {"http://host", "expected redis://"},
      {"redis://", "no host"},
      {"redis://host:", "empty port"},
      {"redis://host:99999", "port '99999'"},
      {"redis://host:x1", "port 'x1'"},
      {"redis://host/db", "database 'db'"},
      {"redis://user:@host", "empty password"},
      {"redis://[::1", "closing ']'"},
      {"redis+unix://relative.sock", "must be absolute"},
      {"redis+unix:///s?x=1", "?db=N"},
  };
  for (const Bad &B : Bads) {
    auto E = parseRemoteCacheURL(B.URL);
    ASSERT_TRUE(failed(E)) << B.URL;
    std::string Msg = llvm::toString(E.takeError());
    EXPECT_THAT(Msg, HasSubstr(B.Says)) << B.URL;
    EXPECT_THAT(Msg, HasSubstr(B.URL)) << "the error names the URL";
  }
}

TEST(RemoteCacheConfigTest, SecretFile) {
  TempDir D;
  auto Missing = readRemoteCacheSecret(D.file("missing"));
  ASSERT_TRUE(failed(Missing));
  EXPECT_THAT(llvm::toString(Missing.takeError()),
              HasSubstr("cannot read the remote cache secret file '" + D.file("missing") + "'"));
  writeFile(D.file("short"), "fifteen bytes!!");
  auto Short = readRemoteCacheSecret(D.file("short"));
  ASSERT_TRUE(failed(Short));
  EXPECT_THAT(llvm::toString(Short.takeError()),
              HasSubstr("holds 15 bytes; a secret needs at least 16"));
  writeFile(D.file("good"), std::string("sixteen bytes!\n\0", 16));
  auto Good = readRemoteCacheSecret(D.file("good"));
  ASSERT_TRUE(succeeded(Good));
  EXPECT_EQ(*Good, std::string("sixteen bytes!\n\0", 16)); // the whole content, as it is
}

// Only a regular file is read, opened without blocking and never read past
// MaxSecretFileBytes: /dev/zero would be read until memory
// ran out, and opening a FIFO would wait forever for a writer. Each
// refusal names the file.
TEST(RemoteCacheConfigTest, SecretFileIsARegularFileOfBoundedSize) {
  TempDir D;
  ASSERT_EQ(::mkfifo(D.file("fifo").c_str(), 0600), 0);
  ASSERT_EQ(::mkdir(D.file("dir").c_str(), 0700), 0);
  struct Bad {
    std::string Path;
    const char *Says;
  } Bads[] = {
      {"/dev/zero", "it is a character device, not a regular file"},
      {D.file("fifo"), "it is a FIFO, not a regular file"},
      {D.file("dir"), "it is a directory, not a regular file"},
  };
  for (const Bad &B : Bads) {
    // A hang bound, not a speed check: a FIFO must not block the open.
    auto F = std::async(std::launch::async, [&] {
      auto S = readSecretFile(B.Path, "cache secret file");
      return S ? std::string("accepted") : llvm::toString(S.takeError());
    });
    ASSERT_EQ(F.wait_for(std::chrono::seconds(60)), std::future_status::ready) << B.Path;
    EXPECT_EQ(F.get(), "cannot read the cache secret file '" + B.Path + "': " + B.Says);
  }
  // The size bound, at its boundary (and the lower one).
  writeFile(D.file("max"), std::string(MaxSecretFileBytes, 'k'));
  auto Max = readRemoteCacheSecret(D.file("max"));
  ASSERT_TRUE(succeeded(Max));
  EXPECT_EQ(Max->size(), MaxSecretFileBytes);
  writeFile(D.file("big"), std::string(MaxSecretFileBytes + 1, 'k'));
  auto Big = readRemoteCacheSecret(D.file("big"));
  ASSERT_TRUE(failed(Big));
  llvm::Error E = Big.takeError();
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  EXPECT_EQ(llvm::toString(std::move(E)),
            "the remote cache secret file '" + D.file("big") +
                "' holds 4097 bytes or more; a secret is at most 4096");
  // A sparse file that says it is huge is refused by its size, unread.
  int FD = ::open(D.file("sparse").c_str(), O_CREAT | O_WRONLY, 0600);
  ASSERT_GE(FD, 0);
  ASSERT_EQ(::ftruncate(FD, off_t(64) << 30), 0);
  ::close(FD);
  auto Sparse = readRemoteCacheSecret(D.file("sparse"));
  ASSERT_TRUE(failed(Sparse));
  EXPECT_THAT(llvm::toString(Sparse.takeError()), HasSubstr("holds 68719476736 bytes or more"));
  // A link to a regular file is read (mounted secrets are often links).
  writeFile(D.file("real"), "sixteen bytes!!!");
  ASSERT_EQ(::symlink(D.file("real").c_str(), D.file("link").c_str()), 0);
  auto Linked = readRemoteCacheSecret(D.file("link"));
  ASSERT_TRUE(succeeded(Linked));
  EXPECT_EQ(*Linked, "sixteen bytes!!!");
}

TEST(RemoteCacheConfigTest, EnvironmentDefaults) {
  TempDir D;
  writeFile(D.file("env-secret"), "the environment's secret");
  writeFile(D.file("given-secret"), "the caller's own secret");
  ScopedEnv URL("GRIDJIT_REMOTE_CACHE", nullptr);
  ScopedEnv ReadOnly("GRIDJIT_REMOTE_CACHE_READ_ONLY", nullptr);
  ScopedEnv Secret("GRIDJIT_REMOTE_CACHE_SECRET_FILE", nullptr);

  // No URL anywhere: no remote cache.
  auto None = resolveRemoteCacheOptions({});
  ASSERT_TRUE(succeeded(None));
  EXPECT_FALSE(*None);

  ::setenv("GRIDJIT_REMOTE_CACHE", "redis://from-env", 1);
  ::setenv("GRIDJIT_REMOTE_CACHE_SECRET_FILE", D.file("env-secret").c_str(), 1);
  auto FromEnv = resolveRemoteCacheOptions({});
  ASSERT_TRUE(succeeded(FromEnv) && *FromEnv);
  EXPECT_EQ((*FromEnv)->URL, "redis://from-env");
  EXPECT_FALSE((*FromEnv)->ReadOnly);
  EXPECT_EQ((*FromEnv)->Secret, "the environment's secret");

  // The caller's URL, secret file and secret come before the environment's;
  // READ_ONLY=1 makes any remote cache read-only.
  ::setenv("GRIDJIT_REMOTE_CACHE_READ_ONLY", "1", 1);
  RemoteCacheOptions Given;
  Given.URL = "redis://given";
  auto Mine = resolveRemoteCacheOptions(Given, D.file("given-secret"));
  ASSERT_TRUE(succeeded(Mine) && *Mine);
  EXPECT_EQ((*Mine)->URL, "redis://given");
  EXPECT_TRUE((*Mine)->ReadOnly);
  EXPECT_EQ((*Mine)->Secret, "the caller's own secret");
  Given.Secret = "a secret given in the options";
  auto Inline = resolveRemoteCacheOptions(Given, D.file("given-secret"));
  ASSERT_TRUE(succeeded(Inline) && *Inline);
  EXPECT_EQ((*Inline)->Secret, "a secret given in the options");

  // A secret file that cannot be read is an error, not a cache without one.
  ::setenv("GRIDJIT_REMOTE_CACHE_SECRET_FILE", D.file("missing").c_str(), 1);
  auto Bad = resolveRemoteCacheOptions({});
  ASSERT_TRUE(failed(Bad));
  EXPECT_THAT(llvm::toString(Bad.takeError()), HasSubstr("secret file"));
}

} // namespace
