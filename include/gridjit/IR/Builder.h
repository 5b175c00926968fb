//===- Builder.h - Build KIR modules from C++ without text ------*- C++ -*-===//
//
// Part of gridjit. A small API for frontends that would rather not print
// KIR text: it makes the same Module that the parser makes from the
// equivalent text (so printModule() shows what was built, and verifyModule()
// checks it). For example, the spec's saxpy kernel:
//
//   using namespace gridjit;
//   using namespace gridjit::kir;
//   ModuleBuilder MB("saxpy.kir");
//   FunctionBuilder K = MB.kernel("saxpy", {{"n", i32()},
//                                            {"a", f32()},
//                                            {"x", ptr(f32())},
//                                            {"y", ptr(f32())}});
//   K.let("i", i32(), add(mul(blockIdx(0), blockDim(0)), threadIdx(0)));
//   IfBuilder Then = K.ifThen(lt(name("i"), name("n")));
//   Then.assign(index(name("y"), name("i")),
//               add(mul(name("a"), index(name("x"), name("i"))),
//                   index(name("y"), name("i"))));
//   std::unique_ptr<Module> M = MB.take();
//
// Expressions are made by the free functions of namespace gridjit::kir and
// passed around as ExprPtr; statements are appended, in order, through a
// BlockBuilder. Every node the builder makes has SourceLoc{} (0:0).
//
// The builder checks nothing about the language: names, types and rules are
// the verifier's job (call verifyModule() on the result). Passing a null
// ExprPtr where an expression is required is a programming error (assert).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_BUILDER_H
#define GRIDJIT_IR_BUILDER_H

#include "gridjit/IR/AST.h"

#include <cstdint>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace gridjit {

//===----------------------------------------------------------------------===//
// Types and expressions
//===----------------------------------------------------------------------===//

namespace kir {

/// \name Types
/// @{
Type boolTy();
Type i8();
Type i16();
Type i32();
Type i64();
Type u8();
Type u16();
Type u32();
Type u64();
Type f32();
Type f64();
/// `ptr<T>`, `ptr<T, shared>` or `ptr<T, local>`; \p Pointee must be a
/// scalar type. The address space defaults to global memory.
Type ptr(Type Pointee, AddrSpace AS = AddrSpace::Global);
/// @}

/// \name Literals
/// A negative value is built as unary `-` applied to the magnitude, which is
/// how the parser reads `-5` (literals themselves are never negative).
/// @{
/// An unsuffixed integer literal (`7`); its type comes from context.
ExprPtr intLit(int64_t V);
/// An integer literal with a type suffix (`7u32`). A float \p Suffix makes a
/// float literal (`7.0f32`), as the parser reads `7f32`.
ExprPtr intLit(int64_t V, Type Suffix);
/// An unsigned integer literal; for values above INT64_MAX (`0xffff...u64`).
ExprPtr uintLit(uint64_t V);
ExprPtr uintLit(uint64_t V, Type Suffix);
/// An unsuffixed float literal (`1.5`); its type comes from context.
ExprPtr floatLit(double V);
/// A float literal with a type suffix (`1.5f64`).
ExprPtr floatLit(double V, Type Suffix);
ExprPtr boolLit(bool V);

/// The literal for any C++ arithmetic value: bool gives `true`/`false`,
/// floating point a float literal, integers an integer literal; without a
/// suffix. `lit(1)` is `1`, `lit(1.0)` is `1.0`, `lit(true)` is `true`.
template <typename T>
  requires std::is_arithmetic_v<T>
ExprPtr lit(T V) {
  if constexpr (std::is_same_v<T, bool>)
    return boolLit(V);
  else if constexpr (std::is_floating_point_v<T>)
    return floatLit(static_cast<double>(V));
  else if constexpr (std::is_signed_v<T>)
    return intLit(static_cast<int64_t>(V));
  else
    return uintLit(static_cast<uint64_t>(V));
}

/// The literal with a type suffix: `lit(7, u32())` is `7u32`,
/// `lit(1.0, f64())` is `1.0f64`.
template <typename T>
  requires(std::is_arithmetic_v<T> && !std::is_same_v<T, bool>)
ExprPtr lit(T V, Type Suffix) {
  if constexpr (std::is_floating_point_v<T>)
    return floatLit(static_cast<double>(V), Suffix);
  else if constexpr (std::is_signed_v<T>)
    return intLit(static_cast<int64_t>(V), Suffix);
  else
    return uintLit(static_cast<uint64_t>(V), Suffix);
}
/// @}

/// A use of a name: a local, parameter, loop index, `const` or builtin value.
ExprPtr name(std::string Ident);

/// \name Builtin values (type i32)
/// \p Dim is 0, 1 or 2 for `.x`, `.y`, `.z`.
/// @{
ExprPtr threadIdx(unsigned Dim); ///< `thread_idx.x`
ExprPtr blockIdx(unsigned Dim);  ///< `block_idx.x`
ExprPtr blockDim(unsigned Dim);  ///< `block_dim.x`
ExprPtr gridDim(unsigned Dim);   ///< `grid_dim.x`
ExprPtr laneId();                ///< `lane_id`
ExprPtr warpSize();              ///< `warp_size`
/// `null`: the null pointer, of the pointer type its context gives it
/// (`cast(null(), Type::getPointer(...))` where there is none).
ExprPtr null();
/// `Base.x` / `.y` / `.z` for any base expression.
ExprPtr member(ExprPtr Base, unsigned Dim);
/// @}

/// \name Unary operators
/// @{
ExprPtr unary(UnaryOp Op, ExprPtr E);
ExprPtr neg(ExprPtr E);        ///< `-e`
ExprPtr logicalNot(ExprPtr E); ///< `!e`
ExprPtr bitNot(ExprPtr E);     ///< `~e`
ExprPtr addrOf(ExprPtr E);     ///< `&e`, e.g. `addrOf(index(name("a"), i))`
/// @}

/// \name Binary operators
/// @{
ExprPtr binary(BinaryOp Op, ExprPtr L, ExprPtr R);
ExprPtr add(ExprPtr L, ExprPtr R);        ///< `l + r` (also pointer + int)
ExprPtr sub(ExprPtr L, ExprPtr R);        ///< `l - r`
ExprPtr mul(ExprPtr L, ExprPtr R);        ///< `l * r`
ExprPtr div(ExprPtr L, ExprPtr R);        ///< `l / r`
ExprPtr rem(ExprPtr L, ExprPtr R);        ///< `l % r`
ExprPtr shl(ExprPtr L, ExprPtr R);        ///< `l << r`
ExprPtr shr(ExprPtr L, ExprPtr R);        ///< `l >> r`
ExprPtr bitAnd(ExprPtr L, ExprPtr R);     ///< `l & r`
ExprPtr bitOr(ExprPtr L, ExprPtr R);      ///< `l | r`
ExprPtr bitXor(ExprPtr L, ExprPtr R);     ///< `l ^ r`
ExprPtr logicalAnd(ExprPtr L, ExprPtr R); ///< `l && r`
ExprPtr logicalOr(ExprPtr L, ExprPtr R);  ///< `l || r`
ExprPtr eq(ExprPtr L, ExprPtr R);         ///< `l == r`
ExprPtr ne(ExprPtr L, ExprPtr R);         ///< `l != r`
ExprPtr lt(ExprPtr L, ExprPtr R);         ///< `l < r`
ExprPtr le(ExprPtr L, ExprPtr R);         ///< `l <= r`
ExprPtr gt(ExprPtr L, ExprPtr R);         ///< `l > r`
ExprPtr ge(ExprPtr L, ExprPtr R);         ///< `l >= r`
/// @}

/// `c ? t : f`: only the chosen side is evaluated; \p C should be `bool`
/// and \p T and \p F of one type.
ExprPtr cond(ExprPtr C, ExprPtr T, ExprPtr F);
/// `e as T`; \p To should be a scalar type.
ExprPtr cast(ExprPtr E, Type To);
/// `base[i]`: an element of a pointer or array (an lvalue).
ExprPtr index(ExprPtr Base, ExprPtr Idx);

/// A call of a device function or builtin function with the arguments
/// already collected.
ExprPtr callv(std::string Callee, std::vector<ExprPtr> Args);
ExprPtr callv(BuiltinFunc F, std::vector<ExprPtr> Args);
/// A call of a device function with `out` / `inout` arguments: \p Modes
/// has one entry per argument (ParamMode::In for a value), e.g.
/// `callv("divmod", {..., name("q"), name("r")}, {In, In, Out, Out})`.
ExprPtr callv(std::string Callee, std::vector<ExprPtr> Args, std::vector<ParamMode> Modes);
/// `print("FORMAT", args...)`: \p Format as KIR text between the quotes
/// (escapes as written: "x = {}\\n" for a `\n`; docs/LangRef.md,
/// "Printing"); the verifier checks it.
ExprPtr printv(std::string Format, std::vector<ExprPtr> Args);

/// `callee(args...)`: a call of a device function or builtin function by
/// name, e.g. `call("atomic_add", name("p"), lit(1))`, or of a builtin by
/// its enumerator, e.g. `call(BuiltinFunc::ShflDown, name("v"), lit(16))`.
template <typename... ArgTs>
  requires(std::is_convertible_v<ArgTs, ExprPtr> && ...)
ExprPtr call(std::string Callee, ArgTs &&...Args) {
  std::vector<ExprPtr> V;
  V.reserve(sizeof...(Args));
  (V.push_back(std::forward<ArgTs>(Args)), ...);
  return callv(std::move(Callee), std::move(V));
}
template <typename... ArgTs>
  requires(std::is_convertible_v<ArgTs, ExprPtr> && ...)
ExprPtr call(BuiltinFunc F, ArgTs &&...Args) {
  std::vector<ExprPtr> V;
  V.reserve(sizeof...(Args));
  (V.push_back(std::forward<ArgTs>(Args)), ...);
  return callv(F, std::move(V));
}

} // namespace kir

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

class IfBuilder;

/// Appends statements to one block. A BlockBuilder is a cheap, copyable,
/// non-owning handle: it stays valid as long as the Module that holds the
/// block is alive (also after ModuleBuilder::take()). Statement methods
/// return *this so that calls can be chained; control-flow methods return a
/// builder for the new nested block.
class BlockBuilder {
public:
  explicit BlockBuilder(BlockStmt &B) : Block(&B) {}

  /// The block being built.
  BlockStmt &getBlock() const { return *Block; }

  /// \name Declarations
  /// @{
  /// `let Name: T = Init;`
  BlockBuilder &let(std::string Name, Type T, ExprPtr Init);
  /// `var Name: T = Init;`
  BlockBuilder &var(std::string Name, Type T, ExprPtr Init);
  /// `let Name = Init;`: the verifier gives Name the type of Init.
  BlockBuilder &let(std::string Name, ExprPtr Init);
  /// `var Name = Init;`: the verifier gives Name the type of Init.
  BlockBuilder &var(std::string Name, ExprPtr Init);
  /// `var Name: T;`: assigned later; the verifier rejects a read that some
  /// path reaches before an assignment (docs/LangRef.md, "Definite
  /// assignment").
  BlockBuilder &var(std::string Name, Type T);
  /// `var Name: [Elem; Count];` (a thread-local array, zero-filled). Elem
  /// is a scalar, or for a multi-dimensional array a sized array type, the
  /// row: varArray("t", Type::getArray(ScalarKind::F32, 17), 16) declares
  /// `var t: [[f32; 17]; 16];` (index it `index(index(name("t"), y), x)`).
  /// The same holds for every varArray and sharedArray below; the row's
  /// counts print as numbers.
  BlockBuilder &varArray(std::string Name, Type Elem, uint64_t Count);
  /// `var Name: [Elem; ConstName];` with the size given by a module `const`.
  BlockBuilder &varArray(std::string Name, Type Elem, std::string ConstName);
  /// `var Name: [Elem; Size];` with any constant expression as the size
  /// (`mul(add(name("S"), lit(2)), name("D"))`); the verifier folds it.
  BlockBuilder &varArray(std::string Name, Type Elem, ExprPtr Size);
  /// `shared Name: [Elem; Count];` (kernels only).
  BlockBuilder &sharedArray(std::string Name, Type Elem, uint64_t Count);
  /// `shared Name: [Elem; ConstName];`
  BlockBuilder &sharedArray(std::string Name, Type Elem, std::string ConstName);
  /// `shared Name: [Elem; Size];` with any constant expression as the size.
  BlockBuilder &sharedArray(std::string Name, Type Elem, ExprPtr Size);
  /// `shared Name: [Elem];`: the kernel's dynamic shared memory (every
  /// such name of a kernel starts at its first byte).
  BlockBuilder &dynamicShared(std::string Name, Type Elem);
  /// `shared Name: T;`: one scalar in the block's shared memory (kernels
  /// only), read and assigned by name, `addrOf(name(Name))` its address.
  BlockBuilder &sharedScalar(std::string Name, Type T);
  /// @}

  /// \name Assignments
  /// @{
  /// `Target = Value;`
  BlockBuilder &assign(ExprPtr Target, ExprPtr Value);
  /// `Target op= Value;`, e.g. `assign(name("s"), AssignOp::Add, lit(1))`
  /// for `s += 1;`.
  BlockBuilder &assign(ExprPtr Target, AssignOp Op, ExprPtr Value);
  /// @}

  /// \name Control flow
  /// @{
  /// `if Cond { ... }`. The result builds the then-block and can add
  /// `else if` / `else` (see IfBuilder).
  IfBuilder ifThen(ExprPtr Cond);
  /// `while Cond { ... }`; returns the body's builder.
  BlockBuilder whileLoop(ExprPtr Cond);
  /// `for Index in Begin..End { ... }`, or `... step Step` when \p Step is
  /// not null; returns the body's builder.
  BlockBuilder forLoop(std::string Index, ExprPtr Begin, ExprPtr End, ExprPtr Step = nullptr);
  /// The general loop `for var Name: T = Init; Cond; Name Op Step { ... }`,
  /// e.g. `forVarLoop("s", u32(), half, gt(name("s"), uintLit(0)),
  /// AssignOp::Shr, uintLit(1))` for `for var s: u32 = half; s > 0; s >>= 1`;
  /// returns the body's builder (LangRef, section 4).
  BlockBuilder forVarLoop(std::string Name, Type T, ExprPtr Init, ExprPtr Cond, AssignOp Op,
                          ExprPtr Step);
  /// A nested `{ ... }` block (a new scope); returns its builder.
  BlockBuilder block();
  BlockBuilder &breakLoop();    ///< `break;`
  BlockBuilder &continueLoop(); ///< `continue;`
  BlockBuilder &ret();          ///< `return;`
  BlockBuilder &ret(ExprPtr V); ///< `return V;`
  /// @}

  /// \name Expression statements
  /// @{
  /// `E;` (KIR allows calls here).
  BlockBuilder &eval(ExprPtr E);
  /// `callee(args...);`, e.g. `call("sync_threads")`.
  template <typename... ArgTs>
    requires(std::is_convertible_v<ArgTs, ExprPtr> && ...)
  BlockBuilder &call(std::string Callee, ArgTs &&...Args) {
    return eval(kir::call(std::move(Callee), std::forward<ArgTs>(Args)...));
  }
  template <typename... ArgTs>
    requires(std::is_convertible_v<ArgTs, ExprPtr> && ...)
  BlockBuilder &call(BuiltinFunc F, ArgTs &&...Args) {
    return eval(kir::call(F, std::forward<ArgTs>(Args)...));
  }
  /// `print("FORMAT", args...);` (kir::printv).
  template <typename... ArgTs>
    requires(std::is_convertible_v<ArgTs, ExprPtr> && ...)
  BlockBuilder &print(std::string Format, ArgTs &&...Args) {
    std::vector<ExprPtr> V;
    (V.push_back(std::forward<ArgTs>(Args)), ...);
    return eval(kir::printv(std::move(Format), std::move(V)));
  }
  /// @}

  /// Appends any statement (an escape hatch for hand-made nodes).
  BlockBuilder &append(StmtPtr S);

private:
  BlockBuilder &declare(StorageKind Storage, std::string Name, Type T, ExprPtr Init,
                        ExprPtr ArraySize, bool TypeInferred = false);

  BlockStmt *Block;
};

/// The builder for an `if`: as a BlockBuilder it appends to the then-block;
/// elseIf() and elseBlock() complete the statement. Each of them may be
/// called at most once per IfBuilder (an `if` has one `else`).
class IfBuilder : public BlockBuilder {
public:
  explicit IfBuilder(IfStmt &S) : BlockBuilder(*S.Then), If(&S) {}

  /// Adds `else if Cond { ... }` and returns its builder.
  IfBuilder elseIf(ExprPtr Cond);
  /// Adds `else { ... }` and returns the else-block's builder.
  BlockBuilder elseBlock();

  IfStmt &getIf() const { return *If; }

private:
  IfStmt *If;
};

/// A device function or kernel under construction; as a BlockBuilder it
/// appends to the body.
class FunctionBuilder : public BlockBuilder {
public:
  explicit FunctionBuilder(FunctionDecl &F) : BlockBuilder(*F.Body), Fn(&F) {}
  FunctionDecl &getFunction() const { return *Fn; }

private:
  FunctionDecl *Fn;
};

/// A parameter of a kernel or function: `Name: Ty`, or `var Name: Ty` when
/// \p Mutable (the body may assign it; default false), or `out Name: Ty` /
/// `inout Name: Ty` by \p Mode (device functions only; default In).
struct Param {
  std::string Name;
  Type Ty;
  bool Mutable = false;
  ParamMode Mode = ParamMode::In;
};

/// Builds one Module, declarations in the order they are added.
class ModuleBuilder {
public:
  /// \p Name becomes Module::Name (used in diagnostics).
  explicit ModuleBuilder(std::string Name = "<builder>");

  /// `const Name: T = Init;`
  ModuleBuilder &constant(std::string Name, Type T, ExprPtr Init);
  /// `kernel Name(params) { ... }`; returns the body's builder.
  FunctionBuilder kernel(std::string Name, std::vector<Param> Params);
  /// `fn Name(params) -> Ret { ... }`; without \p Ret (void) the function
  /// returns nothing. Returns the body's builder.
  FunctionBuilder function(std::string Name, std::vector<Param> Params, Type Ret = Type::getVoid());

  /// The module built so far. Builders handed out earlier keep pointing into
  /// it.
  Module &getModule() const { return *M; }
  /// Hands the module over. The ModuleBuilder then starts a new, empty
  /// module with the same name.
  std::unique_ptr<Module> take();

private:
  FunctionBuilder addFunction(bool IsKernel, std::string Name, std::vector<Param> Params, Type Ret);

  std::unique_ptr<Module> M;
};

} // namespace gridjit

#endif // GRIDJIT_IR_BUILDER_H
