//===- AST.h - The KIR module: declarations, statements, expressions -*- C++ -*-===//
//
// Part of gridjit. This is the one in-memory form of a KIR program. The
// parser and the builder API produce it; the verifier (Sema) checks it and
// fills in the semantic fields (marked "set by the verifier" below); the
// printer and the lowerings read it.
//
// Ownership is a tree of std::unique_ptr. Nodes use LLVM-style RTTI
// (`llvm::isa/cast/dyn_cast` work through `classof`). A node's location is
// the 1-based line and column of its first character in the source (0:0 for
// nodes made by the builder).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_AST_H
#define GRIDJIT_IR_AST_H

#include "gridjit/IR/Builtins.h"
#include "gridjit/IR/Type.h"
#include "gridjit/Support/SourceLoc.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace gridjit {

class FunctionDecl;
class Expr;
class Stmt;
class BlockStmt;
using ExprPtr = std::unique_ptr<Expr>;
using StmtPtr = std::unique_ptr<Stmt>;

//===----------------------------------------------------------------------===//
// Named values
//===----------------------------------------------------------------------===//

/// How a named value was declared.
enum class StorageKind : uint8_t {
  Param,     ///< a function or kernel parameter (immutable)
  Let,       ///< `let x: T = e;` or `let x = e;` (immutable)
  Var,       ///< `var x: T = e;`, `var x: T;`, `var x = e;` or `var a: [T; N];` (mutable)
  Shared,    ///< `shared t: [T; N];` / `shared t: [T];` / `shared x: T;` (kernels and device
             ///< functions)
  LoopIndex, ///< the index of a `for` loop (immutable in the body)
  Const,     ///< a module-level `const` (a scalar, or a table: `const W: [f32; 5] = [...];`)
  Constant,  ///< a module-level `constant NAME: [T; N];` (constant memory, set by the host)
};

/// How a device-function parameter passes its value (docs/LangRef.md, "Out
/// and inout parameters"): `In` by value (the default, every kernel
/// parameter); `Out` and `InOut` copy a result back into the caller's
/// place after the call (copy-in/copy-out), `InOut` copying its value in
/// first. The call repeats the mode on the argument (CallExpr::ArgModes).
enum class ParamMode : uint8_t { In, Out, InOut };

/// The mode as KIR spells it before a parameter or an argument: "",
/// "out" or "inout".
std::string_view spelling(ParamMode M);

/// One named value. Expressions that name it point here after verification.
struct VarDecl {
  std::string Name;
  /// The declared type. For arrays the count is filled in by the verifier
  /// when the size is not a plain literal (a constant expression). For a
  /// loop index, and for a `let`/`var` declared without a type
  /// (TypeInferred), the type is inferred by the verifier.
  Type Ty;
  /// For `let x = e;` / `var x = e;`: no type was written; the verifier
  /// sets Ty to the initializer's type (Invalid until then). The printer
  /// leaves the type out again, so the canonical form keeps it omitted.
  bool TypeInferred = false;
  SourceLoc Loc;
  StorageKind Storage = StorageKind::Let;
  /// For a parameter: declared `var NAME: T`, so the body may assign it.
  /// The verifier gives such a parameter a local copy (DeclStmt::CopyOf)
  /// that every use in the body names. False for every other storage.
  bool Mutable = false;
  /// For a device-function parameter: `out NAME: T` or `inout NAME: T`
  /// (assignable in the body, copied back to the caller's argument); In
  /// for every other declaration.
  ParamMode Mode = ParamMode::In;
  /// For array declarations: the size as written (a constant expression:
  /// literals, consts, operators, `?:` and casts); null for the unsized
  /// dynamic shared array. For a multi-dimensional array, the outermost
  /// dimension's (`16` in `[[f32; 17]; 16]`).
  ExprPtr ArraySize;
  /// For a multi-dimensional array: the sizes of the other dimensions,
  /// outer to inner (`17` in `[[f32; 17]; 16]`), as ArraySize. Empty when
  /// the type's counts stand alone (the builder given an array element
  /// type); otherwise one per inner dimension.
  std::vector<ExprPtr> InnerArraySizes;
};

/// The size expression of dimension \p I (outermost first) of array \p V,
/// or null where the type's count stands alone.
inline Expr *arraySizeExpr(const VarDecl &V, unsigned I) {
  if (I == 0)
    return V.ArraySize.get();
  return I - 1 < V.InnerArraySizes.size() ? V.InnerArraySizes[I - 1].get() : nullptr;
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

/// Expressions and statements own their operands and bodies. Every node
/// that owns others destroys them without recursion (releaseChildren in
/// AST.cpp): a tree as deep as the C++ builder can make (the verifier
/// refuses one deeper than the parser's limits, but it must be freed) never
/// overflows the stack when it dies.
class Expr {
public:
  enum Kind : uint8_t {
    IntLit,
    FloatLit,
    BoolLit,
    Name,
    Unary,
    Binary,
    Cond,
    Cast,
    Call,
    Index,
    Member
  };

  virtual ~Expr();
  Kind getKind() const { return K; }
  SourceLoc getLoc() const { return Loc; }

  /// The type of the value; set by the verifier (Invalid before).
  Type Ty;

protected:
  Expr(Kind K, SourceLoc Loc) : K(K), Loc(Loc) {}

private:
  Kind K;
  SourceLoc Loc;
};

/// `7`, `0xff`, `7u32`. The value is the literal's magnitude (a leading `-`
/// is a unary operator).
class IntLitExpr : public Expr {
public:
  IntLitExpr(SourceLoc L, uint64_t V, std::optional<ScalarKind> Suffix = std::nullopt)
      : Expr(IntLit, L), Value(V), Suffix(Suffix) {}
  static bool classof(const Expr *E) { return E->getKind() == IntLit; }
  uint64_t Value;
  /// The type suffix as written; without one the type comes from context.
  std::optional<ScalarKind> Suffix;
};

/// `1.0`, `2.5e-3`, `1.0f64`, `3f32`.
class FloatLitExpr : public Expr {
public:
  FloatLitExpr(SourceLoc L, double V, std::optional<ScalarKind> Suffix = std::nullopt)
      : Expr(FloatLit, L), Value(V), Suffix(Suffix) {}
  static bool classof(const Expr *E) { return E->getKind() == FloatLit; }
  double Value;
  std::optional<ScalarKind> Suffix;
};

class BoolLitExpr : public Expr {
public:
  BoolLitExpr(SourceLoc L, bool V) : Expr(BoolLit, L), Value(V) {}
  static bool classof(const Expr *E) { return E->getKind() == BoolLit; }
  bool Value;
};

/// A use of a name: a local, parameter, loop index, const, or a builtin
/// value (`lane_id`, `warp_size`, or the base of `thread_idx.x`).
class NameExpr : public Expr {
public:
  NameExpr(SourceLoc L, std::string N) : Expr(Name, L), Ident(std::move(N)) {}
  static bool classof(const Expr *E) { return E->getKind() == Name; }
  std::string Ident;
  /// Set by the verifier: the declaration named, or null for a builtin.
  const VarDecl *Decl = nullptr;
  /// Set by the verifier when the name is a builtin value.
  BuiltinValue Builtin = BuiltinValue::None;
};

enum class UnaryOp : uint8_t { Neg, Not, BitNot, AddrOf };

class UnaryExpr : public Expr {
public:
  ~UnaryExpr() override;
  UnaryExpr(SourceLoc L, UnaryOp Op, ExprPtr Operand)
      : Expr(Unary, L), Op(Op), Operand(std::move(Operand)) {}
  static bool classof(const Expr *E) { return E->getKind() == Unary; }
  UnaryOp Op;
  ExprPtr Operand;
};

enum class BinaryOp : uint8_t {
  Add,
  Sub,
  Mul,
  Div,
  Rem,
  Shl,
  Shr,
  And,
  Or,
  Xor, // arithmetic / bitwise
  LAnd,
  LOr, // short-circuit
  Eq,
  Ne,
  Lt,
  Le,
  Gt,
  Ge, // comparisons
};

/// The operator as KIR spells it ("+", "<<", "&&", ...).
std::string_view spelling(BinaryOp Op);
/// The operator as KIR spells it: "-", "!", "~", "&".
std::string_view spelling(UnaryOp Op);

class BinaryExpr : public Expr {
public:
  ~BinaryExpr() override;
  BinaryExpr(SourceLoc L, BinaryOp Op, ExprPtr LHS, ExprPtr RHS)
      : Expr(Binary, L), Op(Op), LHS(std::move(LHS)), RHS(std::move(RHS)) {}
  static bool classof(const Expr *E) { return E->getKind() == Binary; }
  BinaryOp Op;
  ExprPtr LHS, RHS;
};

/// `c ? a : b`: c is bool, a and b have the same type; only the chosen side
/// is evaluated (lowered as branches, never as a select of both sides).
class CondExpr : public Expr {
public:
  ~CondExpr() override;
  CondExpr(SourceLoc L, ExprPtr C, ExprPtr T, ExprPtr F)
      : Expr(Expr::Cond, L), C(std::move(C)), T(std::move(T)), F(std::move(F)) {}
  static bool classof(const Expr *E) { return E->getKind() == Expr::Cond; }
  ExprPtr C; ///< the condition
  ExprPtr T; ///< the value when C is true
  ExprPtr F; ///< the value when C is false
};

/// `e as T`; T is always a scalar type.
class CastExpr : public Expr {
public:
  ~CastExpr() override;
  CastExpr(SourceLoc L, ExprPtr Operand, Type DestTy)
      : Expr(Cast, L), Operand(std::move(Operand)), DestTy(DestTy) {}
  static bool classof(const Expr *E) { return E->getKind() == Cast; }
  ExprPtr Operand;
  Type DestTy;
};

/// A call of a device function or of a builtin function.
class CallExpr : public Expr {
public:
  ~CallExpr() override;
  CallExpr(SourceLoc L, std::string Callee, std::vector<ExprPtr> Args)
      : Expr(Call, L), Callee(std::move(Callee)), Args(std::move(Args)) {}
  static bool classof(const Expr *E) { return E->getKind() == Call; }
  std::string Callee;
  std::vector<ExprPtr> Args;
  /// Set by the verifier: the device function called, or null for a builtin.
  const FunctionDecl *Fn = nullptr;
  /// Set by the verifier when the callee is a builtin function.
  BuiltinFunc Builtin = BuiltinFunc::None;
  /// The mode written before each argument (`out q`, `inout acc`): empty
  /// when no argument has one, else one per argument. Such an argument is
  /// a place (a `var`, an element) that the call assigns.
  std::vector<ParamMode> ArgModes;

  /// The mode of argument \p I (In where none was written).
  ParamMode argMode(size_t I) const { return I < ArgModes.size() ? ArgModes[I] : ParamMode::In; }
  /// True when some argument is `out` or `inout`.
  bool hasOutArgs() const;
  /// `print("...", args)`: the format string as written between the quotes
  /// (escapes not decoded: gridjit/IR/PrintFormat.h reads it), and where
  /// its opening quote is. Unset for every other call.
  std::optional<std::string> Format;
  SourceLoc FormatLoc;
  /// For a struct literal `Node { key: 1, value: 2.0 }`: the field names
  /// as written, one per argument (the verifier puts the arguments, and
  /// these, in the struct's field order). Empty for a call, and for a
  /// positional constructor (`f32x4(a, b, c, d)`, `Node(1, 2.0)`).
  std::vector<std::string> FieldNames;
  /// Where each of FieldNames is written (the same length).
  std::vector<SourceLoc> FieldLocs;
  /// Set by the verifier when the callee names a struct or vector type: the
  /// value built from the arguments, one per field in field order.
  const Aggregate *Construct = nullptr;
};

/// `p[i]` or `a[i]`: an element of a pointer or an array (an lvalue).
class IndexExpr : public Expr {
public:
  ~IndexExpr() override;
  IndexExpr(SourceLoc L, ExprPtr Base, ExprPtr Index)
      : Expr(Expr::Index, L), Base(std::move(Base)), Idx(std::move(Index)) {}
  static bool classof(const Expr *E) { return E->getKind() == Expr::Index; }
  ExprPtr Base;
  ExprPtr Idx;
};

/// The name at the bottom of \p E's chain of index bases: `t` for `t[y][x]`
/// and for `t[i]`, `p` for `p[i]`; null where the chain ends in another
/// expression (`(p + 1)[i]`). Only a name and a row of an array have an
/// array type, so an element of an array always has one.
inline const NameExpr *indexedName(const IndexExpr &E) {
  const Expr *Base = E.Base.get();
  while (Base && Base->getKind() == Expr::Index)
    Base = static_cast<const IndexExpr *>(Base)->Base.get();
  return Base && Base->getKind() == Expr::Name ? static_cast<const NameExpr *>(Base) : nullptr;
}

/// Where an expression starts in the source. The parser locates some nodes
/// at their operator (`[`, `.`, `as`, a binary operator); diagnostics about
/// a whole expression (and the kernel checker's reports of an access)
/// point at its first character instead.
SourceLoc startLoc(const Expr *E);

/// `thread_idx.x` and friends (Field is 0, 1, 2 for `.x`, `.y`, `.z`), or
/// a field of a struct or a lane of a vector (`n.key`, `p[i].value`,
/// `v.w`: FieldName as written, Field its index, set by the verifier).
class MemberExpr : public Expr {
public:
  ~MemberExpr() override;
  MemberExpr(SourceLoc L, ExprPtr Base, unsigned Field, std::string FieldName = {})
      : Expr(Member, L), Base(std::move(Base)), Field(Field), FieldName(std::move(FieldName)) {}
  static bool classof(const Expr *E) { return E->getKind() == Member; }
  ExprPtr Base;
  unsigned Field;
  /// The field's name as written; empty for a builder-made `thread_idx.x`
  /// (the printer then spells Field as x, y or z).
  std::string FieldName;
  /// True when the base is a struct or vector value (set by the verifier):
  /// the member is its field Field, not a builtin's component.
  bool IsField = false;
};

/// The variable an assignment to \p Target changes: `x` for `x = ...` and
/// for a field `x.a.b = ...`; null for an element (`p[i]`, `p[i].a`).
inline const NameExpr *assignedVariable(const Expr &Target) {
  const Expr *E = &Target;
  while (E->getKind() == Expr::Member && static_cast<const MemberExpr *>(E)->IsField)
    E = static_cast<const MemberExpr *>(E)->Base.get();
  return E->getKind() == Expr::Name ? static_cast<const NameExpr *>(E) : nullptr;
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class Stmt {
public:
  enum Kind : uint8_t { Decl, Assign, If, While, For, Break, Continue, Return, ExprS, Block };

  virtual ~Stmt();
  Kind getKind() const { return K; }
  SourceLoc getLoc() const { return Loc; }

protected:
  Stmt(Kind K, SourceLoc Loc) : K(K), Loc(Loc) {}

private:
  Kind K;
  SourceLoc Loc;
};

/// `{ ... }`: a lexical scope.
class BlockStmt : public Stmt {
public:
  ~BlockStmt() override;
  explicit BlockStmt(SourceLoc L) : Stmt(Block, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == Block; }
  std::vector<StmtPtr> Body;
};
using BlockPtr = std::unique_ptr<BlockStmt>;

/// `let`, `var` or `shared` declaration. Var.Storage says which; Init is
/// null for arrays.
class DeclStmt : public Stmt {
public:
  ~DeclStmt() override;
  DeclStmt(SourceLoc L) : Stmt(Decl, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == Decl; }
  VarDecl Var;
  ExprPtr Init;
  /// Non-null for the `var` copy of a mutable parameter that the verifier
  /// puts first in the function's body (Var is a `var` of the parameter's
  /// name and type, Init names the parameter): the targets lower it as any
  /// `var`, so an assigned parameter needs nothing of its own there. The
  /// printer leaves it out (the parameter prints as `var NAME: T`), and
  /// verifying again replaces it.
  const VarDecl *CopyOf = nullptr;
};

enum class AssignOp : uint8_t { Assign, Add, Sub, Mul, Div, Rem, And, Or, Xor, Shl, Shr };

/// The operator as KIR spells it ("=", "+=", "<<=", ...).
std::string_view spelling(AssignOp Op);

/// `target op= value;` where target is a `var` name or an element.
class AssignStmt : public Stmt {
public:
  ~AssignStmt() override;
  AssignStmt(SourceLoc L, AssignOp Op, ExprPtr Target, ExprPtr Value)
      : Stmt(Assign, L), Op(Op), Target(std::move(Target)), Value(std::move(Value)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Assign; }
  AssignOp Op;
  ExprPtr Target;
  ExprPtr Value;
};

/// `if c { } else ...`; Else is null, a BlockStmt, or an IfStmt (`else if`).
class IfStmt : public Stmt {
public:
  ~IfStmt() override;
  IfStmt(SourceLoc L) : Stmt(If, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == If; }
  ExprPtr Cond;
  BlockPtr Then;
  StmtPtr Else;
};

/// `while c { }`, and the general loop `for init; c; update { }`, which is
/// a while loop with an Init and an Update: Init (null, or a `let`/`var`
/// DeclStmt with an initializer) runs once, in a scope of the loop's own
/// that Cond, Body and Update see; Cond is evaluated before every
/// iteration; Update (null, or an AssignStmt) runs after each iteration,
/// also one that `continue` ends. With neither, it prints as `while`.
class WhileStmt : public Stmt {
public:
  ~WhileStmt() override;
  WhileStmt(SourceLoc L) : Stmt(While, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == While; }
  /// True for the general `for` form (it has an Init or an Update).
  bool isGeneralFor() const { return Init || Update; }
  StmtPtr Init;
  ExprPtr Cond;
  BlockPtr Body;
  StmtPtr Update;
};

/// `for i in a..b step s { }`; Step is null when not written (1).
class ForStmt : public Stmt {
public:
  ~ForStmt() override;
  ForStmt(SourceLoc L) : Stmt(For, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == For; }
  VarDecl Index; ///< Storage == LoopIndex; its type is set by the verifier
  ExprPtr Begin, End, Step;
  BlockPtr Body;
};

class BreakStmt : public Stmt {
public:
  BreakStmt(SourceLoc L) : Stmt(Break, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == Break; }
};

class ContinueStmt : public Stmt {
public:
  ContinueStmt(SourceLoc L) : Stmt(Continue, L) {}
  static bool classof(const Stmt *S) { return S->getKind() == Continue; }
};

class ReturnStmt : public Stmt {
public:
  ~ReturnStmt() override;
  ReturnStmt(SourceLoc L, ExprPtr Value = nullptr) : Stmt(Return, L), Value(std::move(Value)) {}
  static bool classof(const Stmt *S) { return S->getKind() == Return; }
  ExprPtr Value; ///< null for `return;`
};

/// A call used as a statement.
class ExprStmt : public Stmt {
public:
  ~ExprStmt() override;
  ExprStmt(SourceLoc L, ExprPtr E) : Stmt(ExprS, L), E(std::move(E)) {}
  static bool classof(const Stmt *S) { return S->getKind() == ExprS; }
  ExprPtr E;
};

//===----------------------------------------------------------------------===//
// Module-level declarations
//===----------------------------------------------------------------------===//

class Decl {
public:
  enum Kind : uint8_t { Const, Function, Struct };
  virtual ~Decl();
  Kind getKind() const { return K; }
  SourceLoc getLoc() const { return Loc; }

protected:
  Decl(Kind K, SourceLoc Loc) : K(K), Loc(Loc) {}

private:
  Kind K;
  SourceLoc Loc;
};

/// The value of a constant expression, as computed by the verifier.
struct ConstValue {
  Type Ty;
  /// Integers: the value sign-extended to 64 bits for signed types and
  /// zero-extended for unsigned ones; bool: 0 or 1.
  uint64_t Int = 0;
  double Float = 0; ///< f32 (already rounded to float) and f64
};

/// The initializer of a constant table, `[a, b, c]` or `[[a, b], [c, d]]`:
/// a list of elements (Elems) or of rows (Rows, one list per row of a
/// multi-dimensional table); never both.
struct ArrayInit {
  SourceLoc Loc; ///< the '['
  std::vector<ExprPtr> Elems;
  std::vector<ArrayInit> Rows;
};

/// `const NAME: T = e;`, a constant table `const NAME: [T; N] = [e, ...];`,
/// or constant memory `constant NAME: [T; N];` (Var.Storage says which:
/// Const or Constant). Tables and constant memory are arrays in
/// AddrSpace::Constant (LangRef, "Constant tables and constant memory").
class ConstDecl : public Decl {
public:
  ConstDecl(SourceLoc L) : Decl(Const, L) {}
  static bool classof(const Decl *D) { return D->getKind() == Const; }
  VarDecl Var; ///< Storage == Const or Constant
  ExprPtr Init;
  /// Set by the verifier: the folded value of Init.
  std::optional<ConstValue> Value;
  /// A table's initializer (null for a scalar const and constant memory).
  std::unique_ptr<ArrayInit> Table;
  /// Set by the verifier: a table's elements, folded, row-major.
  std::vector<ConstValue> TableValues;
  /// `constant NAME: [T; N];`: constant memory the host sets.
  bool isConstantMemory() const { return Var.Storage == StorageKind::Constant; }
};

/// `struct NAME { FIELD: TYPE, ... }`: a plain struct type with C layout.
/// The parser resolves a struct's name in types declared after it (and in
/// its own fields, where the verifier reports the recursion), so Types
/// point at Agg, which lives as long as the module.
class StructDecl : public Decl {
public:
  StructDecl(SourceLoc L) : Decl(Struct, L) {}
  static bool classof(const Decl *D) { return D->getKind() == Struct; }
  Aggregate Agg;
  /// Where the name and each field's name are written.
  SourceLoc NameLoc;
  std::vector<SourceLoc> FieldLocs;
};

/// A device function (`fn`) or a kernel (`kernel`).
class FunctionDecl : public Decl {
public:
  FunctionDecl(SourceLoc L, bool IsKernel) : Decl(Function, L), IsKernel(IsKernel) {}
  static bool classof(const Decl *D) { return D->getKind() == Function; }
  bool IsKernel;
  std::string Name;
  std::vector<std::unique_ptr<VarDecl>> Params; ///< Storage == Param
  Type ReturnTy = Type::getVoid();              ///< always void for kernels
  BlockPtr Body;

  /// Set by the verifier: true when this function calls `grid_sync()`
  /// directly or through the functions it calls (a kernel for which this is
  /// true must be launched cooperatively).
  bool UsesGridSync = false;
  /// Set by the verifier: true when this function calls `print` directly
  /// or through the functions it calls (KernelInfo::Prints).
  bool UsesPrint = false;
};

/// A KIR module: its declarations in source order.
class Module {
public:
  Module() = default;
  Module(const Module &) = delete;
  Module &operator=(const Module &) = delete;

  /// Name used in diagnostics: the file name, `<stdin>`, or a builder name.
  std::string Name;
  /// The source text the module was parsed from (empty for built modules);
  /// kept so that later diagnostics can show the line and a caret.
  std::string Source;
  std::vector<std::unique_ptr<Decl>> Decls;

  /// The function or kernel with this name, or null.
  const FunctionDecl *getFunction(std::string_view Name) const;
  /// The kernels in source order.
  std::vector<const FunctionDecl *> getKernels() const;
  /// Set by the verifier once the module has passed.
  bool Verified = false;
};

} // namespace gridjit

#endif // GRIDJIT_IR_AST_H
