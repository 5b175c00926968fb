//===- PrinterTest.cpp - Canonical KIR text -------------------------------===//
//
// Part of gridjit. Parentheses, literal spellings and layout of the
// canonical printer, and print(parse(print(M))) == print(M) on the examples.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Printer.h"
#include "gridjit/IR/Builder.h"
#include "gridjit/Parse/Parser.h"

#include "llvm/Support/raw_ostream.h"

#include "TestSupport.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <random>
#include <sstream>

using namespace gridjit;
using namespace gridjit::test;
using namespace gridjit::kir;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

/// print(parse(Text)) where Text is the body of a kernel; the statements of
/// the printed body, without the kernel's own lines.
std::string canonicalBody(std::string_view Body) {
  std::string Text = "kernel k() {\n" + std::string(Body) + "\n}\n";
  std::string Out = canonical(Text);
  const std::string Head = "kernel k() {\n", Tail = "}\n";
  if (Out.rfind(Head, 0) != 0 || Out.size() < Head.size() + Tail.size())
    return Out;
  return Out.substr(Head.size(), Out.size() - Head.size() - Tail.size());
}

std::string expr(const ExprPtr &E) { return printExpr(*E); }

ExprPtr a() { return name("a"); }
ExprPtr b() { return name("b"); }
ExprPtr c() { return name("c"); }
ExprPtr d() { return name("d"); }
ExprPtr x() { return name("x"); }

//===----------------------------------------------------------------------===//
// Parentheses (on built trees: no parser involved)
//===----------------------------------------------------------------------===//

TEST(PrinterTest, LeftAssociativeChainsNeedNoParens) {
  EXPECT_EQ(expr(sub(sub(a(), b()), c())), "a - b - c");
  EXPECT_EQ(expr(div(mul(a(), b()), c())), "a * b / c");
  EXPECT_EQ(expr(logicalOr(logicalOr(a(), b()), c())), "a || b || c");
  EXPECT_EQ(expr(shl(shr(a(), b()), c())), "a >> b << c");
}

// `?:` is the loosest and right-associative: parentheses around a
// conditional as an operand or as a condition, none in the middle or after
// the `:`.
TEST(PrinterTest, ConditionalParens) {
  EXPECT_EQ(expr(cond(a(), b(), cond(c(), d(), x()))), "a ? b : c ? d : x");
  EXPECT_EQ(expr(cond(a(), cond(c(), d(), x()), b())), "a ? c ? d : x : b");
  EXPECT_EQ(expr(cond(cond(a(), b(), c()), d(), x())), "(a ? b : c) ? d : x");
  EXPECT_EQ(expr(add(cond(a(), b(), c()), d())), "(a ? b : c) + d");
  EXPECT_EQ(expr(logicalOr(a(), cond(b(), c(), d()))), "a || (b ? c : d)");
  EXPECT_EQ(expr(cond(logicalOr(a(), b()), add(c(), d()), x())), "a || b ? c + d : x");
  EXPECT_EQ(expr(cast(cond(a(), b(), c()), Type::getScalar(ScalarKind::F32))),
            "(a ? b : c) as f32");
}

TEST(PrinterTest, RightOperandOfSamePrecedenceKeepsParens) {
  EXPECT_EQ(expr(sub(a(), sub(b(), c()))), "a - (b - c)");
  EXPECT_EQ(expr(add(a(), sub(b(), c()))), "a + (b - c)");
  EXPECT_EQ(expr(div(a(), mul(b(), c()))), "a / (b * c)");
  EXPECT_EQ(expr(logicalAnd(a(), logicalAnd(b(), c()))), "a && (b && c)");
  EXPECT_EQ(expr(bitOr(a(), bitOr(b(), c()))), "a | (b | c)");
}

TEST(PrinterTest, PrecedenceDecidesParens) {
  EXPECT_EQ(expr(add(a(), mul(b(), c()))), "a + b * c");
  EXPECT_EQ(expr(mul(add(a(), b()), c())), "(a + b) * c");
  EXPECT_EQ(expr(logicalOr(logicalAnd(a(), b()), c())), "a && b || c");
  EXPECT_EQ(expr(logicalAnd(a(), logicalOr(b(), c()))), "a && (b || c)");
  EXPECT_EQ(expr(bitOr(bitXor(a(), b()), bitAnd(c(), d()))), "a ^ b | c & d");
  EXPECT_EQ(expr(bitAnd(bitOr(a(), b()), c())), "(a | b) & c");
  EXPECT_EQ(expr(bitXor(bitOr(a(), b()), c())), "(a | b) ^ c");
  EXPECT_EQ(expr(shl(add(a(), b()), c())), "a + b << c");
  EXPECT_EQ(expr(add(a(), shl(b(), c()))), "a + (b << c)");
  EXPECT_EQ(expr(bitAnd(a(), shl(b(), c()))), "a & b << c");
  // KIR's bitwise operators bind tighter than comparisons (unlike C).
  EXPECT_EQ(expr(eq(bitAnd(a(), lit(1)), lit(0))), "a & 1 == 0");
  EXPECT_EQ(expr(bitAnd(a(), eq(lit(1), lit(0)))), "a & (1 == 0)");
  EXPECT_EQ(expr(logicalAnd(lt(a(), b()), ge(c(), d()))), "a < b && c >= d");
}

TEST(PrinterTest, ComparisonsDoNotAssociate) {
  EXPECT_EQ(expr(eq(lt(a(), b()), c())), "(a < b) == c");
  EXPECT_EQ(expr(eq(a(), lt(b(), c()))), "a == (b < c)");
  EXPECT_EQ(expr(ne(eq(a(), b()), eq(c(), d()))), "(a == b) != (c == d)");
}

TEST(PrinterTest, CastOperands) {
  EXPECT_EQ(expr(cast(add(a(), b()), f32())), "(a + b) as f32");
  EXPECT_EQ(expr(mul(a(), cast(b(), f32()))), "a * b as f32");
  EXPECT_EQ(expr(mul(cast(a(), f32()), b())), "a as f32 * b");
  EXPECT_EQ(expr(cast(cast(x(), i64()), f64())), "x as i64 as f64");
  EXPECT_EQ(expr(cast(neg(x()), f32())), "-x as f32");
  EXPECT_EQ(expr(cast(index(name("p"), name("i")), u8())), "p[i] as u8");
  EXPECT_EQ(expr(lt(cast(x(), f32()), lit(1.0))), "x as f32 < 1.0");
}

TEST(PrinterTest, UnaryOperands) {
  EXPECT_EQ(expr(neg(cast(x(), f32()))), "-(x as f32)");
  EXPECT_EQ(expr(logicalNot(lt(a(), b()))), "!(a < b)");
  EXPECT_EQ(expr(bitNot(add(a(), b()))), "~(a + b)");
  EXPECT_EQ(expr(neg(index(name("p"), name("i")))), "-p[i]");
  EXPECT_EQ(expr(neg(call("f", x()))), "-f(x)");
  EXPECT_EQ(expr(logicalNot(logicalNot(x()))), "!!x");
  EXPECT_EQ(expr(bitNot(neg(x()))), "~-x");
  // No `--` and no `&&` token may appear where two unary operators meet.
  EXPECT_EQ(expr(neg(neg(x()))), "-(-x)");
  EXPECT_EQ(expr(neg(lit(-1.5))), "-(-1.5)");
  EXPECT_EQ(expr(addrOf(addrOf(x()))), "&(&x)");
  EXPECT_EQ(expr(addrOf(index(name("s"), name("i")))), "&s[i]");
  EXPECT_EQ(expr(sub(a(), neg(b()))), "a - -b");
  EXPECT_EQ(expr(bitAnd(a(), addrOf(b()))), "a & &b");
}

TEST(PrinterTest, PostfixBases) {
  EXPECT_EQ(expr(index(add(name("p"), lit(1)), name("i"))), "(p + 1)[i]");
  EXPECT_EQ(expr(index(index(a(), b()), c())), "a[b][c]");
  EXPECT_EQ(expr(index(neg(a()), b())), "(-a)[b]");
  EXPECT_EQ(expr(index(cast(a(), i32()), b())), "(a as i32)[b]");
  EXPECT_EQ(expr(index(call("f"), b())), "f()[b]");
  EXPECT_EQ(expr(member(add(a(), b()), 1)), "(a + b).y");
  EXPECT_EQ(expr(threadIdx(0)), "thread_idx.x");
  EXPECT_EQ(expr(gridDim(2)), "grid_dim.z");
  EXPECT_EQ(expr(index(name("p"), add(a(), b()))), "p[a + b]");
}

TEST(PrinterTest, CallsAndBuiltins) {
  EXPECT_EQ(expr(call("sync_threads")), "sync_threads()");
  EXPECT_EQ(expr(call("f", add(a(), b()), c())), "f(a + b, c)");
  EXPECT_EQ(expr(call(BuiltinFunc::AtomicCas, a(), b(), c())), "atomic_cas(a, b, c)");
  EXPECT_EQ(expr(call("g", call("h", lt(a(), b())))), "g(h(a < b))");
  EXPECT_EQ(expr(laneId()), "lane_id");
  EXPECT_EQ(expr(warpSize()), "warp_size");
  EXPECT_EQ(expr(null()), "null");
  EXPECT_EQ(expr(cast(null(), Type::getPointer(ScalarKind::F32, AddrSpace::Global))),
            "null as ptr<f32>");
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

TEST(PrinterTest, IntegerLiterals) {
  EXPECT_EQ(expr(lit(0)), "0");
  EXPECT_EQ(expr(lit(7)), "7");
  EXPECT_EQ(expr(lit(-5)), "-5");
  EXPECT_EQ(expr(lit(255u, u8())), "255u8");
  EXPECT_EQ(expr(lit(1, i64())), "1i64");
  EXPECT_EQ(expr(uintLit(std::numeric_limits<uint64_t>::max(), u64())), "18446744073709551615u64");
  EXPECT_EQ(expr(intLit(std::numeric_limits<int64_t>::min())), "-9223372036854775808");
  // `3f32` is a float literal; it prints the way it reads back.
  EXPECT_EQ(expr(lit(3, f32())), "3.0f32");
  EXPECT_EQ(expr(lit(true)), "true");
  EXPECT_EQ(expr(lit(false)), "false");
}

TEST(PrinterTest, FloatLiteralsAreShortestWithADot) {
  EXPECT_EQ(expr(lit(1.0)), "1.0");
  EXPECT_EQ(expr(lit(0.0)), "0.0");
  EXPECT_EQ(expr(lit(100.0)), "100.0");
  EXPECT_EQ(expr(lit(0.1)), "0.1");
  EXPECT_EQ(expr(lit(2.5)), "2.5");
  EXPECT_EQ(expr(lit(2.5e-3)), "0.0025");
  EXPECT_EQ(expr(lit(1e-4)), "0.0001");
  EXPECT_EQ(expr(lit(1e-5)), "1.0e-5");
  EXPECT_EQ(expr(lit(2.5e-7)), "2.5e-7");
  EXPECT_EQ(expr(lit(123456789.0)), "123456789.0");
  EXPECT_EQ(expr(lit(1e15)), "1000000000000000.0");
  EXPECT_EQ(expr(lit(1e16)), "1.0e16");
  EXPECT_EQ(expr(lit(1e20)), "1.0e20");
  EXPECT_EQ(expr(lit(1.5e300)), "1.5e300");
  EXPECT_EQ(expr(lit(std::numeric_limits<double>::max())), "1.7976931348623157e308");
  EXPECT_EQ(expr(lit(std::numeric_limits<double>::denorm_min())), "5.0e-324");
  EXPECT_EQ(expr(lit(0.30000000000000004)), "0.30000000000000004");
  EXPECT_EQ(expr(lit(-0.5)), "-0.5");
}

TEST(PrinterTest, FloatLiteralSuffixes) {
  EXPECT_EQ(expr(lit(1.5, f32())), "1.5f32");
  EXPECT_EQ(expr(lit(1.0, f64())), "1.0f64");
  EXPECT_EQ(expr(lit(1e20, f64())), "1.0e20f64");
  // A value that is exactly a float prints with the float's shortest digits
  // when it is typed f32 ...
  double F = static_cast<double>(0.1f);
  EXPECT_EQ(expr(lit(F, f32())), "0.1f32");
  // ... and with the double's otherwise (it is not the double 0.1).
  EXPECT_EQ(expr(lit(F)), "0.10000000149011612");
  EXPECT_EQ(expr(lit(0.1, f32())), "0.1f32");
}

TEST(PrinterTest, UnspellableFloatsPrintAsOutOfRange) {
  EXPECT_EQ(expr(lit(std::numeric_limits<double>::infinity())), "1.0e999");
  EXPECT_EQ(expr(floatLit(std::nan(""))), "1.0e999");
}

/// Every printed float reads back, by strtod, as exactly the same double and
/// contains a '.' (so that the lexer sees a float).
TEST(PrinterTest, FloatLiteralsRoundTripAsDoubles) {
  std::mt19937_64 Rng(42);
  for (int I = 0; I < 20000; ++I) {
    uint64_t Bits = Rng();
    double V;
    static_assert(sizeof(V) == sizeof(Bits));
    std::memcpy(&V, &Bits, sizeof(V));
    if (!std::isfinite(V))
      continue;
    V = std::fabs(V);
    std::string S = expr(std::make_unique<FloatLitExpr>(SourceLoc{}, V));
    ASSERT_THAT(S, HasSubstr("."));
    EXPECT_EQ(std::strtod(S.c_str(), nullptr), V) << S;
  }
  // Floats typed f32 read back as the same float.
  for (int I = 0; I < 20000; ++I) {
    uint32_t Bits = static_cast<uint32_t>(Rng());
    float V;
    std::memcpy(&V, &Bits, sizeof(V));
    if (!std::isfinite(V))
      continue;
    V = std::fabs(V);
    std::string S = expr(lit(static_cast<double>(V), f32()));
    ASSERT_EQ(S.substr(S.size() - 3), "f32");
    S.resize(S.size() - 3);
    ASSERT_THAT(S, HasSubstr("."));
    EXPECT_EQ(std::strtof(S.c_str(), nullptr), V) << S;
  }
}

//===----------------------------------------------------------------------===//
// Layout (built modules)
//===----------------------------------------------------------------------===//

TEST(PrinterTest, EmptyModulePrintsNothing) {
  Module M;
  EXPECT_EQ(printModule(M), "");
}

// Multi-dimensional arrays print as written: each dimension's size
// expression, innermost first, and `t[y][x]`.
TEST(PrinterTest, MultiDimensionalArraysRoundTrip) {
  EXPECT_EQ(canonicalBody("shared tile: [[f32;(W+1)];W];\nvar c: [[[i32;2];3];(4)];\n"
                          "tile[(1)][2] = c[0][(1)][1+1] as f32;"),
            "  shared tile: [[f32; W + 1]; W];\n"
            "  var c: [[[i32; 2]; 3]; 4];\n"
            "  tile[1][2] = c[0][1][1 + 1] as f32;\n");
}

TEST(PrinterTest, LayoutOfDeclarationsAndBlocks) {
  ModuleBuilder MB;
  MB.constant("N", i32(), lit(4));
  FunctionBuilder F = MB.function("f", {{"v", f32()}, {"w", f32()}}, f32());
  F.ret(add(name("v"), name("w")));
  FunctionBuilder K = MB.kernel("k", {});
  K.block();
  IfBuilder If = K.ifThen(lit(true));
  If.elseIf(lit(false)).elseBlock();
  K.whileLoop(lit(false));
  MB.function("g", {});
  EXPECT_EQ(printModule(*MB.take()), "const N: i32 = 4;\n"
                                     "\n"
                                     "fn f(v: f32, w: f32) -> f32 {\n"
                                     "  return v + w;\n"
                                     "}\n"
                                     "\n"
                                     "kernel k() {\n"
                                     "  {\n"
                                     "  }\n"
                                     "  if true {\n"
                                     "  } else if false {\n"
                                     "  } else {\n"
                                     "  }\n"
                                     "  while false {\n"
                                     "  }\n"
                                     "}\n"
                                     "\n"
                                     "fn g() {\n"
                                     "}\n");
}

//===----------------------------------------------------------------------===//
// Parsed text
//===----------------------------------------------------------------------===//

TEST(PrinterTest, NormalisesSpacingCommentsAndParens) {
  EXPECT_EQ(canonical("// leading comment\n"
                      "const   N:i32=0x10 ;/* block\ncomment */\n"
                      "fn   sq( v :f32 )->f32{return (v*v);}\n"
                      "kernel k(p:ptr<f32,shared>,q : ptr<f32>){let x:f32=((1.0));"
                      "if(x<2.5e0){p[0]=x;}else{}}"),
            "const N: i32 = 16;\n"
            "\n"
            "fn sq(v: f32) -> f32 {\n"
            "  return v * v;\n"
            "}\n"
            "\n"
            "kernel k(p: ptr<f32, shared>, q: ptr<f32>) {\n"
            "  let x: f32 = 1.0;\n"
            "  if x < 2.5 {\n"
            "    p[0] = x;\n"
            "  } else {\n"
            "  }\n"
            "}\n");
}

TEST(PrinterTest, ParsedExpressionsKeepTheirTree) {
  EXPECT_EQ(canonicalBody("x = (a - b) - c;"), "  x = a - b - c;\n");
  EXPECT_EQ(canonicalBody("x = a - (b - c);"), "  x = a - (b - c);\n");
  EXPECT_EQ(canonicalBody("x = -(y as f32);"), "  x = -(y as f32);\n");
  EXPECT_EQ(canonicalBody("x = (a < b) == c;"), "  x = (a < b) == c;\n");
  EXPECT_EQ(canonicalBody("x = (p + 1)[i];"), "  x = (p + 1)[i];\n");
  EXPECT_EQ(canonicalBody("x = (-y) as f32;"), "  x = -y as f32;\n");
  EXPECT_EQ(canonicalBody("x = a + (b * c);"), "  x = a + b * c;\n");
  EXPECT_EQ(canonicalBody("x = (a&1)==0;"), "  x = a & 1 == 0;\n");
  EXPECT_EQ(canonicalBody("x = - - y;"), "  x = -(-y);\n");
  EXPECT_EQ(canonicalBody("x = (&(a[i]));"), "  x = &a[i];\n");
}

TEST(PrinterTest, ParsedLiteralsAreCanonical) {
  EXPECT_EQ(canonicalBody("x = 0xffu8;"), "  x = 255u8;\n");
  EXPECT_EQ(canonicalBody("x = 0x10;"), "  x = 16;\n");
  EXPECT_EQ(canonicalBody("x = 3f32;"), "  x = 3.0f32;\n");
  EXPECT_EQ(canonicalBody("x = 2.5e-3;"), "  x = 0.0025;\n");
  EXPECT_EQ(canonicalBody("x = 1e20;"), "  x = 1.0e20;\n");
  EXPECT_EQ(canonicalBody("x = 1.0e+20f64;"), "  x = 1.0e20f64;\n");
  EXPECT_EQ(canonicalBody("x = 0.1f32;"), "  x = 0.1f32;\n");
  EXPECT_EQ(canonicalBody("x = 100.000;"), "  x = 100.0;\n");
}

/// Printed floats, with and without suffixes, parse back to text that
/// prints the same.
TEST(PrinterTest, FloatLiteralsAreStableThroughTheParser) {
  std::mt19937_64 Rng(7);
  std::string Body;
  for (int I = 0; I < 2000; ++I) {
    uint64_t Bits = Rng();
    double V;
    std::memcpy(&V, &Bits, sizeof(V));
    if (!std::isfinite(V))
      continue;
    float F = static_cast<float>(V);
    if (!std::isfinite(F))
      F = 1.5f;
    V = std::fabs(V);
    Body += "x = " + expr(lit(V)) + ";\n";
    Body += "x = " + expr(lit(V, f64())) + ";\n";
    Body += "x = " + expr(lit(static_cast<double>(std::fabs(F)), f32())) + ";\n";
    Body += "x = " + expr(lit(V, f32())) + ";\n";
  }
  std::string Once = canonicalBody(Body);
  ASSERT_THAT(Once, Not(StartsWith("PARSE ERROR")));
  EXPECT_EQ(canonicalBody(Once), Once);
}

TEST(PrinterTest, ParsedStatements) {
  EXPECT_EQ(canonicalBody("var a:[f32;N]; shared s:[f32]; shared t:[i32;64];"
                          "for i in 0..n step 2 {continue;} for j in a..b {break;}"
                          "{ s[0] += 1.0; } sync_threads(); return;"),
            "  var a: [f32; N];\n"
            "  shared s: [f32];\n"
            "  shared t: [i32; 64];\n"
            "  for i in 0..n step 2 {\n"
            "    continue;\n"
            "  }\n"
            "  for j in a..b {\n"
            "    break;\n"
            "  }\n"
            "  {\n"
            "    s[0] += 1.0;\n"
            "  }\n"
            "  sync_threads();\n"
            "  return;\n");
}

//===----------------------------------------------------------------------===//
// Idempotence
//===----------------------------------------------------------------------===//

// unittests/CMakeLists.txt defines GRIDJIT_SOURCE_DIR.
std::filesystem::path examplesDir() {
  return std::filesystem::path(GRIDJIT_SOURCE_DIR) / "examples";
}

// Found by fuzz-kir (fuzz/regressions/kir/const-without-initializer): a
// const without an initializer parses (the verifier rejects it) and was
// printed as `= <null>`, which does not parse back.
TEST(PrinterTest, ConstWithoutInitializerRoundTrips) {
  std::string Once = canonical("const A: i32 = B + 1;\nconst B: i32 ;\n");
  EXPECT_EQ(Once, "const A: i32 = B + 1;\n\nconst B: i32;\n");
  EXPECT_EQ(canonical(Once), Once);
}

TEST(PrinterTest, IdempotentOnTheExamples) {
  std::filesystem::path Dir = examplesDir();
  ASSERT_TRUE(std::filesystem::is_directory(Dir)) << Dir;
  unsigned Count = 0;
  for (const auto &Entry : std::filesystem::directory_iterator(Dir)) {
    if (Entry.path().extension() != ".kir")
      continue;
    ++Count;
    std::ifstream In(Entry.path());
    std::stringstream Text;
    Text << In.rdbuf();
    std::string Once = canonical(Text.str());
    SCOPED_TRACE(Entry.path().string());
    ASSERT_THAT(Once, Not(StartsWith("PARSE ERROR")));
    EXPECT_EQ(canonical(Once), Once);
    ASSERT_FALSE(Once.empty());
    EXPECT_EQ(Once.back(), '\n');
    EXPECT_NE(Once.substr(Once.size() - 2), "\n\n");
  }
  EXPECT_GE(Count, 7u);
}

} // namespace
