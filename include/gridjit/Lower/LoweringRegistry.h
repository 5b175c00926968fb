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
#include "gridjit/Lower/Op.h"

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

/// The memory a memory op reaches. Every op that reaches memory through an
/// address (Load, Store, ElementAddr, PtrOffset and the atomics) and every
/// array declaration (LocalArray, SharedArray, DynamicShared) gets one, on
/// every target: a lowering can tell shared from global from local memory
/// even where the target's pointers do not (the host's are all one LLVM
/// address space).
struct MemoryRef {
  /// Global (the kernel's buffers), Shared (the block's shared memory) or
  /// Local (a thread's own arrays).
  AddrSpace Space = AddrSpace::Global;
  /// Elements of the declared array the address is in: the count of a local
  /// or static shared array (`a[i]`, `&t[i]`, `atomic_add(&t[i], 1)`),
  /// every dimension's (272 for `[[f32; 17]; 16]`). 0
  /// when the lowering cannot know it: through a pointer (the runtime knows
  /// the buffer) or into the dynamic shared array (the launch sizes it).
  uint64_t Extent = 0;
  /// The variable the address derives from through `[]`, `&`, `+` and
  /// `-`: the array, or the pointer parameter or variable (`p[i]`,
  /// `(p + 4)[i]`); null for any other pointer (one a function returns).
  /// For reports that name the memory.
  const VarDecl *Var = nullptr;
};

/// The memory of element \p E (`b[i]`), or of what pointer \p E points
/// into (`p`, `&t[i]`, `p + k`).
MemoryRef memoryOf(const Expr &E);
/// The memory of array or pointer variable \p V, or of shared scalar \p V.
MemoryRef memoryOf(const VarDecl &V);

/// What a lowering function gets: the node it lowers (for its types and
/// location), the operand values already lowered, and op-specific data.
struct OpArgs {
  /// Where the expression or statement being lowered starts, for
  /// diagnostics; the default (invalid) location for ops the lowering makes
  /// up itself.
  SourceLoc Loc;
  llvm::ArrayRef<llvm::Value *> Operands;
  /// KIR type of the first operand: the address for Load and Store
  /// (`ptr<T, space>`), the base for ElementAddr and PtrOffset (a pointer,
  /// or an array, which says where it lives), the pointer for atomics, the
  /// source for a cast, the left operand of a binary operator.
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
  /// For the memory ops and array declarations: which memory (MemoryRef).
  MemoryRef Mem;
  /// For builtin calls: the call (BuiltinPrint reads its format and its
  /// arguments' types).
  const CallExpr *Call = nullptr;
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
