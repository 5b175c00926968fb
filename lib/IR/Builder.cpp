//===- Builder.cpp - Build KIR modules from C++ without text --------------===//
//
// Part of gridjit. Every node is made the way the parser makes the
// corresponding text, so that a built module and a parsed one print (and
// verify, and compile) the same.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Builder.h"

#include <cassert>
#include <cmath>

using namespace gridjit;
using namespace gridjit::kir;

namespace {
/// Builder-made nodes have no place in any source text.
constexpr SourceLoc NoLoc{};

ExprPtr checked(ExprPtr E) {
  assert(E && "the builder needs an expression here, not null");
  return E;
}

ScalarKind suffixKind(Type Suffix) {
  assert(Suffix.isScalar() && "a literal suffix is a scalar type");
  return Suffix.getScalarKind();
}

/// A literal of magnitude \p Mag with its suffix; a float suffix makes a
/// float literal (`3f32` reads as the float literal 3.0f32).
ExprPtr magnitudeLit(uint64_t Mag, std::optional<ScalarKind> Suffix) {
  if (Suffix && isFloatScalar(*Suffix))
    return std::make_unique<FloatLitExpr>(NoLoc, static_cast<double>(Mag), Suffix);
  return std::make_unique<IntLitExpr>(NoLoc, Mag, Suffix);
}

ExprPtr signedLit(int64_t V, std::optional<ScalarKind> Suffix) {
  if (V >= 0)
    return magnitudeLit(static_cast<uint64_t>(V), Suffix);
  // -(V) without overflow for INT64_MIN.
  uint64_t Mag = ~static_cast<uint64_t>(V) + 1;
  return neg(magnitudeLit(Mag, Suffix));
}

ExprPtr signedFloatLit(double V, std::optional<ScalarKind> Suffix) {
  if (std::signbit(V))
    return neg(std::make_unique<FloatLitExpr>(NoLoc, -V, Suffix));
  return std::make_unique<FloatLitExpr>(NoLoc, V, Suffix);
}

ExprPtr builtinMember(BuiltinValue V, unsigned Dim) {
  return member(name(std::string(builtinValueName(V))), Dim);
}
} // namespace

//===----------------------------------------------------------------------===//
// Types
//===----------------------------------------------------------------------===//

Type kir::boolTy() { return Type::getScalar(ScalarKind::Bool); }
Type kir::i8() { return Type::getScalar(ScalarKind::I8); }
Type kir::i16() { return Type::getScalar(ScalarKind::I16); }
Type kir::i32() { return Type::getScalar(ScalarKind::I32); }
Type kir::i64() { return Type::getScalar(ScalarKind::I64); }
Type kir::u8() { return Type::getScalar(ScalarKind::U8); }
Type kir::u16() { return Type::getScalar(ScalarKind::U16); }
Type kir::u32() { return Type::getScalar(ScalarKind::U32); }
Type kir::u64() { return Type::getScalar(ScalarKind::U64); }
Type kir::f32() { return Type::getScalar(ScalarKind::F32); }
Type kir::f64() { return Type::getScalar(ScalarKind::F64); }

Type kir::ptr(Type Pointee, AddrSpace AS) {
  assert(Pointee.isScalar() && "ptr<T> needs a scalar T");
  return Type::getPointerTo(Pointee, AS);
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

ExprPtr kir::intLit(int64_t V) { return signedLit(V, std::nullopt); }
ExprPtr kir::intLit(int64_t V, Type Suffix) { return signedLit(V, suffixKind(Suffix)); }
ExprPtr kir::uintLit(uint64_t V) { return magnitudeLit(V, std::nullopt); }
ExprPtr kir::uintLit(uint64_t V, Type Suffix) { return magnitudeLit(V, suffixKind(Suffix)); }
ExprPtr kir::floatLit(double V) { return signedFloatLit(V, std::nullopt); }
ExprPtr kir::floatLit(double V, Type Suffix) { return signedFloatLit(V, suffixKind(Suffix)); }
ExprPtr kir::boolLit(bool V) { return std::make_unique<BoolLitExpr>(NoLoc, V); }

ExprPtr kir::name(std::string Ident) { return std::make_unique<NameExpr>(NoLoc, std::move(Ident)); }

ExprPtr kir::threadIdx(unsigned Dim) { return builtinMember(BuiltinValue::ThreadIdx, Dim); }
ExprPtr kir::blockIdx(unsigned Dim) { return builtinMember(BuiltinValue::BlockIdx, Dim); }
ExprPtr kir::blockDim(unsigned Dim) { return builtinMember(BuiltinValue::BlockDim, Dim); }
ExprPtr kir::gridDim(unsigned Dim) { return builtinMember(BuiltinValue::GridDim, Dim); }
ExprPtr kir::laneId() { return name(std::string(builtinValueName(BuiltinValue::LaneId))); }
ExprPtr kir::warpSize() { return name(std::string(builtinValueName(BuiltinValue::WarpSize))); }
ExprPtr kir::null() { return name(std::string(builtinValueName(BuiltinValue::Null))); }

ExprPtr kir::member(ExprPtr Base, unsigned Dim) {
  assert(Dim < 3 && "a member is .x, .y or .z");
  return std::make_unique<MemberExpr>(NoLoc, checked(std::move(Base)), Dim);
}

ExprPtr kir::unary(UnaryOp Op, ExprPtr E) {
  return std::make_unique<UnaryExpr>(NoLoc, Op, checked(std::move(E)));
}
ExprPtr kir::neg(ExprPtr E) { return unary(UnaryOp::Neg, std::move(E)); }
ExprPtr kir::logicalNot(ExprPtr E) { return unary(UnaryOp::Not, std::move(E)); }
ExprPtr kir::bitNot(ExprPtr E) { return unary(UnaryOp::BitNot, std::move(E)); }
ExprPtr kir::addrOf(ExprPtr E) { return unary(UnaryOp::AddrOf, std::move(E)); }

ExprPtr kir::binary(BinaryOp Op, ExprPtr L, ExprPtr R) {
  return std::make_unique<BinaryExpr>(NoLoc, Op, checked(std::move(L)), checked(std::move(R)));
}

#define GRIDJIT_BINARY(Fn, Op)                                                                     \
  ExprPtr kir::Fn(ExprPtr L, ExprPtr R) { return binary(BinaryOp::Op, std::move(L), std::move(R)); }
GRIDJIT_BINARY(add, Add)
GRIDJIT_BINARY(sub, Sub)
GRIDJIT_BINARY(mul, Mul)
GRIDJIT_BINARY(div, Div)
GRIDJIT_BINARY(rem, Rem)
GRIDJIT_BINARY(shl, Shl)
GRIDJIT_BINARY(shr, Shr)
GRIDJIT_BINARY(bitAnd, And)
GRIDJIT_BINARY(bitOr, Or)
GRIDJIT_BINARY(bitXor, Xor)
GRIDJIT_BINARY(logicalAnd, LAnd)
GRIDJIT_BINARY(logicalOr, LOr)
GRIDJIT_BINARY(eq, Eq)
GRIDJIT_BINARY(ne, Ne)
GRIDJIT_BINARY(lt, Lt)
GRIDJIT_BINARY(le, Le)
GRIDJIT_BINARY(gt, Gt)
GRIDJIT_BINARY(ge, Ge)
#undef GRIDJIT_BINARY

ExprPtr kir::cond(ExprPtr C, ExprPtr T, ExprPtr F) {
  return std::make_unique<CondExpr>(NoLoc, checked(std::move(C)), checked(std::move(T)),
                                    checked(std::move(F)));
}

ExprPtr kir::cast(ExprPtr E, Type To) {
  return std::make_unique<CastExpr>(NoLoc, checked(std::move(E)), To);
}

ExprPtr kir::index(ExprPtr Base, ExprPtr Idx) {
  return std::make_unique<IndexExpr>(NoLoc, checked(std::move(Base)), checked(std::move(Idx)));
}

ExprPtr kir::callv(std::string Callee, std::vector<ExprPtr> Args) {
  for ([[maybe_unused]] const ExprPtr &A : Args)
    assert(A && "a call argument is null");
  return std::make_unique<CallExpr>(NoLoc, std::move(Callee), std::move(Args));
}

ExprPtr kir::callv(std::string Callee, std::vector<ExprPtr> Args, std::vector<ParamMode> Modes) {
  assert(Modes.size() == Args.size() && "one mode per argument");
  ExprPtr E = callv(std::move(Callee), std::move(Args));
  static_cast<CallExpr &>(*E).ArgModes = std::move(Modes);
  return E;
}

ExprPtr kir::printv(std::string Format, std::vector<ExprPtr> Args) {
  ExprPtr E = callv(std::string(builtinFuncName(BuiltinFunc::Print)), std::move(Args));
  static_cast<CallExpr &>(*E).Format = std::move(Format);
  return E;
}

ExprPtr kir::callv(BuiltinFunc F, std::vector<ExprPtr> Args) {
  assert(F != BuiltinFunc::None && "not a builtin function");
  return callv(std::string(builtinFuncName(F)), std::move(Args));
}

//===----------------------------------------------------------------------===//
// BlockBuilder
//===----------------------------------------------------------------------===//

BlockBuilder &BlockBuilder::append(StmtPtr S) {
  assert(S && "appending a null statement");
  Block->Body.push_back(std::move(S));
  return *this;
}

BlockBuilder &BlockBuilder::declare(StorageKind Storage, std::string Name, Type T, ExprPtr Init,
                                    ExprPtr ArraySize, bool TypeInferred) {
  auto D = std::make_unique<DeclStmt>(NoLoc);
  D->Var.Name = std::move(Name);
  D->Var.Ty = T;
  D->Var.TypeInferred = TypeInferred;
  D->Var.Storage = Storage;
  D->Var.ArraySize = std::move(ArraySize);
  D->Init = std::move(Init);
  return append(std::move(D));
}

BlockBuilder &BlockBuilder::let(std::string Name, Type T, ExprPtr Init) {
  return declare(StorageKind::Let, std::move(Name), T, checked(std::move(Init)), nullptr);
}

BlockBuilder &BlockBuilder::var(std::string Name, Type T, ExprPtr Init) {
  return declare(StorageKind::Var, std::move(Name), T, checked(std::move(Init)), nullptr);
}

BlockBuilder &BlockBuilder::let(std::string Name, ExprPtr Init) {
  return declare(StorageKind::Let, std::move(Name), Type(), checked(std::move(Init)), nullptr,
                 /*TypeInferred=*/true);
}

BlockBuilder &BlockBuilder::var(std::string Name, ExprPtr Init) {
  return declare(StorageKind::Var, std::move(Name), Type(), checked(std::move(Init)), nullptr,
                 /*TypeInferred=*/true);
}

BlockBuilder &BlockBuilder::var(std::string Name, Type T) {
  return declare(StorageKind::Var, std::move(Name), T, nullptr, nullptr);
}

// A scalar, or a sized array of fewer than MaxArrayRank dimensions (a row).
[[maybe_unused]] static bool isArrayElement(const Type &Elem) {
  return Elem.isScalar() ||
         (Elem.isArray() && Elem.getArrayCount() != 0 && Elem.getArrayRank() < MaxArrayRank);
}

BlockBuilder &BlockBuilder::varArray(std::string Name, Type Elem, uint64_t Count) {
  assert(isArrayElement(Elem) && "array elements are scalars or sized arrays");
  return declare(StorageKind::Var, std::move(Name), Type::getArrayOf(Elem, Count), nullptr,
                 uintLit(Count));
}

// For a size given by a constant expression, the count stays 0 until the
// verifier folds it (as for a parsed module).
BlockBuilder &BlockBuilder::varArray(std::string Name, Type Elem, ExprPtr Size) {
  assert(isArrayElement(Elem) && "array elements are scalars or sized arrays");
  return declare(StorageKind::Var, std::move(Name), Type::getArrayOf(Elem, 0), nullptr,
                 checked(std::move(Size)));
}

BlockBuilder &BlockBuilder::varArray(std::string Name, Type Elem, std::string ConstName) {
  return varArray(std::move(Name), Elem, kir::name(std::move(ConstName)));
}

BlockBuilder &BlockBuilder::sharedArray(std::string Name, Type Elem, uint64_t Count) {
  assert(isArrayElement(Elem) && "array elements are scalars or sized arrays");
  return declare(StorageKind::Shared, std::move(Name),
                 Type::getArrayOf(Elem, Count, AddrSpace::Shared), nullptr, uintLit(Count));
}

BlockBuilder &BlockBuilder::sharedArray(std::string Name, Type Elem, ExprPtr Size) {
  assert(isArrayElement(Elem) && "array elements are scalars or sized arrays");
  return declare(StorageKind::Shared, std::move(Name), Type::getArrayOf(Elem, 0, AddrSpace::Shared),
                 nullptr, checked(std::move(Size)));
}

BlockBuilder &BlockBuilder::sharedArray(std::string Name, Type Elem, std::string ConstName) {
  return sharedArray(std::move(Name), Elem, kir::name(std::move(ConstName)));
}

BlockBuilder &BlockBuilder::dynamicShared(std::string Name, Type Elem) {
  assert(Elem.isScalar() && "array elements are scalars");
  return declare(StorageKind::Shared, std::move(Name),
                 Type::getArray(Elem.getScalarKind(), 0, AddrSpace::Shared), nullptr, nullptr);
}

BlockBuilder &BlockBuilder::sharedScalar(std::string Name, Type T) {
  assert(T.isScalar() && "a shared scalar has a scalar type");
  return declare(StorageKind::Shared, std::move(Name), T, nullptr, nullptr);
}

BlockBuilder &BlockBuilder::assign(ExprPtr Target, ExprPtr Value) {
  return assign(std::move(Target), AssignOp::Assign, std::move(Value));
}

BlockBuilder &BlockBuilder::assign(ExprPtr Target, AssignOp Op, ExprPtr Value) {
  return append(std::make_unique<AssignStmt>(NoLoc, Op, checked(std::move(Target)),
                                             checked(std::move(Value))));
}

IfBuilder BlockBuilder::ifThen(ExprPtr Cond) {
  auto S = std::make_unique<IfStmt>(NoLoc);
  S->Cond = checked(std::move(Cond));
  S->Then = std::make_unique<BlockStmt>(NoLoc);
  IfStmt &Ref = *S;
  append(std::move(S));
  return IfBuilder(Ref);
}

BlockBuilder BlockBuilder::whileLoop(ExprPtr Cond) {
  auto S = std::make_unique<WhileStmt>(NoLoc);
  S->Cond = checked(std::move(Cond));
  S->Body = std::make_unique<BlockStmt>(NoLoc);
  BlockStmt &Body = *S->Body;
  append(std::move(S));
  return BlockBuilder(Body);
}

BlockBuilder BlockBuilder::forLoop(std::string Index, ExprPtr Begin, ExprPtr End, ExprPtr Step) {
  auto S = std::make_unique<ForStmt>(NoLoc);
  S->Index.Name = std::move(Index);
  S->Index.Storage = StorageKind::LoopIndex;
  S->Begin = checked(std::move(Begin));
  S->End = checked(std::move(End));
  S->Step = std::move(Step);
  S->Body = std::make_unique<BlockStmt>(NoLoc);
  BlockStmt &Body = *S->Body;
  append(std::move(S));
  return BlockBuilder(Body);
}

BlockBuilder BlockBuilder::forVarLoop(std::string Name, Type T, ExprPtr Init, ExprPtr Cond,
                                      AssignOp Op, ExprPtr Step) {
  auto S = std::make_unique<WhileStmt>(NoLoc);
  auto D = std::make_unique<DeclStmt>(NoLoc);
  D->Var.Name = Name;
  D->Var.Ty = T;
  D->Var.Storage = StorageKind::Var;
  D->Init = checked(std::move(Init));
  S->Init = std::move(D);
  S->Cond = checked(std::move(Cond));
  S->Update =
      std::make_unique<AssignStmt>(NoLoc, Op, kir::name(std::move(Name)), checked(std::move(Step)));
  S->Body = std::make_unique<BlockStmt>(NoLoc);
  BlockStmt &Body = *S->Body;
  append(std::move(S));
  return BlockBuilder(Body);
}

BlockBuilder BlockBuilder::block() {
  auto S = std::make_unique<BlockStmt>(NoLoc);
  BlockStmt &Ref = *S;
  append(std::move(S));
  return BlockBuilder(Ref);
}

BlockBuilder &BlockBuilder::breakLoop() { return append(std::make_unique<BreakStmt>(NoLoc)); }

BlockBuilder &BlockBuilder::continueLoop() { return append(std::make_unique<ContinueStmt>(NoLoc)); }

BlockBuilder &BlockBuilder::ret() { return append(std::make_unique<ReturnStmt>(NoLoc)); }

BlockBuilder &BlockBuilder::ret(ExprPtr V) {
  return append(std::make_unique<ReturnStmt>(NoLoc, checked(std::move(V))));
}

BlockBuilder &BlockBuilder::eval(ExprPtr E) {
  return append(std::make_unique<ExprStmt>(NoLoc, checked(std::move(E))));
}

//===----------------------------------------------------------------------===//
// IfBuilder
//===----------------------------------------------------------------------===//

IfBuilder IfBuilder::elseIf(ExprPtr Cond) {
  assert(!If->Else && "this if already has an else");
  auto S = std::make_unique<IfStmt>(NoLoc);
  S->Cond = checked(std::move(Cond));
  S->Then = std::make_unique<BlockStmt>(NoLoc);
  IfStmt &Ref = *S;
  If->Else = std::move(S);
  return IfBuilder(Ref);
}

BlockBuilder IfBuilder::elseBlock() {
  assert(!If->Else && "this if already has an else");
  auto B = std::make_unique<BlockStmt>(NoLoc);
  BlockStmt &Ref = *B;
  If->Else = std::move(B);
  return BlockBuilder(Ref);
}

//===----------------------------------------------------------------------===//
// ModuleBuilder
//===----------------------------------------------------------------------===//

ModuleBuilder::ModuleBuilder(std::string Name) : M(std::make_unique<Module>()) {
  M->Name = std::move(Name);
}

ModuleBuilder &ModuleBuilder::constant(std::string Name, Type T, ExprPtr Init) {
  auto C = std::make_unique<ConstDecl>(NoLoc);
  C->Var.Name = std::move(Name);
  C->Var.Ty = T;
  C->Var.Storage = StorageKind::Const;
  C->Init = checked(std::move(Init));
  M->Decls.push_back(std::move(C));
  return *this;
}

FunctionBuilder ModuleBuilder::addFunction(bool IsKernel, std::string Name,
                                           std::vector<Param> Params, Type Ret) {
  auto F = std::make_unique<FunctionDecl>(NoLoc, IsKernel);
  F->Name = std::move(Name);
  for (Param &P : Params) {
    auto V = std::make_unique<VarDecl>();
    V->Name = std::move(P.Name);
    V->Ty = P.Ty;
    V->Storage = StorageKind::Param;
    V->Mutable = P.Mutable;
    V->Mode = P.Mode;
    F->Params.push_back(std::move(V));
  }
  F->ReturnTy = Ret;
  F->Body = std::make_unique<BlockStmt>(NoLoc);
  FunctionDecl &Ref = *F;
  M->Decls.push_back(std::move(F));
  return FunctionBuilder(Ref);
}

FunctionBuilder ModuleBuilder::kernel(std::string Name, std::vector<Param> Params) {
  return addFunction(/*IsKernel=*/true, std::move(Name), std::move(Params), Type::getVoid());
}

FunctionBuilder ModuleBuilder::function(std::string Name, std::vector<Param> Params, Type Ret) {
  return addFunction(/*IsKernel=*/false, std::move(Name), std::move(Params), Ret);
}

std::unique_ptr<Module> ModuleBuilder::take() {
  auto Fresh = std::make_unique<Module>();
  Fresh->Name = M->Name;
  std::swap(Fresh, M);
  return Fresh;
}
