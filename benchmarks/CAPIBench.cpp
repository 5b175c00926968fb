//===- CAPIBench.cpp - Launch overhead: C API against the C++ API ---------===//
//
// Part of gridjit. The cost of one launch of an empty kernel with four
// arguments (i32, f32, two pointers), one block of one thread, on the host
// target, the same loaded module and runtime for every path:
//
//   Cxx      Runtime::launch with prepared KernelArgs (the baseline)
//   C        gj_launch with prepared gj_args, the C API linked into this
//            program (gridjit-static), so the difference to Cxx is the C
//            API's own work: handle checks, argument conversion and checks
//   CShared  gj_launch through libgridjit.so itself, opened with dlopen
//            (RTLD_LOCAL): the library users load, its LLVM hidden inside;
//            its own compiler, runtime and module
//
// After the usual table the program prints each path's time per launch
// and its overhead above Cxx (nanoseconds; medians when repeated), wall
// and CPU time of the calling thread. The machine's load moves the wall
// time by hundreds of nanoseconds between benchmarks; interleaving
// repetitions spreads that over every path:
//
//   bench-CAPIBench --benchmark_repetitions=12 \
//     --benchmark_enable_random_interleaving=true --benchmark_report_aggregates_only=true
//
//===----------------------------------------------------------------------===//

#include "BenchPaths.h"
#include "gridjit-c/gridjit.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/Runtime.h"

#include "llvm/Support/Error.h"

#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>

using namespace gridjit;

namespace {

const char *EmptyKir = "kernel empty(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n}\n";

float X[16], Y[16];

[[noreturn]] void die(const std::string &Msg) {
  std::fprintf(stderr, "bench-CAPIBench: %s\n", Msg.c_str());
  std::exit(1);
}

template <typename T> T check(llvm::Expected<T> E, const char *What) {
  if (!E)
    die(std::string(What) + ": " + llvm::toString(E.takeError()));
  return std::move(*E);
}

/// The C++ side: compiler, runtime (one worker thread) and loaded module.
struct CxxSetup {
  std::unique_ptr<Compiler> C;
  std::unique_ptr<Runtime> RT;
  std::unique_ptr<LoadedModule> LM;
  CxxSetup() {
    CompilerOptions CO;
    CO.UseDiskCache = false;
    C = check(Compiler::create(std::move(CO)), "Compiler::create");
    CompiledModuleRef M = check(C->compile(EmptyKir, "empty.kir"), "compile");
    RuntimeOptions RO;
    RO.NumThreads = 1;
    RT = check(createRuntime(TargetKind::Host, RO), "createRuntime");
    LM = check(RT->load(M->Art), "load");
  }
};

CxxSetup &cxx() {
  static CxxSetup S;
  return S;
}

/// The C API's functions, from this program or from libgridjit.so.
struct CApi {
  decltype(&gj_compiler_options_init) compilerOptionsInit;
  decltype(&gj_compiler_create) compilerCreate;
  decltype(&gj_compile) compile;
  decltype(&gj_runtime_options_init) runtimeOptionsInit;
  decltype(&gj_runtime_create) runtimeCreate;
  decltype(&gj_runtime_load) runtimeLoad;
  decltype(&gj_launch_config_init) launchConfigInit;
  decltype(&gj_launch) launch;
  decltype(&gj_last_error) lastError;
};

CApi linkedApi() {
  return {gj_compiler_options_init, gj_compiler_create, gj_compile,
          gj_runtime_options_init,  gj_runtime_create,  gj_runtime_load,
          gj_launch_config_init,    gj_launch,          gj_last_error};
}

CApi sharedApi() {
  std::string Path = bench::buildDir() + "/lib/libgridjit.so";
  void *H = dlopen(Path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (!H)
    die(std::string("cannot load ") + Path + ": " + dlerror());
  auto Sym = [&](const char *Name) {
    void *P = dlsym(H, Name);
    if (!P)
      die(Path + " lacks " + Name);
    return P;
  };
  CApi A;
#define GJ_SYM(Field, Name) A.Field = reinterpret_cast<decltype(A.Field)>(Sym(#Name))
  // The version-2 symbols, which the header's macros name (the macros are
  // not expanded inside #Name).
  GJ_SYM(compilerOptionsInit, gj_compiler_options_init_v2);
  GJ_SYM(compilerCreate, gj_compiler_create);
  GJ_SYM(compile, gj_compile);
  GJ_SYM(runtimeOptionsInit, gj_runtime_options_init_v2);
  GJ_SYM(runtimeCreate, gj_runtime_create);
  GJ_SYM(runtimeLoad, gj_runtime_load);
  GJ_SYM(launchConfigInit, gj_launch_config_init_v2);
  GJ_SYM(launch, gj_launch_v2);
  GJ_SYM(lastError, gj_last_error);
#undef GJ_SYM
  return A;
}

/// The C side: a loaded module of a C API's own compiler and runtime.
struct CSetup {
  CApi Api;
  gj_loaded_module LM = nullptr;
  gj_launch_config Config;
  gj_arg Args[4];
  explicit CSetup(CApi A) : Api(A) {
    auto Check = [&](gj_status S, const char *What) {
      if (S != GJ_OK)
        die(std::string(What) + ": " + Api.lastError());
    };
    gj_compiler_options CO;
    Api.compilerOptionsInit(&CO, sizeof CO);
    CO.use_disk_cache = 0;
    gj_compiler C = nullptr;
    Check(Api.compilerCreate(&CO, &C), "gj_compiler_create");
    gj_module M = nullptr;
    Check(Api.compile(C, EmptyKir, std::strlen(EmptyKir), "empty.kir", nullptr, &M), "gj_compile");
    gj_runtime_options RO;
    Api.runtimeOptionsInit(&RO, sizeof RO);
    RO.threads = 1;
    gj_runtime R = nullptr;
    Check(Api.runtimeCreate(&RO, &R), "gj_runtime_create");
    Check(Api.runtimeLoad(R, M, &LM), "gj_runtime_load");
    // The compiler, runtime and module live until the process ends.
    Api.launchConfigInit(&Config, sizeof Config);
    std::memset(Args, 0, sizeof(Args));
    Args[0].kind = GJ_ARG_SCALAR;
    Args[0].type = GJ_I32;
    Args[0].value.i = 16;
    Args[1].kind = GJ_ARG_SCALAR;
    Args[1].type = GJ_F32;
    Args[1].value.f32 = 2.0f;
    Args[2].kind = Args[3].kind = GJ_ARG_HOST_POINTER;
    Args[2].type = Args[3].type = GJ_F32;
    Args[2].value.pointer = X;
    Args[3].value.pointer = Y;
  }
};

void BM_Launch_Cxx(benchmark::State &State) {
  CxxSetup &S = cxx();
  LaunchConfig Config;
  KernelArg Args[] = {KernelArg::i32(16), KernelArg::f32(2.0f), KernelArg::pointer(X),
                      KernelArg::pointer(Y)};
  for (auto _ : State)
    if (llvm::Error E = S.RT->launch(*S.LM, "empty", Config, Args)) {
      State.SkipWithError(llvm::toString(std::move(E)).c_str());
      break;
    }
}

void runC(benchmark::State &State, CSetup &S) {
  for (auto _ : State)
    if (S.Api.launch(S.LM, "empty", &S.Config, S.Args, 4, sizeof(gj_arg)) != GJ_OK) {
      State.SkipWithError(S.Api.lastError());
      break;
    }
}

void BM_Launch_C(benchmark::State &State) {
  static CSetup S(linkedApi());
  runC(State, S);
}

void BM_Launch_CShared(benchmark::State &State) {
  static CSetup S(sharedApi());
  runC(State, S);
}

BENCHMARK(BM_Launch_Cxx)->UseRealTime();
BENCHMARK(BM_Launch_C)->UseRealTime();
BENCHMARK(BM_Launch_CShared)->UseRealTime();

/// The console table, then each path's time per launch and its overhead
/// above the C++ launch (medians when repeated): wall time, and the calling
/// thread's CPU time, which leaves out the wait for the worker and so
/// shows the C API's own work with less noise.
class OverheadReporter : public benchmark::ConsoleReporter {
public:
  void ReportRuns(const std::vector<Run> &Runs) override {
    ConsoleReporter::ReportRuns(Runs);
    for (const Run &R : Runs) {
      if (R.error_occurred || (R.run_type == Run::RT_Aggregate && R.aggregate_name != "median"))
        continue;
      // A median (reported after the repetitions) replaces their values.
      double ToNs = 1e9 / benchmark::GetTimeUnitMultiplier(R.time_unit);
      Ns[R.run_name.function_name] = {R.GetAdjustedRealTime() * ToNs,
                                      R.GetAdjustedCPUTime() * ToNs};
    }
  }
  void Finalize() override {
    ConsoleReporter::Finalize();
    auto Base = Ns.find("BM_Launch_Cxx");
    if (Base == Ns.end())
      return;
    std::printf("\nper launch (empty kernel, 4 arguments, host, 1 block of 1 thread, ns):\n");
    std::printf("  %-20s %10s %10s %10s %10s\n", "path", "wall", "vs C++", "CPU", "vs C++");
    for (const auto &[Name, T] : Ns)
      std::printf("  %-20s %10.1f %+10.1f %10.1f %+10.1f\n", Name.c_str(), T.first,
                  T.first - Base->second.first, T.second, T.second - Base->second.second);
  }

private:
  std::map<std::string, std::pair<double, double>> Ns; ///< wall, CPU
};

} // namespace

int main(int argc, char **argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv))
    return 1;
  OverheadReporter R;
  benchmark::RunSpecifiedBenchmarks(&R);
  benchmark::Shutdown();
  return 0;
}
