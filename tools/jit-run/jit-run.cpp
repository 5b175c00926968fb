//===- jit-run.cpp - Compile, print and run KIR kernels -------------------===//
//
// Part of gridjit. A thin driver over the library: it reads a KIR file (or
// standard input), parses and verifies it, compiles it for a target and
// prints the stage asked for.
// It is the only place where errors become messages and exit codes:
//   0  success
//   1  an error in the input (syntax, types, an unreadable file)
//   2  misuse of the command line
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>

using namespace llvm;

namespace {

enum ExitCode { ExitSuccess = 0, ExitInputError = 1, ExitUsage = 2 };

enum class EmitStage { None, Kir, LLVM, PTX, Asm, Obj };
enum class TargetKind { Host, Cuda };

cl::OptionCategory JitRunCategory("jit-run options");

cl::opt<std::string> InputFile(cl::Positional, cl::desc("<input.kir | ->"),
                               cl::Required, cl::cat(JitRunCategory));

cl::opt<EmitStage> Emit(
    "emit", cl::desc("Compile only and print one stage"), cl::init(EmitStage::None),
    cl::values(clEnumValN(EmitStage::Kir, "kir", "the verified module, printed canonically"),
               clEnumValN(EmitStage::LLVM, "llvm", "LLVM IR after optimisation"),
               clEnumValN(EmitStage::PTX, "ptx", "PTX (--target=cuda)"),
               clEnumValN(EmitStage::Asm, "asm", "target assembly (PTX for cuda)"),
               clEnumValN(EmitStage::Obj, "obj", "an object file (host target)")),
    cl::cat(JitRunCategory));

cl::opt<TargetKind> TargetOpt("target", cl::desc("Where to compile and run (default: host)"),
                              cl::init(TargetKind::Host),
                              cl::values(clEnumValN(TargetKind::Host, "host", "the host CPU"),
                                         clEnumValN(TargetKind::Cuda, "cuda", "an NVIDIA GPU (NVPTX)")),
                              cl::cat(JitRunCategory));

cl::opt<unsigned> OptLevel("O", cl::desc("Optimisation level 0-3 (default: -O3)"), cl::Prefix,
                           cl::init(3), cl::value_desc("level"), cl::cat(JitRunCategory));

cl::opt<std::string> SmArch("sm", cl::desc("NVPTX architecture when no device decides it (default: sm_80)"),
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
      "stats", cl::desc("Print phase timings on stderr"), cl::location(Stats),
      cl::cat(JitRunCategory));
}

cl::opt<std::string> OutputFile("o", cl::desc("Write the --emit output to <file> (default: stdout)"),
                                cl::value_desc("file"), cl::init("-"),
                                cl::cat(JitRunCategory));

/// Prints every error in \p E: diagnostics as they render themselves
/// (`file:line:col: error: ...` with the source line and a caret), anything
/// else as `jit-run: error: ...`.
void reportErrors(Error E) {
  handleAllErrors(std::move(E),
                  [](const gridjit::DiagnosticError &D) { D.log(errs()); },
                  [](const ErrorInfoBase &EI) {
                    WithColor::error(errs(), "jit-run") << EI.message() << '\n';
                  });
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
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
}

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
  return createStringError(inconvertibleErrorCode(),
                           "the host target is not available yet in this build; use "
                           "--target=cuda for --emit=llvm|ptx");
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
  if (Emit == EmitStage::None) {
    WithColor::error(errs(), "jit-run")
        << "running kernels is not available yet in this build; use --emit=kir|llvm|ptx\n";
    return ExitInputError;
  }
  auto T = makeTarget();
  if (!T) {
    reportErrors(T.takeError());
    return ExitInputError;
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
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "jit-run: compile, print and run KIR kernels\n", &errs()))
    return ExitUsage;
  if (!checkUsage())
    return ExitUsage;
  return run();
}
