//===- LoweringContext.h - State shared by the op lowerings -----*- C++ -*-===//
//
// Part of gridjit. A LoweringContext exists for one KIR → LLVM IR lowering
// of one module. It gives every lowering function the IR builder, the
// module being built, type mapping and a way to report located errors.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LOWER_LOWERINGCONTEXT_H
#define GRIDJIT_LOWER_LOWERINGCONTEXT_H

#include "gridjit/IR/AST.h"
#include "gridjit/Lower/LoweringRegistry.h"
#include "gridjit/Lower/LoweringTarget.h"

#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"
#include "llvm/Support/Error.h"

namespace gridjit {

class LoweringContext {
public:
  LoweringContext(const LoweringTarget &T, const Module &KM, llvm::Module &IR, llvm::IRBuilder<> &B)
      : T(T), KM(KM), IR(IR), B(B) {}

  const LoweringTarget &T;
  const Module &KM;
  llvm::Module &IR;
  llvm::IRBuilder<> &B;
  /// The KIR function being lowered and its LLVM function.
  const FunctionDecl *CurDecl = nullptr;
  llvm::Function *CurFn = nullptr;

  llvm::LLVMContext &getContext() const { return IR.getContext(); }
  /// LLVM type of a value of KIR type \p Ty in a register (bool is i1;
  /// pointers carry the target's address space; arrays are [N x elem]).
  llvm::Type *toLLVM(Type Ty) const;
  /// LLVM type of a scalar in memory (bool is i8).
  llvm::Type *memType(ScalarKind K) const;
  llvm::Type *scalarType(ScalarKind K) const;
  /// LLVM type of a struct (a literal struct of its fields, which LLVM lays
  /// out as C does on both targets) or of a vector type (<N x T>, aligned to
  /// its size, so a load or store of one is a 64- or 128-bit access).
  llvm::Type *aggregateType(const Aggregate &A) const;
  /// LLVM type of an element in memory: the pointee of a pointer or the
  /// element of an array \p Ty (an aggregate's type, or memType).
  llvm::Type *elementMemType(Type Ty) const;
  /// An i64 index from an integer of KIR type \p Ty (extended by its
  /// signedness).
  llvm::Value *toIndex(llvm::Value *V, Type Ty) const;
  /// An alloca in the entry block of the current function.
  llvm::AllocaInst *createEntryAlloca(llvm::Type *Ty, const llvm::Twine &Name);

  /// Lowers \p O through the target's registry. A missing lowering is an
  /// error naming the op, the target and the source position.
  llvm::Expected<llvm::Value *> lower(Op O, const OpArgs &Args);

  /// A located error: `MODULE:LINE:COL: error: MSG` with the source line.
  llvm::Error error(SourceLoc Loc, const llvm::Twine &Msg) const;
};

} // namespace gridjit

#endif // GRIDJIT_LOWER_LOWERINGCONTEXT_H
