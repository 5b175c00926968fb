//===- Builtins.cpp - KIR builtin names -----------------------------------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Builtins.h"

#include <array>
#include <utility>

using namespace gridjit;

namespace {
constexpr std::pair<BuiltinValue, std::string_view> Values[] = {
    {BuiltinValue::ThreadIdx, "thread_idx"}, {BuiltinValue::BlockIdx, "block_idx"},
    {BuiltinValue::BlockDim, "block_dim"},   {BuiltinValue::GridDim, "grid_dim"},
    {BuiltinValue::LaneId, "lane_id"},       {BuiltinValue::WarpSize, "warp_size"},
};

constexpr std::string_view FuncNames[] = {"",
#define GRIDJIT_X(Id, Name) Name,
                                          GRIDJIT_BUILTIN_FUNCS(GRIDJIT_X)
#undef GRIDJIT_X
};
} // namespace

BuiltinValue gridjit::lookupBuiltinValue(std::string_view Name) {
  for (const auto &[V, N] : Values)
    if (N == Name)
      return V;
  return BuiltinValue::None;
}

std::string_view gridjit::builtinValueName(BuiltinValue V) {
  for (const auto &[Val, N] : Values)
    if (Val == V)
      return N;
  return "";
}

BuiltinFunc gridjit::lookupBuiltinFunc(std::string_view Name) {
  if (Name.empty())
    return BuiltinFunc::None;
  for (unsigned I = 1; I < std::size(FuncNames); ++I)
    if (FuncNames[I] == Name)
      return static_cast<BuiltinFunc>(I);
  return BuiltinFunc::None;
}

std::string_view gridjit::builtinFuncName(BuiltinFunc F) {
  return FuncNames[static_cast<unsigned>(F)];
}
