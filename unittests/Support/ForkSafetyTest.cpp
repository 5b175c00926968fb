//===- ForkSafetyTest.cpp - The library in a child of fork() --------------===//
//
// Part of gridjit. gridjit/Support/ForkSafety.h and every object that uses
// it: after fork() the child has none of the parent's threads, so each
// pool, lock, flight, file lock and connection pool the parent was using
// must be usable (or cleanly refused, for CUDA) in the child. Each test
// forks while the parent's threads are in the state that broke before:
// pools with idle threads, a task running and one queued, a lock held by
// another thread, a key in flight, a key's file lock, a pooled connection,
// a CUDA runtime. The child runs under alarm(): a regression that hangs it
// fails the test (the child dies of SIGALRM) instead of hanging it. No
// time is measured.
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "Cache/RedisTestUtil.h"
#include "Runtime/RuntimeTestUtil.h"
#include "TestSupport.h"

#include "Cache/Redis/RedisClient.h"
#include "Compiler/AsyncPool.h"
#include "Runtime/Cuda/CudaRuntime.h"

#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Cache/TieredCache.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <fcntl.h>
#include <fstream>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <thread>
#include <unistd.h>

using namespace gridjit;
using namespace gridjit::test;
using namespace std::chrono_literals;

namespace {

/// Seconds a child may take: far more than any machine needs; a child
/// still running then is stuck.
constexpr unsigned Deadline = 120;

/// Runs \p Body in a child of fork() and returns its exit status: what
/// \p Body returned (0: everything held), or 128 + N when signal N ended
/// it (SIGALRM: it did not finish within Deadline seconds). The child
/// leaves with _exit: nothing of the test process's teardown runs there.
int inChild(llvm::function_ref<int()> Body) {
  std::fflush(stdout);
  std::fflush(stderr);
  pid_t Pid = fork();
  if (Pid == 0) {
    alarm(Deadline);
    int R = Body();
    std::fflush(stderr);
    _exit(R);
  }
  if (Pid < 0)
    return -1;
  int Status = 0;
  while (waitpid(Pid, &Status, 0) < 0 && errno == EINTR) {
  }
  return WIFEXITED(Status) ? WEXITSTATUS(Status) : 128 + WTERMSIG(Status);
}

/// The threads of this process, as the kernel counts them.
int threadCount() {
  std::ifstream Status("/proc/self/status");
  std::string Line;
  while (std::getline(Status, Line))
    if (Line.rfind("Threads:", 0) == 0)
      return std::atoi(Line.c_str() + 8);
  return -1;
}

/// Fails the child with \p Code, saying why on stderr.
int failWith(int Code, const std::string &Why) {
  std::fprintf(stderr, "child: %s\n", Why.c_str());
  return Code;
}

void spinUntil(const std::atomic<bool> &Flag) {
  while (!Flag.load())
    std::this_thread::yield();
}

TEST(ForkSafetyTest, HooksRunAroundForkInOrder) {
  std::vector<std::string> Log;
  auto Hooks = [&](std::string Name) {
    return ForkHooks::Handlers{[&Log, Name] { Log.push_back("prepare " + Name); },
                               [&Log, Name] { Log.push_back("parent " + Name); },
                               [&Log, Name] { Log.push_back("child " + Name); }};
  };
  ForkHooks A(Hooks("A"));
  uint64_t Generation = forkGeneration();
  {
    ForkHooks B(Hooks("B"));
    int R = inChild([&] {
      std::vector<std::string> Want = {"prepare B", "prepare A", "child A", "child B"};
      if (Log != Want)
        return failWith(1, "the hooks ran out of order");
      return forkGeneration() == Generation + 1 ? 0 : failWith(2, "the generation did not count");
    });
    EXPECT_EQ(R, 0);
  }
  EXPECT_EQ(Log, (std::vector<std::string>{"prepare B", "prepare A", "parent A", "parent B"}));
  EXPECT_EQ(forkGeneration(), Generation);
  // B is gone: the next fork runs A's alone.
  Log.clear();
  EXPECT_EQ(
      inChild([&] { return Log == std::vector<std::string>{"prepare A", "child A"} ? 0 : 1; }), 0);
}

// Another thread holds a lock when the process forks: prepare waits for it,
// so the child gets the lock free and the state it guards whole.
TEST(ForkSafetyTest, ALockHeldByAnotherThreadIsFreeInTheChild) {
  std::mutex M;
  int Guarded = 0;
  ForkHooks ForM(M, [&] { Guarded += 100; });
  std::atomic<bool> Held{false}, Forking{false};
  // Newer than ForM's, so it is prepared first: it tells the holder that a
  // fork has begun, and the holder lets go only then.
  ForkHooks Signal({[&] { Forking = true; }, nullptr, nullptr});
  std::thread Holder([&] {
    std::lock_guard<std::mutex> G(M);
    Held = true;
    spinUntil(Forking);
    Guarded = 1;
  });
  spinUntil(Held);
  int R = inChild([&] {
    std::lock_guard<std::mutex> G(M);
    return Guarded == 101 ? 0 : failWith(1, "the child saw " + std::to_string(Guarded));
  });
  Holder.join();
  EXPECT_EQ(R, 0);
  std::lock_guard<std::mutex> G(M);
  EXPECT_EQ(Guarded, 1);
}

// A thread is inside LLVM (an LLVMSection) when the process forks: the
// fork waits until it has left before any object's hooks run (so the child
// never gets LLVM's state half changed), and the child may enter sections
// of its own. The thread stays inside for a while on its own; the check is
// of order, not time: the hooks' prepare must see it gone.
TEST(ForkSafetyTest, AForkWaitsForTheThreadsInsideLLVM) {
  std::atomic<bool> Inside{false}, Left{false};
  bool LeftAtPrepare = false;
  ForkHooks Observe({[&] { LeftAtPrepare = Left.load(); }, nullptr, nullptr});
  std::thread Compiling([&] {
    {
      LLVMSection InLLVM;
      Inside = true;
      auto Until = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
      while (std::chrono::steady_clock::now() < Until)
        std::this_thread::yield();
      Left = true; // still inside: the section ends at the brace
    }
  });
  spinUntil(Inside);
  int R = inChild([&] {
    if (!LeftAtPrepare)
      return failWith(1, "the fork copied a thread inside LLVM");
    LLVMSection Mine; // the gate is open in the child
    return 0;
  });
  Compiling.join();
  EXPECT_EQ(R, 0);
  EXPECT_TRUE(LeftAtPrepare);
  // Nested sections count once, and a fork after them goes through.
  {
    LLVMSection Outer;
    LLVMSection Inner;
  }
  EXPECT_EQ(inChild([] { return 0; }), 0);
}

// compileAsync's pool: the parent's threads are idle, one task runs and
// one waits in the queue when the process forks. The child drops both
// (destroying what they captured) and runs its own tasks on threads it
// starts; the parent finishes its own.
TEST(ForkSafetyTest, TheAsyncPoolWorksInTheChild) {
  AsyncPool Pool(1);
  std::atomic<bool> Started{false}, Release{false};
  bool QueuedRan = false;
  auto QueuedDropped = std::make_shared<bool>(false);
  struct Marker {
    std::shared_ptr<bool> Dropped;
    ~Marker() { *Dropped = true; }
  };
  Pool.submit([&] {
    Started = true;
    spinUntil(Release);
  });
  spinUntil(Started);
  auto M = std::make_shared<Marker>(Marker{QueuedDropped});
  Pool.submit([&QueuedRan, M] { QueuedRan = true; });
  M.reset();
  int R = inChild([&] {
    if (!*QueuedDropped)
      return failWith(1, "the parent's queued task was kept");
    std::atomic<int> Ran{0};
    for (int I = 0; I < 8; ++I)
      Pool.submit([&] { ++Ran; });
    Pool.wait();
    if (QueuedRan)
      return failWith(2, "the parent's queued task ran in the child");
    return Ran == 8 ? 0 : failWith(3, "the child's tasks did not all run");
  });
  EXPECT_EQ(R, 0);
  Release = true;
  Pool.wait();
  EXPECT_TRUE(QueuedRan);
}

// The Compiler: asynchronous compiles in the child of a process whose
// compiler had started its threads (before, they waited for threads the
// child does not have, forever).
TEST(ForkSafetyTest, CompileAsyncInTheChild) {
  CompilerOptions CO;
  CO.UseDiskCache = false;
  CO.UseRemoteCache = false;
  CO.AsyncThreads = 2;
  auto C = Compiler::create(CO);
  ASSERT_TRUE(succeeded(C));
  for (int I = 0; I < 4; ++I) {
    auto F = (*C)->compileAsync("kernel k" + std::to_string(I) + "(out: ptr<i32>) { out[0] = 1; }",
                                "parent.kir");
    ASSERT_TRUE(succeeded(F.get()));
  }
  int R = inChild([&] {
    std::vector<std::future<llvm::Expected<CompiledModuleRef>>> Fs;
    for (int I = 0; I < 4; ++I)
      Fs.push_back((*C)->compileAsync(
          "kernel child" + std::to_string(I) + "(out: ptr<i32>) { out[0] = 2; }", "child.kir"));
    for (auto &F : Fs) {
      auto M = F.get();
      if (!M)
        return failWith(1, llvm::toString(M.takeError()));
    }
    return 0;
  });
  EXPECT_EQ(R, 0);
  EXPECT_TRUE(succeeded((*C)->compileAsync("kernel after(out: ptr<i32>) { }", "p.kir").get()));
}

// The host runtime's worker pool: the child starts its own threads on its
// first launch (before, it counted the parent's), and its launches are
// right; the parent's pool is untouched.
TEST(ForkSafetyTest, TheHostRuntimeRunsInTheChild) {
  Artifact A = compileForTest(createHostTarget(),
                              "kernel count(hits: ptr<u64>) {\n"
                              "  atomic_add(&hits[0], 1u64);\n"
                              "}\n",
                              "count.kir");
  HostRuntimeOptions O;
  O.NumThreads = 4;
  LoadedHost L = loadHost(A, O);
  ASSERT_TRUE(L.M);
  uint64_t Hits = 0;
  KernelArg Args[] = {KernelArg::pointer(&Hits)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "count", config1D(4096, 4), Args)));
  ASSERT_EQ(Hits, 4096u * 4);
  int R = inChild([&] {
    if (threadCount() != 1)
      return failWith(1, "the child has " + std::to_string(threadCount()) + " threads");
    for (int Round = 0; Round < 3; ++Round) {
      Hits = 0;
      if (llvm::Error E = L.RT->launch(*L.M, "count", config1D(4096, 4), Args))
        return failWith(2, llvm::toString(std::move(E)));
      if (Hits != 4096u * 4)
        return failWith(3, "wrong count " + std::to_string(Hits));
    }
    // The pool's 3 threads and this one.
    if (threadCount() != 4)
      return failWith(4, "the pool has " + std::to_string(threadCount() - 1) + " threads");
    L.M.reset();
    L.RT.reset(); // joins the child's threads
    return threadCount() == 1 ? 0 : failWith(5, "threads left after the runtime");
  });
  EXPECT_EQ(R, 0);
  Hits = 0;
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "count", config1D(4096, 4), Args)));
  EXPECT_EQ(Hits, 4096u * 4);
}

// A key in flight in the parent (its leader a thread the child does not
// have): the child's own request for it leads, instead of waiting for a
// leader that will never finish.
TEST(ForkSafetyTest, AKeyInFlightIsTheChildsToProduce) {
  TieredCache C(TieredCacheOptions{CacheTiers{}, 0});
  CacheKey K = testKey("fork", 1);
  const ArtifactMatch Want{TargetKind::Host, "x86-64"};
  auto Make = [](const char *Payload) {
    Artifact A;
    A.Kind = TargetKind::Host;
    A.Arch = "x86-64";
    A.Payload = Payload;
    return A;
  };
  std::atomic<bool> Producing{false}, Release{false};
  std::thread Leader([&] {
    TieredRequestInfo Info;
    auto R = C.get(
        K, Want,
        [&]() -> llvm::Expected<Artifact> {
          Producing = true;
          spinUntil(Release);
          return Make("parent");
        },
        Info);
    EXPECT_TRUE(succeeded(R));
  });
  spinUntil(Producing);
  int R = inChild([&] {
    TieredRequestInfo Info;
    auto A = C.get(K, Want, [&]() -> llvm::Expected<Artifact> { return Make("child"); }, Info);
    if (!A)
      return failWith(1, llvm::toString(A.takeError()));
    return (*A)->Art.Payload == "child" ? 0 : failWith(2, "not the child's artifact");
  });
  Release = true;
  Leader.join();
  EXPECT_EQ(R, 0);
}

// A key's file lock held in the parent: the child's copy of its descriptor
// is closed at the fork, so the lock goes when the parent releases it
// (before, the child kept it locked until it exited), and the child's
// KeyLock releases nothing of the parent's.
TEST(ForkSafetyTest, TheChildDoesNotKeepTheParentsFileLocks) {
  TempDir Dir;
  DiskCacheOptions DO;
  DO.Dir = Dir.path();
  DiskCache Disk(DO);
  CacheKey K = testKey("fork", 2);
  DiskCache::KeyLock Lock = Disk.lockKey(K);
  ASSERT_TRUE(Lock.held());
  std::string Path = Dir.file("gridjit-" + K.hex() + ".lock");
  int Probe = ::open(Path.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(Probe, 0);
  int Ready[2], Done[2];
  ASSERT_EQ(pipe(Ready), 0);
  ASSERT_EQ(pipe(Done), 0);
  std::fflush(stdout);
  pid_t Pid = fork();
  if (Pid == 0) {
    alarm(Deadline);
    Lock.release();
    struct stat St;
    int R = ::stat(Path.c_str(), &St) == 0 ? 0 : 1; // the parent's lock file stays
    char C = char(R);
    (void)!write(Ready[1], &C, 1);
    (void)!read(Done[0], &C, 1); // alive while the parent looks
    _exit(R);
  }
  ASSERT_GT(Pid, 0);
  char C = 1;
  ASSERT_EQ(read(Ready[0], &C, 1), 1);
  EXPECT_EQ(C, 0) << "the child's release removed the parent's lock file";
  Lock.release();
  EXPECT_EQ(::flock(Probe, LOCK_EX | LOCK_NB), 0) << "the child still holds the lock";
  ASSERT_EQ(write(Done[1], &C, 1), 1);
  int Status = 0;
  waitpid(Pid, &Status, 0);
  EXPECT_TRUE(WIFEXITED(Status) && WEXITSTATUS(Status) == 0);
  for (int FD : {Probe, Ready[0], Ready[1], Done[0], Done[1]})
    ::close(FD);
}

// The remote cache's connections: the child does not use the parent's
// pooled socket (its commands would interleave with the parent's on it),
// it connects anew; the parent's connection goes on.
TEST(ForkSafetyTest, TheChildMakesItsOwnRedisConnections) {
  REQUIRE_REDIS();
  RedisServer S;
  auto U = parseRemoteCacheURL(S.url());
  ASSERT_TRUE(succeeded(U));
  redis::ClientOptions O;
  O.URL = *U;
  O.ConnectTimeout = 5s;
  O.OperationTimeout = 10s;
  redis::RedisClient Client(O);
  auto Id = [&] {
    redis::CommandResult R = Client.run({"CLIENT", "ID"});
    return R.Status == RemoteStatus::OK && R.Reply && R.Reply->Type == redis::Reply::Integer
               ? R.Reply->Int
               : -1;
  };
  long long Parent = Id();
  ASSERT_GT(Parent, 0);
  ASSERT_EQ(Client.idleConnections(), 1u);
  int R = inChild([&] {
    if (Client.idleConnections() != 0)
      return failWith(1, "the parent's connection is still pooled");
    long long Child = Id();
    if (Child <= 0 || Child == Parent)
      return failWith(2, "the child's command went over the parent's connection");
    return Client.run({"SET", "fork", "child"}).Status == RemoteStatus::OK ? 0 : 3;
  });
  EXPECT_EQ(R, 0);
  EXPECT_EQ(Id(), Parent);
  redis::CommandResult Get = Client.run({"GET", "fork"});
  ASSERT_EQ(Get.Status, RemoteStatus::OK) << Get.Why;
  ASSERT_TRUE(Get.Reply && Get.Reply->Type == redis::Reply::String);
  EXPECT_EQ(Get.Reply->Str, "child");
}

// CUDA does not survive fork(): in the child, a runtime of the parent's
// refuses every call with an error that says so, calling nothing of the
// driver (its buffers' frees included), a new runtime cannot start, and
// destroying them does not hang. The parent goes on.
TEST(ForkSafetyTest, CudaIsRefusedInTheChild) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  CudaRuntimeOptions O;
  O.Driver = fake();
  O.UseCubinCache = false;
  auto RT = CudaRuntime::create(O);
  ASSERT_TRUE(succeeded(RT));
  auto B = (*RT)->allocate(64);
  ASSERT_TRUE(succeeded(B));
  auto LiveAllocations = fakeHook<int (*)()>("gridjitFakeCudaLiveAllocations");
  ASSERT_TRUE(LiveAllocations);
  int Live = LiveAllocations();
  int R = inChild([&] {
    auto More = (*RT)->allocate(64);
    if (More)
      return failWith(1, "a buffer was allocated");
    std::string Why = llvm::toString(More.takeError());
    if (Why.find("CUDA cannot be used in this process: it is a child of fork() of the process "
                 "that initialised CUDA") != 0)
      return failWith(2, Why);
    llvm::Error Sync = (*RT)->synchronize();
    ErrorKind Kind = peekErrorKind(Sync);
    llvm::consumeError(std::move(Sync));
    if (Kind != ErrorKind::NoDevice)
      return failWith(3, "synchronize: kind " + std::string(getErrorKindName(Kind)));
    auto New = CudaRuntime::create(O);
    if (New)
      return failWith(4, "a new CUDA runtime started");
    Why = llvm::toString(New.takeError());
    if (Why.find("no CUDA device: CUDA was initialised before this process was forked") != 0)
      return failWith(5, Why);
    if (llvm::Error E = (*RT)->free(*B); !E)
      return failWith(6, "a buffer was freed");
    else
      llvm::consumeError(std::move(E));
    *B = DeviceBuffer();
    RT->reset();
    return LiveAllocations() == Live ? 0 : failWith(7, "the child called the driver");
  });
  EXPECT_EQ(R, 0);
  EXPECT_TRUE(succeeded((*RT)->synchronize()));
  EXPECT_TRUE(succeeded((*RT)->free(*B)));
}

} // namespace
