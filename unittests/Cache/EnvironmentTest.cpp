//===- EnvironmentTest.cpp - Every environment read goes through the table -===//
//
// Part of gridjit. The library reads environment variables only through
// gridjit::getEnv, whose argument is a row of the one table
// (Support/Environment.h). This test fails when any file under lib/ or
// include/ other than lib/Support/Environment.cpp calls getenv,
// secure_getenv, llvm::sys::Process::GetEnv or touches environ, and when a
// row of the table is not documented in docs/Cache.md.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Support/Environment.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Regex.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <set>

using namespace gridjit;
using namespace gridjit::test;
namespace fs = llvm::sys::fs;

namespace {

using ::testing::HasSubstr;

std::string sourcePath(llvm::StringRef Rel) {
  return std::string(GRIDJIT_SOURCE_DIR) + "/" + Rel.str();
}

/// Every line of a C/C++ file under lib/ and include/ that reads the
/// environment, as "path:line: text".
std::vector<std::string> findEnvironmentReads() {
  // A call of one of the functions that read the environment, or a use
  // of the environ array.
  llvm::Regex Read("(^|[^A-Za-z0-9_])(getenv|secure_getenv|GetEnv|GetEnvironmentVariable[AW]?|"
                   "environ|__environ|_environ)([^A-Za-z0-9_]|$)");
  std::vector<std::string> Found;
  for (const char *Root : {"lib", "include"}) {
    std::error_code EC;
    for (fs::recursive_directory_iterator It(sourcePath(Root), EC), End; It != End && !EC;
         It.increment(EC)) {
      llvm::StringRef Path = It->path();
      llvm::StringRef Ext = llvm::sys::path::extension(Path);
      if (Ext != ".cpp" && Ext != ".h" && Ext != ".c" && Ext != ".inc" && Ext != ".def")
        continue;
      if (Path.ends_with("lib/Support/Environment.cpp"))
        continue; // the one place allowed to read it
      auto Buf = llvm::MemoryBuffer::getFile(Path);
      if (!Buf)
        continue;
      llvm::SmallVector<llvm::StringRef> Lines;
      (*Buf)->getBuffer().split(Lines, '\n');
      for (size_t I = 0; I < Lines.size(); ++I) {
        llvm::StringRef L = Lines[I].trim();
        if (L.starts_with("//") || L.starts_with("///") || L.starts_with("*"))
          continue; // comments may mention them
        if (Read.match(L))
          Found.push_back(Path.str() + ":" + std::to_string(I + 1) + ": " + L.str());
      }
    }
    EXPECT_FALSE(EC) << Root << ": " << EC.message();
  }
  return Found;
}

TEST(EnvironmentTest, LibraryReadsTheEnvironmentOnlyThroughTheTable) {
  std::vector<std::string> Reads = findEnvironmentReads();
  for (const std::string &R : Reads)
    ADD_FAILURE() << R
                  << "\n  reads the environment directly; add the variable to the table in "
                     "lib/Support/Environment.cpp (and docs/Cache.md) and read it with "
                     "gridjit::getEnv(EnvVar::...)";
}

TEST(EnvironmentTest, TheScanFindsDirectReads) {
  // The pattern must catch the usual spellings (guards against a scan that
  // silently matches nothing).
  llvm::Regex Read("(^|[^A-Za-z0-9_])(getenv|secure_getenv|GetEnv|GetEnvironmentVariable[AW]?|"
                   "environ|__environ|_environ)([^A-Za-z0-9_]|$)");
  for (const char *L : {"const char *H = std::getenv(\"HOME\");", "::getenv(\"X\")",
                        "llvm::sys::Process::GetEnv(\"CUDA_HOME\")", "secure_getenv(\"A\")",
                        "for (char **E = environ; *E; ++E)"})
    EXPECT_TRUE(Read.match(L)) << L;
  for (const char *L : {"getEnv(EnvVar::Home)", "Environment.h", "getenvironment()"})
    EXPECT_FALSE(Read.match(L)) << L;
}

TEST(EnvironmentTest, TableIsCompleteOrderedAndDocumented) {
  auto Doc = llvm::MemoryBuffer::getFile(sourcePath("docs/Cache.md"));
  ASSERT_TRUE(Doc) << Doc.getError().message();
  std::set<std::string_view> Names;
  unsigned I = 0;
  for (const EnvVarInfo &Row : getEnvVarTable()) {
    EXPECT_EQ(static_cast<unsigned>(Row.Var), I++) << Row.Name;
    EXPECT_EQ(&getEnvVarInfo(Row.Var), &Row);
    EXPECT_TRUE(Names.insert(Row.Name).second) << "twice: " << Row.Name;
    EXPECT_FALSE(Row.Use.empty()) << Row.Name;
    EXPECT_THAT((*Doc)->getBuffer().str(), HasSubstr("`" + std::string(Row.Name) + "`"))
        << Row.Name << " is not documented in docs/Cache.md";
  }
  EXPECT_EQ(getEnvVarInfo(EnvVar::CudaHome).Effect, EnvEffect::PartOfKey);
  EXPECT_EQ(getEnvVarInfo(EnvVar::GridjitCacheDir).Effect, EnvEffect::DoesNotAffectCode);
}

TEST(EnvironmentTest, GetEnvReadsTheProcessEnvironment) {
  // HOME is set in every test environment we run in; an unset one reads
  // as std::nullopt (not checked: it would mean changing the environment).
  std::optional<std::string> Home = getEnv(EnvVar::Home);
  if (Home)
    EXPECT_FALSE(Home->empty());
}

} // namespace
