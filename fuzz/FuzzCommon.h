//===- FuzzCommon.h - Helpers shared by gridjit's fuzz targets -*- C++ -*-===//
//
// Part of gridjit (docs/Fuzzing.md). A fuzz target reports a finding by
// aborting (libFuzzer then saves the input); these helpers print what was
// found first. Fuzz targets are test programs, not library code.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_FUZZ_FUZZCOMMON_H
#define GRIDJIT_FUZZ_FUZZCOMMON_H

#include "llvm/Support/Error.h"

#include <cstdio>
#include <cstdlib>
#include <string>

namespace gridjit::fuzz {

/// Reports a finding and aborts, so that libFuzzer keeps the input.
[[noreturn]] inline void fail(const std::string &What, const std::string &Detail = {}) {
  std::fprintf(stderr, "==gridjit-fuzz== FINDING: %s\n%s\n", What.c_str(), Detail.c_str());
  std::fflush(stderr);
  std::abort();
}

/// The value of \p E; set-up failures (not findings) exit with a message.
template <typename T> T exitOnError(llvm::Expected<T> E, const char *What) {
  if (!E) {
    std::fprintf(stderr, "fuzz target set-up failed (%s): %s\n", What,
                 llvm::toString(E.takeError()).c_str());
    std::exit(1);
  }
  return std::move(*E);
}

/// Reads bytes from a fuzzer's input, giving zeros once it is used up, so
/// that every input decodes to something.
class ByteReader {
public:
  ByteReader(const uint8_t *Data, size_t Size) : Data(Data), Size(Size) {}
  bool empty() const { return Pos >= Size; }
  size_t left() const { return Pos < Size ? Size - Pos : 0; }
  uint8_t u8() { return Pos < Size ? Data[Pos++] : 0; }
  uint32_t u32() {
    uint32_t V = 0;
    for (int I = 0; I < 4; ++I)
      V |= uint32_t(u8()) << (8 * I);
    return V;
  }
  uint64_t u64() { return uint64_t(u32()) | uint64_t(u32()) << 32; }
  /// A value in [0, N) (0 when N is 0).
  uint32_t below(uint32_t N) { return N ? u8() % N : 0; }
  bool flag() { return u8() & 1; }
  /// The next \p N bytes (fewer at the end).
  std::string bytes(size_t N) {
    N = std::min(N, left());
    std::string S(reinterpret_cast<const char *>(Data + Pos), N);
    Pos += N;
    return S;
  }
  std::string rest() { return bytes(left()); }

private:
  const uint8_t *Data;
  size_t Size;
  size_t Pos = 0;
};

} // namespace gridjit::fuzz

#endif // GRIDJIT_FUZZ_FUZZCOMMON_H
