//===- Type.cpp - KIR value types -----------------------------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Type.h"

#include <algorithm>
#include <array>
#include <cassert>

using namespace gridjit;

namespace {
struct ScalarInfo {
  std::string_view Name;
  unsigned Bits;
  bool Integer, Signed, Float;
};
// Indexed by ScalarKind.
constexpr std::array<ScalarInfo, 13> Scalars = {{
    {"bool", 1, false, false, false},
    {"i8", 8, true, true, false},
    {"i16", 16, true, true, false},
    {"i32", 32, true, true, false},
    {"i64", 64, true, true, false},
    {"u8", 8, true, false, false},
    {"u16", 16, true, false, false},
    {"u32", 32, true, false, false},
    {"u64", 64, true, false, false},
    {"f32", 32, false, true, true},
    {"f64", 64, false, true, true},
    {"f16", 16, false, true, true},
    {"bf16", 16, false, true, true},
}};
const ScalarInfo &info(ScalarKind K) { return Scalars[static_cast<unsigned>(K)]; }
} // namespace

std::string_view gridjit::scalarName(ScalarKind K) { return info(K).Name; }

std::optional<ScalarKind> gridjit::scalarFromName(std::string_view Name) {
  for (unsigned I = 0; I < Scalars.size(); ++I)
    if (Scalars[I].Name == Name)
      return static_cast<ScalarKind>(I);
  return std::nullopt;
}

unsigned gridjit::scalarBits(ScalarKind K) { return info(K).Bits; }
unsigned gridjit::scalarBytes(ScalarKind K) { return (info(K).Bits + 7) / 8; }
bool gridjit::isIntegerScalar(ScalarKind K) { return info(K).Integer; }
bool gridjit::isSignedScalar(ScalarKind K) { return info(K).Signed; }
bool gridjit::isFloatScalar(ScalarKind K) { return info(K).Float; }
bool gridjit::isStorageOnlyScalar(ScalarKind K) {
  return K == ScalarKind::F16 || K == ScalarKind::BF16;
}

bool Type::isVector() const { return K == Struct && Agg->IsVector; }

unsigned Type::getElementBytes() const {
  return Agg ? static_cast<unsigned>(Agg->Size) : scalarBytes(S);
}

unsigned Type::getAlignInBytes() const {
  if (K == Pointer)
    return 8;
  return Agg ? static_cast<unsigned>(Agg->Align) : scalarBytes(S);
}

uint64_t Type::getSizeInBytes() const {
  switch (K) {
  case Struct:
  case Scalar:
    return getElementBytes();
  case Pointer:
    return 8;
  case Array:
    return getArrayElementCount() * getElementBytes();
  case Invalid:
  case Void:
    break;
  }
  return 0;
}

std::string Type::str() const {
  std::string Elem = Agg ? Agg->Name : std::string(scalarName(S));
  switch (K) {
  case Struct:
    return Elem;
  case Invalid:
    return "<invalid>";
  case Void:
    return "void";
  case Scalar:
    return Elem;
  case Pointer:
    switch (AS) {
    case AddrSpace::Global:
      return "ptr<" + Elem + ">";
    case AddrSpace::Shared:
      return "ptr<" + Elem + ", shared>";
    case AddrSpace::Local:
      return "ptr<" + Elem + ", local>";
    case AddrSpace::Constant:
      return "ptr<" + Elem + ", constant>"; // not a KIR type: no pointer reaches it
    }
    break;
  case Array: {
    if (Dims[0] == 0)
      return "[" + Elem + "]";
    // Innermost dimension first, as written: `[[f32; 17]; 16]`.
    std::string Text = Elem;
    for (unsigned I = Rank; I-- > 0;)
      Text = "[" + Text + "; " + std::to_string(Dims[I]) + "]";
    return Text;
  }
  }
  return "<invalid>";
}

Type Type::getArrayOf(const Type &Elem, uint64_t Count, AddrSpace AS) {
  Type T = getArray(Elem.getScalarKind(), Count, AS);
  T.Agg = Elem.Agg;
  if (!Elem.isArray())
    return T;
  assert(Elem.Rank < MaxArrayRank && "array rank beyond MaxArrayRank");
  T.Rank = Elem.Rank + 1;
  for (unsigned I = 0; I < Elem.Rank; ++I)
    T.Dims[I + 1] = Elem.Dims[I];
  return T;
}

Type Type::getArray(ScalarKind Elem, std::span<const uint64_t> Dims, AddrSpace AS) {
  assert(!Dims.empty() && Dims.size() <= MaxArrayRank && "array rank out of range");
  Type T = getArray(Elem, Dims[0], AS);
  T.Rank = static_cast<uint8_t>(Dims.size());
  for (unsigned I = 1; I < Dims.size(); ++I)
    T.Dims[I] = Dims[I];
  return T;
}

uint64_t Type::getArrayElementCount() const {
  if (K != Array)
    return 0;
  uint64_t N = 1;
  for (unsigned I = 0; I < Rank; ++I)
    N *= Dims[I];
  return N;
}

Type Type::getArrayElementType() const {
  assert(K == Array && "not an array");
  if (Rank == 1)
    return getPointeeType();
  Type T = *this;
  --T.Rank;
  for (unsigned I = 0; I < T.Rank; ++I)
    T.Dims[I] = Dims[I + 1];
  T.Dims[T.Rank] = 0;
  return T;
}

void Aggregate::layOut() {
  uint64_t Offset = 0;
  Align = 1;
  for (AggregateField &F : Fields) {
    uint64_t A = F.Ty.getAlignInBytes();
    Offset = (Offset + A - 1) / A * A;
    F.Offset = Offset;
    Offset += F.Ty.getSizeInBytes();
    Align = std::max(Align, A);
  }
  // A vector is aligned to its whole size (CUDA's float4 is 16 bytes,
  // aligned 16), so that it is one 64- or 128-bit access.
  if (IsVector)
    Align = Offset;
  Size = (Offset + Align - 1) / Align * Align;
}

std::optional<unsigned> Aggregate::fieldIndex(std::string_view FieldName) const {
  for (unsigned I = 0; I < Fields.size(); ++I)
    if (Fields[I].Name == FieldName)
      return I;
  return std::nullopt;
}

namespace {
// The builtin vector types, built once (immutable after).
struct VectorTable {
  std::vector<Aggregate> Types;
  VectorTable() {
    const std::pair<ScalarKind, unsigned> Shapes[] = {
        {ScalarKind::F32, 2}, {ScalarKind::F32, 4}, {ScalarKind::I32, 2},
        {ScalarKind::I32, 4}, {ScalarKind::U32, 2}, {ScalarKind::U32, 4},
        {ScalarKind::F64, 2}, {ScalarKind::I64, 2}, {ScalarKind::U64, 2}};
    for (auto [Elem, Lanes] : Shapes) {
      Aggregate A;
      A.Name = std::string(scalarName(Elem)) + "x" + std::to_string(Lanes);
      A.IsVector = true;
      for (unsigned I = 0; I < Lanes; ++I)
        A.Fields.push_back({std::string(1, "xyzw"[I]), Type::getScalar(Elem)});
      A.layOut();
      Types.push_back(std::move(A));
    }
  }
};
} // namespace

const Aggregate *gridjit::lookupVectorType(std::string_view Name) {
  static const VectorTable Table;
  for (const Aggregate &A : Table.Types)
    if (A.Name == Name)
      return &A;
  return nullptr;
}
