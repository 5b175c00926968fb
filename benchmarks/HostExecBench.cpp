//===- HostExecBench.cpp - Host kernels against plain C++ loops -----------===//
//
// Part of gridjit. Runs five kernels on the host target and the same
// computations as plain C++ loops compiled into this binary (-O3, no
// fast-math, -ffp-contract=off like KIR, -march=native like the host
// target's code), on the same data in the same run. Each plain loop is the
// fastest simple one that gives the kernel's result bit for bit (checked
// before anything is timed):
//
//   saxpy    y = a * x + y over 2^24 floats, guarded by `if i < n` (no
//            barriers); also as a grid-stride loop (`saxpy_stride`, the
//            form Numba's and NVIDIA's guides teach: 64 blocks of 256
//            threads, each thread stepping by the grid's 16384 threads),
//            reported as "GridStride" against the same plain loop
//   reduce   a 256-wide shared-memory tree sum with sync_threads(), one
//            partial sum per block of 256 (the plain loop adds in the same
//            tree order, which vectorises)
//   matmul   C = A * B for 256 x 256 floats, 16 x 16 tiles in shared
//            memory with two sync_threads() per tile (the plain loop is
//            i-k-j, which vectorises; the same sums in the same order)
//   stencil  a 5-point stencil on a 2048 x 2048 grid of floats, 64 x 4
//            blocks, guarded by `if row >= 1 && row < h - 1 && col >= 1
//            && col < w - 1` (the plain loop runs over the interior)
//   histo    a 256-bin histogram of 2^24 bytes: per-block counts with
//            shared-memory atomics, then one global atomic per bin (the
//            plain loop counts serially)
//
// Each gridjit benchmark runs with 1 and with 2 worker threads. When the
// build finds OpenCL (Debian: pocl-opencl-icd and ocl-icd-opencl-dev), the
// same kernels written in OpenCL C run through PoCL too, on sub-devices of
// 1 and 2 compute units. After the usual table the program prints each
// run's throughput relative to its plain loop (plain time / its time:
// above 1 means faster than the plain loop).
//
//   bench-HostExecBench [--benchmark_filter=...] [--benchmark_min_time=...]
//                       [--benchmark_repetitions=N]   (ratios of the medians)
//                       [--znver3]  (kernels and plain loops compiled for an
//                                    AVX2 Zen 3: what such a machine runs,
//                                    on any machine that can run it)
//                       [--thread-major]  (kernels compiled with every loop
//                                    run thread by thread, not iteration-
//                                    major: HostTargetOptions::IterationMajor)
//
//===----------------------------------------------------------------------===//

#include "MedianReporter.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#ifdef GRIDJIT_HAVE_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#endif

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

using namespace gridjit;

namespace {

constexpr int SaxpyN = 1 << 24;
constexpr int ReduceN = 1 << 24;
constexpr int ReduceBlock = 256;
constexpr int MatN = 256;
constexpr int StencilW = 2048, StencilH = 2048;
constexpr int StencilBX = 64, StencilBY = 4;
constexpr int HistoN = 1 << 24;
constexpr int HistoBins = 256;
constexpr int HistoGrid = 64, HistoBlock = 256;

const char *SaxpyKir = R"(
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}

kernel saxpy_stride(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  for var i: i32 = block_idx.x * block_dim.x + thread_idx.x; i < n; i += block_dim.x * grid_dim.x {
    y[i] = a * x[i] + y[i];
  }
}
)";

/// The grid-stride saxpy's launch: far fewer threads than elements.
constexpr int StrideGrid = 64, StrideBlock = 256; // runSaxpy's block

const char *ReduceKir = R"(
kernel reduce(x: ptr<f32>, partial: ptr<f32>) {
  shared s: [f32; 256];
  let t: i32 = thread_idx.x;
  s[t] = x[block_idx.x * 256 + t];
  sync_threads();
  var stride: i32 = 128;
  while stride > 0 {
    if t < stride {
      s[t] += s[t + stride];
    }
    sync_threads();
    stride >>= 1;
  }
  if t == 0 {
    partial[block_idx.x] = s[0];
  }
}
)";

const char *MatmulKir = R"(
const TILE: i32 = 16;
kernel matmul(n: i32, a: ptr<f32>, b: ptr<f32>, c: ptr<f32>) {
  shared ta: [f32; 256];
  shared tb: [f32; 256];
  let tx: i32 = thread_idx.x;
  let ty: i32 = thread_idx.y;
  let row: i32 = block_idx.y * TILE + ty;
  let col: i32 = block_idx.x * TILE + tx;
  var acc: f32 = 0.0;
  for t in 0..n / TILE {
    ta[ty * TILE + tx] = a[row * n + t * TILE + tx];
    tb[ty * TILE + tx] = b[(t * TILE + ty) * n + col];
    sync_threads();
    for k in 0..TILE {
      acc += ta[ty * TILE + k] * tb[k * TILE + tx];
    }
    sync_threads();
  }
  c[row * n + col] = acc;
}
)";

const char *StencilKir = R"(
kernel stencil(w: i32, h: i32, src: ptr<f32>, dst: ptr<f32>) {
  let col: i32 = block_idx.x * block_dim.x + thread_idx.x;
  let row: i32 = block_idx.y * block_dim.y + thread_idx.y;
  if row >= 1 && row < h - 1 && col >= 1 && col < w - 1 {
    let i: i32 = row * w + col;
    dst[i] = 0.5 * src[i] + 0.125 * (((src[i - 1] + src[i + 1]) + src[i - w]) + src[i + w]);
  }
}
)";

const char *HistoKir = R"(
const BINS: i32 = 256;
kernel histo(n: i32, data: ptr<u8>, hist: ptr<u32>) {
  shared counts: [u32; BINS];
  let tid: i32 = thread_idx.x;
  for b in tid..BINS step block_dim.x {
    counts[b] = 0;
  }
  sync_threads();
  let stride: i32 = block_dim.x * grid_dim.x;
  for i in block_idx.x * block_dim.x + tid..n step stride {
    atomic_add(&counts[data[i] as i32], 1);
  }
  sync_threads();
  for b in tid..BINS step block_dim.x {
    if counts[b] != 0 {
      atomic_add(&hist[b], counts[b]);
    }
  }
}
)";

//===----------------------------------------------------------------------===//
// The plain loops
//===----------------------------------------------------------------------===//

// Compiled for this machine (-march=native)...
namespace native {
#include "HostExecPlain.inc"
} // namespace native

// ...and for an AVX2 Zen 3, for --znver3 (the attribute replaces the
// CPU; AVX-512, which -march=native enables, is switched off by hand).
#pragma clang attribute push(__attribute__((target("arch=znver3,no-avx512f"))), apply_to = function)
namespace znver3 {
#include "HostExecPlain.inc"
} // namespace znver3
#pragma clang attribute pop

/// The plain loops in use.
struct PlainLoops {
  void (*Saxpy)(int, float, const float *, float *);
  void (*Reduce)(int, const float *, float *);
  void (*Matmul)(int, const float *, const float *, float *);
  void (*Stencil)(int, int, const float *, float *);
  void (*Histo)(int, const uint8_t *, uint32_t *);
};
PlainLoops &plain() {
  static PlainLoops P = {native::Saxpy, native::Reduce, native::Matmul, native::Stencil,
                         native::Histo};
  return P;
}

//===----------------------------------------------------------------------===//
// Shared state: data, compiled modules, one runtime per thread count
//===----------------------------------------------------------------------===//

[[noreturn]] void die(llvm::Error E) {
  llvm::errs() << "bench-HostExecBench: " << llvm::toString(std::move(E)) << "\n";
  std::exit(1);
}

template <typename T> T check(llvm::Expected<T> V) {
  if (!V)
    die(V.takeError());
  return std::move(*V);
}

std::vector<float> pattern(size_t N, unsigned Seed) {
  std::vector<float> V(N);
  uint32_t S = Seed * 2654435761u + 1;
  for (float &F : V) {
    S = S * 1664525u + 1013904223u;
    F = float(S >> 8) * (1.0f / 16777216.0f); // [0, 1)
  }
  return V;
}

/// Bytes with a skewed distribution (the high bits of a product of two
/// uniform values), so that some bins are hot, as in real data.
std::vector<uint8_t> bytes(size_t N, unsigned Seed) {
  std::vector<uint8_t> V(N);
  uint32_t S = Seed * 2654435761u + 1;
  for (uint8_t &Byte : V) {
    S = S * 1664525u + 1013904223u;
    uint32_t A = S >> 24;
    S = S * 1664525u + 1013904223u;
    Byte = uint8_t((A * (S >> 24)) >> 8);
  }
  return V;
}

/// The CPU the kernels are compiled for (empty: this one; --znver3).
std::string &kernelCPU() {
  static std::string CPU;
  return CPU;
}

/// False with --thread-major.
bool &iterationMajor() {
  static bool On = true;
  return On;
}

struct Kernels {
  std::unique_ptr<HostRuntime> RT;
  std::unique_ptr<LoadedModule> Saxpy, Reduce, Matmul, Stencil, Histo;
};

Artifact compileKir(const Target &T, const char *Source, const char *Name) {
  auto M = check(parseAndVerify(Source, Name));
  return check(T.compile(*M, CompileOptions()));
}

Kernels &kernelsFor(unsigned Threads) {
  static std::map<unsigned, Kernels> All;
  auto It = All.find(Threads);
  if (It != All.end())
    return It->second;
  static std::unique_ptr<Target> T = [] {
    HostTargetOptions O;
    O.CPU = kernelCPU();
    O.IterationMajor = iterationMajor();
    return check(createHostTarget(O));
  }();
  static Artifact Saxpy = compileKir(*T, SaxpyKir, "saxpy.kir");
  static Artifact Reduce = compileKir(*T, ReduceKir, "reduce.kir");
  static Artifact Matmul = compileKir(*T, MatmulKir, "matmul.kir");
  static Artifact Stencil = compileKir(*T, StencilKir, "stencil.kir");
  static Artifact Histo = compileKir(*T, HistoKir, "histo.kir");
  Kernels &K = All[Threads];
  HostRuntimeOptions O;
  O.NumThreads = Threads;
  K.RT = check(HostRuntime::create(O));
  K.Saxpy = check(K.RT->load(Saxpy));
  K.Reduce = check(K.RT->load(Reduce));
  K.Matmul = check(K.RT->load(Matmul));
  K.Stencil = check(K.RT->load(Stencil));
  K.Histo = check(K.RT->load(Histo));
  return K;
}

struct Data {
  std::vector<float> X = pattern(SaxpyN, 1), Y = pattern(SaxpyN, 2);
  std::vector<float> RX = pattern(ReduceN, 3), Partial = std::vector<float>(ReduceN / ReduceBlock);
  std::vector<float> A = pattern(MatN * MatN, 4), B = pattern(MatN * MatN, 5),
                     C = std::vector<float>(MatN * MatN);
  std::vector<float> SSrc = pattern(size_t(StencilW) * StencilH, 6),
                     SDst = std::vector<float>(size_t(StencilW) * StencilH);
  std::vector<uint8_t> HData = bytes(HistoN, 7);
  std::vector<uint32_t> Hist = std::vector<uint32_t>(HistoBins);
};
Data &data() {
  static Data D;
  return D;
}

//===----------------------------------------------------------------------===//
// Benchmarks
//===----------------------------------------------------------------------===//

constexpr float SaxpyA = 1e-7f; // keeps y bounded over many iterations

void BM_Saxpy_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plain().Saxpy(SaxpyN, SaxpyA, D.X.data(), D.Y.data());
    benchmark::ClobberMemory();
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * SaxpyN * 12);
}

/// Launches saxpy kernel \p Kernel over the whole array in blocks of 256:
/// \p Blocks of them.
void runSaxpy(benchmark::State &S, const char *Kernel, unsigned Blocks) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C;
  C.Grid.X = Blocks;
  C.Block.X = 256;
  KernelArg Args[] = {KernelArg::i32(SaxpyN), KernelArg::f32(SaxpyA),
                      KernelArg::pointer(D.X.data()), KernelArg::pointer(D.Y.data())};
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Saxpy, Kernel, C, Args))
      die(std::move(E));
  S.SetBytesProcessed(int64_t(S.iterations()) * SaxpyN * 12);
}

void BM_Saxpy_Gridjit(benchmark::State &S) { runSaxpy(S, "saxpy", SaxpyN / 256); }
void BM_Saxpy_GridStride(benchmark::State &S) { runSaxpy(S, "saxpy_stride", StrideGrid); }

// The cost of LaunchOptions::CatchFaults on a small launch (64 blocks of
// 32 threads, on 2 threads), where a per-call cost would show most: Arg 0
// is the baseline with faults not caught, Arg 1 catches them.
void BM_SmallLaunch_CatchFaults(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(2);
  LaunchConfig C;
  C.Grid.X = 64;
  C.Block.X = 32;
  KernelArg Args[] = {KernelArg::i32(64 * 32), KernelArg::f32(SaxpyA),
                      KernelArg::pointer(D.X.data()), KernelArg::pointer(D.Y.data())};
  LaunchOptions O;
  O.CatchFaults = S.range(0) != 0;
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Saxpy, "saxpy", C, Args, O))
      die(std::move(E));
}

void BM_Reduce_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plain().Reduce(ReduceN, D.RX.data(), D.Partial.data());
    benchmark::ClobberMemory();
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * ReduceN * 4);
}

void BM_Reduce_Gridjit(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C;
  C.Grid.X = ReduceN / ReduceBlock;
  C.Block.X = ReduceBlock;
  KernelArg Args[] = {KernelArg::pointer(D.RX.data()), KernelArg::pointer(D.Partial.data())};
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Reduce, "reduce", C, Args))
      die(std::move(E));
  S.SetBytesProcessed(int64_t(S.iterations()) * ReduceN * 4);
}

void BM_Matmul_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plain().Matmul(MatN, D.A.data(), D.B.data(), D.C.data());
    benchmark::ClobberMemory();
  }
  S.SetItemsProcessed(int64_t(S.iterations()) * 2 * MatN * MatN * MatN); // flops
}

void BM_Matmul_Gridjit(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C;
  C.Grid.X = C.Grid.Y = MatN / 16;
  C.Block.X = C.Block.Y = 16;
  KernelArg Args[] = {KernelArg::i32(MatN), KernelArg::pointer(D.A.data()),
                      KernelArg::pointer(D.B.data()), KernelArg::pointer(D.C.data())};
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Matmul, "matmul", C, Args))
      die(std::move(E));
  S.SetItemsProcessed(int64_t(S.iterations()) * 2 * MatN * MatN * MatN);
}

LaunchConfig stencilConfig() {
  LaunchConfig C;
  C.Grid.X = StencilW / StencilBX;
  C.Grid.Y = StencilH / StencilBY;
  C.Block.X = StencilBX;
  C.Block.Y = StencilBY;
  return C;
}

void BM_Stencil_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plain().Stencil(StencilW, StencilH, D.SSrc.data(), D.SDst.data());
    benchmark::ClobberMemory();
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * StencilW * StencilH * 8);
}

void BM_Stencil_Gridjit(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C = stencilConfig();
  KernelArg Args[] = {KernelArg::i32(StencilW), KernelArg::i32(StencilH),
                      KernelArg::pointer(D.SSrc.data()), KernelArg::pointer(D.SDst.data())};
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Stencil, "stencil", C, Args))
      die(std::move(E));
  S.SetBytesProcessed(int64_t(S.iterations()) * StencilW * StencilH * 8);
}

void BM_Histo_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plain().Histo(HistoN, D.HData.data(), D.Hist.data());
    benchmark::ClobberMemory();
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * HistoN);
}

void BM_Histo_Gridjit(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C;
  C.Grid.X = HistoGrid;
  C.Block.X = HistoBlock;
  KernelArg Args[] = {KernelArg::i32(HistoN), KernelArg::pointer(D.HData.data()),
                      KernelArg::pointer(D.Hist.data())};
  for (auto _ : S) {
    // The kernel adds to the histogram; the plain loop's clearing is timed
    // too.
    std::fill(D.Hist.begin(), D.Hist.end(), 0);
    if (llvm::Error E = K.RT->launch(*K.Histo, "histo", C, Args))
      die(std::move(E));
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * HistoN);
}

BENCHMARK(BM_Saxpy_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Saxpy_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Saxpy_GridStride)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_SmallLaunch_CatchFaults)->Arg(0)->Arg(1)->UseRealTime()->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_Reduce_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reduce_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stencil_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stencil_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Histo_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Histo_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

#ifdef GRIDJIT_HAVE_OPENCL
//===----------------------------------------------------------------------===//
// The same kernels in OpenCL C, through PoCL (or whichever CPU OpenCL
// implementation the ICD loader finds first)
//===----------------------------------------------------------------------===//

const char *OpenCLSource = R"(
#pragma OPENCL FP_CONTRACT OFF
__kernel void saxpy(int n, float a, __global const float *x, __global float *y) {
  int i = get_global_id(0);
  if (i < n) y[i] = a * x[i] + y[i];
}
__kernel void reduce(__global const float *x, __global float *partial) {
  __local float s[256];
  int t = get_local_id(0);
  s[t] = x[get_group_id(0) * 256 + t];
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int stride = 128; stride > 0; stride >>= 1) {
    if (t < stride) s[t] += s[t + stride];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (t == 0) partial[get_group_id(0)] = s[0];
}
__kernel void matmul(int n, __global const float *a, __global const float *b,
                     __global float *c) {
  __local float ta[256];
  __local float tb[256];
  int tx = get_local_id(0), ty = get_local_id(1);
  int row = get_group_id(1) * 16 + ty, col = get_group_id(0) * 16 + tx;
  float acc = 0.0f;
  for (int t = 0; t < n / 16; ++t) {
    ta[ty * 16 + tx] = a[row * n + t * 16 + tx];
    tb[ty * 16 + tx] = b[(t * 16 + ty) * n + col];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (int k = 0; k < 16; ++k) acc += ta[ty * 16 + k] * tb[k * 16 + tx];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  c[row * n + col] = acc;
}
__kernel void stencil(int w, int h, __global const float *src, __global float *dst) {
  int col = get_global_id(0), row = get_global_id(1);
  if (row >= 1 && row < h - 1 && col >= 1 && col < w - 1) {
    int i = row * w + col;
    dst[i] = 0.5f * src[i] + 0.125f * (((src[i - 1] + src[i + 1]) + src[i - w]) + src[i + w]);
  }
}
__kernel void histo(int n, __global const uchar *data, __global uint *hist) {
  __local uint counts[256];
  int tid = get_local_id(0);
  for (int b = tid; b < 256; b += get_local_size(0)) counts[b] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  int stride = get_local_size(0) * get_num_groups(0);
  for (int i = get_group_id(0) * get_local_size(0) + tid; i < n; i += stride)
    atomic_inc(&counts[data[i]]);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int b = tid; b < 256; b += get_local_size(0))
    if (counts[b] != 0) atomic_add(&hist[b], counts[b]);
}
)";

/// One OpenCL device (a sub-device of N compute units when the platform
/// can partition) with the five kernels built, and buffers over the same
/// host arrays as the other benchmarks (CL_MEM_USE_HOST_PTR: no copies on
/// a CPU device).
struct OpenCL {
  cl_device_id Device = nullptr;
  cl_context Context = nullptr;
  cl_command_queue Queue = nullptr;
  cl_program Program = nullptr;
  cl_kernel Saxpy = nullptr, Reduce = nullptr, Matmul = nullptr, Stencil = nullptr, Histo = nullptr;
  cl_mem X, Y, RX, Partial, A, B, C, SSrc, SDst, HData, Hist;
  std::string Problem; ///< why it is not available
  unsigned ComputeUnits = 0;
};

OpenCL *openCLFor(unsigned Units) {
  static std::map<unsigned, std::unique_ptr<OpenCL>> All;
  std::unique_ptr<OpenCL> &Slot = All[Units];
  if (Slot)
    return Slot->Problem.empty() ? Slot.get() : nullptr;
  Slot = std::make_unique<OpenCL>();
  OpenCL &O = *Slot;
  cl_platform_id Platforms[8];
  cl_uint NumPlatforms = 0;
  cl_device_id Root = nullptr;
  if (clGetPlatformIDs(8, Platforms, &NumPlatforms) == CL_SUCCESS)
    for (cl_uint P = 0; P < NumPlatforms && !Root; ++P)
      if (clGetDeviceIDs(Platforms[P], CL_DEVICE_TYPE_CPU, 1, &Root, nullptr) != CL_SUCCESS)
        Root = nullptr;
  if (!Root) {
    O.Problem = "no OpenCL CPU device";
    return nullptr;
  }
  // A sub-device of exactly `Units` compute units: PoCL then runs work
  // groups on that many threads (nothing in the environment is changed).
  cl_device_partition_property Props[] = {CL_DEVICE_PARTITION_BY_COUNTS,
                                          cl_device_partition_property(Units),
                                          CL_DEVICE_PARTITION_BY_COUNTS_LIST_END, 0};
  cl_uint Got = 0;
  if (clCreateSubDevices(Root, Props, 1, &O.Device, &Got) != CL_SUCCESS || Got != 1) {
    O.Problem = "cannot make a sub-device of " + std::to_string(Units) + " compute units";
    return nullptr;
  }
  clGetDeviceInfo(O.Device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(cl_uint), &O.ComputeUnits, nullptr);
  cl_int Err;
  O.Context = clCreateContext(nullptr, 1, &O.Device, nullptr, nullptr, &Err);
  O.Queue = clCreateCommandQueue(O.Context, O.Device, 0, &Err);
  O.Program = clCreateProgramWithSource(O.Context, 1, &OpenCLSource, nullptr, &Err);
  if (clBuildProgram(O.Program, 1, &O.Device, "", nullptr, nullptr) != CL_SUCCESS) {
    char Log[4096] = {};
    clGetProgramBuildInfo(O.Program, O.Device, CL_PROGRAM_BUILD_LOG, sizeof(Log) - 1, Log, nullptr);
    O.Problem = std::string("OpenCL build failed: ") + Log;
    return nullptr;
  }
  O.Saxpy = clCreateKernel(O.Program, "saxpy", &Err);
  O.Reduce = clCreateKernel(O.Program, "reduce", &Err);
  O.Matmul = clCreateKernel(O.Program, "matmul", &Err);
  O.Stencil = clCreateKernel(O.Program, "stencil", &Err);
  O.Histo = clCreateKernel(O.Program, "histo", &Err);
  Data &D = data();
  auto Buf = [&](auto &V) {
    return clCreateBuffer(O.Context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                          V.size() * sizeof(V[0]), V.data(), &Err);
  };
  O.X = Buf(D.X), O.Y = Buf(D.Y), O.RX = Buf(D.RX), O.Partial = Buf(D.Partial);
  O.A = Buf(D.A), O.B = Buf(D.B), O.C = Buf(D.C);
  O.SSrc = Buf(D.SSrc), O.SDst = Buf(D.SDst), O.HData = Buf(D.HData), O.Hist = Buf(D.Hist);
  int N = SaxpyN, M = MatN, SW = StencilW, SH = StencilH, HN = HistoN;
  float A = SaxpyA;
  clSetKernelArg(O.Saxpy, 0, sizeof(int), &N);
  clSetKernelArg(O.Saxpy, 1, sizeof(float), &A);
  clSetKernelArg(O.Saxpy, 2, sizeof(cl_mem), &O.X);
  clSetKernelArg(O.Saxpy, 3, sizeof(cl_mem), &O.Y);
  clSetKernelArg(O.Reduce, 0, sizeof(cl_mem), &O.RX);
  clSetKernelArg(O.Reduce, 1, sizeof(cl_mem), &O.Partial);
  clSetKernelArg(O.Matmul, 0, sizeof(int), &M);
  clSetKernelArg(O.Matmul, 1, sizeof(cl_mem), &O.A);
  clSetKernelArg(O.Matmul, 2, sizeof(cl_mem), &O.B);
  clSetKernelArg(O.Matmul, 3, sizeof(cl_mem), &O.C);
  clSetKernelArg(O.Stencil, 0, sizeof(int), &SW);
  clSetKernelArg(O.Stencil, 1, sizeof(int), &SH);
  clSetKernelArg(O.Stencil, 2, sizeof(cl_mem), &O.SSrc);
  clSetKernelArg(O.Stencil, 3, sizeof(cl_mem), &O.SDst);
  clSetKernelArg(O.Histo, 0, sizeof(int), &HN);
  clSetKernelArg(O.Histo, 1, sizeof(cl_mem), &O.HData);
  clSetKernelArg(O.Histo, 2, sizeof(cl_mem), &O.Hist);
  // PoCL compiles a kernel for its launch dimensions at the first launch:
  // do that before anything is timed.
  size_t G1 = SaxpyN, L1 = 256, G2[] = {MatN, MatN}, L2[] = {16, 16};
  clEnqueueNDRangeKernel(O.Queue, O.Saxpy, 1, nullptr, &G1, &L1, 0, nullptr, nullptr);
  G1 = ReduceN;
  L1 = ReduceBlock;
  clEnqueueNDRangeKernel(O.Queue, O.Reduce, 1, nullptr, &G1, &L1, 0, nullptr, nullptr);
  clEnqueueNDRangeKernel(O.Queue, O.Matmul, 2, nullptr, G2, L2, 0, nullptr, nullptr);
  size_t SG[] = {StencilW, StencilH}, SL[] = {StencilBX, StencilBY};
  clEnqueueNDRangeKernel(O.Queue, O.Stencil, 2, nullptr, SG, SL, 0, nullptr, nullptr);
  G1 = size_t(HistoGrid) * HistoBlock;
  L1 = HistoBlock;
  clEnqueueNDRangeKernel(O.Queue, O.Histo, 1, nullptr, &G1, &L1, 0, nullptr, nullptr);
  if (clFinish(O.Queue) != CL_SUCCESS) {
    O.Problem = "OpenCL warm-up launch failed";
    return nullptr;
  }
  return &O;
}

void runOpenCL(benchmark::State &S, cl_kernel OpenCL::*Which, unsigned Dims, const size_t *Global,
               const size_t *Local, std::vector<uint32_t> *Clear = nullptr) {
  OpenCL *O = openCLFor(unsigned(S.range(0)));
  if (!O) {
    S.SkipWithError("OpenCL (PoCL) is not available");
    return;
  }
  for (auto _ : S) {
    if (Clear) // the buffer uses the host's memory: cleared as the others clear it
      std::fill(Clear->begin(), Clear->end(), 0);
    if (clEnqueueNDRangeKernel(O->Queue, O->*Which, Dims, nullptr, Global, Local, 0, nullptr,
                               nullptr) != CL_SUCCESS ||
        clFinish(O->Queue) != CL_SUCCESS) {
      S.SkipWithError("OpenCL launch failed");
      return;
    }
  }
}

void BM_Saxpy_PoCL(benchmark::State &S) {
  size_t G = SaxpyN, L = 256;
  runOpenCL(S, &OpenCL::Saxpy, 1, &G, &L);
  S.SetBytesProcessed(int64_t(S.iterations()) * SaxpyN * 12);
}
void BM_Reduce_PoCL(benchmark::State &S) {
  size_t G = ReduceN, L = ReduceBlock;
  runOpenCL(S, &OpenCL::Reduce, 1, &G, &L);
  S.SetBytesProcessed(int64_t(S.iterations()) * ReduceN * 4);
}
void BM_Matmul_PoCL(benchmark::State &S) {
  size_t G[] = {MatN, MatN}, L[] = {16, 16};
  runOpenCL(S, &OpenCL::Matmul, 2, G, L);
  S.SetItemsProcessed(int64_t(S.iterations()) * 2 * MatN * MatN * MatN);
}
void BM_Stencil_PoCL(benchmark::State &S) {
  size_t G[] = {StencilW, StencilH}, L[] = {StencilBX, StencilBY};
  runOpenCL(S, &OpenCL::Stencil, 2, G, L);
  S.SetBytesProcessed(int64_t(S.iterations()) * StencilW * StencilH * 8);
}
void BM_Histo_PoCL(benchmark::State &S) {
  size_t G = size_t(HistoGrid) * HistoBlock, L = HistoBlock;
  runOpenCL(S, &OpenCL::Histo, 1, &G, &L, &data().Hist);
  S.SetBytesProcessed(int64_t(S.iterations()) * HistoN);
}
BENCHMARK(BM_Saxpy_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reduce_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Stencil_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Histo_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
#endif

/// Checks that the kernels compute exactly what the plain loops compute
/// (the same bits) before anything is timed.
void verify() {
  Data &D = data();
  Kernels &K = kernelsFor(1);
  auto Launch = [&](LoadedModule &M, const char *Name, const LaunchConfig &C,
                    llvm::ArrayRef<KernelArg> Args) {
    if (llvm::Error E = K.RT->launch(M, Name, C, Args))
      die(std::move(E));
  };
  std::vector<float> Y1 = D.Y, Y2 = D.Y;
  plain().Saxpy(SaxpyN, 2.0f, D.X.data(), Y1.data());
  LaunchConfig C;
  C.Grid.X = SaxpyN / 256;
  C.Block.X = 256;
  Launch(*K.Saxpy, "saxpy", C,
         {KernelArg::i32(SaxpyN), KernelArg::f32(2.0f), KernelArg::pointer(D.X.data()),
          KernelArg::pointer(Y2.data())});
  std::vector<float> Y3 = D.Y;
  C.Grid.X = StrideGrid;
  C.Block.X = StrideBlock;
  Launch(*K.Saxpy, "saxpy_stride", C,
         {KernelArg::i32(SaxpyN), KernelArg::f32(2.0f), KernelArg::pointer(D.X.data()),
          KernelArg::pointer(Y3.data())});
  std::vector<float> P1(D.Partial.size()), P2(D.Partial.size());
  plain().Reduce(ReduceN, D.RX.data(), P1.data());
  C.Grid.X = ReduceN / ReduceBlock;
  C.Block.X = ReduceBlock;
  Launch(*K.Reduce, "reduce", C, {KernelArg::pointer(D.RX.data()), KernelArg::pointer(P2.data())});
  std::vector<float> C1(MatN * MatN), C2(MatN * MatN);
  plain().Matmul(MatN, D.A.data(), D.B.data(), C1.data());
  C.Grid.X = C.Grid.Y = MatN / 16;
  C.Block.X = C.Block.Y = 16;
  Launch(*K.Matmul, "matmul", C,
         {KernelArg::i32(MatN), KernelArg::pointer(D.A.data()), KernelArg::pointer(D.B.data()),
          KernelArg::pointer(C2.data())});
  std::vector<float> S1(D.SSrc.size()), S2(D.SSrc.size());
  plain().Stencil(StencilW, StencilH, D.SSrc.data(), S1.data());
  Launch(*K.Stencil, "stencil", stencilConfig(),
         {KernelArg::i32(StencilW), KernelArg::i32(StencilH), KernelArg::pointer(D.SSrc.data()),
          KernelArg::pointer(S2.data())});
  std::vector<uint32_t> H1(HistoBins), H2(HistoBins);
  plain().Histo(HistoN, D.HData.data(), H1.data());
  C = LaunchConfig();
  C.Grid.X = HistoGrid;
  C.Block.X = HistoBlock;
  Launch(
      *K.Histo, "histo", C,
      {KernelArg::i32(HistoN), KernelArg::pointer(D.HData.data()), KernelArg::pointer(H2.data())});
  auto Same = [](const auto &A, const auto &B) {
    return A.size() == B.size() && std::memcmp(A.data(), B.data(), A.size() * sizeof(A[0])) == 0;
  };
  const char *Bad = !Same(Y1, Y2)   ? "saxpy"
                    : !Same(Y1, Y3) ? "saxpy_stride"
                    : !Same(P1, P2) ? "reduce"
                    : !Same(C1, C2) ? "matmul"
                    : !Same(S1, S2) ? "stencil"
                    : !Same(H1, H2) ? "histo"
                                    : nullptr;
  if (Bad) {
    std::fprintf(stderr, "bench-HostExecBench: gridjit and the plain loop disagree on %s\n", Bad);
    std::exit(1);
  }
}

/// The console table, then each gridjit run's throughput relative to its
/// plain loop.
class RatioReporter : public bench::MedianReporter {
public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nthroughput relative to the plain C++ loop (plain time / gridjit time):\n");
    for (const char *K : {"Saxpy", "Reduce", "Matmul", "Stencil", "Histo"}) {
      auto Plain = Seconds.find(std::string("BM_") + K + "_Plain/real_time");
      if (Plain == Seconds.end())
        continue;
      for (const char *Who : {"Gridjit", "GridStride", "PoCL"})
        for (int T : {1, 2}) {
          auto G = Seconds.find(std::string("BM_") + K + "_" + Who + "/" + std::to_string(T) +
                                "/real_time");
          if (G != Seconds.end())
            std::printf("  %-7s %-8s %d thread%s  %.2fx\n", K, Who, T, T == 1 ? " " : "s",
                        Plain->second / G->second);
        }
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  // Our flags; Google Benchmark rejects flags it does not know.
  int Kept = 1;
  for (int I = 1; I < argc; ++I) {
    std::string_view A = argv[I];
    if (A == "--znver3") {
      kernelCPU() = "znver3";
      plain() = {znver3::Saxpy, znver3::Reduce, znver3::Matmul, znver3::Stencil, znver3::Histo};
    } else if (A == "--thread-major") {
      iterationMajor() = false;
    } else {
      argv[Kept++] = argv[I];
    }
  }
  argc = Kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  verify();
  RatioReporter R;
  benchmark::RunSpecifiedBenchmarks(&R);
  benchmark::Shutdown();
  return 0;
}
