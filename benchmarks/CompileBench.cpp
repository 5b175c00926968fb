//===- CompileBench.cpp - In-process compile latency to PTX ---------------===//
//
// Part of gridjit. Times KIR text → PTX in process at -O3 for three example
// kernels (saxpy, a shared-memory reduction, a grid_sync kernel), and the
// host target's compile next to the PTX path's:
//
//   BM_KirToPTX      the whole pipeline, with each phase's time as counters
//                    (the target's TargetMachine is reused, as by any
//                    compile after the first)
//   BM_VsLLVM        per iteration, alternately: gridjit with a reused
//                    TargetMachine, gridjit with a new one (what every
//                    compile cost before TargetMachines were reused), and
//                    plain LLVM 19 on the equivalent IR in process (parse
//                    the unoptimised .ll, make a TargetMachine, O3, PTX:
//                    what ../shared/anchors/llvm-floor.cpp does). Reports
//                    the medians of each one's thread CPU time and their
//                    ratios; alternating in one benchmark, and CPU time
//                    rather than wall time, keep the load of a shared
//                    machine out of the ratios.
//
//   BM_HostVsPTX     each examples/ kernel compiled at -O3 for the host and
//                    for NVPTX in every iteration (parse and verify once
//                    for both): the medians of each one's thread CPU time,
//                    their ratio host/ptx and the host's mean phases
//                    (docs/HostTarget.md, "Compile time").
//   BM_ShuffleSeries the same for a kernel with N written-out shfl_down
//                    steps (4, 8, 16, 32) between a guarded load and a
//                    guarded store: each warp operation is a
//                    synchronisation point, so the host gets thread loops
//                    in proportion to N and PTX none.
//   BM_SyncChain     the same for a chain of N device functions (25, 50,
//                    100, 200, 400), each calling the one before, then
//                    sync_threads(), then returning a value. The host
//                    inlines every synchronising call (its thread-loop
//                    form) and takes minutes at 400 (docs/HostTarget.md);
//                    NVPTX keeps calls and takes a fraction of a second.
//                    `--benchmark_filter=-SyncChain/[24]00` leaves the two
//                    long ones out.
//
// and, in the same run, the tools a framework would otherwise call:
// `llc-19` on the equivalent LLVM IR and `nvcc -ptx` on the equivalent
// CUDA C++ (both as processes, as they are used). Those two are skipped
// when the tool is not installed.
//
//   build/bin/bench-CompileBench
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/AST.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IRReader/IRReader.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <ctime>

using namespace gridjit;

namespace {

std::string readExample(const char *Name) {
  auto Buf = llvm::MemoryBuffer::getFile(bench::checkoutDir() + "/examples/" + Name);
  if (!Buf)
    return "";
  return (*Buf)->getBuffer().str();
}

/// The target \p R holds; a benchmark program cannot go on without it.
std::unique_ptr<Target> targetOrAbort(llvm::Expected<std::unique_ptr<Target>> R) {
  if (!R) {
    llvm::errs() << llvm::toString(R.takeError()) << "\n";
    std::abort();
  }
  return std::move(*R);
}

const Target &nvptxTarget() {
  static std::unique_ptr<Target> T = targetOrAbort(createNVPTXTarget());
  return *T;
}

const Target &hostTarget() {
  static std::unique_ptr<Target> T = targetOrAbort(createHostTarget());
  return *T;
}

double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

// Text → PTX, the whole pipeline, with each phase's mean time per compile.
void BM_KirToPTX(benchmark::State &State, const char *Example) {
  std::string Text = readExample(Example);
  const Target &T = nvptxTarget();
  PhaseTimes Sum;
  for (auto _ : State) {
    auto Start = std::chrono::steady_clock::now();
    auto M = parseModule(Text, Example);
    Sum.ParseMs += msSince(Start);
    if (!M) {
      State.SkipWithError(llvm::toString(M.takeError()).c_str());
      return;
    }
    Start = std::chrono::steady_clock::now();
    llvm::Error E = verifyModule(**M);
    Sum.VerifyMs += msSince(Start);
    if (E) {
      State.SkipWithError(llvm::toString(std::move(E)).c_str());
      return;
    }
    auto A = T.compile(**M, {}, &Sum);
    if (!A) {
      State.SkipWithError(llvm::toString(A.takeError()).c_str());
      return;
    }
    benchmark::DoNotOptimize(A->Payload.data());
  }
  double N = static_cast<double>(State.iterations());
  State.counters["parse_ms"] = Sum.ParseMs / N;
  State.counters["verify_ms"] = Sum.VerifyMs / N;
  State.counters["lower_ms"] = Sum.LowerMs / N;
  State.counters["optimize_ms"] = Sum.OptimizeMs / N;
  State.counters["codegen_ms"] = Sum.CodegenMs / N;
}
BENCHMARK_CAPTURE(BM_KirToPTX, saxpy, "saxpy.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_KirToPTX, reduce, "reduce.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_KirToPTX, grid_sync, "grid_sync.kir")->Unit(benchmark::kMillisecond);

/// \p Example lowered for NVPTX and printed: the unoptimised LLVM IR that
/// gridjit's optimiser starts from (libdevice functions it calls included),
/// or "" with \p Err set.
std::string loweredIR(const char *Example, std::string &Err) {
  auto M = parseAndVerify(readExample(Example), Example);
  if (!M) {
    Err = llvm::toString(M.takeError());
    return "";
  }
  llvm::LLVMContext Ctx;
  auto IR = CodegenTarget::get(nvptxTarget()).lower(**M, Ctx);
  if (!IR) {
    Err = llvm::toString(IR.takeError());
    return "";
  }
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  (*IR)->print(OS, nullptr);
  return Text;
}

/// Plain LLVM 19, in process, as ../shared/anchors/llvm-floor.cpp: parse
/// \p IRText, make an NVPTX TargetMachine as gridjit's (sm_80, PTX 7.0,
/// -O3), run the O3 pipeline and generate PTX. Returns the PTX size, 0 on
/// failure.
size_t plainLLVMToPTX(const std::string &IRText) {
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseIR(llvm::MemoryBufferRef(IRText, "m"), Diag, Ctx);
  if (!M)
    return 0;
  std::string Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget("nvptx64-nvidia-cuda", Err);
  if (!T)
    return 0;
  std::unique_ptr<llvm::TargetMachine> TM(
      T->createTargetMachine("nvptx64-nvidia-cuda", "sm_80", "+ptx70", llvm::TargetOptions(),
                             std::nullopt, std::nullopt, llvm::CodeGenOptLevel::Aggressive));
  M->setDataLayout(TM->createDataLayout());
  {
    llvm::LoopAnalysisManager LAM;
    llvm::FunctionAnalysisManager FAM;
    llvm::CGSCCAnalysisManager CGAM;
    llvm::ModuleAnalysisManager MAM;
    llvm::PassBuilder PB(TM.get());
    PB.registerModuleAnalyses(MAM);
    PB.registerCGSCCAnalyses(CGAM);
    PB.registerFunctionAnalyses(FAM);
    PB.registerLoopAnalyses(LAM);
    PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
    PB.buildPerModuleDefaultPipeline(llvm::OptimizationLevel::O3).run(*M, MAM);
  }
  llvm::SmallString<4096> PTX;
  llvm::raw_svector_ostream OS(PTX);
  llvm::legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, OS, nullptr, llvm::CodeGenFileType::AssemblyFile))
    return 0;
  PM.run(*M);
  return PTX.size();
}

/// Milliseconds of CPU time this thread has used: on a loaded machine,
/// unlike wall time, it leaves out the time the thread waited for a core.
double threadCpuMs() {
  timespec TS;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &TS);
  return TS.tv_sec * 1e3 + TS.tv_nsec / 1e6;
}

double median(std::vector<double> V) {
  std::sort(V.begin(), V.end());
  return V.empty() ? 0 : V[V.size() / 2];
}

// gridjit (KIR text → PTX, parse and verify included) with a reused and
// with a new TargetMachine, and plain LLVM on the equivalent IR, one after
// the other in every iteration.
void BM_VsLLVM(benchmark::State &State, const char *Example) {
  std::string Text = readExample(Example);
  std::string Err;
  std::string IRText = loweredIR(Example, Err);
  if (IRText.empty()) {
    State.SkipWithError(Err.c_str());
    return;
  }
  const Target &T = nvptxTarget();
  const CodegenTarget &C = CodegenTarget::get(T);
  auto Gridjit = [&]() -> bool {
    auto M = parseAndVerify(Text, Example);
    if (!M) {
      llvm::consumeError(M.takeError());
      return false;
    }
    auto A = T.compile(**M, {});
    if (!A) {
      llvm::consumeError(A.takeError());
      return false;
    }
    benchmark::DoNotOptimize(A->Payload.data());
    return true;
  };
  std::vector<double> Warm, Cold, LLVM;
  if (!Gridjit()) { // so that the first timed compile has a TargetMachine to reuse
    State.SkipWithError("gridjit failed to compile the example");
    return;
  }
  for (auto _ : State) {
    double Start = threadCpuMs();
    bool OK = Gridjit();
    Warm.push_back(threadCpuMs() - Start);

    State.PauseTiming();
    C.releaseIdleTargetMachines();
    State.ResumeTiming();
    Start = threadCpuMs();
    OK &= Gridjit();
    Cold.push_back(threadCpuMs() - Start);

    Start = threadCpuMs();
    OK &= plainLLVMToPTX(IRText) != 0;
    LLVM.push_back(threadCpuMs() - Start);
    if (!OK) {
      State.SkipWithError("a compile failed");
      return;
    }
  }
  double W = median(Warm), Co = median(Cold), L = median(LLVM);
  State.counters["gridjit_ms"] = W;
  State.counters["newTM_ms"] = Co;
  State.counters["llvm_ms"] = L;
  State.counters["gridjit/llvm"] = W / L;
  State.counters["newTM/llvm"] = Co / L;
  State.counters["reused/newTM"] = W / Co;
}
BENCHMARK_CAPTURE(BM_VsLLVM, saxpy, "saxpy.kir")->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(BM_VsLLVM, reduce, "reduce.kir")->Unit(benchmark::kMillisecond)->MinTime(3);
BENCHMARK_CAPTURE(BM_VsLLVM, grid_sync, "grid_sync.kir")->Unit(benchmark::kMillisecond)->MinTime(3);

/// A kernel with \p N written-out warp shuffles between a guarded load and
/// a guarded store (the offsets 16, 8, 4, 2, 1 over and over): each
/// shuffle is a synchronisation point of the host target, so it has N + 1
/// thread loops.
std::string shuffleSeries(int64_t N) {
  std::string S = "kernel k(n: i32, x: ptr<f32>, o: ptr<f32>) {\n"
                  "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
                  "  var v: f32 = 0.0;\n"
                  "  if i < n { v = x[i]; }\n";
  for (int64_t I = 0; I < N; ++I)
    S += "  v += shfl_down(v, " + std::to_string(16 >> (I % 5)) + ");\n";
  S += "  if i < n { o[i] = v; }\n}\n";
  return S;
}

/// Compiles \p Text (parse and verify included, once for both) for the
/// host and for NVPTX at -O3 in every iteration and reports the medians of
/// each one's thread CPU time, their ratio and the host's mean phases.
void hostVsPTX(benchmark::State &State, const std::string &Text, const char *Name) {
  std::vector<double> Host, PTX;
  PhaseTimes HostPhases;
  for (auto _ : State) {
    auto M = parseAndVerify(Text, Name);
    if (!M) {
      State.SkipWithError(llvm::toString(M.takeError()).c_str());
      return;
    }
    double Start = threadCpuMs();
    auto H = hostTarget().compile(**M, {}, &HostPhases);
    Host.push_back(threadCpuMs() - Start);
    Start = threadCpuMs();
    auto P = nvptxTarget().compile(**M, {});
    PTX.push_back(threadCpuMs() - Start);
    for (auto *A : {&H, &P})
      if (!*A) {
        State.SkipWithError(llvm::toString(A->takeError()).c_str());
        return;
      }
  }
  double N = static_cast<double>(State.iterations());
  State.counters["host_ms"] = median(Host);
  State.counters["ptx_ms"] = median(PTX);
  State.counters["host/ptx"] = median(Host) / median(PTX);
  State.counters["host_lower_ms"] = HostPhases.LowerMs / N;
  State.counters["host_optimize_ms"] = HostPhases.OptimizeMs / N;
  State.counters["host_codegen_ms"] = HostPhases.CodegenMs / N;
}

/// \p N synchronising device functions, f0 to f{N-1}, each calling the
/// one before, and a kernel calling the last.
std::string syncChain(int64_t N) {
  std::string S = "fn f0(x: i32) -> i32 { sync_threads(); return x + 1; }\n";
  for (int64_t I = 1; I < N; ++I)
    S += "fn f" + std::to_string(I) + "(x: i32) -> i32 { let y: i32 = f" + std::to_string(I - 1) +
         "(x); sync_threads(); return y + 1; }\n";
  S +=
      "kernel k(o: ptr<i32>) { o[thread_idx.x] = f" + std::to_string(N - 1) + "(thread_idx.x); }\n";
  return S;
}

// The chain compiled for the host and for NVPTX in each iteration (parse
// and verify included, once for both).
void BM_SyncChain(benchmark::State &State) {
  hostVsPTX(State, syncChain(State.range(0)), "sync-chain.kir");
}
BENCHMARK(BM_SyncChain)
    ->Arg(25)
    ->Arg(50)
    ->Arg(100)
    ->Arg(200)
    ->Arg(400)
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// Each examples/ kernel for the host and for NVPTX.
void BM_HostVsPTX(benchmark::State &State, const char *Example) {
  std::string Text = readExample(Example);
  if (Text.empty()) {
    State.SkipWithError("cannot read the example");
    return;
  }
  hostVsPTX(State, Text, Example);
}
BENCHMARK_CAPTURE(BM_HostVsPTX, saxpy, "saxpy.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, grid_sync, "grid_sync.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, reduce, "reduce.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, warp_reduce, "warp_reduce.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, matmul, "matmul.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, histogram, "histogram.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, stencil, "stencil.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, bitonic_sort, "bitonic_sort.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, black_scholes, "black_scholes.kir")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, separable_convolution, "separable_convolution.kir")
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_HostVsPTX, print_demo, "print_demo.kir")->Unit(benchmark::kMillisecond);

// The shuffle series (4, 8, 16, 32) for the host and for NVPTX.
void BM_ShuffleSeries(benchmark::State &State) {
  hostVsPTX(State, shuffleSeries(State.range(0)), "shuffles.kir");
}
BENCHMARK(BM_ShuffleSeries)->Arg(4)->Arg(8)->Arg(16)->Arg(32)->Unit(benchmark::kMillisecond);

/// Runs \p Program with \p Args once; false if it cannot run or fails.
bool runTool(llvm::StringRef Program, llvm::ArrayRef<llvm::StringRef> Args) {
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(""),
                                                llvm::StringRef("")};
  return llvm::sys::ExecuteAndWait(Program, Args, std::nullopt, Redirects) == 0;
}

// `llc-19 -O3` on the same LLVM IR that gridjit optimises and codegens
// (its lowering of saxpy, before optimisation), as a process.
void BM_Llc19Saxpy(benchmark::State &State) {
  std::string Llc = bench::llvmToolsDir() + "/llc";
  if (!llvm::sys::fs::can_execute(Llc)) {
    State.SkipWithError("llc-19 not found");
    return;
  }
  auto M = parseAndVerify(readExample("saxpy.kir"), "saxpy.kir");
  if (!M) {
    State.SkipWithError(llvm::toString(M.takeError()).c_str());
    return;
  }
  llvm::LLVMContext Ctx;
  auto IR = CodegenTarget::get(nvptxTarget()).lower(**M, Ctx);
  if (!IR) {
    State.SkipWithError(llvm::toString(IR.takeError()).c_str());
    return;
  }
  std::string Path = bench::buildDir() + "/bench-saxpy.ll";
  {
    std::error_code EC;
    llvm::raw_fd_ostream OS(Path, EC);
    (*IR)->print(OS, nullptr);
  }
  llvm::StringRef Args[] = {Llc, "-O3", "-mcpu=sm_80", "-mattr=+ptx70", Path, "-o", "/dev/null"};
  for (auto _ : State)
    if (!runTool(Llc, Args)) {
      State.SkipWithError("llc failed");
      return;
    }
}
BENCHMARK(BM_Llc19Saxpy)->Unit(benchmark::kMillisecond);

// `nvcc -ptx` on benchmarks/saxpy.cu, as a process.
void BM_NvccPtxSaxpy(benchmark::State &State) {
  auto Nvcc = llvm::sys::findProgramByName("nvcc", {"/usr/local/cuda/bin"});
  if (!Nvcc) {
    State.SkipWithError("nvcc not found");
    return;
  }
  std::string Src = bench::checkoutDir() + "/benchmarks/saxpy.cu";
  llvm::StringRef Args[] = {*Nvcc, "-ptx", "-arch=sm_80", Src, "-o", "/dev/null"};
  for (auto _ : State)
    if (!runTool(*Nvcc, Args)) {
      State.SkipWithError("nvcc failed");
      return;
    }
}
BENCHMARK(BM_NvccPtxSaxpy)->Unit(benchmark::kMillisecond)->Iterations(5);

} // namespace

BENCHMARK_MAIN();
