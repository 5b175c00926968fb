//===- TaggedEntry.cpp - Cache entries authenticated by a secret ----------===//
//
// Part of gridjit. See TaggedEntry.h.
//
//===----------------------------------------------------------------------===//

#include "TaggedEntry.h"
#include "gridjit/Support/HMAC.h"

using namespace gridjit;

namespace {

std::string_view contextName(TagContext C) {
  // The remote tier's string predates the disk tier's tags: values already
  // on servers keep their tags.
  return C == TagContext::Remote ? "gridjit-remote-v1" : "gridjit-disk-v1";
}

} // namespace

std::array<uint8_t, 32> gridjit::entryTag(std::string_view Secret, TagContext C, const CacheKey &K,
                                          std::string_view Entry) {
  std::string Msg(contextName(C));
  Msg.append(reinterpret_cast<const char *>(K.Bytes.data()), K.Bytes.size());
  Msg.append(Entry);
  return hmacSHA256(Secret, Msg);
}

std::string gridjit::encodeTaggedEntry(std::string_view Secret, TagContext C, const CacheKey &K,
                                       const Artifact &A) {
  std::string V = encodeCacheEntry(K, A);
  if (!Secret.empty()) {
    std::array<uint8_t, 32> Tag = entryTag(Secret, C, K, V);
    V.append(TagMagic);
    V.append(reinterpret_cast<const char *>(Tag.data()), Tag.size());
  }
  return V;
}

std::optional<Artifact> gridjit::validateTaggedEntry(std::string_view Secret, TagContext C,
                                                     const CacheKey &K, std::string_view Value,
                                                     const ArtifactMatch *Want,
                                                     std::string &Problem, EntryProblem &Why) {
  Why = EntryProblem::None;
  std::string_view Entry = Value;
  bool Tagged = Value.size() >= TagTrailerSize + CacheEntryHeaderSize &&
                Value.substr(Value.size() - TagTrailerSize, 8) == TagMagic;
  if (Tagged)
    Entry = Value.substr(0, Value.size() - TagTrailerSize);
  if (!Secret.empty()) {
    if (!Tagged) {
      Why = EntryProblem::Auth;
      Problem = "the value has no HMAC tag";
      return std::nullopt;
    }
    if (!tagsEqual(Value.substr(Value.size() - 32), entryTag(Secret, C, K, Entry))) {
      Why = EntryProblem::Auth;
      Problem = "the value's HMAC tag does not match";
      return std::nullopt;
    }
  }
  llvm::Expected<Artifact> A = decodeCacheEntry(Entry, K);
  if (!A) {
    Why = EntryProblem::BadEntry;
    Problem = llvm::toString(A.takeError());
    return std::nullopt;
  }
  if (Want && !Want->matches(*A)) {
    Why = EntryProblem::BadEntry;
    Problem = Want->mismatch("the entry", *A);
    return std::nullopt;
  }
  return std::move(*A);
}
