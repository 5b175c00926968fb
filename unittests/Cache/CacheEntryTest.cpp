//===- CacheEntryTest.cpp - Encoding and decoding cache entries -----------===//
//
// Part of gridjit. An entry decodes to exactly the artifact that was
// encoded; every truncation and every single flipped byte of an entry is
// rejected with an error (never a crash, never a different artifact).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Cache/CacheEntry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <cstring>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

Artifact sampleArtifact() {
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Arch = "skylake";
  A.Payload = std::string("\x7f"
                          "ELF\0\1\2 payload bytes",
                          22);
  KernelInfo K;
  K.Name = "two_phase";
  K.Params = {{"n", Type::getScalar(ScalarKind::I32), 4, 4},
              {"x", Type::getPointer(ScalarKind::F32), 8, 8},
              {"s", Type::getPointer(ScalarKind::F64, AddrSpace::Shared), 8, 8}};
  K.Cooperative = true;
  K.StaticSharedBytes = 1024;
  K.UsesDynamicShared = false;
  K.StackBytes = (uint64_t(1) << 40) + 3; // all eight bytes count
  KernelInfo K2;
  K2.Name = "dyn";
  K2.UsesDynamicShared = true;
  K2.Prints = true;
  A.Kernels = {K, K2};
  return A;
}

CacheKey sampleKey(uint8_t Seed = 1) {
  CacheKey K;
  for (unsigned I = 0; I < 32; ++I)
    K.Bytes[I] = static_cast<uint8_t>(Seed + I);
  return K;
}

void expectSame(const Artifact &A, const Artifact &B) {
  EXPECT_EQ(A.Kind, B.Kind);
  EXPECT_EQ(A.Arch, B.Arch);
  EXPECT_EQ(A.Payload, B.Payload);
  ASSERT_EQ(A.Kernels.size(), B.Kernels.size());
  for (size_t I = 0; I < A.Kernels.size(); ++I) {
    const KernelInfo &X = A.Kernels[I], &Y = B.Kernels[I];
    EXPECT_EQ(X.Name, Y.Name);
    EXPECT_EQ(X.Cooperative, Y.Cooperative);
    EXPECT_EQ(X.StaticSharedBytes, Y.StaticSharedBytes);
    EXPECT_EQ(X.UsesDynamicShared, Y.UsesDynamicShared);
    EXPECT_EQ(X.StackBytes, Y.StackBytes);
    EXPECT_EQ(X.Prints, Y.Prints);
    ASSERT_EQ(X.Params.size(), Y.Params.size());
    for (size_t J = 0; J < X.Params.size(); ++J) {
      EXPECT_EQ(X.Params[J].Name, Y.Params[J].Name);
      EXPECT_EQ(X.Params[J].Ty, Y.Params[J].Ty);
      EXPECT_EQ(X.Params[J].Size, Y.Params[J].Size);
      EXPECT_EQ(X.Params[J].Align, Y.Params[J].Align);
    }
  }
}

TEST(CacheEntryTest, RoundTrip) {
  Artifact A = sampleArtifact();
  std::string E = encodeCacheEntry(sampleKey(), A);
  ASSERT_EQ(E.substr(0, 8), "GRIDJITC");
  auto B = decodeCacheEntry(E, sampleKey());
  ASSERT_TRUE(succeeded(B));
  expectSame(A, *B);
}

TEST(CacheEntryTest, EmptyArtifactRoundTrips) {
  Artifact A;
  auto B = decodeCacheEntry(encodeCacheEntry(sampleKey(), A), sampleKey());
  ASSERT_TRUE(succeeded(B));
  expectSame(A, *B);
}

TEST(CacheEntryTest, EveryTruncationIsRejected) {
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact());
  for (size_t Len = 0; Len < E.size(); ++Len) {
    auto B = decodeCacheEntry(std::string_view(E).substr(0, Len), sampleKey());
    EXPECT_TRUE(failed(B)) << "accepted a truncation to " << Len << " bytes";
    llvm::consumeError(B.takeError());
  }
}

TEST(CacheEntryTest, EveryFlippedByteIsRejected) {
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact());
  for (size_t I = 0; I < E.size(); ++I)
    for (uint8_t Bit : {0x01, 0x80}) {
      std::string Bad = E;
      Bad[I] = static_cast<char>(Bad[I] ^ Bit);
      auto B = decodeCacheEntry(Bad, sampleKey());
      EXPECT_TRUE(failed(B)) << "accepted a flip of byte " << I;
      llvm::consumeError(B.takeError());
    }
}

TEST(CacheEntryTest, AppendedBytesAreRejected) {
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact()) + "x";
  auto B = decodeCacheEntry(E, sampleKey());
  ASSERT_TRUE(failed(B));
  EXPECT_THAT(llvm::toString(B.takeError()), HasSubstr("truncated"));
}

TEST(CacheEntryTest, ForeignVersionAndKeyAreNamed) {
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact());
  auto Msg = [](llvm::Expected<Artifact> R) {
    return R ? std::string("accepted") : llvm::toString(R.takeError());
  };
  EXPECT_THAT(Msg(decodeCacheEntry("#!/bin/sh\necho hello, this is not a cache entry at all, no"
                                   "t even close to one, but long enough for a header......",
                                   sampleKey())),
              HasSubstr("bad magic"));
  EXPECT_THAT(Msg(decodeCacheEntry(E, sampleKey(2))), HasSubstr("another key"));
  std::string Old = E;
  llvm::support::endian::write32le(Old.data() + 8, CacheFormatVersion + 1);
  EXPECT_THAT(Msg(decodeCacheEntry(Old, sampleKey())), HasSubstr("format version"));
  EXPECT_THAT(Msg(decodeCacheEntry("", sampleKey())), HasSubstr("truncated"));
}

/// Recomputes the body size and both checksums of \p E, as a foreign
/// writer that knows the format would.
void reseal(std::string &E) {
  namespace endian = llvm::support::endian;
  std::string_view Body = std::string_view(E).substr(CacheEntryHeaderSize);
  endian::write64le(E.data() + 48, Body.size());
  auto Sum = llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(llvm::StringRef(Body)));
  std::memcpy(E.data() + 56, Sum.data(), 32);
  auto HSum = llvm::BLAKE3::hash<8>(llvm::arrayRefFromStringRef(llvm::StringRef(E).substr(0, 88)));
  std::memcpy(E.data() + 88, HSum.data(), 8);
}

TEST(CacheEntryTest, UnknownTargetNameIsRejected) {
  // The body starts with the target's name: "host" becomes "hosu".
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact());
  ASSERT_EQ(E.substr(CacheEntryHeaderSize + 4, 4), "host");
  E[CacheEntryHeaderSize + 7] = 'u';
  reseal(E);
  auto B = decodeCacheEntry(E, sampleKey());
  ASSERT_FALSE(static_cast<bool>(B));
  EXPECT_NE(llvm::toString(B.takeError()).find("unknown target 'hosu'"), std::string::npos);
}

TEST(CacheEntryTest, ResealedCorruptionIsRejected) {
  // With valid checksums, every truncation of the body and every flipped
  // byte must still give an error or an artifact; never a crash, a hang or
  // a huge allocation.
  std::string E = encodeCacheEntry(sampleKey(), sampleArtifact());
  ASSERT_TRUE(succeeded(decodeCacheEntry(E, sampleKey())));
  for (size_t Len = CacheEntryHeaderSize; Len < E.size(); ++Len) {
    std::string Bad = E.substr(0, Len);
    reseal(Bad);
    auto B = decodeCacheEntry(Bad, sampleKey());
    EXPECT_TRUE(failed(B)) << "accepted a resealed truncation to " << Len;
    llvm::consumeError(B.takeError());
  }
  for (size_t I = CacheEntryHeaderSize; I < E.size(); ++I) {
    std::string Bad = E;
    Bad[I] = static_cast<char>(Bad[I] ^ 0xff);
    reseal(Bad);
    auto B = decodeCacheEntry(Bad, sampleKey());
    llvm::consumeError(B.takeError()); // either outcome is fine; no crash
  }
  // A kernel count of 2^32-1 in an empty artifact's body.
  // (The body: the target name "host" (4 + 4 bytes), an empty arch (4), an
  // empty payload (8), then the kernel count.)
  std::string Huge = encodeCacheEntry(sampleKey(), Artifact());
  llvm::support::endian::write32le(Huge.data() + CacheEntryHeaderSize + 8 + 4 + 8, 0xffffffffu);
  reseal(Huge);
  auto B = decodeCacheEntry(Huge, sampleKey());
  ASSERT_TRUE(failed(B));
  EXPECT_THAT(llvm::toString(B.takeError()), HasSubstr("kernel count"));
  // Trailing bytes after a well-formed body.
  std::string Trailing = encodeCacheEntry(sampleKey(), sampleArtifact()) + "zz";
  reseal(Trailing);
  auto T = decodeCacheEntry(Trailing, sampleKey());
  ASSERT_TRUE(failed(T));
  EXPECT_THAT(llvm::toString(T.takeError()), HasSubstr("trailing"));
}

} // namespace
