//===- CacheEntry.h - The on-disk form of a cached artifact -----*- C++ -*-===//
//
// Part of gridjit. One cache entry is a header followed by a body:
//
//   offset size
//        0    8  magic "GRIDJITC"
//        8    4  format version (CacheFormatVersion), little-endian
//       12    4  header size in bytes (HeaderSize)
//       16   32  the cache key
//       48    8  body size in bytes
//       56   32  BLAKE3 of the body
//       88    8  BLAKE3 of bytes 0..87, first 8 bytes (the header checksum)
//       96  ...  body: the artifact (target, arch, payload) and the launch
//                metadata of every kernel, as length-prefixed fields
//
// decodeCacheEntry checks every field and the body's structure; anything
// unexpected is an error (which the cache turns into a miss), never a crash
// or a partially filled artifact. docs/Cache.md describes the body.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_CACHE_CACHEENTRY_H
#define GRIDJIT_CACHE_CACHEENTRY_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/Error.h"

#include <string>
#include <string_view>

namespace gridjit {

/// The magic bytes that start every entry.
constexpr std::string_view CacheEntryMagic = "GRIDJITC";
/// Bytes before the body.
constexpr size_t CacheEntryHeaderSize = 96;

/// The complete entry (header and body) for \p A under \p Key.
std::string encodeCacheEntry(const CacheKey &Key, const Artifact &A);

/// What a request accepts: an artifact for one target and architecture.
/// The cache key covers both (CacheKey.h), so an entry for another target
/// or architecture under a key is not one any gridjit wrote there: the
/// tiers treat it as a bad entry, like a corrupt one.
struct ArtifactMatch {
  TargetKind Kind = TargetKind::Host;
  std::string Arch;
  bool matches(const Artifact &A) const { return A.Kind == Kind && A.Arch == Arch; }
  /// "the entry is for target 'host' (znver3), not 'nvptx' (sm_80)": why
  /// \p A, found as \p What, does not match.
  std::string mismatch(std::string_view What, const Artifact &A) const;
};

/// Decodes an entry read from disk. Errors (each a message naming what is
/// wrong): too short, foreign magic, another format version, another key,
/// a body size that does not match the data (truncated or appended to), a
/// checksum mismatch, a malformed body.
llvm::Expected<Artifact> decodeCacheEntry(std::string_view Data, const CacheKey &Key);

} // namespace gridjit

#endif // GRIDJIT_CACHE_CACHEENTRY_H
