//===- FuzzKIR.cpp - libFuzzer target: KIR text through both back ends ----===//
//
// Part of gridjit (docs/Fuzzing.md). Bytes are KIR source: parsed,
// verified, printed and re-parsed (the printer's round-trip promise,
// docs/LangRef.md section 9), then lowered and compiled for the host and
// the NVPTX target. Any input may be rejected with an error; none may
// crash, trip a sanitizer, or break the round trip.
//
// Inputs above 4 KiB are skipped, and code generation runs at -O0 for the
// host and at -O0 or -O1 (chosen by the input) for NVPTX, so that a run
// executes tens of inputs a second under ASan. (The host target at -O1 and
// above takes time that grows about quadratically with the number of warp
// operations in one kernel, inside LLVM's passes, see docs/Fuzzing.md:
// test/NVPTX/shuffles.kir alone took 27 s here.)
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"

#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string_view>

using namespace gridjit;

namespace {
constexpr size_t MaxInputBytes = 4096;

std::unique_ptr<Target> Host, NVPTX;
} // namespace

extern "C" int LLVMFuzzerInitialize(int *, char ***) {
  Host = fuzz::exitOnError(createHostTarget(), "host target");
  NVPTXTargetOptions O;
  // libdevice would be linked into every compile with math: slow, and not
  // gridjit's code. Without it f64 math is a clean compile error.
  O.UseLibdevice = false;
  NVPTX = fuzz::exitOnError(createNVPTXTarget(O), "nvptx target");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size > MaxInputBytes)
    return -1; // not added to the corpus
  std::string_view Source(reinterpret_cast<const char *>(Data), Size);
  auto M = parseModule(Source, "fuzz.kir");
  if (!M) {
    llvm::consumeError(M.takeError());
    return 0;
  }
  // The printer's promise: print(parse(print(M))) == print(M), for parsed
  // modules whether or not they verify.
  std::string Printed = printModule(**M);
  auto M2 = parseModule(Printed, "printed.kir");
  if (!M2)
    fuzz::fail("the printed module does not parse again",
               Printed + "\n--- error:\n" + llvm::toString(M2.takeError()));
  std::string Printed2 = printModule(**M2);
  if (Printed2 != Printed)
    fuzz::fail("printing is not stable", Printed + "\n--- printed again:\n" + Printed2);

  if (llvm::Error E = verifyModule(**M)) {
    llvm::consumeError(std::move(E));
    return 0;
  }
  for (Target *T : {Host.get(), NVPTX.get()}) {
    CompileOptions Opts;
    Opts.OptLevel = T == NVPTX.get() ? unsigned(Size % 2) : 0;
    auto A = T->compile(**M, Opts);
    if (!A)
      llvm::consumeError(A.takeError());
  }
  return 0;
}
