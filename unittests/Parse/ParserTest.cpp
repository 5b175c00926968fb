//===- ParserTest.cpp - KIR text to AST -----------------------------------===//
//
// Part of gridjit. The AST the parser builds (checked through a small
// S-expression dump, independent of the printer): precedence and
// associativity, every statement and declaration form, locations; syntax
// errors with their positions and recovery; and robustness on truncated,
// mutated, random and absurdly nested input.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Parse/Parser.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include "TestSupport.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <random>
#include <sstream>
#include <string>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
using llvm::cast;
using llvm::dyn_cast;

namespace {

using ::testing::HasSubstr;

//===----------------------------------------------------------------------===//
// Helpers
//===----------------------------------------------------------------------===//

/// Parses \p Src, which must be valid.
std::unique_ptr<Module> parseOk(std::string_view Src) {
  auto M = parseModule(Src, "test.kir");
  if (!M) {
    ADD_FAILURE() << "unexpected parse error for:\n" << Src << "\n" << errorText(M.takeError());
    return nullptr;
  }
  return std::move(*M);
}

/// Every diagnostic for \p Src, which must be invalid.
std::vector<std::string> errors(std::string_view Src) {
  auto M = parseModule(Src, "test.kir");
  if (M) {
    ADD_FAILURE() << "expected a parse error for:\n" << Src;
    return {};
  }
  return diagnosticList(M.takeError());
}

/// The single diagnostic for \p Src ("" and a failure if there are more).
std::string onlyError(std::string_view Src) {
  std::vector<std::string> E = errors(Src);
  EXPECT_EQ(E.size(), 1u) << Src;
  return E.empty() ? "" : E[0];
}

std::string binaryOpName(BinaryOp Op) { return std::string(spelling(Op)); }

std::string unaryOpName(UnaryOp Op) {
  switch (Op) {
  case UnaryOp::Neg:
    return "neg";
  case UnaryOp::Not:
    return "not";
  case UnaryOp::BitNot:
    return "bitnot";
  case UnaryOp::AddrOf:
    return "addr";
  }
  return "?";
}

std::string assignOpName(AssignOp Op) { return std::string(spelling(Op)); }

std::string suffix(std::optional<ScalarKind> S) { return S ? std::string(scalarName(*S)) : ""; }

/// An S-expression for an expression: `(+ a (* b c))`, `(as f32 x)`.
std::string dump(const Expr &E) {
  switch (E.getKind()) {
  case Expr::IntLit: {
    const auto &L = cast<IntLitExpr>(E);
    return std::to_string(L.Value) + suffix(L.Suffix);
  }
  case Expr::FloatLit: {
    const auto &L = cast<FloatLitExpr>(E);
    std::ostringstream OS;
    OS.precision(17);
    OS << L.Value;
    return "f" + OS.str() + suffix(L.Suffix);
  }
  case Expr::BoolLit:
    return cast<BoolLitExpr>(E).Value ? "true" : "false";
  case Expr::Name:
    return cast<NameExpr>(E).Ident;
  case Expr::Unary: {
    const auto &U = cast<UnaryExpr>(E);
    return "(" + unaryOpName(U.Op) + " " + dump(*U.Operand) + ")";
  }
  case Expr::Binary: {
    const auto &B = cast<BinaryExpr>(E);
    return "(" + binaryOpName(B.Op) + " " + dump(*B.LHS) + " " + dump(*B.RHS) + ")";
  }
  case Expr::Cond: {
    const auto &Q = cast<CondExpr>(E);
    return "(? " + dump(*Q.C) + " " + dump(*Q.T) + " " + dump(*Q.F) + ")";
  }
  case Expr::Cast: {
    const auto &C = cast<CastExpr>(E);
    return "(as " + C.DestTy.str() + " " + dump(*C.Operand) + ")";
  }
  case Expr::Call: {
    const auto &C = cast<CallExpr>(E);
    std::string S = "(call " + C.Callee;
    for (const ExprPtr &A : C.Args)
      S += " " + dump(*A);
    return S + ")";
  }
  case Expr::Index: {
    const auto &I = cast<IndexExpr>(E);
    return "(idx " + dump(*I.Base) + " " + dump(*I.Idx) + ")";
  }
  case Expr::Member: {
    const auto &M = cast<MemberExpr>(E);
    return "(. " + dump(*M.Base) + " " + std::string(1, "xyz"[M.Field]) + ")";
  }
  }
  return "?";
}

std::string dump(const Stmt &S);

std::string dumpBlock(const BlockStmt &B) {
  std::string Out = "{";
  for (size_t I = 0; I < B.Body.size(); ++I)
    Out += (I ? " " : "") + dump(*B.Body[I]);
  return Out + "}";
}

std::string storageName(StorageKind K) {
  switch (K) {
  case StorageKind::Let:
    return "let";
  case StorageKind::Var:
    return "var";
  case StorageKind::Shared:
    return "shared";
  default:
    return "?";
  }
}

/// An S-expression for a statement: `(= (idx p 0) 1)`, `(if c {..} {..})`.
std::string dump(const Stmt &S) {
  switch (S.getKind()) {
  case Stmt::Decl: {
    const auto &D = cast<DeclStmt>(S);
    std::string Out = "(" + storageName(D.Var.Storage) + " " + D.Var.Name + " " + D.Var.Ty.str();
    if (D.Var.ArraySize)
      Out += " size=" + dump(*D.Var.ArraySize);
    for (const ExprPtr &Size : D.Var.InnerArraySizes)
      Out += " inner=" + dump(*Size);
    if (D.Init)
      Out += " " + dump(*D.Init);
    return Out + ")";
  }
  case Stmt::Assign: {
    const auto &A = cast<AssignStmt>(S);
    return "(" + assignOpName(A.Op) + " " + dump(*A.Target) + " " + dump(*A.Value) + ")";
  }
  case Stmt::If: {
    const auto &I = cast<IfStmt>(S);
    std::string Out = "(if " + dump(*I.Cond) + " " + dumpBlock(*I.Then);
    if (I.Else)
      Out += " " + dump(*I.Else);
    return Out + ")";
  }
  case Stmt::While: {
    const auto &W = cast<WhileStmt>(S);
    if (!W.isGeneralFor())
      return "(while " + dump(*W.Cond) + " " + dumpBlock(*W.Body) + ")";
    return "(for " + (W.Init ? dump(*W.Init) : "_") + " " + dump(*W.Cond) + " " +
           (W.Update ? dump(*W.Update) : "_") + " " + dumpBlock(*W.Body) + ")";
  }
  case Stmt::For: {
    const auto &F = cast<ForStmt>(S);
    std::string Out = "(for " + F.Index.Name + " " + dump(*F.Begin) + " " + dump(*F.End);
    if (F.Step)
      Out += " step " + dump(*F.Step);
    return Out + " " + dumpBlock(*F.Body) + ")";
  }
  case Stmt::Break:
    return "(break)";
  case Stmt::Continue:
    return "(continue)";
  case Stmt::Return: {
    const auto &R = cast<ReturnStmt>(S);
    return R.Value ? "(return " + dump(*R.Value) + ")" : "(return)";
  }
  case Stmt::ExprS:
    return "(expr " + dump(*cast<ExprStmt>(S).E) + ")";
  case Stmt::Block:
    return dumpBlock(cast<BlockStmt>(S));
  }
  return "?";
}

/// The first function of \p M.
const FunctionDecl *firstFunction(const Module &M) {
  for (const auto &D : M.Decls)
    if (const auto *F = dyn_cast<FunctionDecl>(D.get()))
      return F;
  return nullptr;
}

/// The statements of `kernel k() { BODY }`, dumped.
std::string body(std::string_view Body) {
  std::unique_ptr<Module> M = parseOk("kernel k() {" + std::string(Body) + "}");
  if (!M)
    return "<error>";
  return dumpBlock(*firstFunction(*M)->Body);
}

/// The expression \p E, parsed as the value of an assignment, dumped.
std::string expr(std::string_view E) {
  std::unique_ptr<Module> M = parseOk("kernel k() { x = " + std::string(E) + "; }");
  if (!M)
    return "<error>";
  const auto &A = cast<AssignStmt>(*firstFunction(*M)->Body->Body[0]);
  return dump(*A.Value);
}

std::string loc(SourceLoc L) { return std::to_string(L.Line) + ":" + std::to_string(L.Col); }

//===----------------------------------------------------------------------===//
// Declarations
//===----------------------------------------------------------------------===//

TEST(ParserTest, EmptyModule) {
  for (std::string_view Src : {"", " \n\t", "// only a comment\n", "/**/"}) {
    std::unique_ptr<Module> M = parseOk(Src);
    ASSERT_TRUE(M);
    EXPECT_TRUE(M->Decls.empty());
  }
}

TEST(ParserTest, ModuleNameAndSource) {
  std::string Src = "fn f() {}\n";
  auto M = parseModule(Src, "dir/name.kir");
  ASSERT_TRUE(bool(M)) << errorText(M.takeError());
  EXPECT_EQ((*M)->Name, "dir/name.kir");
  EXPECT_EQ((*M)->Source, Src);
  EXPECT_FALSE((*M)->Verified);
}

TEST(ParserTest, SpecExample) {
  std::unique_ptr<Module> M = parseOk(R"(
const TILE: i32 = 256;
fn square(v: f32) -> f32 { return v * v; }          // device function
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}
)");
  ASSERT_TRUE(M);
  ASSERT_EQ(M->Decls.size(), 3u);

  const auto &C = cast<ConstDecl>(*M->Decls[0]);
  EXPECT_EQ(C.Var.Name, "TILE");
  EXPECT_EQ(C.Var.Storage, StorageKind::Const);
  EXPECT_EQ(C.Var.Ty, Type::getScalar(ScalarKind::I32));
  EXPECT_EQ(dump(*C.Init), "256");
  EXPECT_EQ(loc(C.getLoc()), "2:1");
  EXPECT_EQ(loc(C.Var.Loc), "2:7");

  const auto &Sq = cast<FunctionDecl>(*M->Decls[1]);
  EXPECT_FALSE(Sq.IsKernel);
  EXPECT_EQ(Sq.Name, "square");
  ASSERT_EQ(Sq.Params.size(), 1u);
  EXPECT_EQ(Sq.Params[0]->Name, "v");
  EXPECT_EQ(Sq.Params[0]->Storage, StorageKind::Param);
  EXPECT_EQ(loc(Sq.Params[0]->Loc), "3:11");
  EXPECT_EQ(Sq.ReturnTy, Type::getScalar(ScalarKind::F32));
  EXPECT_EQ(dumpBlock(*Sq.Body), "{(return (* v v))}");
  EXPECT_EQ(loc(Sq.getLoc()), "3:1");
  EXPECT_EQ(loc(Sq.Body->getLoc()), "3:26");

  const auto &K = cast<FunctionDecl>(*M->Decls[2]);
  EXPECT_TRUE(K.IsKernel);
  EXPECT_EQ(K.Name, "saxpy");
  EXPECT_TRUE(K.ReturnTy.isVoid());
  ASSERT_EQ(K.Params.size(), 4u);
  EXPECT_EQ(K.Params[2]->Ty, Type::getPointer(ScalarKind::F32));
  EXPECT_EQ(dumpBlock(*K.Body), "{(let i i32 (+ (* (. block_idx x) (. block_dim x)) "
                                "(. thread_idx x))) "
                                "(if (< i n) {(= (idx y i) (+ (* a (idx x i)) (idx y i)))})}");
  EXPECT_EQ(M->getKernels().size(), 1u);
}

TEST(ParserTest, ConstDecls) {
  std::unique_ptr<Module> M = parseOk("const A: f64 = 1.5;\nconst B: u32 = 0xffu32 + A;\n"
                                      "const C: bool;\n");
  ASSERT_TRUE(M);
  ASSERT_EQ(M->Decls.size(), 3u);
  EXPECT_EQ(dump(*cast<ConstDecl>(*M->Decls[1]).Init), "(+ 255u32 A)");
  // The verifier, not the parser, requires the initializer.
  EXPECT_EQ(cast<ConstDecl>(*M->Decls[2]).Init, nullptr);
}

TEST(ParserTest, Types) {
  std::unique_ptr<Module> M =
      parseOk("fn f(a: bool, b: i8, c: i16, d: i32, e: i64, f: u8, g: u16, h: u32, "
              "i: u64, j: f32, k: f64, l: ptr<i32>, m: ptr<f64, shared>, "
              "n: ptr<u8, local>, o: ptr<bool>) -> u16 {}");
  ASSERT_TRUE(M);
  const FunctionDecl *F = firstFunction(*M);
  std::string All;
  for (const auto &P : F->Params)
    All += P->Ty.str() + " ";
  EXPECT_EQ(All, "bool i8 i16 i32 i64 u8 u16 u32 u64 f32 f64 ptr<i32> "
                 "ptr<f64, shared> ptr<u8, local> ptr<bool> ");
  EXPECT_EQ(F->ReturnTy, Type::getScalar(ScalarKind::U16));
  // A kernel with a return type parses; the verifier rejects it.
  EXPECT_TRUE(parseOk("kernel k() -> i32 { return 1; }"));
}

TEST(ParserTest, ArrayDeclarations) {
  std::unique_ptr<Module> M =
      parseOk("const N: i32 = 4;\n"
              "kernel k() { var a: [f32; 4]; shared t: [i32; N]; shared d: [f64]; "
              "var h: [u8; 0x10u32]; let x: [i32; 4]; var y: [f32; 2] = 1; }");
  ASSERT_TRUE(M);
  const FunctionDecl *F = firstFunction(*M);
  EXPECT_EQ(dumpBlock(*F->Body),
            "{(var a [f32; 4] size=4) (shared t [i32] size=N) (shared d [f64]) "
            "(var h [u8; 16] size=16u32) (let x [i32; 4] size=4) "
            "(var y [f32; 2] size=2 1)}");
  const auto &T = cast<DeclStmt>(*F->Body->Body[1]);
  EXPECT_TRUE(T.Var.Ty.isArray());
  EXPECT_EQ(T.Var.Ty.getArrayCount(), 0u); // filled in by the verifier
  EXPECT_TRUE(llvm::isa<NameExpr>(T.Var.ArraySize.get()));
  EXPECT_EQ(T.Var.Storage, StorageKind::Shared);
  const auto &D = cast<DeclStmt>(*F->Body->Body[2]);
  EXPECT_EQ(D.Var.ArraySize, nullptr);
  EXPECT_EQ(loc(cast<DeclStmt>(*F->Body->Body[0]).Var.ArraySize->getLoc()), "2:27");
}

// An array size is any expression (the verifier folds it); `let x = e;`
// and `var x = e;` leave the type to the verifier.
TEST(ParserTest, ArraySizeExpressionsAndInferredTypes) {
  std::unique_ptr<Module> M = parseOk("kernel k() { var a: [f32; (S + 2 * H) * D + 1]; "
                                      "shared t: [i32; N > 2 ? N : 2]; let x = 1; var y = x; }");
  ASSERT_TRUE(M);
  const FunctionDecl *F = firstFunction(*M);
  EXPECT_EQ(dumpBlock(*F->Body),
            "{(var a [f32] size=(+ (* (+ S (* 2 H)) D) 1)) (shared t [i32] size=(? (> N 2) N 2)) "
            "(let x <invalid> 1) (var y <invalid> x)}");
  const auto &X = cast<DeclStmt>(*F->Body->Body[2]);
  EXPECT_TRUE(X.Var.TypeInferred);
  EXPECT_FALSE(X.Var.Ty.isValid());
  EXPECT_FALSE(cast<DeclStmt>(*F->Body->Body[0]).Var.TypeInferred);
}

// `[[T; M]; N]`: N rows of M; the outermost size is ArraySize, the inner
// ones InnerArraySizes, outer to inner; `t[y][x]` is an index of an index.
TEST(ParserTest, MultiDimensionalArrays) {
  std::unique_ptr<Module> M =
      parseOk("kernel k() { shared t: [[f32; 17]; 16]; var c: [[[i32; 4]; W + 1]; 2]; "
              "t[1][2] = t[3][c[0][1][2] as i32]; }");
  ASSERT_TRUE(M);
  const std::vector<StmtPtr> &Stmts = firstFunction(*M)->Body->Body;
  ASSERT_EQ(Stmts.size(), 3u);
  EXPECT_EQ(dump(*Stmts[0]), "(shared t [[f32; 17]; 16] size=16 inner=17)");
  // A size that is not a literal is 0 in the type until the verifier folds it.
  EXPECT_EQ(dump(*Stmts[1]), "(var c [[[i32; 4]; 0]; 2] size=2 inner=(+ W 1) inner=4)");
  EXPECT_EQ(dump(*Stmts[2]),
            "(= (idx (idx t 1) 2) (idx (idx t 3) (as i32 (idx (idx (idx c 0) 1) 2))))");
  const Type &T = cast<DeclStmt>(*Stmts[0]).Var.Ty;
  EXPECT_EQ(T.getArrayRank(), 2u);
  EXPECT_EQ(T.getArrayDim(0), 16u);
  EXPECT_EQ(T.getArrayDim(1), 17u);
  EXPECT_EQ(T.getArrayElementType(), Type::getArray(ScalarKind::F32, 17));
  EXPECT_EQ(T.getArrayElementType().getArrayElementType(), Type::getScalar(ScalarKind::F32));
  EXPECT_EQ(cast<DeclStmt>(*Stmts[1]).Var.Ty.getArrayRank(), 3u);
}

TEST(ParserTest, FunctionForms) {
  std::unique_ptr<Module> M = parseOk("fn a() {}\nkernel b(x: i32) {}\nfn c(x: i32, y: f32) -> f32 "
                                      "{ return y; }\n");
  ASSERT_TRUE(M);
  ASSERT_EQ(M->Decls.size(), 3u);
  EXPECT_EQ(M->getFunction("c")->Params.size(), 2u);
  EXPECT_TRUE(M->getFunction("a")->Body->Body.empty());
  EXPECT_TRUE(M->getFunction("a")->ReturnTy.isVoid());
}

//===----------------------------------------------------------------------===//
// Expressions
//===----------------------------------------------------------------------===//

TEST(ParserTest, Primaries) {
  EXPECT_EQ(expr("7"), "7");
  EXPECT_EQ(expr("7u32"), "7u32");
  EXPECT_EQ(expr("0xff"), "255");
  EXPECT_EQ(expr("2.5e-3"), "f0.0025000000000000001");
  EXPECT_EQ(expr("3f32"), "f3f32");
  EXPECT_EQ(expr("1.0f64"), "f1f64");
  EXPECT_EQ(expr("true"), "true");
  EXPECT_EQ(expr("false"), "false");
  EXPECT_EQ(expr("name_1"), "name_1");
  EXPECT_EQ(expr("((x))"), "x");
}

TEST(ParserTest, NegativeLiteralsAreUnary) {
  EXPECT_EQ(expr("-1"), "(neg 1)");
  EXPECT_EQ(expr("-9223372036854775808i64"), "(neg 9223372036854775808i64)");
  EXPECT_EQ(expr("- -x"), "(neg (neg x))");
  EXPECT_EQ(expr("2-1"), "(- 2 1)");
}

TEST(ParserTest, Precedence) {
  EXPECT_EQ(expr("a || b && c"), "(|| a (&& b c))");
  EXPECT_EQ(expr("a && b || c"), "(|| (&& a b) c)");
  EXPECT_EQ(expr("a && b == c"), "(&& a (== b c))");
  EXPECT_EQ(expr("a == b | c"), "(== a (| b c))");
  EXPECT_EQ(expr("a < b | c"), "(< a (| b c))");
  EXPECT_EQ(expr("a | b ^ c"), "(| a (^ b c))");
  EXPECT_EQ(expr("a ^ b & c"), "(^ a (& b c))");
  EXPECT_EQ(expr("a & b << c"), "(& a (<< b c))");
  EXPECT_EQ(expr("a << b + c"), "(<< a (+ b c))");
  EXPECT_EQ(expr("a + b * c"), "(+ a (* b c))");
  EXPECT_EQ(expr("a * b + c"), "(+ (* a b) c)");
  EXPECT_EQ(expr("a * b as f32"), "(* a (as f32 b))");
  EXPECT_EQ(expr("-x as f32"), "(as f32 (neg x))");
  EXPECT_EQ(expr("!a as i32"), "(as i32 (not a))");
  EXPECT_EQ(expr("-a[i]"), "(neg (idx a i))");
  EXPECT_EQ(expr("&a[i]"), "(addr (idx a i))");
  EXPECT_EQ(expr("~f(x).y"), "(bitnot (. (call f x) y))");
  EXPECT_EQ(expr("(a + b) * c"), "(* (+ a b) c)");
  EXPECT_EQ(expr("a || b && c == d | e ^ f & g << h + i * j as u8"),
            "(|| a (&& b (== c (| d (^ e (& f (<< g (+ h (* i (as u8 "
            "j))))))))))");
  EXPECT_EQ(expr("a as u8 * b + c << d & e ^ f | g != h && i || j"),
            "(|| (&& (!= (| (^ (& (<< (+ (* (as u8 a) b) c) d) e) f) g) h) "
            "i) j)");
}

// `?:`: below `||`, right-associative, any expression in the middle.
TEST(ParserTest, Conditional) {
  EXPECT_EQ(expr("c ? a : b"), "(? c a b)");
  EXPECT_EQ(expr("a || b ? c + 1 : d * 2"), "(? (|| a b) (+ c 1) (* d 2))");
  EXPECT_EQ(expr("a ? b : c ? d : e"), "(? a b (? c d e))");
  EXPECT_EQ(expr("a ? b ? c : d : e"), "(? a (? b c d) e)");
  EXPECT_EQ(expr("(a ? b : c) ? d : e"), "(? (? a b c) d e)");
  EXPECT_EQ(expr("(a ? b : c) + 1"), "(+ (? a b c) 1)");
  EXPECT_EQ(expr("p[a ? 0 : 1]"), "(idx p (? a 0 1))");
}

TEST(ParserTest, LeftAssociativity) {
  EXPECT_EQ(expr("a - b - c"), "(- (- a b) c)");
  EXPECT_EQ(expr("a / b * c % d"), "(% (* (/ a b) c) d)");
  EXPECT_EQ(expr("a << b >> c"), "(>> (<< a b) c)");
  EXPECT_EQ(expr("a || b || c"), "(|| (|| a b) c)");
  EXPECT_EQ(expr("a && b && c"), "(&& (&& a b) c)");
  EXPECT_EQ(expr("a & b & c"), "(& (& a b) c)");
  EXPECT_EQ(expr("x as i64 as f32"), "(as f32 (as i64 x))");
  EXPECT_EQ(expr("a[1][2]"), "(idx (idx a 1) 2)");
}

TEST(ParserTest, Comparisons) {
  EXPECT_EQ(expr("a == b"), "(== a b)");
  EXPECT_EQ(expr("a != b"), "(!= a b)");
  EXPECT_EQ(expr("a < b"), "(< a b)");
  EXPECT_EQ(expr("a <= b"), "(<= a b)");
  EXPECT_EQ(expr("a > b"), "(> a b)");
  EXPECT_EQ(expr("a >= b"), "(>= a b)");
  EXPECT_EQ(expr("(a < b) == c"), "(== (< a b) c)");
  EXPECT_EQ(expr("a < b && c < d"), "(&& (< a b) (< c d))");
  EXPECT_EQ(expr("a < b || c == d"), "(|| (< a b) (== c d))");
}

TEST(ParserTest, UnaryOperators) {
  EXPECT_EQ(expr("-x"), "(neg x)");
  EXPECT_EQ(expr("!x"), "(not x)");
  EXPECT_EQ(expr("~x"), "(bitnot x)");
  EXPECT_EQ(expr("&x"), "(addr x)");
  EXPECT_EQ(expr("!-~&x"), "(not (neg (bitnot (addr x))))");
  EXPECT_EQ(expr("--x"), "(neg (neg x))");
  EXPECT_EQ(expr("a - -b"), "(- a (neg b))");
  EXPECT_EQ(expr("a & &b"), "(& a (addr b))");
}

TEST(ParserTest, Postfix) {
  EXPECT_EQ(expr("f()"), "(call f)");
  EXPECT_EQ(expr("f(a)"), "(call f a)");
  EXPECT_EQ(expr("f(a, b + 1, g(c))"), "(call f a (+ b 1) (call g c))");
  EXPECT_EQ(expr("p[i + 1]"), "(idx p (+ i 1))");
  EXPECT_EQ(expr("thread_idx.x + block_idx.y * grid_dim.z"),
            "(+ (. thread_idx x) (* (. block_idx y) (. grid_dim z)))");
  EXPECT_EQ(expr("f(x)[0]"), "(idx (call f x) 0)");
  EXPECT_EQ(expr("(p + 1)[0]"), "(idx (+ p 1) 0)");
  EXPECT_EQ(expr("a.x.y"), "(. (. a x) y)");
  EXPECT_EQ(expr("select(c, a as f32, 1.5)"), "(call select c (as f32 a) f1.5)");
}

TEST(ParserTest, CastTypes) {
  EXPECT_EQ(expr("x as bool"), "(as bool x)"); // the verifier rejects it
  EXPECT_EQ(expr("p as ptr<f32>"), "(as ptr<f32> p)");
  EXPECT_EQ(expr("x as u64 < y"), "(< (as u64 x) y)");
}

//===----------------------------------------------------------------------===//
// Statements
//===----------------------------------------------------------------------===//

TEST(ParserTest, Declarations) {
  EXPECT_EQ(body("let x: i32 = 1; var y: f32 = 2.0; var z: u8;"),
            "{(let x i32 1) (var y f32 f2) (var z u8)}");
  EXPECT_EQ(body("let p: ptr<f32, shared> = &t[0];"),
            "{(let p ptr<f32, shared> (addr (idx t 0)))}");
  // Type names and `local` are not keywords.
  EXPECT_EQ(body("var local: i32 = 0; let ptr: f32 = f32 + i32;"),
            "{(var local i32 0) (let ptr f32 (+ f32 i32))}");
  // A `>=` right after a pointer type is split into '>' '='.
  EXPECT_EQ(body("let p: ptr<f32>= q;"), "{(let p ptr<f32> q)}");
}

TEST(ParserTest, Assignments) {
  EXPECT_EQ(body("x = 1; x += 1; x -= 1; x *= 1; x /= 1; x %= 1; x &= 1; "
                 "x |= 1; x ^= 1; x <<= 1; x >>= 1;"),
            "{(= x 1) (+= x 1) (-= x 1) (*= x 1) (/= x 1) (%= x 1) (&= x 1) "
            "(|= x 1) (^= x 1) (<<= x 1) (>>= x 1)}");
  EXPECT_EQ(body("p[i] = a == b; a[0][1] += 2;"),
            "{(= (idx p i) (== a b)) (+= (idx (idx a 0) 1) 2)}");
  // Any expression is a target syntactically; the verifier checks it.
  EXPECT_EQ(body("f(x) = 1; (a + b) = 2;"), "{(= (call f x) 1) (= (+ a b) 2)}");
}

TEST(ParserTest, CallStatements) {
  // Parentheses are not kept: `(f(x));` is a call statement.
  EXPECT_EQ(body("(f(x));"), "{(expr (call f x))}");
  EXPECT_EQ(body("sync_threads(); atomic_add(&p[0], 1);"),
            "{(expr (call sync_threads)) "
            "(expr (call atomic_add (addr (idx p 0)) 1))}");
}

TEST(ParserTest, If) {
  EXPECT_EQ(body("if c { x = 1; }"), "{(if c {(= x 1)})}");
  EXPECT_EQ(body("if c {} else {}"), "{(if c {} {})}");
  EXPECT_EQ(body("if a {} else if b { x = 1; } else if c {} else { y = 2; }"),
            "{(if a {} (if b {(= x 1)} (if c {} {(= y 2)})))}");
  EXPECT_EQ(body("if (a < b) { }"), "{(if (< a b) {})}");
  EXPECT_EQ(body("if a && !b { if c {} }"), "{(if (&& a (not b)) {(if c {})})}");
}

TEST(ParserTest, Loops) {
  EXPECT_EQ(body("while i < n { i += 1; break; continue; }"),
            "{(while (< i n) {(+= i 1) (break) (continue)})}");
  EXPECT_EQ(body("for i in 0..n { }"), "{(for i 0 n {})}");
  EXPECT_EQ(body("for i in a + 1..b * 2 step s + 1 { x = i; }"),
            "{(for i (+ a 1) (* b 2) step (+ s 1) {(= x i)})}");
  EXPECT_EQ(body("for j in 0..10 step 2 {}"), "{(for j 0 10 step 2 {})}");
  EXPECT_EQ(body("for k in (0)..(n) {}"), "{(for k 0 n {})}");
  // The general loop: `let`, `var` or `;` after `for`.
  EXPECT_EQ(body("for var s: u32 = n / 2; s > 0; s >>= 1 { continue; }"),
            "{(for (var s u32 (/ n 2)) (> s 0) (>>= s 1) {(continue)})}");
  EXPECT_EQ(body("for let i: i32 = 0; i < n; x[0] = i {}"),
            "{(for (let i i32 0) (< i n) (= (idx x 0) i) {})}");
  EXPECT_EQ(body("for ; i >= 0; i -= 1 {}"), "{(for _ (>= i 0) (-= i 1) {})}");
  EXPECT_EQ(body("for var d: i32 = 1; d < n; { d *= 2; }"),
            "{(for (var d i32 1) (< d n) _ {(*= d 2)})}");
  EXPECT_EQ(body("for ; c; {}"), "{(while c {})}");
  // `in` as the general loop's variable, and as a range loop's.
  EXPECT_EQ(body("for var in: i32 = 0; in < 2; in += 1 {} for in in 0..in {}"),
            "{(for (var in i32 0) (< in 2) (+= in 1) {}) (for in 0 in {})}");
}

// `in`, `step` and `as` are keywords only in their one position: elsewhere
// they are names, also right next to that position.
TEST(ParserTest, ContextualKeywordsAreNamesElsewhere) {
  EXPECT_EQ(body("for in in in..step step step { as = in as i32; }"),
            "{(for in in step step step {(= as (as i32 in))})}");
  EXPECT_EQ(body("let as: f32 = as as f32 as f32;"), "{(let as f32 (as f32 (as f32 as)))}");
  EXPECT_EQ(body("var step: i32 = in(step);"), "{(var step i32 (call in step))}");
}

// `var` before a parameter's name makes it mutable; the location is the
// name's.
TEST(ParserTest, MutableParameters) {
  std::unique_ptr<Module> M = parseOk("fn f(var n: i32, m: i32, var in: ptr<f32>) { }");
  ASSERT_TRUE(M);
  const FunctionDecl *F = firstFunction(*M);
  ASSERT_EQ(F->Params.size(), 3u);
  EXPECT_TRUE(F->Params[0]->Mutable);
  EXPECT_EQ(loc(F->Params[0]->Loc), "1:10");
  EXPECT_FALSE(F->Params[1]->Mutable);
  EXPECT_TRUE(F->Params[2]->Mutable);
  EXPECT_EQ(F->Params[2]->Name, "in");
  EXPECT_EQ(F->Params[2]->Storage, StorageKind::Param);
}

TEST(ParserTest, ReturnAndBlocks) {
  EXPECT_EQ(body("return;"), "{(return)}");
  EXPECT_EQ(body("return x + 1;"), "{(return (+ x 1))}");
  EXPECT_EQ(body("{ let x: i32 = 1; { } } {}"), "{{(let x i32 1) {}} {}}");
}

TEST(ParserTest, StatementKindsAndStorage) {
  std::unique_ptr<Module> M =
      parseOk("kernel k() { let a: i32 = 0; var b: i32 = 0; shared c: [i32; 1]; "
              "for i in 0..1 {} }");
  ASSERT_TRUE(M);
  const auto &B = firstFunction(*M)->Body->Body;
  EXPECT_EQ(cast<DeclStmt>(*B[0]).Var.Storage, StorageKind::Let);
  EXPECT_EQ(cast<DeclStmt>(*B[1]).Var.Storage, StorageKind::Var);
  EXPECT_EQ(cast<DeclStmt>(*B[2]).Var.Storage, StorageKind::Shared);
  const auto &F = cast<ForStmt>(*B[3]);
  EXPECT_EQ(F.Index.Storage, StorageKind::LoopIndex);
  EXPECT_FALSE(F.Index.Ty.isValid());
  EXPECT_EQ(F.Step, nullptr);
}

//===----------------------------------------------------------------------===//
// Locations
//===----------------------------------------------------------------------===//

TEST(ParserTest, ExpressionLocations) {
  //                        1         2         3         4
  //               1234567890123456789012345678901234567890123456
  auto M = parseOk("kernel k() {\n"
                   "  x = (a + -b) * p[i] as f32 + f(y).x;\n"
                   "}\n");
  ASSERT_TRUE(M);
  const auto &A = cast<AssignStmt>(*firstFunction(*M)->Body->Body[0]);
  EXPECT_EQ(loc(A.getLoc()), "2:3");
  EXPECT_EQ(loc(A.Target->getLoc()), "2:3");
  // (+ (* (+ a (neg b)) (as f32 (idx p i))) (. (call f y) x))
  const auto &Add = cast<BinaryExpr>(*A.Value);
  EXPECT_EQ(loc(Add.getLoc()), "2:7"); // first token of the LHS: '('
  const auto &Mul = cast<BinaryExpr>(*Add.LHS);
  EXPECT_EQ(loc(Mul.getLoc()), "2:7");
  const auto &Inner = cast<BinaryExpr>(*Mul.LHS);
  EXPECT_EQ(loc(Inner.getLoc()), "2:8");       // a
  EXPECT_EQ(loc(Inner.RHS->getLoc()), "2:12"); // unary: the '-'
  EXPECT_EQ(loc(cast<UnaryExpr>(*Inner.RHS).Operand->getLoc()), "2:13");
  const auto &Cast = cast<CastExpr>(*Mul.RHS);
  EXPECT_EQ(loc(Cast.getLoc()), "2:23"); // 'as'
  const auto &Idx = cast<IndexExpr>(*Cast.Operand);
  EXPECT_EQ(loc(Idx.getLoc()), "2:19"); // '['
  EXPECT_EQ(loc(Idx.Base->getLoc()), "2:18");
  EXPECT_EQ(loc(Idx.Idx->getLoc()), "2:20");
  const auto &Mem = cast<MemberExpr>(*Add.RHS);
  EXPECT_EQ(loc(Mem.getLoc()), "2:36"); // '.'
  const auto &Call = cast<CallExpr>(*Mem.Base);
  EXPECT_EQ(loc(Call.getLoc()), "2:32"); // callee name
  EXPECT_EQ(loc(Call.Args[0]->getLoc()), "2:34");
}

TEST(ParserTest, StatementLocations) {
  auto M = parseOk("fn f(a: i32,\n     b: ptr<i32>) -> i32 {\n"
                   "  let x: i32 = 1;\n"
                   "  if a < 0 { return 0; } else if a > 1 { } else { }\n"
                   "  while true { break; }\n"
                   "  for i in 0..2 step 1 { continue; }\n"
                   "  b[0] += 1;\n"
                   "  g();\n"
                   "  { }\n"
                   "  return x;\n"
                   "}\n");
  ASSERT_TRUE(M);
  const FunctionDecl *F = firstFunction(*M);
  EXPECT_EQ(loc(F->getLoc()), "1:1");
  EXPECT_EQ(loc(F->Params[0]->Loc), "1:6");
  EXPECT_EQ(loc(F->Params[1]->Loc), "2:6");
  EXPECT_EQ(loc(F->Body->getLoc()), "2:26");
  const auto &B = F->Body->Body;
  ASSERT_EQ(B.size(), 8u);
  const auto &D = cast<DeclStmt>(*B[0]);
  EXPECT_EQ(loc(D.getLoc()), "3:3");
  EXPECT_EQ(loc(D.Var.Loc), "3:7");
  const auto &If = cast<IfStmt>(*B[1]);
  EXPECT_EQ(loc(If.getLoc()), "4:3");
  EXPECT_EQ(loc(If.Then->getLoc()), "4:12");
  EXPECT_EQ(loc(If.Then->Body[0]->getLoc()), "4:14");
  EXPECT_EQ(loc(If.Else->getLoc()), "4:31"); // the 'if' of 'else if'
  EXPECT_EQ(loc(cast<IfStmt>(*If.Else).Else->getLoc()), "4:49");
  const auto &W = cast<WhileStmt>(*B[2]);
  EXPECT_EQ(loc(W.getLoc()), "5:3");
  EXPECT_EQ(loc(W.Body->Body[0]->getLoc()), "5:16");
  const auto &For = cast<ForStmt>(*B[3]);
  EXPECT_EQ(loc(For.getLoc()), "6:3");
  EXPECT_EQ(loc(For.Index.Loc), "6:7");
  EXPECT_EQ(loc(For.Begin->getLoc()), "6:12");
  EXPECT_EQ(loc(For.End->getLoc()), "6:15");
  EXPECT_EQ(loc(For.Step->getLoc()), "6:22");
  EXPECT_EQ(loc(For.Body->Body[0]->getLoc()), "6:26");
  EXPECT_EQ(loc(B[4]->getLoc()), "7:3"); // assignment: the target's start
  EXPECT_EQ(loc(B[5]->getLoc()), "8:3"); // call statement
  EXPECT_EQ(loc(B[6]->getLoc()), "9:3"); // block: '{'
  EXPECT_EQ(loc(B[7]->getLoc()), "10:3");
}

//===----------------------------------------------------------------------===//
// Syntax errors
//===----------------------------------------------------------------------===//

TEST(ParserTest, MissingSemicolon) {
  // Reported just after the previous token.
  EXPECT_EQ(onlyError("kernel k(p: ptr<i32>) {\n  p[0] = 1\n}\n"),
            "2:11: expected ';' after statement");
  EXPECT_EQ(onlyError("kernel k() {\n  let x: i32 = 1\n  x = 2;\n}\n"),
            "2:17: expected ';' after statement");
  EXPECT_EQ(onlyError("kernel k() { break }"), "1:19: expected ';' after statement");
  EXPECT_EQ(onlyError("kernel k() { return 1 2; }"), "1:22: expected ';' after statement");
  EXPECT_EQ(onlyError("const A: i32 = 1\nfn f() {}"), "1:17: expected ';' after declaration");
  EXPECT_EQ(onlyError("const A: i32 = 1"), "1:17: expected ';' after declaration");
}

TEST(ParserTest, ExpressionErrors) {
  EXPECT_EQ(onlyError("kernel k() { x = ; }"), "1:18: expected expression, found ';'");
  EXPECT_EQ(onlyError("kernel k() { x = 1 +\n}"), "2:1: expected expression, found '}'");
  EXPECT_EQ(onlyError("kernel k() { x = (1 + 2; }"),
            "1:24: expected ')' after expression, found ';'");
  EXPECT_EQ(onlyError("kernel k() { x = p[1; }"), "1:21: expected ']' after index, found ';'");
  EXPECT_EQ(onlyError("kernel k() { f(1 2); }"),
            "1:18: expected ',' or ')' after call argument, found '2'");
  EXPECT_EQ(onlyError("kernel k() { f(1,); }"), "1:18: expected expression, found ')'");
  EXPECT_EQ(onlyError("kernel k() { x = a.1; }"),
            "1:20: expected a field name ('x', 'y', 'z' or a struct's field) after '.', found '1'");
  EXPECT_EQ(onlyError("kernel k() { x = a.(; }"),
            "1:20: expected a field name ('x', 'y', 'z' or a struct's field) after '.', found '('");
  EXPECT_EQ(onlyError("kernel k() { x = a && && b; }"), "1:23: expected expression, found '&&'");
  EXPECT_EQ(onlyError("kernel k() { x = 1 as; }"), "1:22: expected type, found ';'");
  EXPECT_EQ(onlyError("kernel k() { x = 1 as int; }"),
            "1:23: unknown type 'int'; did you mean 'i32'?");
  EXPECT_EQ(onlyError("kernel k() { x = 1\n  as [f32; 2]; }"),
            "2:6: array types are only allowed in 'var', 'shared', 'const' and 'constant' "
            "declarations");
  EXPECT_EQ(onlyError("kernel k() { x = y = 1; }"), "1:19: expected ';' after statement");
}

TEST(ParserTest, ChainedComparison) {
  EXPECT_EQ(onlyError("kernel k() { if a < b < c {} }"),
            "1:23: comparison operators cannot be chained; add parentheses");
  EXPECT_EQ(onlyError("kernel k() { x = a == b != c; }"),
            "1:25: comparison operators cannot be chained; add parentheses");
  EXPECT_EQ(onlyError("kernel k() { x = a < b && c <= d >= e; }"),
            "1:34: comparison operators cannot be chained; add parentheses");
}

TEST(ParserTest, CalleeMustBeAName) {
  EXPECT_EQ(onlyError("kernel k() { (f)(1); }"), "1:17: only a function name can be called");
  EXPECT_EQ(onlyError("kernel k() { x = p[0](1); }"), "1:22: only a function name can be called");
  EXPECT_EQ(onlyError("kernel k() { x = a.x(); }"), "1:21: only a function name can be called");
  EXPECT_EQ(onlyError("kernel k() { x = 1(); }"), "1:19: only a function name can be called");
}

TEST(ParserTest, StatementErrors) {
  EXPECT_EQ(onlyError("kernel k() { x; }"), "1:14: expected an assignment or a call");
  EXPECT_EQ(onlyError("kernel k() {\n  a + f(1);\n}"), "2:3: expected an assignment or a call");
  EXPECT_EQ(onlyError("kernel k() { ; }"), "1:14: expected statement, found ';'");
  EXPECT_EQ(onlyError("kernel k() { else {} }"), "1:14: expected statement, found 'else'");
  EXPECT_EQ(onlyError("kernel k() { let = 1; }"),
            "1:18: expected variable name after 'let', found '='");
  EXPECT_EQ(onlyError("kernel k() { var 1: i32; }"),
            "1:18: expected variable name after 'var', found '1'");
  EXPECT_EQ(onlyError("kernel k() { shared: i32; }"),
            "1:20: expected variable name after 'shared', found ':'");
  EXPECT_EQ(onlyError("kernel k() { let x; }"),
            "1:19: expected ':' or '=' after variable name, found ';'");
  EXPECT_EQ(onlyError("kernel k() { shared x = 1; }"),
            "1:23: expected ':' after variable name, found '='");
  EXPECT_EQ(onlyError("kernel k() { if c x = 1; }"),
            "1:19: expected '{' after 'if' condition, found 'x'");
  EXPECT_EQ(onlyError("kernel k() { if c {} else x = 1; }"),
            "1:27: expected '{' or 'if' after 'else', found 'x'");
  EXPECT_EQ(onlyError("kernel k() { while c x = 1; }"),
            "1:22: expected '{' after 'while' condition, found 'x'");
  EXPECT_EQ(onlyError("kernel k() { for 1 in 0..2 {} }"),
            "1:18: expected loop variable name after 'for', found '1'");
  EXPECT_EQ(onlyError("kernel k() { for i = 0..2 {} }"),
            "1:20: expected 'in' after loop variable, found '='; a loop with a condition and "
            "an update is written 'for var i: TYPE = START; CONDITION; UPDATE { }'");
  EXPECT_EQ(onlyError("kernel k() { for var i: i32 = 0; i < 2; f(i) {} }"),
            "1:41: the update of a 'for' loop must be an assignment, such as 'i += 1'");
  EXPECT_EQ(onlyError("kernel k() { for var i: i32 = 0; i < 2 {} }"),
            "1:40: expected ';' after 'for' condition, found '{'");
  EXPECT_EQ(onlyError("kernel k() { for var i: i32 = 0; i < 2; i += 1; {} }"),
            "1:47: expected '{' after 'for' update, found ';'");
  EXPECT_EQ(onlyError("kernel k() { for ; i < 2; return; {} }"),
            "1:27: expected an assignment or '{' after the 'for' condition, found 'return'");
  EXPECT_EQ(onlyError("kernel k() { for i in 0, 2 {} }"),
            "1:24: expected '..' in 'for' range, found ','");
  EXPECT_EQ(onlyError("kernel k() { for i in 0..2 step {} }"),
            "1:33: expected expression, found '{'");
  EXPECT_EQ(onlyError("kernel k() { for i in 0..2 x {} }"),
            "1:28: expected '{' after 'for' range, found 'x'");
  EXPECT_EQ(onlyError("kernel k() { return }"), "1:21: expected expression, found '}'");
}

TEST(ParserTest, DeclarationErrors) {
  EXPECT_EQ(
      onlyError("let x: i32 = 1;"),
      "1:1: expected 'const', 'constant', 'struct', 'fn' or 'kernel' at top level, found 'let'");
  EXPECT_EQ(
      onlyError("}"),
      "1:1: expected 'const', 'constant', 'struct', 'fn' or 'kernel' at top level, found '}'");
  EXPECT_EQ(onlyError("kernel (x: i32) {}"), "1:8: expected kernel name after 'kernel', found '('");
  EXPECT_EQ(onlyError("fn 1() {}"), "1:4: expected function name after 'fn', found '1'");
  EXPECT_EQ(onlyError("kernel k {}"), "1:10: expected '(' after function name, found '{'");
  EXPECT_EQ(onlyError("kernel k(x i32) {}"),
            "1:12: expected ':' after parameter name, found 'i32'");
  EXPECT_EQ(onlyError("kernel k(x: i32 y: i32) {}"),
            "1:17: expected ',' or ')' after parameter, found 'y'");
  EXPECT_EQ(onlyError("kernel k(x: i32,) {}"), "1:17: expected parameter name, found ')'");
  EXPECT_EQ(onlyError("kernel k(1) {}"), "1:10: expected parameter name, found '1'");
  EXPECT_EQ(onlyError("fn f() i32 {}"),
            "1:8: expected '{' or '->' after parameter list, found 'i32'");
  EXPECT_EQ(onlyError("fn f() -> i32 ;"), "1:15: expected '{' to start function body, found ';'");
  EXPECT_EQ(onlyError("fn f() -> {}"), "1:11: expected type, found '{'");
  EXPECT_EQ(onlyError("const : i32 = 1;"), "1:7: expected constant name after 'const', found ':'");
  EXPECT_EQ(onlyError("const A = 1;"), "1:9: expected ':' after constant name, found '='");
  EXPECT_EQ(onlyError("fn f() {"), "1:9: expected '}' at end of block, found end of file");
  EXPECT_EQ(onlyError("fn f() {\n  x = 1;\nkernel k() {}\n"),
            "3:1: expected '}' at end of block, found 'kernel'");
}

TEST(ParserTest, TypeErrors) {
  EXPECT_EQ(onlyError("fn f(x: foo) {}"), "1:9: unknown type 'foo'");
  EXPECT_EQ(onlyError("fn f(x: 1) {}"), "1:9: expected type, found '1'");
  EXPECT_EQ(onlyError("fn f(x: ptr) {}"), "1:12: expected '<' after 'ptr', found ')'");
  EXPECT_EQ(onlyError("fn f(x: ptr<ptr<i32>>) {}"),
            "1:13: expected scalar type after 'ptr<', found 'ptr'");
  EXPECT_EQ(onlyError("fn f(x: ptr<foo>) {}"),
            "1:13: expected scalar type after 'ptr<', found 'foo'");
  EXPECT_EQ(onlyError("fn f(x: ptr<i32, global>) {}"),
            "1:18: expected 'shared' or 'local' after ',' in pointer type, "
            "found 'global'");
  EXPECT_EQ(onlyError("fn f(x: ptr<i32) {}"),
            "1:16: expected '>' at end of pointer type, found ')'");
  EXPECT_EQ(onlyError("fn f(x: ptr<i32, shared, local>) {}"),
            "1:24: expected '>' at end of pointer type, found ','");
  EXPECT_EQ(onlyError("fn f(x: [i32; 4]) {}"),
            "1:9: array types are only allowed in 'var', 'shared', 'const' and 'constant' "
            "declarations");
  EXPECT_EQ(onlyError("fn f() -> [i32] {}"),
            "1:11: array types are only allowed in 'var', 'shared', 'const' and 'constant' "
            "declarations");
  // `const A: [i32; 2] = ...` parses: a table (test/Sema/constant-table-errors.kir).
  EXPECT_EQ(onlyError("kernel k() { var a: [ptr<i32>; 2]; }"),
            "1:22: expected scalar element type after '[', found 'ptr'");
  EXPECT_EQ(onlyError("kernel k() { var a: [[i32]; 2]; }"),
            "1:26: expected ';' and a size after array element type, found ']'");
  EXPECT_EQ(onlyError("kernel k() { var a: [[[[[i32; 2]; 2]; 2]; 2]; 2]; }"),
            "1:25: an array type has at most 4 dimensions");
  EXPECT_EQ(onlyError("kernel k() { var a: [i32 2]; }"),
            "1:26: expected ';' or ']' after array element type, found '2'");
  EXPECT_EQ(onlyError("kernel k() { var a: [i32; ]; }"),
            "1:27: expected array size (a constant expression), found ']'");
  EXPECT_EQ(onlyError("kernel k() { var a: [i32; N + 1 1]; }"),
            "1:33: expected ']' after array size, found '1'");
  EXPECT_EQ(onlyError("kernel k() { var a: [i32; 4; }"),
            "1:28: expected ']' after array size, found ';'");
}

TEST(ParserTest, LexerErrorsAreNotRepeated) {
  // The lexer's error is the only one at that token.
  EXPECT_EQ(onlyError("kernel k() { x = 1u7; }"), "1:18: invalid suffix 'u7' on integer literal");
  EXPECT_EQ(onlyError("kernel k() { x = @; }"), "1:18: unexpected character '@'");
  EXPECT_EQ(onlyError("kernel k() { x = 1 @ 2; }"), "1:20: unexpected character '@'");
  EXPECT_EQ(onlyError("kernel k() {\n  x = 1;\n  /* no end\n}\n"),
            "3:3: unterminated '/*' comment");
  EXPECT_EQ(onlyError("kernel k() { x = 18446744073709551616; }"),
            "1:18: integer literal is too large");
  EXPECT_EQ(onlyError("kernel k() { x = 0x; }"), "1:18: expected hexadecimal digits after '0x'");
  // A bad literal is still a literal: the rest parses normally.
  EXPECT_EQ(errors("kernel k() { x = 2x + 1; y = 1 +; }"),
            (std::vector<std::string>{"1:18: invalid suffix 'x' on integer literal",
                                      "1:33: expected expression, found ';'"}));
}

TEST(ParserTest, RecoveryReportsIndependentErrors) {
  std::vector<std::string> E = errors("const A: i32 = ;\n"
                                      "kernel k(p: ptr<i32>) {\n"
                                      "  let x: i32 = 1 +;\n"
                                      "  p[0] = 1\n"
                                      "  if x < { p[1] = 2; }\n"
                                      "  while true { p[2] = ; }\n"
                                      "  y = 3;\n"
                                      "  x;\n"
                                      "}\n"
                                      "fn f(x: foo) { }\n"
                                      "garbage here;\n"
                                      "fn g() { return a < b < c; }\n");
  EXPECT_EQ(E, (std::vector<std::string>{
                   "1:16: expected expression, found ';'",
                   "3:19: expected expression, found ';'",
                   "4:11: expected ';' after statement",
                   "5:10: expected expression, found '{'",
                   "6:23: expected expression, found ';'",
                   "8:3: expected an assignment or a call",
                   "10:9: unknown type 'foo'",
                   "11:1: expected 'const', 'constant', 'struct', 'fn' or 'kernel' at top level, "
                   "found 'garbage'",
                   "12:23: comparison operators cannot be chained; add "
                   "parentheses",
               }));
}

TEST(ParserTest, RecoverySkipsToStatementEnd) {
  // The bad statement's nested block is skipped as a whole; the statements
  // after it are parsed (the second error proves it).
  EXPECT_EQ(errors("kernel k() {\n  if == { a = 1; b = 2; }\n  c = ;\n}"),
            (std::vector<std::string>{"2:6: expected expression, found '=='",
                                      "3:7: expected expression, found ';'"}));
  // A missing ';' before a token on the same line drops the rest of the
  // statement instead of reporting it again.
  EXPECT_EQ(errors("kernel k() {\n  a = 1 b = 2;\n  c = ;\n}"),
            (std::vector<std::string>{"2:8: expected ';' after statement",
                                      "3:7: expected expression, found ';'"}));
}

TEST(ParserTest, DiagnosticRendering) {
  auto M = parseModule("kernel k() {\n  x = 1 +;\n}\n", "file.kir");
  ASSERT_FALSE(bool(M));
  EXPECT_EQ(errorText(M.takeError()), "file.kir:2:10: error: expected expression, found ';'\n"
                                      "  x = 1 +;\n"
                                      "         ^\n");
  // At end of input.
  M = parseModule("fn f() {", "e.kir");
  ASSERT_FALSE(bool(M));
  EXPECT_EQ(errorText(M.takeError()),
            "e.kir:1:9: error: expected '}' at end of block, found end of file\n"
            "fn f() {\n"
            "        ^\n");
}

TEST(ParserTest, LongTokenIsShortenedInMessages) {
  std::string Name(100, 'a');
  EXPECT_EQ(onlyError("kernel k() { x = 1 " + Name + "; }"), "1:19: expected ';' after statement");
  EXPECT_EQ(onlyError(Name),
            "1:1: expected 'const', 'constant', 'struct', 'fn' or 'kernel' at top level, found '" +
                std::string(40, 'a') + "...'");
}

//===----------------------------------------------------------------------===//
// Nesting limits
//===----------------------------------------------------------------------===//

std::string repeat(std::string_view S, size_t N) {
  std::string Out;
  Out.reserve(S.size() * N);
  for (size_t I = 0; I < N; ++I)
    Out += S;
  return Out;
}

const char *const TooDeep = "nesting is too deep (limit 256)";

/// True when \p Src is rejected with the nesting error, and at most one
/// more (when the input is also unterminated).
bool rejectedAsTooDeep(const std::string &Src) {
  std::vector<std::string> E = errors(Src);
  return !E.empty() && E.size() <= 2 && E[0].find(TooDeep) != std::string::npos;
}

TEST(ParserTest, ModerateNestingIsFine) {
  EXPECT_TRUE(parseOk("kernel k() { x = " + repeat("(", 200) + "1" + repeat(")", 200) + "; }"));
  EXPECT_TRUE(parseOk("kernel k() { x = " + repeat("-", 200) + "1; }"));
  EXPECT_TRUE(parseOk("kernel k() { x = 1" + repeat(" + 1", 200) + "; }"));
  EXPECT_TRUE(parseOk("kernel k() " + repeat("{", 200) + repeat("}", 200)));
  EXPECT_TRUE(parseOk("kernel k() { x = a" + repeat("[0]", 200) + "; }"));
  EXPECT_TRUE(parseOk("kernel k() { x = a" + repeat(" as i32", 200) + "; }"));
  EXPECT_TRUE(parseOk("kernel k() { if a {}" + repeat(" else if a {}", 200) + " }"));
  // Many statements or declarations are not nesting.
  EXPECT_TRUE(parseOk("kernel k() {" + repeat(" x = 1;", 20000) + " }"));
  EXPECT_TRUE(parseOk(repeat("fn f() {}\n", 5000)));
}

TEST(ParserTest, DeepNestingIsAnError) {
  constexpr size_t N = 100000; // far more than a stack could recurse over
  EXPECT_TRUE(
      rejectedAsTooDeep("kernel k() { x = " + repeat("(", N) + "1" + repeat(")", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = " + repeat("(", N)));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = " + repeat("-", N) + "1; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = " + repeat("!~&-", N) + "1; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = 1" + repeat(" + 1", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = 1" + repeat(" * 1", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() " + repeat("{", N) + repeat("}", N)));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() " + repeat("{", N)));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { " + repeat("if a { ", N)));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = a" + repeat("[0]", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = a" + repeat("[a", N)));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = a" + repeat(".x", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = a" + repeat(" as i32", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = " + repeat("f(", N)));
  // Types nest at most MaxArrayRank deep, whatever the input.
  EXPECT_EQ(errors("kernel k() { var a: " + repeat("[", N) + "; }").size(), 1u);
  EXPECT_EQ(errors("fn f(a: " + repeat("ptr<", N) + ") {}").size(), 1u);
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { x = f(a)" + repeat("[f(a)]", N) + "; }"));
  EXPECT_TRUE(rejectedAsTooDeep("kernel k() { if a {}" + repeat(" else if a {}", N) + " }"));
  // The parser recovers after the error: a later error is still found.
  std::vector<std::string> E = errors("kernel k() { x = " + repeat("(", 1000) + "; y = ; }");
  ASSERT_EQ(E.size(), 2u);
  EXPECT_THAT(E[0], HasSubstr(TooDeep));
  EXPECT_THAT(E[1], HasSubstr("expected expression, found ';'"));
}

//===----------------------------------------------------------------------===//
// Robustness: truncated, mutated and random input
//===----------------------------------------------------------------------===//

const char *const Programs[] = {
    R"(// Tiled matrix multiply with shared memory.
const TILE: i32 = 16;
fn idx(r: i32, c: i32, n: i32) -> i32 { return r * n + c; }
kernel matmul(n: i32, a: ptr<f32>, b: ptr<f32>, c: ptr<f32>) {
  shared ta: [f32; TILE];
  shared tb: [f32; 16];
  let row: i32 = block_idx.y * TILE + thread_idx.y;
  let col: i32 = block_idx.x * TILE + thread_idx.x;
  var acc: f32 = 0.0;
  for t in 0..n / TILE step 1 {
    ta[thread_idx.y * TILE + thread_idx.x] = a[idx(row, t * TILE + thread_idx.x, n)];
    sync_threads();
    for k in 0..TILE { acc += ta[thread_idx.y * TILE + k] * tb[k * TILE + thread_idx.x]; }
    sync_threads();
  }
  if row < n && col < n { c[idx(row, col, n)] = acc; } else if row == 0 { } else { return; }
}
)",
    R"(kernel reduce(n: i32, x: ptr<f64>, out: ptr<f64>) {
  shared s: [f64];
  var v: f64 = 0.0f64;
  var i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  while i < n { v += x[i]; i += grid_dim.x * block_dim.x; }
  /* warp reduction */
  var d: i32 = 16;
  while d > 0 { v = v + shfl_down(v, d); d >>= 1; }
  if lane_id == 0 { s[thread_idx.x / warp_size] = v; }
  sync_threads();
  if thread_idx.x == 0 { atomic_add(&out[0], s[0]); }
  let m: u32 = ballot(v != 0.0) & 0xffu32;
  let q: i64 = -(1i64 << 40) as i64 as i64;
  let f: f32 = (q as f32) * 2.5e-3 + 3f32 - 1e5;
  let b: bool = !(m == 0u32) || ~m != 0u32 && true;
}
)",
    R"(fn clampi(x: i32, lo: i32, hi: i32) -> i32 { return min(max(x, lo), hi); }
kernel k(p: ptr<i32, shared>, q: ptr<u8, local>, n: u64) {
  var a: [i32; 8];
  for i in 0..8 { a[i] = clampi(i, 1, 6) % 3 ^ 5 | 2 & 7; }
  let r: ptr<i32, local> = &a[2];
  if n >= 0u64 { grid_sync(); fence(); fence_block(); }
  { let z: i32 = a[0] / 2 - -1; if z != 0 { continue; } break; }
}
)",
};

/// Parses \p Src and checks only that the parser returns, and that a
/// failure carries a non-empty message.
void parseSurvives(std::string_view Src) {
  auto M = parseModule(Src, "fuzz.kir");
  if (M)
    return;
  std::string Text = errorText(M.takeError());
  EXPECT_FALSE(Text.empty()) << "empty error for input: " << Src;
}

TEST(ParserRobustnessTest, ProgramsParse) {
  for (const char *P : Programs)
    EXPECT_TRUE(parseOk(P));
}

TEST(ParserRobustnessTest, EveryPrefix) {
  for (std::string_view P : Programs)
    for (size_t Len = 0; Len <= P.size(); ++Len)
      parseSurvives(P.substr(0, Len));
}

TEST(ParserRobustnessTest, EverySuffix) {
  for (std::string_view P : Programs)
    for (size_t Start = 0; Start <= P.size(); ++Start)
      parseSurvives(P.substr(Start));
}

TEST(ParserRobustnessTest, RandomMutations) {
  std::mt19937 Rng(20240917);
  const std::string Interesting = "{}()[];:,.<>=+-*/%&|^!~ \n\t0123456789xefiu_"
                                  "\"'@#$\\";
  for (std::string_view P : Programs) {
    for (int Iter = 0; Iter < 1500; ++Iter) {
      std::string S(P);
      int Edits = 1 + Rng() % 3;
      for (int E = 0; E < Edits && !S.empty(); ++E) {
        size_t Pos = Rng() % S.size();
        char C =
            Rng() % 2 ? Interesting[Rng() % Interesting.size()] : static_cast<char>(Rng() % 256);
        switch (Rng() % 3) {
        case 0:
          S[Pos] = C;
          break; // replace
        case 1:
          S.insert(S.begin() + Pos, C);
          break; // insert
        case 2:
          S.erase(Pos, 1);
          break; // delete
        }
      }
      parseSurvives(S);
    }
  }
}

TEST(ParserRobustnessTest, RandomBytes) {
  std::mt19937 Rng(7);
  const std::string Tokens[] = {
      "kernel", "fn",   "const", "let",      "var",    "shared", "if",   "else", "while", "for",
      "in",     "step", "break", "continue", "return", "as",     "true", "x",    "ptr",   "<",
      ">",      "i32",  "[",     "]",        "(",      ")",      "{",    "}",    ";",     ":",
      ",",      "..",   ".",     "=",        "+=",     "1",      "2.5",  "0x",   "/*",    "//",
      "\n",     "-",    "&",     "*",        "==",     "<<=",    "f32"};
  for (int Iter = 0; Iter < 3000; ++Iter) {
    std::string S;
    size_t Len = Rng() % 120;
    bool ByTokens = Iter % 2;
    for (size_t I = 0; I < Len; ++I) {
      if (ByTokens)
        S += Tokens[Rng() % std::size(Tokens)] + std::string(" ");
      else
        S += static_cast<char>(Rng() % 256);
    }
    parseSurvives(S);
  }
}

TEST(ParserRobustnessTest, NulBytes) {
  parseSurvives(std::string_view("\0", 1));
  parseSurvives(std::string_view("kernel k() {\0}", 14));
  EXPECT_EQ(onlyError(std::string_view("kernel k() { x = \0; }", 21)),
            "1:18: unexpected character '\\x00'");
}

} // namespace
