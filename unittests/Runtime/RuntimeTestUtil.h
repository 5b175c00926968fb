//===- RuntimeTestUtil.h - Helpers shared by the runtime tests --*- C++ -*-===//
//
// Part of gridjit's unit tests. Compiling a test module into an artifact,
// and the fake CUDA driver (unittests/FakeCuda), which reads its
// configuration from the environment at every cuInit and exports test
// hooks: these helpers set the one and reach the other.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H
#define GRIDJIT_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Target/Target.h"

#include <cstdlib>
#include <dlfcn.h>
#include <memory>
#include <optional>
#include <string>

namespace gridjit::test {

/// \p Source (named \p Name in diagnostics) compiled by the target \p T
/// at the default options; on any error, a test failure that prints it,
/// and an empty Artifact.
inline Artifact compileForTest(llvm::Expected<std::unique_ptr<Target>> T, std::string_view Source,
                               std::string_view Name) {
  if (!T) {
    ADD_FAILURE() << errorText(T.takeError());
    return Artifact();
  }
  auto M = parseAndVerify(Source, Name);
  if (!M) {
    ADD_FAILURE() << errorText(M.takeError());
    return Artifact();
  }
  auto A = (*T)->compile(**M, CompileOptions());
  if (!A) {
    ADD_FAILURE() << errorText(A.takeError());
    return Artifact();
  }
  return std::move(*A);
}

/// A one-dimensional launch: \p Grid blocks of \p Block threads.
inline LaunchConfig config1D(uint32_t Grid, uint32_t Block) {
  LaunchConfig C;
  C.Grid.X = Grid;
  C.Block.X = Block;
  return C;
}

/// A host runtime and a module loaded into it.
struct LoadedHost {
  std::unique_ptr<HostRuntime> RT;
  std::unique_ptr<LoadedModule> M;
};

/// A HostRuntime made with \p Opts and \p A loaded into it; on any error,
/// a test failure that prints it, and null members from there on.
inline LoadedHost loadHost(const Artifact &A, const HostRuntimeOptions &Opts = {}) {
  LoadedHost L;
  auto RT = HostRuntime::create(Opts);
  if (!RT) {
    ADD_FAILURE() << errorText(RT.takeError());
    return L;
  }
  L.RT = std::move(*RT);
  auto M = L.RT->load(A);
  if (!M) {
    ADD_FAILURE() << errorText(M.takeError());
    return L;
  }
  L.M = std::move(*M);
  return L;
}

/// Sets (or unsets, for nullptr) an environment variable for one scope
/// and restores it afterwards.
class ScopedEnv {
public:
  ScopedEnv(const char *Name, const char *Value) : Name(Name) {
    if (const char *Old = std::getenv(Name))
      Saved = Old;
    if (Value)
      ::setenv(Name, Value, 1);
    else
      ::unsetenv(Name);
  }
  ~ScopedEnv() {
    if (Saved)
      ::setenv(Name, Saved->c_str(), 1);
    else
      ::unsetenv(Name);
  }
  ScopedEnv(const ScopedEnv &) = delete;
  ScopedEnv &operator=(const ScopedEnv &) = delete;

private:
  const char *Name;
  std::optional<std::string> Saved;
};

#ifdef GRIDJIT_FAKE_CUDA
/// Driver options that load the fake driver.
inline CudaDriverOptions fake() {
  CudaDriverOptions O;
  O.LibraryPath = GRIDJIT_FAKE_CUDA;
  return O;
}

/// A test hook the fake exports (FakeCuda.cpp, "For the tests"). Opened
/// RTLD_LOCAL, as the library opens the driver, so that the fake's symbols
/// never become global in this process (see
/// DriverSymbolsStayOutOfTheGlobalNamespace).
template <typename Fn> Fn fakeHook(const char *Name) {
  void *Handle = ::dlopen(GRIDJIT_FAKE_CUDA, RTLD_LAZY | RTLD_LOCAL);
  return Handle ? reinterpret_cast<Fn>(::dlsym(Handle, Name)) : nullptr;
}
#endif

} // namespace gridjit::test

#endif // GRIDJIT_UNITTESTS_RUNTIME_RUNTIMETESTUTIL_H
