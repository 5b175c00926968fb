//===- SingleFlight.cpp - One producer per key, its outcome for all -------===//
//
// Part of gridjit. See SingleFlight.h.
//
//===----------------------------------------------------------------------===//

#include "SingleFlight.h"

#include "llvm/Support/raw_ostream.h"

using namespace gridjit;

namespace {

/// A DiagnosticError given to a request that waited for another request's
/// failed produce: the same diagnostics, rendered exactly as the original
/// rendered them (it is still a DiagnosticError to handlers).
class SharedDiagnosticError : public llvm::ErrorInfo<SharedDiagnosticError, DiagnosticError> {
public:
  static char ID;
  SharedDiagnosticError(std::string BufferName, std::vector<Diagnostic> Diags, std::string Rendered,
                        ErrorKind Kind)
      : ErrorInfo(std::move(BufferName), std::string(), std::move(Diags), false, Kind),
        Rendered(std::move(Rendered)) {}
  void log(llvm::raw_ostream &OS) const override { OS << Rendered; }

private:
  std::string Rendered;
};
char SharedDiagnosticError::ID = 0;

} // namespace

Failure::Failure(llvm::Error E) {
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &D) {
        std::string Text;
        llvm::raw_string_ostream OS(Text);
        D.log(OS);
        Items.push_back(
            {true, D.getBufferName(), D.getDiagnostics(), std::move(Text), D.getKind()});
      },
      [&](const llvm::ErrorInfoBase &EI) {
        Items.push_back({false, "", {}, EI.message(), getErrorKind(EI)});
      });
}

llvm::Error Failure::make() const {
  llvm::Error All = llvm::Error::success();
  for (const Item &I : Items) {
    llvm::Error E = I.IsDiagnostic ? llvm::make_error<SharedDiagnosticError>(I.BufferName, I.Diags,
                                                                             I.Text, I.Kind)
                                   : makeError(I.Kind, I.Text);
    All = llvm::joinErrors(std::move(All), std::move(E));
  }
  return All;
}
