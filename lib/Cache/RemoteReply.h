//===- RemoteReply.h - How the remote tier reads Redis's answers -*- C++ -*-===//
//
// Part of gridjit. Internal to lib/Cache (and the fuzz target
// fuzz/FuzzRedisReply.cpp): what RemoteCache makes of the bytes a Redis
// server sends back for an entry. hiredis parses the protocol into a
// redisReply; everything after that is gridjit's: the reply's type and
// value (interpretGetReply), then the value itself — the optional HMAC
// trailer and the cache entry (validateRemoteValue).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REMOTEREPLY_H
#define GRIDJIT_LIB_CACHE_REMOTEREPLY_H

#include "gridjit/Cache/CacheKey.h"
#include "gridjit/Target/Target.h"

#include <hiredis/hiredis.h>

#include <array>
#include <optional>
#include <string>
#include <string_view>

namespace gridjit::remote {

/// "GJHMAC01": the start of the 40-byte trailer of a tagged value.
constexpr std::string_view TagMagic = "GJHMAC01";
constexpr size_t TagTrailerSize = 8 + 32;

/// What the reply to the bounded GET script means.
struct GetReply {
  enum KindT { Found, Oversize, Missing } Kind = Missing;
  std::string Value;        ///< Kind == Found
  long long ValueBytes = 0; ///< Kind == Oversize: the size the server reported
};

/// Interprets \p R, the reply to the bounded GET script: a bulk string is
/// the value, an integer the size of a value over the limit, anything else
/// (nil, an array, a status) no value.
GetReply interpretGetReply(const redisReply &R);

/// The HMAC-SHA256 tag of \p Entry stored under \p K with \p Secret.
std::array<uint8_t, 32> valueTag(std::string_view Secret, const CacheKey &K,
                                 std::string_view Entry);

/// Why validateRemoteValue rejected a value.
enum class ValueProblem { None, Auth, BadEntry };

/// Checks \p Value as \p K's remote value: with a \p Secret, a trailer with
/// the right tag must end it; the rest must decode as \p K's cache entry.
/// On failure sets \p Problem (what is wrong) and \p Why.
std::optional<Artifact> validateRemoteValue(std::string_view Secret, const CacheKey &K,
                                            std::string_view Value, std::string &Problem,
                                            ValueProblem &Why);

} // namespace gridjit::remote

#endif // GRIDJIT_LIB_CACHE_REMOTEREPLY_H
