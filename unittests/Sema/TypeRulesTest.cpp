//===- TypeRulesTest.cpp - The KIR verifier's types and rules -------------===//
//
// Part of gridjit. What the verifier fills in (literal types from context,
// loop index types, resolved names and calls, array counts, folded consts,
// UsesGridSync), one test per class of error with its exact message and
// position, and robustness: modules with missing children or bad names (as
// the builder API can make), repeated verification.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/IR/Builder.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using llvm::cast;
using llvm::dyn_cast;

namespace {

/// Parses \p Src (which must parse) and verifies it.
struct Verified {
  std::unique_ptr<Module> M;
  std::vector<std::string> Errors;
};

Verified verify(std::string_view Src) {
  Verified V;
  auto M = parseModule(Src, "test.kir");
  if (!M) {
    V.Errors = diagnosticList(M.takeError());
    V.Errors.insert(V.Errors.begin(), "PARSE ERROR");
    return V;
  }
  V.M = std::move(*M);
  V.Errors = diagnosticList(verifyModule(*V.M));
  return V;
}

/// The errors of \p Src, which must parse.
std::vector<std::string> errorsOf(std::string_view Src) { return verify(Src).Errors; }

FunctionDecl *function(Module &M, std::string_view Name) {
  return const_cast<FunctionDecl *>(M.getFunction(Name));
}

const ConstDecl *constant(const Module &M, std::string_view Name) {
  for (const auto &D : M.Decls)
    if (const auto *C = dyn_cast<ConstDecl>(D.get()))
      if (C->Var.Name == Name)
        return C;
  return nullptr;
}

/// Statement \p I of the body of function \p Fn.
Stmt *stmt(Module &M, std::string_view Fn, unsigned I) {
  return function(M, Fn)->Body->Body.at(I).get();
}

/// The initializer of the `let`/`var` that is statement \p I of \p Fn.
Expr *init(Module &M, std::string_view Fn, unsigned I) {
  return cast<DeclStmt>(stmt(M, Fn, I))->Init.get();
}

Type i32() { return Type::getScalar(ScalarKind::I32); }
Type i64() { return Type::getScalar(ScalarKind::I64); }
Type f32() { return Type::getScalar(ScalarKind::F32); }
Type f64() { return Type::getScalar(ScalarKind::F64); }

//===----------------------------------------------------------------------===//
// Types filled in
//===----------------------------------------------------------------------===//

TEST(TypeRulesTest, IntegerLiteralTakesTheFloatTypeOfTheOtherOperand) {
  Verified V = verify("fn f(x: f32) -> f32 { return x * 2; }");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  auto *Ret = cast<ReturnStmt>(stmt(*V.M, "f", 0));
  auto *Mul = cast<BinaryExpr>(Ret->Value.get());
  EXPECT_EQ(Mul->Ty, f32());
  EXPECT_TRUE(llvm::isa<IntLitExpr>(*Mul->RHS));
  EXPECT_EQ(Mul->RHS->Ty, f32());
  EXPECT_TRUE(V.M->Verified);
}

TEST(TypeRulesTest, LiteralsTakeTheirTypeFromEveryContext) {
  Verified V = verify(R"(
fn g(x: u16) -> u8 { return 7; }
kernel k(p: ptr<i64>, q: ptr<f64>, c: bool, h: f64) {
  let a: u64 = 1 + 2 * 3;
  p[0] = 5;
  let b: u8 = g(9);
  let d: f64 = select(c, h, 1);
  let e: f64 = sqrt(2) + 1.0;
  let s: i32 = 1 as i32;
  let t: i64 = atomic_add(p, 1);
  let u: f32 = 2 as f32;
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Module &M = *V.M;
  Type U64 = Type::getScalar(ScalarKind::U64);
  auto *A = cast<BinaryExpr>(init(M, "k", 0));
  EXPECT_EQ(A->Ty, U64);
  EXPECT_EQ(cast<BinaryExpr>(*A->RHS).LHS->Ty, U64);
  EXPECT_EQ(cast<AssignStmt>(stmt(M, "k", 1))->Value->Ty, i64());
  auto *G = cast<CallExpr>(init(M, "k", 2));
  EXPECT_EQ(G->Args[0]->Ty, Type::getScalar(ScalarKind::U16));
  EXPECT_EQ(cast<ReturnStmt>(stmt(M, "g", 0))->Value->Ty, Type::getScalar(ScalarKind::U8));
  EXPECT_EQ(cast<CallExpr>(init(M, "k", 3))->Args[2]->Ty, f64());
  // The declared type reaches the literal inside a call inside a sum.
  auto *E = cast<BinaryExpr>(init(M, "k", 4));
  EXPECT_EQ(cast<CallExpr>(*E->LHS).Args[0]->Ty, f64());
  // `as` gives no context: the literal keeps its default type.
  EXPECT_EQ(cast<CastExpr>(init(M, "k", 5))->Operand->Ty, i32());
  EXPECT_EQ(cast<CallExpr>(init(M, "k", 6))->Args[1]->Ty, i64());
  EXPECT_EQ(cast<CastExpr>(init(M, "k", 7))->Operand->Ty, i32());
}

// `c ? a : b`: a literal side takes the other side's type; two literal
// sides take the context's; the result has the sides' type.
TEST(TypeRulesTest, ConditionalSidesShareOneType) {
  Verified V = verify(R"(
kernel k(c: bool, h: f64, p: ptr<u8>) {
  let a: f64 = c ? 1 : h;
  let b: u8 = c ? 2 : 3;
  let d: f32 = c ? 1.5 : 2;
  p[0] = c ? p[1] : 7;
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Module &M = *V.M;
  auto *A = cast<CondExpr>(init(M, "k", 0));
  EXPECT_EQ(A->Ty, f64());
  EXPECT_EQ(A->T->Ty, f64());
  Type U8 = Type::getScalar(ScalarKind::U8);
  auto *B = cast<CondExpr>(init(M, "k", 1));
  EXPECT_EQ(B->T->Ty, U8);
  EXPECT_EQ(B->F->Ty, U8);
  EXPECT_EQ(cast<CondExpr>(init(M, "k", 2))->F->Ty, f32());
  auto *P = cast<CondExpr>(cast<AssignStmt>(stmt(M, "k", 3))->Value.get());
  EXPECT_EQ(P->F->Ty, U8);
  EXPECT_TRUE(M.Verified);
}

TEST(TypeRulesTest, BrevKeepsItsOperandTypeWhereClzGivesI32) {
  Verified V = verify(R"(
kernel k(l: u64) {
  let a: u64 = brev(l);
  let b: u64 = brev(1);
  let c: i32 = clz(l);
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Type U64 = Type::getScalar(ScalarKind::U64);
  auto *A = cast<CallExpr>(init(*V.M, "k", 0));
  EXPECT_EQ(A->Builtin, BuiltinFunc::Brev);
  EXPECT_EQ(A->Ty, U64);
  // Like abs, and unlike clz and popc, the literal takes the context's type.
  EXPECT_EQ(cast<CallExpr>(init(*V.M, "k", 1))->Args[0]->Ty, U64);
  EXPECT_EQ(init(*V.M, "k", 2)->Ty, i32());
}

TEST(TypeRulesTest, LoopIndexTakesTheTypeOfTheBounds) {
  Verified V = verify(R"(
kernel k(n: i64, m: u8) {
  for i in 0..n { }
  for j in 0..10 { }
  for l in m..200 step 3 { }
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  auto *F0 = cast<ForStmt>(stmt(*V.M, "k", 0));
  EXPECT_EQ(F0->Index.Ty, i64());
  EXPECT_EQ(F0->Begin->Ty, i64());
  EXPECT_EQ(cast<ForStmt>(stmt(*V.M, "k", 1))->Index.Ty, i32());
  auto *F2 = cast<ForStmt>(stmt(*V.M, "k", 2));
  EXPECT_EQ(F2->Index.Ty, Type::getScalar(ScalarKind::U8));
  EXPECT_EQ(F2->Step->Ty, Type::getScalar(ScalarKind::U8));
}

TEST(TypeRulesTest, NamesCallsAndBuiltinsAreResolved) {
  Verified V = verify(R"(
const N: i32 = 4;
fn f(x: i32) -> i32 { return x + N; }
kernel k(p: ptr<i32>) {
  let a: i32 = f(thread_idx.y) + lane_id;
  p[a] = min(a, 3);
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Module &M = *V.M;
  auto *Sum = cast<BinaryExpr>(cast<ReturnStmt>(stmt(M, "f", 0))->Value.get());
  EXPECT_EQ(cast<NameExpr>(*Sum->LHS).Decl, function(M, "f")->Params[0].get());
  EXPECT_EQ(cast<NameExpr>(*Sum->RHS).Decl, &constant(M, "N")->Var);

  auto *A = cast<BinaryExpr>(init(M, "k", 0));
  auto *Call = cast<CallExpr>(A->LHS.get());
  EXPECT_EQ(Call->Fn, M.getFunction("f"));
  EXPECT_EQ(Call->Builtin, BuiltinFunc::None);
  auto *Mem = cast<MemberExpr>(Call->Args[0].get());
  EXPECT_EQ(cast<NameExpr>(*Mem->Base).Builtin, BuiltinValue::ThreadIdx);
  EXPECT_EQ(Mem->Ty, i32());
  EXPECT_EQ(cast<NameExpr>(*A->RHS).Builtin, BuiltinValue::LaneId);

  auto *Assign = cast<AssignStmt>(stmt(M, "k", 1));
  auto *Min = cast<CallExpr>(Assign->Value.get());
  EXPECT_EQ(Min->Builtin, BuiltinFunc::Min);
  EXPECT_EQ(Min->Fn, nullptr);
  auto *Elem = cast<IndexExpr>(Assign->Target.get());
  EXPECT_EQ(cast<NameExpr>(*Elem->Idx).Decl, &cast<DeclStmt>(stmt(M, "k", 0))->Var);
}

// A local named like a builtin value is what its uses name; the builtin
// is back after its block.
TEST(TypeRulesTest, ALocalHidesABuiltinInItsScope) {
  Verified V = verify(R"(
kernel k(p: ptr<i32>) {
  {
    let lane_id: i32 = 5;
    p[0] = lane_id;
  }
  p[1] = lane_id;
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  auto *Inner = cast<BlockStmt>(stmt(*V.M, "k", 0));
  auto *Local = cast<DeclStmt>(Inner->Body[0].get());
  auto *Use = cast<NameExpr>(cast<AssignStmt>(Inner->Body[1].get())->Value.get());
  EXPECT_EQ(Use->Decl, &Local->Var);
  EXPECT_EQ(Use->Builtin, BuiltinValue::None);
  auto *After = cast<NameExpr>(cast<AssignStmt>(stmt(*V.M, "k", 1))->Value.get());
  EXPECT_EQ(After->Decl, nullptr);
  EXPECT_EQ(After->Builtin, BuiltinValue::LaneId);
}

// A `var` parameter gets one `var` copy first in the body, named by every
// use; verifying again replaces it (no second copy), and the printer shows
// only `var n: i32`.
TEST(TypeRulesTest, AMutableParameterIsUsedThroughOneCopy) {
  Verified V = verify("fn f(a: i32, var n: i32) -> i32 {\n  n = n + a;\n  return n;\n}\n");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  for (int Round = 0; Round < 2; ++Round) {
    FunctionDecl *F = function(*V.M, "f");
    ASSERT_EQ(F->Body->Body.size(), 3u);
    auto *Copy = cast<DeclStmt>(F->Body->Body[0].get());
    EXPECT_EQ(Copy->CopyOf, F->Params[1].get());
    EXPECT_EQ(Copy->Var.Storage, StorageKind::Var);
    EXPECT_EQ(cast<NameExpr>(*Copy->Init).Decl, F->Params[1].get());
    auto *Assign = cast<AssignStmt>(F->Body->Body[1].get());
    EXPECT_EQ(cast<NameExpr>(*Assign->Target).Decl, &Copy->Var);
    auto *Sum = cast<BinaryExpr>(Assign->Value.get());
    EXPECT_EQ(cast<NameExpr>(*Sum->LHS).Decl, &Copy->Var);
    EXPECT_EQ(cast<NameExpr>(*Sum->RHS).Decl, F->Params[0].get());
    EXPECT_EQ(printModule(*V.M),
              "fn f(a: i32, var n: i32) -> i32 {\n  n = n + a;\n  return n;\n}\n");
    ASSERT_FALSE(static_cast<bool>(verifyModule(*V.M)));
  }
}

TEST(TypeRulesTest, ArrayCountsAndElementAddresses) {
  Verified V = verify(R"(
const N: i64 = 2i64 * 4i64;
kernel k(p: ptr<f32>) {
  shared t: [f32; N];
  var a: [u8; 3];
  shared d: [i32];
  let x: ptr<f32, shared> = &t[1];
  let y: ptr<u8, local> = &a[2];
  let z: ptr<f32> = &p[5];
  let w: ptr<i32, shared> = &d[0];
})");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Module &M = *V.M;
  // An array's type carries where it lives: shared, or the thread's own.
  EXPECT_EQ(cast<DeclStmt>(stmt(M, "k", 0))->Var.Ty,
            Type::getArray(ScalarKind::F32, 8, AddrSpace::Shared));
  EXPECT_EQ(cast<DeclStmt>(stmt(M, "k", 1))->Var.Ty,
            Type::getArray(ScalarKind::U8, 3, AddrSpace::Local));
  EXPECT_EQ(cast<DeclStmt>(stmt(M, "k", 2))->Var.Ty,
            Type::getArray(ScalarKind::I32, 0, AddrSpace::Shared));
  EXPECT_EQ(init(M, "k", 3)->Ty, Type::getPointer(ScalarKind::F32, AddrSpace::Shared));
  EXPECT_EQ(init(M, "k", 4)->Ty, Type::getPointer(ScalarKind::U8, AddrSpace::Local));
  EXPECT_EQ(init(M, "k", 5)->Ty, Type::getPointer(ScalarKind::F32));
  EXPECT_EQ(init(M, "k", 6)->Ty, Type::getPointer(ScalarKind::I32, AddrSpace::Shared));
}

TEST(TypeRulesTest, UsesGridSyncFollowsTheCallGraph) {
  Verified V = verify(R"(
kernel coop(p: ptr<i32>) { p[0] = middle(); }
kernel plain(p: ptr<i32>) { p[0] = leaf(); }
fn middle() -> i32 { inner(); return leaf(); }
fn inner() { grid_sync(); }
fn leaf() -> i32 { return 1; }
kernel direct() { grid_sync(); }
)");
  ASSERT_TRUE(V.Errors.empty()) << V.Errors.front();
  Module &M = *V.M;
  EXPECT_TRUE(function(M, "coop")->UsesGridSync);
  EXPECT_TRUE(function(M, "middle")->UsesGridSync);
  EXPECT_TRUE(function(M, "inner")->UsesGridSync);
  EXPECT_TRUE(function(M, "direct")->UsesGridSync);
  EXPECT_FALSE(function(M, "plain")->UsesGridSync);
  EXPECT_FALSE(function(M, "leaf")->UsesGridSync);
}

//===----------------------------------------------------------------------===//
// Constant folding
//===----------------------------------------------------------------------===//

/// Folds `const C: T = E;` (after \p Prelude) and returns the value.
ConstValue foldConst(std::string_view T, std::string_view E, std::string Prelude = "") {
  std::string Src = Prelude + "const C: " + std::string(T) + " = " + std::string(E) + ";";
  Verified V = verify(Src);
  EXPECT_TRUE(V.Errors.empty()) << Src << ": " << (V.Errors.empty() ? "" : V.Errors[0]);
  if (!V.M || !constant(*V.M, "C") || !constant(*V.M, "C")->Value)
    return ConstValue();
  return *constant(*V.M, "C")->Value;
}

int64_t foldSigned(std::string_view T, std::string_view E) {
  return static_cast<int64_t>(foldConst(T, E).Int);
}

// Integer arithmetic in a const is exact: a result that does not fit is an
// error (below); what fits is the run-time value, shifts drop bits.
TEST(TypeRulesTest, ConstIntegersFoldExactly) {
  EXPECT_EQ(foldSigned("i32", "7 / 2"), 3);
  EXPECT_EQ(foldSigned("i32", "-7 / 2"), -3);
  EXPECT_EQ(foldSigned("i32", "-7 % 3"), -1);
  EXPECT_EQ(foldConst("u8", "250u8 + 5u8").Int, 255u);
  EXPECT_EQ(foldSigned("i8", "-127i8 / -1i8"), 127);
  EXPECT_EQ(foldSigned("i8", "-128i8 % -1i8"), 0);
  EXPECT_EQ(foldSigned("i32", "1 << 31"), INT32_MIN);
  EXPECT_EQ(foldSigned("i32", "-2147483647 - 1"), INT32_MIN);
  EXPECT_EQ(foldConst("u64", "9223372036854775807u64 * 2u64 + 1u64").Int, UINT64_MAX);
  EXPECT_EQ(foldSigned("i32", "-8 >> 1"), -4);
  EXPECT_EQ(foldConst("u32", "0x80000000u32 >> 31").Int, 1u);
  EXPECT_EQ(foldConst("u32", "~0u32").Int, 0xffffffffu);
  EXPECT_EQ(foldConst("u16", "0xff00 ^ 0x0ff0 | 1").Int, 0xf0f1u);
  EXPECT_EQ(foldConst("bool", "3 > 2 && !(1.5 < 0.5)").Int, 1u);
  EXPECT_EQ(foldConst("bool", "true ^ true").Int, 0u);
}

TEST(TypeRulesTest, ConstsReferToOtherConstsInAnyOrder) {
  ConstValue V = foldConst("i64", "(A as i64) * B",
                           "const A: i32 = B as i32 + 1;\n"
                           "const B: i64 = 1i64 << 33;\n");
  // `B as i32` truncates 2^33 to 0, so A is 1.
  EXPECT_EQ(static_cast<int64_t>(V.Int), int64_t(1) << 33);
  EXPECT_EQ(V.Ty, i64());
}

TEST(TypeRulesTest, ConstCastsFollowTheSpec) {
  // int -> int: by the source's signedness.
  EXPECT_EQ(foldConst("u32", "-1 as u32").Int, 0xffffffffu);
  EXPECT_EQ(foldSigned("i64", "-1 as i64"), -1);
  EXPECT_EQ(foldConst("u64", "255u8 as u64").Int, 255u);
  EXPECT_EQ(foldConst("u64", "-1i8 as u64").Int, UINT64_MAX);
  EXPECT_EQ(foldSigned("i8", "383 as i8"), 127);
  EXPECT_EQ(foldSigned("i32", "true as i32"), 1);
  // float -> int: toward zero, saturating, NaN -> 0.
  EXPECT_EQ(foldSigned("i32", "3.9 as i32"), 3);
  EXPECT_EQ(foldSigned("i32", "-3.9 as i32"), -3);
  EXPECT_EQ(foldSigned("i32", "-1e10 as i32"), INT32_MIN);
  EXPECT_EQ(foldSigned("i32", "1e10 as i32"), INT32_MAX);
  EXPECT_EQ(foldConst("u8", "-5.0 as u8").Int, 0u);
  EXPECT_EQ(foldConst("u8", "300.0 as u8").Int, 255u);
  EXPECT_EQ(foldSigned("i32", "(0.0 / 0.0) as i32"), 0);
  EXPECT_EQ(foldConst("u64", "1e30f64 as u64").Int, UINT64_MAX);
  // int -> float: nearest.
  EXPECT_EQ(foldConst("f32", "16777217 as f32").Float, 16777216.0);
  EXPECT_EQ(foldConst("f64", "-3 as f64").Float, -3.0);
  EXPECT_EQ(foldConst("f32", "true as f32").Float, 1.0);
}

TEST(TypeRulesTest, ConstFloatsRoundToTheirType) {
  EXPECT_EQ(foldConst("f32", "1.0 / 3.0").Float, static_cast<double>(1.0f / 3.0f));
  EXPECT_EQ(foldConst("f64", "1.0 / 3.0").Float, 1.0 / 3.0);
  EXPECT_EQ(foldConst("f32", "0.1").Float, static_cast<double>(0.1f));
  EXPECT_EQ(foldConst("f64", "-2").Float, -2.0);
  EXPECT_TRUE(std::isinf(foldConst("f32", "1.0 / 0.0").Float));
  EXPECT_EQ(foldConst("f32", "1e30f64 as f32").Float, static_cast<double>(1e30f));
}

//===----------------------------------------------------------------------===//
// Errors: one per class, with the exact message and position
//===----------------------------------------------------------------------===//

struct ErrorCase {
  const char *Src;
  const char *Expected; ///< "LINE:COL: MESSAGE"
};

class ErrorClassTest : public testing::TestWithParam<ErrorCase> {};

TEST_P(ErrorClassTest, ReportsExactlyThisError) {
  std::vector<std::string> Errors = errorsOf(GetParam().Src);
  ASSERT_EQ(Errors.size(), 1u) << GetParam().Src << "\n"
                               << (Errors.empty() ? "no error" : Errors[0]);
  EXPECT_EQ(Errors[0], GetParam().Expected) << GetParam().Src;
}

const ErrorCase ErrorCases[] = {
    // Literals.
    {"kernel k(p: ptr<u8>) { p[0] = 300; }", "1:31: integer literal 300 does not fit in type 'u8'"},
    {"kernel k(p: ptr<u32>) { p[0] = -1; }", "1:32: integer literal -1 does not fit in type 'u32'"},
    {"kernel k(p: ptr<f32>) { p[0] = 1e39; }",
     "1:32: float literal 1e39 does not fit in type 'f32'"},
    {"kernel k(p: ptr<f32>) { p[0] = 16777217; }",
     "1:32: integer literal 16777217 cannot be represented exactly in type "
     "'f32'"},
    {"kernel k(p: ptr<i32>) { p[0] = 2.5; }",
     "1:32: cannot assign a value of type 'f32' to an element of type 'i32'"},
    // Operators.
    {"fn f(a: i32, b: u32) -> i32 { return a + b; }",
     "1:38: operands of '+' must have the same type, found 'i32' and 'u32'"},
    {"fn f(a: f32) -> f32 { return a % 2.0; }",
     "1:30: operator '%' needs integer operands, found 'f32'"},
    {"fn f(a: u32) -> u32 { return -a; }", "1:30: unary '-' on unsigned type 'u32'"},
    {"fn f(a: i32) -> bool { return a as bool; }",
     "1:33: cannot cast 'i32' to 'bool'; write 'x != 0'"},
    {"fn f(p: ptr<f32>) -> f32 { return p - 1; }",
     "1:35: operator '-' needs numeric operands, found 'ptr<f32>'"},
    {"fn f(x: f32) -> f32 { let p: ptr<f32> = &x; return x; }",
     "1:41: '&' can only take the address of an element or of a shared variable, as in "
     "'&p[i]', '&a[i]' or '&count'"},
    // Names.
    {"kernel k(x: i32) { let x: i32 = 1; }", "1:24: 'x' shadows an earlier declaration"},
    {"kernel k() { let y: i32 = 1; let y: i32 = 2; }", "1:34: redeclaration of 'y'"},
    {"kernel k() { let y: i32 = z; }", "1:27: use of undeclared name 'z'"},
    {"fn sqrt() { }", "1:4: cannot declare 'sqrt': the name is reserved for a builtin"},
    {"kernel k() { let sqrt: f32 = 1.0; let y: f32 = sqrt(2.0); }",
     "1:48: 'sqrt' is not a function; the local 'sqrt' (declared at 1:18) hides the builtin"},
    {"fn g() { }\nkernel g() { }", "2:8: redeclaration of 'g'"},
    {"kernel k(p: ptr<i32>) { p[0] = thread_idx; }",
     "1:32: 'thread_idx' must be used with '.x', '.y' or '.z'"},
    // Consts.
    {"const A: i32 = B;\nconst B: i32 = A;",
     "2:16: const 'A' is defined in terms of itself (A -> B -> A)"},
    {"const A: i32 = 1 / 0;", "1:16: division by zero in constant expression"},
    {"const A: u8 = 250u8 + 10u8;",
     "1:15: integer overflow in constant expression: 250 + 10 does not fit in type 'u8'"},
    {"const A: i8 = -128i8 / -1i8;",
     "1:15: integer overflow in constant expression: -128 / -1 does not fit in type 'i8'"},
    {"const A: i64 = 3037000500i64 * 3037000500i64;",
     "1:16: integer overflow in constant expression: 3037000500 * 3037000500 does not fit in "
     "type 'i64'"},
    {"const A: u32 = 1u32 - 2u32;",
     "1:16: integer overflow in constant expression: 1 - 2 does not fit in type 'u32'"},
    {"const A: i32 = lane_id;",
     "1:16: initializer of const 'A' must be a constant expression, but 'lane_id' is a builtin "
     "value, known only at run time; a constant expression is made of literals, consts, "
     "operators, '?:' and 'as'"},
    {"const A: ptr<i32> = 0;", "1:7: const 'A' must have a scalar type, found 'ptr<i32>'"},
    // Arrays and declarations.
    {"kernel k() { var a: [f32; 0]; }", "1:27: array size must be positive, found 0"},
    {"const N: i32 = 2147483647;\nkernel k() { var a: [f32; N * 2]; }",
     "2:27: integer overflow in constant expression: 2147483647 * 2 does not fit in type 'i32'"},
    {"kernel k(n: i32) { var a: [f32; n + 1]; }",
     "1:33: array size must be a constant expression, but 'n' is a parameter, known only at run "
     "time; a constant expression is made of literals, consts, operators, '?:' and 'as'"},
    {"kernel k() { var a: [f32]; }", "1:18: only a 'shared' array may be unsized"},
    {"kernel k() { let a: [f32; 4]; }", "1:18: 'let' cannot declare an array; use 'var'"},
    {"kernel k() { var a: [f32; 4] = 1.0; }", "1:32: array 'a' cannot have an initializer"},
    {"kernel k(p: ptr<i32>) { let x: i32; p[0] = x; }",
     "1:44: 'x' is used before it is assigned (declared at 1:29 without an initializer)"},
    {"kernel k(c: bool) { var x: i32; if c { x = 1; } let y: i32 = x; }",
     "1:62: 'x' may be used before it is assigned: not every path to here assigns it (declared "
     "at 1:25 without an initializer)"},
    {"kernel k() { let x: i32; x = 1; x = 2; }",
     "1:33: cannot assign twice to 'x': it is declared with 'let' and is assigned already; "
     "declare it with 'var'"},
    {"kernel k() { let x: i32; while true { x = 1; } }",
     "1:39: cannot assign to 'x' inside a loop: it is declared with 'let' outside the loop, "
     "which may assign it more than once; declare it with 'var'"},
    {"kernel k() { var a: [f32; 4]; let b: f32 = a; }",
     "1:44: array 'a' cannot be used as a value; use an element of it"},
    {"kernel k() { var a: [f32; 4]; a[4] = 1.0; }",
     "1:33: index 4 is out of bounds for array 'a' of type '[f32; 4]'"},
    // Statements.
    {"kernel k(n: i32) { if n { } }", "1:23: condition must be 'bool', found 'i32'"},
    {"kernel k(n: i64) { for i in 0u32..n { } }",
     "1:35: loop range and step must have the same type, found 'u32' and "
     "'i64'"},
    {"kernel k() { for i in 0..8 step 0 { } }", "1:33: loop step must be positive, found 0"},
    {"kernel k() { break; }", "1:14: 'break' outside of a loop"},
    {"kernel k(n: i32) { n = 1; }",
     "1:20: cannot assign to 'n': it is a parameter; declare it 'var n: i32' to assign to it"},
    {"kernel k() { for i in 0..4 { i = 1; } }",
     "1:30: cannot assign to 'i': it is a loop index; a loop that assigns its variable is "
     "written 'for var i: i32 = START; CONDITION; UPDATE { }'"},
    // The general loop.
    {"kernel k() { for var i: i32 = 0; i; i += 1 { } }",
     "1:34: condition must be 'bool', found 'i32'"},
    {"kernel k() { for let i: i32 = 8; i > 0; i >>= 1 { } }",
     "1:41: cannot assign to 'i': it is declared with 'let'"},
    {"kernel k() { for var i: u32 = 1u32; i < 9u32; i *= 2i32 { } }",
     "1:47: operands of '*=' must have the same type, found 'u32' and 'i32'"},
    {"kernel k() { for var i: i32 = 0; i < 4; i += 1 { } i = 2; }",
     "1:52: use of undeclared name 'i'"},
    {"kernel k() { for var i: i32; i < 4; i += 1 { } }",
     "1:22: the variable 'i' of a 'for' loop needs an initial value"},
    {"kernel k() { for var a: [i32; 2]; true; { } }",
     "1:22: the variable of a 'for' loop must be a scalar or a pointer, found '[i32; 2]'"},
    {"kernel k() { var f: f32 = 1.0; f %= 2.0; }",
     "1:32: operator '%=' needs integer operands, found 'f32'"},
    // Functions and calls.
    {"kernel k(p: ptr<f32, shared>) { }",
     "1:10: kernel parameter 'p' cannot have type 'ptr<f32, shared>'"},
    {"kernel k() -> i32 { }", "1:8: kernel 'k' cannot have a return type"},
    {"fn f() { return 1; }", "1:17: void function 'f' cannot return a value"},
    {"fn f() -> i32 { return; }", "1:17: function 'f' must return a value of type 'i32'"},
    {"fn f(x: i32) -> i32 { if x > 0 { return 1; } }",
     "1:4: function 'f' can reach its end without returning a value"},
    {"kernel t() { }\nkernel k() { t(); }", "2:14: cannot call kernel 't'"},
    {"fn f(a: i32) { }\nkernel k() { f(1, 2); }", "2:14: 'f' takes 1 argument, found 2"},
    {"fn f(a: i32) { }\nkernel k() { f(1.5); }",
     "2:16: argument 1 of 'f' must have type 'i32', found 'f32'"},
    {"kernel k() { foo(); }", "1:14: call to undeclared function 'foo'"},
    {"fn f(n: i32) -> i32 { return g(n); }\nfn g(n: i32) -> i32 { return f(n); "
     "}",
     "2:30: recursive call to 'f' (f -> g -> f); recursion is not allowed"},
    {"fn f() { }\nkernel k(p: ptr<i32>) { p[0] = f(); }", "2:32: 'f' does not return a value"},
    // Builtins.
    {"kernel k(p: ptr<f32>) { atomic_sub(p, 1.0); }",
     "1:36: no overload of 'atomic_sub' for 'ptr<f32>'; it takes integer "
     "pointers (i32, u32, i64, u64)"},
    {"kernel k() { var a: [i32; 2]; atomic_add(&a[0], 1); }",
     "1:42: 'atomic_add' needs a pointer to global or shared memory, found "
     "'ptr<i32, local>'"},
    {"kernel k(x: f32, u: u32) { let y: f32 = shfl(x, u); }",
     "1:49: argument 2 of 'shfl' must have type 'i32', found 'u32'"},
    {"kernel k(x: i32) { let y: i32 = sqrt(x); }",
     "1:33: no overload of 'sqrt' for 'i32'; it takes f32 or f64"},
    {"kernel k(x: u32) { let y: u32 = abs(x); }",
     "1:33: no overload of 'abs' for 'u32'; it takes f32, f64 or a signed "
     "integer (i8, i16, i32, i64)"},
    {"kernel k(x: f32) { let y: f32 = brev(x); }",
     "1:33: no overload of 'brev' for 'f32'; it takes i32, u32, i64 or u64"},
    {"kernel k(x: f32, y: f64) { let z: f32 = min(x, y); }",
     "1:48: arguments of 'min' must have the same type, found 'f32' and 'f64'"},
    {"kernel k(x: i32) { let y: bool = vote_any(x); }",
     "1:43: argument 1 of 'vote_any' must have type 'bool', found 'i32'"},
};

INSTANTIATE_TEST_SUITE_P(TypeRulesTest, ErrorClassTest, testing::ValuesIn(ErrorCases));

TEST(TypeRulesTest, IndependentErrorsAreAllReportedInSourceOrder) {
  // The recursion is found after the bodies are checked, but is reported
  // in its place; the bad operand of `+` causes no second error.
  std::vector<std::string> Errors = errorsOf(R"(fn f() -> i32 { return f(); }
kernel k(p: ptr<u8>) {
  p[0] = 300;
  p[1] = nope + 1;
  p[2] = 1.5;
})");
  std::vector<std::string> Expected = {
      "1:24: recursive call to 'f' (f -> f); recursion is not allowed",
      "3:10: integer literal 300 does not fit in type 'u8'",
      "4:10: use of undeclared name 'nope'",
      "5:10: cannot assign a value of type 'f32' to an element of type 'u8'",
  };
  EXPECT_EQ(Errors, Expected);
}

TEST(TypeRulesTest, RenderedErrorShowsFileLineAndCaret) {
  auto M = parseModule("kernel k(p: ptr<u8>) {\n  p[0] = 300;\n}\n", "t.kir");
  ASSERT_TRUE(succeeded(M));
  std::string S;
  llvm::raw_string_ostream OS(S);
  llvm::handleAllErrors(verifyModule(**M), [&](const llvm::ErrorInfoBase &EI) { EI.log(OS); });
  EXPECT_EQ(S, "t.kir:2:10: error: integer literal 300 does not fit in type 'u8'\n"
               "  p[0] = 300;\n"
               "         ^\n");
  EXPECT_FALSE((*M)->Verified);
}

//===----------------------------------------------------------------------===//
// Robustness
//===----------------------------------------------------------------------===//

TEST(TypeRulesTest, VerifyingTwiceGivesTheSameResult) {
  const char *Bad = "const N: i32 = 4;\nkernel k(p: ptr<u8>) { var a: [u8; N]; "
                    "p[0] = 300 + a[0]; }";
  Verified V = verify(Bad);
  ASSERT_TRUE(V.M);
  EXPECT_EQ(diagnosticList(verifyModule(*V.M)), V.Errors);
  EXPECT_FALSE(V.M->Verified);

  Verified Good = verify("const N: i32 = 4;\n"
                         "fn g() { grid_sync(); }\n"
                         "kernel k(p: ptr<u8>) { var a: [u8; N]; p[0] = 3 + a[0]; g(); }");
  ASSERT_TRUE(Good.Errors.empty()) << Good.Errors.front();
  EXPECT_TRUE(diagnosticList(verifyModule(*Good.M)).empty());
  EXPECT_TRUE(Good.M->Verified);
  EXPECT_TRUE(function(*Good.M, "k")->UsesGridSync);
  EXPECT_EQ(cast<DeclStmt>(stmt(*Good.M, "k", 0))->Var.Ty, Type::getArray(ScalarKind::U8, 4));
  EXPECT_EQ(constant(*Good.M, "N")->Value->Int, 4u);
}

/// A module with every kind of missing child, as a careless user of the
/// AST (not the parser) can make.
std::unique_ptr<Module> moduleWithHoles() {
  auto M = std::make_unique<Module>();
  M->Name = "holes";
  M->Decls.push_back(nullptr);
  auto C = std::make_unique<ConstDecl>(SourceLoc());
  C->Var.Name = "C";
  C->Var.Ty = i32();
  C->Var.Storage = StorageKind::Const;
  M->Decls.push_back(std::move(C)); // no initializer

  auto NoBody = std::make_unique<FunctionDecl>(SourceLoc(), /*IsKernel=*/false);
  NoBody->Name = "nobody";
  NoBody->Params.push_back(nullptr);
  M->Decls.push_back(std::move(NoBody));

  auto K = std::make_unique<FunctionDecl>(SourceLoc(), /*IsKernel=*/true);
  K->Name = "k";
  K->Body = std::make_unique<BlockStmt>(SourceLoc());
  auto &Body = K->Body->Body;
  Body.push_back(nullptr);
  auto If = std::make_unique<IfStmt>(SourceLoc()); // no condition, no block
  Body.push_back(std::move(If));
  auto W = std::make_unique<WhileStmt>(SourceLoc());
  W->Cond = std::make_unique<BinaryExpr>(SourceLoc(), BinaryOp::Lt, nullptr,
                                         std::make_unique<IntLitExpr>(SourceLoc(), 1));
  Body.push_back(std::move(W));
  auto F = std::make_unique<ForStmt>(SourceLoc());
  F->Index.Name = "i";
  F->Index.Storage = StorageKind::LoopIndex;
  Body.push_back(std::move(F));
  std::vector<ExprPtr> Args;
  Args.push_back(nullptr);
  Body.push_back(std::make_unique<ExprStmt>(
      SourceLoc(), std::make_unique<CallExpr>(SourceLoc(), "sqrt", std::move(Args))));
  Body.push_back(std::make_unique<ExprStmt>(SourceLoc(), nullptr));
  Body.push_back(std::make_unique<AssignStmt>(SourceLoc(), AssignOp::Add, nullptr, nullptr));
  auto D = std::make_unique<DeclStmt>(SourceLoc());
  D->Var.Name = "x";
  D->Var.Ty = i32();
  D->Init = std::make_unique<UnaryExpr>(SourceLoc(), UnaryOp::AddrOf, nullptr);
  Body.push_back(std::move(D));
  Body.push_back(std::make_unique<ReturnStmt>(
      SourceLoc(), std::make_unique<CastExpr>(SourceLoc(), nullptr, i32())));
  Body.push_back(std::make_unique<ExprStmt>(
      SourceLoc(), std::make_unique<IndexExpr>(SourceLoc(), nullptr, nullptr)));
  Body.push_back(std::make_unique<ExprStmt>(SourceLoc(),
                                            std::make_unique<MemberExpr>(SourceLoc(), nullptr, 7)));
  M->Decls.push_back(std::move(K));
  return M;
}

TEST(TypeRulesTest, MissingChildrenAreErrorsNotCrashes) {
  std::unique_ptr<Module> M = moduleWithHoles();
  std::vector<std::string> Errors = diagnosticList(verifyModule(*M));
  EXPECT_FALSE(M->Verified);
  ASSERT_FALSE(Errors.empty());
  for (const std::string &E : Errors)
    EXPECT_EQ(E.rfind("0:0: ", 0), 0u) << E;
  auto Has = [&](const std::string &Msg) {
    return std::find(Errors.begin(), Errors.end(), "0:0: " + Msg) != Errors.end();
  };
  EXPECT_TRUE(Has("malformed module: null declaration"));
  EXPECT_TRUE(Has("const 'C' needs an initializer"));
  EXPECT_TRUE(Has("malformed module: function 'nobody' has no body"));
  EXPECT_TRUE(Has("malformed module: null statement"));
  EXPECT_TRUE(Has("malformed module: missing block"));
  EXPECT_TRUE(Has("malformed module: missing expression"));
  // The same again: idempotent even on broken modules.
  EXPECT_EQ(diagnosticList(verifyModule(*M)), Errors);
}

TEST(TypeRulesTest, BuiltModulesNeedValidNames) {
  using namespace gridjit::kir;
  ModuleBuilder MB("built");
  FunctionBuilder K = MB.kernel("1bad", {{"while", kir::i32()}});
  K.let("ok", kir::i32(), name("while"));
  K.let("", kir::i32(), intLit(1));
  std::unique_ptr<Module> M = MB.take();
  std::vector<std::string> Expected = {
      "0:0: '1bad' is not a valid identifier",
      "0:0: cannot declare 'while': it is a keyword",
      "0:0: use of undeclared name 'while'",
      "0:0: malformed module: missing name",
  };
  EXPECT_EQ(diagnosticList(verifyModule(*M)), Expected);
}

TEST(TypeRulesTest, ExpressionStatementMustBeACall) {
  auto M = std::make_unique<Module>();
  auto K = std::make_unique<FunctionDecl>(SourceLoc{1, 1}, /*IsKernel=*/true);
  K->Name = "k";
  K->Body = std::make_unique<BlockStmt>(SourceLoc{1, 12});
  K->Body->Body.push_back(std::make_unique<ExprStmt>(
      SourceLoc{2, 3}, std::make_unique<IntLitExpr>(SourceLoc{2, 3}, 1)));
  M->Decls.push_back(std::move(K));
  EXPECT_EQ(diagnosticList(verifyModule(*M)),
            std::vector<std::string>{"2:3: only a call can be used as a statement"});
}

} // namespace
