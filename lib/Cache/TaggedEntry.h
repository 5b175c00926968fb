//===- TaggedEntry.h - Cache entries authenticated by a secret --*- C++ -*-===//
//
// Part of gridjit. Internal to lib/Cache (and the fuzz targets
// fuzz/FuzzRedisReply.cpp and fuzz/FuzzCacheEntry.cpp). What the tiers
// that other users can write to store under a key: one cache entry
// (CacheEntry.h), followed, when a secret is configured, by a 40-byte
// trailer, "GJHMAC01" and HMAC-SHA256(secret, context || key || entry). The
// context names the tier ("gridjit-remote-v1", "gridjit-disk-v1"), so that
// a tag made for one tier never authenticates a value in the other.
// Writing one (encodeTaggedEntry) and checking one read back
// (validateTaggedEntry: the tag, in constant time, before a byte of the
// entry is decoded; then the entry; then its target) are here and nowhere
// else: the remote tier (RemoteCache.cpp) and the disk tier (DiskCache.cpp)
// both use them.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_TAGGEDENTRY_H
#define GRIDJIT_LIB_CACHE_TAGGEDENTRY_H

#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Target/Target.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit {

/// "GJHMAC01": the start of the 40-byte trailer of a tagged entry.
constexpr std::string_view TagMagic = "GJHMAC01";
constexpr size_t TagTrailerSize = 8 + 32;

/// The tier a tag is made for: the first bytes of the tagged message.
enum class TagContext {
  Remote, ///< "gridjit-remote-v1" (docs/RemoteCache.md, "Authenticity")
  Disk,   ///< "gridjit-disk-v1" (docs/Cache.md, "Sharing a cache directory")
};

/// The HMAC-SHA256 tag of \p Entry stored under \p K in tier \p C with
/// \p Secret.
std::array<uint8_t, 32> entryTag(std::string_view Secret, TagContext C, const CacheKey &K,
                                 std::string_view Entry);

/// What a tier stores for \p A under \p K: its cache entry, tagged when
/// \p Secret is not empty.
std::string encodeTaggedEntry(std::string_view Secret, TagContext C, const CacheKey &K,
                              const Artifact &A);

/// Why validateTaggedEntry rejected a value.
enum class EntryProblem {
  None,
  Auth,     ///< a secret is set and the value has no valid tag
  BadEntry, ///< not \p K's entry (damaged, foreign, another key, another target)
};

/// Checks \p Value as \p K's value in tier \p C: with a \p Secret, a trailer
/// with the right tag must end it (checked before anything else is read);
/// the rest must decode as \p K's cache entry and, when \p Want is given,
/// be for its target and architecture. Without a secret a trailer is
/// ignored. On failure sets \p Problem (what is wrong) and \p Why.
std::optional<Artifact> validateTaggedEntry(std::string_view Secret, TagContext C,
                                            const CacheKey &K, std::string_view Value,
                                            const ArtifactMatch *Want, std::string &Problem,
                                            EntryProblem &Why);

} // namespace gridjit

#endif // GRIDJIT_LIB_CACHE_TAGGEDENTRY_H
