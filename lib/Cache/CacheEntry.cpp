//===- CacheEntry.cpp - The on-disk form of a cached artifact -------------===//
//
// Part of gridjit. The body, after the header of CacheEntry.h (integers
// little-endian; str = u32 length + bytes; blob = u64 length + bytes):
//
//   str TargetName, str Arch, blob Payload, u32 kernel count, then per kernel:
//     str Name, u32 parameter count, then per parameter:
//       str Name, u8 type kind, u8 scalar kind, u8 address space,
//       u64 array count, u32 Size, u32 Align
//     u8 Cooperative, u64 StaticSharedBytes, u8 UsesDynamicShared,
//     u64 StackBytes, u8 Prints
//   u32 constant count, then per constant (format version 3):
//     str Name, str Symbol, u8 scalar kind, u8 rank, u64 per dimension,
//     u64 Bytes
//
//===----------------------------------------------------------------------===//

#include "gridjit/Cache/CacheEntry.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/Endian.h"

#include <cstring>

using namespace gridjit;
namespace endian = llvm::support::endian;

namespace {

class Writer {
public:
  std::string Out;
  void u8(uint8_t V) { Out.push_back(static_cast<char>(V)); }
  void u32(uint32_t V) {
    char B[4];
    endian::write32le(B, V);
    Out.append(B, 4);
  }
  void u64(uint64_t V) {
    char B[8];
    endian::write64le(B, V);
    Out.append(B, 8);
  }
  void str(std::string_view S) {
    u32(static_cast<uint32_t>(S.size()));
    Out.append(S);
  }
  void blob(std::string_view S) {
    u64(S.size());
    Out.append(S);
  }
};

/// Reads the body; every read checks the bytes left, and Failed records the
/// first problem so that the caller checks once.
class Reader {
public:
  explicit Reader(std::string_view In) : In(In) {}
  std::string_view In;
  const char *Failed = nullptr;

  bool need(uint64_t N, const char *What) {
    if (Failed)
      return false;
    if (N > In.size()) {
      Failed = What;
      return false;
    }
    return true;
  }
  uint8_t u8(const char *What) {
    if (!need(1, What))
      return 0;
    uint8_t V = static_cast<uint8_t>(In[0]);
    In.remove_prefix(1);
    return V;
  }
  uint32_t u32(const char *What) {
    if (!need(4, What))
      return 0;
    uint32_t V = endian::read32le(In.data());
    In.remove_prefix(4);
    return V;
  }
  uint64_t u64(const char *What) {
    if (!need(8, What))
      return 0;
    uint64_t V = endian::read64le(In.data());
    In.remove_prefix(8);
    return V;
  }
  std::string bytes(uint64_t N, const char *What) {
    if (!need(N, What))
      return {};
    std::string S(In.substr(0, N));
    In.remove_prefix(N);
    return S;
  }
  std::string str(const char *What) { return bytes(u32(What), What); }
  std::string blob(const char *What) { return bytes(u64(What), What); }
};

llvm::Error entryError(const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), "invalid cache entry: " + Why);
}

void encodeType(Writer &W, const Type &T) {
  W.u8(T.getKind());
  W.u8(static_cast<uint8_t>(T.getScalarKind()));
  W.u8(static_cast<uint8_t>(T.getAddrSpace()));
  W.u64(T.getArrayCount());
}

/// The type that encodeType wrote, or std::nullopt when the bytes cannot
/// be one.
std::optional<Type> decodeType(Reader &R) {
  uint8_t Kind = R.u8("type");
  uint8_t Scalar = R.u8("type");
  uint8_t AS = R.u8("type");
  uint64_t Count = R.u64("type");
  if (R.Failed || Scalar > static_cast<uint8_t>(ScalarKind::BF16) ||
      AS > static_cast<uint8_t>(AddrSpace::Local))
    return std::nullopt;
  auto S = static_cast<ScalarKind>(Scalar);
  switch (Kind) {
  case Type::Void:
    return Type::getVoid();
  case Type::Scalar:
    return Type::getScalar(S);
  case Type::Pointer:
    return Type::getPointer(S, static_cast<AddrSpace>(AS));
  case Type::Array:
    return Type::getArray(S, Count);
  default:
    return std::nullopt;
  }
}

/// The constants encodeCacheEntry wrote after the kernels: each an array
/// of a known scalar, 1 to MaxArrayRank sized dimensions, whose bytes match.
llvm::Error decodeConstants(Reader &R, Artifact &A) {
  uint32_t N = R.u32("constant count");
  // Each constant takes at least 26 bytes.
  if (!R.Failed && N > R.In.size() / 26)
    return entryError("constant count " + llvm::Twine(N) + " exceeds the data");
  for (uint32_t I = 0; I < N && !R.Failed; ++I) {
    ConstantInfo C;
    C.Name = R.str("constant name");
    C.Symbol = R.str("constant symbol");
    uint8_t Scalar = R.u8("constant type");
    uint8_t Rank = R.u8("constant type");
    std::array<uint64_t, MaxArrayRank> Dims{};
    bool BadDims = Rank < 1 || Rank > MaxArrayRank;
    for (unsigned J = 0; J < Rank && J < MaxArrayRank && !R.Failed; ++J) {
      Dims[J] = R.u64("constant dimension");
      BadDims |= Dims[J] == 0 || Dims[J] > (uint64_t(1) << 32);
    }
    C.Bytes = R.u64("constant bytes");
    if (R.Failed)
      break;
    if (BadDims || Scalar > static_cast<uint8_t>(ScalarKind::BF16))
      return entryError("bad type of constant '" + llvm::Twine(C.Name) + "'");
    C.Ty = Type::getArray(static_cast<ScalarKind>(Scalar), std::span(Dims.data(), Rank),
                          AddrSpace::Constant);
    if (C.Ty.getSizeInBytes() != C.Bytes)
      return entryError("constant '" + llvm::Twine(C.Name) + "' has " + llvm::Twine(C.Bytes) +
                        " bytes, its type " + C.Ty.str() + " " +
                        llvm::Twine(C.Ty.getSizeInBytes()));
    A.Constants.push_back(std::move(C));
  }
  return llvm::Error::success();
}

std::array<uint8_t, 8> headerChecksum(std::string_view Header88) {
  return llvm::BLAKE3::hash<8>(
      llvm::arrayRefFromStringRef(llvm::StringRef(Header88.data(), Header88.size())));
}

} // namespace

std::string gridjit::encodeCacheEntry(const CacheKey &Key, const Artifact &A) {
  Writer Body;
  Body.str(getTargetName(A.Kind));
  Body.str(A.Arch);
  Body.blob(A.Payload);
  Body.u32(static_cast<uint32_t>(A.Kernels.size()));
  for (const KernelInfo &K : A.Kernels) {
    Body.str(K.Name);
    Body.u32(static_cast<uint32_t>(K.Params.size()));
    for (const KernelParamInfo &P : K.Params) {
      Body.str(P.Name);
      encodeType(Body, P.Ty);
      Body.u32(P.Size);
      Body.u32(P.Align);
    }
    Body.u8(K.Cooperative);
    Body.u64(K.StaticSharedBytes);
    Body.u8(K.UsesDynamicShared);
    Body.u64(K.StackBytes);
    Body.u8(K.Prints);
  }
  Body.u32(static_cast<uint32_t>(A.Constants.size()));
  for (const ConstantInfo &C : A.Constants) {
    Body.str(C.Name);
    Body.str(C.Symbol);
    Body.u8(static_cast<uint8_t>(C.Ty.getScalarKind()));
    Body.u8(static_cast<uint8_t>(C.Ty.getArrayRank()));
    for (unsigned I = 0; I < C.Ty.getArrayRank(); ++I)
      Body.u64(C.Ty.getArrayDim(I));
    Body.u64(C.Bytes);
  }

  Writer W;
  W.Out.reserve(CacheEntryHeaderSize + Body.Out.size());
  W.Out.append(CacheEntryMagic);
  W.u32(CacheFormatVersion);
  W.u32(CacheEntryHeaderSize);
  W.Out.append(reinterpret_cast<const char *>(Key.Bytes.data()), Key.Bytes.size());
  W.u64(Body.Out.size());
  auto Sum = llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(Body.Out));
  W.Out.append(reinterpret_cast<const char *>(Sum.data()), Sum.size());
  auto HSum = headerChecksum(W.Out);
  W.Out.append(reinterpret_cast<const char *>(HSum.data()), HSum.size());
  assert(W.Out.size() == CacheEntryHeaderSize);
  W.Out += Body.Out;
  return std::move(W.Out);
}

llvm::Expected<Artifact> gridjit::decodeCacheEntry(std::string_view Data, const CacheKey &Key) {
  if (Data.size() < CacheEntryHeaderSize)
    return entryError("truncated header (" + llvm::Twine(Data.size()) + " bytes)");
  if (Data.substr(0, CacheEntryMagic.size()) != CacheEntryMagic)
    return entryError("not a gridjit cache entry (bad magic)");
  uint32_t Version = endian::read32le(Data.data() + 8);
  if (Version != CacheFormatVersion)
    return entryError("format version " + llvm::Twine(Version) + ", expected " +
                      llvm::Twine(CacheFormatVersion));
  if (endian::read32le(Data.data() + 12) != CacheEntryHeaderSize)
    return entryError("unexpected header size");
  auto HSum = headerChecksum(Data.substr(0, 88));
  if (std::memcmp(HSum.data(), Data.data() + 88, HSum.size()) != 0)
    return entryError("header checksum mismatch");
  if (std::memcmp(Key.Bytes.data(), Data.data() + 16, 32) != 0)
    return entryError("the entry is for another key");
  uint64_t BodySize = endian::read64le(Data.data() + 48);
  std::string_view Body = Data.substr(CacheEntryHeaderSize);
  if (BodySize != Body.size())
    return entryError("body is " + llvm::Twine(Body.size()) + " bytes, header says " +
                      llvm::Twine(BodySize) + " (truncated?)");
  auto Sum =
      llvm::BLAKE3::hash(llvm::arrayRefFromStringRef(llvm::StringRef(Body.data(), Body.size())));
  if (std::memcmp(Sum.data(), Data.data() + 56, Sum.size()) != 0)
    return entryError("body checksum mismatch");

  Reader R(Body);
  Artifact A;
  std::string TargetName = R.str("target name");
  std::optional<TargetKind> Kind = parseTargetName(TargetName);
  if (!R.Failed && !Kind)
    return entryError("unknown target '" + llvm::Twine(TargetName) + "'");
  A.Kind = Kind.value_or(TargetKind::Host);
  A.Arch = R.str("arch");
  A.Payload = R.blob("payload");
  uint32_t NumKernels = R.u32("kernel count");
  // Each kernel takes at least 27 bytes; a count beyond that is corrupt
  // (checked before reserving memory for it).
  if (!R.Failed && NumKernels > R.In.size() / 27)
    return entryError("kernel count " + llvm::Twine(NumKernels) + " exceeds the data");
  A.Kernels.reserve(NumKernels);
  for (uint32_t I = 0; I < NumKernels && !R.Failed; ++I) {
    KernelInfo K;
    K.Name = R.str("kernel name");
    uint32_t NumParams = R.u32("parameter count");
    if (!R.Failed && NumParams > R.In.size() / 23)
      return entryError("parameter count " + llvm::Twine(NumParams) + " exceeds the data");
    for (uint32_t J = 0; J < NumParams && !R.Failed; ++J) {
      KernelParamInfo P;
      P.Name = R.str("parameter name");
      std::optional<Type> Ty = decodeType(R);
      if (!R.Failed && !Ty)
        return entryError("bad parameter type");
      if (Ty)
        P.Ty = *Ty;
      P.Size = R.u32("parameter size");
      P.Align = R.u32("parameter alignment");
      K.Params.push_back(std::move(P));
    }
    uint8_t Coop = R.u8("cooperative flag");
    K.StaticSharedBytes = R.u64("shared bytes");
    uint8_t Dyn = R.u8("dynamic shared flag");
    K.StackBytes = R.u64("stack bytes");
    uint8_t Prints = R.u8("print flag");
    if (!R.Failed && (Coop > 1 || Dyn > 1 || Prints > 1))
      return entryError("bad flag");
    K.Cooperative = Coop;
    K.UsesDynamicShared = Dyn;
    K.Prints = Prints;
    A.Kernels.push_back(std::move(K));
  }
  if (llvm::Error E = decodeConstants(R, A))
    return std::move(E);
  if (R.Failed)
    return entryError(llvm::Twine("body ends inside ") + R.Failed);
  if (!R.In.empty())
    return entryError("trailing bytes after the body");
  return A;
}

std::string ArtifactMatch::mismatch(std::string_view What, const Artifact &A) const {
  auto Name = [](TargetKind K, const std::string &Arch) {
    return "'" + std::string(getTargetName(K)) + "' (" + Arch + ")";
  };
  return std::string(What) + " is for target " + Name(A.Kind, A.Arch) + ", not " + Name(Kind, Arch);
}
