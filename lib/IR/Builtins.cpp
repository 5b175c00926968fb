//===- Builtins.cpp - KIR builtin values and functions --------------------===//
//
// Part of gridjit. The tables generated from Builtins.def.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Builtins.h"

#include <cassert>
#include <iterator>

using namespace gridjit;

namespace {

constexpr BuiltinValueInfo ValueTable[] = {
#define GRIDJIT_BUILTIN_VALUE(Id, Spelling, Dims, Varies)                                          \
  {BuiltinValue::Id, Spelling, Dims, VariesPer::Varies},
#include "gridjit/IR/Builtins.def"
};

constexpr BuiltinFuncInfo FuncTable[] = {
#define GRIDJIT_BUILTIN_FUNC(Id, Spelling, Shape, Types, Effect)                                   \
  {BuiltinFunc::Id, Spelling, BuiltinShape::Shape, BuiltinTypes::Types, BuiltinEffect::Effect},
#include "gridjit/IR/Builtins.def"
};

// Row I describes enumerator I + 1 (0 is None): lookups index the tables
// by enumerator.
constexpr bool valueRowsInEnumOrder() {
  for (unsigned I = 0; I < std::size(ValueTable); ++I)
    if (static_cast<unsigned>(ValueTable[I].Id) != I + 1 || ValueTable[I].Name.empty() ||
        (ValueTable[I].Dims != 1 && ValueTable[I].Dims != 3))
      return false;
  return true;
}
constexpr bool funcRowsInEnumOrder() {
  for (unsigned I = 0; I < std::size(FuncTable); ++I)
    if (static_cast<unsigned>(FuncTable[I].Id) != I + 1 || FuncTable[I].Name.empty())
      return false;
  return true;
}
static_assert(valueRowsInEnumOrder(), "ValueTable[i] must describe BuiltinValue i + 1");
static_assert(funcRowsInEnumOrder(), "FuncTable[i] must describe BuiltinFunc i + 1");

/// A set of scalar kinds, one bit per ScalarKind.
using KindSet = uint16_t;
constexpr KindSet bit(ScalarKind K) { return KindSet(1u << static_cast<unsigned>(K)); }
constexpr KindSet Ints3264 =
    bit(ScalarKind::I32) | bit(ScalarKind::U32) | bit(ScalarKind::I64) | bit(ScalarKind::U64);
constexpr KindSet Floats = bit(ScalarKind::F32) | bit(ScalarKind::F64);
constexpr KindSet SignedInts =
    bit(ScalarKind::I8) | bit(ScalarKind::I16) | bit(ScalarKind::I32) | bit(ScalarKind::I64);
constexpr KindSet AllInts = SignedInts | bit(ScalarKind::U8) | bit(ScalarKind::U16) |
                            bit(ScalarKind::U32) | bit(ScalarKind::U64);

KindSet kindsOf(BuiltinTypes Types) {
  switch (Types) {
  case BuiltinTypes::None:
  case BuiltinTypes::Any:
    return 0;
  case BuiltinTypes::Int32_64:
    return Ints3264;
  case BuiltinTypes::Int32_64OrFloat:
    return Ints3264 | Floats;
  case BuiltinTypes::Float:
    return Floats;
  case BuiltinTypes::FloatOrSignedInt:
    return Floats | SignedInts;
  case BuiltinTypes::IntOrFloat:
    return AllInts | Floats;
  }
  return 0;
}

} // namespace

unsigned gridjit::getArity(BuiltinShape S) {
  switch (S) {
  case BuiltinShape::NoArgs:
  case BuiltinShape::Format: // variadic: as many as its format's `{}`
    return 0;
  case BuiltinShape::Vote:
  case BuiltinShape::Ballot:
  case BuiltinShape::Unary:
  case BuiltinShape::CountBits:
  case BuiltinShape::FloatClass:
    return 1;
  case BuiltinShape::AtomicRMW:
  case BuiltinShape::Ldexp:
  case BuiltinShape::Shuffle:
  case BuiltinShape::Binary:
    return 2;
  case BuiltinShape::AtomicCas:
  case BuiltinShape::Select:
  case BuiltinShape::Ternary:
    return 3;
  }
  return 0;
}

bool gridjit::allowsType(BuiltinTypes Types, Type T) {
  if (Types == BuiltinTypes::Any)
    return T.isScalar() || T.isPointer();
  return T.isScalar() && (kindsOf(Types) & bit(T.getScalarKind()));
}

const BuiltinValueInfo &gridjit::getBuiltinValueInfo(BuiltinValue V) {
  assert(V != BuiltinValue::None && "not a builtin value");
  return ValueTable[static_cast<unsigned>(V) - 1];
}

const BuiltinFuncInfo &gridjit::getBuiltinFuncInfo(BuiltinFunc F) {
  assert(F != BuiltinFunc::None && "not a builtin function");
  return FuncTable[static_cast<unsigned>(F) - 1];
}

BuiltinValue gridjit::lookupBuiltinValue(std::string_view Name) {
  for (const BuiltinValueInfo &I : ValueTable)
    if (I.Name == Name)
      return I.Id;
  return BuiltinValue::None;
}

std::string_view gridjit::builtinValueName(BuiltinValue V) {
  return V == BuiltinValue::None ? std::string_view() : getBuiltinValueInfo(V).Name;
}

BuiltinFunc gridjit::lookupBuiltinFunc(std::string_view Name) {
  for (const BuiltinFuncInfo &I : FuncTable)
    if (I.Name == Name)
      return I.Id;
  return BuiltinFunc::None;
}

std::string_view gridjit::builtinFuncName(BuiltinFunc F) {
  return F == BuiltinFunc::None ? std::string_view() : getBuiltinFuncInfo(F).Name;
}

std::optional<CudaSpelling> gridjit::lookupCudaSpelling(std::string_view Name) {
#define CUDA_NAME(Cuda, Kir)                                                                       \
  if (Name == #Cuda)                                                                               \
    return CudaSpelling{Kir, {}};
#define CUDA_NOTE(Cuda, Note)                                                                      \
  if (Name == #Cuda)                                                                               \
    return CudaSpelling{{}, Note};
#include "gridjit/IR/CudaSpellings.def"
  return std::nullopt;
}

std::string CudaSpelling::hint() const {
  return Kir.empty() ? std::string(Note) : "did you mean '" + std::string(Kir) + "'?";
}

std::string gridjit::cudaSpellingHint(std::string_view Name) {
  std::optional<CudaSpelling> S = lookupCudaSpelling(Name);
  return S ? "; " + S->hint() : std::string();
}
