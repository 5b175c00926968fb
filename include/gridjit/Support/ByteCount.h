//===- ByteCount.h - Sizes in messages --------------------------*- C++ -*-===//
//
// Part of gridjit. How messages state a number of bytes that a reader
// compares with a limit: exactly, then rounded in binary units.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_SUPPORT_BYTECOUNT_H
#define GRIDJIT_SUPPORT_BYTECOUNT_H

#include <cstdint>
#include <string>

namespace gridjit {

/// "18000048 bytes (17.2 MiB)", "65536 bytes (64 KiB)", "100 bytes": the
/// exact count, then (from 1 KiB on) the count in KiB, MiB, GiB or TiB
/// with at most one decimal.
std::string formatByteCount(uint64_t Bytes);

} // namespace gridjit

#endif // GRIDJIT_SUPPORT_BYTECOUNT_H
