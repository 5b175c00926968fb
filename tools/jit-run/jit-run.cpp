//===- jit-run.cpp - Compile, print and run KIR kernels -------------------===//
//
// Part of gridjit. A thin driver over the library: it reads a KIR file (or
// standard input), parses and verifies it, compiles it for a target and
// prints the stage asked for, or (without --emit) runs a kernel on the host
// and prints or saves its buffers.
// It is the only place where errors become messages and exit codes:
//   0  success
//   1  an error in the input (syntax, types, an unreadable file) or at run
//      time (a launch the runtime rejects, divergent synchronisation)
//   2  misuse of the command line
//
//===----------------------------------------------------------------------===//

#include "KernelArgs.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cstdlib>
#include <map>

using namespace llvm;

namespace {

enum ExitCode { ExitSuccess = 0, ExitInputError = 1, ExitUsage = 2 };

enum class EmitStage { None, Kir, LLVM, PTX, Asm, Obj };
enum class TargetKind { Host, Cuda };

cl::OptionCategory JitRunCategory("jit-run options");

cl::opt<std::string> InputFile(cl::Positional, cl::desc("<input.kir | ->"), cl::Required,
                               cl::cat(JitRunCategory));

cl::opt<EmitStage>
    Emit("emit", cl::desc("Compile only and print one stage"), cl::init(EmitStage::None),
         cl::values(clEnumValN(EmitStage::Kir, "kir", "the verified module, printed canonically"),
                    clEnumValN(EmitStage::LLVM, "llvm", "LLVM IR after optimisation"),
                    clEnumValN(EmitStage::PTX, "ptx", "PTX (--target=cuda)"),
                    clEnumValN(EmitStage::Asm, "asm", "target assembly (PTX for cuda)"),
                    clEnumValN(EmitStage::Obj, "obj", "an object file (host target)")),
         cl::cat(JitRunCategory));

cl::opt<TargetKind>
    TargetOpt("target", cl::desc("Where to compile and run (default: host)"),
              cl::init(TargetKind::Host),
              cl::values(clEnumValN(TargetKind::Host, "host", "the host CPU"),
                         clEnumValN(TargetKind::Cuda, "cuda", "an NVIDIA GPU (NVPTX)")),
              cl::cat(JitRunCategory));

cl::opt<unsigned> OptLevel("O", cl::desc("Optimisation level 0-3 (default: -O3)"), cl::Prefix,
                           cl::init(3), cl::value_desc("level"), cl::cat(JitRunCategory));

cl::opt<std::string>
    SmArch("sm", cl::desc("NVPTX architecture when no device decides it (default: sm_80)"),
           cl::value_desc("sm_XX"), cl::init("sm_80"), cl::cat(JitRunCategory));

/// Set from `--stats`; see registerStatsOption for why it is not a cl::opt
/// defined here like the others.
bool Stats = false;

/// LLVM's own command line library registers a `-stats` option (its
/// statistics counters, compiled out of release LLVM builds) on first use of
/// the command line. The jit-run contract needs `--stats` for gridjit's
/// phase timings and cache counts, so the LLVM one is removed and ours is
/// registered in its place. Workaround for a name clash; it can go if LLVM
/// stops registering `-stats` in initCommonOptions.
void registerStatsOption() {
  if (cl::Option *LLVMStats = cl::getRegisteredOptions().lookup("stats"))
    LLVMStats->removeArgument();
  static cl::opt<bool, /*ExternalStorage=*/true> StatsOpt(
      "stats", cl::desc("Print phase timings and cache statistics on stderr"), cl::location(Stats),
      cl::cat(JitRunCategory));
}

// The compiled-kernel cache (docs/Cache.md).
cl::opt<std::string> CacheDirOpt("cache-dir",
                                 cl::desc("Directory of the compiled-kernel cache (default: "
                                          "$GRIDJIT_CACHE_DIR, $XDG_CACHE_HOME/gridjit, "
                                          "~/.cache/gridjit)"),
                                 cl::value_desc("dir"), cl::cat(JitRunCategory));
cl::opt<bool> NoCache("no-cache", cl::desc("Do not read or write the disk cache"),
                      cl::cat(JitRunCategory));

cl::opt<std::string> OutputFile("o",
                                cl::desc("Write the --emit output to <file> (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"), cl::cat(JitRunCategory));

// Running a kernel (without --emit).
cl::opt<std::string> KernelName("kernel",
                                cl::desc("The kernel to run (default: the module's only kernel)"),
                                cl::value_desc("name"), cl::cat(JitRunCategory));
cl::opt<std::string> GridOpt("grid", cl::desc("Blocks in the grid: X[,Y[,Z]] (default: 1)"),
                             cl::value_desc("X[,Y[,Z]]"), cl::init("1"), cl::cat(JitRunCategory));
cl::opt<std::string> BlockOpt("block", cl::desc("Threads per block: X[,Y[,Z]] (default: 1)"),
                              cl::value_desc("X[,Y[,Z]]"), cl::init("1"), cl::cat(JitRunCategory));
cl::opt<unsigned> SharedBytes("shared", cl::desc("Bytes of dynamic shared memory per block"),
                              cl::value_desc("bytes"), cl::init(0), cl::cat(JitRunCategory));
cl::list<std::string>
    ArgOpts("arg",
            cl::desc("A kernel argument, one per parameter: NAME=SPEC (see docs/jit-run.md)"),
            cl::value_desc("name=spec"), cl::cat(JitRunCategory));
cl::list<std::string> PrintOpts("print", cl::desc("After the run, print buffer NAME"),
                                cl::value_desc("name"), cl::cat(JitRunCategory));
cl::list<std::string> OutOpts("out",
                              cl::desc("After the run, write buffer NAME as a NumPy .npy file"),
                              cl::value_desc("name=file.npy"), cl::cat(JitRunCategory));
cl::opt<unsigned> ThreadsOpt("threads",
                             cl::desc("Worker threads (default: $GRIDJIT_NUM_THREADS, else the "
                                      "CPUs this process may use)"),
                             cl::value_desc("n"), cl::init(0), cl::cat(JitRunCategory));

/// Prints every error in \p E: diagnostics as they render themselves
/// (`file:line:col: error: ...` with the source line and a caret), anything
/// else as `jit-run: error: ...`.
void reportErrors(Error E) {
  handleAllErrors(
      std::move(E), [](const gridjit::DiagnosticError &D) { D.log(errs()); },
      [](const ErrorInfoBase &EI) { WithColor::error(errs(), "jit-run") << EI.message() << '\n'; });
}

/// Reads the input file, or standard input for "-".
Expected<std::unique_ptr<MemoryBuffer>> readInput(StringRef Path) {
  ErrorOr<std::unique_ptr<MemoryBuffer>> Buf = MemoryBuffer::getFileOrSTDIN(Path, /*IsText=*/true);
  if (!Buf)
    return createStringError(Buf.getError(), "cannot read '%s': %s", Path.str().c_str(),
                             Buf.getError().message().c_str());
  return std::move(*Buf);
}

Error writeOutput(StringRef Text) {
  std::error_code EC;
  ToolOutputFile Out(OutputFile, EC, sys::fs::OF_Text);
  if (EC)
    return createStringError(EC, "cannot open '%s' for writing: %s", OutputFile.c_str(),
                             EC.message().c_str());
  Out.os() << Text;
  Out.os().flush();
  if (Out.os().has_error())
    return createStringError(Out.os().error(), "cannot write '%s'", OutputFile.c_str());
  Out.keep();
  return Error::success();
}

/// Milliseconds since \p Start.
double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// What the one compile of this run did in the cache, for --stats.
struct CacheReport {
  bool Used = false; ///< the compile went through a gridjit::Compiler
  gridjit::CompileInfo Info;
  gridjit::CompilerStats Stats;
  std::string Dir; ///< empty: no disk cache
  bool DiskOn = false;
} Cache;

void printStats(const gridjit::PhaseTimes &T) {
  errs() << "jit-run: stats:\n";
  auto Line = [](StringRef Name, double Ms) {
    errs() << format("  %-10s %10.3f ms\n", Name.str().c_str(), Ms);
  };
  Line("parse", T.ParseMs);
  Line("verify", T.VerifyMs);
  Line("lower", T.LowerMs);
  Line("optimize", T.OptimizeMs);
  Line("codegen", T.CodegenMs);
  if (!Cache.Used)
    return;
  const gridjit::CompileInfo &I = Cache.Info;
  const gridjit::CompilerStats &S = Cache.Stats;
  Line("key", I.KeyMs);
  Line("lookup", I.LookupMs);
  Line("wait", I.WaitMs);
  Line("store", I.StoreMs);
  Line("total", T.ParseMs + T.VerifyMs + I.TotalMs);
  auto Text = [](StringRef Name, const Twine &Value) {
    errs() << format("  %-10s ", Name.str().c_str()) << Value << '\n';
  };
  Text("cache", gridjit::cacheOutcomeName(I.Outcome));
  Text("memory", Twine(S.MemoryHits) + " hits, " + Twine(S.MemoryMisses) + " misses");
  if (Cache.DiskOn)
    Text("disk", Twine(S.DiskHits) + " hits, " + Twine(S.DiskMisses) + " misses, " +
                     Twine(S.Disk.BadEntries) + " bad entries, " + Twine(S.Disk.Stores) +
                     " stores");
  else
    Text("disk", "off");
  Text("compiles", Twine(S.Compiles));
  Text("cache-dir", Cache.DiskOn ? Cache.Dir : "off");
}

/// Compiles verified \p M for \p T through a gridjit::Compiler, so that the
/// artifact comes from (and goes to) the cache; adds the phase times to
/// \p Times and keeps the cache's report for --stats.
Expected<gridjit::Artifact> compileCached(std::unique_ptr<gridjit::Target> T,
                                          const gridjit::Module &M, gridjit::PhaseTimes &Times) {
  gridjit::CompilerOptions CO;
  CO.Targets = {std::shared_ptr<const gridjit::Target>(std::move(T))};
  CO.OptLevel = OptLevel;
  CO.UseDiskCache = !NoCache;
  CO.CacheDir = CacheDirOpt;
  CO.AsyncThreads = 1;
  CO.Warning = [](const std::string &W) { WithColor::warning(errs(), "jit-run") << W << '\n'; };
  auto C = gridjit::Compiler::create(std::move(CO));
  if (!C)
    return C.takeError();
  auto R = (*C)->compile(M, {}, &Cache.Info);
  Cache.Used = true;
  Cache.Stats = (*C)->getStats();
  Cache.Dir = (*C)->getCacheDirectory();
  Cache.DiskOn = !Cache.Dir.empty();
  Times.LowerMs += Cache.Info.Times.LowerMs;
  Times.OptimizeMs += Cache.Info.Times.OptimizeMs;
  Times.CodegenMs += Cache.Info.Times.CodegenMs;
  if (!R)
    return R.takeError();
  return (*R)->Art;
}

/// Parses and verifies the input, timing each phase.
Expected<std::unique_ptr<gridjit::Module>> loadModule(StringRef Text, StringRef Name,
                                                      gridjit::PhaseTimes &Times) {
  auto Start = std::chrono::steady_clock::now();
  auto M = gridjit::parseModule(Text, Name);
  Times.ParseMs = msSince(Start);
  if (!M)
    return M.takeError();
  Start = std::chrono::steady_clock::now();
  Error E = gridjit::verifyModule(**M);
  Times.VerifyMs = msSince(Start);
  if (E)
    return std::move(E);
  return M;
}

Expected<std::unique_ptr<gridjit::Target>> makeTarget() {
  if (TargetOpt == TargetKind::Cuda) {
    gridjit::NVPTXTargetOptions Opts;
    Opts.Arch = SmArch;
    return gridjit::createNVPTXTarget(Opts);
  }
  return gridjit::createHostTarget();
}

/// Parses `X[,Y[,Z]]`; false when it is not 1 to 3 unsigned integers.
bool parseDim3(StringRef Text, gridjit::Dim3 &D) {
  SmallVector<StringRef, 3> Parts;
  Text.split(Parts, ',');
  if (Parts.empty() || Parts.size() > 3)
    return false;
  uint32_t *Fields[] = {&D.X, &D.Y, &D.Z};
  for (size_t I = 0; I < Parts.size(); ++I)
    if (Parts[I].trim().getAsInteger(10, *Fields[I]))
      return false;
  return true;
}

/// The worker threads: --threads, else $GRIDJIT_NUM_THREADS, else 0 (the
/// runtime's default). Only jit-run reads that variable; the library takes
/// the count from its caller.
Expected<unsigned> workerThreads() {
  if (ThreadsOpt.getNumOccurrences())
    return ThreadsOpt.getValue();
  // Read through the library's table of environment variables, like every
  // other read (docs/Cache.md lists the table).
  std::optional<std::string> Env = gridjit::getEnv(gridjit::EnvVar::GridjitNumThreads);
  if (!Env || Env->empty())
    return 0;
  unsigned N;
  if (StringRef(*Env).trim().getAsInteger(10, N) || N == 0)
    return jitrun::usageError("GRIDJIT_NUM_THREADS='" + Twine(*Env) +
                              "' is not a positive number of threads");
  return N;
}

/// Prints \p E and returns the exit status it means: 2 for misuse of the
/// command line, 1 for anything else.
int reportAndExit(Error E) {
  int Status = ExitInputError;
  handleAllErrors(
      std::move(E),
      [&](const jitrun::UsageError &U) {
        WithColor::error(errs(), "jit-run") << U.message() << '\n';
        Status = ExitUsage;
      },
      [](const gridjit::DiagnosticError &D) { D.log(errs()); },
      [](const ErrorInfoBase &EI) { WithColor::error(errs(), "jit-run") << EI.message() << '\n'; });
  return Status;
}

/// Compiles \p M for the host, runs one kernel with the arguments of the
/// command line, and prints or writes the buffers asked for.
int runKernel(const gridjit::Module &M, gridjit::PhaseTimes &Times) {
  if (TargetOpt == TargetKind::Cuda) {
    WithColor::error(errs(), "jit-run")
        << "running kernels with --target=cuda is not available in this build; run on the "
           "host (the default) or use --emit=ptx\n";
    return ExitInputError;
  }
  // Which kernel.
  std::vector<const gridjit::FunctionDecl *> Kernels = M.getKernels();
  const gridjit::FunctionDecl *K = nullptr;
  if (KernelName.getNumOccurrences()) {
    for (const gridjit::FunctionDecl *F : Kernels)
      if (F->Name == KernelName)
        K = F;
    if (!K)
      return reportAndExit(
          jitrun::usageError("--kernel " + KernelName + ": the module has no kernel of that name"));
  } else if (Kernels.size() == 1) {
    K = Kernels.front();
  } else if (Kernels.empty()) {
    WithColor::error(errs(), "jit-run") << M.Name << " has no kernel to run\n";
    return ExitInputError;
  } else {
    std::string Names;
    for (const gridjit::FunctionDecl *F : Kernels)
      Names += (Names.empty() ? "" : ", ") + F->Name;
    return reportAndExit(jitrun::usageError("the module has several kernels (" + Names +
                                            "); choose one with --kernel"));
  }

  auto T = gridjit::createHostTarget();
  if (!T)
    return reportAndExit(T.takeError());
  std::vector<gridjit::KernelInfo> Infos = (*T)->describeKernels(M);
  const gridjit::KernelInfo *Info = nullptr;
  for (const gridjit::KernelInfo &I : Infos)
    if (I.Name == K->Name)
      Info = &I;

  // Arguments: exactly one --arg per parameter.
  std::map<std::string, std::string> Specs;
  for (const std::string &A : ArgOpts) {
    auto [Name, Spec] = StringRef(A).split('=');
    if (!StringRef(A).contains('='))
      return reportAndExit(jitrun::usageError("--arg " + A + ": expected NAME=SPEC"));
    bool Known = false;
    for (const gridjit::KernelParamInfo &P : Info->Params)
      Known |= P.Name == Name;
    if (!Known)
      return reportAndExit(jitrun::usageError("--arg " + A + ": kernel '" + K->Name +
                                              "' has no parameter '" + Name + "'"));
    if (!Specs.emplace(Name.str(), Spec.str()).second)
      return reportAndExit(jitrun::usageError("--arg " + Name + " is given twice"));
  }
  std::vector<jitrun::ArgValue> Values;
  for (const gridjit::KernelParamInfo &P : Info->Params) {
    auto It = Specs.find(P.Name);
    if (It == Specs.end())
      return reportAndExit(jitrun::usageError("kernel '" + K->Name + "' needs --arg " + P.Name +
                                              "=SPEC for its parameter '" + P.Name + ": " +
                                              P.Ty.str() + "'"));
    auto V = jitrun::parseArg(P, It->second);
    if (!V)
      return reportAndExit(V.takeError());
    Values.push_back(std::move(*V));
  }
  auto FindBuffer = [&](StringRef Name, const char *Opt) -> Expected<jitrun::ArgValue *> {
    for (jitrun::ArgValue &V : Values)
      if (V.Param.Name == Name) {
        if (!V.isPointer())
          return jitrun::usageError(Twine(Opt) + " " + Name + ": '" + Name +
                                    "' is a scalar parameter, not a buffer");
        return &V;
      }
    return jitrun::usageError(Twine(Opt) + " " + Name + ": kernel '" + K->Name +
                              "' has no parameter '" + Name + "'");
  };
  std::vector<jitrun::ArgValue *> ToPrint;
  for (const std::string &Name : PrintOpts) {
    auto B = FindBuffer(Name, "--print");
    if (!B)
      return reportAndExit(B.takeError());
    ToPrint.push_back(*B);
  }
  std::vector<std::pair<jitrun::ArgValue *, std::string>> ToWrite;
  for (const std::string &O : OutOpts) {
    auto [Name, File] = StringRef(O).split('=');
    if (File.empty())
      return reportAndExit(jitrun::usageError("--out " + O + ": expected NAME=FILE.npy"));
    auto B = FindBuffer(Name, "--out");
    if (!B)
      return reportAndExit(B.takeError());
    ToWrite.push_back({*B, File.str()});
  }
  gridjit::LaunchConfig Config;
  parseDim3(GridOpt, Config.Grid); // checked by checkUsage
  parseDim3(BlockOpt, Config.Block);
  Config.DynamicSharedBytes = SharedBytes;
  auto Threads = workerThreads();
  if (!Threads)
    return reportAndExit(Threads.takeError());

  // Compile (through the cache), load, run.
  auto Art = compileCached(std::move(*T), M, Times);
  if (!Art) {
    if (Stats)
      printStats(Times);
    return reportAndExit(Art.takeError());
  }
  gridjit::HostRuntimeOptions RO;
  RO.NumThreads = *Threads;
  auto RT = gridjit::HostRuntime::create(RO);
  if (!RT)
    return reportAndExit(RT.takeError());
  auto LoadStart = std::chrono::steady_clock::now();
  auto Loaded = (*RT)->load(*Art);
  double LoadMs = msSince(LoadStart);
  if (!Loaded)
    return reportAndExit(Loaded.takeError());
  std::vector<gridjit::KernelArg> Args;
  for (const jitrun::ArgValue &V : Values)
    Args.push_back(V.toKernelArg());
  gridjit::LaunchStats LS;
  Error E = (*RT)->launch(**Loaded, K->Name, Config, Args, &LS);
  if (Stats) {
    printStats(Times);
    errs() << format("  %-10s %10.3f ms\n", static_cast<const char *>("load"), LoadMs);
    errs() << format("  %-10s %10.3f ms  (%llu blocks, %u phases, %u of %u threads)\n",
                     static_cast<const char *>("run"), LS.Milliseconds,
                     (unsigned long long)LS.Blocks, LS.Phases, LS.Workers, (*RT)->getNumThreads());
  }
  if (E)
    return reportAndExit(std::move(E));
  for (const jitrun::ArgValue *V : ToPrint)
    outs() << jitrun::formatBuffer(*V) << '\n';
  outs().flush();
  for (const auto &[V, File] : ToWrite)
    if (Error E = jitrun::writeNpy(File, *V))
      return reportAndExit(std::move(E));
  return ExitSuccess;
}

/// Checks option combinations cl::opt cannot express; false on misuse.
bool checkUsage() {
  if (OptLevel > 3) {
    WithColor::error(errs(), "jit-run") << "-O" << OptLevel << ": the level must be 0, 1, 2 or 3\n";
    return false;
  }
  if (Emit == EmitStage::PTX && TargetOpt != TargetKind::Cuda) {
    WithColor::error(errs(), "jit-run") << "--emit=ptx needs --target=cuda\n";
    return false;
  }
  gridjit::Dim3 D;
  if (!parseDim3(GridOpt, D)) {
    WithColor::error(errs(), "jit-run") << "--grid " << GridOpt << ": expected X[,Y[,Z]]\n";
    return false;
  }
  if (!parseDim3(BlockOpt, D)) {
    WithColor::error(errs(), "jit-run") << "--block " << BlockOpt << ": expected X[,Y[,Z]]\n";
    return false;
  }
  bool KnownSm = false;
  for (const gridjit::NVPTXArchInfo &A : gridjit::getNVPTXArchs())
    KnownSm |= SmArch == A.Arch;
  if (!KnownSm) {
    WithColor::error(errs(), "jit-run") << "--sm=" << SmArch << ": unknown architecture (known:";
    for (const gridjit::NVPTXArchInfo &A : gridjit::getNVPTXArchs())
      errs() << ' ' << A.Arch;
    errs() << ")\n";
    return false;
  }
  return true;
}

int run() {
  auto Buf = readInput(InputFile);
  if (!Buf) {
    reportErrors(Buf.takeError());
    return ExitInputError;
  }
  StringRef Name = InputFile == "-" ? StringRef("<stdin>") : StringRef(InputFile);
  gridjit::PhaseTimes Times;
  auto M = loadModule((*Buf)->getBuffer(), Name, Times);
  if (!M) {
    reportErrors(M.takeError());
    return ExitInputError;
  }
  auto Finish = [&](Expected<std::string> Text) {
    if (Stats)
      printStats(Times);
    if (!Text) {
      reportErrors(Text.takeError());
      return ExitInputError;
    }
    if (Error E = writeOutput(*Text)) {
      reportErrors(std::move(E));
      return ExitInputError;
    }
    return ExitSuccess;
  };
  if (Emit == EmitStage::Kir)
    return Finish(gridjit::printModule(**M));
  if (Emit == EmitStage::None)
    return runKernel(**M, Times);
  auto T = makeTarget();
  if (!T) {
    reportErrors(T.takeError());
    return ExitInputError;
  }
  // The stage that is the cached artifact itself (PTX for cuda, the object
  // file for the host) comes through the cache; the others are compiled.
  if (Emit == EmitStage::PTX || (Emit == EmitStage::Asm && TargetOpt == TargetKind::Cuda) ||
      (Emit == EmitStage::Obj && TargetOpt == TargetKind::Host)) {
    auto A = compileCached(std::move(*T), **M, Times);
    if (!A)
      return Finish(A.takeError());
    return Finish(std::move(A->Payload));
  }
  gridjit::CompileOptions Opts;
  Opts.OptLevel = OptLevel;
  gridjit::EmitKind Kind = Emit == EmitStage::LLVM  ? gridjit::EmitKind::LLVM
                           : Emit == EmitStage::Obj ? gridjit::EmitKind::Object
                                                    : gridjit::EmitKind::Assembly;
  return Finish((*T)->emit(**M, Kind, Opts, &Times));
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(JitRunCategory); // also registers LLVM's common options
  registerStatsOption();
  // With an error stream, ParseCommandLineOptions reports misuse and returns
  // false instead of exiting with status 1, so misuse can exit with 2.
  if (!cl::ParseCommandLineOptions(argc, argv, "jit-run: compile, print and run KIR kernels\n",
                                   &errs()))
    return ExitUsage;
  if (!checkUsage())
    return ExitUsage;
  return run();
}
