//===- RedisReply.h - Redis replies, read within bounds ---------*- C++ -*-===//
//
// Part of gridjit. Internal to lib/Cache/Redis (and the fuzz target
// fuzz/FuzzRedisReply.cpp). The Redis protocol's replies (RESP2, the only
// version the client speaks: it never sends HELLO 3), parsed from the bytes
// read so far by parseReply, and what gridjit makes of the reply to its
// bounded read (interpretGetReply).
//
// The parser is gridjit's own because hiredis 0.14's reader has no bounds:
// it buffers a bulk string whole before looking at it, however long the
// server says it is, and allocates an array of whatever count the server
// announces. Here every size a header announces is checked against
// ReplyLimits before a byte of what it announces is buffered or anything
// is allocated for it, and a line (status, error, integer, header) longer
// than the bound is refused without waiting for its end.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H
#define GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H

#include "gridjit/Cache/RemoteStore.h"

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit::redis {

/// The value of KEYS[1], or its length when that exceeds ARGV[1].
constexpr const char *BoundedGetScript =
    "local n = redis.call('STRLEN', KEYS[1]) if n > tonumber(ARGV[1]) then return n end "
    "return redis.call('GET', KEYS[1])";

/// One reply.
struct Reply {
  enum KindT : uint8_t {
    String,  ///< a bulk string ($): Str
    Status,  ///< a status line (+): Str
    Error,   ///< an error line (-): Str
    Integer, ///< an integer (:): Int
    Nil,     ///< a null bulk string or array ($-1, *-1)
    Array,   ///< an array (*): Elements
  } Type = Nil;
  std::string Str;
  long long Int = 0;
  std::vector<Reply> Elements;
};

/// What one reply may hold. Each is checked when the header that announces
/// it is read.
struct ReplyLimits {
  /// The bytes of the whole reply, as its headers announce them (a bulk
  /// string's length counts in full when its header is read). The client
  /// sets it to the largest value it may ask for plus room for the
  /// protocol (RedisClient.h).
  uint64_t MaxReplyBytes = uint64_t(64) << 20;
  /// The elements of one array (no reply to gridjit's commands has more
  /// than a few).
  uint64_t MaxElements = 64;
  /// A status, error or integer line, or a header, with its CRLF.
  size_t MaxLineBytes = 64 << 10;
  /// Arrays within arrays.
  unsigned MaxDepth = 4;
};

enum class ParseStatus {
  Complete,   ///< a whole reply
  Incomplete, ///< a reply's beginning within the limits: read more
  Bad,        ///< not a reply, or one over a limit
};

/// Parses the reply at the start of \p In. Complete: \p Out is the reply
/// and \p Used the bytes it took. Incomplete: \p Used is the fewest bytes
/// the reply is known to need so far (at most MaxReplyBytes, or
/// MaxLineBytes past the start of an unfinished line), so the caller never
/// buffers more than the limits allow. Bad: \p Why says what is wrong
/// ("a bulk string of 10000000000 bytes, over the limit of ...").
ParseStatus parseReply(std::string_view In, const ReplyLimits &L, Reply &Out, size_t &Used,
                       std::string &Why);

/// Interprets \p R, the reply to BoundedGetScript: a bulk string is the
/// value, an integer the size of a value over the limit, anything else
/// (nil, an array, a status) no value.
StoredValue interpretGetReply(const Reply &R);

} // namespace gridjit::redis

#endif // GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H
