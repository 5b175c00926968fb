//===- Errors.h - Errors that know their kind -------------------*- C++ -*-===//
//
// Part of gridjit. Every error the library returns has an ErrorKind, one of
// the rows of ErrorKinds.def (compile, argument, configuration, divergence,
// fault, timeout, driver, I/O, ...): the C API turns it into its gj_status,
// the Python package into its exception class, jit-run into its exit
// status, each from the same table.
//
// An error carries its kind by being a KindedError, or a subclass of it
// (DiagnosticError: Compile, or Divergence for a synchronisation point
// found while running; KernelFaultError: Fault; the CUDA driver's errors:
// Driver, or a kind their CUresult means). makeError() makes one;
// getErrorKind() reads the kind of any llvm::Error, classifying errors that
// are not KindedErrors (LLVM's own, errors of the operating system).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_ERRORS_H
#define GRIDJIT_SUPPORT_ERRORS_H

#include "llvm/ADT/Twine.h"
#include "llvm/Support/Error.h"

#include <string>
#include <string_view>

namespace gridjit {

/// The kinds of error, in the order of ErrorKinds.def.
enum class ErrorKind {
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description) Name,
#include "gridjit/Support/ErrorKinds.def"
};

/// "Compile", "Argument", ...: the enumerator's name.
std::string_view getErrorKindName(ErrorKind K);

/// An error of kind getKind() with a message. Subclasses that render their
/// message themselves (DiagnosticError) override log().
class KindedError : public llvm::ErrorInfo<KindedError> {
public:
  static char ID;
  KindedError(ErrorKind K, std::string Message) : Kind(K), Message(std::move(Message)) {}
  ErrorKind getKind() const { return Kind; }
  void log(llvm::raw_ostream &OS) const override;
  std::error_code convertToErrorCode() const override;

private:
  ErrorKind Kind;
  std::string Message;
};

/// A KindedError of kind \p K saying \p Message.
llvm::Error makeError(ErrorKind K, const llvm::Twine &Message);

/// The kind of the error \p EI: its own for a KindedError; IO for an error
/// that carries an operating system's error code of a file (ENOENT,
/// EACCES, EROFS, ENOSPC, EIO, ...: llvm::errorCodeToError,
/// createFileError, createStringError(EC, ...)); Failed for any other.
ErrorKind getErrorKind(const llvm::ErrorInfoBase &EI);

/// The kind of \p E, without consuming it: getErrorKind of the first error
/// it holds (errors joined with joinErrors keep their order). \p E is left
/// holding the same errors, unchecked. Failed for success.
ErrorKind peekErrorKind(llvm::Error &E);

/// \p E with \p Prefix and ": " before its message, keeping its kind (that
/// of its first error): "kernel 'k' launched with ...: cuLaunchKernel
/// failed: ...". Consumes \p E, which must be an error.
llvm::Error prefixError(const llvm::Twine &Prefix, llvm::Error E);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_ERRORS_H
