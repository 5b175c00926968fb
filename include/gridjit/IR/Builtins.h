//===- Builtins.h - KIR builtin values and functions ------------*- C++ -*-===//
//
// Part of gridjit. The spec's builtins, in one place: the rows of
// Builtins.def, with their properties (shape, allowed types, effect) as
// columns. The verifier types calls from these properties and the host
// target's analyses read purity and synchronisation from them; each target
// owns the lowerings.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_BUILTINS_H
#define GRIDJIT_IR_BUILTINS_H

#include "gridjit/IR/Type.h"

#include <cstdint>
#include <string>
#include <string_view>

namespace gridjit {

/// The threads over which a builtin value may differ.
enum class VariesPer : uint8_t {
  Thread, ///< each thread has its own (`thread_idx`, `lane_id`)
  Block,  ///< the same for every thread of a block (`block_idx`)
  Launch, ///< the same for every thread of a launch (`block_dim`, `grid_dim`)
  Never,  ///< a constant (`warp_size`)
};

/// Builtin values, in the order of Builtins.def.
enum class BuiltinValue : uint8_t {
  None,
#define GRIDJIT_BUILTIN_VALUE(Id, Spelling, Dims, Varies) Id,
#include "gridjit/IR/Builtins.def"
};

/// How a builtin function's arguments and result relate to its generic
/// type T (whose allowed types are the BuiltinTypes column).
enum class BuiltinShape : uint8_t {
  NoArgs,     ///< `f()` -> void
  AtomicRMW,  ///< `f(p: ptr<T>, v: T)` -> T
  AtomicCas,  ///< `f(p: ptr<T>, expected: T, desired: T)` -> T
  Shuffle,    ///< `f(v: T, lane: i32)` -> T
  Vote,       ///< `f(b: bool)` -> bool
  Ballot,     ///< `f(b: bool)` -> u32
  Select,     ///< `f(c: bool, a: T, b: T)` -> T
  Unary,      ///< `f(x: T)` -> T
  Binary,     ///< `f(x: T, y: T)` -> T
  Ternary,    ///< `f(x: T, y: T, z: T)` -> T
  CountBits,  ///< `f(x: T)` -> i32 (clz, popc, frexp_exp)
  FloatClass, ///< `f(x: T)` -> bool (isnan, isinf, isfinite, signbit)
  Ldexp,      ///< `f(x: T, n: i32)` -> T
  /// `f("format", args...)` -> void: a string literal (CallExpr::Format),
  /// then one scalar or pointer per `{}` of it (print).
  Format,
};

/// The number of arguments a call of this shape takes.
unsigned getArity(BuiltinShape S);

/// The scalar types a builtin's generic type T may be.
enum class BuiltinTypes : uint8_t {
  None,             ///< there is no T (the shape fixes every type)
  Any,              ///< any scalar or pointer type
  Int32_64,         ///< i32 u32 i64 u64
  Int32_64OrFloat,  ///< i32 u32 i64 u64 f32 f64
  Float,            ///< f32 f64
  FloatOrSignedInt, ///< f32 f64 i8 i16 i32 i64
  IntOrFloat,       ///< every integer type, f32 f64
};

/// True when \p T is a type that \p Types allows for T.
bool allowsType(BuiltinTypes Types, Type T);

/// What a call of a builtin function does besides giving its result.
enum class BuiltinEffect : uint8_t {
  /// Nothing: the result depends on the operands alone, so a call may be
  /// evaluated again, or once for threads whose operands are the same.
  Pure,
  /// Reads or writes memory, or orders memory accesses (atomics, fences);
  /// each thread acts on its own.
  Memory,
  /// A warp collective (shuffles, votes): every lane of the warp takes
  /// part and exchanges values with the others.
  Warp,
  /// A barrier: the threads of a warp, block or grid wait for each other.
  Barrier,
};

/// Builtin functions, called like device functions, in the order of
/// Builtins.def.
enum class BuiltinFunc : uint8_t {
  None,
#define GRIDJIT_BUILTIN_FUNC(Id, Spelling, Shape, Types, Effect) Id,
#include "gridjit/IR/Builtins.def"
};

/// One row of Builtins.def for a builtin value.
struct BuiltinValueInfo {
  BuiltinValue Id;
  std::string_view Name;
  unsigned Dims; ///< 3 for `NAME.x/.y/.z` vectors, 1 for scalars
  VariesPer Varies;

  bool isVector() const { return Dims == 3; }
};

/// One row of Builtins.def for a builtin function.
struct BuiltinFuncInfo {
  BuiltinFunc Id;
  std::string_view Name;
  BuiltinShape Shape;
  BuiltinTypes Types;
  BuiltinEffect Effect;

  bool isPure() const { return Effect == BuiltinEffect::Pure; }
  bool isWarpCollective() const { return Effect == BuiltinEffect::Warp; }
  bool isBarrier() const { return Effect == BuiltinEffect::Barrier; }
  /// True for calls that every thread of a warp, block or grid must reach
  /// together: warp collectives and barriers.
  bool synchronises() const { return isWarpCollective() || isBarrier(); }
};

/// The properties of \p V, which must not be None.
const BuiltinValueInfo &getBuiltinValueInfo(BuiltinValue V);
/// The properties of \p F, which must not be None.
const BuiltinFuncInfo &getBuiltinFuncInfo(BuiltinFunc F);

/// The builtin value with this name (`thread_idx`, `lane_id`, ...) or None.
BuiltinValue lookupBuiltinValue(std::string_view Name);
/// The builtin function with this name or None.
BuiltinFunc lookupBuiltinFunc(std::string_view Name);
/// The spelling of \p V; empty for None.
std::string_view builtinValueName(BuiltinValue V);
/// The spelling of \p F; empty for None.
std::string_view builtinFuncName(BuiltinFunc F);
/// What KIR calls a CUDA C++ spelling (`threadIdx`, `__syncthreads`,
/// `atomicAdd`, `float`, `printf`, ...; gridjit/IR/CudaSpellings.def).
struct CudaSpelling {
  std::string_view Kir;  ///< KIR's spelling; empty when it has none
  std::string_view Note; ///< what KIR has instead, when it has no spelling
  /// What a diagnostic appends: "did you mean 'thread_idx'?", or Note.
  std::string hint() const;
};
/// The row of CudaSpellings.def for \p Name, if it has one.
std::optional<CudaSpelling> lookupCudaSpelling(std::string_view Name);
/// "; " and the hint of \p Name's row (lookupCudaSpelling), or empty: what
/// an error about an unknown name appends.
std::string cudaSpellingHint(std::string_view Name);

/// True for names that no declaration may take: builtin values and
/// builtin functions.
inline bool isReservedBuiltinName(std::string_view Name) {
  return lookupBuiltinValue(Name) != BuiltinValue::None ||
         lookupBuiltinFunc(Name) != BuiltinFunc::None;
}

} // namespace gridjit

#endif // GRIDJIT_IR_BUILTINS_H
