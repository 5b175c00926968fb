//===- Diagnostics.h - Located errors for KIR source ------------*- C++ -*-===//
//
// Part of gridjit. The parser and the verifier report every problem they
// find into a DiagnosticEngine; at the end the engine becomes one
// llvm::Error (a DiagnosticError) that carries every diagnostic and renders
// them the way compilers do:
//
//   FILE:LINE:COL: error: MESSAGE
//   the source line
//         ^
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_DIAGNOSTICS_H
#define GRIDJIT_SUPPORT_DIAGNOSTICS_H

#include "gridjit/Support/Errors.h"
#include "gridjit/Support/SourceLoc.h"

#include "llvm/Support/Error.h"

#include <string>
#include <string_view>
#include <vector>

namespace gridjit {

/// One error at one place.
struct Diagnostic {
  SourceLoc Loc;
  std::string Message;
};

/// The error returned when KIR source (or a built module) is rejected. It
/// holds every diagnostic in the order found; message() renders them all.
/// Its kind is ErrorKind::Compile, or, for a located error found while a
/// kernel ran (a divergent barrier), the kind it is made with.
class DiagnosticError : public llvm::ErrorInfo<DiagnosticError, KindedError> {
public:
  static char ID;
  DiagnosticError(std::string BufferName, std::string Source, std::vector<Diagnostic> Diags,
                  bool Truncated, ErrorKind Kind = ErrorKind::Compile);

  const std::vector<Diagnostic> &getDiagnostics() const { return Diags; }
  const std::string &getBufferName() const { return BufferName; }
  /// Renders every diagnostic as `FILE:LINE:COL: error: MSG`, followed by
  /// the source line and a caret when the source is known. Ends in '\n'.
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  std::string BufferName;
  std::string Source;
  std::vector<Diagnostic> Diags;
  bool Truncated;
};

/// Collects diagnostics for one buffer. Not thread-safe: one engine per
/// parse or verification.
class DiagnosticEngine {
public:
  /// After this many errors further ones are dropped (and the rendering
  /// says so), so that a hopeless input cannot flood the output.
  static constexpr unsigned MaxErrors = 50;

  DiagnosticEngine(std::string_view BufferName, std::string_view Source)
      : BufferName(BufferName), Source(Source) {}

  void error(SourceLoc Loc, std::string Message);
  bool hasErrors() const { return NumErrors != 0; }
  unsigned getNumErrors() const { return NumErrors; }
  const std::vector<Diagnostic> &getDiagnostics() const { return Diags; }

  /// Success when no error was reported, else a DiagnosticError holding all
  /// of them. Clears the engine.
  llvm::Error takeError();

private:
  std::string BufferName;
  std::string Source;
  std::vector<Diagnostic> Diags;
  unsigned NumErrors = 0;
};

/// The message of \p E as llvm::toString renders it (each error it holds,
/// diagnostics with their source line and caret, joined by newlines),
/// consuming it; empty for success. A program that uses gridjit's C++ API
/// through libgridjit.so and links its own copy of LLVM must turn gridjit's
/// errors into text with this, not with that copy's llvm::toString,
/// consumeError or handleErrors: libgridjit.so keeps its LLVM to itself,
/// and the identity of LLVM's error classes (ErrorInfoBase::ID) is then not
/// the same in the two copies (docs/CAPI.md, "The C++ API from
/// libgridjit.so").
std::string errorMessage(llvm::Error E);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_DIAGNOSTICS_H
