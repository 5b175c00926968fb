//===- HostExecBench.cpp - Host kernels against plain C++ loops -----------===//
//
// Part of gridjit. Runs three kernels on the host target and the same
// computations as plain C++ loops compiled into this binary (-O3, no
// fast-math, -ffp-contract=off like KIR, -march=native like the host
// target's code), on the same data in the same run:
//
//   saxpy   y = a * x + y over 2^24 floats (no barriers)
//   reduce  a 256-wide shared-memory tree sum with sync_threads(), one
//           partial sum per block of 256 (the plain loop sums each block's
//           256 floats in order)
//   matmul  C = A * B for 256 x 256 floats, 16 x 16 tiles in shared
//           memory with two sync_threads() per tile (the plain loop is
//           i-k-j, which vectorises; the same sums in the same order)
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
//
//===----------------------------------------------------------------------===//

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

#include <cmath>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace gridjit;

namespace {

constexpr int SaxpyN = 1 << 24;
constexpr int ReduceN = 1 << 24;
constexpr int ReduceBlock = 256;
constexpr int MatN = 256;

const char *SaxpyKir = R"(
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}
)";

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

//===----------------------------------------------------------------------===//
// The plain loops
//===----------------------------------------------------------------------===//

__attribute__((noinline)) void plainSaxpy(int N, float A, const float *X, float *Y) {
  for (int I = 0; I < N; ++I)
    Y[I] = A * X[I] + Y[I];
}

__attribute__((noinline)) void plainReduce(int N, const float *X, float *Partial) {
  for (int B = 0; B < N / ReduceBlock; ++B) {
    float S = 0;
    for (int I = 0; I < ReduceBlock; ++I)
      S += X[B * ReduceBlock + I];
    Partial[B] = S;
  }
}

__attribute__((noinline)) void plainMatmul(int N, const float *A, const float *B, float *C) {
  for (int I = 0; I < N * N; ++I)
    C[I] = 0;
  for (int I = 0; I < N; ++I)
    for (int K = 0; K < N; ++K) {
      float AIK = A[I * N + K];
      for (int J = 0; J < N; ++J)
        C[I * N + J] += AIK * B[K * N + J];
    }
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

struct Kernels {
  std::unique_ptr<HostRuntime> RT;
  std::unique_ptr<LoadedModule> Saxpy, Reduce, Matmul;
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
  static std::unique_ptr<Target> T = check(createHostTarget());
  static Artifact Saxpy = compileKir(*T, SaxpyKir, "saxpy.kir");
  static Artifact Reduce = compileKir(*T, ReduceKir, "reduce.kir");
  static Artifact Matmul = compileKir(*T, MatmulKir, "matmul.kir");
  Kernels &K = All[Threads];
  HostRuntimeOptions O;
  O.NumThreads = Threads;
  K.RT = check(HostRuntime::create(O));
  K.Saxpy = check(K.RT->load(Saxpy));
  K.Reduce = check(K.RT->load(Reduce));
  K.Matmul = check(K.RT->load(Matmul));
  return K;
}

struct Data {
  std::vector<float> X = pattern(SaxpyN, 1), Y = pattern(SaxpyN, 2);
  std::vector<float> RX = pattern(ReduceN, 3), Partial = std::vector<float>(ReduceN / ReduceBlock);
  std::vector<float> A = pattern(MatN * MatN, 4), B = pattern(MatN * MatN, 5),
                     C = std::vector<float>(MatN * MatN);
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
    plainSaxpy(SaxpyN, SaxpyA, D.X.data(), D.Y.data());
    benchmark::ClobberMemory();
  }
  S.SetBytesProcessed(int64_t(S.iterations()) * SaxpyN * 12);
}

void BM_Saxpy_Gridjit(benchmark::State &S) {
  Data &D = data();
  Kernels &K = kernelsFor(unsigned(S.range(0)));
  LaunchConfig C;
  C.Grid.X = SaxpyN / 256;
  C.Block.X = 256;
  KernelArg Args[] = {KernelArg::i32(SaxpyN), KernelArg::f32(SaxpyA),
                      KernelArg::pointer(D.X.data()), KernelArg::pointer(D.Y.data())};
  for (auto _ : S)
    if (llvm::Error E = K.RT->launch(*K.Saxpy, "saxpy", C, Args))
      die(std::move(E));
  S.SetBytesProcessed(int64_t(S.iterations()) * SaxpyN * 12);
}

void BM_Reduce_Plain(benchmark::State &S) {
  Data &D = data();
  for (auto _ : S) {
    plainReduce(ReduceN, D.RX.data(), D.Partial.data());
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
    plainMatmul(MatN, D.A.data(), D.B.data(), D.C.data());
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

BENCHMARK(BM_Saxpy_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Saxpy_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reduce_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reduce_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_Plain)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_Gridjit)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);

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
)";

/// One OpenCL device (a sub-device of N compute units when the platform
/// can partition) with the three kernels built, and buffers over the same
/// host arrays as the other benchmarks (CL_MEM_USE_HOST_PTR: no copies on
/// a CPU device).
struct OpenCL {
  cl_device_id Device = nullptr;
  cl_context Context = nullptr;
  cl_command_queue Queue = nullptr;
  cl_program Program = nullptr;
  cl_kernel Saxpy = nullptr, Reduce = nullptr, Matmul = nullptr;
  cl_mem X, Y, RX, Partial, A, B, C;
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
  Data &D = data();
  auto Buf = [&](std::vector<float> &V) {
    return clCreateBuffer(O.Context, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR,
                          V.size() * sizeof(float), V.data(), &Err);
  };
  O.X = Buf(D.X), O.Y = Buf(D.Y), O.RX = Buf(D.RX), O.Partial = Buf(D.Partial);
  O.A = Buf(D.A), O.B = Buf(D.B), O.C = Buf(D.C);
  int N = SaxpyN, M = MatN;
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
  // PoCL compiles a kernel for its launch dimensions at the first launch:
  // do that before anything is timed.
  size_t G1 = SaxpyN, L1 = 256, G2[] = {MatN, MatN}, L2[] = {16, 16};
  clEnqueueNDRangeKernel(O.Queue, O.Saxpy, 1, nullptr, &G1, &L1, 0, nullptr, nullptr);
  G1 = ReduceN;
  L1 = ReduceBlock;
  clEnqueueNDRangeKernel(O.Queue, O.Reduce, 1, nullptr, &G1, &L1, 0, nullptr, nullptr);
  clEnqueueNDRangeKernel(O.Queue, O.Matmul, 2, nullptr, G2, L2, 0, nullptr, nullptr);
  if (clFinish(O.Queue) != CL_SUCCESS) {
    O.Problem = "OpenCL warm-up launch failed";
    return nullptr;
  }
  return &O;
}

void runOpenCL(benchmark::State &S, cl_kernel OpenCL::*Which, unsigned Dims, const size_t *Global,
               const size_t *Local) {
  OpenCL *O = openCLFor(unsigned(S.range(0)));
  if (!O) {
    S.SkipWithError("OpenCL (PoCL) is not available");
    return;
  }
  for (auto _ : S) {
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
BENCHMARK(BM_Saxpy_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Reduce_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Matmul_PoCL)->Arg(1)->Arg(2)->UseRealTime()->Unit(benchmark::kMillisecond);
#endif

/// Checks that the kernels compute what the plain loops compute before
/// anything is timed (the matmul sums in the same order: exactly equal;
/// the reduction's tree order differs from the sequential one).
void verify() {
  Data &D = data();
  Kernels &K = kernelsFor(1);
  std::vector<float> Y1 = D.Y, Y2 = D.Y;
  plainSaxpy(SaxpyN, 2.0f, D.X.data(), Y1.data());
  LaunchConfig C;
  C.Grid.X = SaxpyN / 256;
  C.Block.X = 256;
  KernelArg SA[] = {KernelArg::i32(SaxpyN), KernelArg::f32(2.0f), KernelArg::pointer(D.X.data()),
                    KernelArg::pointer(Y2.data())};
  if (llvm::Error E = K.RT->launch(*K.Saxpy, "saxpy", C, SA))
    die(std::move(E));
  std::vector<float> P1(D.Partial.size()), P2(D.Partial.size());
  plainReduce(ReduceN, D.RX.data(), P1.data());
  C.Grid.X = ReduceN / ReduceBlock;
  C.Block.X = ReduceBlock;
  KernelArg RA[] = {KernelArg::pointer(D.RX.data()), KernelArg::pointer(P2.data())};
  if (llvm::Error E = K.RT->launch(*K.Reduce, "reduce", C, RA))
    die(std::move(E));
  std::vector<float> C1(MatN * MatN), C2(MatN * MatN);
  plainMatmul(MatN, D.A.data(), D.B.data(), C1.data());
  C.Grid.X = C.Grid.Y = MatN / 16;
  C.Block.X = C.Block.Y = 16;
  KernelArg MA[] = {KernelArg::i32(MatN), KernelArg::pointer(D.A.data()),
                    KernelArg::pointer(D.B.data()), KernelArg::pointer(C2.data())};
  if (llvm::Error E = K.RT->launch(*K.Matmul, "matmul", C, MA))
    die(std::move(E));
  bool OK = Y1 == Y2 && C1 == C2;
  for (size_t I = 0; I < P1.size(); ++I)
    OK = OK && std::fabs(P1[I] - P2[I]) <= 1e-4f * std::fabs(P1[I]) + 1e-4f;
  if (!OK) {
    std::fprintf(stderr, "bench-HostExecBench: gridjit and the plain loops disagree\n");
    std::exit(1);
  }
}

/// The console table, then each gridjit run's throughput relative to its
/// plain loop.
class RatioReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &Runs) override {
    ConsoleReporter::ReportRuns(Runs);
    // One time per benchmark: the run's, or with --benchmark_repetitions
    // the median (reported after the repetitions).
    for (const Run &R : Runs)
      if (!R.error_occurred && (R.run_type == Run::RT_Iteration ||
                                (R.run_type == Run::RT_Aggregate && R.aggregate_name == "median")))
        Seconds[R.run_name.str()] = R.GetAdjustedRealTime();
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nthroughput relative to the plain C++ loop (plain time / gridjit time):\n");
    for (const char *K : {"Saxpy", "Reduce", "Matmul"}) {
      auto Plain = Seconds.find(std::string("BM_") + K + "_Plain/real_time");
      if (Plain == Seconds.end())
        continue;
      for (const char *Who : {"Gridjit", "PoCL"})
        for (int T : {1, 2}) {
          auto G = Seconds.find(std::string("BM_") + K + "_" + Who + "/" + std::to_string(T) +
                                "/real_time");
          if (G != Seconds.end())
            std::printf("  %-7s %-8s %d thread%s  %.2fx\n", K, Who, T, T == 1 ? " " : "s",
                        Plain->second / G->second);
        }
    }
  }

private:
  std::map<std::string, double> Seconds;
};

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  verify();
  RatioReporter R;
  benchmark::RunSpecifiedBenchmarks(&R);
  benchmark::Shutdown();
  return 0;
}
