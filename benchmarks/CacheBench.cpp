//===- CacheBench.cpp - Cold compile vs memory hit vs disk hit ------------===//
//
// Part of gridjit. For saxpy and the grid_sync example, on NVPTX and the
// host target:
//
//   Cold          a full compile (memory and disk cache off)
//   MemoryHit     the same text again in one Compiler (the text-memo path)
//   MemoryHitRespelled  other text of the same module: parse, verify,
//                 print, hash, then the memory hit (NVPTX only: for the
//                 host target, whose artifacts embed source positions,
//                 other text is another key, docs/Cache.md "The key")
//   DiskHit       a fresh Compiler (empty memory cache) on a warm directory
//   Process*      a fresh `jit-run --emit=... --cache-dir=WARM` process:
//                 wall time of the whole process, and (counter in_process_ms)
//                 the time of the compile request inside it from --stats;
//                 ProcessKir is the baseline of a process that only parses
//                 and prints (no target, no cache), ProcessCold one that
//                 compiles (--no-cache).
//
//   build/benchmarks/bench-CacheBench
//
// Goals: memory hit < 10 us; disk hit in a fresh process < 1 ms.
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"
#include "gridjit/Compiler/Compiler.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include <benchmark/benchmark.h>

#include <chrono>
#include <map>

using namespace gridjit;

namespace {

using Clock = std::chrono::steady_clock;

std::string readExample(const std::string &Name) {
  auto Buf = llvm::MemoryBuffer::getFile(bench::checkoutDir() + "/examples/" + Name);
  return Buf ? (*Buf)->getBuffer().str() : std::string();
}

/// One target per name for the whole run (targets are immutable).
std::shared_ptr<const Target> target(const std::string &Name) {
  static std::map<std::string, std::shared_ptr<const Target>> Targets;
  auto It = Targets.find(Name);
  if (It != Targets.end())
    return It->second;
  auto T = createTargetByName(Name);
  std::shared_ptr<const Target> P;
  if (T)
    P = std::move(*T);
  else
    llvm::errs() << "no target " << Name << ": " << llvm::toString(T.takeError()) << "\n";
  Targets[Name] = P;
  return P;
}

/// A directory for this benchmark run, removed at exit.
struct BenchDir {
  std::string Path;
  BenchDir() {
    llvm::SmallString<128> P;
    llvm::sys::fs::createUniqueDirectory("gridjit-cachebench", P);
    Path = std::string(P);
  }
  ~BenchDir() { llvm::sys::fs::remove_directories(Path, /*IgnoreErrors=*/true); }
};
BenchDir &benchDir() {
  static BenchDir D;
  return D;
}

std::unique_ptr<Compiler> makeCompiler(const std::string &TargetName, bool Disk, size_t Memory) {
  CompilerOptions O;
  O.Targets = {target(TargetName)};
  O.UseDiskCache = Disk;
  O.CacheDir = benchDir().Path;
  O.MemoryCacheCapacity = Memory;
  O.Warning = [](const std::string &W) { llvm::errs() << "warning: " << W << "\n"; };
  auto C = Compiler::create(std::move(O));
  if (!C) {
    llvm::errs() << llvm::toString(C.takeError()) << "\n";
    return nullptr;
  }
  return std::move(*C);
}

bool ready(benchmark::State &State, const std::string &TargetName, const std::string &Text) {
  if (!target(TargetName)) {
    State.SkipWithError("target not available");
    return false;
  }
  if (Text.empty()) {
    State.SkipWithError("example not found");
    return false;
  }
  return true;
}

void BM_Cold(benchmark::State &State, std::string TargetName, std::string Example) {
  std::string Text = readExample(Example);
  if (!ready(State, TargetName, Text))
    return;
  auto C = makeCompiler(TargetName, /*Disk=*/false, /*Memory=*/0);
  for (auto _ : State) {
    auto M = C->compile(Text, Example);
    if (!M) {
      State.SkipWithError(llvm::toString(M.takeError()).c_str());
      return;
    }
    benchmark::DoNotOptimize(M->get());
  }
}

/// A compiler with a memory cache that already holds \p Text's module, or
/// null (and the benchmark skipped) when it does not compile.
std::unique_ptr<Compiler> warmMemoryCompiler(benchmark::State &State, const std::string &TargetName,
                                             const std::string &Text, const std::string &Example) {
  auto C = makeCompiler(TargetName, /*Disk=*/false, /*Memory=*/256);
  if (auto M = C->compile(Text, Example); !M) {
    State.SkipWithError(llvm::toString(M.takeError()).c_str());
    return nullptr;
  }
  return C;
}

void BM_MemoryHit(benchmark::State &State, std::string TargetName, std::string Example) {
  std::string Text = readExample(Example);
  if (!ready(State, TargetName, Text))
    return;
  auto C = warmMemoryCompiler(State, TargetName, Text, Example);
  if (!C)
    return;
  for (auto _ : State) {
    auto M = C->compile(Text, Example);
    benchmark::DoNotOptimize(M->get());
  }
  State.counters["compiles"] = static_cast<double>(C->getStats().Compiles);
}

void BM_MemoryHitRespelled(benchmark::State &State, std::string TargetName, std::string Example) {
  std::string Text = readExample(Example);
  if (!ready(State, TargetName, Text))
    return;
  auto C = warmMemoryCompiler(State, TargetName, Text, Example);
  if (!C)
    return;
  // A new spelling each time (a different comment), so the text memo never
  // answers: parse, verify, canonical print and key every time.
  uint64_t I = 0;
  std::string Respelled;
  for (auto _ : State) {
    State.PauseTiming();
    Respelled = "// " + std::to_string(I++) + "\n" + Text;
    State.ResumeTiming();
    auto M = C->compile(Respelled, Example);
    benchmark::DoNotOptimize(M->get());
  }
  State.counters["compiles"] = static_cast<double>(C->getStats().Compiles);
}

void BM_DiskHit(benchmark::State &State, std::string TargetName, std::string Example) {
  std::string Text = readExample(Example);
  if (!ready(State, TargetName, Text))
    return;
  {
    auto Warm = makeCompiler(TargetName, /*Disk=*/true, 256);
    if (auto M = Warm->compile(Text, Example); !M) {
      State.SkipWithError(llvm::toString(M.takeError()).c_str());
      return;
    }
  }
  uint64_t Compiles = 0;
  for (auto _ : State) {
    // A fresh Compiler each time: its memory cache is empty. Only the
    // compile request is timed.
    auto C = makeCompiler(TargetName, /*Disk=*/true, 256);
    auto Start = Clock::now();
    CompileInfo I;
    auto M = C->compile(Text, Example, {}, &I);
    State.SetIterationTime(std::chrono::duration<double>(Clock::now() - Start).count());
    if (!M || I.Outcome != CacheOutcome::DiskHit) {
      State.SkipWithError("not a disk hit");
      return;
    }
    Compiles += C->getStats().Compiles;
  }
  State.counters["compiles"] = static_cast<double>(Compiles);
}

/// Runs jit-run once; returns the wall milliseconds, and in \p InProcessMs
/// the "total" line of its --stats (the compile request), or -1.
double runJitRun(const std::vector<std::string> &Args, double &InProcessMs, bool &Ok) {
  std::string JitRun = bench::buildDir() + "/bin/jit-run";
  std::vector<llvm::StringRef> Refs = {JitRun};
  for (const std::string &A : Args)
    Refs.push_back(A);
  std::string Err = benchDir().Path + "/stderr.txt";
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef("/dev/null"),
                                                llvm::StringRef(Err)};
  auto Start = Clock::now();
  int RC = llvm::sys::ExecuteAndWait(JitRun, Refs, std::nullopt, Redirects);
  double Ms = std::chrono::duration<double, std::milli>(Clock::now() - Start).count();
  Ok = RC == 0;
  InProcessMs = -1;
  if (auto Buf = llvm::MemoryBuffer::getFile(Err)) {
    llvm::StringRef S = (*Buf)->getBuffer();
    size_t Pos = S.find("  total ");
    if (Pos != llvm::StringRef::npos)
      S.substr(Pos + 8).ltrim().split(' ').first.getAsDouble(InProcessMs);
  }
  return Ms;
}

enum class ProcessKind { Kir, Cold, DiskHit };

void BM_Process(benchmark::State &State, std::string TargetName, std::string Example,
                ProcessKind Kind) {
  std::string Path = bench::checkoutDir() + "/examples/" + Example;
  std::string Emit = TargetName == "host" ? "--emit=obj" : "--emit=ptx";
  std::string Target = TargetName == "host" ? "--target=host" : "--target=cuda";
  std::string Dir = benchDir().Path + "/process-" + TargetName;
  std::vector<std::string> Args = {Path, Target, Emit, "--stats", "-o", "/dev/null"};
  if (Kind == ProcessKind::Kir)
    Args = {Path, "--emit=kir", "-o", "/dev/null"};
  else if (Kind == ProcessKind::Cold)
    Args.push_back("--no-cache");
  else
    Args.push_back("--cache-dir=" + Dir);
  double InProcess = 0, Sum = 0;
  bool Ok = true;
  if (Kind == ProcessKind::DiskHit)
    runJitRun(Args, InProcess, Ok); // warm the directory
  if (!Ok) {
    State.SkipWithError("jit-run failed");
    return;
  }
  for (auto _ : State) {
    double Ms = runJitRun(Args, InProcess, Ok);
    if (!Ok) {
      State.SkipWithError("jit-run failed");
      return;
    }
    State.SetIterationTime(Ms / 1000.0);
    Sum += InProcess;
  }
  if (Kind != ProcessKind::Kir)
    State.counters["in_process_ms"] = Sum / static_cast<double>(State.iterations());
}

#define GRIDJIT_CACHE_BENCH(T, K, File)                                                            \
  BENCHMARK_CAPTURE(BM_Cold, T##_##K, #T, File)->Unit(benchmark::kMillisecond);                    \
  BENCHMARK_CAPTURE(BM_MemoryHit, T##_##K, #T, File)->Unit(benchmark::kMicrosecond);               \
  BENCHMARK_CAPTURE(BM_DiskHit, T##_##K, #T, File)                                                 \
      ->UseManualTime()                                                                            \
      ->Unit(benchmark::kMicrosecond);                                                             \
  BENCHMARK_CAPTURE(BM_Process, T##_##K##_disk_hit, #T, File, ProcessKind::DiskHit)                \
      ->UseManualTime()                                                                            \
      ->Iterations(20)                                                                             \
      ->Unit(benchmark::kMillisecond);                                                             \
  BENCHMARK_CAPTURE(BM_Process, T##_##K##_cold, #T, File, ProcessKind::Cold)                       \
      ->UseManualTime()                                                                            \
      ->Iterations(10)                                                                             \
      ->Unit(benchmark::kMillisecond);

GRIDJIT_CACHE_BENCH(nvptx, saxpy, "saxpy.kir")
GRIDJIT_CACHE_BENCH(nvptx, grid_sync, "grid_sync.kir")
GRIDJIT_CACHE_BENCH(host, saxpy, "saxpy.kir")
GRIDJIT_CACHE_BENCH(host, grid_sync, "grid_sync.kir")
BENCHMARK_CAPTURE(BM_MemoryHitRespelled, nvptx_saxpy, "nvptx", "saxpy.kir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_MemoryHitRespelled, nvptx_grid_sync, "nvptx", "grid_sync.kir")
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_Process, kir_baseline, "host", "saxpy.kir", ProcessKind::Kir)
    ->UseManualTime()
    ->Iterations(20)
    ->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
