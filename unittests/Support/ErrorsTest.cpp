//===- ErrorsTest.cpp - Errors that know their kind -----------------------===//
//
// Part of gridjit. gridjit/Support/Errors.h: the kinds of ErrorKinds.def,
// KindedError and its subclasses (DiagnosticError, KernelFaultError), the
// kind of errors that are not KindedErrors, reading a kind without
// consuming the error, and a prefix that keeps the kind.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"

#include "llvm/Support/Errc.h"
#include "gtest/gtest.h"

#include <set>
#include <string>

using namespace gridjit;
using namespace gridjit::test;

namespace {

const ErrorKind AllKinds[] = {
#define GRIDJIT_ERROR_KIND(Name, CStatus, PyName, PyBases, ExitStatus, Description) ErrorKind::Name,
#include "gridjit/Support/ErrorKinds.def"
};

TEST(ErrorsTest, EveryKindHasItsName) {
  std::set<std::string_view> Names;
  for (ErrorKind K : AllKinds)
    Names.insert(getErrorKindName(K));
  EXPECT_EQ(Names.size(), std::size(AllKinds));
  EXPECT_EQ(getErrorKindName(ErrorKind::Divergence), "Divergence");
  EXPECT_EQ(getErrorKindName(ErrorKind::IO), "IO");
}

TEST(ErrorsTest, MakeErrorCarriesItsKindAndMessage) {
  for (ErrorKind K : AllKinds) {
    llvm::Error E = makeError(K, "kernel 'k': " + llvm::Twine(42));
    EXPECT_TRUE(E.isA<KindedError>());
    EXPECT_EQ(peekErrorKind(E), K);
    EXPECT_EQ(errorText(std::move(E)), "kernel 'k': 42");
  }
}

TEST(ErrorsTest, SubclassesReportTheirKind) {
  llvm::Error Compile =
      llvm::make_error<DiagnosticError>("a.kir", "", std::vector<Diagnostic>{}, false);
  EXPECT_TRUE(Compile.isA<KindedError>());
  EXPECT_EQ(peekErrorKind(Compile), ErrorKind::Compile);
  llvm::consumeError(std::move(Compile));
  llvm::Error Divergent = llvm::make_error<DiagnosticError>(
      "a.kir", "", std::vector<Diagnostic>{{SourceLoc{}, "divergent"}}, false,
      ErrorKind::Divergence);
  EXPECT_EQ(peekErrorKind(Divergent), ErrorKind::Divergence);
  EXPECT_TRUE(Divergent.isA<DiagnosticError>());
  EXPECT_EQ(errorText(std::move(Divergent)), "a.kir: error: divergent\n");
  llvm::Error Fault = llvm::make_error<KernelFaultError>("k", "kernel 'k' faulted");
  EXPECT_EQ(peekErrorKind(Fault), ErrorKind::Fault);
  EXPECT_EQ(errorText(std::move(Fault)), "kernel 'k' faulted");
}

TEST(ErrorsTest, OtherErrorsAreIOWithAnErrnoElseFailed) {
  llvm::Error IO =
      llvm::errorCodeToError(std::make_error_code(std::errc::no_such_file_or_directory));
  EXPECT_EQ(peekErrorKind(IO), ErrorKind::IO);
  llvm::consumeError(std::move(IO));
  llvm::Error File = llvm::createFileError("x.npy", llvm::errc::permission_denied);
  EXPECT_EQ(peekErrorKind(File), ErrorKind::IO);
  llvm::consumeError(std::move(File));
  // An errno that is no file's (a thread that cannot start).
  llvm::Error Again = llvm::createStringError(
      std::make_error_code(std::errc::resource_unavailable_try_again), "could not start a thread");
  EXPECT_EQ(peekErrorKind(Again), ErrorKind::Failed);
  llvm::consumeError(std::move(Again));
  llvm::Error Plain = llvm::createStringError(llvm::inconvertibleErrorCode(), "LLVM said no");
  EXPECT_EQ(peekErrorKind(Plain), ErrorKind::Failed);
  llvm::consumeError(std::move(Plain));
  llvm::Error Success = llvm::Error::success();
  EXPECT_EQ(peekErrorKind(Success), ErrorKind::Failed);
  EXPECT_TRUE(succeeded(std::move(Success)));
}

TEST(ErrorsTest, PeekingKeepsTheErrorsInOrder) {
  llvm::Error E = llvm::joinErrors(makeError(ErrorKind::Argument, "first"),
                                   makeError(ErrorKind::Driver, "second"));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Argument);
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Argument);
  EXPECT_EQ(errorText(std::move(E)), "firstsecond");
}

TEST(ErrorsTest, PrefixKeepsTheKind) {
  llvm::Error E = prefixError("gj_launch", makeError(ErrorKind::Timeout, "too slow"));
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Timeout);
  EXPECT_EQ(errorText(std::move(E)), "gj_launch: too slow");
  llvm::Error F = prefixError(
      "reading", llvm::errorCodeToError(std::make_error_code(std::errc::permission_denied)));
  EXPECT_EQ(peekErrorKind(F), ErrorKind::IO);
  llvm::consumeError(std::move(F));
}

} // namespace
