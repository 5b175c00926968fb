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
#include <functional>
#include <memory>
#include <optional>
#include <pthread.h>
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

/// A chain of \p Depth device functions, each with a 60000-byte local
/// array (under the 64 KiB a device function's array may have) live
/// across its call to the next: kernel `deep` needs about Depth * 60000
/// bytes of stack.
inline std::string deepKernel(unsigned Depth) {
  std::string S;
  for (unsigned I = 0; I < Depth; ++I) {
    std::string F = "f" + std::to_string(I);
    S += "fn " + F + "(n: i32, x: f64) -> f64 {\n  var a: [f64; 7500];\n  a[n] = x;\n";
    if (I + 1 < Depth)
      S += "  a[1] = f" + std::to_string(I + 1) + "(n, a[n]);\n";
    S += "  return a[n] + a[1];\n}\n";
  }
  S += "kernel deep(n: i32, out: ptr<f64>) {\n  out[block_idx.x] = f0(n, 1.0);\n}\n";
  return S;
}

/// Runs \p Fn on a thread of its own made with \p Attr, which it then
/// destroys, and waits for it.
inline void onThread(pthread_attr_t &Attr, const std::function<void()> &Fn) {
  pthread_t T;
  auto Body = [](void *P) -> void * {
    (*static_cast<const std::function<void()> *>(P))();
    return nullptr;
  };
  int Err = pthread_create(&T, &Attr, Body, const_cast<std::function<void()> *>(&Fn));
  pthread_attr_destroy(&Attr);
  ASSERT_EQ(Err, 0);
  pthread_join(T, nullptr);
}

/// Runs \p Fn on a thread of its own with a stack of at least
/// \p StackBytes (glibc may give it a larger one it kept from an earlier
/// thread).
inline void onThreadWithStack(size_t StackBytes, const std::function<void()> &Fn) {
  pthread_attr_t Attr;
  pthread_attr_init(&Attr);
  pthread_attr_setstacksize(&Attr, StackBytes);
  onThread(Attr, Fn);
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
