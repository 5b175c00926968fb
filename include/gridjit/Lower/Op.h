//===- Op.h - The operations a target lowers --------------------*- C++ -*-===//
//
// Part of gridjit. The list of every operation a target's LoweringRegistry
// has a lowering for. Unlike the rest of the Lower headers this one names
// no LLVM type, so the public Target.h may use it (NVPTXTargetOptions and
// HostTargetOptions name ops to leave out).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LOWER_OP_H
#define GRIDJIT_LOWER_OP_H

#include "gridjit/IR/AST.h"

#include <cstdint>
#include <string_view>

namespace gridjit {

// clang-format off
/// The operations of KIR that a target lowers, besides the builtin values
/// and functions (which follow them in `Op`).
#define GRIDJIT_CORE_OPS(X)                                                    \
  X(Add, "add") X(Sub, "sub") X(Mul, "mul") X(Div, "div") X(Rem, "rem")        \
  X(Shl, "shl") X(Shr, "shr") X(And, "and") X(Or, "or") X(Xor, "xor")          \
  X(Eq, "eq") X(Ne, "ne") X(Lt, "lt") X(Le, "le") X(Gt, "gt") X(Ge, "ge")      \
  X(Neg, "neg") X(Not, "not") X(BitNot, "bitnot")                              \
  X(Cast, "cast")                                                              \
  X(PtrOffset, "ptr_offset")     /* p + i */                                   \
  X(ElementAddr, "element_addr") /* &p[i], &a[i] */                            \
  X(Load, "load") X(Store, "store")                                            \
  X(LocalArray, "local_array")   /* var a: [T; N]; */                          \
  X(SharedArray, "shared_array") /* shared t: [T; N]; shared x: T; */          \
  X(DynamicShared, "dynamic_shared") /* shared t: [T]; */                      \
  X(CallFunction, "call")        /* a device function */
// clang-format on

/// Every lowerable operation: the core ops, then one per builtin value
/// (`Op::ThreadIdx`, ...), then one per builtin function
/// (`Op::BuiltinSyncThreads`, ...), in the order of Builtins.def.
enum class Op : uint16_t {
#define GRIDJIT_X(Id, Name) Id,
  GRIDJIT_CORE_OPS(GRIDJIT_X)
#undef GRIDJIT_X
#define GRIDJIT_BUILTIN_VALUE(Id, Spelling, Dims, Varies) Id,
#define GRIDJIT_BUILTIN_FUNC(Id, Spelling, Shape, Types, Effect) Builtin##Id,
#include "gridjit/IR/Builtins.def"
      NumOps
};
constexpr unsigned NumOps = static_cast<unsigned>(Op::NumOps);

/// The op's name as messages and fingerprints spell it ("add",
/// "thread_idx", "atomic_cas", ...).
std::string_view opName(Op O);
/// The op for a binary operator (never LAnd/LOr: those are control flow).
Op opFor(BinaryOp B);
Op opFor(UnaryOp U);
Op opFor(BuiltinValue V);
Op opFor(BuiltinFunc F);

} // namespace gridjit

#endif // GRIDJIT_LOWER_OP_H
