//===- RemoteEntry.cpp - What the remote tier stores under a key ----------===//
//
// Part of gridjit. See RemoteEntry.h.
//
//===----------------------------------------------------------------------===//

#include "RemoteEntry.h"
#include "gridjit/Cache/CacheEntry.h"
#include "gridjit/Support/HMAC.h"

using namespace gridjit;

std::array<uint8_t, 32> remote::valueTag(std::string_view Secret, const CacheKey &K,
                                         std::string_view Entry) {
  std::string Msg = "gridjit-remote-v1";
  Msg.append(reinterpret_cast<const char *>(K.Bytes.data()), K.Bytes.size());
  Msg.append(Entry);
  return hmacSHA256(Secret, Msg);
}

std::string remote::encodeRemoteValue(std::string_view Secret, const CacheKey &K,
                                      const Artifact &A) {
  std::string V = encodeCacheEntry(K, A);
  if (!Secret.empty()) {
    std::array<uint8_t, 32> Tag = valueTag(Secret, K, V);
    V.append(TagMagic);
    V.append(reinterpret_cast<const char *>(Tag.data()), Tag.size());
  }
  return V;
}

std::optional<Artifact> remote::validateRemoteValue(std::string_view Secret, const CacheKey &K,
                                                    std::string_view Value, std::string &Problem,
                                                    ValueProblem &Why) {
  Why = ValueProblem::None;
  std::string_view Entry = Value;
  bool Tagged = Value.size() >= TagTrailerSize + CacheEntryHeaderSize &&
                Value.substr(Value.size() - TagTrailerSize, 8) == TagMagic;
  if (Tagged)
    Entry = Value.substr(0, Value.size() - TagTrailerSize);
  if (!Secret.empty()) {
    if (!Tagged) {
      Why = ValueProblem::Auth;
      Problem = "the value has no HMAC tag";
      return std::nullopt;
    }
    if (!tagsEqual(Value.substr(Value.size() - 32), valueTag(Secret, K, Entry))) {
      Why = ValueProblem::Auth;
      Problem = "the value's HMAC tag does not match";
      return std::nullopt;
    }
  }
  llvm::Expected<Artifact> A = decodeCacheEntry(Entry, K);
  if (!A) {
    Why = ValueProblem::BadEntry;
    Problem = llvm::toString(A.takeError());
    return std::nullopt;
  }
  return std::move(*A);
}
