//===- CAPITest.cpp - The C API against the C++ API it wraps ---------------===//
//
// Part of gridjit. What the C tests (test/CAPI/capi-test.c) cannot check
// from C alone: a compile job that is deterministically still running (its
// key's disk-cache lock held by the test), many threads waiting on one job,
// the last error being per thread, the C API's launch agreeing with a
// direct C++ launch, and the C API printing nothing where the C++ API would
// warn (it keeps the warning for gj_compiler_warning).
//
//===----------------------------------------------------------------------===//

#include "Cache/CacheTestUtil.h"
#include "TestSupport.h"

#include "gridjit-c/gridjit.h"
#include "gridjit/Cache/DiskCache.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/Runtime.h"

#include "llvm/Support/FileSystem.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using ::testing::HasSubstr;
using ::testing::StartsWith;

namespace {

/// A compiler of the host target with the disk cache in \p Dir (none when
/// empty).
gj_compiler makeCompiler(const std::string &Dir = {}, uint32_t Threads = 0) {
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.use_disk_cache = !Dir.empty();
  O.cache_dir = Dir.empty() ? nullptr : Dir.c_str();
  O.threads = Threads;
  gj_compiler C = nullptr;
  EXPECT_EQ(gj_compiler_create(&O, &C), GJ_OK) << gj_last_error();
  return C;
}

gj_arg scalarI32(int32_t V) {
  gj_arg A{};
  A.kind = GJ_ARG_SCALAR;
  A.type = GJ_I32;
  A.value.i = V;
  return A;
}
gj_arg scalarF32(float V) {
  gj_arg A{};
  A.kind = GJ_ARG_SCALAR;
  A.type = GJ_F32;
  A.value.f32 = V;
  return A;
}
gj_arg hostPointer(void *P) {
  gj_arg A{};
  A.kind = GJ_ARG_HOST_POINTER;
  A.type = GJ_F32;
  A.value.pointer = P;
  return A;
}

TEST(CAPITest, PollIsNotReadyWhileTheCompileWaitsForItsKeysLock) {
  TempDir Dir;
  // The key the C API's compiler will compute: the same target and options.
  CompilerOptions CO;
  CO.UseDiskCache = false;
  auto Cxx = Compiler::create(std::move(CO));
  ASSERT_TRUE(succeeded(Cxx));
  auto Key = (*Cxx)->computeKey(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(Key));

  // Holding the key's lock (as another process compiling it would) keeps
  // the asynchronous compile waiting: poll must say NOT_READY, every time.
  DiskCacheOptions DO;
  DO.Dir = Dir.path();
  DiskCache Disk(DO);
  DiskCache::KeyLock Lock = Disk.lockKey(*Key);
  ASSERT_TRUE(Lock.held());

  gj_compiler C = makeCompiler(Dir.path(), 1);
  gj_compile_job J = nullptr;
  ASSERT_EQ(gj_compile_async(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &J),
            GJ_OK);
  for (int I = 0; I < 100; ++I) {
    ASSERT_EQ(gj_compile_job_poll(J), GJ_ERROR_NOT_READY);
    EXPECT_STREQ(gj_last_error(), "gj_compile_job_poll: the compile has not finished yet");
  }
  Lock.release();
  gj_module M = nullptr;
  ASSERT_EQ(gj_compile_job_wait(J, &M), GJ_OK) << gj_last_error();
  EXPECT_EQ(gj_compile_job_poll(J), GJ_OK);
  EXPECT_EQ(gj_module_kernel_count(M), 1u);
  gj_module_release(M);
  gj_compile_job_destroy(J);
  gj_compiler_destroy(C);
}

TEST(CAPITest, NoLockIsHeldAcrossACompile) {
  // One thread's gj_compile waits (its key's disk-cache lock is held, as
  // by another process compiling it); meanwhile this thread compiles and
  // launches through the same compiler and polls a job. A lock of the C
  // layer held across the first compile would block all of it.
  TempDir Dir;
  CompilerOptions CO;
  CO.UseDiskCache = false;
  auto Cxx = Compiler::create(std::move(CO));
  ASSERT_TRUE(succeeded(Cxx));
  auto Key = (*Cxx)->computeKey(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(Key));
  DiskCacheOptions DO;
  DO.Dir = Dir.path();
  DiskCache Disk(DO);
  DiskCache::KeyLock Lock = Disk.lockKey(*Key);
  ASSERT_TRUE(Lock.held());

  gj_compiler C = makeCompiler(Dir.path(), 1);
  std::atomic<bool> BlockedDone{false};
  gj_status BlockedStatus = GJ_ERROR_FAILED;
  gj_module Blocked = nullptr;
  std::thread T([&] {
    BlockedStatus =
        gj_compile(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &Blocked);
    BlockedDone = true;
  });
  gj_compile_job J = nullptr;
  ASSERT_EQ(gj_compile_async(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &J),
            GJ_OK);

  const char *Other = "kernel other(out: ptr<i32>) { out[thread_idx.x] = 5; }\n";
  gj_module M = nullptr;
  ASSERT_EQ(gj_compile(C, Other, std::strlen(Other), "other.kir", nullptr, &M), GJ_OK)
      << gj_last_error();
  gj_runtime R = nullptr;
  ASSERT_EQ(gj_runtime_create(nullptr, &R), GJ_OK);
  gj_loaded_module LM = nullptr;
  ASSERT_EQ(gj_runtime_load(R, M, &LM), GJ_OK);
  int32_t Out[4] = {0, 0, 0, 0};
  gj_arg A{};
  A.kind = GJ_ARG_HOST_POINTER;
  A.type = GJ_I32;
  A.value.pointer = Out;
  gj_launch_config LC;
  gj_launch_config_init(&LC, sizeof LC);
  LC.block[0] = 4;
  ASSERT_EQ(gj_launch(LM, "other", &LC, &A, 1, sizeof(gj_arg)), GJ_OK) << gj_last_error();
  EXPECT_EQ(Out[3], 5);
  EXPECT_EQ(gj_compile_job_poll(J), GJ_ERROR_NOT_READY);
  // All of that happened while the first compile still waited.
  EXPECT_FALSE(BlockedDone.load());

  Lock.release();
  T.join();
  EXPECT_EQ(BlockedStatus, GJ_OK);
  gj_module FromJob = nullptr;
  EXPECT_EQ(gj_compile_job_wait(J, &FromJob), GJ_OK);
  gj_module_release(FromJob);
  gj_module_release(Blocked);
  gj_compile_job_destroy(J);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
}

TEST(CAPITest, ManyThreadsWaitOnOneJob) {
  gj_compiler C = makeCompiler();
  gj_compile_job J = nullptr;
  ASSERT_EQ(gj_compile_async(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &J),
            GJ_OK);
  std::vector<gj_module> Modules(8, nullptr);
  std::vector<std::thread> Threads;
  for (size_t I = 0; I < Modules.size(); ++I)
    Threads.emplace_back([&, I] { EXPECT_EQ(gj_compile_job_wait(J, &Modules[I]), GJ_OK); });
  for (std::thread &T : Threads)
    T.join();
  for (gj_module M : Modules) {
    ASSERT_NE(M, nullptr);
    const char *Data = nullptr, *First = nullptr;
    size_t Size = 0, FirstSize = 0;
    ASSERT_EQ(gj_module_payload(M, &Data, &Size), GJ_OK);
    ASSERT_EQ(gj_module_payload(Modules[0], &First, &FirstSize), GJ_OK);
    // One compile, shared: every reference names the same payload.
    EXPECT_EQ(Data, First);
    EXPECT_EQ(Size, FirstSize);
  }
  for (gj_module M : Modules)
    gj_module_release(M);
  gj_compile_job_destroy(J);
  gj_compiler_destroy(C);
}

TEST(CAPITest, TheLastErrorBelongsToTheCallingThread) {
  gj_compiler C = makeCompiler();
  gj_module M = nullptr;
  EXPECT_EQ(gj_compile(C, "kernel k( {", 11, "mine.kir", nullptr, &M), GJ_ERROR_COMPILE);
  std::string Mine = gj_last_error();
  EXPECT_THAT(Mine, StartsWith("mine.kir:1:"));
  std::thread Other([&] {
    // A fresh thread has no error, and its failures stay its own.
    EXPECT_STREQ(gj_last_error(), "");
    gj_module N = nullptr;
    EXPECT_EQ(gj_compile(C, "kernel", 6, "theirs.kir", nullptr, &N), GJ_ERROR_COMPILE);
    EXPECT_THAT(gj_last_error(), StartsWith("theirs.kir:1:"));
  });
  Other.join();
  EXPECT_EQ(Mine, gj_last_error());
  // A successful call leaves the last failure's message as it was.
  EXPECT_EQ(gj_compile(C, SaxpySource, std::strlen(SaxpySource), nullptr, nullptr, &M), GJ_OK);
  EXPECT_EQ(Mine, gj_last_error());
  gj_module_release(M);
  gj_compiler_destroy(C);
}

TEST(CAPITest, LaunchAgreesWithTheCxxRuntime) {
  constexpr int N = 777;
  std::vector<float> X(N), ViaC(N), ViaCxx(N);
  for (int I = 0; I < N; ++I) {
    X[I] = 0.25f * float(I);
    ViaC[I] = ViaCxx[I] = float(N - I);
  }
  // Through the C API.
  gj_compiler C = makeCompiler();
  gj_module M = nullptr;
  ASSERT_EQ(gj_compile(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &M), GJ_OK);
  gj_runtime R = nullptr;
  ASSERT_EQ(gj_runtime_create(nullptr, &R), GJ_OK);
  gj_loaded_module LM = nullptr;
  ASSERT_EQ(gj_runtime_load(R, M, &LM), GJ_OK);
  gj_launch_config LC;
  gj_launch_config_init(&LC, sizeof LC);
  LC.grid[0] = (N + 63) / 64;
  LC.block[0] = 64;
  gj_arg Args[] = {scalarI32(N), scalarF32(1.5f), hostPointer(X.data()), hostPointer(ViaC.data())};
  ASSERT_EQ(gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)), GJ_OK) << gj_last_error();

  // Directly through the C++ API.
  CompilerOptions CO;
  CO.UseDiskCache = false;
  auto Cxx = Compiler::create(std::move(CO));
  ASSERT_TRUE(succeeded(Cxx));
  auto CM = (*Cxx)->compile(SaxpySource, "saxpy.kir");
  ASSERT_TRUE(succeeded(CM));
  auto RT = createRuntime(TargetKind::Host);
  ASSERT_TRUE(succeeded(RT));
  auto L = (*RT)->load((*CM)->Art);
  ASSERT_TRUE(succeeded(L));
  LaunchConfig Config;
  Config.Grid.X = (N + 63) / 64;
  Config.Block.X = 64;
  ASSERT_TRUE(
      succeeded((*RT)->launch(**L, "saxpy", Config,
                              {KernelArg::i32(N), KernelArg::f32(1.5f),
                               KernelArg::pointer(X.data()), KernelArg::pointer(ViaCxx.data())})));
  EXPECT_EQ(ViaC, ViaCxx);
  EXPECT_EQ(ViaC[10], 1.5f * 2.5f + float(N - 10));

  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
}

TEST(CAPITest, AnUnusableCacheDirectoryIsNotPrinted) {
  // A directory below a regular file cannot be made, even by root.
  TempDir Dir;
  std::string File = Dir.file("not-a-dir");
  {
    std::error_code EC;
    llvm::raw_fd_ostream(File, EC) << "x";
    ASSERT_FALSE(EC);
  }
  std::string CacheDir = File + "/cache";
  ::testing::internal::CaptureStderr();
  ::testing::internal::CaptureStdout();
  gj_compiler C = makeCompiler(CacheDir);
  gj_module M = nullptr;
  gj_status S = gj_compile(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &M);
  std::string Out = ::testing::internal::GetCapturedStdout();
  std::string Err = ::testing::internal::GetCapturedStderr();
  // The compile works (memory cache only) and nothing is printed: the
  // warning is the caller's to read.
  EXPECT_EQ(S, GJ_OK) << gj_last_error();
  EXPECT_EQ(Out, "");
  EXPECT_EQ(Err, "");
  ASSERT_EQ(gj_compiler_warning_count(C), 1u);
  EXPECT_THAT(gj_compiler_warning(C, 0),
              StartsWith("cache directory '" + CacheDir + "' is not usable"));
  gj_module_release(M);
  gj_compiler_destroy(C);
}

TEST(CAPITest, ThreadCountsAreBounded) {
  // The same bound as the library's (limits::MaxThreads): an invalid
  // argument, not an abort in pthread_create.
  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.threads = 100000;
  gj_runtime R = nullptr;
  EXPECT_EQ(gj_runtime_create(&RO, &R), GJ_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(gj_last_error(), "gj_runtime_create: threads 100000 is more than the limit of 1024");
  EXPECT_EQ(R, nullptr);
  gj_compiler_options O;
  gj_compiler_options_init(&O, sizeof O);
  O.threads = 100000;
  gj_compiler C = nullptr;
  EXPECT_EQ(gj_compiler_create(&O, &C), GJ_ERROR_INVALID_ARGUMENT);
  EXPECT_STREQ(gj_last_error(),
               "gj_compiler_create: threads 100000 is more than the limit of 1024");
  EXPECT_EQ(C, nullptr);
}

TEST(CAPITest, ConcurrentLaunchesOfOneLoadedModule) {
  gj_compiler C = makeCompiler();
  gj_module M = nullptr;
  ASSERT_EQ(gj_compile(C, SaxpySource, std::strlen(SaxpySource), "saxpy.kir", nullptr, &M), GJ_OK);
  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.threads = 2;
  gj_runtime R = nullptr;
  ASSERT_EQ(gj_runtime_create(&RO, &R), GJ_OK);
  gj_loaded_module LM = nullptr;
  ASSERT_EQ(gj_runtime_load(R, M, &LM), GJ_OK);
  std::atomic<int> Wrong{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      std::vector<float> X(300, 1.0f), Y(300, float(T));
      gj_launch_config LC;
      gj_launch_config_init(&LC, sizeof LC);
      LC.grid[0] = 5;
      LC.block[0] = 64;
      for (int Round = 0; Round < 20; ++Round) {
        gj_arg Args[] = {scalarI32(300), scalarF32(1.0f), hostPointer(X.data()),
                         hostPointer(Y.data())};
        if (gj_launch(LM, "saxpy", &LC, Args, 4, sizeof(gj_arg)) != GJ_OK)
          ++Wrong;
      }
      for (float V : Y)
        Wrong += V != float(T + 20);
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Wrong.load(), 0);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
}

} // namespace
