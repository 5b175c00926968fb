//===- CudaRuntimeTest.cpp - The CUDA runtime against the fake driver -----===//
//
// Part of gridjit. CudaRuntime (lib/Runtime/Cuda/CudaRuntime.h) on the test
// suite's fake driver (unittests/FakeCuda/FakeCuda.cpp): creation with 0,
// 1 and 2 devices and a bad ordinal, loading (and the JIT error log of a
// failed load), every launch check with its exact message, the dynamic
// shared memory opt-in, cooperative launch selection, arguments, memory,
// and 8 threads launching at once. No kernel code runs on the fake.
//
//===----------------------------------------------------------------------===//

#include "Cache/RedisTestUtil.h"
#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "Runtime/Cuda/CudaDriver.h"
#include "Runtime/Cuda/CudaRuntime.h"

#include "gridjit-c/gridjit.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <array>
#include <atomic>
#include <cstdlib>
#include <dlfcn.h>
#include <functional>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using ::testing::HasSubstr;

namespace {

int launches(bool Cooperative) {
  return fakeHook<int (*)(int)>("gridjitFakeCudaLaunches")(Cooperative);
}
int optIns() { return fakeHook<int (*)()>("gridjitFakeCudaFuncSetAttributes")(); }
int liveAllocations() { return fakeHook<int (*)()>("gridjitFakeCudaLiveAllocations")(); }
int liveEvents() { return fakeHook<int (*)()>("gridjitFakeCudaLiveEvents")(); }

const std::string Source = std::string(SaxpySource) + R"(
kernel coop(out: ptr<i32>) {
  out[block_idx.x] = 1;
  grid_sync();
  out[0] = 2;
}

// With GRIDJIT_FAKE_CUDA_ECHO=1 the fake writes a launch's parameters
// after the first into the buffer the first points to: what these two
// kernels do on a GPU.
kernel echo(out: ptr<i32>, a: i32, b: i32) {
  out[0] = a;
  out[1] = b;
}

kernel echo_coop(out: ptr<i32>, a: i32, b: i32) {
  out[0] = a;
  grid_sync();
  out[1] = b;
}

kernel dyn(out: ptr<i32>) {
  shared s: [i32];
  s[thread_idx.x] = thread_idx.x;
  sync_threads();
  out[thread_idx.x] = s[block_dim.x - 1 - thread_idx.x];
}

// Set by setConstant (cuModuleGetGlobal, cuMemcpyHtoD).
constant C: [i32; 4];
)";

/// Source compiled for \p Arch.
Artifact ptx(const char *Arch = "sm_80") {
  NVPTXTargetOptions TO;
  TO.Arch = Arch;
  return compileForTest(createNVPTXTarget(TO), Source, "cuda-runtime.kir");
}

/// A runtime without the cubin cache (CubinCache tests it).
std::unique_ptr<CudaRuntime> runtime(unsigned Ordinal = 0) {
  CudaRuntimeOptions O;
  O.Device = Ordinal;
  O.Driver = fake();
  O.UseCubinCache = false;
  auto RT = CudaRuntime::create(O);
  if (!RT) {
    ADD_FAILURE() << errorText(RT.takeError());
    return nullptr;
  }
  return std::move(*RT);
}

LaunchConfig config(uint32_t Grid, uint32_t Block, uint32_t Shared = 0) {
  LaunchConfig C;
  C.Grid.X = Grid;
  C.Block.X = Block;
  C.DynamicSharedBytes = Shared;
  return C;
}

/// A runtime on the fake's default device with Source loaded.
struct Loaded {
  std::unique_ptr<CudaRuntime> RT;
  std::unique_ptr<LoadedModule> M;
  DeviceBuffer Out;
  explicit Loaded(const char *Attrs = nullptr) {
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
    ScopedEnv FuncAttrs("GRIDJIT_FAKE_CUDA_FUNC_ATTRS", Attrs);
    RT = runtime();
    if (!RT)
      return;
    auto L = RT->load(ptx());
    if (!L) {
      ADD_FAILURE() << errorText(L.takeError());
      return;
    }
    M = std::move(*L);
    auto B = RT->allocate(4096);
    if (B)
      Out = std::move(*B);
    else
      ADD_FAILURE() << errorText(B.takeError());
  }
  llvm::Error launch(llvm::StringRef K, const LaunchConfig &C) {
    KernelArg Args[] = {KernelArg::buffer(Out, ScalarKind::I32)};
    return RT->launch(*M, K, C, Args);
  }
};

const char *Sm80 = "device 0 (gridjit fake GPU 0, sm_80)";

TEST(CudaRuntimeTest, CreateWithDevices) {
  {
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "0");
    auto RT = CudaRuntime::create(0, fake());
    ASSERT_TRUE(failed(RT));
    EXPECT_EQ(errorText(RT.takeError()), "no CUDA device: the driver reports none");
  }
  {
    CudaDriverOptions None;
    None.LibraryPath = "/nonexistent/libcuda.so.1";
    auto RT = CudaRuntime::create(0, None);
    ASSERT_TRUE(failed(RT));
    EXPECT_EQ(errorText(RT.takeError()), "no CUDA device: /nonexistent/libcuda.so.1 not found");
  }
  {
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
    auto RT = runtime();
    ASSERT_TRUE(RT);
    EXPECT_EQ(RT->getTargetKind(), TargetKind::NVPTX);
    EXPECT_EQ(RT->getDeviceInfo().Name, "gridjit fake GPU 0");
    auto Bad = CudaRuntime::create(1, fake());
    ASSERT_TRUE(failed(Bad));
    EXPECT_EQ(errorText(Bad.takeError()),
              "CUDA device 1 does not exist: this machine has 1 CUDA device (ordinal 0)");
  }
  {
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "sm_80:108:40GiB,sm_90:132:80GiB");
    auto RT = runtime(1);
    ASSERT_TRUE(RT);
    EXPECT_EQ(RT->getDeviceInfo().getArch(), "sm_90");
    auto Bad = CudaRuntime::create(2, fake());
    ASSERT_TRUE(failed(Bad));
    EXPECT_EQ(errorText(Bad.takeError()),
              "CUDA device 2 does not exist: this machine has 2 CUDA devices (ordinals 0 to 1)");
  }
  // createRuntime finds the driver through $GRIDJIT_CUDA_DRIVER.
  {
    ScopedEnv Driver("GRIDJIT_CUDA_DRIVER", GRIDJIT_FAKE_CUDA);
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "2");
    RuntimeOptions O;
    O.Device = 1;
    auto RT = createRuntime(TargetKind::NVPTX, O);
    ASSERT_TRUE(succeeded(RT));
    EXPECT_EQ((*RT)->getTargetKind(), TargetKind::NVPTX);
  }
}

TEST(CudaRuntimeTest, Load) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  auto RT = runtime();
  ASSERT_TRUE(RT);
  auto M = RT->load(ptx());
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ((*M)->getKernels().size(), 5u);

  Artifact Host;
  Host.Kind = TargetKind::Host;
  auto Wrong = RT->load(Host);
  ASSERT_TRUE(failed(Wrong));
  EXPECT_EQ(errorText(Wrong.takeError()),
            "cannot load an artifact for target 'host' into the CUDA runtime (compile it with "
            "the nvptx target)");

  auto Newer = RT->load(ptx("sm_90"));
  ASSERT_TRUE(failed(Newer));
  EXPECT_EQ(errorText(Newer.takeError()),
            std::string("cannot load PTX compiled for sm_90 on ") + Sm80 +
                ": the device's compute capability is older than the PTX's (compile for sm_80 "
                "or older)");

  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuModuleLoadDataEx:218");
  auto Bad = RT->load(ptx());
  ASSERT_TRUE(failed(Bad));
  EXPECT_EQ(errorText(Bad.takeError()),
            std::string("cannot load the PTX (sm_80) on ") + Sm80 +
                ": cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT "
                "compilation failed\nJIT error log:\nptxas fatal   : configured failure of "
                "cuModuleLoadDataEx (fake driver)");
}

/// The cubin cache: the first runtime compiles the PTX with the driver's
/// linker and stores the cubin; a second one (as a new process would)
/// loads it without compiling; another architecture is another entry; a
/// failing compile carries the JIT error log.
TEST(CudaRuntimeTest, CubinCache) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gridjit-cubin-cache", Dir));
  auto Compiles = fakeHook<int (*)()>("gridjitFakeCudaPtxCompiles");
  auto Make = [&](const char *Devices) {
    ScopedEnv Env("GRIDJIT_FAKE_CUDA_DEVICES", Devices);
    CudaRuntimeOptions O;
    O.Driver = fake();
    O.CacheDir = std::string(Dir);
    auto RT = CudaRuntime::create(O);
    EXPECT_TRUE(succeeded(RT));
    return RT ? std::move(*RT) : nullptr;
  };
  Artifact A = ptx();
  int Before = Compiles();
  {
    auto RT = Make("1");
    ASSERT_TRUE(RT);
    auto M = RT->load(A);
    ASSERT_TRUE(succeeded(M));
    EXPECT_EQ(Compiles(), Before + 1);
  }
  {
    auto RT = Make("1");
    ASSERT_TRUE(RT);
    auto M = RT->load(A);
    ASSERT_TRUE(succeeded(M));
    EXPECT_EQ(Compiles(), Before + 1); // the cubin, from the cache
    // A kernel of the cached cubin launches like any other.
    auto B = RT->allocate(64);
    ASSERT_TRUE(succeeded(B));
    KernelArg Args[] = {KernelArg::buffer(*B, ScalarKind::I32)};
    EXPECT_TRUE(succeeded(RT->launch(**M, "dyn", config(1, 16, 64), Args)));
  }
  {
    auto RT = Make("sm_86:84:24GiB");
    ASSERT_TRUE(RT);
    ASSERT_TRUE(succeeded(RT->load(A)));
    EXPECT_EQ(Compiles(), Before + 2); // another architecture, another cubin
  }
  {
    auto RT = Make("sm_90:132:80GiB");
    ASSERT_TRUE(RT);
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuLinkAddData:218");
    auto M = RT->load(A);
    ASSERT_TRUE(failed(M));
    EXPECT_EQ(errorText(M.takeError()),
              "cannot compile the PTX (sm_80) for device 0 (gridjit fake GPU 0, sm_90): "
              "cuLinkAddData failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation "
              "failed\nJIT error log:\nptxas fatal   : configured failure of cuLinkAddData "
              "(fake driver)");
  }
  llvm::sys::fs::remove_directories(Dir);
}

// Two "machines" (separate cache directories) with the same device and
// driver share one remote cache: the second loads the first's cubin from
// it, compiles no PTX, and keeps it on its own disk for the next process.
TEST(CudaRuntimeTest, CubinsSharedThroughTheRemoteCache) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir D1, D2;
  auto Compiles = fakeHook<int (*)()>("gridjitFakeCudaPtxCompiles");
  auto Make = [&](const std::string &Dir) {
    ScopedEnv Env("GRIDJIT_FAKE_CUDA_DEVICES", "1");
    CudaRuntimeOptions O;
    O.Driver = fake();
    O.CacheDir = Dir;
    // The runtime is given the remote tier (it reads no environment);
    // deadlines generous enough that a loaded machine never passes them.
    RemoteCacheOptions RO;
    RO.URL = S.url();
    RO.ConnectTimeout = std::chrono::seconds(5);
    RO.OperationTimeout = std::chrono::seconds(10);
    auto Remote = RemoteCache::create(RO);
    EXPECT_TRUE(succeeded(Remote));
    if (Remote)
      O.CubinTiers.Remote = std::move(*Remote);
    auto RT = CudaRuntime::create(O);
    EXPECT_TRUE(succeeded(RT));
    return RT ? std::move(*RT) : nullptr;
  };
  Artifact A = ptx();
  int Before = Compiles();
  {
    auto RT = Make(D1.path());
    ASSERT_TRUE(RT);
    ASSERT_TRUE(succeeded(RT->load(A)));
    EXPECT_EQ(Compiles(), Before + 1);
  }
  {
    auto RT = Make(D2.path());
    ASSERT_TRUE(RT);
    auto M = RT->load(A);
    ASSERT_TRUE(succeeded(M));
    EXPECT_EQ(Compiles(), Before + 1); // from the remote cache
    auto B = RT->allocate(64);
    ASSERT_TRUE(succeeded(B));
    KernelArg Args[] = {KernelArg::buffer(*B, ScalarKind::I32)};
    EXPECT_TRUE(succeeded(RT->launch(**M, "dyn", config(1, 16, 64), Args)));
  }
  S.kill(); // the next process finds the cubin on its own disk
  {
    auto RT = Make(D2.path());
    ASSERT_TRUE(RT);
    ASSERT_TRUE(succeeded(RT->load(A)));
    EXPECT_EQ(Compiles(), Before + 1);
  }
}

/// Gives the runtime the Compiler's tiers (what jit-run does): cubins and
/// modules share one disk cache object, so the directory has one pruning
/// policy, the Compiler's. Here that policy keeps nothing (a bound of one
/// byte, pruning at every store), so the cubin stored by the runtime's load
/// is pruned at once; a runtime with a disk tier of its own would keep it
/// under the default 512 MiB bound.
TEST(CudaRuntimeTest, CubinsGoToTheCompilersTiers) {
  TempDir Dir;
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  CompilerOptions CO;
  CO.Targets = {nvptxTarget()};
  CO.CacheDir = Dir.path();
  CO.DiskCacheMaxBytes = 1;
  CO.DiskPruneInterval = std::chrono::milliseconds(0);
  auto C = Compiler::create(std::move(CO));
  ASSERT_TRUE(succeeded(C));
  auto M = (*C)->compile(Source, "cuda-runtime.kir");
  ASSERT_TRUE(succeeded(M));
  CudaRuntimeOptions O;
  O.Driver = fake();
  O.CubinTiers = (*C)->getCacheTiers();
  auto RT = CudaRuntime::create(O);
  ASSERT_TRUE(succeeded(RT));
  uint64_t Pruned = (*C)->getStats().Disk.PrunedFiles;
  ASSERT_TRUE(succeeded((*RT)->load((*M)->Art)));
  DiskCacheStats S = (*C)->getStats().Disk;
  EXPECT_EQ(S.Stores, 2u); // the module's entry, then the cubin's
  EXPECT_GT(S.PrunedFiles, Pruned);
}

// The runtime reads no environment variable of the remote cache: with
// $GRIDJIT_REMOTE_CACHE naming a live server, a runtime given no remote
// tier stores nothing there. (jit-run and the C API read the variable and
// pass the tier: test/Cache/remote-cubins.test and the test below.)
TEST(CudaRuntimeTest, TheRuntimeReadsNoRemoteCacheVariable) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir Dir;
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Remote("GRIDJIT_REMOTE_CACHE", S.url().c_str());
  CudaRuntimeOptions O;
  O.Driver = fake();
  O.CacheDir = Dir.path();
  auto RT = CudaRuntime::create(O);
  ASSERT_TRUE(succeeded(RT));
  ASSERT_TRUE(succeeded((*RT)->load(ptx())));
  Reply Keys = S.cmd({"KEYS", "gridjit:*"});
  ASSERT_TRUE(Keys && Keys->type == REDIS_REPLY_ARRAY);
  EXPECT_EQ(Keys->elements, 0u);
}

// ... but the C API does, for the runtimes it makes (as for its
// compilers): the cubin reaches the server $GRIDJIT_REMOTE_CACHE names.
TEST(CudaRuntimeTest, TheCApiGivesTheRuntimeTheEnvironmentsRemoteCache) {
  REQUIRE_REDIS();
  RedisServer S;
  TempDir Dir;
  ScopedEnv Driver("GRIDJIT_CUDA_DRIVER", GRIDJIT_FAKE_CUDA);
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Remote("GRIDJIT_REMOTE_CACHE", S.url().c_str());
  gj_compiler_options CO;
  gj_compiler_options_init(&CO, sizeof CO);
  CO.targets = "nvptx";
  CO.use_disk_cache = 0;
  gj_compiler C = nullptr;
  ASSERT_EQ(gj_compiler_create(&CO, &C), GJ_OK) << gj_last_error();
  gj_module M = nullptr;
  ASSERT_EQ(gj_compile(C, Source.data(), Source.size(), "k.kir", nullptr, &M), GJ_OK)
      << gj_last_error();
  // The module went to the server through the compiler: only the cubin
  // below is the runtime's.
  Reply Before = S.cmd({"DBSIZE"});
  gj_runtime_options RO;
  gj_runtime_options_init(&RO, sizeof RO);
  RO.target = "cuda";
  RO.cache_dir = Dir.path().c_str();
  gj_runtime R = nullptr;
  ASSERT_EQ(gj_runtime_create(&RO, &R), GJ_OK) << gj_last_error();
  gj_loaded_module LM = nullptr;
  EXPECT_EQ(gj_runtime_load(R, M, &LM), GJ_OK) << gj_last_error();
  Reply After = S.cmd({"DBSIZE"});
  ASSERT_TRUE(Before && After);
  EXPECT_EQ(After->integer, Before->integer + 1);
  gj_loaded_module_destroy(LM);
  gj_runtime_destroy(R);
  gj_module_release(M);
  gj_compiler_destroy(C);
}

TEST(CudaRuntimeTest, BlockTooLargeForTheFunction) {
  Loaded L("max_threads:256,regs:128");
  ASSERT_TRUE(L.M);
  EXPECT_EQ(errorText(L.launch("coop", config(1, 512))),
            std::string("kernel 'coop' launched with grid (1, 1, 1) and block (512, 1, 1): a "
                        "block of 512 threads exceeds this kernel's limit of 256 threads per "
                        "block on ") +
                Sm80 +
                " (it uses 128 registers per thread); the largest valid block has 256 "
                "threads");
  EXPECT_TRUE(succeeded(L.launch("coop", config(1, 256))));
}

TEST(CudaRuntimeTest, SharedMemory) {
  Loaded L;
  ASSERT_TRUE(L.M);
  // sm_80: 166912 bytes per block with the opt-in.
  EXPECT_EQ(errorText(L.launch("dyn", config(1, 32, 200000))),
            std::string("kernel 'dyn' launched with grid (1, 1, 1) and block (32, 1, 1): 0 "
                        "bytes of static and 200000 bytes of dynamic shared memory exceed the "
                        "limit of 166912 bytes per block on ") +
                Sm80 + "; the largest valid dynamic shared memory for this kernel is 166912 bytes");
  // Within the default 48 KiB: no opt-in; above it: one, then none again.
  int Before = optIns();
  EXPECT_TRUE(succeeded(L.launch("dyn", config(1, 32, 4096))));
  EXPECT_EQ(optIns(), Before);
  EXPECT_TRUE(succeeded(L.launch("dyn", config(1, 32, 100000))));
  EXPECT_EQ(optIns(), Before + 1);
  EXPECT_TRUE(succeeded(L.launch("dyn", config(1, 32, 90000))));
  EXPECT_EQ(optIns(), Before + 1);
}

int maxDynamicShared(const char *Kernel) {
  return fakeHook<int (*)(const char *)>("gridjitFakeCudaMaxDynamicShared")(Kernel);
}

/// A launch that is refused leaves the device as it was: every check that
/// needs no device state (here the arguments) comes before the dynamic
/// shared memory opt-in; and a cooperative grid that is not resident at
/// once (which can be known only with the opt-in made) puts the function's
/// limit back. (The fake, as the driver, counts no resident block whose
/// dynamic shared memory is above the function's current limit, so the
/// opt-in cannot simply come after the residency check.)
TEST(CudaRuntimeTest, ARefusedLaunchChangesNoDeviceState) {
  Loaded L("occupancy:1");
  ASSERT_TRUE(L.M);
  int Before = optIns(), Limit = maxDynamicShared("dyn");
  KernelArg WrongType[] = {KernelArg::f32(1)};
  EXPECT_THAT(errorText(L.RT->launch(*L.M, "dyn", config(1, 32, 100000), WrongType)),
              HasSubstr("argument 1 ('out: ptr<i32>')"));
  int Host[32];
  KernelArg HostPointer[] = {KernelArg::pointer(Host)};
  EXPECT_THAT(errorText(L.RT->launch(*L.M, "dyn", config(1, 32, 100000), HostPointer)),
              HasSubstr("is a host pointer"));
  EXPECT_EQ(optIns(), Before);
  EXPECT_EQ(maxDynamicShared("dyn"), Limit);

  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv FuncAttrs("GRIDJIT_FAKE_CUDA_FUNC_ATTRS", "occupancy:1");
  NVPTXTargetOptions TO;
  TO.Arch = "sm_80";
  auto M = L.RT->load(compileForTest(createNVPTXTarget(TO), R"(
kernel dyn_coop(out: ptr<i32>) {
  shared s: [i32];
  s[thread_idx.x] = 1;
  grid_sync();
  out[block_idx.x] = s[0];
}
)",
                                     "dyn-coop.kir"));
  ASSERT_TRUE(succeeded(M));
  Limit = maxDynamicShared("dyn_coop");
  KernelArg Args[] = {KernelArg::buffer(L.Out, ScalarKind::I32)};
  // 1 block per SM x 108 SMs.
  EXPECT_THAT(errorText(L.RT->launch(**M, "dyn_coop", config(109, 32, 100000), Args)),
              HasSubstr("109 blocks exceed the 108 that fit on"));
  EXPECT_EQ(maxDynamicShared("dyn_coop"), Limit);
  Before = optIns();
  EXPECT_TRUE(succeeded(L.RT->launch(**M, "dyn_coop", config(108, 32, 100000), Args)));
  EXPECT_EQ(maxDynamicShared("dyn_coop"), 100000);
  EXPECT_EQ(optIns(), Before + 1);
  EXPECT_TRUE(succeeded(L.RT->launch(**M, "dyn_coop", config(108, 32, 90000), Args)));
  EXPECT_EQ(optIns(), Before + 1); // the limit only grows
}

TEST(CudaRuntimeTest, GridTooLarge) {
  Loaded L;
  ASSERT_TRUE(L.M);
  LaunchConfig C = config(1, 32);
  C.Grid.Y = 65536;
  EXPECT_EQ(errorText(L.launch("coop", C)),
            "kernel 'coop' launched with grid (1, 65536, 1) and block (32, 1, 1): grid dimensions "
            "are limited to (2147483647, 65535, 65535)");
}

// A GPU kernel cannot be stopped once queued: a timeout or a cancel token
// is refused before anything is launched, never ignored.
TEST(CudaRuntimeTest, TimeoutAndCancelAreRefused) {
  Loaded L;
  ASSERT_TRUE(L.M);
  int Plain = launches(false);
  KernelArg Args[] = {KernelArg::buffer(L.Out, ScalarKind::I32)};
  LaunchOptions LO;
  LO.TimeoutMilliseconds = 1000;
  llvm::Error E = L.RT->launch(*L.M, "dyn", config(1, 32, 128), Args, LO);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  EXPECT_EQ(errorText(std::move(E)), "kernel 'dyn': the nvptx runtime cannot stop a launch "
                                     "(LaunchOptions::TimeoutMilliseconds must be 0 there)");
  CancelToken Token;
  LO.TimeoutMilliseconds = 0;
  LO.Cancel = &Token;
  E = L.RT->launch(*L.M, "dyn", config(1, 32, 128), Args, LO);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
  EXPECT_EQ(errorText(std::move(E)), "kernel 'dyn': the nvptx runtime cannot stop a launch "
                                     "(LaunchOptions::Cancel must be null there)");
  EXPECT_EQ(launches(false), Plain);
}

TEST(CudaRuntimeTest, CooperativeLaunches) {
  Loaded L("occupancy:2");
  ASSERT_TRUE(L.M);
  // 2 blocks per SM x 108 SMs.
  EXPECT_EQ(errorText(L.launch("coop", config(217, 64))),
            std::string("kernel 'coop' launched with grid (217, 1, 1) and block (64, 1, 1): the "
                        "kernel calls grid_sync(), so its whole grid must be resident at once, "
                        "but 217 blocks exceed the 216 that fit on ") +
                Sm80 +
                " (2 blocks of 64 threads per SM x 108 SMs); the largest valid grid has "
                "216 blocks");
  int Coop = launches(true), Plain = launches(false);
  EXPECT_TRUE(succeeded(L.launch("coop", config(216, 64))));
  EXPECT_EQ(launches(true), Coop + 1);
  EXPECT_EQ(launches(false), Plain);
  EXPECT_TRUE(succeeded(L.launch("dyn", config(1, 32, 128))));
  EXPECT_EQ(launches(true), Coop + 1);
  EXPECT_EQ(launches(false), Plain + 1);
}

TEST(CudaRuntimeTest, DriverOutOfResourcesIsExplained) {
  Loaded L;
  ASSERT_TRUE(L.M);
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuLaunchKernel:701");
  EXPECT_EQ(errorText(L.launch("dyn", config(2, 64, 256))),
            std::string("kernel 'dyn' launched with grid (2, 1, 1) and block (64, 1, 1): the "
                        "driver refused the launch although it passed gridjit's checks (32 "
                        "registers per thread, at most 1024 threads per block, 0 + 256 bytes of "
                        "shared memory, on ") +
                Sm80 +
                "): cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many "
                "resources requested for launch");
}

TEST(CudaRuntimeTest, Arguments) {
  Loaded L;
  ASSERT_TRUE(L.M);
  auto X = L.RT->allocate(64);
  ASSERT_TRUE(succeeded(X));
  KernelArg Mismatch[] = {KernelArg::f32(1), KernelArg::f32(2),
                          KernelArg::buffer(*X, ScalarKind::F32), KernelArg::buffer(*X)};
  EXPECT_EQ(errorText(L.RT->launch(*L.M, "saxpy", config(1, 16), Mismatch)),
            "kernel 'saxpy': argument 1 ('n: i32') must be an i32, but an f32 was given");
  float Host[16] = {};
  KernelArg HostPtr[] = {KernelArg::i32(16), KernelArg::f32(2),
                         KernelArg::buffer(*X, ScalarKind::F32), KernelArg::pointer(Host)};
  EXPECT_EQ(errorText(L.RT->launch(*L.M, "saxpy", config(1, 16), HostPtr)),
            "kernel 'saxpy': argument 4 ('y: ptr<f32>') is a host pointer "
            "(KernelArg::pointer), which a GPU cannot use; pass a device buffer "
            "(KernelArg::buffer) or a device address (KernelArg::devicePointer)");
  KernelArg Good[] = {KernelArg::i32(16), KernelArg::f32(2), KernelArg::buffer(*X, ScalarKind::F32),
                      KernelArg::devicePointer(X->getAddress())};
  EXPECT_TRUE(succeeded(L.RT->launch(*L.M, "saxpy", config(1, 16), Good)));
  EXPECT_TRUE(succeeded(L.RT->synchronize()));
}

TEST(CudaRuntimeTest, MemoryRoundTrip) {
  Loaded L;
  ASSERT_TRUE(L.RT);
  std::vector<int> In(1000), Out(1000, -1);
  for (int I = 0; I < 1000; ++I)
    In[I] = I * 7;
  auto B = L.RT->allocate(In.size() * sizeof(int));
  ASSERT_TRUE(succeeded(B));
  EXPECT_TRUE(succeeded(L.RT->copyToDevice(*B, In.data(), 4000)));
  EXPECT_TRUE(succeeded(L.RT->copyFromDevice(Out.data(), *B, 4000)));
  EXPECT_EQ(In, Out);
  EXPECT_TRUE(succeeded(L.RT->free(*B)));
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuMemAlloc:2");
  EXPECT_EQ(errorText(L.RT->allocate(16).takeError()),
            "cuMemAlloc failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
}

/// The driver objects alive in the fake: allocations, events, modules,
/// link states and device 0's primary context references.
std::array<int, 5> liveDriverObjects() {
  return {liveAllocations(), liveEvents(), fakeHook<int (*)()>("gridjitFakeCudaLiveModules")(),
          fakeHook<int (*)()>("gridjitFakeCudaLiveLinks")(),
          fakeHook<int (*)(int)>("gridjitFakeCudaPrimaryCtxRefs")(0)};
}

/// A runtime with the cubin cache in a fresh directory (so a load links).
std::unique_ptr<CudaRuntime> cubinRuntime(const std::string &Dir) {
  CudaRuntimeOptions O;
  O.Driver = fake();
  O.CacheDir = Dir;
  auto RT = CudaRuntime::create(O);
  if (!RT) {
    ADD_FAILURE() << errorText(RT.takeError());
    return nullptr;
  }
  return std::move(*RT);
}

/// Every entry point the runtime calls, failing in turn on a path that
/// calls it (creation, load with and without the cubin cache, allocate,
/// free, copies, synchronize, plain, dynamic-shared and cooperative
/// launches): the error names the entry point and the driver's words,
/// whatever the runtime adds around it; the same call succeeds once the
/// failure clears; and when everything is destroyed no driver object
/// (allocation, event, module, link state, context reference) is left.
/// The cleanup calls whose failure cannot be reported (the destructors'
/// unload, release, event destroy; the link's destroy) and the error
/// queries are failed too: the operation still succeeds, nothing crashes.
/// Together the cases cover all 38 entry points (checked below).
TEST(CudaRuntimeTest, EveryEntryPointFailing) {
  using Op = std::function<llvm::Error(Loaded &)>;
  auto Load = [](Loaded &L) { return L.RT->load(ptx()).takeError(); };
  auto Copy = [](Loaded &L) {
    int X = 0;
    return L.RT->copyFromDevice(&X, L.Out, sizeof(X));
  };
  auto Create = [](Loaded &) -> llvm::Error {
    auto RT = CudaRuntime::create(0, fake());
    return RT ? llvm::Error::success() : RT.takeError();
  };
  auto LinkLoad = [](Loaded &) -> llvm::Error {
    TempDir Dir;
    auto RT = cubinRuntime(Dir.path());
    if (!RT)
      return llvm::createStringError("no runtime");
    return RT->load(ptx()).takeError();
  };
  auto Coop = [](Loaded &L) { return L.launch("coop", config(1, 32)); };
  // A thread where the device's context is not current yet: the runtime
  // makes it current (cuCtxSetCurrent).
  auto InFreshThread = [](Loaded &L) {
    std::optional<llvm::Error> E;
    std::thread([&] { E.emplace(L.RT->synchronize()); }).join();
    return std::move(*E);
  };
  const std::pair<const char *, Op> Cases[] = {
      {"cuInit", Create},
      {"cuDriverGetVersion", Create},
      {"cuDeviceGetCount", Create},
      {"cuDeviceGet", Create},
      {"cuDeviceGetName", Create},
      {"cuDeviceTotalMem", Create},
      {"cuDeviceGetAttribute", Create},
      {"cuDevicePrimaryCtxRetain", Create},
      {"cuCtxGetCurrent", Create},
      {"cuMemAlloc", [](Loaded &L) { return L.RT->allocate(16).takeError(); }},
      {"cuMemFree", [](Loaded &L) { return L.RT->free(L.Out); }},
      {"cuMemcpyHtoD",
       [](Loaded &L) {
         int X = 0;
         return L.RT->copyToDevice(L.Out, &X, sizeof(X));
       }},
      {"cuMemcpyDtoH", Copy},
      {"cuCtxSynchronize", Copy},
      {"cuCtxSynchronize", [](Loaded &L) { return L.RT->synchronize(); }},
      {"cuCtxGetCurrent", [](Loaded &L) { return L.RT->synchronize(); }},
      {"cuCtxSetCurrent", InFreshThread},
      {"cuModuleLoadDataEx", Load},
      {"cuModuleLoadDataEx", LinkLoad},
      {"cuModuleGetFunction", Load},
      {"cuModuleGetGlobal",
       [](Loaded &L) {
         int32_t V[4] = {1, 2, 3, 4};
         return L.RT->setConstant(*L.M, "C", V, sizeof(V));
       }},
      {"cuFuncGetAttribute", Load},
      {"cuLinkCreate", LinkLoad},
      {"cuLinkAddData", LinkLoad},
      {"cuLinkComplete", LinkLoad},
      {"cuFuncSetAttribute", [](Loaded &L) { return L.launch("dyn", config(1, 32, 100000)); }},
      {"cuLaunchKernel", [](Loaded &L) { return L.launch("dyn", config(1, 32, 64)); }},
      {"cuOccupancyMaxActiveBlocksPerMultiprocessor", Coop},
      {"cuLaunchCooperativeKernel", Coop},
      {"cuEventCreate", Coop},
      {"cuMemsetD32Async", Coop},
      {"cuEventRecord", Coop},
  };
  std::set<std::string> Covered;
  // A runtime kept alive throughout holds the device's primary context, so
  // the context is never destroyed between cases (which would free what a
  // case leaked and hide it).
  std::unique_ptr<CudaRuntime> Keeper;
  {
    ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
    Keeper = runtime();
  }
  ASSERT_TRUE(Keeper);
  const std::array<int, 5> Before = liveDriverObjects();
  for (const auto &[Name, Do] : Cases) {
    SCOPED_TRACE(Name);
    {
      Loaded L;
      ASSERT_TRUE(L.M);
      {
        std::string Fail = std::string(Name) + ":999";
        ScopedEnv Env("GRIDJIT_FAKE_CUDA_FAIL", Fail.c_str());
        llvm::Error E = Do(L);
        ASSERT_TRUE(failed(E));
        EXPECT_THAT(
            errorText(std::move(E)),
            HasSubstr(std::string(Name) + " failed: CUDA_ERROR_UNKNOWN (999): unknown error"));
      }
      // The failure cleared: the same call works on the same runtime (a
      // free the device refused left the buffer valid: it is freed now).
      EXPECT_TRUE(succeeded(Do(L)));
      EXPECT_TRUE(succeeded(L.RT->synchronize()));
    }
    EXPECT_EQ(liveDriverObjects(), Before) << "allocations, events, modules, links, context refs";
    Covered.insert(Name);
  }

  // The calls whose failure has nowhere to go: everything still works.
  // (What the driver refused to destroy stays in the fake: the tests
  // after this one count relative to what they find.)
  const char *Silent[] = {
      "cuModuleUnload", "cuLinkDestroy",    "cuEventDestroy",           "cuEventQuery",
      "cuGetErrorName", "cuGetErrorString", "cuDevicePrimaryCtxRelease"};
  for (const char *Name : Silent) {
    SCOPED_TRACE(Name);
    std::string Fail = std::string(Name) + ":999";
    ScopedEnv Env("GRIDJIT_FAKE_CUDA_FAIL", Fail.c_str());
    {
      Loaded L;
      ASSERT_TRUE(L.M);
      for (int I = 0; I < 3; ++I) // cuEventQuery: a state never seen done is not reused
        EXPECT_TRUE(succeeded(Coop(L)));
      EXPECT_TRUE(succeeded(LinkLoad(L)));
      EXPECT_TRUE(succeeded(L.RT->synchronize()));
    }
    Covered.insert(Name);
  }
  {
    // An error whose name and text the driver cannot give still names
    // the call and the code.
    Loaded L;
    ASSERT_TRUE(L.M);
    ScopedEnv Env("GRIDJIT_FAKE_CUDA_FAIL", "cuMemAlloc:2,cuGetErrorName:1,cuGetErrorString:1");
    EXPECT_EQ(errorText(L.RT->allocate(16).takeError()),
              "cuMemAlloc failed: an unrecognised CUresult (2): the driver has no description "
              "of it");
  }
  // Not called by the runtime (CudaDriverTest.EveryEntryPointFailing fails
  // them through the table).
  Covered.insert({"cuMemcpyDtoD", "cuMemsetD8"});
  std::set<std::string> All;
#define GRIDJIT_NAME_ONE(Name, Resolution, Params) All.insert(#Name);
  GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_NAME_ONE)
#undef GRIDJIT_NAME_ONE
  EXPECT_EQ(All.size(), 38u);
  EXPECT_EQ(Covered, All);
}

// The device's own limits, where they are below gridjit's: a grid the
// device cannot take, and a cooperative kernel on a device without
// cooperative launches, are refused before any launch.
TEST(CudaRuntimeTest, DeviceGridLimitsAndCooperativeSupportAreChecked) {
  int Before = launches(false) + launches(true);
  {
    ScopedEnv Attrs("GRIDJIT_FAKE_CUDA_DEVICE_ATTRS", "max_grid_y:100");
    Loaded L;
    ASSERT_TRUE(L.M);
    llvm::Error E = L.launch("dyn", LaunchConfig{{1, 200, 1}, {32, 1, 1}, 128});
    ASSERT_TRUE(failed(E));
    EXPECT_EQ(errorText(std::move(E)),
              "kernel 'dyn' launched with grid (1, 200, 1) and block (32, 1, 1): grid dimensions "
              "are limited to (2147483647, 100, 65535) on device 0 (gridjit fake GPU 0, sm_80)");
  }
  {
    ScopedEnv Attrs("GRIDJIT_FAKE_CUDA_DEVICE_ATTRS", "cooperative:0");
    Loaded L;
    ASSERT_TRUE(L.M);
    llvm::Error E = L.launch("coop", config(2, 32));
    ASSERT_TRUE(failed(E));
    EXPECT_EQ(errorText(std::move(E)),
              "kernel 'coop' launched with grid (2, 1, 1) and block (32, 1, 1): the kernel calls "
              "grid_sync(), so it must be launched cooperatively, but device 0 (gridjit fake GPU "
              "0, sm_80) does not support cooperative launches");
  }
  EXPECT_EQ(launches(false) + launches(true), Before); // nothing reached the driver's launch
}

TEST(CudaRuntimeTest, EightThreadsLaunchOnOneDevice) {
  Loaded L("occupancy:4");
  ASSERT_TRUE(L.M);
  int Coop = launches(true), Plain = launches(false);
  std::atomic<int> Failures{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&, T] {
      // A fresh thread: no context is current until the runtime makes it.
      auto B = L.RT->allocate(256 * sizeof(int));
      if (!B) {
        llvm::consumeError(B.takeError());
        ++Failures;
        return;
      }
      std::vector<int> In(256, T), Out(256);
      for (int I = 0; I < 10; ++I) {
        KernelArg Args[] = {KernelArg::buffer(*B, ScalarKind::I32)};
        if (llvm::Error E = L.RT->launch(*L.M, I % 2 ? "coop" : "dyn",
                                         I % 2 ? config(64, 128) : config(1, 64, 256), Args)) {
          llvm::consumeError(std::move(E));
          ++Failures;
        }
      }
      if (llvm::Error E = L.RT->copyToDevice(*B, In.data(), 1024)) {
        llvm::consumeError(std::move(E));
        ++Failures;
      }
      if (llvm::Error E = L.RT->copyFromDevice(Out.data(), *B, 1024)) {
        llvm::consumeError(std::move(E));
        ++Failures;
      }
      if (In != Out)
        ++Failures;
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Failures, 0);
  EXPECT_TRUE(succeeded(L.RT->synchronize()));
  EXPECT_EQ(launches(true), Coop + 40);
  EXPECT_EQ(launches(false), Plain + 40);
}

/// Launches \p Kernel of \p M on \p B with (A, Bv) and reads the two
/// values back; false (with a test failure) when anything fails or the
/// values are not the launch's own.
bool echoes(Runtime &RT, LoadedModule &M, const DeviceBuffer &B, const char *Kernel, int A, int Bv,
            uint32_t Grid = 4) {
  KernelArg Args[] = {KernelArg::buffer(B, ScalarKind::I32), KernelArg::i32(A), KernelArg::i32(Bv)};
  if (llvm::Error E = RT.launch(M, Kernel, config(Grid, 64), Args)) {
    ADD_FAILURE() << errorText(std::move(E));
    return false;
  }
  int Out[2] = {-1, -1};
  if (llvm::Error E = RT.copyFromDevice(Out, B, sizeof(Out))) {
    ADD_FAILURE() << errorText(std::move(E));
    return false;
  }
  if (Out[0] != A || Out[1] != Bv) {
    ADD_FAILURE() << Kernel << " got (" << Out[0] << ", " << Out[1] << "), launched with (" << A
                  << ", " << Bv << ")";
    return false;
  }
  return true;
}

// Every cooperative launch has its own grid barrier
// state. 8 threads launch cooperative kernels of one loaded module at
// once; each launch "runs" for 300 us on the fake, which fails a launch
// whose state another running launch holds or that was not zeroed. All
// succeed with their own arguments, on at most one chunk of states.
TEST(CudaRuntimeTest, ConcurrentCooperativeLaunchesOfOneModule) {
  ScopedEnv Echo("GRIDJIT_FAKE_CUDA_ECHO", "1");
  ScopedEnv Slow("GRIDJIT_FAKE_CUDA_LAUNCH_US", "300");
  int Coop = launches(true);
  int Events = liveEvents(); // EveryEntryPointFailing leaks one on purpose
  {
    Loaded L("occupancy:4");
    ASSERT_TRUE(L.M);
    int Allocations = liveAllocations();
    std::atomic<int> Good{0};
    std::vector<std::thread> Threads;
    for (int T = 0; T < 8; ++T)
      Threads.emplace_back([&, T] {
        auto B = L.RT->allocate(8);
        if (!succeeded(B))
          return;
        for (int I = 0; I < 25; ++I)
          if (echoes(*L.RT, *L.M, *B, "echo_coop", T, I))
            ++Good;
      });
    for (std::thread &T : Threads)
      T.join();
    EXPECT_EQ(Good, 200);
    // The threads' buffers are freed; one chunk of barrier states remains.
    EXPECT_EQ(liveAllocations(), Allocations + 1);
    EXPECT_LE(liveEvents(), Events + 8);
  }
  EXPECT_EQ(launches(true), Coop + 200);
  EXPECT_EQ(liveEvents(), Events); // the runtime destroyed its events
}

// One thread's cooperative launches reuse one state: the event recorded
// after each has completed when the next is issued.
TEST(CudaRuntimeTest, SequentialCooperativeLaunchesReuseTheirState) {
  ScopedEnv Echo("GRIDJIT_FAKE_CUDA_ECHO", "1");
  int Before = liveAllocations(), Events = liveEvents();
  {
    Loaded L;
    ASSERT_TRUE(L.M);
    for (int I = 0; I < 300; ++I)
      ASSERT_TRUE(echoes(*L.RT, *L.M, L.Out, I % 3 ? "echo_coop" : "echo", I, -I));
    EXPECT_EQ(liveAllocations(), Before + 2); // Out and one chunk of states
    EXPECT_EQ(liveEvents(), Events + 1);
  }
  EXPECT_EQ(liveAllocations(), Before);
}

// The runtime leaves the calling thread's context as it found it: a
// framework that has its own context current (here: device 1's primary
// context, through a driver of its own) still has it after gridjit
// allocated, copied, loaded and launched on device 0; a thread that had
// none has none again.
TEST(CudaRuntimeTest, TheCallersContextStaysCurrent) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "2");
  auto GetCurrent = fakeHook<CUresult (*)(CUcontext *)>("cuCtxGetCurrent");
  auto Framework = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(Framework));
  auto Theirs = (*Framework)->makeCurrent(1);
  ASSERT_TRUE(succeeded(Theirs));
  auto RT = runtime(0);
  ASSERT_TRUE(RT);
  auto Current = [&] {
    CUcontext C = nullptr;
    EXPECT_EQ(GetCurrent(&C), CUDA_SUCCESS);
    return C;
  };
  EXPECT_EQ(Current(), *Theirs);
  auto M = RT->load(ptx());
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(Current(), *Theirs);
  auto B = RT->allocate(64);
  ASSERT_TRUE(succeeded(B));
  int Zero[16] = {};
  EXPECT_TRUE(succeeded(RT->copyToDevice(*B, Zero, sizeof(Zero))));
  KernelArg Args[] = {KernelArg::buffer(*B, ScalarKind::I32)};
  EXPECT_TRUE(succeeded(RT->launch(**M, "dyn", config(1, 16, 64), Args)));
  EXPECT_TRUE(succeeded(RT->launch(**M, "coop", config(2, 16), Args)));
  EXPECT_TRUE(succeeded(RT->copyFromDevice(Zero, *B, sizeof(Zero))));
  EXPECT_TRUE(succeeded(RT->synchronize()));
  EXPECT_EQ(Current(), *Theirs);
  std::thread([&] {
    EXPECT_TRUE(succeeded(RT->launch(**M, "dyn", config(1, 16, 64), Args)));
    EXPECT_EQ(Current(), nullptr);
  }).join();
  M->reset();
  *B = DeviceBuffer();
  RT.reset();
  EXPECT_EQ(Current(), *Theirs);
}

const char *ChildVar = "GRIDJIT_TEST_CUDA_CHILD";

// 8 processes x 8 threads on one (fake) device type and one cache
// directory: each thread compiles the module through the process's
// Compiler, loads it into the process's runtime (cubin cache on) and
// launches plain and cooperative kernels 20 times with arguments of its
// own, checking every result. The cubin is compiled once in all: the
// others wait for it on its key's lock and load it.
TEST(CudaRuntimeTest, EightProcessesTimesEightThreads) {
  llvm::SmallString<128> Dir;
  ASSERT_FALSE(llvm::sys::fs::createUniqueDirectory("gridjit-cuda-8x8", Dir));
  std::string Log = (Dir + "/fake.log").str();
  std::string Self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  ASSERT_FALSE(Self.empty());
  std::vector<std::string> EnvStore =
      childTestEnvironment({std::string(ChildVar) + "=" + std::string(Dir),
                            "GRIDJIT_FAKE_CUDA_LOG=" + Log, "GRIDJIT_FAKE_CUDA_ECHO=1",
                            "GRIDJIT_FAKE_CUDA_LAUNCH_US=100", "GRIDJIT_FAKE_CUDA_DEVICES=1"});
  std::vector<llvm::StringRef> EnvRefs(EnvStore.begin(), EnvStore.end());
  std::vector<llvm::StringRef> Args = {Self, "--gtest_filter=CudaRuntimeTest.DISABLED_Child8x8",
                                       "--gtest_also_run_disabled_tests"};
  std::vector<llvm::sys::ProcessInfo> Children;
  std::vector<std::string> Outputs;
  for (int P = 0; P < 8; ++P)
    Outputs.push_back((Dir + "/child" + llvm::Twine(P) + ".out").str());
  for (int P = 0; P < 8; ++P) {
    std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Outputs[P]),
                                                  llvm::StringRef(Outputs[P])};
    std::string Err;
    Children.push_back(llvm::sys::ExecuteNoWait(Self, Args, EnvRefs, Redirects, 0, &Err));
    ASSERT_NE(Children.back().Pid, llvm::sys::ProcessInfo::InvalidPid) << Err;
  }
  for (int P = 0; P < 8; ++P) {
    std::string Err;
    llvm::sys::ProcessInfo R = llvm::sys::Wait(Children[P], /*SecondsToWait=*/std::nullopt, &Err);
    auto Out = llvm::MemoryBuffer::getFile(Outputs[P]);
    std::string Text = Out ? (*Out)->getBuffer().str() : std::string();
    EXPECT_EQ(R.ReturnCode, 0) << "child " << P << ": " << Err << "\n" << Text;
    EXPECT_THAT(Text, HasSubstr(ChildPassedLine)) << "child " << P;
  }
  auto Text = llvm::MemoryBuffer::getFile(Log);
  ASSERT_TRUE(bool(Text));
  llvm::SmallVector<llvm::StringRef> Lines;
  (*Text)->getBuffer().split(Lines, '\n', -1, /*KeepEmpty=*/false);
  int Compiles = 0, Plain = 0, Coop = 0, Broken = 0;
  for (llvm::StringRef Line : Lines) {
    Compiles += Line.starts_with("ptx compile");
    Plain += Line.starts_with("cuLaunchKernel echo ");
    Coop += Line.starts_with("cuLaunchCooperativeKernel echo_coop ");
    Broken += Line.starts_with("grid barrier state");
  }
  EXPECT_EQ(Compiles, 1);
  EXPECT_EQ(Plain, 8 * 8 * 10);
  EXPECT_EQ(Coop, 8 * 8 * 10);
  EXPECT_EQ(Broken, 0);
  llvm::sys::fs::remove_directories(Dir);
}

// The child half of the test above (run only through
// --gtest_also_run_disabled_tests, with the directory in the environment).
TEST(CudaRuntimeTest, DISABLED_Child8x8) {
  const char *Dir = std::getenv(ChildVar);
  if (!Dir)
    GTEST_SKIP() << "run by EightProcessesTimesEightThreads";
  CompilerOptions CO;
  NVPTXTargetOptions TO;
  TO.Arch = "sm_80";
  auto T = createNVPTXTarget(TO);
  ASSERT_TRUE(succeeded(T));
  CO.Targets.push_back(std::move(*T));
  CO.CacheDir = Dir;
  auto C = Compiler::create(std::move(CO));
  ASSERT_TRUE(succeeded(C));
  CudaRuntimeOptions RO;
  RO.Driver = fake();
  RO.CacheDir = Dir;
  auto RT = CudaRuntime::create(RO);
  ASSERT_TRUE(succeeded(RT));
  int Process = int(::getpid());
  std::atomic<int> Good{0};
  std::vector<std::thread> Threads;
  for (int Th = 0; Th < 8; ++Th)
    Threads.emplace_back([&, Th] {
      auto M = (*C)->compile(Source, "cuda-runtime.kir");
      if (!succeeded(M))
        return;
      auto L = (*RT)->load((*M)->Art);
      if (!succeeded(L))
        return;
      auto B = (*RT)->allocate(8);
      if (!succeeded(B))
        return;
      for (int I = 0; I < 20; ++I)
        if (echoes(**RT, **L, *B, I % 2 ? "echo_coop" : "echo", Process, Th * 100 + I))
          ++Good;
    });
  for (std::thread &Th : Threads)
    Th.join();
  EXPECT_EQ(Good, 160);
}

} // namespace
