//===- CompileBench.cpp - In-process compile latency to PTX ---------------===//
//
// Part of gridjit. Times KIR text → PTX in process at -O3 for three example
// kernels (saxpy, a shared-memory reduction, a grid_sync kernel), with the
// time of each phase as counters, and, in the same run, the tools a
// framework would otherwise call: `llc-19` on the equivalent LLVM IR and
// `nvcc -ptx` on the equivalent CUDA C++ (both as processes, as they are
// used). Those two are skipped when the tool is not installed.
//
//   build/benchmarks/bench-CompileBench
//
//===----------------------------------------------------------------------===//

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/AST.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <chrono>

using namespace gridjit;

namespace {

std::string readExample(const char *Name) {
  auto Buf = llvm::MemoryBuffer::getFile(std::string(GRIDJIT_SOURCE_DIR) + "/examples/" + Name);
  if (!Buf)
    return "";
  return (*Buf)->getBuffer().str();
}

const Target &nvptxTarget() {
  static std::unique_ptr<Target> T = [] {
    auto R = createNVPTXTarget();
    if (!R) {
      llvm::errs() << llvm::toString(R.takeError()) << "\n";
      std::abort();
    }
    return std::move(*R);
  }();
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

/// Runs \p Program with \p Args once; false if it cannot run or fails.
bool runTool(llvm::StringRef Program, llvm::ArrayRef<llvm::StringRef> Args) {
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(""),
                                                llvm::StringRef("")};
  return llvm::sys::ExecuteAndWait(Program, Args, std::nullopt, Redirects) == 0;
}

// `llc-19 -O3` on the same LLVM IR that gridjit optimises and codegens
// (its lowering of saxpy, before optimisation), as a process.
void BM_Llc19Saxpy(benchmark::State &State) {
  std::string Llc = std::string(GRIDJIT_LLVM_TOOLS_DIR) + "/llc";
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
  std::string Path = std::string(GRIDJIT_BINARY_DIR) + "/bench-saxpy.ll";
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
  std::string Src = std::string(GRIDJIT_SOURCE_DIR) + "/benchmarks/saxpy.cu";
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
