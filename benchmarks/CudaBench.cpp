//===- CudaBench.cpp - Kernels on a real GPU through the CUDA runtime -----===//
//
// Part of gridjit's benchmarks. On a CUDA device, in one run:
//
//  - SaxpyBandwidth: saxpy over 2^26 floats (12 bytes moved per element),
//    as a fraction of the device's copy bandwidth measured in the same run
//    (cuMemcpyDtoD of 2^26 floats, 8 bytes per element), and beside it the
//    same kernel compiled by `nvcc -ptx` (benchmarks/saxpy.cu) when nvcc is
//    installed: counters saxpy_GBps, copy_GBps, of_copy, nvcc_GBps,
//    gridjit_over_nvcc (time ratio; < 1 is faster than nvcc).
//  - GridSyncTwoPhase: examples/grid_sync.kir against the CUDA C++ kernel
//    with cooperative groups (benchmarks/grid_sync.cu), 2^24 floats, the
//    largest co-resident grid of 256-thread blocks: gridjit_us, nvcc_us,
//    gridjit_over_nvcc.
//  - CompileAndLoad: examples/saxpy.kir to a launchable kernel, cold (empty
//    cache: LLVM compile + driver PTX compile), warm (a new Compiler and
//    runtime on the filled cache, as a new process: disk hit + cubin hit)
//    and memory hit (the same Compiler, a new load): cold_ms, warm_ms,
//    memory_ms, cold_over_warm.
//
// Without a device every benchmark is skipped with the reason. The GPU
// bundle carries it (utils/gpu-bundle.sh): there run
//   GRIDJIT_BENCH_SOURCE_DIR=gridjit-gpu-bundle gridjit-gpu-bundle/bin/bench-CudaBench Goals
// (docs/CUDA.md, "Benchmark"): of_copy >= 0.9, gridjit_over_nvcc <= 1.05,
// cold_over_warm >= 10.
//
//===----------------------------------------------------------------------===//

#include "Runtime/Cuda/CudaDriverAPI.h"

#include "BenchPaths.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/Runtime.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <dlfcn.h>
#include <fstream>
#include <sstream>
#include <string>
#include <unistd.h>

using namespace gridjit;

namespace {

using Clock = std::chrono::steady_clock;

std::string readFile(const std::string &Path) {
  std::ifstream In(Path);
  std::stringstream S;
  S << In.rdbuf();
  return S.str();
}

/// The source tree (or unpacked GPU bundle) with examples/ and
/// benchmarks/: $GRIDJIT_BENCH_SOURCE_DIR, else the build's source tree.
std::string sourceDir() {
  const char *D = std::getenv("GRIDJIT_BENCH_SOURCE_DIR");
  return D && *D ? D : bench::checkoutDir();
}

std::string readExample(const char *Name) { return readFile(sourceDir() + "/examples/" + Name); }

/// A fresh empty directory under $TMPDIR.
std::string freshDir(const char *Tag) {
  std::string T = std::string(std::getenv("TMPDIR") ? std::getenv("TMPDIR") : "/tmp") +
                  "/gridjit-cudabench-" + Tag + "-XXXXXX";
  if (!::mkdtemp(T.data()))
    return "";
  return T;
}

/// The device, the runtime and what the benchmarks share; Why says why
/// there is none.
struct Gpu {
  std::unique_ptr<Runtime> RT;
  CudaDeviceInfo Info;
  std::string Why;
  std::string CacheDir;
  PFN_cuMemcpyDtoD CopyDtoD = nullptr;
  PFN_cuCtxSynchronize Sync = nullptr;

  static Gpu &get() {
    static Gpu G;
    return G;
  }

private:
  Gpu() {
    auto Devices = listCudaDevices();
    if (!Devices) {
      Why = llvm::toString(Devices.takeError());
      return;
    }
    if (Devices->empty()) {
      Why = "no CUDA device";
      return;
    }
    Info = Devices->front();
    CacheDir = freshDir("cache");
    RuntimeOptions O;
    O.CacheDir = CacheDir;
    auto R = createRuntime(TargetKind::NVPTX, O);
    if (!R) {
      Why = llvm::toString(R.takeError());
      return;
    }
    RT = std::move(*R);
    // The copy baseline calls the driver directly, in the runtime's
    // (primary) context, which each runtime call makes current.
    const char *Lib = std::getenv("GRIDJIT_CUDA_DRIVER");
    void *H = ::dlopen(Lib && *Lib ? Lib : "libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
    if (H) {
      CopyDtoD = reinterpret_cast<PFN_cuMemcpyDtoD>(::dlsym(H, "cuMemcpyDtoD_v2"));
      Sync = reinterpret_cast<PFN_cuCtxSynchronize>(::dlsym(H, "cuCtxSynchronize"));
      // The runtime puts back the caller's context after each call: make
      // the device's primary context (the runtime's) current here.
      auto Get = reinterpret_cast<PFN_cuDeviceGet>(::dlsym(H, "cuDeviceGet"));
      auto Retain =
          reinterpret_cast<PFN_cuDevicePrimaryCtxRetain>(::dlsym(H, "cuDevicePrimaryCtxRetain"));
      auto SetCurrent = reinterpret_cast<PFN_cuCtxSetCurrent>(::dlsym(H, "cuCtxSetCurrent"));
      CUdevice Dev = 0;
      CUcontext Ctx = nullptr;
      if (!Get || !Retain || !SetCurrent || Get(&Dev, 0) != CUDA_SUCCESS ||
          Retain(&Ctx, Dev) != CUDA_SUCCESS || SetCurrent(Ctx) != CUDA_SUCCESS)
        CopyDtoD = nullptr;
    }
  }
};

/// Skips \p State unless there is a GPU.
bool haveGpu(benchmark::State &State) {
  Gpu &G = Gpu::get();
  if (!G.RT) {
    State.SkipWithError(("no GPU: " + G.Why).c_str());
    return false;
  }
  return true;
}

/// nvcc's PTX for \p Cu (a file of benchmarks/) and the device's
/// architecture, or "" when nvcc is missing or fails.
std::string nvccPtx(const char *Cu, const std::string &Arch) {
  std::string Nvcc;
  for (std::string C :
       {std::string(std::getenv("CUDA_HOME") ? std::getenv("CUDA_HOME") : "") + "/bin/nvcc",
        std::string("/usr/local/cuda/bin/nvcc")})
    if (::access(C.c_str(), X_OK) == 0) {
      Nvcc = C;
      break;
    }
  if (Nvcc.empty() && std::system("command -v nvcc >/dev/null 2>&1") == 0)
    Nvcc = "nvcc";
  if (Nvcc.empty())
    return "";
  std::string Dir = freshDir("nvcc");
  std::string Out = Dir + "/k.ptx";
  std::string Cmd = Nvcc + " -O3 -ptx -arch=" + Arch + " '" + sourceDir() + "/benchmarks/" + Cu +
                    "' -o '" + Out + "' >/dev/null 2>&1";
  if (std::system(Cmd.c_str()) != 0)
    return "";
  return readFile(Out);
}

/// The device's architecture as gridjit compiles for it (clamped to the
/// newest it knows).
std::string gridjitArch(const CudaDeviceInfo &I) {
  unsigned SM = unsigned(I.ComputeMajor * 10 + I.ComputeMinor);
  std::string Best = "sm_70";
  for (const auto &A : getNVPTXArchs())
    if (A.SmVersion <= SM)
      Best = A.Arch;
  return Best;
}

/// \p Source compiled for the device by a Compiler on \p Dir.
llvm::Expected<CompiledModuleRef> compileFor(Compiler &C, const std::string &Source,
                                             const char *Name) {
  CompileRequest R;
  R.Target = "nvptx";
  return C.compile(Source, Name, R);
}

std::unique_ptr<Compiler> makeCompiler(const std::string &Dir, const CudaDeviceInfo &Info) {
  NVPTXTargetOptions TO;
  std::string Arch = gridjitArch(Info);
  TO.Arch = Arch;
  auto T = createNVPTXTarget(TO);
  if (!T) {
    llvm::consumeError(T.takeError());
    return nullptr;
  }
  CompilerOptions O;
  O.Targets.push_back(std::move(*T));
  O.CacheDir = Dir;
  auto C = Compiler::create(std::move(O));
  if (!C) {
    llvm::consumeError(C.takeError());
    return nullptr;
  }
  return std::move(*C);
}

/// Milliseconds of \p Run followed by a device synchronisation, best of
/// \p Reps (after one warm-up).
template <typename Fn> double bestMs(Runtime &RT, int Reps, Fn Run) {
  double Best = 1e30;
  for (int I = 0; I <= Reps; ++I) {
    auto Start = Clock::now();
    if (!Run())
      return -1;
    if (llvm::Error E = RT.synchronize()) {
      llvm::consumeError(std::move(E));
      return -1;
    }
    double Ms = std::chrono::duration<double, std::milli>(Clock::now() - Start).count();
    if (I > 0 && Ms < Best)
      Best = Ms;
  }
  return Best;
}

/// An example compiled by gridjit and loaded, and beside it the same
/// kernel compiled by nvcc from benchmarks/<Cu> (same signature, so the
/// same KernelInfo) when nvcc is there.
struct KernelPair {
  std::unique_ptr<LoadedModule> Ours, Nvcc;
};

/// KernelPair for \p Example and \p Cu; false (State skipped) on failure.
bool loadPair(benchmark::State &State, const char *Example, const char *Cu, KernelPair &P) {
  Gpu &G = Gpu::get();
  auto C = makeCompiler(G.CacheDir, G.Info);
  if (!C) {
    State.SkipWithError("cannot make a compiler");
    return false;
  }
  auto M = compileFor(*C, readExample(Example), Example);
  if (!M) {
    State.SkipWithError(llvm::toString(M.takeError()).c_str());
    return false;
  }
  auto L = G.RT->load((*M)->Art);
  if (!L) {
    State.SkipWithError(llvm::toString(L.takeError()).c_str());
    return false;
  }
  P.Ours = std::move(*L);
  std::string Ptx = nvccPtx(Cu, G.Info.getArch());
  if (Ptx.empty())
    return true;
  Artifact A = (*M)->Art;
  A.Payload = Ptx;
  A.Arch = G.Info.getArch();
  if (auto NL = G.RT->load(A))
    P.Nvcc = std::move(*NL);
  else
    llvm::consumeError(NL.takeError());
  return true;
}

/// A launcher of \p Kernel of \p Mod for bestMs.
auto launcher(LoadedModule &Mod, const char *Kernel, const LaunchConfig &Cfg,
              llvm::ArrayRef<KernelArg> Args) {
  return [&Mod, Kernel, &Cfg, Args] {
    if (llvm::Error E = Gpu::get().RT->launch(Mod, Kernel, Cfg, Args)) {
      llvm::consumeError(std::move(E));
      return false;
    }
    return true;
  };
}

void SaxpyBandwidth(benchmark::State &State) {
  if (!haveGpu(State))
    return;
  Gpu &G = Gpu::get();
  const int N = 1 << 26;
  KernelPair P;
  if (!loadPair(State, "saxpy.kir", "saxpy.cu", P))
    return;
  auto X = G.RT->allocate(uint64_t(N) * 4), Y = G.RT->allocate(uint64_t(N) * 4);
  if (!X || !Y) {
    State.SkipWithError("cannot allocate");
    return;
  }
  std::vector<float> Ones(N, 1.0f);
  (void)G.RT->copyToDevice(*X, Ones.data(), uint64_t(N) * 4);
  (void)G.RT->copyToDevice(*Y, Ones.data(), uint64_t(N) * 4);
  LaunchConfig Cfg;
  Cfg.Block.X = 256;
  Cfg.Grid.X = uint32_t((N + 255) / 256);
  KernelArg Args[] = {KernelArg::i32(N), KernelArg::f32(0.5f), KernelArg::buffer(*X),
                      KernelArg::buffer(*Y)};
  auto Copy = [&] {
    return G.CopyDtoD && G.CopyDtoD(Y->getAddress(), X->getAddress(), size_t(N) * 4) == 0;
  };
  double Saxpy = 0, CopyMs = 0, Nvcc = 0;
  for (auto _ : State) {
    Saxpy = bestMs(*G.RT, 20, launcher(*P.Ours, "saxpy", Cfg, Args));
    CopyMs = bestMs(*G.RT, 20, Copy);
    if (P.Nvcc)
      Nvcc = bestMs(*G.RT, 20, launcher(*P.Nvcc, "saxpy", Cfg, Args));
    if (Saxpy < 0 || CopyMs < 0 || Nvcc < 0) {
      State.SkipWithError("a launch or the copy failed");
      return;
    }
    State.SetIterationTime(Saxpy / 1000);
  }
  double SaxpyGBps = 12.0 * N / (Saxpy * 1e6), CopyGBps = 8.0 * N / (CopyMs * 1e6);
  State.counters["saxpy_GBps"] = SaxpyGBps;
  State.counters["copy_GBps"] = CopyGBps;
  State.counters["of_copy"] = SaxpyGBps / CopyGBps;
  if (P.Nvcc) {
    State.counters["nvcc_GBps"] = 12.0 * N / (Nvcc * 1e6);
    State.counters["gridjit_over_nvcc"] = Saxpy / Nvcc;
  }
}
BENCHMARK(SaxpyBandwidth)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

void GridSyncTwoPhase(benchmark::State &State) {
  if (!haveGpu(State))
    return;
  Gpu &G = Gpu::get();
  const int N = 1 << 24;
  KernelPair P;
  if (!loadPair(State, "grid_sync.kir", "grid_sync.cu", P))
    return;
  auto X = G.RT->allocate(uint64_t(N) * 4), T = G.RT->allocate(uint64_t(N) * 4),
       Y = G.RT->allocate(uint64_t(N) * 4);
  if (!X || !T || !Y) {
    State.SkipWithError("cannot allocate");
    return;
  }
  // The largest co-resident grid: gridjit's launch check names it.
  LaunchConfig Cfg;
  Cfg.Block.X = 256;
  Cfg.Grid.X = uint32_t(G.Info.MultiprocessorCount) * 64;
  KernelArg Args[] = {KernelArg::i32(N), KernelArg::buffer(*X), KernelArg::buffer(*T),
                      KernelArg::buffer(*Y)};
  if (llvm::Error E = G.RT->launch(*P.Ours, "two_phase", Cfg, Args)) {
    std::string Msg = llvm::toString(std::move(E));
    size_t At = Msg.find("the largest valid grid has ");
    Cfg.Grid.X = At == std::string::npos ? uint32_t(G.Info.MultiprocessorCount)
                                         : uint32_t(std::atoi(Msg.c_str() + At + 27));
  }
  double Ours = 0, Nvcc = 0;
  for (auto _ : State) {
    Ours = bestMs(*G.RT, 20, launcher(*P.Ours, "two_phase", Cfg, Args));
    if (P.Nvcc)
      Nvcc = bestMs(*G.RT, 20, launcher(*P.Nvcc, "two_phase", Cfg, Args));
    if (Ours < 0 || Nvcc < 0) {
      State.SkipWithError("a launch failed");
      return;
    }
    State.SetIterationTime(Ours / 1000);
  }
  State.counters["blocks"] = Cfg.Grid.X;
  State.counters["gridjit_us"] = Ours * 1000;
  if (P.Nvcc) {
    State.counters["nvcc_us"] = Nvcc * 1000;
    State.counters["gridjit_over_nvcc"] = Ours / Nvcc;
  }
}
BENCHMARK(GridSyncTwoPhase)->UseManualTime()->Iterations(3)->Unit(benchmark::kMillisecond);

void CompileAndLoad(benchmark::State &State) {
  if (!haveGpu(State))
    return;
  Gpu &G = Gpu::get();
  std::string Source = readExample("saxpy.kir");
  auto Start = [&](Compiler &C, Runtime &RT) -> double {
    auto T0 = Clock::now();
    auto M = compileFor(C, Source, "saxpy.kir");
    if (!M) {
      llvm::consumeError(M.takeError());
      return -1;
    }
    auto L = RT.load((*M)->Art);
    if (!L) {
      llvm::consumeError(L.takeError());
      return -1;
    }
    return std::chrono::duration<double, std::milli>(Clock::now() - T0).count();
  };
  auto NewRuntime = [&](const std::string &Dir) -> std::unique_ptr<Runtime> {
    RuntimeOptions O;
    O.CacheDir = Dir;
    auto R = createRuntime(TargetKind::NVPTX, O);
    if (!R) {
      llvm::consumeError(R.takeError());
      return nullptr;
    }
    return std::move(*R);
  };
  double Cold = 0, Warm = 0, Memory = 0;
  for (auto _ : State) {
    std::string Dir = freshDir("start");
    auto C1 = makeCompiler(Dir, G.Info);
    auto R1 = NewRuntime(Dir);
    if (!C1 || !R1) {
      State.SkipWithError("cannot make a compiler or runtime");
      return;
    }
    Cold = Start(*C1, *R1);
    Memory = Start(*C1, *R1);
    auto C2 = makeCompiler(Dir, G.Info);
    auto R2 = NewRuntime(Dir);
    Warm = C2 && R2 ? Start(*C2, *R2) : -1;
    State.SetIterationTime(Cold / 1000);
    std::system(("rm -rf '" + Dir + "'").c_str());
  }
  State.counters["cold_ms"] = Cold;
  State.counters["warm_ms"] = Warm;
  State.counters["memory_ms"] = Memory;
  State.counters["cold_over_warm"] = Cold / Warm;
}
BENCHMARK(CompileAndLoad)->UseManualTime()->Iterations(5)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
