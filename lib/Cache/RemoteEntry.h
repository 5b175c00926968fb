//===- RemoteEntry.h - What the remote tier stores under a key --*- C++ -*-===//
//
// Part of gridjit. Internal to lib/Cache (and the fuzz target
// fuzz/FuzzRedisReply.cpp). A remote value is one cache entry
// (CacheEntry.h), followed, when a secret is configured, by a 40-byte
// trailer: "GJHMAC01" and HMAC-SHA256(secret, "gridjit-remote-v1" || key ||
// entry). Writing one (encodeRemoteValue) and checking one read back
// (validateRemoteValue: the tag, in constant time, then the entry) are here
// and nowhere else.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REMOTEENTRY_H
#define GRIDJIT_LIB_CACHE_REMOTEENTRY_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Target/Target.h"

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit::remote {

/// "GJHMAC01": the start of the 40-byte trailer of a tagged value.
constexpr std::string_view TagMagic = "GJHMAC01";
constexpr size_t TagTrailerSize = 8 + 32;

/// The HMAC-SHA256 tag of \p Entry stored under \p K with \p Secret.
std::array<uint8_t, 32> valueTag(std::string_view Secret, const CacheKey &K,
                                 std::string_view Entry);

/// The value for \p A under \p K: its cache entry, tagged when \p Secret is
/// not empty.
std::string encodeRemoteValue(std::string_view Secret, const CacheKey &K, const Artifact &A);

/// Why validateRemoteValue rejected a value.
enum class ValueProblem { None, Auth, BadEntry };

/// Checks \p Value as \p K's remote value: with a \p Secret, a trailer with
/// the right tag must end it; the rest must decode as \p K's cache entry.
/// On failure sets \p Problem (what is wrong) and \p Why.
std::optional<Artifact> validateRemoteValue(std::string_view Secret, const CacheKey &K,
                                            std::string_view Value, std::string &Problem,
                                            ValueProblem &Why);

} // namespace gridjit::remote

#endif // GRIDJIT_LIB_CACHE_REMOTEENTRY_H
