//===- FuzzCacheEntry.cpp - libFuzzer target: the cache entry decoder -----===//
//
// Part of gridjit (docs/Fuzzing.md). decodeCacheEntry
// (lib/Cache/CacheEntry.cpp) reads every disk and remote cache entry, and
// validateTaggedEntry (lib/Cache/TaggedEntry.h) reads what the disk tier
// holds in a shared directory (docs/Cache.md, "Sharing a cache
// directory"): the tag first, then the entry, then its target. The first
// byte chooses how the rest is used:
//   bit 0 clear: as a whole entry, as read from disk (header checks);
//   bit 0 set:   as an entry's body, wrapped in a header with correct
//                checksums (EntryBuilder.h), so that the body's decoder is
//                reached;
//   bit 1 set:   then tagged for the disk tier with the fuzzer's secret.
// A decoded entry must encode and decode again to the same artifact. The
// tagged reader must agree with the decoder: with the secret, a correctly
// tagged entry is accepted exactly when it decodes (and is of the target
// asked for), an untagged one is refused as unauthenticated before it is
// decoded; the disk tier's tag never passes for the remote tier's.
//
//===----------------------------------------------------------------------===//

#include "EntryBuilder.h"
#include "FuzzCommon.h"
#include "TaggedEntry.h"

#include "gridjit/Cache/CacheEntry.h"

#include <cstdint>
#include <string>

using namespace gridjit;

namespace {

const std::string_view Secret = "fuzz-disk-secret";

/// \p Entry through the disk tier's tagged reader, tagged (\p Tag) or not;
/// \p Decoded is what decodeCacheEntry made of it (null: it failed).
void checkTagged(const CacheKey &K, const std::string &Entry, bool Tag, const Artifact *Decoded) {
  std::string Value = Entry;
  if (Tag) {
    std::array<uint8_t, 32> T = entryTag(Secret, TagContext::Disk, K, Entry);
    Value.append(TagMagic);
    Value.append(reinterpret_cast<const char *>(T.data()), T.size());
  }
  const ArtifactMatch Want{TargetKind::NVPTX, "sm_80"};
  for (const ArtifactMatch *W : {(const ArtifactMatch *)nullptr, &Want}) {
    std::string Problem;
    EntryProblem Why;
    std::optional<Artifact> A =
        validateTaggedEntry(Secret, TagContext::Disk, K, Value, W, Problem, Why);
    if (A.has_value() != (Why == EntryProblem::None) || (!A && Problem.empty()))
      fuzz::fail("validateTaggedEntry's result and problem disagree", Problem);
    // Without the tag (which only the secret makes), nothing passes, and
    // nothing is decoded: the refusal is the tag's.
    if (!Tag && (A || Why != EntryProblem::Auth))
      fuzz::fail("a value without the secret's tag was not refused as unauthenticated", Problem);
    // With it, the reader accepts exactly what the decoder does, of the
    // target asked for.
    bool Expected = Decoded && (!W || W->matches(*Decoded));
    if (Tag && A.has_value() != Expected)
      fuzz::fail("a correctly tagged entry: the reader and the decoder disagree", Problem);
  }
  if (Tag) {
    std::string Problem;
    EntryProblem Why;
    if (validateTaggedEntry(Secret, TagContext::Remote, K, Value, nullptr, Problem, Why))
      fuzz::fail("the disk tier's tag authenticated a remote value");
  }
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  CacheKey K = fuzz::fuzzKey();
  std::string_view Rest(reinterpret_cast<const char *>(Data + 1), Size - 1);
  std::string Entry = (Data[0] & 1) ? fuzz::wrapEntryBody(K, Rest) : std::string(Rest);
  auto A = decodeCacheEntry(Entry, K);
  checkTagged(K, Entry, Data[0] & 2, A ? &*A : nullptr);
  if (!A) {
    llvm::consumeError(A.takeError());
    return 0;
  }
  std::string Again = encodeCacheEntry(K, *A);
  auto B = decodeCacheEntry(Again, K);
  if (!B)
    fuzz::fail("a decoded entry does not decode after encoding it again",
               llvm::toString(B.takeError()));
  if (encodeCacheEntry(K, *B) != Again)
    fuzz::fail("decode(encode(A)) differs from A");
  return 0;
}
