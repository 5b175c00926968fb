//===- RemoteCacheTest.cpp - The Redis tier, against a real redis-server --===//
//
// Part of gridjit. Every test that needs a server starts its own
// redis-server on a unix socket in a temp directory (no TCP port, no
// persistence) and kills it at the end; where redis-server is not
// installed those tests are skipped with that reason (utils/setup.sh
// installs it). The multi-process tests run this binary again as children
// (the DISABLED_ tests below), each with its own disk cache.
//
// No test asserts a duration: deadlines are checked through the counters
// (timeouts, breaker trips and skips) and by the requests returning at all.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/RemoteCache.h"
#include "Cache/CacheTestUtil.h"
#include "Cache/RedisTestUtil.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Program.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <hiredis/hiredis.h>

#include <atomic>
#include <csignal>
#include <cstdlib>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include <fcntl.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;
using namespace std::chrono_literals;

constexpr const char *ChildVar = "GRIDJIT_TEST_REMOTE_CHILD";

//===----------------------------------------------------------------------===//
// Compilers and reference results
//===----------------------------------------------------------------------===//

/// Options for a test's Compiler: deadlines generous enough that a loaded
/// machine never passes them (a timeout would open the breaker and change
/// the counts); the tests of timeouts shorten them.
RemoteCacheOptions quickOptions(const std::string &URL) {
  RemoteCacheOptions O;
  O.URL = URL;
  O.ConnectTimeout = 5s;
  O.OperationTimeout = 10s;
  O.BreakerThreshold = 2;
  O.BreakerCooldown = 200ms;
  O.LeaseTime = 60s;
  return O;
}

/// quickOptions with deadlines short enough that the tests of a hung
/// (SIGSTOPped) server see requests time out within a fraction of a second.
RemoteCacheOptions hungServerOptions(const std::string &URL) {
  RemoteCacheOptions O = quickOptions(URL);
  O.ConnectTimeout = 200ms;
  O.OperationTimeout = 300ms;
  return O;
}

std::unique_ptr<Compiler> remoteCompiler(const std::string &DiskDir, RemoteCacheOptions RO,
                                         std::vector<std::shared_ptr<const Target>> Targets = {}) {
  CompilerOptions O;
  O.Targets = Targets.empty() ? std::vector<std::shared_ptr<const Target>>{nvptxTarget()}
                              : std::move(Targets);
  O.UseDiskCache = !DiskDir.empty();
  O.CacheDir = DiskDir;
  O.Remote = std::move(RO);
  O.Warning = [](const std::string &) {};
  auto C = Compiler::create(std::move(O));
  if (!C) {
    ADD_FAILURE() << llvm::toString(C.takeError());
    return nullptr;
  }
  return std::move(*C);
}

/// The identity of a compiled module: its whole entry, hashed.
std::string fingerprint(const CompiledModule &M) {
  return llvm::toHex(
      llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(encodeCacheEntry(M.Key, M.Art))),
      /*LowerCase=*/true);
}

/// Kernel \p I compiled with no cache at all (what every tier must give).
CompiledModuleRef reference(unsigned I) {
  static std::mutex Mu;
  static std::map<unsigned, CompiledModuleRef> Done;
  std::lock_guard<std::mutex> G(Mu);
  if (auto It = Done.find(I); It != Done.end())
    return It->second;
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.UseDiskCache = false;
  O.UseRemoteCache = false;
  auto C = Compiler::create(std::move(O));
  EXPECT_TRUE(succeeded(C));
  auto M = (*C)->compile(makeKernel(I), "k.kir");
  EXPECT_TRUE(succeeded(M));
  return Done[I] = *M;
}

/// Compiles kernel \p I through \p C and checks it equals the reference.
CompileInfo compileAndCheck(Compiler &C, unsigned I) {
  CompileInfo Info;
  auto M = C.compile(makeKernel(I), "k.kir", {}, &Info);
  EXPECT_TRUE(succeeded(M)) << "kernel " << I;
  if (M)
    EXPECT_EQ(fingerprint(**M), fingerprint(*reference(I))) << "kernel " << I;
  return Info;
}

//===----------------------------------------------------------------------===//
// Configuration
//===----------------------------------------------------------------------===//

TEST(RemoteCacheTest, CompilerRejectsBadURLAndUnreadableSecret) {
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.UseDiskCache = false;
  O.Remote.URL = "redis://host:0";
  auto C = Compiler::create(O);
  ASSERT_TRUE(failed(C));
  EXPECT_THAT(llvm::toString(C.takeError()), HasSubstr("port '0'"));

  TempDir Dir;
  O.Remote.URL = "redis://127.0.0.1:1";
  O.RemoteSecretFile = Dir.file("missing");
  C = Compiler::create(O);
  ASSERT_TRUE(failed(C));
  EXPECT_THAT(llvm::toString(C.takeError()), HasSubstr("secret file"));

  writeFile(Dir.file("short"), "abc");
  O.RemoteSecretFile = Dir.file("short");
  C = Compiler::create(O);
  ASSERT_TRUE(failed(C));
  EXPECT_THAT(llvm::toString(C.takeError()), HasSubstr("at least 16"));
}

//===----------------------------------------------------------------------===//
// Sharing
//===----------------------------------------------------------------------===//

TEST(RemoteCacheTest, HitIsWrittenToDiskAndCompileToBoth) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir D1, D2;
  auto A = remoteCompiler(D1.path(), quickOptions(S.url()));
  CompileInfo I = compileAndCheck(*A, 1);
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  CompilerStats SA = A->getStats();
  EXPECT_EQ(SA.Disk.Stores, 1u);
  EXPECT_EQ(SA.Remote.Stores, 1u);
  EXPECT_EQ(SA.Remote.LeasesTaken, 1u);
  EXPECT_GT(SA.Remote.BytesWritten, 0u);
  EXPECT_TRUE(S.get(RemoteCache::entryKey(I.Key)));
  // The lease was released.
  EXPECT_FALSE(S.get(RemoteCache::leaseKey(I.Key)));

  auto B = remoteCompiler(D2.path(), quickOptions(S.url()));
  I = compileAndCheck(*B, 1);
  EXPECT_EQ(I.Outcome, CacheOutcome::RemoteHit);
  CompilerStats SB = B->getStats();
  EXPECT_EQ(SB.Compiles, 0u);
  EXPECT_EQ(SB.RemoteHits, 1u);
  EXPECT_EQ(SB.Remote.Hits, 1u);
  EXPECT_EQ(SB.Remote.BytesRead, SA.Remote.BytesWritten);
  EXPECT_EQ(SB.Disk.Stores, 1u); // written through to the local disk

  // A third machine sharing D2's disk finds it on disk, not remotely.
  auto C = remoteCompiler(D2.path(), quickOptions(S.url()));
  EXPECT_EQ(compileAndCheck(*C, 1).Outcome, CacheOutcome::DiskHit);
  EXPECT_EQ(C->getStats().Remote.Hits + C->getStats().Remote.Misses, 0u);
}

TEST(RemoteCacheTest, ReadOnlyReadsButNeverWrites) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir D1, D2;
  RemoteCacheOptions RO = quickOptions(S.url());
  RO.ReadOnly = true;
  auto A = remoteCompiler(D1.path(), RO);
  CompileInfo I = compileAndCheck(*A, 2);
  EXPECT_EQ(I.Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(A->getStats().Remote.Stores, 0u);
  EXPECT_EQ(A->getStats().Remote.LeasesTaken, 0u);
  EXPECT_FALSE(S.get(RemoteCache::entryKey(I.Key)));

  auto W = remoteCompiler("", quickOptions(S.url()));
  compileAndCheck(*W, 3);
  auto B = remoteCompiler(D2.path(), RO);
  EXPECT_EQ(compileAndCheck(*B, 3).Outcome, CacheOutcome::RemoteHit);
}

TEST(RemoteCacheTest, AuthWithPassword) {
  REQUIRE_REDIS();
  RedisServer S({"--requirepass", "open-sesame"});
  std::string Path = S.socketPath();
  auto Good = remoteCompiler("", quickOptions("redis+unix://:open-sesame@" + Path));
  compileAndCheck(*Good, 4);
  EXPECT_EQ(Good->getStats().Remote.Stores, 1u);
  EXPECT_EQ(Good->getStats().Remote.Errors, 0u);
  // The default user by name, and a database other than 0.
  auto Named =
      remoteCompiler("", quickOptions("redis+unix://default:open-sesame@" + Path + "?db=1"));
  EXPECT_EQ(compileAndCheck(*Named, 4).Outcome, CacheOutcome::Compiled); // db 1 is empty
  EXPECT_EQ(Named->getStats().Remote.Stores, 1u);

  auto Wrong = remoteCompiler("", quickOptions("redis+unix://:wrong@" + Path));
  EXPECT_EQ(compileAndCheck(*Wrong, 4).Outcome, CacheOutcome::Compiled);
  EXPECT_GT(Wrong->getStats().Remote.Errors, 0u);
  auto None = remoteCompiler("", quickOptions(S.url()));
  EXPECT_EQ(compileAndCheck(*None, 4).Outcome, CacheOutcome::Compiled);
  EXPECT_GT(None->getStats().Remote.Errors, 0u);
}

//===----------------------------------------------------------------------===//
// Bad values
//===----------------------------------------------------------------------===//

/// Puts \p Value under kernel \p I's key, then compiles it through a fresh
/// Compiler with \p RO: the result is the reference and was compiled.
CompilerStats compileOver(RedisServer &S, unsigned I, const std::string &Value,
                          const RemoteCacheOptions &RO, bool ExpectDeleted) {
  CacheKey K = reference(I)->Key;
  S.set(RemoteCache::entryKey(K), Value);
  TempDir D;
  auto C = remoteCompiler(D.path(), RO);
  CompileInfo Info = compileAndCheck(*C, I);
  EXPECT_EQ(Info.Outcome, CacheOutcome::Compiled);
  EXPECT_FALSE(Info.RemoteProblem.empty());
  CompilerStats St = C->getStats();
  EXPECT_EQ(St.Compiles, 1u);
  EXPECT_EQ(St.Remote.Hits, 0u);
  EXPECT_EQ(St.Remote.BadDeleted, ExpectDeleted ? 1u : 0u);
  if (ExpectDeleted) {
    // Deleted, then replaced by the compile's good value.
    EXPECT_EQ(St.Remote.Stores, 1u);
    std::optional<std::string> Now = S.get(RemoteCache::entryKey(K));
    EXPECT_TRUE(Now);
    auto RC = RemoteCache::create(RO);
    if (Now)
      EXPECT_EQ(*Now, (*RC)->encodeValue(K, reference(I)->Art));
  }
  return St;
}

TEST(RemoteCacheTest, BadValuesAreMissesAndReplaced) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions RO = quickOptions(S.url());
  auto RC = RemoteCache::create(RO);
  ASSERT_TRUE(succeeded(RC));
  std::string Good = (*RC)->encodeValue(reference(5)->Key, reference(5)->Art);

  CompilerStats St = compileOver(S, 5, Good.substr(0, Good.size() - 7), RO, true);
  EXPECT_EQ(St.Remote.BadEntries, 1u);

  std::string Flipped = Good;
  Flipped[Flipped.size() / 2] ^= 0x10;
  St = compileOver(S, 5, Flipped, RO, true);
  EXPECT_EQ(St.Remote.BadEntries, 1u);

  // Kernel 6's (valid) value under kernel 5's key.
  std::string Other = (*RC)->encodeValue(reference(6)->Key, reference(6)->Art);
  St = compileOver(S, 5, Other, RO, true);
  EXPECT_EQ(St.Remote.BadEntries, 1u);

  // Garbage.
  St = compileOver(S, 5, "not an entry", RO, true);
  EXPECT_EQ(St.Remote.BadEntries, 1u);
}

TEST(RemoteCacheTest, WithASecretUnsignedAndMissignedValuesAreRejected) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions Plain = quickOptions(S.url());
  RemoteCacheOptions Signed = Plain;
  Signed.Secret = "0123456789abcdef-the-fleet-secret";
  RemoteCacheOptions Other = Plain;
  Other.Secret = "0123456789abcdef-another-secret!!";
  CacheKey K = reference(7)->Key;
  const Artifact &A = reference(7)->Art;

  std::string Unsigned = (*RemoteCache::create(Plain))->encodeValue(K, A);
  CompilerStats St = compileOver(S, 7, Unsigned, Signed, true);
  EXPECT_EQ(St.Remote.AuthFailures, 1u);
  EXPECT_EQ(St.Remote.BadEntries, 0u);

  std::string Missigned = (*RemoteCache::create(Other))->encodeValue(K, A);
  St = compileOver(S, 7, Missigned, Signed, true);
  EXPECT_EQ(St.Remote.AuthFailures, 1u);

  // A correctly signed value is a hit; a reader without the secret can
  // use it too (the tag is then not checked).
  TempDir D1, D2;
  auto C = remoteCompiler(D1.path(), Signed);
  EXPECT_EQ(compileAndCheck(*C, 7).Outcome, CacheOutcome::RemoteHit);
  auto P = remoteCompiler(D2.path(), Plain);
  EXPECT_EQ(compileAndCheck(*P, 7).Outcome, CacheOutcome::RemoteHit);

  // The secret from a file, through the Compiler's option.
  TempDir SD;
  writeFile(SD.file("secret"), Signed.Secret);
  CompilerOptions O;
  O.Targets = {nvptxTarget()};
  O.UseDiskCache = false;
  O.Remote = Plain;
  O.RemoteSecretFile = SD.file("secret");
  auto F = Compiler::create(std::move(O));
  ASSERT_TRUE(succeeded(F));
  EXPECT_EQ(compileAndCheck(**F, 7).Outcome, CacheOutcome::RemoteHit);
  EXPECT_EQ((*F)->getStats().Remote.AuthFailures, 0u);
}

TEST(RemoteCacheTest, OversizeValuesAreNeitherReadNorWritten) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions RO = quickOptions(S.url());
  RO.MaxValueBytes = 64;
  CompilerStats St = compileOver(S, 8, std::string(1000, 'x'), RO, false);
  // Seen on the read(s), and refused on the write (the entry is larger
  // than 64 bytes).
  EXPECT_GE(St.Remote.Oversize, 2u);
  EXPECT_EQ(St.Remote.Stores, 0u);
  EXPECT_EQ(St.Remote.BytesRead, 0u);
}

TEST(RemoteCacheTest, EntriesExpire) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions RO = quickOptions(S.url());
  RO.TTL = 1h;
  auto A = remoteCompiler("", RO);
  CompileInfo I = compileAndCheck(*A, 9);
  // Written with the TTL (PX): the server holds a lifetime no longer than it.
  Reply TTL = S.cmd({"PTTL", RemoteCache::entryKey(I.Key)});
  ASSERT_TRUE(TTL && TTL->type == REDIS_REPLY_INTEGER);
  EXPECT_GT(TTL->integer, 0);
  EXPECT_LE(TTL->integer, 3600 * 1000);
  // Its lifetime over (made short here, so the test waits for the server,
  // not for an hour), the entry is gone and the next machine compiles.
  Reply Short = S.cmd({"PEXPIRE", RemoteCache::entryKey(I.Key), "1"});
  ASSERT_TRUE(Short && Short->type == REDIS_REPLY_INTEGER && Short->integer == 1);
  for (int W = 0; W < 3000 && S.get(RemoteCache::entryKey(I.Key)); ++W)
    std::this_thread::sleep_for(10ms);
  ASSERT_FALSE(S.get(RemoteCache::entryKey(I.Key))) << "the entry did not expire";
  auto B = remoteCompiler("", RO);
  EXPECT_EQ(compileAndCheck(*B, 9).Outcome, CacheOutcome::Compiled);
  EXPECT_EQ(B->getStats().Remote.Misses, 1u);
}

//===----------------------------------------------------------------------===//
// Failures of the server
//===----------------------------------------------------------------------===//

TEST(RemoteCacheTest, ServerNotRunningTripsTheBreaker) {
  TempDir D;
  RemoteCacheOptions RO = quickOptions("redis+unix://" + D.file("no.sock"));
  RO.BreakerCooldown = 1h; // no probe during the test: exact counts
  auto C = remoteCompiler(D.path(), RO);
  for (unsigned I = 10; I < 15; ++I)
    EXPECT_EQ(compileAndCheck(*C, I).Outcome, CacheOutcome::Compiled);
  CompilerStats St = C->getStats();
  EXPECT_EQ(St.Compiles, 5u);
  EXPECT_EQ(St.Remote.Errors, 2u); // the threshold; then the breaker skips
  EXPECT_EQ(St.Remote.BreakerTrips, 1u);
  EXPECT_GT(St.Remote.BreakerSkips, 0u);
  EXPECT_EQ(St.RemoteMisses, 5u);

  // A TCP port nobody listens on (connection refused) behaves the same.
  auto T = remoteCompiler("", quickOptions("redis://127.0.0.1:1"));
  EXPECT_EQ(compileAndCheck(*T, 10).Outcome, CacheOutcome::Compiled);
  EXPECT_GT(T->getStats().Remote.Errors, 0u);
}

TEST(RemoteCacheTest, StoppedServerTimesOutThenRecovers) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions RO = hungServerOptions(S.url());
  auto C = remoteCompiler("", RO);
  compileAndCheck(*C, 20);
  EXPECT_EQ(C->getStats().Remote.Stores, 1u);

  S.signal(SIGSTOP);
  for (unsigned I = 21; I < 25; ++I)
    EXPECT_EQ(compileAndCheck(*C, I).Outcome, CacheOutcome::Compiled);
  CompilerStats St = C->getStats();
  EXPECT_GE(St.Remote.Timeouts, 1u);
  EXPECT_EQ(St.Remote.BreakerTrips, 1u);
  EXPECT_GT(St.Remote.BreakerSkips, 0u);
  EXPECT_EQ(St.Remote.Stores, 1u);

  S.signal(SIGCONT);
  // After the cooldown a probe finds the server again and stores resume.
  for (int W = 0; W < 200 && C->getStats().Remote.Stores < 2; ++W) {
    std::this_thread::sleep_for(50ms);
    compileAndCheck(*C, 100 + W);
  }
  EXPECT_GE(C->getStats().Remote.Stores, 2u);
  EXPECT_FALSE(C->getStats().Remote.Stores < 2) << "never recovered";
}

TEST(RemoteCacheTest, KilledAndRestartedServer) {
  REQUIRE_REDIS();
  RedisServer S;
  auto C = remoteCompiler("", quickOptions(S.url()));
  compileAndCheck(*C, 30);
  S.kill();
  EXPECT_EQ(compileAndCheck(*C, 31).Outcome, CacheOutcome::Compiled);
  EXPECT_GT(C->getStats().Remote.Errors, 0u);
  S.start();
  // The pooled connections died with the old server; new ones are made.
  unsigned Last = 0;
  for (unsigned W = 0; W < 200 && C->getStats().Remote.Stores < 2; ++W) {
    std::this_thread::sleep_for(50ms);
    compileAndCheck(*C, Last = 200 + W);
  }
  EXPECT_GE(C->getStats().Remote.Stores, 2u);
  auto Fresh = remoteCompiler("", quickOptions(S.url()));
  EXPECT_EQ(compileAndCheck(*Fresh, Last).Outcome, CacheOutcome::RemoteHit);
  EXPECT_EQ(compileAndCheck(*Fresh, 30).Outcome, CacheOutcome::Compiled); // lost with the kill
}

/// The server stopped (SIGTERM), hung (SIGSTOP) and killed (SIGKILL), each
/// time brought back, while 4 threads keep compiling through the remote
/// tier: three share one Compiler (one breaker) and compile a new kernel
/// each time, the fourth makes a fresh Compiler per request for kernels
/// already stored (a remote hit while the server is up). Every result is
/// the reference; the breaker opens and closes again; after each fault
/// stores resume (recovery). A request that hangs is caught by a
/// watchdog (a hang bound, not a speed check: it fails only when no
/// request finishes for 120 s). $GRIDJIT_FAULT_SCALE multiplies the
/// rounds of faults (docs/Faults.md).
TEST(RemoteCacheTest, ServerStoppedHungKilledAndRestartedUnderLoad) {
  REQUIRE_REDIS();
  RedisServer S;
  RemoteCacheOptions RO = hungServerOptions(S.url());
  auto Shared = remoteCompiler("", RO);
  ASSERT_TRUE(Shared);
  std::atomic<unsigned> Next{0}, Done{0}, Finished{0}, FreshHits{0};
  std::atomic<bool> Stop{false};
  std::atomic<int64_t> LastProgress{std::chrono::steady_clock::now().time_since_epoch().count()};
  auto Progress = [&] {
    LastProgress = std::chrono::steady_clock::now().time_since_epoch().count();
  };
  std::vector<std::thread> Clients;
  for (int T = 0; T < 3; ++T)
    Clients.emplace_back([&] {
      while (!Stop) {
        unsigned I = Next++;
        compileAndCheck(*Shared, 3000 + I);
        Done = std::max<unsigned>(Done, I + 1);
        ++Finished;
        Progress();
      }
    });
  Clients.emplace_back([&] {
    unsigned J = 0;
    while (!Stop) {
      unsigned Have = Done > 3 ? Done - 3 : 0; // finished (and stored, when up) by now
      if (Have == 0) {
        std::this_thread::sleep_for(5ms);
        continue;
      }
      auto Fresh = remoteCompiler("", RO);
      if (compileAndCheck(*Fresh, 3000 + (J++ % Have)).Outcome == CacheOutcome::RemoteHit)
        ++FreshHits;
      ++Finished;
      Progress();
    }
  });
  std::thread Watchdog([&] {
    while (!Stop) {
      std::this_thread::sleep_for(100ms);
      auto Last = std::chrono::steady_clock::time_point(
          std::chrono::steady_clock::duration(LastProgress.load()));
      if (std::chrono::steady_clock::now() - Last > 120s) {
        std::fprintf(stderr, "no remote-tier request finished for 120 s: hung\n");
        std::_Exit(1);
      }
    }
  });
  auto Stores = [&] { return Shared->getStats().Remote.Stores; };
  // Until \p N more values were stored (the tier works again); bounded.
  auto Recovered = [&](uint64_t N) {
    uint64_t From = Stores();
    for (int W = 0; W < 3000 && Stores() < From + N; ++W)
      std::this_thread::sleep_for(10ms);
    return Stores() >= From + N;
  };
  ASSERT_TRUE(Recovered(3));
  unsigned Rounds = 1;
  if (const char *Scale = std::getenv("GRIDJIT_FAULT_SCALE"))
    Rounds = std::max(1, std::atoi(Scale));
  uint64_t Trips = 0;
  // Each fault lasts until the clients have met it (a count went up), not
  // for a fixed time: on a loaded machine no request might reach the
  // server within any given window. Bounded, as a hang check.
  auto Met = [&](uint64_t RemoteCacheStats::*Counter) {
    uint64_t From = Shared->getStats().Remote.*Counter;
    for (int W = 0; W < 6000 && Shared->getStats().Remote.*Counter == From; ++W)
      std::this_thread::sleep_for(10ms);
    return Shared->getStats().Remote.*Counter > From;
  };
  for (unsigned R = 0; R < Rounds; ++R) {
    S.stop(SIGTERM);
    EXPECT_TRUE(Met(&RemoteCacheStats::Errors)) << "no request met the stopped server";
    S.start();
    EXPECT_TRUE(Recovered(2)) << "no recovery after SIGTERM and a restart";
    S.signal(SIGSTOP);
    EXPECT_TRUE(Met(&RemoteCacheStats::Timeouts)) << "no request met the hung server";
    S.signal(SIGCONT);
    EXPECT_TRUE(Recovered(2)) << "no recovery after SIGSTOP and SIGCONT";
    S.kill(); // SIGKILL
    EXPECT_TRUE(Met(&RemoteCacheStats::Errors)) << "no request met the killed server";
    S.start();
    EXPECT_TRUE(Recovered(2)) << "no recovery after SIGKILL and a restart";
    RemoteCacheStats St = Shared->getStats().Remote;
    EXPECT_GT(St.BreakerTrips, Trips) << "the breaker never opened in round " << R;
    Trips = St.BreakerTrips;
  }
  // Requests of the fresh Compilers hit what the shared one stored.
  for (int W = 0; W < 3000 && FreshHits == 0; ++W)
    std::this_thread::sleep_for(10ms);
  Stop = true;
  for (std::thread &T : Clients)
    T.join();
  Watchdog.join();
  RemoteCacheStats St = Shared->getStats().Remote;
  EXPECT_GT(St.Errors, 0u);
  EXPECT_GT(St.Timeouts, 0u); // the hung server
  EXPECT_GT(St.BreakerSkips, 0u);
  EXPECT_GT(FreshHits, 0u);
  EXPECT_EQ(Shared->getStats().CompileFailures, 0u);
  std::printf("%u requests, %llu stores, %llu errors, %llu timeouts, %llu breaker trips, %u hits "
              "by fresh compilers\n",
              Finished.load(), (unsigned long long)St.Stores, (unsigned long long)St.Errors,
              (unsigned long long)St.Timeouts, (unsigned long long)St.BreakerTrips,
              FreshHits.load());
}

TEST(RemoteCacheTest, NoSigpipeWhenTheServerClosesMidWrite) {
  TempDir D;
  // Accepts connections, reads a little and closes them: every large write
  // to it fails mid-way (EPIPE), which would raise SIGPIPE.
  ScriptedServer Srv(D.file("closing.sock"),
                     [](int FD, const std::atomic<bool> &) { ScriptedServer::readSome(FD); });
  RemoteCacheOptions RO = quickOptions("redis+unix://" + D.file("closing.sock"));
  RO.BreakerThreshold = 1000; // every store reaches the socket
  auto RC = RemoteCache::create(RO);
  ASSERT_TRUE(succeeded(RC));
  Artifact Big = reference(40)->Art;
  Big.Payload.append(8 << 20, ' '); // far more than a socket buffer
  for (int I = 0; I < 3; ++I)
    EXPECT_FALSE((*RC)->store(reference(40)->Key, Big));
  EXPECT_GE((*RC)->getStats().Errors, 3u);
  EXPECT_GE(Srv.accepted(), 1);
  // Still alive, with SIGPIPE neither pending nor left blocked, and the
  // process's disposition untouched.
  sigset_t Mask, Pending;
  pthread_sigmask(SIG_BLOCK, nullptr, &Mask);
  EXPECT_FALSE(sigismember(&Mask, SIGPIPE));
  sigpending(&Pending);
  EXPECT_FALSE(sigismember(&Pending, SIGPIPE));
  struct sigaction SA;
  sigaction(SIGPIPE, nullptr, &SA);
  EXPECT_EQ(SA.sa_handler, SIG_DFL);
}

TEST(RemoteCacheTest, NoSigpipeWhenRedisDropsAnOversizedWrite) {
  REQUIRE_REDIS();
  // Redis closes a client whose query buffer passes this limit, in the
  // middle of our write of a larger value.
  RedisServer S({"--client-query-buffer-limit", "1mb"});
  RemoteCacheOptions RO = quickOptions(S.url());
  RO.BreakerThreshold = 1000;
  auto RC = RemoteCache::create(RO);
  ASSERT_TRUE(succeeded(RC));
  Artifact Big = reference(42)->Art;
  Big.Payload.append(16 << 20, ' ');
  for (int I = 0; I < 2; ++I)
    EXPECT_FALSE((*RC)->store(reference(42)->Key, Big));
  EXPECT_GE((*RC)->getStats().Errors, 2u);
  EXPECT_EQ((*RC)->getStats().Stores, 0u);
  // The connection pool recovers: a normal value is stored next.
  EXPECT_TRUE((*RC)->store(reference(42)->Key, reference(42)->Art));
}

/// A loopback TCP port that was free a moment ago.
unsigned freePort() {
  int FD = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in A{};
  A.sin_family = AF_INET;
  A.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ::bind(FD, reinterpret_cast<sockaddr *>(&A), sizeof(A));
  socklen_t Len = sizeof(A);
  ::getsockname(FD, reinterpret_cast<sockaddr *>(&A), &Len);
  ::close(FD);
  return ntohs(A.sin_port);
}

TEST(RemoteCacheTest, LoopbackTCP) {
  REQUIRE_REDIS();
  std::string Port = std::to_string(freePort());
  RedisServer S({"--port", Port, "--bind", "127.0.0.1"});
  for (const char *Host : {"127.0.0.1", "localhost"}) {
    auto C = remoteCompiler("", quickOptions("redis://" + std::string(Host) + ":" + Port + "/0"));
    compileAndCheck(*C, 43);
    EXPECT_EQ(C->getStats().Remote.Errors, 0u) << Host;
    EXPECT_EQ(C->getStats().Remote.Hits + C->getStats().Remote.Stores, 1u) << Host;
  }
}

//===----------------------------------------------------------------------===//
// Leases
//===----------------------------------------------------------------------===//

// A holder that died keeps its lease until the lease's own expiry (long
// here, so that the test does not depend on when it runs): a waiter waits
// at most its LeaseTime, then compiles and stores. (A lease that expires
// while someone waits, which that waiter then takes, is in
// RemoteTierTest.HolderThatLetsGoWithoutStoringHandsTheLeaseOn.)
TEST(RemoteCacheTest, CrashedLeaseHolderCostsOnlyTheLeaseTime) {
  REQUIRE_REDIS();
  RedisServer S;
  CacheKey K = reference(41)->Key;
  Reply R = S.cmd({"SET", RemoteCache::leaseKey(K), "dead", "PX", "600000"});
  ASSERT_TRUE(R && R->type == REDIS_REPLY_STATUS);
  RemoteCacheOptions RO = quickOptions(S.url());
  RO.LeaseTime = 300ms;
  auto C = remoteCompiler("", RO);
  EXPECT_EQ(compileAndCheck(*C, 41).Outcome, CacheOutcome::Compiled);
  CompilerStats St = C->getStats();
  EXPECT_EQ(St.Remote.LeaseWaits, 1u);
  EXPECT_EQ(St.Remote.LeaseExpired, 1u);
  EXPECT_EQ(St.Compiles, 1u);
  EXPECT_EQ(St.Remote.Stores, 1u);
}

//===----------------------------------------------------------------------===//
// Several processes ("machines")
//===----------------------------------------------------------------------===//

/// What a child reports: "compiles N", "remote-hits N", then "k<I> <fp>".
struct ChildReport {
  uint64_t Compiles = 0, RemoteHits = 0;
  std::map<std::string, std::string> Fingerprints;
};

ChildReport readReport(const std::string &Path) {
  ChildReport R;
  std::istringstream In(readFile(Path));
  std::string Word, Value;
  while (In >> Word >> Value) {
    if (Word == "compiles")
      R.Compiles = std::stoull(Value);
    else if (Word == "remote-hits")
      R.RemoteHits = std::stoull(Value);
    else
      R.Fingerprints[Word] = Value;
  }
  return R;
}

/// Runs this binary's DISABLED_Child with \p Spec; returns its process.
llvm::sys::ProcessInfo spawnChild(const std::string &Spec, const std::string &Log) {
  std::string Self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  std::vector<llvm::StringRef> Args = {Self, "--gtest_filter=RemoteCacheTest.DISABLED_Child",
                                       "--gtest_also_run_disabled_tests"};
  std::vector<std::string> EnvStore = childTestEnvironment({std::string(ChildVar) + "=" + Spec});
  std::vector<llvm::StringRef> EnvRefs(EnvStore.begin(), EnvStore.end());
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Log),
                                                llvm::StringRef(Log)};
  std::string Err;
  llvm::sys::ProcessInfo PI = llvm::sys::ExecuteNoWait(Self, Args, EnvRefs, Redirects, 0, &Err);
  EXPECT_NE(PI.Pid, llvm::sys::ProcessInfo::InvalidPid) << Err;
  return PI;
}

void waitChild(const llvm::sys::ProcessInfo &PI, const std::string &Log) {
  std::string Err;
  llvm::sys::ProcessInfo Done = llvm::sys::Wait(PI, std::nullopt, &Err);
  std::string Output = readFile(Log);
  EXPECT_EQ(Done.ReturnCode, 0) << Err << "\nchild output:\n" << Output;
  EXPECT_THAT(Output, HasSubstr(ChildPassedLine)) << Output;
}

TEST(RemoteCacheTest, SecondMachineCompilesNothing) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir Work;
  ChildReport Reports[2];
  for (int M = 0; M < 2; ++M) {
    std::string Disk = Work.file("disk" + std::to_string(M));
    std::string Out = Work.file("out" + std::to_string(M));
    std::string Log = Work.file("log" + std::to_string(M));
    // mode;url;disk;out;threads;kernels;seed
    auto PI = spawnChild("machine;" + S.url() + ";" + Disk + ";" + Out + ";1;6;0", Log);
    waitChild(PI, Log);
    Reports[M] = readReport(Out);
  }
  EXPECT_GT(Reports[0].Compiles, 0u);
  EXPECT_EQ(Reports[1].Compiles, 0u);
  EXPECT_EQ(Reports[1].RemoteHits, Reports[0].Compiles);
  EXPECT_EQ(Reports[0].Fingerprints, Reports[1].Fingerprints);
  EXPECT_GE(Reports[0].Fingerprints.size(), 6u + 1u); // + grid_sync (nvptx, and host)
}

TEST(RemoteCacheTest, FleetCompilesEachKernelOnce) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir Work;
  constexpr int Procs = 8, Kernels = 50;
  std::vector<llvm::sys::ProcessInfo> PIs;
  for (int P = 0; P < Procs; ++P) {
    std::string Disk = Work.file("disk" + std::to_string(P % 4));
    std::string N = std::to_string(P);
    PIs.push_back(spawnChild("fleet;" + S.url() + ";" + Disk + ";" + Work.file("out" + N) + ";8;" +
                                 std::to_string(Kernels) + ";" + N,
                             Work.file("log" + N)));
  }
  uint64_t Compiles = 0;
  for (int P = 0; P < Procs; ++P) {
    std::string N = std::to_string(P);
    waitChild(PIs[P], Work.file("log" + N));
    ChildReport R = readReport(Work.file("out" + N));
    Compiles += R.Compiles;
    ASSERT_EQ(R.Fingerprints.size(), size_t(Kernels));
    for (unsigned I = 0; I < Kernels; ++I)
      EXPECT_EQ(R.Fingerprints["k" + std::to_string(I)], fingerprint(*reference(500 + I)))
          << "process " << P << " kernel " << I;
  }
  EXPECT_EQ(Compiles, uint64_t(Kernels));
}

// The child half of the tests above (run only by them).
TEST(RemoteCacheTest, DISABLED_Child) {
  const char *Spec = std::getenv(ChildVar);
  if (!Spec)
    GTEST_SKIP() << "run by the multi-process tests";
  llvm::SmallVector<llvm::StringRef, 8> F;
  llvm::StringRef(Spec).split(F, ';');
  ASSERT_EQ(F.size(), 7u);
  std::string Mode = F[0].str(), URL = F[1].str(), Disk = F[2].str(), Out = F[3].str();
  unsigned Threads = std::stoul(F[4].str()), Kernels = std::stoul(F[5].str()),
           Seed = std::stoul(F[6].str());
  bool Machine = Mode == "machine";
  std::vector<std::shared_ptr<const Target>> Targets = {nvptxTarget()};
  std::string Why;
  if (Machine)
    if (auto Host = hostTarget(&Why))
      Targets.push_back(Host);
  auto C = remoteCompiler(Disk, quickOptions(URL), Targets);
  ASSERT_TRUE(C);
  unsigned Base = Machine ? 300 : 500;
  std::mutex Mu;
  std::map<std::string, std::string> FPs;
  std::vector<std::thread> Ts;
  for (unsigned T = 0; T < Threads; ++T)
    Ts.emplace_back([&, T] {
      for (unsigned J = 0; J < Kernels; ++J) {
        unsigned I = (J + T * 7 + Seed * 13) % Kernels;
        auto M = C->compile(makeKernel(Base + I), "k.kir");
        ASSERT_TRUE(succeeded(M));
        std::lock_guard<std::mutex> G(Mu);
        FPs["k" + std::to_string(I)] = fingerprint(**M);
      }
    });
  for (std::thread &T : Ts)
    T.join();
  if (Machine) {
    // grid_sync, for both targets; on the host it also runs.
    std::string Text = readExample("grid_sync.kir");
    for (const auto &T : Targets) {
      CompileRequest R;
      R.Target = std::string(T->getName());
      auto M = C->compile(Text, "grid_sync.kir", R);
      ASSERT_TRUE(succeeded(M));
      FPs["grid_sync-" + R.Target] = fingerprint(**M);
      if (T->getKind() != TargetKind::Host)
        continue;
      auto RT = HostRuntime::create();
      ASSERT_TRUE(succeeded(RT));
      auto L = (*RT)->load((*M)->Art);
      ASSERT_TRUE(succeeded(L));
      constexpr int N = 1000;
      std::vector<float> X(N), Tmp(N, 0.0f), Y(N, 0.0f);
      for (int I = 0; I < N; ++I)
        X[I] = static_cast<float>(I % 37) * 0.5f;
      LaunchConfig Cfg;
      Cfg.Grid.X = 2;
      Cfg.Block.X = 64;
      llvm::Error E = (*RT)->launch(**L, "two_phase", Cfg,
                                    {KernelArg::i32(N), KernelArg::pointer(X.data()),
                                     KernelArg::pointer(Tmp.data()), KernelArg::pointer(Y.data())});
      ASSERT_TRUE(succeeded(std::move(E)));
      for (int I = 0; I < N; ++I)
        ASSERT_EQ(Y[I], X[I] * X[I] + X[(I + 1) % N] * X[(I + 1) % N]) << "y[" << I << "]";
    }
  }
  CompilerStats St = C->getStats();
  std::string Text = "compiles " + std::to_string(St.Compiles) + "\nremote-hits " +
                     std::to_string(St.RemoteHits) + "\n";
  for (auto &[K, V] : FPs)
    Text += K + " " + V + "\n";
  writeFile(Out, Text);
}

} // namespace
