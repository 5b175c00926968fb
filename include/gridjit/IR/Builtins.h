//===- Builtins.h - KIR builtin values and functions ------------*- C++ -*-===//
//
// Part of gridjit. The names of the spec's builtins, in one place. The
// verifier owns their typing rules; each target owns their lowering.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_BUILTINS_H
#define GRIDJIT_IR_BUILTINS_H

#include <cstdint>
#include <string_view>

namespace gridjit {

/// Builtin values. The first four are vectors used as `NAME.x/.y/.z`.
enum class BuiltinValue : uint8_t {
  None,
  ThreadIdx,
  BlockIdx,
  BlockDim,
  GridDim,
  LaneId,
  WarpSize,
};

#define GRIDJIT_BUILTIN_FUNCS(X)                                                                   \
  /* synchronisation */                                                                            \
  X(SyncThreads, "sync_threads")                                                                   \
  X(SyncWarp, "sync_warp")                                                                         \
  X(GridSync, "grid_sync")                                                                         \
  X(Fence, "fence")                                                                                \
  X(FenceBlock, "fence_block")                                                                     \
  /* atomics */                                                                                    \
  X(AtomicAdd, "atomic_add")                                                                       \
  X(AtomicSub, "atomic_sub")                                                                       \
  X(AtomicExch, "atomic_exch")                                                                     \
  X(AtomicMin, "atomic_min")                                                                       \
  X(AtomicMax, "atomic_max")                                                                       \
  X(AtomicAnd, "atomic_and")                                                                       \
  X(AtomicOr, "atomic_or")                                                                         \
  X(AtomicXor, "atomic_xor")                                                                       \
  X(AtomicCas, "atomic_cas")                                                                       \
  /* warp */                                                                                       \
  X(Shfl, "shfl")                                                                                  \
  X(ShflUp, "shfl_up")                                                                             \
  X(ShflDown, "shfl_down")                                                                         \
  X(ShflXor, "shfl_xor")                                                                           \
  X(VoteAny, "vote_any")                                                                           \
  X(VoteAll, "vote_all")                                                                           \
  X(Ballot, "ballot")                                                                              \
  /* selection */                                                                                  \
  X(Select, "select")                                                                              \
  /* math */                                                                                       \
  X(Sqrt, "sqrt")                                                                                  \
  X(Rsqrt, "rsqrt")                                                                                \
  X(Exp, "exp")                                                                                    \
  X(Exp2, "exp2")                                                                                  \
  X(Log, "log")                                                                                    \
  X(Log2, "log2")                                                                                  \
  X(Log10, "log10")                                                                                \
  X(Sin, "sin")                                                                                    \
  X(Cos, "cos")                                                                                    \
  X(Tan, "tan")                                                                                    \
  X(Tanh, "tanh")                                                                                  \
  X(Pow, "pow")                                                                                    \
  X(Fma, "fma")                                                                                    \
  X(Floor, "floor")                                                                                \
  X(Ceil, "ceil")                                                                                  \
  X(Round, "round")                                                                                \
  X(Trunc, "trunc")                                                                                \
  X(Abs, "abs")                                                                                    \
  X(Min, "min")                                                                                    \
  X(Max, "max")                                                                                    \
  X(Clz, "clz")                                                                                    \
  X(Popc, "popc")

/// Builtin functions, called like device functions.
enum class BuiltinFunc : uint8_t {
  None,
#define GRIDJIT_X(Id, Name) Id,
  GRIDJIT_BUILTIN_FUNCS(GRIDJIT_X)
#undef GRIDJIT_X
};

/// The builtin value with this name (`thread_idx`, `lane_id`, ...) or None.
BuiltinValue lookupBuiltinValue(std::string_view Name);
/// The builtin function with this name or None.
BuiltinFunc lookupBuiltinFunc(std::string_view Name);
std::string_view builtinValueName(BuiltinValue V);
std::string_view builtinFuncName(BuiltinFunc F);
/// True for names that no declaration may take: builtin values and
/// builtin functions.
inline bool isReservedBuiltinName(std::string_view Name) {
  return lookupBuiltinValue(Name) != BuiltinValue::None ||
         lookupBuiltinFunc(Name) != BuiltinFunc::None;
}

} // namespace gridjit

#endif // GRIDJIT_IR_BUILTINS_H
