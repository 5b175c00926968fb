//===- jit-run.cpp - Compile, print and run KIR kernels -------------------===//
//
// Part of gridjit. A thin driver over the library: it reads a KIR file (or
// standard input), parses and verifies it, and prints the stage asked for.
// It is the only place where errors become messages and exit codes:
//   0  success
//   1  an error in the input (syntax, types, an unreadable file)
//   2  misuse of the command line
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Printer.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

enum ExitCode { ExitSuccess = 0, ExitInputError = 1, ExitUsage = 2 };

enum class EmitKind { None, Kir };

cl::OptionCategory JitRunCategory("jit-run options");

cl::opt<std::string> InputFile(cl::Positional, cl::desc("<input.kir | ->"),
                               cl::Required, cl::cat(JitRunCategory));

cl::opt<EmitKind> Emit(
    "emit", cl::desc("Compile only and print one stage"), cl::init(EmitKind::None),
    cl::values(clEnumValN(EmitKind::Kir, "kir", "the verified module, printed canonically")),
    cl::cat(JitRunCategory));

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

int run() {
  auto Buf = readInput(InputFile);
  if (!Buf) {
    reportErrors(Buf.takeError());
    return ExitInputError;
  }
  StringRef Name = InputFile == "-" ? StringRef("<stdin>") : StringRef(InputFile);
  auto M = gridjit::parseAndVerify((*Buf)->getBuffer(), Name);
  if (!M) {
    reportErrors(M.takeError());
    return ExitInputError;
  }
  if (Emit == EmitKind::Kir) {
    if (Error E = writeOutput(gridjit::printModule(**M))) {
      reportErrors(std::move(E));
      return ExitInputError;
    }
    return ExitSuccess;
  }
  WithColor::error(errs(), "jit-run")
      << "running kernels is not available yet in this build; use --emit=kir\n";
  return ExitInputError;
}

} // namespace

int main(int argc, char **argv) {
  InitLLVM X(argc, argv);
  cl::HideUnrelatedOptions(JitRunCategory);
  // With an error stream, ParseCommandLineOptions reports misuse and returns
  // false instead of exiting with status 1, so misuse can exit with 2.
  if (!cl::ParseCommandLineOptions(argc, argv,
                                   "jit-run: compile, print and run KIR kernels\n", &errs()))
    return ExitUsage;
  return run();
}
