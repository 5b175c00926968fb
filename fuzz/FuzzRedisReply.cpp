//===- FuzzRedisReply.cpp - libFuzzer target: the remote tier's replies ---===//
//
// Part of gridjit (docs/Fuzzing.md). What a Redis server (or anything
// listening where one should be) sends back for a remote cache entry goes
// through, in RemoteCache::lookup:
//   1. hiredis's protocol reader (redisReader, the one redisCommandArgv
//      uses on the socket) turning bytes into a redisReply;
//   2. gridjit's interpretation of that reply (redis::interpretGetReply,
//      lib/Cache/Redis/RedisReply.h);
//   3. the value's checks: HMAC trailer and cache entry
//      (remote::validateRemoteValue, lib/Cache/RemoteEntry.h).
// The first byte chooses the mode:
//   0: bytes -> hiredis reader -> every reply it yields through 2 and 3;
//   1: the rest is the value itself (a bulk string) -> 3;
//   2: as 1, but the value is an entry body wrapped with correct checksums
//      and, when the byte after the mode is odd, a correct HMAC tag, so that
//      the tag check passes and the entry decoder is reached;
//   3: the rest is a remote cache URL (parseRemoteCacheURL).
// Steps 2 and 3 run once without a secret and once with one.
//
//===----------------------------------------------------------------------===//

#include "EntryBuilder.h"
#include "FuzzCommon.h"
#include "Redis/RedisReply.h"
#include "RemoteEntry.h"

#include "gridjit/Cache/RemoteCacheConfig.h"

#include <hiredis/read.h>

#include <cstdint>
#include <string>

using namespace gridjit;

namespace {
const std::string_view Secret = "fuzz-secret";

void checkValue(std::string_view Value) {
  CacheKey K = fuzz::fuzzKey();
  for (std::string_view S : {std::string_view(), Secret}) {
    std::string Problem;
    remote::ValueProblem Why;
    std::optional<Artifact> A = remote::validateRemoteValue(S, K, Value, Problem, Why);
    if (A.has_value() != (Why == remote::ValueProblem::None) || (!A && Problem.empty()))
      fuzz::fail("validateRemoteValue's result and problem disagree", Problem);
  }
}

void checkReply(const redisReply &R) {
  StoredValue G = redis::interpretGetReply(R);
  if (G.Kind == StoredValue::Found) {
    if (G.Bytes.size() != R.len)
      fuzz::fail("the value's size differs from the reply's");
    checkValue(G.Bytes);
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  fuzz::ByteReader In(Data, Size);
  switch (In.u8() % 4) {
  case 0: {
    redisReader *Rd = redisReaderCreate();
    if (!Rd)
      return 0;
    std::string Bytes = In.rest();
    if (redisReaderFeed(Rd, Bytes.data(), Bytes.size()) == REDIS_OK) {
      for (int I = 0; I < 64; ++I) {
        void *Reply = nullptr;
        if (redisReaderGetReply(Rd, &Reply) != REDIS_OK || !Reply)
          break;
        checkReply(*static_cast<redisReply *>(Reply));
        freeReplyObject(Reply);
      }
    }
    redisReaderFree(Rd);
    break;
  }
  case 1:
    checkValue(In.rest());
    break;
  case 2: {
    bool Tag = In.flag();
    CacheKey K = fuzz::fuzzKey();
    std::string Value = fuzz::wrapEntryBody(K, In.rest());
    if (Tag) {
      std::array<uint8_t, 32> T = remote::valueTag(Secret, K, Value);
      Value.append(remote::TagMagic);
      Value.append(reinterpret_cast<const char *>(T.data()), T.size());
    }
    checkValue(Value);
    break;
  }
  case 3: {
    auto URL = parseRemoteCacheURL(In.rest());
    if (!URL)
      llvm::consumeError(URL.takeError());
    break;
  }
  }
  return 0;
}
