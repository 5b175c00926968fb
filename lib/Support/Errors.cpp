//===- Errors.cpp - Errors that know their kind ---------------------------===//
//
// Part of gridjit. See gridjit/Support/Errors.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/Errors.h"

#include "llvm/Support/raw_ostream.h"

#include <system_error>

using namespace gridjit;

char KindedError::ID = 0;

std::string_view gridjit::getErrorKindName(ErrorKind K) {
  switch (K) {
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description)                \
  case ErrorKind::Name:                                                                            \
    return #Name;
#include "gridjit/Support/ErrorKinds.def"
  }
  return "?";
}

void KindedError::log(llvm::raw_ostream &OS) const { OS << Message; }

std::error_code KindedError::convertToErrorCode() const { return llvm::inconvertibleErrorCode(); }

llvm::Error gridjit::makeError(ErrorKind K, const llvm::Twine &Message) {
  return llvm::make_error<KindedError>(K, Message.str());
}

ErrorKind gridjit::getErrorKind(const llvm::ErrorInfoBase &EI) {
  if (EI.isA<KindedError>())
    return static_cast<const KindedError &>(EI).getKind();
  // StringError and ECError made from an operating system's error code
  // (errorCodeToError, createFileError, createStringError(EC, ...)) are
  // the file system's when the code is one of a file's; another errno (a
  // thread that cannot start: EAGAIN) is no I/O error.
  std::error_code EC = EI.convertToErrorCode();
  if (EC.category() != std::generic_category() && EC.category() != std::system_category())
    return ErrorKind::Failed; // inconvertibleErrorCode() is of neither
  for (std::errc File :
       {std::errc::no_such_file_or_directory, std::errc::permission_denied,
        std::errc::operation_not_permitted, std::errc::read_only_file_system,
        std::errc::no_space_on_device, std::errc::file_exists, std::errc::not_a_directory,
        std::errc::is_a_directory, std::errc::io_error, std::errc::filename_too_long,
        std::errc::too_many_files_open, std::errc::directory_not_empty, std::errc::file_too_large,
        std::errc::cross_device_link, std::errc::too_many_links})
    if (EC == File)
      return ErrorKind::IO;
  return ErrorKind::Failed;
}

ErrorKind gridjit::peekErrorKind(llvm::Error &E) {
  std::optional<ErrorKind> First;
  // Each error is handed back as it was: handleErrors joins what the
  // handler returns in the original order.
  E = llvm::handleErrors(std::move(E), [&](std::unique_ptr<llvm::ErrorInfoBase> EI) -> llvm::Error {
    if (!First)
      First = getErrorKind(*EI);
    return llvm::Error(std::move(EI));
  });
  return First.value_or(ErrorKind::Failed);
}

llvm::Error gridjit::prefixError(const llvm::Twine &Prefix, llvm::Error E) {
  ErrorKind K = peekErrorKind(E);
  return makeError(K, Prefix + ": " + llvm::toString(std::move(E)));
}
