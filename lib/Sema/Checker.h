//===- Checker.h - The KIR verifier's state, shared by lib/Sema -*- C++ -*-===//
//
// Part of gridjit. Private to lib/Sema. One Checker verifies one Module: it
// walks the declarations, statements and expressions, reports every error it
// finds and fills in the module's semantic fields. The work is split over
// several files:
//
//   Verifier.cpp      module level: names, consts, signatures, call graph
//   CheckStmt.cpp     statements, declarations, scopes, reachability
//   CheckExpr.cpp     expressions and literal typing
//   BuiltinRules.cpp  the overloads of the builtin functions
//   ConstEval.cpp     folding constant expressions
//   DefiniteAssignment.cpp  reads before assignment
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_SEMA_CHECKER_H
#define GRIDJIT_LIB_SEMA_CHECKER_H

#include "gridjit/IR/AST.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Casting.h"
#include "llvm/Support/Error.h"

#include <optional>
#include <string>
#include <vector>

namespace gridjit::sema {

/// The APFloat semantics of the float type \p T (f16, bf16, f32 or f64).
const llvm::fltSemantics &floatSemantics(Type T);
/// \p D rounded once to the float type \p T, as a double (exact for every
/// float type).
double roundToFloatType(Type T, double D);

// LLVM's casting templates, used unqualified throughout lib/Sema (as MLIR's
// Support/LLVM.h does for its own code).
using llvm::cast;
using llvm::dyn_cast;
using llvm::dyn_cast_or_null;
using llvm::isa;

/// Where an expression starts in the source (gridjit::startLoc).
using gridjit::startLoc;
inline SourceLoc startLoc(const ExprPtr &E) { return startLoc(E.get()); }
/// `'T'`: a type quoted for a diagnostic.
std::string quote(Type T);
/// `'name'`: a name quoted for a diagnostic.
std::string quote(llvm::StringRef Name);
/// The spelling of a binary operator (`+`, `<<`, `&&`, ...).
llvm::StringRef binaryOpSpelling(BinaryOp Op);

/// True for an expression built only from unsuffixed literals with unary
/// `-`/`~` and arithmetic or bitwise binary operators. Such an expression
/// has no type of its own: it takes the type of its context. So does
/// `null` (isNullLiteral), which takes a pointer type.
bool isUntypedLiteral(const Expr *E);
/// True for `null`, whose pointer type comes from its context (an untyped
/// literal too).
bool isNullLiteral(const Expr *E);
/// True when the untyped literal expression \p E has a float literal.
bool containsFloatLit(const Expr *E);
/// The type of an untyped literal expression with no usable context:
/// f32 when it has a float literal, else i32.
Type defaultLiteralType(bool HasFloat);
/// Whether an untyped literal expression may take the context type \p Hint:
/// a numeric type, and a float type when a float literal is involved (a
/// float literal never becomes an integer). Otherwise the expression keeps
/// its default type and the usual type rules report the mismatch.
bool hintUsable(bool HasFloat, Type Hint);

/// What a name refers to at the point of use. At most one of Var, Fn,
/// Value and Func is set (Var and Const together for a const).
struct Resolved {
  const VarDecl *Var = nullptr;       ///< a local, parameter, loop index or const
  ConstDecl *Const = nullptr;         ///< the const, when Var is one
  FunctionDecl *Fn = nullptr;         ///< a device function or kernel
  const StructDecl *Struct = nullptr; ///< a struct type (not a value)
  BuiltinValue Value = BuiltinValue::None;
  BuiltinFunc Func = BuiltinFunc::None;
};

/// "a -> b -> c -> a": the \p N members of a cycle (\p Name gives each)
/// and the first again; past 8 members, the first 4 and the last 3 with
/// "... (K more)" between them.
std::string cyclePath(size_t N, llvm::function_ref<llvm::StringRef(size_t)> Name);

/// "'f' takes 2 arguments, found 3".
std::string arityMessage(llvm::StringRef Callee, size_t Expected, size_t Found);

/// The outcome of folding an expression to a constant.
enum class FoldStatus {
  Constant,    ///< folded; the value is in the output argument
  NotConstant, ///< the expression reads something that is not a constant
  Failed,      ///< an error was reported (or an operand had one before)
};

/// Verifies one module. Not reusable: make one per verification.
class Checker {
public:
  explicit Checker(Module &M) : M(M), Lines(M.Source) {}

  /// Runs every check, fills the semantic fields and returns the errors
  /// (sorted by source position) as one DiagnosticError.
  llvm::Error run();

  //===--------------------------------------------------------------------===//
  // Diagnostics
  //===--------------------------------------------------------------------===//

  void error(SourceLoc L, const llvm::Twine &Msg);

  //===--------------------------------------------------------------------===//
  // Module level (Verifier.cpp)
  //===--------------------------------------------------------------------===//

  /// The most statements and expressions nested in one another that a
  /// declaration may have (its body or initializer is level 1). What the
  /// parser accepts stays well below it (about 1,020 levels at most: an
  /// `else if` chain of 255 links, then 252 blocks each under its `if`,
  /// then an expression tree 256 high; test/Sema/deep-trees.test); it
  /// bounds a module made with the builder API, so that the recursive
  /// passes over trees need at most a few hundred KiB of stack.
  static constexpr unsigned MaxTreeDepth = 2048;
  /// Reports the first node nested deeper than MaxTreeDepth, walking every
  /// tree with its own stack; false if there is one (nothing else may then
  /// walk the module).
  bool checkTreeDepth();
  void collectModuleNames();
  /// Checks a const (once) and folds its value; handles use-before-check
  /// and cycles between consts. \p UseLoc is where the const is named.
  void requireConst(ConstDecl &C, SourceLoc UseLoc);
  /// Checks the unchecked const \p Root and, first, the unchecked consts
  /// it depends on, with an explicit stack (no recursion per const).
  void checkConstChain(ConstDecl &Root);
  /// The consts \p C's initializer names, in the order checking meets them.
  std::vector<ConstDecl *> constsNamedBy(const ConstDecl &C) const;
  /// Reports a const whose declared type is not a scalar (and marks it bad).
  void checkConstType(ConstDecl &C);
  /// Checks one const whose dependencies are done (or on a cycle with it)
  /// and folds its value.
  void checkConst(ConstDecl &C);
  void checkSignature(FunctionDecl &F);
  /// The offset of \p L in M.Source, if it lies inside it (O(log lines)).
  std::optional<size_t> sourceOffset(SourceLoc L) const;
  /// Where the name of \p F is written (the node itself is located at its
  /// `fn`/`kernel` keyword); the keyword's location when unknown.
  SourceLoc nameLoc(const FunctionDecl &F) const;
  void checkCallGraph();
  /// Reports a name that is empty, not an identifier, a keyword, reserved
  /// (`__`) or, unless \p Local, a builtin's name; true if the name can be
  /// declared. A local or parameter may take a builtin's name and hides the
  /// builtin in its scope; a module-level name may not (docs/LangRef.md,
  /// "Builtins").
  bool checkIdentifier(llvm::StringRef Name, SourceLoc L, bool Local);

  //===--------------------------------------------------------------------===//
  // Statements and scopes (CheckStmt.cpp)
  //===--------------------------------------------------------------------===//

  void checkFunctionBody(FunctionDecl &F);
  void checkBlock(BlockStmt *B, SourceLoc ParentLoc);
  void checkStmt(Stmt *S, SourceLoc ParentLoc);
  void checkDeclStmt(DeclStmt &D);
  /// `let x = e;` / `var x = e;`: sets the type from the initializer.
  void checkInferredDecl(DeclStmt &D);
  /// Reports every read of a variable declared without an initializer
  /// that some path reaches before an assignment, and every assignment of
  /// such a `let` that may not be its first (DefiniteAssignment.cpp).
  void checkDefiniteAssignment(const FunctionDecl &F);
  void checkArrayDecl(DeclStmt &D);
  bool foldArrayDims(VarDecl &V);
  /// Constant tables and constant memory (CheckConstTables.cpp).
  void checkTableType(ConstDecl &C);
  void checkTable(ConstDecl &C);
  void checkConstantBytes();
  /// False, after an error, when \p I is an element of a table or of
  /// constant memory, which kernels only read (\p Action: "assign to").
  bool checkWritable(const IndexExpr &I, llvm::StringRef Action);
  /// The element count an array size expression gives, or std::nullopt
  /// after reporting why it gives none.
  std::optional<uint64_t> arraySize(Expr &Size);
  void checkAssign(AssignStmt &A);
  void checkIf(IfStmt &S);
  void checkWhile(WhileStmt &S);
  void checkFor(ForStmt &S);
  void checkReturn(ReturnStmt &S);
  void checkExprStmt(ExprStmt &S);
  /// The type of an assignment target, or Invalid (after an error).
  Type checkAssignTarget(Expr &Target, std::string &What);
  /// Checks a condition of `if`/`while`.
  void checkCondition(Expr *Cond, SourceLoc ParentLoc);

  /// Adds \p V to the innermost scope, reporting reserved names, shadowing
  /// and redeclaration.
  void declareLocal(const VarDecl &V);
  /// Puts the `var` copy of each mutable parameter of \p F first in its
  /// body (replacing the copies of an earlier verification), and declares
  /// the parameters, or their copies, in the current scope.
  void declareParams(FunctionDecl &F);
  /// "; the local 'NAME' (declared at L:C) hides the builtin" when \p Name
  /// is a builtin's and \p V declares it, else "".
  std::string hiddenBuiltinNote(llvm::StringRef Name, const VarDecl *V) const;
  /// The local declaration (or parameter) of \p Name, innermost first.
  const VarDecl *lookupLocal(llvm::StringRef Name) const;
  /// Resolves a name: locals, then module-level names, then builtins.
  Resolved resolveName(llvm::StringRef Name) const;
  void pushScope() { Scopes.emplace_back(); }
  void popScope() { Scopes.pop_back(); }

  //===--------------------------------------------------------------------===//
  // Expressions (CheckExpr.cpp)
  //===--------------------------------------------------------------------===//

  /// Checks \p E and returns its type: Void for a call of a void function,
  /// Invalid after an error. \p Hint is the type the context expects (or
  /// Invalid for none); an untyped literal expression takes it when it can.
  /// A null \p E is reported as missing at \p ParentLoc.
  Type checkExpr(Expr *E, SourceLoc ParentLoc, Type Hint = Type());
  /// checkExpr, and a void call is an error: a value is needed here.
  Type checkValue(Expr *E, SourceLoc ParentLoc, Type Hint = Type());
  /// Gives an untyped literal expression the type \p T (its context's type
  /// when usable, else its default) and checks that every literal fits.
  Type typeLiteral(Expr &E, Type Hint);
  void assignLiteralType(Expr &E, Type T);
  /// The type of `op T`, reporting a wrong operand type at \p Loc.
  Type unaryResult(UnaryOp Op, Type T, SourceLoc Loc);
  /// False, with an error at \p Loc, when \p T is f16 or bf16: storage
  /// types take no operator (LangRef, section 2).
  bool checkNotStorageOnly(Type T, llvm::StringRef OpText, SourceLoc Loc);
  bool checkIntLitFits(const IntLitExpr &L, Type T, bool Negated, SourceLoc At);
  bool checkFloatLitFits(const FloatLitExpr &L, Type T);
  Type checkIntLit(IntLitExpr &L);
  Type checkFloatLit(FloatLitExpr &L);
  Type checkName(NameExpr &N, bool AllowArray);
  Type checkUnary(UnaryExpr &U, Type Hint);
  Type checkAddrOf(UnaryExpr &U);
  /// Where the checked element \p I lives: its pointer's address space, or
  /// Local or Shared for an element of a thread's or a shared array.
  static AddrSpace elementAddrSpace(const IndexExpr &I);
  Type checkBinary(BinaryExpr &B, Type Hint);
  /// The result type of `L op R`, reporting any rule broken. \p OpText is
  /// the operator as written (`+`, `+=`); \p RLoc locates a type mismatch.
  Type binaryResult(BinaryOp Op, llvm::StringRef OpText, Type L, Type R, SourceLoc OpLoc,
                    SourceLoc RLoc);
  /// The types of two operands that must agree (of a binary operator, the
  /// sides of `?:`), typing an untyped literal one from the other.
  std::pair<Type, Type> checkOperandPair(Expr *A, Expr *B, SourceLoc Loc, Type Hint);
  Type checkCond(CondExpr &Q, Type Hint);
  Type checkCast(CastExpr &C);
  /// `a[i]`, `t[y][x]`, `p[i]`: the element's type. A row of a
  /// multi-dimensional array (`t[y]`) is an error unless \p AllowArray
  /// (the base of a further index).
  Type checkIndex(IndexExpr &I, bool AllowArray = false);
  Type checkMember(MemberExpr &Mem);
  //===--------------------------------------------------------------------===//
  // Structs and vector types (CheckStructs.cpp)
  //===--------------------------------------------------------------------===//
  /// Checks every struct declaration's fields (names, types, recursion)
  /// and lays each out.
  void checkStructDecls();
  /// The struct declared in the module, or the builtin vector type, named
  /// \p Name; null for any other name.
  const Aggregate *aggregateNamed(llvm::StringRef Name) const;
  /// True when \p Mem is a field of a struct or a lane of a vector (its
  /// base is not a builtin such as thread_idx, and is a struct value or
  /// names a field that no builtin has).
  bool isFieldAccess(MemberExpr &Mem);
  /// The type of the field \p Mem names (`n.key`, `p[i].value`, `v.w`).
  Type checkField(MemberExpr &Mem);
  /// `n.key = ...` / `p[i].key += ...`: the field's type, or Invalid after
  /// an error (a field of a `let` or a parameter cannot be assigned).
  Type checkFieldAssignTarget(MemberExpr &Mem, std::string &What);
  /// `Node { key: 1, value: 2.0 }`, `Node(1, 2.0)`, `f32x4(a, b, c, d)`:
  /// every field once, each of its type; puts the arguments in field order.
  Type checkConstruct(CallExpr &C, const Aggregate &A);
  /// `v op w` with a vector operand: element-wise `+ - * /` on two vectors
  /// of one type, and `% & | ^` on integer ones; anything else an error.
  Type vectorResult(BinaryOp Op, llvm::StringRef OpText, Type L, Type R, SourceLoc OpLoc);
  /// Where the field name of \p Mem is written (just after its '.').
  static SourceLoc fieldNameLoc(const MemberExpr &Mem);
  Type checkCall(CallExpr &C, Type Hint);
  Type checkFunctionCall(CallExpr &C, const FunctionDecl &Fn);
  /// Argument \p I of a call of a device function, one of whose modes
  /// (the parameter's \p P, the argument's) is `out` or `inout`: the
  /// modes agree and the argument is a place of P's type (CheckOutParams.cpp).
  bool checkModedArg(CallExpr &C, unsigned I, const VarDecl &P);
  /// No variable is passed to two `out`/`inout` parameters of \p C.
  void checkOutAliasing(const CallExpr &C);
  /// Reports a mode written on an argument of a builtin.
  void rejectArgModes(const CallExpr &C);
  /// The text of a literal as written in the source, or its value.
  std::string literalText(const Expr &E) const;

  //===--------------------------------------------------------------------===//
  // Builtins (BuiltinRules.cpp)
  //===--------------------------------------------------------------------===//

  Type checkBuiltinCall(CallExpr &C, BuiltinFunc F, Type Hint);
  /// `print("format", args...)` (CheckPrint.cpp).
  Type checkPrintCall(CallExpr &C);
  /// Checks argument \p I of a call against the type \p T it must have.
  Type checkArgAs(CallExpr &C, unsigned I, Type T);
  /// The common type T of the arguments \p Idx of a generic builtin:
  /// typed arguments decide it, literals adopt it (or \p Hint, when all of
  /// them are literals). Invalid after an error.
  Type inferGenericType(CallExpr &C, llvm::ArrayRef<unsigned> Idx, Type Hint);

  //===--------------------------------------------------------------------===//
  // Constants (ConstEval.cpp)
  //===--------------------------------------------------------------------===//

  /// Folds a checked expression. Division by zero and out-of-range shift
  /// amounts are reported here. On NotConstant, \p Culprit is the first
  /// subexpression that is not constant. \p Required: the place needs a
  /// constant (a const's initializer, an array size), and integer
  /// arithmetic whose result does not fit its type is an error there;
  /// elsewhere (a constant index, a constant step) it wraps, as at run
  /// time.
  FoldStatus fold(const Expr &E, ConstValue &Out, const Expr *&Culprit, bool Required = false);
  /// Why \p E (a node that fold() found not constant) is not: "'n' is a
  /// parameter, known only at run time", "a call is evaluated at run
  /// time", ...
  static std::string describeNonConstant(const Expr &E);
  /// "WHAT must be a constant expression, but <why E is not>; a constant
  /// expression is made of literals, consts, operators, '?:' and 'as'".
  static std::string notConstantMessage(const llvm::Twine &What, const Expr &E);
  /// The first node that can never be part of a constant expression (a
  /// call, an index, a member, `&`), or null.
  static const Expr *findNonConstantNode(const Expr *E);

  //===--------------------------------------------------------------------===//
  // State
  //===--------------------------------------------------------------------===//

  Module &M;
  /// Where the lines of M.Source start: locating a name is then O(log
  /// lines), not a scan from the start, so verification stays linear in
  /// the number of declarations.
  LineTable Lines;
  /// Diagnostics in the order found; sorted by position at the end.
  std::vector<Diagnostic> Diags;

  /// Module-level names: consts, functions and kernels (the first of each).
  llvm::StringMap<Decl *> ModuleNames;
  /// The ConstDecl that owns a const's VarDecl.
  llvm::DenseMap<const VarDecl *, ConstDecl *> ConstOf;
  enum class ConstState { Unchecked, InProgress, Done };
  llvm::DenseMap<const ConstDecl *, ConstState> ConstStates;
  /// Consts being checked, outermost first (for the cycle message).
  std::vector<const ConstDecl *> ConstStack;

  /// The `let`s declared without an initializer: assignable, once
  /// (checkDefiniteAssignment enforces the once).
  llvm::DenseSet<const VarDecl *> DeferredLets;
  /// Declarations whose type is unusable after an error: uses of them are
  /// silently Invalid so that one error does not cascade.
  llvm::DenseSet<const VarDecl *> BadDecls;
  /// Lexical scopes of the function being checked; [0] holds its params.
  std::vector<llvm::StringMap<const VarDecl *>> Scopes;

  /// The function or kernel whose body is being checked (null for consts).
  FunctionDecl *CurFn = nullptr;
  /// The return type `return` is checked against; Invalid when the
  /// signature was wrong (no cascades).
  Type CurReturnTy;
  unsigned LoopDepth = 0;

  /// Calls from each function to device functions, in source order, with
  /// the location of the first call of each callee.
  llvm::DenseMap<const FunctionDecl *, std::vector<std::pair<const FunctionDecl *, SourceLoc>>>
      Calls;
  /// Functions that call grid_sync() themselves.
  llvm::DenseSet<const FunctionDecl *> CallsGridSync;
  /// The functions that call print directly (CheckPrint.cpp).
  llvm::DenseSet<const FunctionDecl *> CallsPrint;
};

} // namespace gridjit::sema

#endif // GRIDJIT_LIB_SEMA_CHECKER_H
