//===- FuzzNpy.cpp - libFuzzer target: jit-run's .npy reader --------------===//
//
// Part of gridjit (docs/Fuzzing.md). jitrun::parseNpy
// (tools/jit-run/KernelArgs.cpp) is what `--arg NAME=@FILE.npy` runs on a
// file's bytes. The first byte picks the parameter's element type; the rest
// is the file. An accepted file is then printed as `--print` would
// (formatBuffer reads every element), which is where an unchecked shape
// used to read past the buffer.
//
//===----------------------------------------------------------------------===//

#include "FuzzCommon.h"
#include "KernelArgs.h"

#include "gridjit/IR/Type.h"

#include <cstdint>

using namespace gridjit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  static const ScalarKind Kinds[] = {
      ScalarKind::Bool, ScalarKind::I8,  ScalarKind::I16, ScalarKind::I32, ScalarKind::I64,
      ScalarKind::U8,   ScalarKind::U16, ScalarKind::U32, ScalarKind::U64, ScalarKind::F32,
      ScalarKind::F64,  ScalarKind::F16, ScalarKind::BF16};
  jitrun::ArgValue A;
  A.Param.Name = "x";
  A.Param.Ty = Type::getPointer(Kinds[Data[0] % std::size(Kinds)], AddrSpace::Global);
  A.Param.Size = 8;
  llvm::StringRef File(reinterpret_cast<const char *>(Data + 1), Size - 1);
  if (llvm::Error E = jitrun::parseNpy(A, "fuzz.npy", File)) {
    llvm::consumeError(std::move(E));
    return 0;
  }
  std::string Printed = jitrun::formatBuffer(A);
  if (Printed.empty())
    fuzz::fail("formatBuffer printed nothing");
  return 0;
}
