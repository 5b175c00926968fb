//===- RuntimeTest.cpp - The runtime interface, buffers, shared checks ----===//
//
// Part of gridjit. Runs kernels through Runtime& (the host implementation,
// made by createRuntime) the way jit-run and a CUDA runtime's users do:
// allocate, copy in, launch with device buffers, synchronise, copy back.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cstdlib>

#include <numeric>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

const std::string Kernels = std::string(SaxpySource) + R"(
kernel count(hits: ptr<u64>) {
  atomic_add(&hits[0], 1u64);
}

kernel dyn(out: ptr<i32>) {
  shared s: [i32];
  s[thread_idx.x] = thread_idx.x;
  sync_threads();
  out[thread_idx.x] = s[block_dim.x - 1 - thread_idx.x];
}
)";

const Artifact &artifact() {
  static Artifact A = compileForTest(createHostTarget(), Kernels, "runtime-interface.kir");
  return A;
}

LaunchConfig config(uint32_t Grid, uint32_t Block) {
  LaunchConfig C;
  C.Grid.X = Grid;
  C.Block.X = Block;
  return C;
}

std::unique_ptr<Runtime> hostRuntime() {
  RuntimeOptions O;
  O.NumThreads = 2;
  auto RT = createRuntime(TargetKind::Host, O);
  if (!RT) {
    ADD_FAILURE() << errorText(RT.takeError());
    return nullptr;
  }
  return std::move(*RT);
}

TEST(RuntimeTest, SaxpyThroughTheInterfaceWithDeviceBuffers) {
  std::unique_ptr<Runtime> RT = hostRuntime();
  ASSERT_TRUE(RT);
  Runtime &R = *RT;
  EXPECT_EQ(R.getTargetKind(), TargetKind::Host);
  auto M = R.load(artifact());
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ((*M)->getTargetKind(), TargetKind::Host);
  ASSERT_NE((*M)->getKernel("saxpy"), nullptr);

  constexpr int N = 1000;
  std::vector<float> X(N), Y(N, 1.0f), Out(N, -1.0f);
  std::iota(X.begin(), X.end(), 0.0f);
  auto DX = R.allocate(N * sizeof(float));
  auto DY = R.allocate(N * sizeof(float));
  ASSERT_TRUE(succeeded(DX));
  ASSERT_TRUE(succeeded(DY));
  EXPECT_EQ(DX->size(), N * sizeof(float));
  EXPECT_EQ(DX->getRuntime(), &R);
  EXPECT_EQ(DX->getAddress() % 64, 0u);
  ASSERT_TRUE(succeeded(R.copyToDevice(*DX, X.data(), N * sizeof(float))));
  ASSERT_TRUE(succeeded(R.copyToDevice(*DY, Y.data(), N * sizeof(float))));
  // A typed buffer and a raw device address name the same kind of thing.
  KernelArg Args[] = {KernelArg::i32(N), KernelArg::f32(2.0f),
                      KernelArg::buffer(*DX, ScalarKind::F32),
                      KernelArg::devicePointer(DY->getAddress(), ScalarKind::F32)};
  LaunchStats S;
  LaunchOptions LO;
  LO.Stats = &S;
  ASSERT_TRUE(succeeded(R.launch(**M, "saxpy", config(32, 32), Args, LO)));
  ASSERT_TRUE(succeeded(R.synchronize()));
  EXPECT_EQ(S.Blocks, 32u);
  EXPECT_EQ(S.PoolThreads, 2u);
  ASSERT_TRUE(succeeded(R.copyFromDevice(Out.data(), *DY, N * sizeof(float))));
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], 2.0f * I + 1.0f) << I;
  // An untyped buffer is accepted for any ptr<T>; an offset address too.
  KernelArg Half[] = {KernelArg::i32(N / 2), KernelArg::f32(1.0f), KernelArg::buffer(*DX),
                      KernelArg::devicePointer(DY->getAddress() + N / 2 * sizeof(float))};
  ASSERT_TRUE(succeeded(R.launch(**M, "saxpy", config(16, 32), Half)));
  ASSERT_TRUE(succeeded(R.copyFromDevice(Out.data(), *DY, N * sizeof(float))));
  for (int I = 0; I < N; ++I)
    ASSERT_EQ(Out[I], 2.0f * I + 1.0f + (I >= N / 2 ? float(I - N / 2) : 0.0f)) << I;
}

TEST(RuntimeTest, DeviceBuffersCheckRangesAndOwnership) {
  std::unique_ptr<Runtime> RT = hostRuntime(), Other = hostRuntime();
  ASSERT_TRUE(RT && Other);
  auto B = RT->allocate(16);
  ASSERT_TRUE(succeeded(B));
  // Zeroed on the host target.
  uint8_t Bytes[16];
  std::fill(std::begin(Bytes), std::end(Bytes), 0xff);
  ASSERT_TRUE(succeeded(RT->copyFromDevice(Bytes, *B, 16)));
  for (uint8_t V : Bytes)
    EXPECT_EQ(V, 0);
  uint32_t V = 7;
  ASSERT_TRUE(succeeded(RT->copyToDevice(*B, &V, 4, 12)));
  EXPECT_THAT(errorText(RT->copyToDevice(*B, &V, 4, 13)),
              HasSubstr("copyToDevice: bytes [13, 13 + 4) are outside the buffer of 16 bytes"));
  EXPECT_THAT(errorText(RT->copyFromDevice(Bytes, *B, 17)),
              HasSubstr("copyFromDevice: bytes [0, 0 + 17) are outside the buffer of 16 bytes"));
  EXPECT_THAT(errorText(Other->copyFromDevice(Bytes, *B, 4)),
              HasSubstr("the device buffer belongs to another runtime"));
  EXPECT_THAT(errorText(Other->free(*B)),
              HasSubstr("cannot free a device buffer of another runtime"));
  // Moving hands the memory over; freeing empties the handle.
  DeviceBuffer Moved = std::move(*B);
  EXPECT_FALSE(*B);
  ASSERT_TRUE(Moved);
  uint32_t Back = 0;
  ASSERT_TRUE(succeeded(RT->copyFromDevice(&Back, Moved, 4, 12)));
  EXPECT_EQ(Back, 7u);
  ASSERT_TRUE(succeeded(RT->free(Moved)));
  EXPECT_FALSE(Moved);
  EXPECT_EQ(Moved.getAddress(), 0u);
  ASSERT_TRUE(succeeded(RT->free(Moved))); // an empty handle
  EXPECT_THAT(errorText(RT->copyToDevice(Moved, &V, 4)),
              HasSubstr("copyToDevice: the device buffer is empty"));
  // A zero-byte buffer is a real allocation.
  auto Empty = RT->allocate(0);
  ASSERT_TRUE(succeeded(Empty));
  EXPECT_TRUE(*Empty);
  EXPECT_TRUE(succeeded(RT->copyToDevice(*Empty, nullptr, 0)));
}

TEST(RuntimeTest, TheHostRejectsAStreamAndRunsNothing) {
  std::unique_ptr<Runtime> RT = hostRuntime();
  ASSERT_TRUE(RT);
  auto M = RT->load(artifact());
  ASSERT_TRUE(succeeded(M));
  auto Hits = RT->allocate(sizeof(uint64_t));
  ASSERT_TRUE(succeeded(Hits));
  KernelArg Args[] = {KernelArg::buffer(*Hits, ScalarKind::U64)};
  LaunchOptions LO;
  int FakeStream = 0;
  LO.Stream = &FakeStream;
  EXPECT_EQ(errorText(RT->launch(**M, "count", config(2, 2), Args, LO)),
            "kernel 'count': the host runtime has no streams (LaunchOptions::Stream must be "
            "null; host launches run to completion before they return)");
  uint64_t N = 1;
  ASSERT_TRUE(succeeded(RT->copyFromDevice(&N, *Hits, sizeof(N))));
  EXPECT_EQ(N, 0u) << "a rejected launch must not run";
  // Without a stream it runs, and is finished when launch returns.
  ASSERT_TRUE(succeeded(RT->launch(**M, "count", config(2, 2), Args)));
  ASSERT_TRUE(succeeded(RT->copyFromDevice(&N, *Hits, sizeof(N))));
  EXPECT_EQ(N, 4u);
}

TEST(RuntimeTest, LaunchChecksAreSharedAndKeepTheirMessages) {
  const Artifact &A = artifact();
  const KernelInfo *Saxpy = A.getKernel("saxpy");
  const KernelInfo *Dyn = A.getKernel("dyn");
  ASSERT_TRUE(Saxpy && Dyn);
  // The configuration, against gridjit::limits.
  EXPECT_EQ(errorText(checkLaunchConfig(*Saxpy, config(1, 1025))),
            "kernel 'saxpy' launched with grid (1, 1, 1) and block (1025, 1, 1): a block of 1025 "
            "threads exceeds the limit of 1024 threads per block");
  LaunchConfig Deep = config(1, 1);
  Deep.Block.Z = 65;
  EXPECT_EQ(errorText(checkLaunchConfig(*Saxpy, Deep)),
            "kernel 'saxpy' launched with grid (1, 1, 1) and block (1, 1, 65): block dimensions "
            "are limited to (1024, 1024, 64)");
  LaunchConfig Tall = config(1, 1);
  Tall.Grid.Y = 65536;
  EXPECT_EQ(errorText(checkLaunchConfig(*Saxpy, Tall)),
            "kernel 'saxpy' launched with grid (1, 65536, 1) and block (1, 1, 1): grid dimensions "
            "are limited to (2147483647, 65535, 65535)");
  EXPECT_THAT(errorText(checkLaunchConfig(*Saxpy, config(0, 1))),
              HasSubstr(": every grid dimension must be at least 1"));
  EXPECT_THAT(errorText(checkLaunchConfig(*Dyn, config(1, 8))),
              HasSubstr(": the kernel declares dynamic shared memory ('shared NAME: [T];') but "
                        "the launch provides none"));
  EXPECT_TRUE(succeeded(checkLaunchConfig(*Saxpy, config(4, 256))));
  // The arguments, against the parameters.
  auto Buf = [](ScalarKind K) { return KernelArg::devicePointer(4096, K); };
  KernelArg Three[] = {KernelArg::i32(1), KernelArg::f32(1), Buf(ScalarKind::F32)};
  EXPECT_EQ(errorText(checkArguments(*Saxpy, Three)),
            "kernel 'saxpy' takes 4 arguments (n: i32, a: f32, x: ptr<f32>, y: ptr<f32>), 3 "
            "given");
  KernelArg WrongPointee[] = {KernelArg::i32(1), KernelArg::f32(1), Buf(ScalarKind::I32),
                              Buf(ScalarKind::F32)};
  EXPECT_EQ(errorText(checkArguments(*Saxpy, WrongPointee)),
            "kernel 'saxpy': argument 3 ('x: ptr<f32>') must point to f32, but a pointer to i32 "
            "was given");
  KernelArg PointerForScalar[] = {KernelArg::devicePointer(4096), KernelArg::f32(1),
                                  Buf(ScalarKind::F32), Buf(ScalarKind::F32)};
  EXPECT_EQ(errorText(checkArguments(*Saxpy, PointerForScalar)),
            "kernel 'saxpy': argument 1 ('n: i32') must be an i32, but a pointer was given");
  KernelArg Good[] = {KernelArg::i32(1), KernelArg::f32(1), Buf(ScalarKind::F32),
                      KernelArg::devicePointer(4096)};
  EXPECT_TRUE(succeeded(checkArguments(*Saxpy, Good)));
  // The kernel's name, against a loaded module.
  auto RT = hostRuntime();
  ASSERT_TRUE(RT);
  auto M = RT->load(A);
  ASSERT_TRUE(succeeded(M));
  EXPECT_EQ(errorText(findKernel(**M, "nope").takeError()),
            "no kernel 'nope' in the loaded module (kernels: saxpy, count, dyn)");
  auto K = findKernel(**M, "dyn");
  ASSERT_TRUE(succeeded(K));
  EXPECT_EQ(&*K, (*M)->getKernel("dyn"));
}

TEST(RuntimeTest, CreateRuntimeByTarget) {
  auto Host = createRuntime(TargetKind::Host);
  ASSERT_TRUE(succeeded(Host));
  EXPECT_EQ((*Host)->getTargetKind(), TargetKind::Host);
  // Without a driver: a clear error (CudaRuntimeTest covers the devices).
  ScopedEnv NoDriver("GRIDJIT_CUDA_DRIVER", "/nonexistent/libcuda.so.1");
  auto Cuda = createRuntime(TargetKind::NVPTX);
  ASSERT_TRUE(failed(Cuda));
  EXPECT_EQ(errorText(Cuda.takeError()), "no CUDA device: /nonexistent/libcuda.so.1 not found");
}

TEST(RuntimeTest, ThreadCountsAreBounded) {
  // More than limits::MaxThreads is an error, not an attempt to start that
  // many threads (which aborted in pthread_create); the bound itself works.
  RuntimeOptions O;
  O.NumThreads = 100000;
  auto Big = createRuntime(TargetKind::Host, O);
  ASSERT_TRUE(failed(Big));
  EXPECT_EQ(errorText(Big.takeError()),
            "host runtime: 100000 threads is more than the limit of 1024");
  CompilerOptions CO;
  CO.AsyncThreads = 100000;
  auto C = Compiler::create(CO);
  ASSERT_TRUE(failed(C));
  EXPECT_EQ(errorText(C.takeError()),
            "AsyncThreads: 100000 threads is more than the limit of 1024");
  O.NumThreads = 1024;
  auto Max = createRuntime(TargetKind::Host, O);
  ASSERT_TRUE(succeeded(Max));
  // HostRuntime::create itself, not only createRuntime.
  HostRuntimeOptions HO;
  HO.NumThreads = 1025;
  auto Direct = HostRuntime::create(HO);
  ASSERT_TRUE(failed(Direct));
  EXPECT_EQ(errorText(Direct.takeError()),
            "host runtime: 1025 threads is more than the limit of 1024");
}

/// A runtime of another target, as a CUDA runtime plugs in: it records
/// what the base class asks of it.
class RecordingRuntime final : public Runtime {
public:
  RecordingRuntime() : Runtime(TargetKind::NVPTX) {}
  struct Module final : LoadedModule {
    explicit Module(std::vector<KernelInfo> K) : LoadedModule(TargetKind::NVPTX, std::move(K)) {}
  };
  std::vector<uint64_t> Live;
  unsigned Frees = 0, Launches = 0;
  uint64_t NextAddr = 0x10000;

  llvm::Expected<std::unique_ptr<LoadedModule>> load(const Artifact &A) override {
    return std::make_unique<Module>(A.Kernels);
  }
  llvm::Error synchronize() override { return llvm::Error::success(); }

private:
  llvm::Expected<uint64_t> allocateMemory(uint64_t Bytes) override {
    Live.push_back(NextAddr);
    NextAddr += (Bytes + 255) / 256 * 256 + 256;
    return Live.back();
  }
  llvm::Error freeMemory(uint64_t Addr, uint64_t) override {
    ++Frees;
    llvm::erase(Live, Addr);
    return llvm::Error::success();
  }
  llvm::Error writeMemory(uint64_t, const void *, uint64_t) override {
    return llvm::Error::success();
  }
  llvm::Error readMemory(void *, uint64_t, uint64_t) override { return llvm::Error::success(); }
  llvm::Error launchKernel(LoadedModule &, const KernelInfo &K, const LaunchConfig &C,
                           llvm::ArrayRef<KernelArg> Args, const LaunchOptions &) override {
    if (llvm::Error E = checkLaunchConfig(K, C))
      return E;
    if (llvm::Error E = checkArguments(K, Args))
      return E;
    ++Launches;
    return llvm::Error::success();
  }
};

TEST(RuntimeTest, AnotherTargetPlugsInBehindTheSameInterface) {
  RecordingRuntime R;
  Runtime &RT = R;
  EXPECT_EQ(RT.getTargetKind(), TargetKind::NVPTX);
  {
    auto A = RT.allocate(100);
    auto B = RT.allocate(8);
    ASSERT_TRUE(succeeded(A));
    ASSERT_TRUE(succeeded(B));
    EXPECT_EQ(R.Live.size(), 2u);
    // Assigning over a handle frees what it held.
    *A = std::move(*B);
    EXPECT_EQ(R.Live.size(), 1u);
    EXPECT_EQ(R.Frees, 1u);
  }
  // Handles that go away free their memory.
  EXPECT_TRUE(R.Live.empty());
  EXPECT_EQ(R.Frees, 2u);

  auto M = RT.load(artifact());
  ASSERT_TRUE(succeeded(M));
  auto X = RT.allocate(16), Y = RT.allocate(16);
  ASSERT_TRUE(succeeded(X));
  ASSERT_TRUE(succeeded(Y));
  KernelArg Args[] = {KernelArg::i32(4), KernelArg::f32(1.0f),
                      KernelArg::buffer(*X, ScalarKind::F32), KernelArg::buffer(*Y)};
  ASSERT_TRUE(succeeded(RT.launch(**M, "saxpy", config(1, 4), Args)));
  EXPECT_EQ(R.Launches, 1u);
  // An unknown kernel never reaches the target.
  EXPECT_EQ(errorText(RT.launch(**M, "nope", config(1, 4), Args)),
            "no kernel 'nope' in the loaded module (kernels: saxpy, count, dyn)");
  EXPECT_EQ(R.Launches, 1u);

  // Modules do not cross targets.
  auto Host = hostRuntime();
  ASSERT_TRUE(Host);
  auto HM = Host->load(artifact());
  ASSERT_TRUE(succeeded(HM));
  EXPECT_EQ(errorText(RT.launch(**HM, "saxpy", config(1, 4), Args)),
            "cannot launch a kernel of a module loaded for target 'host' on the nvptx runtime");
  EXPECT_EQ(errorText(Host->launch(**M, "saxpy", config(1, 4), Args)),
            "cannot launch a kernel of a module loaded for target 'nvptx' on the host runtime");
  EXPECT_EQ(R.Launches, 1u);
}

// Every size a caller gives the runtime is checked before it is used: a
// buffer's (before the target rounds it up, as this one does), a copy's
// offset and length (never added where they could wrap), a configuration's
// products (never wrapped), an argument count. At 2^64 - 1, 2^63 and the
// largest value that passes.
TEST(RuntimeTest, SizesAreCheckedBeforeTheyAreUsed) {
  RecordingRuntime R;
  Runtime &RT = R;
  constexpr uint64_t Max64 = UINT64_MAX, Pow63 = uint64_t(1) << 63;
  for (uint64_t Bytes : {Max64, Max64 - 255, Pow63, limits::MaxBufferBytes + 1}) {
    auto B = RT.allocate(Bytes);
    ASSERT_TRUE(failed(B)) << Bytes;
    llvm::Error E = B.takeError();
    EXPECT_EQ(peekErrorKind(E), ErrorKind::InvalidArgument);
    EXPECT_EQ(errorText(std::move(E)),
              "cannot allocate a device buffer of " + std::to_string(Bytes) +
                  " bytes: more than the limit of 4611686018427387904 bytes (2^62) a buffer may "
                  "have");
  }
  EXPECT_TRUE(R.Live.empty()) << "the target's allocator was asked";
  // The limit itself reaches the target (which has it here).
  auto Largest = RT.allocate(limits::MaxBufferBytes);
  ASSERT_TRUE(succeeded(Largest));
  EXPECT_EQ(Largest->size(), limits::MaxBufferBytes);
  char Host[8] = {};
  for (auto [Offset, Bytes] : {std::pair{Max64, uint64_t(1)},
                               {uint64_t(1), Max64},
                               {Pow63, Pow63},
                               {Max64, Max64},
                               {limits::MaxBufferBytes, uint64_t(1)}}) {
    EXPECT_THAT(errorText(RT.copyToDevice(*Largest, Host, Bytes, Offset)),
                HasSubstr("are outside the buffer of 4611686018427387904 bytes"));
    EXPECT_THAT(errorText(RT.copyFromDevice(Host, *Largest, Bytes, Offset)),
                HasSubstr("are outside the buffer of 4611686018427387904 bytes"));
  }
  EXPECT_TRUE(succeeded(RT.copyToDevice(*Largest, Host, 8, limits::MaxBufferBytes - 8)));
  EXPECT_TRUE(succeeded(RT.copyFromDevice(Host, *Largest, 0, limits::MaxBufferBytes)));

  // Products of dimensions saturate instead of wrapping.
  EXPECT_EQ((Dim3{UINT32_MAX, UINT32_MAX, UINT32_MAX}.count()), Max64);
  EXPECT_EQ((Dim3{1u << 22, 1u << 22, 1u << 20}.count()), Max64); // 2^64: wrapped to 0
  EXPECT_EQ((Dim3{1u << 22, 1u << 22, (1u << 20) - 1}.count()), Max64 - (uint64_t(1) << 44) + 1);
  EXPECT_EQ((Dim3{UINT32_MAX, UINT32_MAX, 1}.count()), uint64_t(UINT32_MAX) * UINT32_MAX);
  const KernelInfo *Saxpy = artifact().getKernel("saxpy");
  ASSERT_TRUE(Saxpy);
  LaunchConfig Wraps = config(1, 1u << 22);
  Wraps.Block.Y = 1u << 22;
  Wraps.Block.Z = 1u << 20;
  EXPECT_EQ(errorText(checkLaunchConfig(*Saxpy, Wraps)),
            "kernel 'saxpy' launched with grid (1, 1, 1) and block (4194304, 4194304, 1048576): a "
            "block of 18446744073709551616 threads exceeds the limit of 1024 threads per block");
  LaunchConfig Widest = config(limits::MaxGridDim[0], 1024);
  Widest.Grid.Y = limits::MaxGridDim[1];
  Widest.Grid.Z = limits::MaxGridDim[2];
  EXPECT_TRUE(succeeded(checkLaunchConfig(*Saxpy, Widest)));

  // Argument counts.
  for (uint64_t N : {Max64, Pow63, uint64_t(5)})
    EXPECT_EQ(errorText(checkArgumentCount(*Saxpy, N)),
              "kernel 'saxpy' takes 4 arguments (n: i32, a: f32, x: ptr<f32>, y: ptr<f32>), " +
                  std::to_string(N) + " given");
  EXPECT_TRUE(succeeded(checkArgumentCount(*Saxpy, 4)));
}

} // namespace
