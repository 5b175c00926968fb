//===- Type.cpp - KIR value types -----------------------------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Type.h"

#include <array>

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

uint64_t Type::getSizeInBytes() const {
  switch (K) {
  case Scalar:
    return getElementBytes();
  case Pointer:
    return 8;
  case Array:
    return Count * getElementBytes();
  case Invalid:
  case Void:
    break;
  }
  return 0;
}

std::string Type::str() const {
  std::string Elem(scalarName(S));
  switch (K) {
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
    }
    break;
  case Array:
    if (Count == 0)
      return "[" + Elem + "]";
    return "[" + Elem + "; " + std::to_string(Count) + "]";
  }
  return "<invalid>";
}
