//===- RedisReply.h - What a Redis reply to a bounded read means -*- C++ -*-===//
//
// Part of gridjit. Internal to lib/Cache/Redis (and the fuzz target
// fuzz/FuzzRedisReply.cpp). hiredis parses the protocol into a redisReply;
// what gridjit makes of the reply to its bounded read is here.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H
#define GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H

#include "gridjit/Cache/RemoteStore.h"

#include <hiredis/hiredis.h>

namespace gridjit::redis {

/// The value of KEYS[1], or its length when that exceeds ARGV[1].
constexpr const char *BoundedGetScript =
    "local n = redis.call('STRLEN', KEYS[1]) if n > tonumber(ARGV[1]) then return n end "
    "return redis.call('GET', KEYS[1])";

/// Interprets \p R, the reply to BoundedGetScript: a bulk string is the
/// value, an integer the size of a value over the limit, anything else
/// (nil, an array, a status) no value.
StoredValue interpretGetReply(const redisReply &R);

} // namespace gridjit::redis

#endif // GRIDJIT_LIB_CACHE_REDIS_REDISREPLY_H
