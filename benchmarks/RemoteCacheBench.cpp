//===- RemoteCacheBench.cpp - The Redis tier against disk and compile -----===//
//
// Part of gridjit. Starts its own redis-server (unix socket in a temp dir)
// and prints three tables:
//
//   1. Per example kernel (host target): a cold compile (no cache), a disk
//      hit (fresh Compiler, warm directory, no remote tier) and a remote
//      hit (fresh Compiler, empty directory, warm Redis), median of runs.
//   2. A fleet: N processes (this program again), each with its own empty
//      disk cache, start together and compile every example; wall time and
//      total compiles with one shared Redis versus with no remote tier.
//   3. A hung server (SIGSTOP): the cost of a request's remote work (lookup,
//      lease, store) before the breaker trips (the deadlines) and after
//      (goal: at most 10 us added per request).
//
//   build/benchmarks/bench-RemoteCacheBench [N processes, default 8]
//
// Not run by the test suite. Without redis-server it says so and exits 0.
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"
#include "gridjit/Cache/RemoteCache.h"
#include "gridjit/Compiler/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <hiredis/hiredis.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

using namespace gridjit;
using Clock = std::chrono::steady_clock;

namespace {

const char *const Examples[] = {"saxpy.kir", "matmul.kir", "grid_sync.kir"};
const char *const FleetExamples[] = {"saxpy.kir",   "matmul.kir",    "grid_sync.kir",  "reduce.kir",
                                     "stencil.kir", "histogram.kir", "warp_reduce.kir"};

std::string readExample(const std::string &Name) {
  auto Buf = llvm::MemoryBuffer::getFile(bench::checkoutDir() + "/examples/" + Name);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

std::string tempDir(const char *Prefix) {
  llvm::SmallString<128> P;
  llvm::sys::fs::createUniqueDirectory(Prefix, P);
  return std::string(P);
}

double msSince(Clock::time_point S) {
  return std::chrono::duration<double, std::milli>(Clock::now() - S).count();
}

std::unique_ptr<Compiler> makeCompiler(const std::string &Disk, const std::string &URL) {
  CompilerOptions O;
  O.UseDiskCache = !Disk.empty();
  O.CacheDir = Disk;
  O.UseRemoteCache = !URL.empty();
  O.Remote.URL = URL;
  O.Remote.ConnectTimeout = std::chrono::seconds(2);
  O.Remote.OperationTimeout = std::chrono::seconds(10);
  O.Remote.LeaseTime = std::chrono::seconds(60);
  O.Warning = [](const std::string &) {};
  auto C = Compiler::create(std::move(O));
  if (!C) {
    llvm::errs() << llvm::toString(C.takeError()) << "\n";
    std::exit(1);
  }
  return std::move(*C);
}

struct Redis {
  std::string Dir, Sock;
  pid_t Pid = -1;
  Redis() {
    Dir = tempDir("gridjit-remotebench");
    Sock = Dir + "/redis.sock";
    std::vector<std::string> Args = {"redis-server", "--port", "0", "--unixsocket",
                                     Sock,           "--save", "",  "--appendonly",
                                     "no",           "--dir",  Dir};
    std::vector<char *> Argv;
    for (std::string &A : Args)
      Argv.push_back(A.data());
    Argv.push_back(nullptr);
    Pid = fork();
    if (Pid == 0) {
      int FD = ::open("/dev/null", O_WRONLY);
      dup2(FD, 1);
      dup2(FD, 2);
      execvp("redis-server", Argv.data());
      _exit(127);
    }
    for (int I = 0; I < 2000; ++I) {
      redisContext *C = redisConnectUnix(Sock.c_str());
      bool Up = C && !C->err;
      if (C)
        redisFree(C);
      if (Up)
        return;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
  }
  ~Redis() {
    ::kill(Pid, SIGCONT);
    ::kill(Pid, SIGKILL);
    waitpid(Pid, nullptr, 0);
    llvm::sys::fs::remove_directories(Dir, true);
  }
  std::string url() const { return "redis+unix://" + Sock; }
  void flush() {
    redisContext *C = redisConnectUnix(Sock.c_str());
    freeReplyObject(redisCommand(C, "FLUSHALL"));
    redisFree(C);
  }
};

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V[V.size() / 2];
}

void table1(Redis &R) {
  llvm::outs() << "\n1. One request, host target (median of 9; ms)\n\n";
  llvm::outs() << "| kernel | cold compile | disk hit | remote hit | remote/disk |\n";
  llvm::outs() << "|---|---:|---:|---:|---:|\n";
  for (const char *E : Examples) {
    std::string Text = readExample(E);
    std::vector<double> Cold, Disk, Remote;
    std::string WarmDisk = tempDir("gridjit-remotebench-disk");
    R.flush();
    {
      auto Warm = makeCompiler(WarmDisk, R.url());
      auto M = Warm->compile(Text, E);
      llvm::consumeError(M.takeError());
    }
    for (int I = 0; I < 9; ++I) {
      {
        auto C = makeCompiler("", "");
        auto S = Clock::now();
        auto M = C->compile(Text, E);
        Cold.push_back(msSince(S));
        llvm::consumeError(M.takeError());
      }
      {
        auto C = makeCompiler(WarmDisk, "");
        auto S = Clock::now();
        auto M = C->compile(Text, E);
        Disk.push_back(msSince(S));
        llvm::consumeError(M.takeError());
      }
      {
        std::string Empty = tempDir("gridjit-remotebench-empty");
        auto C = makeCompiler(Empty, R.url());
        CompileInfo Info;
        auto S = Clock::now();
        auto M = C->compile(Text, E, {}, &Info);
        Remote.push_back(msSince(S));
        llvm::consumeError(M.takeError());
        if (Info.Outcome != CacheOutcome::RemoteHit)
          llvm::errs() << "warning: not a remote hit: " << cacheOutcomeName(Info.Outcome) << "\n";
        llvm::sys::fs::remove_directories(Empty, true);
      }
    }
    llvm::sys::fs::remove_directories(WarmDisk, true);
    llvm::outs() << llvm::format("| %s | %.3f | %.3f | %.3f | %.2f |\n", E, median(Cold),
                                 median(Disk), median(Remote), median(Remote) / median(Disk));
  }
}

/// The fleet child: compiles every example; prints its compile count.
int fleetChild(const std::string &Disk, const std::string &URL) {
  auto C = makeCompiler(Disk, URL);
  for (const char *E : FleetExamples) {
    auto M = C->compile(readExample(E), E);
    if (!M) {
      llvm::errs() << llvm::toString(M.takeError()) << "\n";
      return 1;
    }
  }
  llvm::outs() << C->getStats().Compiles << "\n";
  return 0;
}

void table2(Redis &R, const char *Self, unsigned N) {
  llvm::outs() << "\n2. A fleet of " << N << " processes, separate empty disk caches, "
               << std::size(FleetExamples) << " examples each (host target)\n\n";
  llvm::outs() << "| remote tier | wall ms | total compiles |\n|---|---:|---:|\n";
  for (bool UseRemote : {false, true}) {
    R.flush();
    std::string Work = tempDir("gridjit-remotebench-fleet");
    std::vector<llvm::sys::ProcessInfo> PIs;
    std::string URL = UseRemote ? R.url() : "";
    auto S = Clock::now();
    for (unsigned P = 0; P < N; ++P) {
      std::string Disk = Work + "/d" + std::to_string(P), Out = Work + "/o" + std::to_string(P);
      std::vector<llvm::StringRef> Args = {Self, "--fleet-child", Disk, URL};
      std::optional<llvm::StringRef> Redir[] = {std::nullopt, llvm::StringRef(Out), std::nullopt};
      // Args hold pointers into Disk and Out: spawn before they go.
      PIs.push_back(llvm::sys::ExecuteNoWait(Self, Args, std::nullopt, Redir));
    }
    uint64_t Compiles = 0;
    for (unsigned P = 0; P < N; ++P)
      if (llvm::sys::Wait(PIs[P], std::nullopt).ReturnCode != 0)
        llvm::errs() << "warning: fleet process " << P << " failed\n";
    double Wall = msSince(S);
    for (unsigned P = 0; P < N; ++P) {
      auto Buf = llvm::MemoryBuffer::getFile(Work + "/o" + std::to_string(P));
      if (Buf)
        Compiles += std::strtoull((*Buf)->getBuffer().str().c_str(), nullptr, 10);
    }
    llvm::sys::fs::remove_directories(Work, true);
    llvm::outs() << llvm::format("| %s | %.1f | %llu |\n", UseRemote ? "one Redis" : "none", Wall,
                                 (unsigned long long)Compiles);
  }
}

void table3(Redis &R) {
  llvm::outs() << "\n3. A hung server (SIGSTOP): remote work per request (lookup + lease + "
                  "store), default deadlines (100 ms connect, 1 s operation)\n\n";
  RemoteCacheOptions O;
  O.URL = R.url();
  auto RC = RemoteCache::create(O);
  auto Text = readExample("saxpy.kir");
  auto C = makeCompiler("", "");
  auto M = C->compile(Text, "saxpy.kir");
  const CompiledModule &CM = **M;
  auto Request = [&] {
    std::optional<Artifact> Found;
    auto S = Clock::now();
    if (!(*RC)->lookup(CM.Key)) {
      RemoteCache::Lease L = (*RC)->acquireLease(CM.Key, Found);
      (*RC)->store(CM.Key, CM.Art);
    }
    return std::chrono::duration<double, std::micro>(Clock::now() - S).count();
  };
  // Warm: a connection in the pool, the entry there.
  Request();
  ::kill(R.Pid, SIGSTOP);
  llvm::outs() << "| phase | requests | mean us per request |\n|---|---:|---:|\n";
  double Before = 0;
  unsigned N1 = 0;
  while (!(*RC)->isBreakerOpen() && N1 < 20) {
    Before += Request();
    ++N1;
  }
  llvm::outs() << llvm::format("| until the breaker opens | %u | %.1f |\n", N1, Before / N1);
  constexpr unsigned N2 = 100000;
  double After = 0;
  for (unsigned I = 0; I < N2; ++I)
    After += Request();
  RemoteCacheStats St = (*RC)->getStats();
  llvm::outs() << llvm::format("| breaker open | %u | %.3f |\n", N2, After / N2);
  llvm::outs() << "\n(timeouts " << St.Timeouts << ", errors " << St.Errors << ", trips "
               << St.BreakerTrips << ", skips " << St.BreakerSkips << ")\n";
  ::kill(R.Pid, SIGCONT);
}

} // namespace

int main(int argc, char **argv) {
  if (argc >= 2 && std::string(argv[1]) == "--fleet-child")
    return fleetChild(argc > 2 ? argv[2] : "", argc > 3 ? argv[3] : "");
  if (!llvm::sys::findProgramByName("redis-server")) {
    llvm::outs() << "bench-RemoteCacheBench: redis-server is not installed (utils/setup.sh "
                    "installs it); nothing measured\n";
    return 0;
  }
  unsigned N = argc >= 2 ? unsigned(std::atoi(argv[1])) : 8;
  Redis R;
  std::string Self = llvm::sys::fs::getMainExecutable(argv[0], (void *)&main);
  table1(R);
  table2(R, Self.c_str(), N ? N : 8);
  table3(R);
  return 0;
}
