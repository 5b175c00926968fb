//===- Diagnostics.cpp - Located errors for KIR source --------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/Diagnostics.h"

#include "SourceWindow.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

using namespace gridjit;

char DiagnosticError::ID = 0;

DiagnosticError::DiagnosticError(std::string BufferName, std::string Source,
                                 std::vector<Diagnostic> Diags, bool Truncated, ErrorKind Kind)
    : ErrorInfo(Kind, std::string()), BufferName(std::move(BufferName)), Source(std::move(Source)),
      Diags(std::move(Diags)), Truncated(Truncated) {}

void DiagnosticError::log(llvm::raw_ostream &OS) const {
  // SourceMgr renders the `file:line:col: error:` line, the source line and
  // the caret exactly as LLVM's own tools do.
  llvm::SourceMgr SM;
  unsigned Buf =
      SM.AddNewSourceBuffer(llvm::MemoryBuffer::getMemBuffer(Source, BufferName,
                                                             /*RequiresNullTerminator=*/false),
                            llvm::SMLoc());
  for (const Diagnostic &D : Diags) {
    llvm::SMLoc L;
    if (D.Loc.isValid() && !Source.empty())
      L = SM.FindLocForLineAndColumn(Buf, D.Loc.Line, D.Loc.Col);
    if (L.isValid()) {
      llvm::SMDiagnostic SD = SM.GetMessage(L, llvm::SourceMgr::DK_Error, D.Message);
      llvm::StringRef Line = SD.getLineContents();
      SourceWindow W = windowSourceLine(Line, SD.getColumnNo());
      if (!W.Cut && llvm::none_of(Line, [](char C) { return uint8_t(C) >= 0x80; })) {
        SD.print(nullptr, OS, /*ShowColors=*/false);
        continue;
      }
      // SMDiagnostic drops the caret of a line holding non-ASCII bytes and
      // shows a long line whole; a window of the line (SourceWindow.h) and
      // its caret line are drawn here, one column per UTF-8 character,
      // keeping tabs so that the caret lines up with the source.
      OS << SD.getFilename() << ':' << SD.getLineNo() << ':' << (SD.getColumnNo() + 1)
         << ": error: " << D.Message << '\n'
         << W.Text << '\n'
         << W.CaretIndent << "^\n";
      continue;
    }
    // No source text (a built module) or a position outside it.
    OS << BufferName;
    if (D.Loc.isValid())
      OS << ':' << D.Loc.Line << ':' << D.Loc.Col;
    OS << ": error: " << D.Message << '\n';
  }
  if (Truncated)
    OS << BufferName << ": error: too many errors (" << DiagnosticEngine::MaxErrors
       << "); stopping\n";
}

std::error_code DiagnosticError::convertToErrorCode() const {
  return llvm::inconvertibleErrorCode();
}

void DiagnosticEngine::error(SourceLoc Loc, std::string Message) {
  ++NumErrors;
  if (Diags.size() < MaxErrors)
    Diags.push_back({Loc, std::move(Message)});
}

llvm::Error DiagnosticEngine::takeError() {
  if (!NumErrors)
    return llvm::Error::success();
  bool Truncated = NumErrors > Diags.size();
  NumErrors = 0;
  return llvm::make_error<DiagnosticError>(BufferName, Source, std::move(Diags), Truncated);
}

std::string gridjit::errorMessage(llvm::Error E) {
  if (!E)
    return std::string();
  return llvm::toString(std::move(E));
}
