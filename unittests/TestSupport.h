//===- TestSupport.h - Helpers shared by the unit tests ---------*- C++ -*-===//
//
// Part of gridjit. The one namespace of the unit tests' helpers,
// gridjit::test (Cache/CacheTestUtil.h adds the cache's). LLVM's
// llvm/Testing/Support/Error.h matchers need the LLVMTestingSupport library,
// which Debian's llvm-19-dev does not ship, so errors are checked with
// succeeded() and failed() here, which print the error when they fail:
//   ASSERT_TRUE(succeeded(M));  // M: an Expected (kept) or an Error
//   ASSERT_TRUE(failed(R));     // R: an Expected or Error the test reads
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_TESTSUPPORT_H
#define GRIDJIT_UNITTESTS_TESTSUPPORT_H

#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/ADT/SmallString.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Program.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <optional>
#include <string>
#include <string_view>
#include <unistd.h>
#include <vector>

/// The checkout's root directory.
#define GRIDJIT_SOURCE_DIR (::gridjit::test::sourceDir())
/// The fake CUDA drivers (unittests/FakeCuda).
#define GRIDJIT_FAKE_CUDA (::gridjit::test::fakeCudaPath())
#define GRIDJIT_FAKE_CUDA_NOLAUNCH (::gridjit::test::fakeCudaNoLaunchPath())

namespace gridjit::test {

/// The paths of the checkout and of the fake CUDA drivers
/// (unittests/TestPaths.cpp). They are compiled into that one file alone,
/// not defined on every test's command line, so that the other tests'
/// objects do not depend on where the checkout is and a fresh clone finds
/// them in ccache (docs/Building.md).
const char *sourceDir();
const char *fakeCudaPath();
const char *fakeCudaNoLaunchPath();

/// The rendering of \p E as it would be printed (empty for success);
/// consumes it. Diagnostics come with their source line and caret.
inline std::string errorText(llvm::Error E) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  llvm::handleAllErrors(std::move(E), [&](const llvm::ErrorInfoBase &EI) { EI.log(OS); });
  return S;
}

/// Each diagnostic of \p E as "LINE:COL: MESSAGE", or one entry
/// "OTHER: ..." for an error that is not a DiagnosticError; empty for
/// success. Consumes \p E.
inline std::vector<std::string> diagnosticList(llvm::Error E) {
  std::vector<std::string> Out;
  llvm::handleAllErrors(
      std::move(E),
      [&](const DiagnosticError &DE) {
        for (const Diagnostic &D : DE.getDiagnostics())
          Out.push_back(std::to_string(D.Loc.Line) + ":" + std::to_string(D.Loc.Col) + ": " +
                        D.Message);
      },
      [&](const llvm::ErrorInfoBase &EI) { Out.push_back("OTHER: " + EI.message()); });
  return Out;
}

/// print(parse(Text)), or "PARSE ERROR: ..." so that a failure shows why.
inline std::string canonical(std::string_view Text, std::string_view Name = "test.kir") {
  auto M = parseModule(Text, Name);
  if (!M)
    return "PARSE ERROR: " + errorText(M.takeError());
  return printModule(**M);
}

/// Success when \p E is success; otherwise a failure that prints the error
/// (which it consumes).
inline ::testing::AssertionResult succeeded(llvm::Error &&E) {
  if (!E)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "error: " << errorText(std::move(E));
}

/// Success when \p E holds a value, which stays in \p E; otherwise a
/// failure that prints the error (taken out of \p E).
template <typename T> testing::AssertionResult succeeded(llvm::Expected<T> &E) {
  if (E)
    return ::testing::AssertionSuccess();
  return succeeded(E.takeError());
}

/// succeeded() for an Expected the test does not keep.
template <typename T> testing::AssertionResult succeeded(llvm::Expected<T> &&E) {
  return succeeded(E);
}

/// Success when \p E holds an error, which stays in \p E for the test to
/// read (or consume).
template <typename T> testing::AssertionResult failed(llvm::Expected<T> &E) {
  if (!E)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "succeeded, expected an error";
}

/// failed() for an Expected the test does not keep; consumes the error.
template <typename T> testing::AssertionResult failed(llvm::Expected<T> &&E) {
  if (E)
    return ::testing::AssertionFailure() << "succeeded, expected an error";
  llvm::consumeError(E.takeError());
  return ::testing::AssertionSuccess();
}

/// Success when \p E is an error, which stays in \p E for the test to
/// read (or consume).
inline ::testing::AssertionResult failed(llvm::Error &E) {
  if (E)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << "succeeded, expected an error";
}

/// Success when \p E is an error, which it consumes.
inline ::testing::AssertionResult failed(llvm::Error &&E) {
  if (!E)
    return ::testing::AssertionFailure() << "succeeded, expected an error";
  llvm::consumeError(std::move(E));
  return ::testing::AssertionSuccess();
}

/// The saxpy kernel (examples/saxpy.kir without its comments), for tests
/// that need one small, real kernel.
inline constexpr const char *SaxpySource =
    "kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n"
    "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
    "  if i < n { y[i] = a * x[i] + y[i]; }\n"
    "}\n";

/// The environment for a child process that runs one test of this
/// program (--gtest_filter=...): ours without gtest's GTEST_* settings
/// (under lit's sharding the child's test could otherwise fall in another
/// shard and not run at all), plus \p Extra ("NAME=VALUE" each).
inline std::vector<std::string> childTestEnvironment(std::vector<std::string> Extra) {
  std::vector<std::string> Env;
  for (char **E = environ; *E; ++E)
    if (std::string_view(*E).substr(0, 6) != "GTEST_")
      Env.emplace_back(*E);
  for (std::string &X : Extra)
    Env.push_back(std::move(X));
  return Env;
}

/// The output of a child that ran the one test it was asked to and
/// passed it (see childTestEnvironment) has this line.
inline constexpr const char *ChildPassedLine = "[  PASSED  ] 1 test.";

/// What a child test process did.
struct ChildRun {
  int ExitCode = -1;  ///< -1: it could not run, or did not end in time
  std::string Output; ///< its standard output and error
  std::string Error;  ///< why it could not run
};

/// Runs this program's test \p Test (a disabled one, "Suite.DISABLED_X")
/// in a child process with childTestEnvironment(\p Extra), at most
/// \p Seconds.
inline ChildRun runChildTest(const std::string &Test, std::vector<std::string> Extra,
                             unsigned Seconds = 120) {
  ChildRun R;
  std::string Self = llvm::sys::fs::getMainExecutable(nullptr, nullptr);
  std::string Filter = "--gtest_filter=" + Test;
  std::vector<llvm::StringRef> Args = {Self, Filter, "--gtest_also_run_disabled_tests"};
  std::vector<std::string> EnvStore = childTestEnvironment(std::move(Extra));
  std::vector<llvm::StringRef> EnvRefs(EnvStore.begin(), EnvStore.end());
  llvm::SmallString<128> Log;
  if (std::error_code EC = llvm::sys::fs::createTemporaryFile("gridjit-child", "log", Log)) {
    R.Error = "cannot create the child's log: " + EC.message();
    return R;
  }
  std::optional<llvm::StringRef> Redirects[] = {std::nullopt, llvm::StringRef(Log),
                                                llvm::StringRef(Log)};
  R.ExitCode = llvm::sys::ExecuteAndWait(Self, Args, EnvRefs, Redirects, Seconds, 0, &R.Error);
  if (auto Buf = llvm::MemoryBuffer::getFile(Log))
    R.Output = (*Buf)->getBuffer().str();
  llvm::sys::fs::remove(Log);
  return R;
}

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_TESTSUPPORT_H
