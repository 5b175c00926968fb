//===- CudaDriverTest.cpp - Loading the CUDA driver and finding devices ---===//
//
// Part of gridjit. The driver layer (lib/Runtime/Cuda/CudaDriver.h) and
// listCudaDevices against the test suite's fake driver
// (unittests/FakeCuda/FakeCuda.cpp), loaded through the same dlopen path as
// libcuda.so.1: discovery of 0, 1 and 2 devices, no library, a library
// without an entry point, every CUresult path of discovery, primary
// contexts and memory from 8 threads at once. Nothing here needs a GPU;
// "no driver" is always a path that does not exist, never an assumption
// about this machine.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "Runtime/Cuda/CudaDriver.h"

#include "gridjit/Runtime/CudaDevices.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <dlfcn.h>
#include <optional>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using ::testing::HasSubstr;

namespace {

/// The message of the error \p E holds (consumed).
template <typename T> std::string errorOf(llvm::Expected<T> &E) {
  EXPECT_FALSE(static_cast<bool>(E));
  return E ? std::string() : llvm::toString(E.takeError());
}

TEST(CudaDriverTest, ZeroDevicesIsAnEmptyList) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "0");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  std::string Why;
  auto L = listCudaDevices(fake(), &Why);
  ASSERT_TRUE(succeeded(L));
  EXPECT_TRUE(L->empty());
  EXPECT_EQ(Why, "no device");
}

TEST(CudaDriverTest, OneDeviceAndItsAttributes) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", nullptr); // the fake's default: 1
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  ScopedEnv Version("GRIDJIT_FAKE_CUDA_VERSION", "12020");
  auto L = listCudaDevices(fake());
  ASSERT_TRUE(succeeded(L));
  ASSERT_EQ(L->size(), 1u);
  const CudaDeviceInfo &D = L->front();
  EXPECT_EQ(D.Ordinal, 0);
  EXPECT_EQ(D.Name, "gridjit fake GPU 0");
  EXPECT_EQ(D.getArch(), "sm_80");
  EXPECT_EQ(D.ComputeMajor, 8);
  EXPECT_EQ(D.ComputeMinor, 0);
  EXPECT_EQ(D.MultiprocessorCount, 108);
  EXPECT_EQ(D.TotalMemoryBytes, uint64_t(40) << 30);
  EXPECT_EQ(D.MaxThreadsPerBlock, 1024);
  EXPECT_EQ(D.MaxBlockDim[0], 1024);
  EXPECT_EQ(D.MaxBlockDim[1], 1024);
  EXPECT_EQ(D.MaxBlockDim[2], 64);
  EXPECT_EQ(D.MaxGridDim[0], 2147483647);
  EXPECT_EQ(D.MaxGridDim[1], 65535);
  EXPECT_EQ(D.MaxGridDim[2], 65535);
  EXPECT_EQ(D.WarpSize, 32);
  EXPECT_EQ(D.SharedMemoryPerBlock, 49152);
  EXPECT_EQ(D.SharedMemoryPerBlockOptin, 166912);
  EXPECT_TRUE(D.CooperativeLaunch);
  EXPECT_EQ(D.DriverVersion, 12020);
}

TEST(CudaDriverTest, TwoDevicesInOrdinalOrder) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "sm_75:40:512MiB,sm_90:132:80GiB");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto L = listCudaDevices(fake());
  ASSERT_TRUE(succeeded(L));
  ASSERT_EQ(L->size(), 2u);
  EXPECT_EQ((*L)[0].Ordinal, 0);
  EXPECT_EQ((*L)[0].getArch(), "sm_75");
  EXPECT_EQ((*L)[0].MultiprocessorCount, 40);
  EXPECT_EQ((*L)[0].TotalMemoryBytes, uint64_t(512) << 20);
  EXPECT_EQ((*L)[0].SharedMemoryPerBlockOptin, 65536);
  EXPECT_EQ((*L)[1].Ordinal, 1);
  EXPECT_EQ((*L)[1].Name, "gridjit fake GPU 1");
  EXPECT_EQ((*L)[1].getArch(), "sm_90");
  EXPECT_EQ((*L)[1].MultiprocessorCount, 132);
  EXPECT_EQ((*L)[1].TotalMemoryBytes, uint64_t(80) << 30);
  EXPECT_EQ((*L)[1].SharedMemoryPerBlockOptin, 232448);
}

TEST(CudaDriverTest, NoLibraryIsAnEmptyList) {
  CudaDriverOptions O;
  O.LibraryPath = "/nonexistent/libcuda.so.1";
  std::string Why;
  auto L = listCudaDevices(O, &Why);
  ASSERT_TRUE(succeeded(L));
  EXPECT_TRUE(L->empty());
  EXPECT_EQ(Why, "/nonexistent/libcuda.so.1 not found");

  auto D = cuda::Driver::open(O);
  ASSERT_FALSE(static_cast<bool>(D));
  bool Unavailable = false;
  llvm::handleAllErrors(D.takeError(),
                        [&](const cuda::DriverUnavailableError &) { Unavailable = true; });
  EXPECT_TRUE(Unavailable);
}

// A file that is there but is no shared library: no driver either, and the
// reason carries dlopen's message.
TEST(CudaDriverTest, UnloadableLibraryIsAnEmptyList) {
  CudaDriverOptions O;
  O.LibraryPath = std::string(GRIDJIT_SOURCE_DIR) + "/docs/CUDA.md";
  std::string Why;
  auto L = listCudaDevices(O, &Why);
  ASSERT_TRUE(succeeded(L));
  EXPECT_TRUE(L->empty());
  EXPECT_THAT(Why, ::testing::StartsWith(O.LibraryPath + " cannot be loaded: "));
}

TEST(CudaDriverTest, EnvironmentNamesTheLibraryAndTheOptionWins) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  {
    ScopedEnv Driver("GRIDJIT_CUDA_DRIVER", GRIDJIT_FAKE_CUDA);
    auto L = listCudaDevices();
    ASSERT_TRUE(succeeded(L));
    EXPECT_EQ(L->size(), 1u);
  }
  {
    ScopedEnv Driver("GRIDJIT_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
    auto L = listCudaDevices(fake());
    ASSERT_TRUE(succeeded(L));
    EXPECT_EQ(L->size(), 1u);
    std::string Why;
    auto None = listCudaDevices({}, &Why);
    ASSERT_TRUE(succeeded(None));
    EXPECT_TRUE(None->empty());
    EXPECT_EQ(Why, "/nonexistent/libcuda.so.1 not found");
  }
}

// The driver library is opened RTLD_LOCAL: loading it adds nothing to the
// process's global symbol namespace (invariant 8), which LLVM's
// DynamicLibrary::getLibrary (RTLD_GLOBAL) would.
TEST(CudaDriverTest, DriverSymbolsStayOutOfTheGlobalNamespace) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto D = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(D));
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "gridjitFakeCudaLiveAllocations"), nullptr);
  EXPECT_EQ(::dlsym(RTLD_DEFAULT, "cuMemAlloc_v2"), nullptr);
}

TEST(CudaDriverTest, MissingEntryPointIsNamed) {
  CudaDriverOptions O;
  O.LibraryPath = GRIDJIT_FAKE_CUDA_NOLAUNCH;
  auto L = listCudaDevices(O);
  EXPECT_EQ(errorOf(L),
            std::string(GRIDJIT_FAKE_CUDA_NOLAUNCH) +
                " is not a usable CUDA driver: it lacks the entry point cuLaunchKernel");
}

TEST(CudaDriverTest, CuInitNoDeviceAndStubAreEmptyLists) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  {
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuInit:100");
    std::string Why;
    auto L = listCudaDevices(fake(), &Why);
    ASSERT_TRUE(succeeded(L));
    EXPECT_TRUE(L->empty());
    EXPECT_EQ(Why, "no device");
  }
  {
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuInit:34");
    std::string Why;
    auto L = listCudaDevices(fake(), &Why);
    ASSERT_TRUE(succeeded(L));
    EXPECT_TRUE(L->empty());
    EXPECT_THAT(Why, HasSubstr("stub library"));
  }
}

TEST(CudaDriverTest, CuInitFailingIsAnErrorWithTheDriversWords) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuInit:999");
  auto L = listCudaDevices(fake());
  EXPECT_EQ(errorOf(L), "cuInit failed: CUDA_ERROR_UNKNOWN (999): unknown error");

  auto D = cuda::Driver::open(fake());
  ASSERT_FALSE(static_cast<bool>(D));
  CUresult Code = CUDA_SUCCESS;
  std::string Call;
  llvm::handleAllErrors(D.takeError(), [&](const cuda::DriverCallError &E) {
    Code = E.getCode();
    Call = E.getCall();
  });
  EXPECT_EQ(Code, CUDA_ERROR_UNKNOWN);
  EXPECT_EQ(Call, "cuInit");
}

TEST(CudaDriverTest, UnrecognisedResultStillNamesCallAndCode) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", "cuInit:12345");
  auto L = listCudaDevices(fake());
  EXPECT_EQ(errorOf(L), "cuInit failed: an unrecognised CUresult (12345): the driver has no "
                        "description of it");
}

// Every driver call discovery makes, failing: the error names it, its code
// and the driver's name and description of the code.
TEST(CudaDriverTest, EveryDiscoveryCallFailing) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "2");
  for (const char *Call : {"cuDriverGetVersion", "cuDeviceGetCount", "cuDeviceGet",
                           "cuDeviceGetName", "cuDeviceTotalMem", "cuDeviceGetAttribute"}) {
    std::string Spec = std::string(Call) + ":1";
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", Spec.c_str());
    auto L = listCudaDevices(fake());
    EXPECT_EQ(errorOf(L),
              std::string(Call) + " failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument")
        << Call;
  }
}

TEST(CudaDriverTest, CheckMapsEveryResult) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto D = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(D));
  EXPECT_TRUE(succeeded((*D)->check(CUDA_SUCCESS, "cuInit")));
  EXPECT_EQ(errorText((*D)->check(CUDA_ERROR_INVALID_PTX, "cuModuleLoadDataEx")),
            "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation "
            "failed");
  EXPECT_EQ(errorText((*D)->check(CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "cuLaunchKernel")),
            "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many "
            "resources requested for launch");
  // A call through the table and GRIDJIT_CU.
  ASSERT_TRUE(succeeded((*D)->makeCurrent(0)));
  CUmodule M = nullptr;
  EXPECT_EQ(errorText(GRIDJIT_CU(**D, cuModuleLoadDataEx, &M, "", 0, nullptr, nullptr)),
            "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_IMAGE (200): device kernel image is "
            "invalid");
}

/// Calls \p F with a zero of each parameter type: enough for a call the
/// fake fails before it looks at its arguments.
template <typename... A> CUresult callWithZeros(CUresult (*F)(A...)) { return F(A{}...); }

// Every entry point of the table failing (the fake fails it before looking
// at the arguments): the error names the call and the driver's words. The
// error queries themselves are what check() uses, so they are not failed.
TEST(CudaDriverTest, EveryEntryPointFailing) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv NoFailure("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto D = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(D));
  const cuda::DriverAPI &API = (*D)->api();
  int Checked = 0;
#define GRIDJIT_FAIL_ONE(Name, Resolution, Params)                                                 \
  if (llvm::StringRef(#Name) != "cuGetErrorName" &&                                                \
      llvm::StringRef(#Name) != "cuGetErrorString") {                                              \
    ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", #Name ":400");                                        \
    EXPECT_EQ(errorText((*D)->check(callWithZeros(API.Name), #Name)),                              \
              #Name " failed: CUDA_ERROR_INVALID_HANDLE (400): invalid resource handle");          \
    ++Checked;                                                                                     \
  }
  GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_FAIL_ONE)
#undef GRIDJIT_FAIL_ONE
  EXPECT_EQ(Checked, static_cast<int>(cuda::NumEntryPoints) - 2);
  EXPECT_EQ(cuda::NumEntryPoints, 38u);
}

// Drivers are independent objects: 8 threads each open one and list the
// devices at once.
TEST(CudaDriverTest, DriversOpenedFromEightThreads) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "2");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  std::atomic<int> Good{0};
  std::vector<std::thread> Threads;
  for (int T = 0; T < 8; ++T)
    Threads.emplace_back([&] {
      auto D = cuda::Driver::open(fake());
      if (!succeeded(D) || (*D)->getDeviceCount() != 2)
        return;
      auto Info = (*D)->getDeviceInfo(1);
      auto Ctx = (*D)->makeCurrent(1);
      if (succeeded(Info) && succeeded(Ctx) && Info->MultiprocessorCount == 108)
        ++Good;
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_EQ(Good, 8);
}

TEST(CudaDriverTest, ContextsAreRetainedOnceAndMadeCurrentPerThread) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "2");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto Retains = fakeHook<int (*)(int)>("gridjitFakeCudaPrimaryCtxRetains");
  auto Refs = fakeHook<int (*)(int)>("gridjitFakeCudaPrimaryCtxRefs");
  auto Live = fakeHook<int (*)()>("gridjitFakeCudaLiveAllocations");
  ASSERT_TRUE(Retains && Refs && Live);
  int RetainsBefore = Retains(1), RefsBefore = Refs(1), LiveBefore = Live();
  {
    auto D = cuda::Driver::open(fake());
    ASSERT_TRUE(succeeded(D));
    cuda::Driver &Drv = **D;

    // A thread that has not asked for a context has none.
    std::thread([&] {
      CUdeviceptr P = 0;
      EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuMemAlloc, &P, 16)),
                "cuMemAlloc failed: CUDA_ERROR_INVALID_CONTEXT (201): invalid device context");
    }).join();

    // 8 threads at once: each makes device 1's context current and moves
    // its own data through device memory.
    std::atomic<int> Good{0};
    std::vector<std::thread> Threads;
    for (int T = 0; T < 8; ++T)
      Threads.emplace_back([&, T] {
        auto Ctx = Drv.makeCurrent(1);
        if (!succeeded(Ctx))
          return;
        std::vector<int> In(1000), Out(1000, -1);
        for (int I = 0; I < 1000; ++I)
          In[I] = T * 1000 + I;
        CUdeviceptr A = 0, B = 0;
        size_t Bytes = In.size() * sizeof(int);
        if (!succeeded(GRIDJIT_CU(Drv, cuMemAlloc, &A, Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemAlloc, &B, Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemsetD8, B, 0, Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemcpyHtoD, A, In.data(), Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemcpyDtoD, B, A, Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemcpyDtoH, Out.data(), B, Bytes)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemFree, A)) ||
            !succeeded(GRIDJIT_CU(Drv, cuMemFree, B)) ||
            !succeeded(GRIDJIT_CU(Drv, cuCtxSynchronize)))
          return;
        // Asking again in the same thread changes nothing.
        auto Again = Drv.makeCurrent(1);
        if (succeeded(Again) && *Again == *Ctx && Out == In)
          ++Good;
      });
    for (std::thread &T : Threads)
      T.join();
    EXPECT_EQ(Good, 8);
    EXPECT_EQ(Retains(1) - RetainsBefore, 1);
    EXPECT_EQ(Refs(1) - RefsBefore, 1);
    EXPECT_EQ(Live(), LiveBefore);
  }
  // The Driver released what it retained.
  EXPECT_EQ(Refs(1), RefsBefore);
}

// The fake's modules, links and launches, through the Driver's table: what
// the CUDA runtime will build on (no code runs; see FakeCuda.cpp).
TEST(CudaDriverTest, FakeModulesLinksAndLaunches) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "sm_80:2:1GiB");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  ScopedEnv Attrs("GRIDJIT_FAKE_CUDA_FUNC_ATTRS", "max_threads:256,regs:64");
  auto Compiles = fakeHook<int (*)()>("gridjitFakeCudaPtxCompiles");
  auto Launches = fakeHook<int (*)(int)>("gridjitFakeCudaLaunches");
  ASSERT_TRUE(Compiles && Launches);
  auto D = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(D));
  cuda::Driver &Drv = **D;
  ASSERT_TRUE(succeeded(Drv.makeCurrent(0)));
  const char *Ptx = ".version 8.0\n.target sm_80\n.address_size 64\n"
                    ".visible .entry k(\n.param .u64 p\n)\n{\nret;\n}\n";

  // PTX with the driver's logs captured.
  char Info[256] = {0}, Err[256] = {0};
  CUjit_option Opts[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                         CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Vals[] = {Info, reinterpret_cast<void *>(uintptr_t(sizeof(Info))), Err,
                  reinterpret_cast<void *>(uintptr_t(sizeof(Err)))};
  int CompilesBefore = Compiles();
  CUmodule M = nullptr;
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleLoadDataEx, &M, Ptx, 4, Opts, Vals)));
  EXPECT_EQ(Compiles() - CompilesBefore, 1);
  EXPECT_THAT(std::string(Info), HasSubstr("1 entry function(s) for sm_80"));
  CUfunction F = nullptr;
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleGetFunction, &F, M, "k")));
  EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuModuleGetFunction, &F, M, "nope")),
            "cuModuleGetFunction failed: CUDA_ERROR_NOT_FOUND (500): named symbol not found");
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleGetFunction, &F, M, "k")));

  // Attributes and the launch checks they drive.
  int MaxThreads = 0, Regs = 0, Blocks = 0;
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuFuncGetAttribute, &MaxThreads,
                                   CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, F)));
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuFuncGetAttribute, &Regs, CU_FUNC_ATTRIBUTE_NUM_REGS, F)));
  EXPECT_EQ(MaxThreads, 256);
  EXPECT_EQ(Regs, 64);
  int LaunchesBefore = Launches(0), CoopBefore = Launches(1);
  EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuLaunchKernel, F, 1, 1, 1, 512, 1, 1, 0, nullptr, nullptr,
                                 nullptr)),
            "cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (701): too many resources "
            "requested for launch");
  // The kernel has one parameter: no parameter array is an invalid launch.
  EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuLaunchKernel, F, 4, 1, 1, 256, 1, 1, 0, nullptr, nullptr,
                                 nullptr)),
            "cuLaunchKernel failed: CUDA_ERROR_INVALID_VALUE (1): invalid argument");
  uint64_t P = 0;
  void *Params[] = {&P};
  EXPECT_TRUE(succeeded(
      GRIDJIT_CU(Drv, cuLaunchKernel, F, 4, 1, 1, 256, 1, 1, 0, nullptr, Params, nullptr)));
  EXPECT_EQ(Launches(0) - LaunchesBefore, 1);
  ASSERT_TRUE(
      succeeded(GRIDJIT_CU(Drv, cuOccupancyMaxActiveBlocksPerMultiprocessor, &Blocks, F, 256, 0)));
  EXPECT_EQ(Blocks, 8); // 2048 threads per SM / 256
  EXPECT_TRUE(succeeded(
      GRIDJIT_CU(Drv, cuLaunchCooperativeKernel, F, 16, 1, 1, 256, 1, 1, 0, nullptr, Params)));
  EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuLaunchCooperativeKernel, F, 17, 1, 1, 256, 1, 1, 0, nullptr,
                                 nullptr)),
            "cuLaunchCooperativeKernel failed: CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE (720): "
            "too many blocks in cooperative launch");
  EXPECT_EQ(Launches(1) - CoopBefore, 1);
  EXPECT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleUnload, M)));

  // cuLink* makes a cubin; loading it compiles nothing.
  CUlinkState L = nullptr;
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuLinkCreate, 0, nullptr, nullptr, &L)));
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuLinkAddData, L, CU_JIT_INPUT_PTX, const_cast<char *>(Ptx),
                                   std::strlen(Ptx) + 1, "k.ptx", 0, nullptr, nullptr)));
  void *Cubin = nullptr;
  size_t CubinSize = 0;
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuLinkComplete, L, &Cubin, &CubinSize)));
  std::string CubinCopy(static_cast<const char *>(Cubin), CubinSize);
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuLinkDestroy, L)));
  EXPECT_EQ(CubinCopy.rfind("GRIDJIT-FAKE-CUBIN sm_80\n", 0), 0u);
  CompilesBefore = Compiles();
  ASSERT_TRUE(
      succeeded(GRIDJIT_CU(Drv, cuModuleLoadDataEx, &M, CubinCopy.data(), 0, nullptr, nullptr)));
  EXPECT_EQ(Compiles(), CompilesBefore);
  ASSERT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleGetFunction, &F, M, "k")));
  EXPECT_TRUE(succeeded(GRIDJIT_CU(Drv, cuModuleUnload, M)));

  // A failing load fills the error log.
  ScopedEnv LoadFails("GRIDJIT_FAKE_CUDA_FAIL", "cuModuleLoadDataEx:218");
  Vals[1] = reinterpret_cast<void *>(uintptr_t(sizeof(Info)));
  Vals[3] = reinterpret_cast<void *>(uintptr_t(sizeof(Err)));
  EXPECT_EQ(errorText(GRIDJIT_CU(Drv, cuModuleLoadDataEx, &M, Ptx, 4, Opts, Vals)),
            "cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT compilation "
            "failed");
  EXPECT_THAT(std::string(Err), HasSubstr("configured failure of cuModuleLoadDataEx"));
}

TEST(CudaDriverTest, MakeCurrentErrors) {
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv Fail("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto D = cuda::Driver::open(fake());
  ASSERT_TRUE(succeeded(D));
  auto Bad = (*D)->makeCurrent(3);
  EXPECT_EQ(errorOf(Bad), "CUDA device 3 does not exist (1 device)");
  auto Info = (*D)->getDeviceInfo(-1);
  EXPECT_EQ(errorOf(Info), "CUDA device -1 does not exist (1 device)");

  ScopedEnv RetainFails("GRIDJIT_FAKE_CUDA_FAIL", "cuDevicePrimaryCtxRetain:2");
  auto R = (*D)->makeCurrent(0);
  EXPECT_EQ(errorOf(R),
            "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
  // Remembered: the same error without asking the driver again.
  ScopedEnv NoMoreFailures("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  auto Again = (*D)->makeCurrent(0);
  EXPECT_EQ(errorOf(Again),
            "cuDevicePrimaryCtxRetain failed: CUDA_ERROR_OUT_OF_MEMORY (2): out of memory");
}

} // namespace
