//===- FuzzCacheEntry.cpp - libFuzzer target: the cache entry decoder -----===//
//
// Part of gridjit (docs/Fuzzing.md). decodeCacheEntry
// (lib/Cache/CacheEntry.cpp) reads every disk and remote cache entry. The
// first byte chooses how the rest is used:
//   even: as a whole entry, as read from disk (header checks);
//   odd:  as an entry's body, wrapped in a header with correct checksums
//         (EntryBuilder.h), so that the body's decoder is reached.
// A decoded entry must encode and decode again to the same artifact.
//
//===----------------------------------------------------------------------===//

#include "EntryBuilder.h"
#include "FuzzCommon.h"

#include "gridjit/Cache/CacheEntry.h"

#include <cstdint>
#include <string>

using namespace gridjit;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *Data, size_t Size) {
  if (Size == 0)
    return 0;
  CacheKey K = fuzz::fuzzKey();
  std::string_view Rest(reinterpret_cast<const char *>(Data + 1), Size - 1);
  std::string Entry = (Data[0] & 1) ? fuzz::wrapEntryBody(K, Rest) : std::string(Rest);
  auto A = decodeCacheEntry(Entry, K);
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
