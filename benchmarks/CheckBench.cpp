//===- CheckBench.cpp - Checked against unchecked host code ---------------===//
//
// Part of gridjit. The kernel checker's cost (docs/Check.md), measured
// against the same kernels' unchecked host code in the same run, on four
// examples/ kernels:
//
//   saxpy      2^20 floats in blocks of 256 (`if i < n`, no barriers)
//   reduce     2^20 floats, a 256-wide shared-memory tree sum per block
//   matmul     256 x 256 floats in 16 x 16 shared tiles
//   histogram  2^20 bytes into 256 bins: shared atomics, then global ones
//
//   BM_Run/<kernel>/<checked 0|1>/<workers 1|2>   one launch (every buffer
//              passed with its extent, as a checked launch needs); the
//              checked launch runs its blocks one at a time whatever the
//              worker count, so the 2-worker ratio shows that too
//   BM_Compile/<kernel>/<checked 0|1>   host compile at -O3 (thread CPU
//              time; the target is made once)
//
// After the table the program prints checked / unchecked for each pair.
// The sizes are smaller than bench-HostExecBench's: a checked launch keeps
// shadow state per byte of every buffer (docs/Check.md, "Cost").
//
//   build/bin/bench-CheckBench [--benchmark_filter=...] [--benchmark_repetitions=N]
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"
#include "MedianReporter.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <string>
#include <vector>

using namespace gridjit;

namespace {

[[noreturn]] void die(llvm::Error E) {
  llvm::errs() << "bench-CheckBench: " << llvm::toString(std::move(E)) << "\n";
  std::exit(1);
}
template <typename T> T check(llvm::Expected<T> V) {
  if (!V)
    die(V.takeError());
  return std::move(*V);
}

constexpr uint32_t N = 1u << 20, Block = 256, MatN = 256, Bins = 256;
const char *const Names[] = {"saxpy", "reduce", "matmul", "histogram"};

std::unique_ptr<Module> parseExample(const char *Name) {
  std::string Path = bench::checkoutDir() + "/examples/" + Name + ".kir";
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf)
    die(llvm::createStringError(llvm::inconvertibleErrorCode(), "cannot read %s", Path.c_str()));
  auto M = check(parseModule((*Buf)->getBuffer(), std::string(Name) + ".kir"));
  if (llvm::Error E = verifyModule(*M))
    die(std::move(E));
  return M;
}

const Target &target(bool Checked) {
  static std::shared_ptr<const Target> Plain = check(createHostTarget());
  static std::shared_ptr<const Target> Checked80 = check(Plain->makeChecked(80));
  return Checked ? *Checked80 : *Plain;
}

struct Data {
  std::vector<float> X = std::vector<float>(N, 1.0f), Y = std::vector<float>(N, 2.0f);
  std::vector<float> Partial = std::vector<float>(N / Block);
  std::vector<float> A = std::vector<float>(MatN * MatN, 0.5f),
                     B = std::vector<float>(MatN * MatN, 0.25f),
                     C = std::vector<float>(MatN * MatN);
  std::vector<uint8_t> Bytes = std::vector<uint8_t>(N);
  std::vector<uint32_t> Hist = std::vector<uint32_t>(Bins);
  Data() {
    for (uint32_t I = 0; I < N; ++I)
      Bytes[I] = uint8_t(I * 2654435761u >> 24);
  }
};
Data &data() {
  static Data D;
  return D;
}

template <typename V> KernelArg buffer(V &Vec) {
  return KernelArg::pointer(Vec.data()).withExtent(Vec.size() * sizeof(Vec[0]));
}

/// One launch of kernel \p K (0..3) with its arguments.
llvm::Error launch(HostRuntime &RT, LoadedModule &L, unsigned K) {
  Data &D = data();
  LaunchConfig C;
  switch (K) {
  case 0: {
    C.Grid.X = N / Block;
    C.Block.X = Block;
    KernelArg Args[] = {KernelArg::i32(N), KernelArg::f32(1e-7f), buffer(D.X), buffer(D.Y)};
    return RT.launch(L, "saxpy", C, Args);
  }
  case 1: {
    C.Grid.X = N / Block;
    C.Block.X = Block;
    KernelArg Args[] = {KernelArg::i32(N), buffer(D.X), buffer(D.Partial)};
    D.Partial.assign(D.Partial.size(), 0.0f);
    // examples/reduce.kir adds every block's sum into result[0].
    return RT.launch(L, "reduce", C, Args);
  }
  case 2: {
    C.Grid.X = C.Grid.Y = MatN / 16;
    C.Block.X = C.Block.Y = 16;
    KernelArg Args[] = {KernelArg::i32(MatN), buffer(D.A), buffer(D.B), buffer(D.C)};
    return RT.launch(L, "matmul", C, Args);
  }
  default: {
    C.Grid.X = 64;
    C.Block.X = Block;
    D.Hist.assign(Bins, 0);
    KernelArg Args[] = {KernelArg::i32(N), buffer(D.Bytes), buffer(D.Hist)};
    return RT.launch(L, "histogram", C, Args);
  }
  }
}

struct Loaded {
  std::unique_ptr<HostRuntime> RT;
  std::unique_ptr<LoadedModule> L;
};

Loaded &loaded(unsigned K, bool Checked, unsigned Workers) {
  static std::map<std::tuple<unsigned, bool, unsigned>, Loaded> All;
  Loaded &X = All[{K, Checked, Workers}];
  if (!X.RT) {
    HostRuntimeOptions O;
    O.NumThreads = Workers;
    X.RT = check(HostRuntime::create(O));
    auto M = parseExample(Names[K]);
    Artifact A = check(target(Checked).compile(*M, CompileOptions()));
    X.L = check(X.RT->load(A));
    if (llvm::Error E = launch(*X.RT, *X.L, K)) // a finding here is a checker bug
      die(std::move(E));
  }
  return X;
}

void BM_Run(benchmark::State &S) {
  unsigned K = unsigned(S.range(0));
  Loaded &X = loaded(K, S.range(1) != 0, unsigned(S.range(2)));
  for (auto _ : S)
    if (llvm::Error E = launch(*X.RT, *X.L, K))
      die(std::move(E));
  S.SetLabel(Names[K]);
}

void BM_Compile(benchmark::State &S) {
  unsigned K = unsigned(S.range(0));
  auto M = parseExample(Names[K]);
  const Target &T = target(S.range(1) != 0);
  for (auto _ : S)
    benchmark::DoNotOptimize(check(T.compile(*M, CompileOptions())));
  S.SetLabel(Names[K]);
}

void runArgs(benchmark::internal::Benchmark *B) {
  for (int K = 0; K < 4; ++K)
    for (int W : {1, 2})
      for (int Checked : {0, 1})
        B->Args({K, Checked, W});
}
void compileArgs(benchmark::internal::Benchmark *B) {
  for (int K = 0; K < 4; ++K)
    for (int Checked : {0, 1})
      B->Args({K, Checked});
}

BENCHMARK(BM_Run)->Apply(runArgs)->UseRealTime()->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Compile)->Apply(compileArgs)->MeasureProcessCPUTime()->Unit(benchmark::kMillisecond);

/// The console table, then checked / unchecked for each pair.
class RatioReporter : public bench::MedianReporter {
public:
  void Finalize() override {
    ConsoleReporter::Finalize();
    std::printf("\nchecked / unchecked, same run:\n");
    for (int K = 0; K < 4; ++K) {
      for (int W : {1, 2}) {
        auto Key = [&](int C) {
          return "BM_Run/" + std::to_string(K) + "/" + std::to_string(C) + "/" + std::to_string(W) +
                 "/real_time";
        };
        auto U = Seconds.find(Key(0)), C = Seconds.find(Key(1));
        if (U != Seconds.end() && C != Seconds.end())
          std::printf("  run      %-9s %d worker%s  %.1fx\n", Names[K], W, W == 1 ? " " : "s",
                      C->second / U->second);
      }
      auto U = Seconds.find("BM_Compile/" + std::to_string(K) + "/0/process_time"),
           C = Seconds.find("BM_Compile/" + std::to_string(K) + "/1/process_time");
      if (U != Seconds.end() && C != Seconds.end())
        std::printf("  compile  %-9s            %.2fx\n", Names[K], C->second / U->second);
    }
  }
};

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  RatioReporter R;
  benchmark::RunSpecifiedBenchmarks(&R);
  benchmark::Shutdown();
  return 0;
}
