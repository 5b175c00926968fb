//===- FuzzRedisReply.cpp - libFuzzer target: the remote tier's replies ---===//
//
// Part of gridjit (docs/Fuzzing.md). What a Redis server (or anything
// listening where one should be) sends back for a remote cache entry goes
// through, in RemoteCache::lookup:
//   1. gridjit's bounded reply parser (redis::parseReply,
//      lib/Cache/Redis/RedisReply.h), the one the client runs on the
//      socket as bytes arrive;
//   2. gridjit's interpretation of that reply (redis::interpretGetReply);
//   3. the value's checks: HMAC trailer, cache entry and target
//      (validateTaggedEntry, lib/Cache/TaggedEntry.h).
// The first byte chooses the mode:
//   0: bytes -> the parser, reply after reply, each through 2 and 3, under
//      small limits so that the bounds are reached; the parser's promises
//      are checked: a complete reply is within the limits and every
//      shorter beginning of it is incomplete (never complete, never
//      refused), an incomplete one asks for more bytes but never more than
//      the limits allow, a refusal says why;
//   1: the rest is the value itself (a bulk string) -> 3;
//   2: as 1, but the value is an entry body wrapped with correct checksums
//      and, when the byte after the mode is odd, a correct HMAC tag, so that
//      the tag check passes and the entry decoder is reached;
//   3: the rest is a remote cache URL (parseRemoteCacheURL).
// Step 3 runs without a secret and with one, with and without a target to
// match.
//
//===----------------------------------------------------------------------===//

#include "EntryBuilder.h"
#include "FuzzCommon.h"
#include "Redis/RedisReply.h"
#include "TaggedEntry.h"

#include "gridjit/Cache/RemoteCacheConfig.h"

#include <cstdint>
#include <string>

using namespace gridjit;

namespace {
const std::string_view Secret = "fuzz-secret";

void checkValue(std::string_view Value) {
  CacheKey K = fuzz::fuzzKey();
  const ArtifactMatch Want{TargetKind::Host, "x86-64"};
  for (std::string_view S : {std::string_view(), Secret})
    for (const ArtifactMatch *W : {(const ArtifactMatch *)nullptr, &Want}) {
      std::string Problem;
      EntryProblem Why;
      std::optional<Artifact> A =
          validateTaggedEntry(S, TagContext::Remote, K, Value, W, Problem, Why);
      if (A.has_value() != (Why == EntryProblem::None) || (!A && Problem.empty()))
        fuzz::fail("validateTaggedEntry's result and problem disagree", Problem);
      if (A && W && !W->matches(*A))
        fuzz::fail("validateTaggedEntry accepted another target's entry");
    }
}

/// The bytes the strings of \p R hold, and whether every array is within
/// \p L.
uint64_t checkBounds(const redis::Reply &R, const redis::ReplyLimits &L) {
  if (R.Elements.size() > L.MaxElements)
    fuzz::fail("a complete reply has an array over the limit");
  uint64_t N = R.Str.size();
  for (const redis::Reply &E : R.Elements)
    N += checkBounds(E, L);
  return N;
}

void checkReply(const redis::Reply &R) {
  StoredValue G = redis::interpretGetReply(R);
  if (G.Kind == StoredValue::Found) {
    if (G.Bytes != R.Str)
      fuzz::fail("the value differs from the reply's bulk string");
    checkValue(G.Bytes);
  }
}

/// Parses the replies in \p In one after another, as the client would.
void parseAll(std::string_view In) {
  redis::ReplyLimits L;
  L.MaxReplyBytes = 2048;
  L.MaxElements = 8;
  L.MaxLineBytes = 64;
  L.MaxDepth = 3;
  for (int I = 0; I < 64 && !In.empty(); ++I) {
    redis::Reply R;
    size_t Used = 0;
    std::string Why;
    switch (redis::parseReply(In, L, R, Used, Why)) {
    case redis::ParseStatus::Bad:
      if (Why.empty())
        fuzz::fail("a refused reply without a reason");
      return;
    case redis::ParseStatus::Incomplete:
      if (Used <= In.size() || Used > L.MaxReplyBytes + 1)
        fuzz::fail("an incomplete reply asks for " + std::to_string(Used) + " bytes, having " +
                   std::to_string(In.size()));
      return;
    case redis::ParseStatus::Complete: {
      if (Used == 0 || Used > In.size() || Used > L.MaxReplyBytes)
        fuzz::fail("a complete reply of " + std::to_string(Used) + " bytes out of " +
                   std::to_string(In.size()));
      if (checkBounds(R, L) > L.MaxReplyBytes)
        fuzz::fail("a complete reply holds more than the limit");
      redis::Reply Short;
      size_t ShortUsed = 0;
      std::string ShortWhy;
      if (redis::parseReply(In.substr(0, Used - 1), L, Short, ShortUsed, ShortWhy) !=
          redis::ParseStatus::Incomplete)
        fuzz::fail("a beginning of a complete reply is not incomplete", ShortWhy);
      checkReply(R);
      In.remove_prefix(Used);
      break;
    }
    }
  }
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  fuzz::ByteReader In(Data, Size);
  switch (In.u8() % 4) {
  case 0:
    parseAll(In.rest());
    break;
  case 1:
    checkValue(In.rest());
    break;
  case 2: {
    bool Tag = In.flag();
    CacheKey K = fuzz::fuzzKey();
    std::string Value = fuzz::wrapEntryBody(K, In.rest());
    if (Tag) {
      std::array<uint8_t, 32> T = entryTag(Secret, TagContext::Remote, K, Value);
      Value.append(TagMagic);
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
