//===- Errors.h - The kinds of error jit-run reports ------------*- C++ -*-===//
//
// Part of gridjit. Every function of jit-run that can fail returns
// llvm::Error or llvm::Expected; main() alone turns errors into messages and
// exit codes (docs/jit-run.md, EXIT STATUS). The kind of an error decides its status:
// the kinds here are misuse of the command line (status 2) and a closed
// pipe (141, quietly); every other error has the status of its
// gridjit::ErrorKind (ErrorKinds.def: 3
// for a kernel's fault, 4 for a timeout, 1 for the others, the input's
// DiagnosticErrors and files included).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TOOLS_JITRUN_ERRORS_H
#define GRIDJIT_TOOLS_JITRUN_ERRORS_H

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <string>

namespace jitrun {

/// A misuse of the command line (exit status 2), reported as
/// `jit-run: error: MESSAGE`; as opposed to an error in the input (an
/// unreadable or mismatched .npy file: status 1).
class UsageError : public llvm::ErrorInfo<UsageError> {
public:
  static char ID;
  explicit UsageError(std::string Msg) : Msg(std::move(Msg)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Msg; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string Msg;
};

/// A UsageError with message \p Msg.
llvm::Error usageError(const llvm::Twine &Msg);

/// A command line that LLVM's option parser rejects (exit status 2). Its
/// text is printed as it is, in the parser's own format; empty when the
/// parser has already printed it.
class CommandLineError : public llvm::ErrorInfo<CommandLineError> {
public:
  static char ID;
  explicit CommandLineError(std::string Text) : Text(std::move(Text)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Text; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }

private:
  std::string Text;
};

/// Standard output or standard error is a pipe whose reader has gone (a
/// write failed with EPIPE: SIGPIPE was ignored, so it did not end the
/// process): jit-run stops without a message, with the status a closed pipe
/// gives (141, docs/jit-run.md, EXIT STATUS), as when the signal arrives.
class ClosedPipeError : public llvm::ErrorInfo<ClosedPipeError> {
public:
  static char ID;
  void log(llvm::raw_ostream &OS) const override { OS << "the reader of the pipe has gone"; }
  std::error_code convertToErrorCode() const override { return llvm::inconvertibleErrorCode(); }
};

} // namespace jitrun

#endif // GRIDJIT_TOOLS_JITRUN_ERRORS_H
