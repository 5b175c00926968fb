//===- StructuralLowering.h - Statements and expressions to IR --*- C++ -*-===//
//
// Part of gridjit (internal header). The structural lowering of statements
// and expressions that every target shares: control flow, short-circuit
// operators, lvalues, casts, calls' arguments. Each operation goes through
// the target's LoweringRegistry. A subclass decides, through the hooks
// below, where a named value lives, how a loop exit or a return leaves,
// how a declaration gets storage and how a KIR function is called; the
// shared lowering (Lowering.cpp) and the host's thread code
// (Target/Host/ThreadCode.cpp) are the two.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_LOWER_STRUCTURALLOWERING_H
#define GRIDJIT_LIB_LOWER_STRUCTURALLOWERING_H

#include "gridjit/Lower/LoweringContext.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/IR/GlobalVariable.h"
#include "llvm/IR/IRBuilder.h"

#include <optional>

namespace gridjit {

class StructuralLowering {
public:
  virtual ~StructuralLowering();

protected:
  /// \p Ctx is the subclass's context; it may still be under construction
  /// (it is given this object's builder).
  StructuralLowering(llvm::LLVMContext &C, LoweringContext &Ctx) : B(C), Ctx(Ctx) {}

  llvm::IRBuilder<> B;
  LoweringContext &Ctx;
  /// The LLVM function of each KIR function that is called as one.
  llvm::DenseMap<const FunctionDecl *, llvm::Function *> Functions;
  llvm::DenseMap<const VarDecl *, const ConstDecl *> Consts;

  /// The global of each constant table and constant memory array.
  llvm::DenseMap<const VarDecl *, llvm::GlobalVariable *> ConstantGlobals;

  /// Records the value of every `const` of \p KM, and makes the globals of
  /// its tables and constant memory (ConstantLowering.cpp).
  void collectConsts(const Module &KM);
  /// The LLVM type of parameter \p P of a KIR function: its value's, or
  /// for `out` / `inout` a pointer to the caller's temporary (lowerCall).
  llvm::Type *paramType(const VarDecl &P) const;
  void createConstantGlobals(const Module &KM);

  //===--- Hooks -----------------------------------------------------------===//

  /// The value of the variable \p E names (neither a builtin nor a const).
  virtual llvm::Expected<llvm::Value *> loadVariable(const NameExpr &E) = 0;
  /// The address of the variable or array \p N names.
  virtual llvm::Expected<llvm::Value *> addressOfVariable(const NameExpr &N) = 0;
  /// Makes \p Addr, an alloca, the storage of \p V (a `for` index).
  virtual void bindAddress(const VarDecl &V, llvm::Value *Addr) = 0;
  /// Loads / stores a named scalar or pointer of type \p Ty at \p Addr.
  virtual llvm::Value *loadScalar(llvm::Value *Addr, Type Ty);
  virtual void storeScalar(llvm::Value *Addr, llvm::Value *V, Type Ty);
  /// Calls the KIR function E.Fn; \p A holds everything but the operands,
  /// \p Args the evaluated arguments.
  virtual llvm::Expected<llvm::Value *> lowerFunctionCall(const CallExpr &E, OpArgs &A,
                                                          llvm::ArrayRef<llvm::Value *> Args) = 0;
  /// A loop whose `break` goes to \p Break and `continue` to \p Continue
  /// starts / ends.
  virtual void enterLoop(llvm::BasicBlock *Break, llvm::BasicBlock *Continue) = 0;
  virtual void exitLoop() = 0;
  virtual llvm::Error lowerBreakContinue(bool IsBreak, SourceLoc Loc) = 0;
  virtual llvm::Error lowerDecl(const DeclStmt &S) = 0;
  virtual llvm::Error lowerReturn(const ReturnStmt &S) = 0;

  //===--- Statements ------------------------------------------------------===//

  /// Lowers the body of \p F into \p Fn, whose entry block is current,
  /// ends the last block and drops the blocks no edge reaches.
  llvm::Error lowerFunctionBody(const FunctionDecl &F, llvm::Function &Fn);
  llvm::Error lowerBlock(const BlockStmt &Blk);
  llvm::Error lowerStmt(const Stmt &S);
  llvm::Error lowerAssign(const AssignStmt &S);
  llvm::Error lowerIf(const IfStmt &S);
  llvm::Error lowerWhile(const WhileStmt &S);
  llvm::Error lowerFor(const ForStmt &S);

  //===--- Expressions -----------------------------------------------------===//

  virtual llvm::Expected<llvm::Value *> lowerExpr(const Expr &E);
  llvm::Expected<llvm::Value *> lowerName(const NameExpr &E);
  llvm::Expected<llvm::Value *> lowerUnary(const UnaryExpr &E);
  llvm::Expected<llvm::Value *> lowerBinary(const BinaryExpr &E);
  llvm::Expected<llvm::Value *> lowerShortCircuit(const BinaryExpr &E);
  llvm::Expected<llvm::Value *> lowerCond(const CondExpr &E);
  /// A value computed on one side of a branch, and the block it ends in.
  struct BranchValue {
    llvm::Value *V;
    llvm::BasicBlock *From;
  };
  llvm::Expected<BranchValue> lowerBranch(const Expr &E, llvm::BasicBlock *Block,
                                          llvm::BasicBlock *End);
  virtual llvm::Expected<llvm::Value *> lowerCall(const CallExpr &E);
  llvm::Expected<llvm::Value *> lowerAddress(const Expr &E);
  /// Loads / stores the place \p Place (a variable or an element, as an
  /// assignment's target) of type \p Ty at \p Addr, from lowerAddress.
  llvm::Expected<llvm::Value *> loadPlace(const Expr &Place, llvm::Value *Addr, Type Ty,
                                          SourceLoc Loc);
  llvm::Error storePlace(const Expr &Place, llvm::Value *Addr, llvm::Value *V, Type Ty,
                         SourceLoc Loc);
  llvm::Expected<llvm::Value *> lowerArrayElementAddress(const IndexExpr &E);
  /// `s.f`, `p[i].f`, `v.x`: one field loaded through its address where
  /// the struct is in memory (an element), else taken from the value.
  llvm::Expected<llvm::Value *> lowerField(const MemberExpr &E);
  /// Loads the element or field of an element \p E through the Load op.
  llvm::Expected<llvm::Value *> loadElement(const Expr &E);
  /// The address of field E.Field of the struct or vector at \p Base.
  llvm::Value *fieldAddress(const MemberExpr &E, llvm::Value *Base);
  /// `Node { ... }`, `f32x4(a, b, c, d)`: the value, field by field.
  llvm::Expected<llvm::Value *> lowerConstruct(const CallExpr &E);
  llvm::Expected<llvm::Value *> elementAddress(const IndexExpr &E, const Type &BaseTy,
                                               llvm::Value *Base, llvm::Value *Index);
  llvm::Expected<llvm::Value *> constantOf(const ConstValue &V);

  /// True when the current block already ends (after return/break/...).
  bool terminated() const { return B.GetInsertBlock()->getTerminator() != nullptr; }
  /// Continues emission in a fresh block no edge reaches (code after a
  /// `return`, `break` or `continue` is lowered there and later removed).
  void startDeadBlock() { B.SetInsertPoint(newBlock("dead")); }
  llvm::BasicBlock *newBlock(const llvm::Twine &Name) {
    return llvm::BasicBlock::Create(B.getContext(), Name, Ctx.CurFn);
  }
  /// Emits a branch on \p Cond to blocks `Prefix.then`, `Prefix.else` (when
  /// \p Else is given) and `Prefix.end`; each arm is emitted by its callback
  /// and falls through to the end unless it ended in a terminator.
  llvm::Error emitIfElse(llvm::Value *Cond, llvm::StringRef Prefix,
                         llvm::function_ref<llvm::Error()> Then,
                         std::optional<llvm::function_ref<llvm::Error()>> Else);
};

} // namespace gridjit

#endif // GRIDJIT_LIB_LOWER_STRUCTURALLOWERING_H
