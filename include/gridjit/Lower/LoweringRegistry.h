//===- LoweringRegistry.h - Per-target table of op lowerings ----*- C++ -*-===//
//
// Part of gridjit. Every KIR operation and builtin that a target can compile
// is lowered by one small function listed in that target's registry. A
// target fills its registry completely in its constructor and then freezes
// it: after that the table is immutable, so any number of threads may look
// lowerings up at once without a lock, and a late registration is an error
// (never a race). Nothing is registered lazily, so no compile order, thread
// interleaving or cache path can observe a half-built registry.
//
// This header exposes LLVM IR types: it is for targets and their tests.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LOWER_LOWERINGREGISTRY_H
#define GRIDJIT_LOWER_LOWERINGREGISTRY_H

#include "gridjit/IR/AST.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <array>
#include <atomic>
#include <string>
#include <string_view>
#include <vector>

namespace llvm {
class Value;
}

namespace gridjit {

class LoweringContext;

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
  X(SharedArray, "shared_array") /* shared t: [T; N]; */                       \
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

/// What a lowering function gets: the node it lowers (for its types and
/// location), the operand values already lowered, and op-specific data.
struct OpArgs {
  /// The expression or statement being lowered (for diagnostics); may be
  /// null for ops made up by the lowering itself.
  SourceLoc Loc;
  llvm::ArrayRef<llvm::Value *> Operands;
  /// KIR type of the first operand (the pointer for memory ops and atomics,
  /// the source for a cast).
  Type OperandTy;
  /// KIR type of the result (the element type for loads and stores, the
  /// destination of a cast, the array type for array declarations).
  Type ResultTy;
  /// `.x/.y/.z` (0..2) for builtin vectors.
  unsigned Field = 0;
  /// The called function for CallFunction.
  const FunctionDecl *Callee = nullptr;
  /// The declaration for LocalArray / SharedArray / DynamicShared.
  const VarDecl *Var = nullptr;
};

/// A lowering returns the op's value (null for ops without one) or an error.
using LowerFn = llvm::Expected<llvm::Value *> (*)(LoweringContext &Ctx, const OpArgs &Args);

/// One row of a target's registration table.
struct LoweringEntry {
  Op O;
  LowerFn Fn;
  unsigned Version = 1;
};

/// The table of one target. Thread-safe after freeze(): lookups read an
/// immutable array.
class LoweringRegistry {
public:
  explicit LoweringRegistry(std::string TargetName) : TargetName(std::move(TargetName)) {}
  LoweringRegistry(const LoweringRegistry &) = delete;
  LoweringRegistry &operator=(const LoweringRegistry &) = delete;

  /// Registers the lowering of \p O. \p Version is part of the registry's
  /// fingerprint (bump it when a lowering's output changes, so that cached
  /// artifacts made by the old one are not reused). Errors: the registry is
  /// frozen, or \p O already has a lowering.
  llvm::Error add(Op O, LowerFn Fn, unsigned Version = 1);
  /// add() for every row of \p Table except the ops in \p Omit (a hook
  /// for tests that need a target without some lowering).
  llvm::Error addAll(llvm::ArrayRef<LoweringEntry> Table, llvm::ArrayRef<Op> Omit = {});
  /// Makes the registry immutable. Idempotent.
  void freeze() { Frozen.store(true, std::memory_order_release); }
  bool isFrozen() const { return Frozen.load(std::memory_order_acquire); }

  /// The lowering of \p O, or null when the target has none.
  LowerFn lookup(Op O) const { return Entries[static_cast<unsigned>(O)].Fn; }
  /// The ops that have no lowering.
  std::vector<Op> missing() const;
  const std::string &getTargetName() const { return TargetName; }

  /// A hex BLAKE3 digest of the target name and every (op, version) entry,
  /// present or absent: two registries with the same fingerprint lower
  /// every op the same way. Part of the cache key.
  std::string fingerprint() const;

private:
  struct Entry {
    LowerFn Fn = nullptr;
    unsigned Version = 0;
  };
  std::string TargetName;
  std::array<Entry, NumOps> Entries{};
  std::atomic<bool> Frozen{false};
};

} // namespace gridjit

#endif // GRIDJIT_LOWER_LOWERINGREGISTRY_H
