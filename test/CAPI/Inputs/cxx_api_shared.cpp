//===- cxx_api_shared.cpp - gridjit's C++ API through libgridjit.so -------===//
//
// Part of gridjit's test suite (test/CAPI/cxx-api-shared.test). A program
// that uses the C++ API from libgridjit.so and its own copy of LLVM 19's
// Support library, as a C++ user would: compiles saxpy and runs it on the
// host, checks the result, and renders a compile error with
// gridjit::errorMessage (its own llvm::toString would not recognise the
// error: docs/CAPI.md, "The C++ API from libgridjit.so").
//
//===----------------------------------------------------------------------===//

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Diagnostics.h"

#include <cstdio>
#include <vector>

using namespace gridjit;

int main() {
  CompilerOptions O;
  O.UseDiskCache = false;
  auto C = Compiler::create(std::move(O));
  if (!C) {
    std::printf("create: %s\n", errorMessage(C.takeError()).c_str());
    return 1;
  }
  auto Bad = (*C)->compile("kernel k(n: i32) {\n  let x: f32 = n;\n}\n", "bad.kir");
  if (Bad)
    return 1;
  llvm::Error E = Bad.takeError();
  std::printf("is a DiagnosticError: %d\n", E.isA<DiagnosticError>());
  std::printf("%s", errorMessage(std::move(E)).c_str());

  auto M = (*C)->compile("kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {\n"
                         "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
                         "  if i < n { y[i] = a * x[i] + y[i]; }\n"
                         "}\n",
                         "saxpy.kir");
  auto RT = createRuntime(TargetKind::Host);
  if (!M || !RT) {
    std::printf("error: %s%s\n", errorMessage(M.takeError()).c_str(),
                errorMessage(RT.takeError()).c_str());
    return 1;
  }
  auto L = (*RT)->load((*M)->Art);
  if (!L) {
    std::printf("load: %s\n", errorMessage(L.takeError()).c_str());
    return 1;
  }
  constexpr int N = 1000;
  std::vector<float> X(N), Y(N);
  for (int I = 0; I < N; ++I) {
    X[I] = float(I);
    Y[I] = 1.0f;
  }
  LaunchConfig Config;
  Config.Grid.X = (N + 127) / 128;
  Config.Block.X = 128;
  if (llvm::Error E = (*RT)->launch(**L, "saxpy", Config,
                                    {KernelArg::i32(N), KernelArg::f32(2.0f),
                                     KernelArg::pointer(X.data()), KernelArg::pointer(Y.data())})) {
    std::printf("launch: %s\n", errorMessage(std::move(E)).c_str());
    return 1;
  }
  int Wrong = 0;
  for (int I = 0; I < N; ++I)
    Wrong += Y[I] != 2.0f * float(I) + 1.0f;
  std::printf("saxpy: %d wrong\n", Wrong);
  // A launch error, from the runtime.
  llvm::Error Refused = (*RT)->launch(**L, "saxpy", Config, {KernelArg::i32(N)});
  std::printf("%s\n", errorMessage(std::move(Refused)).c_str());
  return Wrong != 0;
}
