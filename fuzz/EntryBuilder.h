//===- EntryBuilder.h - Cache entries with valid checksums for fuzzing -*- C++ -*-===//
//
// Part of gridjit (docs/Fuzzing.md). A cache entry's header carries BLAKE3
// checksums of itself and of the body (lib/Cache/CacheEntry.cpp), which
// random bytes never match. wrapEntryBody puts a correct header around
// any body, so that the fuzzers reach the body's decoder.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_FUZZ_ENTRYBUILDER_H
#define GRIDJIT_FUZZ_ENTRYBUILDER_H

#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/CacheKey.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <string>
#include <string_view>

namespace gridjit::fuzz {

/// The key the fuzzers store entries under: bytes 0, 1, ..., 31.
inline CacheKey fuzzKey() {
  CacheKey K;
  for (size_t I = 0; I < K.Bytes.size(); ++I)
    K.Bytes[I] = uint8_t(I);
  return K;
}

/// A complete entry for \p K with body \p Body and correct checksums (the
/// layout of encodeCacheEntry).
inline std::string wrapEntryBody(const CacheKey &K, std::string_view Body) {
  namespace endian = llvm::support::endian;
  std::string H(CacheEntryMagic);
  char B[8];
  endian::write32le(B, CacheFormatVersion);
  H.append(B, 4);
  endian::write32le(B, CacheEntryHeaderSize);
  H.append(B, 4);
  H.append(reinterpret_cast<const char *>(K.Bytes.data()), K.Bytes.size());
  endian::write64le(B, Body.size());
  H.append(B, 8);
  auto Sum = llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(llvm::StringRef(Body)));
  H.append(reinterpret_cast<const char *>(Sum.data()), Sum.size());
  auto HSum = llvm::BLAKE3::hash<8>(llvm::arrayRefFromStringRef(llvm::StringRef(H)));
  H.append(reinterpret_cast<const char *>(HSum.data()), HSum.size());
  H.append(Body);
  return H;
}

} // namespace gridjit::fuzz

#endif // GRIDJIT_FUZZ_ENTRYBUILDER_H
