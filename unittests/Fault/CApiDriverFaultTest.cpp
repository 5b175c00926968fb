//===- CApiDriverFaultTest.cpp - The C API on a failing CUDA driver -------===//
//
// Part of gridjit. The C API's CUDA paths (runtime creation, load,
// allocation, copies both ways, launch, synchronize, free) on the fake
// driver (unittests/FakeCuda/FakeCuda.cpp), each with the driver entry
// point it calls failing: the call returns an error status and
// gj_last_error() names the entry point; the same call succeeds once the
// failure clears; and after everything is destroyed the fake holds no
// more allocations, modules, link states or context references than
// before. CudaRuntimeTest.EveryEntryPointFailing does the same for every
// entry point through the C++ runtime.
//
//===----------------------------------------------------------------------===//

#include "Runtime/RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit-c/gridjit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <array>
#include <cstring>
#include <functional>
#include <string>

using namespace gridjit::test;
using ::testing::HasSubstr;

namespace {

std::array<int, 4> liveDriverObjects() {
  return {fakeHook<int (*)()>("gridjitFakeCudaLiveAllocations")(),
          fakeHook<int (*)()>("gridjitFakeCudaLiveModules")(),
          fakeHook<int (*)()>("gridjitFakeCudaLiveLinks")(),
          fakeHook<int (*)(int)>("gridjitFakeCudaPrimaryCtxRefs")(0)};
}

constexpr const char *Kernel = R"(
kernel fill(out: ptr<i32>, v: i32) {
  out[thread_idx.x] = v;
}
)";

/// A compiled module, a CUDA runtime, the module loaded and a buffer.
struct Session {
  gj_compiler C = nullptr;
  gj_module M = nullptr;
  gj_runtime R = nullptr;
  gj_loaded_module LM = nullptr;
  gj_buffer B = nullptr;
  Session() {
    gj_compiler_options O;
    gj_compiler_options_init(&O, sizeof O);
    O.targets = "nvptx";
    O.use_disk_cache = 0;
    EXPECT_EQ(gj_compiler_create(&O, &C), GJ_OK) << gj_last_error();
    EXPECT_EQ(gj_compile(C, Kernel, std::strlen(Kernel), "fill.kir", nullptr, &M), GJ_OK)
        << gj_last_error();
  }
  ~Session() {
    gj_buffer_free(B);
    gj_loaded_module_destroy(LM);
    gj_runtime_destroy(R);
    gj_module_release(M);
    gj_compiler_destroy(C);
  }
  gj_status create() {
    gj_runtime_options O;
    gj_runtime_options_init(&O, sizeof O);
    O.target = "cuda";
    O.use_cubin_cache = 0;
    gj_runtime_destroy(R);
    R = nullptr;
    return gj_runtime_create(&O, &R);
  }
  gj_status load() {
    gj_loaded_module_destroy(LM);
    LM = nullptr;
    return gj_runtime_load(R, M, &LM);
  }
  gj_status alloc() {
    gj_buffer_free(B);
    B = nullptr;
    return gj_buffer_alloc(R, 256, &B);
  }
  gj_status launch() {
    gj_launch_config LC;
    gj_launch_config_init(&LC, sizeof LC);
    LC.block[0] = 32;
    gj_arg Args[2] = {};
    Args[0].kind = GJ_ARG_BUFFER;
    Args[0].type = GJ_I32;
    Args[0].value.buffer = B;
    Args[1].kind = GJ_ARG_SCALAR;
    Args[1].type = GJ_I32;
    Args[1].value.i = 7;
    return gj_launch(LM, "fill", &LC, Args, 2, sizeof(gj_arg));
  }
};

TEST(CApiDriverFaultTest, EveryPathReportsTheFailingEntryPoint) {
  ScopedEnv Driver("GRIDJIT_CUDA_DRIVER", GRIDJIT_FAKE_CUDA);
  ScopedEnv Devices("GRIDJIT_FAKE_CUDA_DEVICES", "1");
  ScopedEnv NoFailure("GRIDJIT_FAKE_CUDA_FAIL", nullptr);
  using Op = std::function<gj_status(Session &)>;
  auto Write = [](Session &S) {
    int X[4] = {1, 2, 3, 4};
    return gj_buffer_write(S.B, 0, X, sizeof(X));
  };
  auto Read = [](Session &S) {
    int X[4];
    return gj_buffer_read(S.B, 0, X, sizeof(X));
  };
  const std::pair<const char *, Op> Cases[] = {
      {"cuInit", [](Session &S) { return S.create(); }},
      {"cuDeviceGetAttribute", [](Session &S) { return S.create(); }},
      {"cuDevicePrimaryCtxRetain", [](Session &S) { return S.create(); }},
      {"cuModuleLoadDataEx", [](Session &S) { return S.load(); }},
      {"cuModuleGetFunction", [](Session &S) { return S.load(); }},
      {"cuMemAlloc", [](Session &S) { return S.alloc(); }},
      {"cuMemcpyHtoD", Write},
      {"cuMemcpyDtoH", Read},
      {"cuCtxSynchronize", Read},
      {"cuLaunchKernel", [](Session &S) { return S.launch(); }},
      {"cuCtxSynchronize", [](Session &S) { return gj_runtime_synchronize(S.R); }},
  };
  // A runtime kept alive throughout holds the device's primary context, so
  // the context is never destroyed between cases (which would free what a
  // case leaked and hide it).
  Session Keeper;
  ASSERT_EQ(Keeper.create(), GJ_OK) << gj_last_error();
  const std::array<int, 4> Before = liveDriverObjects();
  for (const auto &[Name, Do] : Cases) {
    SCOPED_TRACE(Name);
    {
      Session S;
      ASSERT_TRUE(S.M);
      ASSERT_EQ(S.create(), GJ_OK) << gj_last_error();
      ASSERT_EQ(S.load(), GJ_OK) << gj_last_error();
      ASSERT_EQ(S.alloc(), GJ_OK) << gj_last_error();
      {
        std::string Fail = std::string(Name) + ":999";
        ScopedEnv Env("GRIDJIT_FAKE_CUDA_FAIL", Fail.c_str());
        EXPECT_NE(Do(S), GJ_OK);
        EXPECT_THAT(gj_last_error(), HasSubstr(std::string(Name) +
                                               " failed: CUDA_ERROR_UNKNOWN (999): unknown error"));
      }
      // Cleared: the same call works (a failed create or load left no
      // handle, so they are made again).
      if (!S.R)
        ASSERT_EQ(S.create(), GJ_OK) << gj_last_error();
      if (!S.LM)
        ASSERT_EQ(S.load(), GJ_OK) << gj_last_error();
      if (!S.B)
        ASSERT_EQ(S.alloc(), GJ_OK) << gj_last_error();
      EXPECT_EQ(Do(S), GJ_OK) << gj_last_error();
      EXPECT_EQ(S.launch(), GJ_OK) << gj_last_error();
      EXPECT_EQ(gj_runtime_synchronize(S.R), GJ_OK) << gj_last_error();
    }
    EXPECT_EQ(liveDriverObjects(), Before) << "allocations, modules, links, context refs";
  }

  // A free the driver refuses inside gj_buffer_free (which has no status
  // to return): no crash, and the runtime works on. The memory stays with
  // the driver (docs/Faults.md).
  {
    Session S;
    ASSERT_EQ(S.create(), GJ_OK) << gj_last_error();
    ASSERT_EQ(S.alloc(), GJ_OK) << gj_last_error();
    {
      ScopedEnv Env("GRIDJIT_FAKE_CUDA_FAIL", "cuMemFree:999");
      gj_buffer_free(S.B);
      S.B = nullptr;
    }
    EXPECT_EQ(S.alloc(), GJ_OK);
  }
}

} // namespace
