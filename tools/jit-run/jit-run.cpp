//===- jit-run.cpp - Compile, print and run KIR kernels -------------------===//
//
// Part of gridjit. A thin driver over the library: it reads a KIR file (or
// standard input), parses and verifies it, compiles it for a target and
// prints the stage asked for, or (without --emit) runs a kernel through the
// target's gridjit::Runtime (buffers allocated on its device, copied in and
// back) and prints or saves its buffers.
// Every function that can fail returns llvm::Error or llvm::Expected; main()
// alone turns errors into messages and exit codes (Errors.h):
//   0  success
//   1  an error in the input (syntax, types, an unreadable file) or at run
//      time (a launch the runtime rejects, divergent synchronisation)
//   2  misuse of the command line
//   3  a kernel's memory fault, 4  a timeout, 5  a finding of a checked
//      launch (--check) (the exit status of each kind of library error is
//      its row's in gridjit/Support/ErrorKinds.def)
//   141  standard output or error is a pipe its reader closed (quietly)
//
//===----------------------------------------------------------------------===//

#include "BufferPrint.h"
#include "Errors.h"
#include "Features.h"
#include "KernelArgs.h"

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Compiler/Compiler.h"
#include "gridjit/IR/AST.h"
#include "gridjit/IR/Builtins.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Environment.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Support/Limits.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/Signals.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/TargetParser/Host.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unistd.h>

using namespace llvm;

namespace {

enum ExitCode {
  ExitSuccess = 0,
  ExitInputError = 1,
  ExitUsage = 2,
  ExitKernelFault = 3, ///< a host kernel accessed memory outside its buffers
  ExitTimeout = 4,     ///< --timeout: the kernel did not finish in time
  ExitCheck = 5,       ///< --check: the checked launch found a bug
  /// Standard output or error is a pipe that its reader closed (`| head`):
  /// 128 + SIGPIPE, the status a shell gives a command the signal ended.
  ExitClosedPipe = 141,
};

enum class EmitStage { None, Kir, LLVM, PTX, Asm, Obj };
enum class TargetKind { Host, Cuda };

cl::OptionCategory JitRunCategory("jit-run options");

// A list, so that parseCommandLine can accept none with --print-features;
// it reports any other count as LLVM does for one required positional
// argument.
cl::list<std::string> InputFiles(cl::Positional, cl::desc("<input.kir | ->"),
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

// nvcc's and llc's spellings of the architecture (docs/jit-run.md):
// -arch=sm_XX is --sm; -mcpu names the target's CPU, so it is --sm with
// --target=cuda and --cpu with --target=host (resolveArchitectures).
cl::opt<std::string> ArchOpt("arch", cl::desc("nvcc's spelling of --sm: -arch=sm_XX"),
                             cl::value_desc("sm_XX"), cl::cat(JitRunCategory));
cl::opt<std::string> McpuOpt("mcpu",
                             cl::desc("llc's spelling: -mcpu=sm_XX is --sm with --target=cuda, "
                                      "-mcpu=NAME is --cpu with --target=host"),
                             cl::value_desc("name"), cl::cat(JitRunCategory));

cl::opt<std::string>
    CpuOpt("cpu",
           cl::desc("With --emit: the CPU to compile host code for, as LLVM names it (znver3, "
                    "haswell, skylake-avx512, x86-64-v2, ...; default: this machine's)"),
           cl::value_desc("name"), cl::cat(JitRunCategory));

cl::opt<unsigned> DeviceOpt("device",
                            cl::desc("The CUDA device to run on, by ordinal (default: 0)"),
                            cl::value_desc("n"), cl::init(0), cl::cat(JitRunCategory));

/// LLVM's own command line library registers a `-stats` option (its
/// statistics counters, compiled out of release LLVM builds) on first use of
/// the command line. The jit-run contract needs `--stats` for gridjit's
/// phase timings and cache counts, so the LLVM one is removed and ours is
/// registered in its place. Workaround for a name clash; it can go if LLVM
/// stops registering `-stats` in initCommonOptions.
cl::opt<bool> &registerStatsOption() {
  if (cl::Option *LLVMStats = cl::getRegisteredOptions().lookup("stats"))
    LLVMStats->removeArgument();
  static cl::opt<bool> StatsOpt("stats",
                                cl::desc("Print phase timings and cache statistics on stderr"),
                                cl::cat(JitRunCategory));
  return StatsOpt;
}

// The compiled-kernel cache (docs/Cache.md).
cl::opt<std::string> CacheDirOpt("cache-dir",
                                 cl::desc("Directory of the compiled-kernel cache (default: "
                                          "$GRIDJIT_CACHE_DIR, $XDG_CACHE_HOME/gridjit, "
                                          "~/.cache/gridjit)"),
                                 cl::value_desc("dir"), cl::cat(JitRunCategory));
cl::opt<bool> NoCache("no-cache", cl::desc("Do not read or write the disk or remote cache"),
                      cl::cat(JitRunCategory));
cl::opt<std::string> CacheSecretOpt(
    "cache-secret-file",
    cl::desc("File holding the disk cache's HMAC secret, for a directory shared between users "
             "(default: $GRIDJIT_CACHE_SECRET_FILE, else the remote cache's secret; none: the "
             "directory must be yours and not writable by others)"),
    cl::value_desc("file"), cl::cat(JitRunCategory));
// The remote tier (docs/RemoteCache.md).
cl::opt<std::string> RemoteCacheOpt(
    "remote-cache",
    cl::desc("The fleet-wide remote cache: redis://[user:password@]host[:port][/db] or "
             "redis+unix:///path (default: $GRIDJIT_REMOTE_CACHE; none: no remote cache)"),
    cl::value_desc("url"), cl::cat(JitRunCategory));
cl::opt<bool> RemoteReadOnlyOpt("remote-cache-read-only",
                                cl::desc("Only read the remote cache (never write it)"),
                                cl::cat(JitRunCategory));
cl::opt<std::string>
    RemoteSecretOpt("remote-cache-secret-file",
                    cl::desc("File holding the remote cache's HMAC secret (default: "
                             "$GRIDJIT_REMOTE_CACHE_SECRET_FILE; none: entries are not signed)"),
                    cl::value_desc("file"), cl::cat(JitRunCategory));

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
            cl::desc("A kernel argument, one per parameter: NAME=SPEC (the forms of SPEC: below)"),
            cl::value_desc("name=spec"), cl::cat(JitRunCategory));
cl::list<std::string>
    ConstantOpts("constant",
                 cl::desc("Constant memory of the module, set before the launch: NAME=v0,v1,... "
                          "or NAME=@FILE.npy (or a buffer SPEC), every element"),
                 cl::value_desc("name=values"), cl::cat(JitRunCategory));
cl::list<std::string>
    PrintOpts("print",
              cl::desc("After the run, print buffer NAME, an element NAME[I] or a slice "
                       "NAME[START:STOP:STEP]; with :summary, its count, NaNs, min, max and mean"),
              cl::value_desc("name[slice][:summary]"), cl::cat(JitRunCategory));
cl::list<std::string> OutOpts("out",
                              cl::desc("After the run, write buffer NAME as a NumPy .npy file"),
                              cl::value_desc("name=file.npy"), cl::cat(JitRunCategory));
cl::opt<unsigned> ThreadsOpt("threads",
                             cl::desc("Worker threads (default: $GRIDJIT_NUM_THREADS, else the "
                                      "CPUs this process may use)"),
                             cl::value_desc("n"), cl::init(0), cl::cat(JitRunCategory));
cl::opt<unsigned> ConcurrentOpt(
    "concurrent",
    cl::desc("Launch the kernel from N threads at once, each on its own copy of the buffers, "
             "from one loaded module; every copy must come back bit-identical (default: 1)"),
    cl::value_desc("n"), cl::init(1), cl::cat(JitRunCategory));
cl::opt<unsigned> TimeoutOpt("timeout",
                             cl::desc("Stop the run with exit status 4 when the kernel has not "
                                      "finished after this many seconds (default: 0, no limit)"),
                             cl::value_desc("seconds"), cl::init(0), cl::cat(JitRunCategory));
cl::opt<uint64_t> PrintBufferOpt(
    "print-buffer",
    cl::desc("Bytes of a host launch's print buffer; records beyond it are dropped and counted "
             "(default: 1048576)"),
    cl::value_desc("bytes"), cl::init(0), cl::cat(JitRunCategory));
cl::opt<bool> NoCatchFaults(
    "no-catch-faults",
    cl::desc("Do not catch a host kernel's memory faults: the runtime installs no signal "
             "handler, and a fault ends jit-run as any crash does"),
    cl::cat(JitRunCategory));
cl::opt<bool> NoIterationMajor(
    "no-iteration-major",
    cl::desc("Host target: run loops without a synchronisation point thread by thread instead "
             "of iteration-major (HostTargetOptions::IterationMajor = false)"),
    cl::cat(JitRunCategory));
// The kernel checker (docs/Check.md).
cl::opt<bool>
    CheckOpt("check",
             cl::desc("Host target: compile checked code and report out-of-bounds "
                      "accesses, data races, uninitialised shared memory reads, undefined "
                      "operations and sizes a GPU could not run (those of --sm) as "
                      "errors, exit status 5"),
             cl::cat(JitRunCategory));
cl::opt<unsigned> CheckMaxFindingsOpt(
    "check-max-findings",
    cl::desc("With --check: the distinct findings to collect before the launch stops "
             "(default: 1)"),
    cl::value_desc("n"), cl::init(1), cl::cat(JitRunCategory));
cl::opt<bool> CheckSameValueWritesOpt(
    "check-same-value-writes",
    cl::desc("With --check: also report two writes of the same bytes with the same value"),
    cl::cat(JitRunCategory));
cl::opt<bool> PrintFeatures("print-features",
                            cl::desc("Print the features of this build on this machine, one per "
                                     "line, and exit"),
                            cl::cat(JitRunCategory));
cl::opt<bool> ListDevices("list-devices",
                          cl::desc("List the CUDA devices this machine has, one per line, and "
                                   "exit"),
                          cl::cat(JitRunCategory));

/// What --help says after the options: the forms of --arg and --print,
/// and one complete command with its output (test/Driver/help.test runs
/// it and every SPEC form listed here).
std::string moreHelp() {
  std::string Text;
  raw_string_ostream OS(Text);
  OS << "\nARGUMENTS (--arg NAME=SPEC, one for each parameter of the kernel):\n"
        "  A scalar parameter takes a literal of its type: 1000, -3, 0x1f, 2.5, 1e-3,\n"
        "  inf, nan, true, false. A ptr<T> parameter takes a buffer of T elements:\n";
  for (const jitrun::BufferSpecForm &F : jitrun::getBufferSpecForms())
    OS << format("    %-16s%s\n", F.Syntax, F.Meaning);
  OS << "\nPRINTING (--print SPEC, after the run):\n"
        "    y               every element of buffer y\n"
        "    y[5]            one element (y[-1]: the last)\n"
        "    y[0:8]          a slice, as in Python (y[-4:], y[::2], y[::-1])\n"
        "    y:summary       count, NaNs, min, max and mean (also y[0:8]:summary)\n"
        "\nEXAMPLE (from the source tree):\n"
        "  jit-run examples/saxpy.kir --grid 4 --block 256 --arg n=1000 --arg a=2.0 \\\n"
        "      --arg x=iota:1000 --arg y=fill:1000:1.0 --print 'y[0:4]'\n"
        "prints\n"
        "  y[0:4] = [1, 3, 5, 7]\n"
        "\nEvery option, the exit statuses and more examples: docs/jit-run.md\n";
  return Text;
}
const std::string MoreHelpText = moreHelp();
cl::extrahelp MoreHelp(MoreHelpText);

/// Everything the command line asks for, read once from the options above
/// and checked (readOptions).
struct Options {
  std::string InputFile;
  EmitStage Emit = EmitStage::None;
  TargetKind Target = TargetKind::Host;
  unsigned OptLevel = 3;
  std::string SmArch;
  bool SmGiven = false;  ///< --sm (or -arch, -mcpu) was given: no device decides it
  std::string Cpu;       ///< --cpu (or -mcpu): the host CPU to compile for (empty: this one)
  std::string CpuOption; ///< the option that gave Cpu ("--cpu", "-mcpu"), for messages
  unsigned Device = 0;
  bool Stats = false;
  std::string CacheDir, CacheSecretFile;
  bool NoCache = false;
  std::string RemoteCache, RemoteSecretFile;
  bool RemoteReadOnly = false;
  /// The cache's tiers, once opened for a runtime that shares them with
  /// the compile (--target=cuda: the cubin cache).
  std::optional<gridjit::CacheTiers> Tiers;
  std::string OutputFile;
  std::optional<std::string> KernelName;
  gridjit::LaunchConfig Launch;
  bool GridGiven = false, BlockGiven = false; ///< --grid, --block
  std::vector<std::string> Args, Prints, Outs;
  std::optional<unsigned> Threads;
  unsigned Concurrent = 1;       ///< --concurrent
  unsigned TimeoutSeconds = 0;   ///< --timeout; 0: none
  bool CatchFaults = true;       ///< not --no-catch-faults
  bool IterationMajor = true;    ///< not --no-iteration-major
  uint64_t PrintBufferBytes = 0; ///< --print-buffer; 0: the default
  /// --check: checked code held to the limits of GPU architecture
  /// sm_CheckArch (--sm's number), --check-max-findings,
  /// --check-same-value-writes.
  bool Check = false;
  unsigned CheckArch = 80;
  unsigned CheckMaxFindings = 1;
  bool CheckSameValueWrites = false;
  /// The LLVM options given (givenLLVMOptions): the module is compiled
  /// without the disk and remote cache.
  std::vector<std::string> LLVMOptions;
};

/// What the one compile of this run did in the cache, for --stats.
struct CacheReport {
  bool Used = false; ///< the compile went through a gridjit::Compiler
  gridjit::CompileInfo Info;
  gridjit::CompilerStats Stats;
  std::string Dir; ///< empty: no disk cache
  bool DiskOn = false;
  std::string RemoteURL; ///< empty: no remote cache
  /// The LLVM options that kept the compile away from the disk and remote
  /// cache ("--time-passes, --print-after-all"); empty: none.
  std::string Bypassed;
};

/// What --stats prints about the compile: the phase times and the cache's
/// report.
struct CompileReport {
  gridjit::PhaseTimes Times;
  CacheReport Cache;
};

/// Reads the input file, or standard input for "-".
Expected<std::unique_ptr<MemoryBuffer>> readInput(StringRef Path) {
  auto Text = jitrun::readFileBounded(Path, jitrun::MaxSourceBytes);
  if (!Text)
    return createStringError(inconvertibleErrorCode(), "cannot read '%s': %s",
                             Path == "-" ? "<stdin>" : Path.str().c_str(),
                             toString(Text.takeError()).c_str());
  return MemoryBuffer::getMemBufferCopy(*Text, Path == "-" ? "<stdin>" : Path);
}

/// The stages whose output is binary (an object file), not text.
bool isBinaryStage(EmitStage E) { return E == EmitStage::Obj; }

/// Refuses to write binary output to standard output when \p Path is "-"
/// and standard output is a terminal (\p StdoutIsTerminal), which the
/// bytes would garble.
Error checkNotBinaryToTerminal(StringRef Path, bool Binary, bool StdoutIsTerminal) {
  if (Binary && Path == "-" && StdoutIsTerminal)
    return jitrun::usageError("--emit=obj: refusing to write a binary object file to a terminal; "
                              "give -o FILE, or redirect standard output");
  return Error::success();
}

/// Checks \p OS, a stream jit-run has written to, and clears its error (a
/// raw_fd_ostream destroyed with one ends the process with "LLVM ERROR"):
/// EPIPE is a ClosedPipeError, another error "cannot write WHAT: WHY".
Error checkStream(raw_fd_ostream &OS, const Twine &What) {
  OS.flush();
  if (!OS.has_error())
    return Error::success();
  std::error_code EC = OS.error();
  OS.clear_error();
  if (EC == std::errc::broken_pipe)
    return make_error<jitrun::ClosedPipeError>();
  return createStringError(EC, "cannot write " + What + ": " + EC.message());
}

/// Writes \p Text (\p Binary: an object file) to \p Path ("-": standard
/// output, but binary only when it is not a terminal); the file is only
/// created when all of it is written.
Error writeOutput(const std::string &Path, StringRef Text, bool Binary) {
  if (Error E = checkNotBinaryToTerminal(Path, Binary, sys::Process::StandardOutIsDisplayed()))
    return E;
  std::error_code EC;
  ToolOutputFile Out(Path, EC, Binary ? sys::fs::OF_None : sys::fs::OF_Text);
  if (EC)
    return createStringError(EC, "cannot open '%s' for writing: %s", Path.c_str(),
                             EC.message().c_str());
  Out.os() << Text;
  if (Error E = checkStream(Out.os(), Path == "-" ? "standard output" : "'" + Path + "'"))
    return E;
  Out.keep();
  return Error::success();
}

/// Milliseconds since \p Start.
double msSince(std::chrono::steady_clock::time_point Start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
      .count();
}

/// A count with its noun in the number it needs: {1, "hit", "hits"} is
/// "1 hit", {0, "hit", "hits"} "0 hits".
struct Counted {
  uint64_t N;
  const char *One, *Many;
};

/// The counts of \p Items, separated by ", " ("1 hit, 0 misses").
std::string counts(std::initializer_list<Counted> Items) {
  std::string Out;
  for (const Counted &C : Items)
    Out += (Out.empty() ? "" : ", ") + std::to_string(C.N) + " " + (C.N == 1 ? C.One : C.Many);
  return Out;
}

/// Prints the cache part of --stats: the cache's own phases and counts.
void printCacheStats(const CompileReport &R) {
  auto Line = [](StringRef Name, double Ms) {
    errs() << format("  %-10s %10.3f ms\n", Name.str().c_str(), Ms);
  };
  const gridjit::CompileInfo &I = R.Cache.Info;
  const gridjit::CompilerStats &S = R.Cache.Stats;
  Line("key", I.KeyMs);
  Line("lookup", I.LookupMs);
  Line("wait", I.WaitMs);
  Line("store", I.StoreMs);
  Line("total", R.Times.ParseMs + R.Times.VerifyMs + I.TotalMs);
  auto Text = [](StringRef Name, const Twine &Value) {
    errs() << format("  %-10s ", Name.str().c_str()) << Value << '\n';
  };
  Text("cache", gridjit::cacheOutcomeName(I.Outcome));
  Text("memory", counts({{S.MemoryHits, "hit", "hits"}, {S.MemoryMisses, "miss", "misses"}}));
  if (R.Cache.DiskOn)
    Text("disk", counts({{S.DiskHits, "hit", "hits"},
                         {S.DiskMisses, "miss", "misses"},
                         {S.Disk.BadEntries, "bad entry", "bad entries"},
                         {S.Disk.Stores, "store", "stores"},
                         {S.Disk.StoreFailures, "store failure", "store failures"}}));
  else
    Text("disk", "off");
  if (!R.Cache.RemoteURL.empty()) {
    const gridjit::RemoteCacheStats &RS = S.Remote;
    Text("remote", counts({{RS.Hits, "hit", "hits"},
                           {RS.Misses, "miss", "misses"},
                           {RS.Errors, "error", "errors"},
                           {RS.Timeouts, "timeout", "timeouts"},
                           {RS.BadEntries, "bad entry", "bad entries"},
                           {RS.AuthFailures, "auth failure", "auth failures"},
                           {RS.Oversize, "oversize value", "oversize values"},
                           {RS.BadReplies, "bad reply", "bad replies"}}));
    Text("remote-io", counts({{RS.Stores, "store", "stores"},
                              {RS.StoreExisting, "existing", "existing"},
                              {RS.BytesRead, "byte read", "bytes read"},
                              {RS.BytesWritten, "byte written", "bytes written"}}));
    Text("breaker",
         counts({{RS.BreakerTrips, "trip", "trips"}, {RS.BreakerSkips, "skip", "skips"}}));
    Text("lease", counts({{RS.LeasesTaken, "taken", "taken"},
                          {RS.LeaseWaits, "wait", "waits"},
                          {RS.LeaseWaitHits, "wait hit", "wait hits"},
                          {RS.LeaseExpired, "expired", "expired"}}));
    if (!I.RemoteProblem.empty())
      Text("remote-note", I.RemoteProblem);
  }
  Text("compiles", Twine(S.Compiles));
  Text("cache-dir", R.Cache.DiskOn             ? R.Cache.Dir
                    : R.Cache.Bypassed.empty() ? "off"
                                               : "off (LLVM options given: " + R.Cache.Bypassed +
                                                     "; compiled without the cache)");
}

/// Prints --stats: the phase times, then the cache's report if the compile
/// went through the cache.
void printStats(const CompileReport &R) {
  errs() << "jit-run: stats:\n";
  auto Line = [](StringRef Name, double Ms) {
    errs() << format("  %-10s %10.3f ms\n", Name.str().c_str(), Ms);
  };
  Line("parse", R.Times.ParseMs);
  Line("verify", R.Times.VerifyMs);
  Line("lower", R.Times.LowerMs);
  Line("optimize", R.Times.OptimizeMs);
  Line("codegen", R.Times.CodegenMs);
  if (R.Cache.Used)
    printCacheStats(R);
}

/// The cache's options as the command line gives them (--cache-dir,
/// --no-cache, --remote-cache...; the library adds the environment's
/// defaults, $GRIDJIT_REMOTE_CACHE among them).
gridjit::CompilerOptions cacheOptions(const Options &O) {
  gridjit::CompilerOptions CO;
  CO.UseDiskCache = !O.NoCache;
  CO.CacheDir = O.CacheDir;
  CO.CacheSecretFile = O.CacheSecretFile;
  CO.UseRemoteCache = !O.NoCache;
  CO.Remote.URL = O.RemoteCache;
  CO.Remote.ReadOnly = O.RemoteReadOnly;
  CO.RemoteSecretFile = O.RemoteSecretFile;
  CO.Warning = [](const std::string &W) { WithColor::warning(errs(), "jit-run") << W << '\n'; };
  CO.Tiers = O.Tiers;
  return CO;
}

/// Compiles verified \p M for \p T through a gridjit::Compiler, so that the
/// artifact comes from (and goes to) the cache; adds the phase times to
/// \p R and keeps the cache's report there for --stats.
Expected<gridjit::Artifact> compileCached(std::shared_ptr<const gridjit::Target> T,
                                          const gridjit::Module &M, const Options &O,
                                          CompileReport &R) {
  gridjit::CompilerOptions CO = cacheOptions(O);
  if (!O.LLVMOptions.empty()) {
    // Compiled anyway, and not stored (see givenLLVMOptions).
    CO.UseDiskCache = CO.UseRemoteCache = false;
    CO.Tiers.reset();
    R.Cache.Bypassed = llvm::join(O.LLVMOptions, ", ");
  }
  CO.Targets = {std::move(T)};
  CO.OptLevel = O.OptLevel;
  CO.AsyncThreads = 1;
  auto C = gridjit::Compiler::create(std::move(CO));
  if (!C)
    return C.takeError();
  auto Compiled = (*C)->compile(M, {}, &R.Cache.Info);
  R.Cache.Used = true;
  R.Cache.Stats = (*C)->getStats();
  R.Cache.Dir = (*C)->getCacheDirectory();
  R.Cache.DiskOn = !R.Cache.Dir.empty();
  R.Cache.RemoteURL = (*C)->getRemoteCacheURL();
  R.Times.LowerMs += R.Cache.Info.Times.LowerMs;
  R.Times.OptimizeMs += R.Cache.Info.Times.OptimizeMs;
  R.Times.CodegenMs += R.Cache.Info.Times.CodegenMs;
  if (!Compiled)
    return Compiled.takeError();
  return (*Compiled)->Art;
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

/// The target of the command line: --target (with --sm, --cpu), for
/// --check the host target's checked twin (Target::makeChecked).
Expected<std::shared_ptr<const gridjit::Target>> makeTarget(const Options &O) {
  if (O.Target == TargetKind::Cuda) {
    gridjit::NVPTXTargetOptions Opts;
    Opts.Arch = O.SmArch;
    return gridjit::createNVPTXTarget(Opts);
  }
  gridjit::HostTargetOptions HO;
  HO.CPU = O.Cpu;
  HO.IterationMajor = O.IterationMajor;
  auto T = gridjit::createHostTarget(HO);
  if (!T && !O.Cpu.empty())
    return jitrun::usageError(O.CpuOption + "=" + O.Cpu + ": " + toString(T.takeError()) +
                              (StringRef(O.Cpu).starts_with("sm_")
                                   ? "; sm_XX is an NVPTX architecture: add --target=cuda"
                                   : ""));
  if (!T || !O.Check)
    return T;
  auto Checked = (*T)->makeChecked(O.CheckArch);
  if (!Checked)
    return jitrun::usageError("--check with --sm=sm_" + Twine(O.CheckArch) + ": " +
                              toString(Checked.takeError()));
  return Checked;
}

//===----------------------------------------------------------------------===//
// Running a kernel
//===----------------------------------------------------------------------===//

/// The kernel to run: --kernel's, else the module's only one.
Expected<const gridjit::FunctionDecl *> selectKernel(const gridjit::Module &M, const Options &O) {
  std::vector<const gridjit::FunctionDecl *> Kernels = M.getKernels();
  if (O.KernelName) {
    const gridjit::FunctionDecl *K = nullptr;
    for (const gridjit::FunctionDecl *F : Kernels)
      if (F->Name == *O.KernelName)
        K = F;
    if (!K)
      return jitrun::usageError("--kernel " + *O.KernelName +
                                ": the module has no kernel of that name");
    return K;
  }
  if (Kernels.size() == 1)
    return Kernels.front();
  if (Kernels.empty())
    return createStringError(inconvertibleErrorCode(), M.Name + " has no kernel to run");
  std::string Names;
  for (const gridjit::FunctionDecl *F : Kernels)
    Names += (Names.empty() ? "" : ", ") + F->Name;
  return jitrun::usageError("the module has several kernels (" + Names +
                            "); choose one with --kernel");
}

/// Kernel \p K's signature, `kernel NAME(p: T, ...)`, on a line of its
/// own, and when \p Marked marks parameters, a line with `^~~~` under each
/// of them.
std::string signatureLines(const gridjit::KernelInfo &K, ArrayRef<bool> Marked = {}) {
  std::string Line = "  kernel " + K.Name + "(", Marks;
  for (size_t I = 0; I < K.Params.size(); ++I) {
    if (I)
      Line += ", ";
    std::string Param = K.Params[I].Name + ": " + K.Params[I].Ty.str();
    if (I < Marked.size() && Marked[I])
      Marks +=
          std::string(Line.size() - Marks.size(), ' ') + "^" + std::string(Param.size() - 1, '~');
    Line += Param;
  }
  Line += ")";
  return "\n" + Line + (Marks.empty() ? "" : "\n" + Marks);
}

/// The builtin values that differ between the threads of a launch
/// (thread_idx, block_idx, block_dim, grid_dim, lane_id: all but constants)
/// that kernel \p K reads, itself or in the functions it calls, in the
/// order of Builtins.def. (A walk with its own stack: the tree may be as
/// deep as the verifier allows.)
std::vector<std::string_view> launchDependentBuiltins(const gridjit::FunctionDecl &K) {
  using namespace gridjit;
  std::set<BuiltinValue> Read;
  std::set<const FunctionDecl *> Seen{&K};
  std::vector<const Stmt *> Stmts{K.Body.get()};
  std::vector<const Expr *> Exprs;
  auto AddExpr = [&](const ExprPtr &E) {
    if (E)
      Exprs.push_back(E.get());
  };
  auto AddStmt = [&](const Stmt *S) {
    if (S)
      Stmts.push_back(S);
  };
  while (!Stmts.empty() || !Exprs.empty()) {
    if (!Exprs.empty()) {
      const Expr *E = Exprs.back();
      Exprs.pop_back();
      if (const auto *N = dyn_cast<NameExpr>(E)) {
        if (N->Builtin != BuiltinValue::None &&
            getBuiltinValueInfo(N->Builtin).Varies != VariesPer::Never)
          Read.insert(N->Builtin);
      } else if (const auto *U = dyn_cast<UnaryExpr>(E)) {
        AddExpr(U->Operand);
      } else if (const auto *B = dyn_cast<BinaryExpr>(E)) {
        AddExpr(B->LHS), AddExpr(B->RHS);
      } else if (const auto *Q = dyn_cast<CondExpr>(E)) {
        AddExpr(Q->C), AddExpr(Q->T), AddExpr(Q->F);
      } else if (const auto *C = dyn_cast<CastExpr>(E)) {
        AddExpr(C->Operand);
      } else if (const auto *Call = dyn_cast<CallExpr>(E)) {
        for_each(Call->Args, AddExpr);
        if (Call->Fn && Seen.insert(Call->Fn).second)
          AddStmt(Call->Fn->Body.get());
      } else if (const auto *I = dyn_cast<IndexExpr>(E)) {
        AddExpr(I->Base), AddExpr(I->Idx);
      } else if (const auto *M = dyn_cast<MemberExpr>(E)) {
        AddExpr(M->Base);
      }
      continue;
    }
    const Stmt *S = Stmts.back();
    Stmts.pop_back();
    if (const auto *B = dyn_cast<BlockStmt>(S)) {
      for (const StmtPtr &Child : B->Body)
        AddStmt(Child.get());
    } else if (const auto *D = dyn_cast<DeclStmt>(S)) {
      AddExpr(D->Init), AddExpr(D->Var.ArraySize);
      for (const ExprPtr &Size : D->Var.InnerArraySizes)
        AddExpr(Size);
    } else if (const auto *A = dyn_cast<AssignStmt>(S)) {
      AddExpr(A->Target), AddExpr(A->Value);
    } else if (const auto *If = dyn_cast<IfStmt>(S)) {
      AddExpr(If->Cond), AddStmt(If->Then.get()), AddStmt(If->Else.get());
    } else if (const auto *W = dyn_cast<WhileStmt>(S)) {
      AddStmt(W->Init.get()), AddExpr(W->Cond), AddStmt(W->Body.get()), AddStmt(W->Update.get());
    } else if (const auto *F = dyn_cast<ForStmt>(S)) {
      AddExpr(F->Begin), AddExpr(F->End), AddExpr(F->Step), AddStmt(F->Body.get());
    } else if (const auto *R = dyn_cast<ReturnStmt>(S)) {
      AddExpr(R->Value);
    } else if (const auto *X = dyn_cast<ExprStmt>(S)) {
      AddExpr(X->E);
    }
  }
  std::vector<std::string_view> Names;
  for (BuiltinValue V : Read)
    Names.push_back(getBuiltinValueInfo(V).Name);
  return Names;
}

/// With neither --grid nor --block, a kernel that reads its position in
/// the launch ran as a single thread, which is rarely what was meant: a
/// note says so on stderr, naming what the kernel reads.
void noteSingleThread(const gridjit::FunctionDecl &K, const Options &O) {
  if (O.GridGiven || O.BlockGiven)
    return;
  std::vector<std::string_view> Read = launchDependentBuiltins(K);
  if (Read.empty())
    return;
  std::string List;
  for (size_t I = 0; I < Read.size(); ++I)
    List += (I == 0 ? "" : I + 1 == Read.size() ? " and " : ", ") + std::string(Read[I]);
  WithColor::note(errs(), "jit-run")
      << "kernel '" << K.Name << "' ran as a single thread (grid 1, block 1: no --grid or "
      << "--block given), but it reads " << List
      << "; give --grid and --block to launch more threads\n";
}

/// The value of every parameter of kernel \p K, from exactly one --arg each.
/// A missing one is misuse that names them all and shows the signature.
Expected<std::vector<jitrun::ArgValue>> buildArguments(const gridjit::KernelInfo &K,
                                                       const Options &O) {
  std::map<std::string, std::string> Specs;
  for (const std::string &A : O.Args) {
    auto [Name, Spec] = StringRef(A).split('=');
    if (!StringRef(A).contains('='))
      return jitrun::usageError("--arg " + A + ": expected NAME=SPEC");
    bool Known = false;
    for (const gridjit::KernelParamInfo &P : K.Params)
      Known |= P.Name == Name;
    if (!Known)
      return jitrun::usageError("--arg " + A + ": kernel '" + K.Name + "' has no parameter '" +
                                Name + "'" + signatureLines(K));
    if (!Specs.emplace(Name.str(), Spec.str()).second)
      return jitrun::usageError("--arg " + Name + " is given twice");
  }
  SmallVector<bool, 8> Missing;
  std::string MissingNames;
  for (const gridjit::KernelParamInfo &P : K.Params) {
    Missing.push_back(!Specs.count(P.Name));
    if (Missing.back())
      MissingNames += (MissingNames.empty() ? "" : ", ") + P.Name;
  }
  if (!MissingNames.empty())
    return jitrun::usageError("kernel '" + K.Name +
                              "' needs one --arg NAME=SPEC for each parameter; missing: " +
                              MissingNames + signatureLines(K, Missing) +
                              "\n  (a scalar takes a literal of its type, a ptr<T> a buffer: " +
                              jitrun::listBufferSpecForms() + "; see jit-run --help)");
  std::vector<jitrun::ArgValue> Values;
  for (const gridjit::KernelParamInfo &P : K.Params) {
    auto Alias = jitrun::parseAlias(K, P, Specs.at(P.Name));
    if (!Alias)
      return Alias.takeError();
    if (*Alias) {
      Values.push_back(std::move(**Alias));
      continue;
    }
    auto V = jitrun::parseArg(P, Specs.at(P.Name));
    if (!V)
      return V.takeError();
    Values.push_back(std::move(*V));
  }
  // Each alias once every buffer is made: its target may come after it.
  for (jitrun::ArgValue &V : Values)
    if (V.AliasOf)
      if (Error E = jitrun::refreshAlias(V, Values[*V.AliasOf]))
        return std::move(E);
  return std::move(Values);
}

/// One --print: the argument (an index into the arguments), what to show
/// of it and which of its elements.
struct Printed {
  size_t Arg;
  jitrun::PrintSpec Spec;
  jitrun::Selection Elements;
};

/// What to do with the buffers after the run.
struct Outputs {
  std::vector<Printed> ToPrint;
  std::vector<std::pair<size_t, std::string>> ToWrite; ///< argument, .npy file
};

/// The argument that is buffer \p Name, for \p Given (the option as the
/// command line gave it, for messages: "--print y[0:8]").
Expected<size_t> findBuffer(ArrayRef<jitrun::ArgValue> Values, StringRef KernelName, StringRef Name,
                            const Twine &Given) {
  for (size_t I = 0; I < Values.size(); ++I)
    if (Values[I].Param.Name == Name) {
      if (!Values[I].isPointer())
        return jitrun::usageError(Given + ": '" + Name + "' is a scalar parameter, not a buffer");
      return I;
    }
  return jitrun::usageError(Given + ": kernel '" + KernelName + "' has no parameter '" + Name +
                            "'");
}

/// The buffers --print and --out name.
Expected<Outputs> selectOutputs(ArrayRef<jitrun::ArgValue> Values, StringRef KernelName,
                                const Options &O) {
  Outputs Out;
  for (const std::string &Text : O.Prints) {
    auto Spec = jitrun::parsePrintSpec(Text);
    if (!Spec)
      return Spec.takeError();
    auto B = findBuffer(Values, KernelName, Spec->Name, "--print " + Text);
    if (!B)
      return B.takeError();
    auto Elements = jitrun::selectElements(*Spec, Values[*B].Count);
    if (!Elements)
      return Elements.takeError();
    Out.ToPrint.push_back({*B, std::move(*Spec), *Elements});
  }
  for (const std::string &Spec : O.Outs) {
    auto [Name, File] = StringRef(Spec).split('=');
    if (File.empty())
      return jitrun::usageError("--out " + Spec + ": expected NAME=FILE.npy");
    auto B = findBuffer(Values, KernelName, Name, "--out " + Name);
    if (!B)
      return B.takeError();
    Out.ToWrite.push_back({*B, File.str()});
  }
  return std::move(Out);
}

/// The worker threads: --threads, else $GRIDJIT_NUM_THREADS, else 0 (the
/// runtime's default). Only jit-run reads that variable; the library takes
/// the count from its caller.
Expected<unsigned> workerThreads(const Options &O) {
  // The same check for the option and the variable: 1 to limits::MaxThreads.
  auto Bad = [](const Twine &What) {
    return jitrun::usageError(What + " is not a number of threads from 1 to " +
                              Twine(gridjit::limits::MaxThreads));
  };
  if (O.Threads) {
    if (*O.Threads == 0 || *O.Threads > gridjit::limits::MaxThreads)
      return Bad("--threads " + Twine(*O.Threads));
    return *O.Threads;
  }
  // Read through the library's table of environment variables, like every
  // other read (docs/Cache.md lists the table).
  std::optional<std::string> Env = gridjit::getEnv(gridjit::EnvVar::GridjitNumThreads);
  if (!Env || Env->empty())
    return 0;
  unsigned N;
  if (StringRef(*Env).trim().getAsInteger(10, N) || N == 0 || N > gridjit::limits::MaxThreads)
    return Bad("GRIDJIT_NUM_THREADS='" + Twine(*Env) + "'");
  return N;
}

/// The library's name for the target of --target.
gridjit::TargetKind targetKind(const Options &O) {
  return O.Target == TargetKind::Cuda ? gridjit::TargetKind::NVPTX : gridjit::TargetKind::Host;
}

/// The bytes of a buffer's padding (ArgValue::Pad words on each side)
/// that stay behind in host memory: on the host target all of them, so
/// that the device buffer holds the elements only and ends where the
/// runtime's guard region starts (a kernel's write just past it faults,
/// docs/Runtime.md); on a GPU none (the padding goes along).
uint64_t padLeftBehind(const gridjit::Runtime &RT) {
  return RT.getTargetKind() == gridjit::TargetKind::Host ? jitrun::ArgValue::Pad * sizeof(uint64_t)
                                                         : 0;
}

/// The bytes of buffer argument \p V's elements: the extent of its
/// pointer (KernelArg::withExtent), which a checked launch holds the
/// kernel's accesses to. (An alias's elements are those of its buffer from
/// its offset on.) The padding around them is not the kernel's.
uint64_t elementBytes(const jitrun::ArgValue &V) {
  return uint64_t(V.Count) * gridjit::scalarBytes(V.kind());
}

/// The arguments of the launch: scalars as they are; every buffer copied
/// into device memory of \p RT (kept in \p Buffers), with its extent.
Expected<std::vector<gridjit::KernelArg>>
makeDeviceArguments(gridjit::Runtime &RT, ArrayRef<jitrun::ArgValue> Values,
                    std::vector<gridjit::DeviceBuffer> &Buffers) {
  std::vector<gridjit::KernelArg> Args;
  Buffers.resize(Values.size());
  uint64_t Skip = padLeftBehind(RT);
  for (size_t I = 0; I < Values.size(); ++I) {
    const jitrun::ArgValue &V = Values[I];
    if (!V.isPointer() || V.AliasOf) {
      Args.push_back(V.toKernelArg()); // an alias's address comes below
      continue;
    }
    uint64_t Bytes = V.Storage.size() * sizeof(uint64_t) - 2 * Skip;
    auto B = RT.allocate(Bytes);
    if (!B)
      return B.takeError();
    const char *Src = reinterpret_cast<const char *>(V.Storage.data()) + Skip;
    if (Error E = RT.copyToDevice(*B, Src, Bytes))
      return std::move(E);
    Args.push_back(gridjit::KernelArg::devicePointer(
                       B->getAddress() + jitrun::ArgValue::Pad * sizeof(uint64_t) - Skip, V.kind())
                       .withExtent(elementBytes(V)));
    Buffers[I] = std::move(*B);
  }
  for (size_t I = 0; I < Values.size(); ++I)
    if (const jitrun::ArgValue &V = Values[I]; V.AliasOf)
      Args[I] = gridjit::KernelArg::devicePointer(
                    Args[*V.AliasOf].getAddress() + V.AliasOffset * gridjit::scalarBytes(V.kind()),
                    V.kind())
                    .withExtent(elementBytes(V));
  return std::move(Args);
}

/// Copies every buffer back from the device into \p Values.
Error copyBuffersBack(gridjit::Runtime &RT, MutableArrayRef<jitrun::ArgValue> Values,
                      ArrayRef<gridjit::DeviceBuffer> Buffers) {
  uint64_t Skip = padLeftBehind(RT);
  for (size_t I = 0; I < Values.size(); ++I)
    if (Buffers[I])
      if (Error E = RT.copyFromDevice(reinterpret_cast<char *>(Values[I].Storage.data()) + Skip,
                                      Buffers[I], Buffers[I].size()))
        return E;
  for (jitrun::ArgValue &V : Values)
    if (V.AliasOf)
      if (Error E = jitrun::refreshAlias(V, Values[*V.AliasOf]))
        return E;
  return Error::success();
}

/// One launch of \p Kernel of \p L with its own copy of the buffers of
/// \p Values (which receives what came back). The output of the kernel's
/// print calls goes to standard output, or to \p Printed when given.
Error launchOnce(gridjit::Runtime &RT, gridjit::LoadedModule &L, StringRef Kernel,
                 MutableArrayRef<jitrun::ArgValue> Values, const Options &O,
                 gridjit::LaunchStats *Stats, std::string *Printed = nullptr) {
  std::vector<gridjit::DeviceBuffer> Buffers;
  auto Args = makeDeviceArguments(RT, Values, Buffers);
  if (!Args)
    return Args.takeError();
  gridjit::LaunchOptions LO;
  LO.Stats = Stats;
  LO.PrintBufferBytes = O.PrintBufferBytes;
  LO.CheckMaxFindings = O.CheckMaxFindings;
  LO.CheckSameValueWrites = O.CheckSameValueWrites;
  if (Printed)
    LO.PrintOutput = [Printed](StringRef Text) { *Printed += Text; };
  else
    LO.PrintOutput = [](StringRef Text) { outs() << Text; };
  if (Error E = RT.launch(L, Kernel, O.Launch, *Args, LO))
    return E;
  if (Error E = RT.synchronize())
    return E;
  return copyBuffersBack(RT, Values, Buffers);
}

/// --concurrent N: N - 1 more threads launch at the same time as the first,
/// each with a copy of \p Values; afterwards every buffer of every copy
/// must equal the first thread's bit for bit.
Error launchConcurrently(gridjit::Runtime &RT, gridjit::LoadedModule &L, StringRef Kernel,
                         MutableArrayRef<jitrun::ArgValue> Values, const Options &O,
                         gridjit::LaunchStats *Stats) {
  unsigned N = O.Concurrent;
  std::vector<std::vector<jitrun::ArgValue>> Copies(
      N - 1, std::vector<jitrun::ArgValue>(Values.begin(), Values.end()));
  std::vector<std::optional<Error>> Results(N);
  // Each launch's print output, which must be the same too: thread 0's is
  // written once they have all finished.
  std::vector<std::string> Printed(N);
  std::vector<std::thread> Threads;
  for (unsigned T = 1; T < N; ++T) {
    try {
      Threads.emplace_back([&, T] {
        Results[T].emplace(launchOnce(RT, L, Kernel, Copies[T - 1], O, nullptr, &Printed[T]));
      });
    } catch (const std::system_error &Ex) {
      for (std::thread &Started : Threads)
        Started.join();
      return createStringError(inconvertibleErrorCode(),
                               "--concurrent %u: cannot start launching thread %u: %s", N, T,
                               Ex.what());
    }
  }
  Results[0].emplace(launchOnce(RT, L, Kernel, Values, O, Stats, &Printed[0]));
  for (std::thread &T : Threads)
    T.join();
  outs() << Printed[0];
  Error All = Error::success();
  for (unsigned T = 0; T < N; ++T)
    if (*Results[T])
      All = joinErrors(std::move(All),
                       createStringError(inconvertibleErrorCode(), "launching thread %u: %s", T,
                                         toString(std::move(*Results[T])).c_str()));
  if (All)
    return All;
  for (unsigned T = 1; T < N; ++T)
    if (Printed[T] != Printed[0])
      return createStringError(inconvertibleErrorCode(),
                               "--concurrent: the print output of launching thread %u differs "
                               "from thread 0's",
                               T);
  for (unsigned T = 1; T < N; ++T)
    for (size_t I = 0; I < Values.size(); ++I)
      if (Values[I].isPointer() && Copies[T - 1][I].Storage != Values[I].Storage)
        return createStringError(inconvertibleErrorCode(),
                                 "--concurrent: buffer '%s' of launching thread %u differs from "
                                 "thread 0's",
                                 Values[I].Param.Name.c_str(), T);
  return Error::success();
}

//===----------------------------------------------------------------------===//
// The --timeout watchdog
//===----------------------------------------------------------------------===//

/// --timeout: a thread that waits for the launch; if it has not finished
/// after \p Seconds, prints a message naming the kernel and ends the
/// process with ExitTimeout (a running host kernel cannot be stopped
/// otherwise, docs/jit-run.md).
class Watchdog {
public:
  /// Starts the watchdog (nothing for 0 seconds); fails when the system
  /// cannot start its thread.
  Error start(StringRef Kernel, unsigned Seconds) {
    if (Seconds == 0)
      return Error::success();
    try {
      Thread = std::thread([this, Name = Kernel.str(), Seconds] {
        std::unique_lock<std::mutex> L(M);
        if (CV.wait_for(L, std::chrono::seconds(Seconds), [this] { return Done; }))
          return;
        errs() << "jit-run: error: kernel '" << Name << "' did not finish within " << Seconds
               << (Seconds == 1 ? " second" : " seconds") << " (--timeout); stopping\n";
        errs().flush();
        _exit(ExitTimeout);
      });
    } catch (const std::system_error &Ex) {
      return createStringError(inconvertibleErrorCode(),
                               "--timeout: cannot start the watchdog thread: %s", Ex.what());
    }
    return Error::success();
  }
  ~Watchdog() {
    if (!Thread.joinable())
      return;
    {
      std::lock_guard<std::mutex> L(M);
      Done = true;
    }
    CV.notify_all();
    Thread.join();
  }

private:
  std::mutex M;
  std::condition_variable CV;
  bool Done = false;
  std::thread Thread;
};

/// --constant NAME=SPEC: sets constant memory NAME of \p L (each at most
/// once; the others stay zero).
Error setConstants(gridjit::Runtime &RT, gridjit::LoadedModule &L) {
  llvm::StringSet<> Seen;
  for (const std::string &Opt : ConstantOpts) {
    auto [Name, Spec] = StringRef(Opt).split('=');
    Name = Name.trim();
    if (!StringRef(Opt).contains('=') || Name.empty())
      return jitrun::usageError("--constant " + Opt + ": expected NAME=VALUES");
    const gridjit::ConstantInfo *C = L.getConstant(Name);
    if (!C) {
      std::string Known;
      for (const gridjit::ConstantInfo &K : L.getConstants())
        Known += "\n  constant " + K.Name + ": " + K.Ty.str();
      return jitrun::usageError("--constant " + Opt + ": the module has no constant memory '" +
                                Name + "'" +
                                (Known.empty() ? std::string(" (it declares none)") : Known));
    }
    if (!Seen.insert(Name).second)
      return jitrun::usageError("--constant " + Name + " is given twice");
    auto V = jitrun::parseConstant(*C, Spec);
    if (!V)
      return V.takeError();
    if (Error E = RT.setConstant(L, Name, V->data(), C->Bytes, C->Ty.getScalarKind()))
      return E;
  }
  return Error::success();
}

/// Compiles \p M for \p T (through the cache), loads it into the runtime
/// of the target and runs kernel \p Kernel with \p Values, whose buffers
/// go to the device and come back; prints --stats, whether the launch
/// succeeds or not.
Error launchKernel(std::shared_ptr<const gridjit::Target> T, const gridjit::Module &M,
                   StringRef Kernel, MutableArrayRef<jitrun::ArgValue> Values,
                   std::unique_ptr<gridjit::Runtime> *RT, const Options &O, CompileReport &R) {
  auto Art = compileCached(std::move(T), M, O, R);
  if (!Art) {
    if (O.Stats)
      printStats(R);
    return Art.takeError();
  }
  auto LoadStart = std::chrono::steady_clock::now();
  auto Loaded = (*RT)->load(*Art);
  double LoadMs = msSince(LoadStart);
  if (!Loaded)
    return Loaded.takeError();
  if (Error E = setConstants(**RT, **Loaded))
    return E;
  gridjit::LaunchStats LS;
  Error E = [&] {
    Watchdog Dog;
    if (Error E = Dog.start(Kernel, O.TimeoutSeconds))
      return E;
    return O.Concurrent > 1 ? launchConcurrently(**RT, **Loaded, Kernel, Values, O, &LS)
                            : launchOnce(**RT, **Loaded, Kernel, Values, O, &LS);
  }();
  if (O.Stats) {
    printStats(R);
    errs() << format("  %-10s %10.3f ms\n", static_cast<const char *>("load"), LoadMs);
    std::string What = counts({{LS.Blocks, "block", "blocks"}});
    if ((*RT)->getTargetKind() == gridjit::TargetKind::Host)
      What += ", " + counts({{LS.Phases, "phase", "phases"}}) + ", " + std::to_string(LS.Workers) +
              " of " + counts({{LS.PoolThreads, "thread", "threads"}});
    if (LS.Cooperative)
      What += ", cooperative";
    if (LS.PrintRecords || LS.PrintDroppedRecords)
      What += ", " + counts({{LS.PrintRecords, "printed line", "printed lines"}}) + " (" +
              std::to_string(LS.PrintDroppedRecords) + " dropped)";
    errs() << format("  %-10s %10.3f ms  (%s)\n", static_cast<const char *>("run"), LS.Milliseconds,
                     What.c_str());
  }
  return E;
}

/// Writes the buffers of --out, then prints those of --print (so that a
/// reader of standard output that stops early, `| head`, costs no file).
Error writeBuffers(ArrayRef<jitrun::ArgValue> Values, const Outputs &Out) {
  for (const auto &[I, File] : Out.ToWrite)
    if (Error E = jitrun::writeNpy(File, Values[I]))
      return E;
  for (const Printed &P : Out.ToPrint) {
    jitrun::printSelection(outs(), Values[P.Arg], P.Spec, P.Elements);
    if (Error E = checkStream(outs(), "standard output"))
      return E;
  }
  return Error::success();
}

/// The architecture to compile for on CUDA device \p Ordinal: its compute
/// capability, clamped to the newest architecture the NVPTX target knows
/// that is not newer than it; \p Fallback when the device is not there.
std::string deviceArch(unsigned Ordinal, StringRef Fallback) {
  auto Devices = gridjit::listCudaDevices();
  if (!Devices) {
    consumeError(Devices.takeError());
    return Fallback.str();
  }
  if (Ordinal >= Devices->size())
    return Fallback.str();
  const gridjit::CudaDeviceInfo &D = (*Devices)[Ordinal];
  unsigned Have = unsigned(D.ComputeMajor * 10 + D.ComputeMinor);
  std::string Best;
  unsigned BestSm = 0;
  for (const gridjit::NVPTXArchInfo &A : gridjit::getNVPTXArchs())
    if (A.SmVersion <= Have && A.SmVersion >= BestSm) {
      Best = A.Arch;
      BestSm = A.SmVersion;
    }
  return Best.empty() ? Fallback.str() : Best;
}

/// Compiles \p M for the target, runs one kernel with the arguments of
/// the command line through the target's gridjit::Runtime, and prints or
/// writes the buffers asked for.
Error runKernel(const gridjit::Module &M, const Options &Given, CompileReport &R) {
  Options O = Given;
  auto K = selectKernel(M, O);
  if (!K)
    return K.takeError();
  // On CUDA, the runtime comes first (before anything is compiled): no
  // device is a clear error, and the device decides the architecture
  // unless --sm does.
  std::unique_ptr<gridjit::Runtime> RT;
  if (O.Target == TargetKind::Cuda) {
    gridjit::RuntimeOptions RO;
    RO.Device = O.Device;
    RO.UseCubinCache = !O.NoCache;
    RO.CacheDir = O.CacheDir;
    // The cubins go to the same tiers as the module: one directory, one
    // pruning policy; one server, one breaker.
    if (!O.NoCache) {
      auto Tiers = gridjit::openCacheTiers(cacheOptions(O));
      if (!Tiers)
        return Tiers.takeError();
      O.Tiers = *Tiers;
      RO.CubinTiers = *Tiers;
    }
    auto Made = gridjit::createRuntime(targetKind(O), RO);
    if (!Made)
      return Made.takeError();
    RT = std::move(*Made);
    if (!O.SmGiven)
      O.SmArch = deviceArch(O.Device, O.SmArch);
  }
  auto T = makeTarget(O);
  if (!T)
    return T.takeError();
  std::vector<gridjit::KernelInfo> Infos = (*T)->describeKernels(M);
  const gridjit::KernelInfo *Info = nullptr;
  for (const gridjit::KernelInfo &I : Infos)
    if (I.Name == (*K)->Name)
      Info = &I;
  auto Values = buildArguments(*Info, O);
  if (!Values)
    return Values.takeError();
  auto Out = selectOutputs(*Values, Info->Name, O);
  if (!Out)
    return Out.takeError();
  auto Threads = workerThreads(O);
  if (!Threads)
    return Threads.takeError();
  if (!RT) {
    gridjit::RuntimeOptions RO;
    RO.NumThreads = *Threads;
    RO.CatchFaults = O.CatchFaults;
    auto Made = gridjit::createRuntime(targetKind(O), RO);
    if (!Made)
      return Made.takeError();
    RT = std::move(*Made);
  }
  if (Error E = launchKernel(std::move(*T), M, Info->Name, *Values, &RT, O, R))
    return E;
  noteSingleThread(**K, O);
  return writeBuffers(*Values, *Out);
}

//===----------------------------------------------------------------------===//
// Compiling and printing a stage
//===----------------------------------------------------------------------===//

/// Prints --stats, then writes \p Text (the stage) to -o.
Error finishEmit(Expected<std::string> Text, const Options &O, const CompileReport &R) {
  if (O.Stats)
    printStats(R);
  if (!Text)
    return Text.takeError();
  return writeOutput(O.OutputFile, *Text, isBinaryStage(O.Emit));
}

/// The stage --emit asks for, of verified \p M compiled for \p T.
Expected<std::string> emitStage(std::shared_ptr<const gridjit::Target> T, const gridjit::Module &M,
                                const Options &O, CompileReport &R) {
  // The stage that is the cached artifact itself (PTX for cuda, the object
  // file for the host) comes through the cache; the others are compiled.
  if (O.Emit == EmitStage::PTX || (O.Emit == EmitStage::Asm && O.Target == TargetKind::Cuda) ||
      (O.Emit == EmitStage::Obj && O.Target == TargetKind::Host)) {
    auto A = compileCached(std::move(T), M, O, R);
    if (!A)
      return A.takeError();
    return std::move(A->Payload);
  }
  gridjit::CompileOptions Opts;
  Opts.OptLevel = O.OptLevel;
  gridjit::EmitKind Kind = O.Emit == EmitStage::LLVM  ? gridjit::EmitKind::LLVM
                           : O.Emit == EmitStage::Obj ? gridjit::EmitKind::Object
                                                      : gridjit::EmitKind::Assembly;
  return T->emit(M, Kind, Opts, &R.Times);
}

/// Reads and verifies the input, then prints the stage --emit asks for or
/// runs a kernel.
Error run(const Options &O) {
  auto Buf = readInput(O.InputFile);
  if (!Buf)
    return Buf.takeError();
  StringRef Name = O.InputFile == "-" ? StringRef("<stdin>") : StringRef(O.InputFile);
  CompileReport R;
  auto M = loadModule((*Buf)->getBuffer(), Name, R.Times);
  if (!M)
    return M.takeError();
  if (O.Emit == EmitStage::Kir)
    return finishEmit(gridjit::printModule(**M), O, R);
  if (O.Emit == EmitStage::None)
    return runKernel(**M, O, R);
  auto T = makeTarget(O);
  if (!T)
    return T.takeError();
  return finishEmit(emitStage(std::move(*T), **M, O, R), O, R);
}

//===----------------------------------------------------------------------===//
// The command line
//===----------------------------------------------------------------------===//

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

/// Checks the option combinations and values cl::opt cannot express.
Error checkUsage() {
  if (OptLevel > 3)
    return jitrun::usageError("-O" + Twine(OptLevel) + ": the level must be 0, 1, 2 or 3");
  if (ConcurrentOpt < 1 || ConcurrentOpt > 64)
    return jitrun::usageError("--concurrent " + Twine(ConcurrentOpt) +
                              ": the number of launching threads must be 1 to 64");
  if (Emit == EmitStage::PTX && TargetOpt != TargetKind::Cuda)
    return jitrun::usageError("--emit=ptx needs --target=cuda");
  if (CheckOpt && TargetOpt == TargetKind::Cuda)
    return jitrun::usageError("--check needs --target=host: the kernel checker runs kernels on the "
                              "host CPU, held to the limits of the GPU --sm names");
  for (const cl::Option *Needs : {static_cast<const cl::Option *>(&CheckMaxFindingsOpt),
                                  static_cast<const cl::Option *>(&CheckSameValueWritesOpt)})
    if (Needs->getNumOccurrences() && !CheckOpt)
      return jitrun::usageError("--" + Needs->ArgStr + " needs --check");
  gridjit::Dim3 D;
  if (!parseDim3(GridOpt, D))
    return jitrun::usageError("--grid " + GridOpt + ": expected X[,Y[,Z]]");
  if (!parseDim3(BlockOpt, D))
    return jitrun::usageError("--block " + BlockOpt + ": expected X[,Y[,Z]]");
  return Error::success();
}

/// A value as the command line gave it, with the option that gave it
/// ("--sm", "-arch", "-mcpu"), for messages.
struct Spelled {
  std::string Option, Value;
  std::string str() const { return Option + "=" + Value; }
};

/// The value that the options of \p Spellings that occur give (none when
/// none does); two that give different values are misuse.
Expected<std::optional<Spelled>> agreedValue(
    std::initializer_list<std::pair<const char *, const cl::opt<std::string> *>> Spellings) {
  std::optional<Spelled> Found;
  for (auto [Option, Opt] : Spellings) {
    if (!Opt->getNumOccurrences())
      continue;
    Spelled Given{Option, Opt->getValue()};
    if (Found && Found->Value != Given.Value)
      return jitrun::usageError(Found->str() + " and " + Given.str() +
                                " disagree; give one of them");
    if (!Found)
      Found = std::move(Given);
  }
  return Found;
}

/// The NVPTX architecture (--sm, -arch, -mcpu with --target=cuda) and the
/// host CPU (--cpu, -mcpu with --target=host) the command line asks for,
/// checked, in \p O (SmArch, SmGiven, Cpu).
Error resolveArchitectures(Options &O) {
  bool Cuda = TargetOpt == TargetKind::Cuda;
  auto Sm = Cuda ? agreedValue({{"--sm", &SmArch}, {"-arch", &ArchOpt}, {"-mcpu", &McpuOpt}})
                 : agreedValue({{"--sm", &SmArch}, {"-arch", &ArchOpt}});
  if (!Sm)
    return Sm.takeError();
  O.SmGiven = Sm->has_value();
  O.SmArch = O.SmGiven ? (*Sm)->Value : SmArch.getValue();
  bool KnownSm = false;
  std::string Known;
  for (const gridjit::NVPTXArchInfo &A : gridjit::getNVPTXArchs()) {
    KnownSm |= O.SmArch == A.Arch;
    Known += " " + std::string(A.Arch);
  }
  if (!KnownSm)
    return jitrun::usageError((O.SmGiven ? (*Sm)->str() : "--sm=" + O.SmArch) +
                              ": unknown architecture (known:" + Known + ")");
  if (Cuda && CpuOpt.getNumOccurrences())
    return jitrun::usageError("--cpu needs --target=host (--sm chooses the NVPTX architecture)");
  if (Cuda)
    return Error::success();
  auto Cpu = agreedValue({{"--cpu", &CpuOpt}, {"-mcpu", &McpuOpt}});
  if (!Cpu)
    return Cpu.takeError();
  if (!*Cpu)
    return Error::success();
  if (Emit == EmitStage::None)
    return jitrun::usageError((*Cpu)->str() +
                              " needs --emit: code for another CPU may not run on this one");
  if ((*Cpu)->Value.empty())
    return jitrun::usageError((*Cpu)->Option + ": expected a CPU name");
  O.Cpu = (*Cpu)->Value;
  O.CpuOption = (*Cpu)->Option;
  return Error::success();
}

/// The LLVM options the command line gives, as "--name", sorted: every
/// option that is not jit-run's own (--time-passes, --print-after-all,
/// --print-before=PASS, -debug-pass-manager's relatives, a backend's
/// tuning options, ...), but for --color, which only colours messages.
/// Such an option acts while a module is compiled (a report, a dump, other
/// code), which a cache hit skips, and the cache key does not include it
/// (an entry compiled under it could differ from one without): so a run
/// that gives one compiles without the disk and remote cache, neither
/// reading nor writing them (docs/jit-run.md, LLVM OPTIONS).
std::vector<std::string> givenLLVMOptions() {
  std::set<std::string> Names;
  for (const auto &Entry : cl::getRegisteredOptions()) {
    const cl::Option *Opt = Entry.second;
    if (Opt->getNumOccurrences() && !is_contained(Opt->Categories, &JitRunCategory) &&
        Entry.first() != "color")
      Names.insert(("--" + Entry.first()).str());
  }
  return {Names.begin(), Names.end()};
}

/// The options of a parsed command line, checked.
Expected<Options> readOptions(bool Stats) {
  if (Error E = checkUsage())
    return std::move(E);
  Options O;
  O.InputFile = InputFiles.front();
  O.Emit = Emit;
  O.Target = TargetOpt;
  O.OptLevel = OptLevel;
  if (Error E = resolveArchitectures(O))
    return std::move(E);
  O.Device = DeviceOpt;
  O.Stats = Stats;
  O.CacheDir = CacheDirOpt;
  O.CacheSecretFile = CacheSecretOpt;
  O.NoCache = NoCache;
  O.RemoteCache = RemoteCacheOpt;
  O.RemoteReadOnly = RemoteReadOnlyOpt;
  O.RemoteSecretFile = RemoteSecretOpt;
  O.OutputFile = OutputFile;
  if (KernelName.getNumOccurrences())
    O.KernelName = KernelName;
  parseDim3(GridOpt, O.Launch.Grid); // checked by checkUsage
  parseDim3(BlockOpt, O.Launch.Block);
  O.GridGiven = GridOpt.getNumOccurrences() != 0;
  O.BlockGiven = BlockOpt.getNumOccurrences() != 0;
  O.Launch.DynamicSharedBytes = SharedBytes;
  O.Args = ArgOpts;
  O.Prints = PrintOpts;
  O.Outs = OutOpts;
  if (ThreadsOpt.getNumOccurrences())
    O.Threads = ThreadsOpt;
  O.Concurrent = ConcurrentOpt;
  O.TimeoutSeconds = TimeoutOpt;
  O.PrintBufferBytes = PrintBufferOpt;
  O.CatchFaults = !NoCatchFaults;
  O.IterationMajor = !NoIterationMajor;
  O.Check = CheckOpt;
  // The architecture whose limits checked code is held to: --sm's (known
  // to resolveArchitectures), sm_80 by default.
  StringRef(O.SmArch).drop_front(3).getAsInteger(10, O.CheckArch);
  O.CheckMaxFindings = CheckMaxFindingsOpt;
  O.CheckSameValueWrites = CheckSameValueWritesOpt;
  O.LLVMOptions = givenLLVMOptions();
  return std::move(O);
}

/// Parses the command line. LLVM's parser prints what it rejects (it is
/// given an error stream, so that it returns instead of exiting with
/// status 1 and misuse can be status 2).
Error parseCommandLine(int argc, char **argv) {
  bool Parsed = cl::ParseCommandLineOptions(
      argc, argv, "jit-run: compile, print and run KIR kernels\n", &errs());
  // One input file, or none with --print-features or --list-devices.
  // Reported as the parser would report one required positional argument,
  // after anything else it reported (it checks positional arguments last).
  std::string Tool = sys::path::filename(argv[0]).str();
  if (InputFiles.size() > 1)
    return make_error<jitrun::CommandLineError>(
        Tool + ": Too many positional arguments specified!\n" +
        "Can specify at most 1 positional arguments: See: " + argv[0] + " --help\n");
  if (InputFiles.empty() && !PrintFeatures && !ListDevices)
    return make_error<jitrun::CommandLineError>(
        Tool + ": Not enough positional command line arguments specified!\n" +
        "Must specify at least 1 positional argument: See: " + argv[0] + " --help\n");
  if (!Parsed)
    return make_error<jitrun::CommandLineError>("");
  return Error::success();
}

/// The exit status of a library error of kind \p K (ErrorKinds.def):
/// ExitKernelFault, ExitTimeout, ExitCheck or ExitInputError.
constexpr int exitStatusOf(gridjit::ErrorKind K) {
  switch (K) {
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description)                \
  case gridjit::ErrorKind::Name:                                                                   \
    return ExitStatus;
#include "gridjit/Support/ErrorKinds.def"
  }
  return ExitInputError;
}
static_assert(exitStatusOf(gridjit::ErrorKind::Fault) == ExitKernelFault &&
                  exitStatusOf(gridjit::ErrorKind::Timeout) == ExitTimeout &&
                  exitStatusOf(gridjit::ErrorKind::Check) == ExitCheck,
              "ErrorKinds.def's exit statuses of Fault, Timeout and Check");

/// Prints every error in \p E and returns the exit status they mean
/// (docs/jit-run.md, EXIT STATUS): 2 when one is misuse of the command line,
/// else the status of the library error's kind (3 for a kernel's fault, 4
/// for a timeout, 5 for a checked launch's findings, 1 for the others).
/// Diagnostics render themselves (`file:line:col: error: ...` with the
/// source line and a caret), as do the findings of a checked launch (in
/// that form already, whatever class carries them); the parser's errors
/// are printed as they are, anything else as `jit-run: error: ...`.
int reportErrors(Error E) {
  int Status = ExitInputError;
  handleAllErrors(
      std::move(E),
      [&](const jitrun::UsageError &U) {
        WithColor::error(errs(), "jit-run") << U.message() << '\n';
        Status = ExitUsage;
      },
      [&](const jitrun::CommandLineError &C) {
        C.log(errs());
        Status = ExitUsage;
      },
      [&](const jitrun::ClosedPipeError &) { Status = ExitClosedPipe; },
      [&](const gridjit::DiagnosticError &D) {
        D.log(errs());
        Status = exitStatusOf(D.getKind());
      },
      [&](const gridjit::KindedError &K) {
        if (K.getKind() == gridjit::ErrorKind::Check)
          errs() << K.message() << '\n';
        else
          WithColor::error(errs(), "jit-run") << K.message() << '\n';
        Status = exitStatusOf(K.getKind());
      },
      [&](const ErrorInfoBase &EI) {
        WithColor::error(errs(), "jit-run") << EI.message() << '\n';
        Status = exitStatusOf(gridjit::getErrorKind(EI));
      });
  return Status;
}

/// --list-devices: one line per CUDA device, `0: NAME (sm_XY, N SMs, M MiB)`,
/// or `no CUDA devices (WHY)` when there are none (which is not an error;
/// docs/CUDA.md). A driver library that is there but broken is an error.
Error listDevices(raw_ostream &OS) {
  std::string WhyNone;
  auto Devices = gridjit::listCudaDevices({}, &WhyNone);
  if (!Devices)
    return Devices.takeError();
  if (Devices->empty())
    OS << "no CUDA devices (" << WhyNone << ")\n";
  for (const gridjit::CudaDeviceInfo &D : *Devices)
    OS << D.Ordinal << ": " << D.Name << " (" << D.getArch() << ", " << D.MultiprocessorCount
       << " SMs, " << (D.TotalMemoryBytes >> 20) << " MiB)\n";
  return Error::success();
}

/// --version: gridjit's version, the LLVM it was built with, and what it
/// compiles for: the host target's triple and CPU (the name the host
/// target gives LLVM, as an artifact made here records it) and the NVPTX
/// architectures.
void printVersion(raw_ostream &OS) {
  OS << "jit-run (gridjit) " << gridjit::getGridjitVersion() << '\n';
  OS << "LLVM " << gridjit::getLLVMVersion() << '\n';
  if (auto T = gridjit::createHostTarget())
    OS << "host target: " << sys::getProcessTriple() << ", CPU " << (*T)->getArch() << '\n';
  else
    OS << "host target: unavailable: " << toString(T.takeError()) << '\n';
  gridjit::NVPTXTargetOptions Defaults;
  OS << "nvptx target:";
  for (const gridjit::NVPTXArchInfo &A : gridjit::getNVPTXArchs())
    OS << ' ' << A.Arch;
  OS << " (default " << Defaults.Arch << ")\n";
}

/// Everything jit-run does after LLVM's own initialisation.
Error runTool(int argc, char **argv) {
  cl::HideUnrelatedOptions(JitRunCategory); // also registers LLVM's common options
  cl::SetVersionPrinter(printVersion);
  const cl::opt<bool> &Stats = registerStatsOption();
  if (Error E = parseCommandLine(argc, argv))
    return E;
  if (PrintFeatures) {
    jitrun::printFeatures(outs());
    return Error::success();
  }
  if (ListDevices)
    return listDevices(outs());
  auto O = readOptions(Stats);
  if (!O)
    return O.takeError();
  return run(*O);
}

/// SIGPIPE: a write to a pipe that its reader closed (`jit-run ... | head`).
/// jit-run ends at once (from LLVM's signal handler: _exit only), quietly,
/// with the status a shell reports for a command that SIGPIPE ended.
void exitOnClosedPipe() { _exit(ExitClosedPipe); }

/// The status of the run that \p E ended, once standard output and error
/// are flushed and checked: a pipe found closed on the way (EPIPE, with
/// SIGPIPE ignored) ends a run that succeeded quietly with ExitClosedPipe,
/// as the signal would; a run that failed keeps its own status.
int finish(Error E) {
  Error Out = checkStream(outs(), "standard output");
  if (E)
    consumeError(std::move(Out));
  else
    E = std::move(Out);
  int Status = E ? reportErrors(std::move(E)) : int(ExitSuccess);
  if (Error Err = checkStream(errs(), "standard error")) {
    consumeError(std::move(Err)); // nowhere left to report it
    if (Status == ExitSuccess)
      Status = ExitClosedPipe;
  }
  return Status;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  sys::SetOneShotPipeSignalFunction(exitOnClosedPipe);
  return finish(runTool(argc, argv));
}
