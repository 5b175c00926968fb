//===- Features.cpp - What this build of jit-run can do here --------------===//
//
// Part of gridjit. See Features.h. Each feature is detected by doing what
// it names, through the library's public API, on the smallest kernel that
// needs it: a feature is present exactly when the tests that require it can
// pass.
//
//===----------------------------------------------------------------------===//

#include "Features.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"

using namespace jitrun;

namespace {

/// True when \p E holds a value; otherwise drops its error: a probe only
/// asks whether something works.
template <typename T> bool succeeded(llvm::Expected<T> &E) {
  if (E)
    return true;
  llvm::consumeError(E.takeError());
  return false;
}

/// Compiles \p Source for \p T at -O0.
llvm::Expected<gridjit::Artifact> compileProbe(const gridjit::Target &T, std::string_view Source) {
  auto M = gridjit::parseAndVerify(Source, "<feature probe>");
  if (!M)
    return M.takeError();
  gridjit::CompileOptions Opts;
  Opts.OptLevel = 0;
  return T.compile(**M, Opts);
}

/// The host target compiles a kernel, and the host runtime loads it and
/// runs it.
bool hasHostJit() {
  auto T = gridjit::createHostTarget();
  if (!succeeded(T))
    return false;
  auto A = compileProbe(**T, "kernel k(p: ptr<i32>) {\n  p[0] = 1;\n}\n");
  if (!succeeded(A))
    return false;
  gridjit::HostRuntimeOptions RO;
  RO.NumThreads = 1;
  auto RT = gridjit::HostRuntime::create(RO);
  if (!succeeded(RT))
    return false;
  auto L = (*RT)->load(*A);
  if (!succeeded(L))
    return false;
  int32_t Value = 0;
  gridjit::KernelArg Arg = gridjit::KernelArg::pointer(&Value);
  if (llvm::Error E = (*RT)->launch(**L, "k", gridjit::LaunchConfig(), Arg)) {
    llvm::consumeError(std::move(E));
    return false;
  }
  return Value == 1;
}

/// The NVPTX backend is part of this build.
bool hasNVPTX() {
  gridjit::NVPTXTargetOptions Opts;
  Opts.UseLibdevice = false;
  auto T = gridjit::createNVPTXTarget(Opts);
  return succeeded(T);
}

/// The NVPTX target finds libdevice where it looks for it (docs/Targets.md)
/// and compiles f64 math with it.
bool hasLibdevice() {
  auto T = gridjit::createNVPTXTarget();
  if (!succeeded(T))
    return false;
  auto A = compileProbe(**T, "kernel k(p: ptr<f64>) {\n  p[0] = sin(p[0]);\n}\n");
  return succeeded(A);
}

/// The CUDA driver lists at least one device (jit-run --list-devices).
bool hasCudaDevice() {
  auto Devices = gridjit::listCudaDevices();
  return succeeded(Devices) && !Devices->empty();
}

/// One feature: its name and how to find out whether it is there.
struct Feature {
  const char *Name;
  bool (*IsAvailable)();
};

/// Every feature jit-run can report; a new one is one row.
const Feature Features[] = {
    {"host-jit", hasHostJit},
    {"nvptx", hasNVPTX},
    {"libdevice", hasLibdevice},
    {"cuda-device", hasCudaDevice},
};

} // namespace

void jitrun::printFeatures(llvm::raw_ostream &OS) {
  for (const Feature &F : Features)
    if (F.IsAvailable())
      OS << F.Name << '\n';
}
