//===- FakeCudaTestUtil.h - Helpers for tests on the fake driver -*- C++ -*-===//
//
// Part of gridjit's unit tests. The fake CUDA driver (unittests/FakeCuda)
// reads its configuration from the environment at every cuInit, and
// exports test hooks; these helpers set the one and reach the other.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_UNITTESTS_RUNTIME_FAKECUDATESTUTIL_H
#define GRIDJIT_UNITTESTS_RUNTIME_FAKECUDATESTUTIL_H

#include "gridjit/Runtime/CudaDevices.h"

#include <cstdlib>
#include <dlfcn.h>
#include <optional>
#include <string>

namespace gridjit::test {

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

#endif // GRIDJIT_UNITTESTS_RUNTIME_FAKECUDATESTUTIL_H
