//===- ByteCount.cpp - Sizes in messages ----------------------------------===//
//
// Part of gridjit. See gridjit/Support/ByteCount.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Support/ByteCount.h"

#include <cstdio>

std::string gridjit::formatByteCount(uint64_t Bytes) {
  std::string S = std::to_string(Bytes) + " bytes";
  static const char *const Units[] = {"KiB", "MiB", "GiB", "TiB"};
  if (Bytes < 1024)
    return S;
  double V = double(Bytes) / 1024;
  unsigned U = 0;
  while (V >= 1024 && U + 1 < sizeof(Units) / sizeof(Units[0])) {
    V /= 1024;
    ++U;
  }
  char Buf[32];
  // One decimal, without a trailing ".0".
  std::snprintf(Buf, sizeof Buf, "%.1f", V);
  std::string N = Buf;
  if (N.size() > 2 && N.compare(N.size() - 2, 2, ".0") == 0)
    N.resize(N.size() - 2);
  return S + " (" + N + " " + Units[U] + ")";
}
