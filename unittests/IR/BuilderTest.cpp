//===- BuilderTest.cpp - Building KIR modules from C++ --------------------===//
//
// Part of gridjit. Each test builds a module with the builder API and checks
// that it prints exactly as the equivalent hand-written text does after
// parsing, and that the verifier accepts it.
//
//===----------------------------------------------------------------------===//

#include "gridjit/IR/Builder.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Parse/Parser.h"
#include "gridjit/Sema/Verifier.h"

#include "llvm/Support/Casting.h"
#include "llvm/Support/raw_ostream.h"

#include "TestSupport.h"

#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;
using namespace gridjit::kir;

namespace {

/// The built module prints as \p Text does, and both it and the parsed text
/// pass the verifier.
void expectBuilds(Module &Built, std::string_view Text) {
  EXPECT_EQ(printModule(Built), canonical(Text));
  EXPECT_EQ(errorText(verifyModule(Built)), "");
  EXPECT_TRUE(Built.Verified);
  // Verification fills in semantic fields only: the text is unchanged.
  EXPECT_EQ(printModule(Built), canonical(Text));
}

TEST(BuilderTest, Saxpy) {
  ModuleBuilder MB("saxpy.kir");
  FunctionBuilder K =
      MB.kernel("saxpy", {{"n", i32()}, {"a", f32()}, {"x", ptr(f32())}, {"y", ptr(f32())}});
  K.let("i", i32(), add(mul(blockIdx(0), blockDim(0)), threadIdx(0)));
  IfBuilder Then = K.ifThen(lt(name("i"), name("n")));
  Then.assign(index(name("y"), name("i")),
              add(mul(name("a"), index(name("x"), name("i"))), index(name("y"), name("i"))));
  std::unique_ptr<Module> M = MB.take();
  ASSERT_TRUE(M);
  EXPECT_EQ(M->Name, "saxpy.kir");
  EXPECT_EQ(M->getKernels().size(), 1u);
  // Builder-made nodes have no location.
  EXPECT_FALSE(M->Decls[0]->getLoc().isValid());
  expectBuilds(*M, SaxpySource);
}

TEST(BuilderTest, SharedMemoryReduction) {
  ModuleBuilder MB("reduce.kir");
  MB.constant("BLOCK", i32(), lit(256));
  FunctionBuilder K =
      MB.kernel("reduce", {{"n", i32()}, {"x", ptr(f32())}, {"result", ptr(f32())}});
  K.sharedArray("partial", f32(), "BLOCK");
  K.let("tid", i32(), threadIdx(0));
  K.let("i", i32(), add(mul(blockIdx(0), blockDim(0)), name("tid")));
  K.var("v", f32(), lit(0.0));
  K.ifThen(lt(name("i"), name("n"))).assign(name("v"), index(name("x"), name("i")));
  K.assign(index(name("partial"), name("tid")), name("v"));
  K.call(BuiltinFunc::SyncThreads);
  K.var("stride", i32(), div(name("BLOCK"), lit(2)));
  BlockBuilder Loop = K.whileLoop(gt(name("stride"), lit(0)));
  Loop.ifThen(lt(name("tid"), name("stride")))
      .assign(index(name("partial"), name("tid")), AssignOp::Add,
              index(name("partial"), add(name("tid"), name("stride"))));
  Loop.call("sync_threads").assign(name("stride"), AssignOp::Shr, lit(1));
  K.ifThen(eq(name("tid"), lit(0)))
      .call("atomic_add", name("result"), index(name("partial"), lit(0)));
  expectBuilds(*MB.take(), R"(
const BLOCK: i32 = 256;
kernel reduce(n: i32, x: ptr<f32>, result: ptr<f32>) {
  shared partial: [f32; BLOCK];
  let tid: i32 = thread_idx.x;
  let i: i32 = block_idx.x * block_dim.x + tid;
  var v: f32 = 0.0;
  if i < n { v = x[i]; }
  partial[tid] = v;
  sync_threads();
  var stride: i32 = BLOCK / 2;
  while stride > 0 {
    if tid < stride { partial[tid] += partial[tid + stride]; }
    sync_threads();
    stride >>= 1;
  }
  if tid == 0 { atomic_add(result, partial[0]); }
}
)");
}

TEST(BuilderTest, GeneralLoops) {
  ModuleBuilder MB("bitonic.kir");
  FunctionBuilder K = MB.kernel("sort", {{"n", u32()}, {"v", ptr(i32())}});
  K.let("t", u32(), cast(threadIdx(0), u32()));
  BlockBuilder Outer =
      K.forVarLoop("k", u32(), lit(2), le(name("k"), name("n")), AssignOp::Shl, lit(1));
  BlockBuilder Inner = Outer.forVarLoop("j", u32(), binary(BinaryOp::Shr, name("k"), lit(1)),
                                        gt(name("j"), lit(0)), AssignOp::Shr, lit(1));
  Inner.ifThen(eq(name("j"), lit(3))).continueLoop();
  Inner.call("sync_threads");
  K.forVarLoop("i", i32(), sub(cast(name("n"), i32()), lit(1)), ge(name("i"), lit(0)),
               AssignOp::Sub, lit(1))
      .assign(index(name("v"), name("i")), name("i"));
  expectBuilds(*MB.take(), R"(
kernel sort(n: u32, v: ptr<i32>) {
  let t: u32 = thread_idx.x as u32;
  for var k: u32 = 2; k <= n; k <<= 1 {
    for var j: u32 = k >> 1; j > 0; j >>= 1 {
      if j == 3 { continue; }
      sync_threads();
    }
  }
  for var i: i32 = n as i32 - 1; i >= 0; i -= 1 { v[i] = i; }
}
)");
}

TEST(BuilderTest, FunctionWithIfElseAndWhile) {
  ModuleBuilder MB;
  // fn collatz(n: u32) -> u32: the number of steps to reach 1.
  FunctionBuilder F = MB.function("collatz", {{"n", u32()}}, u32());
  F.var("v", u32(), name("n"));
  F.var("steps", u32(), lit(0u, u32()));
  BlockBuilder Loop = F.whileLoop(ne(name("v"), lit(1)));
  IfBuilder If = Loop.ifThen(eq(rem(name("v"), lit(2)), lit(0)));
  If.assign(name("v"), AssignOp::Div, lit(2));
  IfBuilder ElseIf = If.elseIf(gt(name("v"), div(lit(4000000000u), lit(3))));
  ElseIf.ret(lit(0));
  ElseIf.elseBlock().assign(name("v"), add(mul(lit(3), name("v")), lit(1)));
  Loop.assign(name("steps"), AssignOp::Add, lit(1));
  F.ret(name("steps"));

  FunctionBuilder K = MB.kernel("collatz_steps", {{"n", i32()}, {"out", ptr(u32())}});
  K.let("i", i32(), add(mul(blockIdx(0), blockDim(0)), threadIdx(0)));
  IfBuilder Guard = K.ifThen(ge(name("i"), name("n")));
  Guard.ret();
  K.assign(index(name("out"), name("i")), call("collatz", add(cast(name("i"), u32()), lit(1))));
  expectBuilds(*MB.take(), R"(
fn collatz(n: u32) -> u32 {
  var v: u32 = n;
  var steps: u32 = 0u32;
  while v != 1 {
    if v % 2 == 0 {
      v /= 2;
    } else if v > 4000000000 / 3 {
      return 0;
    } else {
      v = 3 * v + 1;
    }
    steps += 1;
  }
  return steps;
}
kernel collatz_steps(n: i32, out: ptr<u32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i >= n { return; }
  out[i] = collatz(i as u32 + 1);
}
)");
}

TEST(BuilderTest, GridSync) {
  ModuleBuilder MB;
  FunctionBuilder K =
      MB.kernel("two_phase", {{"n", i32()}, {"x", ptr(f32())}, {"tmp", ptr(f32())}});
  K.let("first", i32(), add(mul(blockIdx(0), blockDim(0)), threadIdx(0)));
  K.let("stride", i32(), mul(gridDim(0), blockDim(0)));
  K.forLoop("i", name("first"), name("n"), name("stride"))
      .assign(index(name("tmp"), name("i")),
              mul(index(name("x"), name("i")), index(name("x"), name("i"))));
  K.call(BuiltinFunc::GridSync);
  K.forLoop("i", name("first"), name("n"), name("stride"))
      .assign(index(name("x"), name("i")),
              index(name("tmp"), rem(add(name("i"), lit(1)), name("n"))));
  std::unique_ptr<Module> M = MB.take();
  expectBuilds(*M, R"(
kernel two_phase(n: i32, x: ptr<f32>, tmp: ptr<f32>) {
  let first: i32 = block_idx.x * block_dim.x + thread_idx.x;
  let stride: i32 = grid_dim.x * block_dim.x;
  for i in first..n step stride { tmp[i] = x[i] * x[i]; }
  grid_sync();
  for i in first..n step stride { x[i] = tmp[(i + 1) % n]; }
}
)");
  EXPECT_TRUE(M->getFunction("two_phase")->UsesGridSync);
}

// A shared scalar (read, assigned, addressed by name) and two names for the
// dynamic shared memory.
TEST(BuilderTest, SharedScalarAndDynamicNames) {
  ModuleBuilder MB("shared.kir");
  FunctionBuilder K = MB.kernel("k", {{"p", ptr(u32())}});
  K.sharedScalar("count", u32());
  K.dynamicShared("words", u32());
  K.dynamicShared("bytes", u8());
  K.assign(name("count"), lit(0u, u32()));
  K.eval(call("atomic_add", addrOf(name("count")), lit(1u, u32())));
  K.assign(index(name("p"), lit(0)), add(name("count"), cast(index(name("bytes"), lit(0)), u32())));
  K.assign(index(name("words"), lit(0)), name("count"));
  K.ret();
  expectBuilds(*MB.take(), R"(
kernel k(p: ptr<u32>) {
  shared count: u32;
  shared words: [u32];
  shared bytes: [u8];
  count = 0u32;
  atomic_add(&count, 1u32);
  p[0] = count + bytes[0] as u32;
  words[0] = count;
  return;
}
)");
}

TEST(BuilderTest, ConstsArraysAndEveryStatement) {
  ModuleBuilder MB("all.kir");
  MB.constant("N", i32(), lit(8));
  MB.constant("SCALE", f64(), lit(0.5, f64()));
  FunctionBuilder K = MB.kernel("k", {{"p", ptr(i32())}, {"q", ptr(f64())}});
  K.varArray("loc", i32(), "N");
  K.varArray("buf", f32(), 4);
  K.sharedArray("tile", i32(), 32);
  K.dynamicShared("dyn", f32());
  K.let("t", i32(), threadIdx(0));
  K.let("big", u64(), lit(0xffu, u64()));
  K.let("flag", boolTy(), logicalAnd(lit(true), logicalNot(lit(false))));
  K.var("acc", i32(), neg(lit(1)));
  const AssignOp Ops[] = {AssignOp::Assign, AssignOp::Add, AssignOp::Sub, AssignOp::Mul,
                          AssignOp::Div,    AssignOp::Rem, AssignOp::And, AssignOp::Or,
                          AssignOp::Xor,    AssignOp::Shl, AssignOp::Shr};
  for (AssignOp Op : Ops)
    K.assign(name("acc"), Op, lit(1));
  BlockBuilder Loop = K.forLoop("j", lit(0), name("N"));
  Loop.assign(index(name("loc"), name("j")), bitXor(name("j"), name("t")));
  Loop.ifThen(eq(name("j"), lit(3))).continueLoop();
  Loop.ifThen(logicalOr(name("flag"), gt(name("j"), lit(6)))).breakLoop();
  BlockBuilder Inner = K.block();
  Inner.let("w", ptr(i32(), AddrSpace::Shared), addrOf(index(name("tile"), name("t"))));
  Inner.assign(index(name("w"), lit(0)),
               bitOr(shl(name("t"), lit(2)), bitAnd(name("acc"), lit(3))));
  Inner.assign(index(name("tile"), lit(0)), bitNot(name("acc")));
  K.assign(index(name("buf"), lit(0)), cast(index(name("loc"), lit(1)), f32()));
  K.assign(index(name("dyn"), name("t")), index(name("buf"), lit(0)));
  K.call("sync_warp");
  K.assign(index(name("q"), lit(0)), mul(name("SCALE"), call("sqrt", cast(name("acc"), f64()))));
  K.eval(call("atomic_max", add(name("p"), lit(1)), name("acc")));
  K.assign(index(name("p"), lit(2)),
           call(BuiltinFunc::Select, le(name("acc"), lit(0)), lit(1), lit(2)));
  K.ret();
  expectBuilds(*MB.take(), R"(
const N: i32 = 8;
const SCALE: f64 = 0.5f64;
kernel k(p: ptr<i32>, q: ptr<f64>) {
  var loc: [i32; N];
  var buf: [f32; 4];
  shared tile: [i32; 32];
  shared dyn: [f32];
  let t: i32 = thread_idx.x;
  let big: u64 = 0xffu64;
  let flag: bool = true && !false;
  var acc: i32 = -1;
  acc = 1; acc += 1; acc -= 1; acc *= 1; acc /= 1; acc %= 1;
  acc &= 1; acc |= 1; acc ^= 1; acc <<= 1; acc >>= 1;
  for j in 0..N {
    loc[j] = j ^ t;
    if j == 3 { continue; }
    if flag || j > 6 { break; }
  }
  {
    let w: ptr<i32, shared> = &tile[t];
    w[0] = t << 2 | acc & 3;
    tile[0] = ~acc;
  }
  buf[0] = loc[1] as f32;
  dyn[t] = buf[0];
  sync_warp();
  q[0] = SCALE * sqrt(acc as f64);
  atomic_max(p + 1, acc);
  p[2] = select(acc <= 0, 1, 2);
  return;
}
)");
}

TEST(BuilderTest, WarpOps) {
  ModuleBuilder MB;
  FunctionBuilder K = MB.kernel("warp", {{"x", ptr(f32())}, {"m", ptr(u32())}});
  K.var("v", f32(), index(name("x"), threadIdx(0)));
  for (BuiltinFunc F :
       {BuiltinFunc::ShflDown, BuiltinFunc::ShflUp, BuiltinFunc::ShflXor, BuiltinFunc::Shfl})
    K.assign(name("v"), AssignOp::Add, call(F, name("v"), lit(1)));
  K.assign(index(name("m"), laneId()), call(BuiltinFunc::Ballot, lt(name("v"), lit(0.0))));
  K.ifThen(logicalAnd(call("vote_any", gt(name("v"), lit(1.0))),
                      call("vote_all", lt(laneId(), warpSize()))))
      .call(BuiltinFunc::FenceBlock);
  expectBuilds(*MB.take(), R"(
kernel warp(x: ptr<f32>, m: ptr<u32>) {
  var v: f32 = x[thread_idx.x];
  v += shfl_down(v, 1);
  v += shfl_up(v, 1);
  v += shfl_xor(v, 1);
  v += shfl(v, 1);
  m[lane_id] = ballot(v < 0.0);
  if vote_any(v > 1.0) && vote_all(lane_id < warp_size) { fence_block(); }
}
)");
}

TEST(BuilderTest, NegativeLiteralsAreNegatedMagnitudes) {
  ExprPtr I = lit(-7);
  auto *U = llvm::dyn_cast<UnaryExpr>(I.get());
  ASSERT_NE(U, nullptr);
  EXPECT_EQ(U->Op, UnaryOp::Neg);
  ASSERT_TRUE(llvm::isa<IntLitExpr>(U->Operand.get()));
  EXPECT_EQ(llvm::cast<IntLitExpr>(U->Operand.get())->Value, 7u);

  ExprPtr F = lit(-2.5, f64());
  U = llvm::dyn_cast<UnaryExpr>(F.get());
  ASSERT_NE(U, nullptr);
  auto *FL = llvm::dyn_cast<FloatLitExpr>(U->Operand.get());
  ASSERT_NE(FL, nullptr);
  EXPECT_EQ(FL->Value, 2.5);
  EXPECT_EQ(FL->Suffix, ScalarKind::F64);
}

TEST(BuilderTest, OutAndInoutParameters) {
  ModuleBuilder MB("outp.kir");
  FunctionBuilder F = MB.function("divmod", {{"a", u32()},
                                             {"b", u32()},
                                             {"q", u32(), false, ParamMode::Out},
                                             {"r", u32(), false, ParamMode::InOut}});
  F.assign(name("q"), div(name("a"), name("b")));
  F.assign(name("r"), AssignOp::Add, sub(name("a"), mul(name("q"), name("b"))));
  FunctionBuilder K = MB.kernel("k", {{"x", ptr(u32())}});
  K.var("q", u32());
  K.varArray("t", u32(), 2);
  std::vector<ExprPtr> Args;
  Args.push_back(index(name("x"), lit(0)));
  Args.push_back(lit(7));
  Args.push_back(name("q"));
  Args.push_back(index(name("t"), lit(1)));
  K.eval(callv("divmod", std::move(Args),
               {ParamMode::In, ParamMode::In, ParamMode::Out, ParamMode::InOut}));
  K.assign(index(name("x"), lit(1)), add(name("q"), index(name("t"), lit(1))));
  std::unique_ptr<Module> M = MB.take();
  expectBuilds(*M, R"(fn divmod(a: u32, b: u32, out q: u32, inout r: u32) {
  q = a / b;
  r += a - q * b;
}

kernel k(x: ptr<u32>) {
  var q: u32;
  var t: [u32; 2];
  divmod(x[0], 7, out q, inout t[1]);
  x[1] = q + t[1];
}
)");
}

TEST(BuilderTest, TakeStartsAFreshModule) {
  ModuleBuilder MB("m");
  MB.kernel("a", {});
  std::unique_ptr<Module> First = MB.take();
  MB.kernel("b", {});
  std::unique_ptr<Module> Second = MB.take();
  EXPECT_EQ(printModule(*First), "kernel a() {\n}\n");
  EXPECT_EQ(printModule(*Second), "kernel b() {\n}\n");
  EXPECT_EQ(Second->Name, "m");
}

TEST(BuilderTest, HandlesOutliveTake) {
  ModuleBuilder MB;
  FunctionBuilder K = MB.kernel("k", {});
  std::unique_ptr<Module> M = MB.take();
  K.call("sync_threads");
  EXPECT_EQ(printModule(*M), "kernel k() {\n  sync_threads();\n}\n");
}

} // namespace

// A parameter built with Mutable set is `var NAME: T`: the body may assign
// it, and the module prints (before and after verification, which adds the
// parameter's copy) as the text does.
TEST(BuilderTest, MutableParameter) {
  ModuleBuilder MB("mut.kir");
  FunctionBuilder F = MB.function("down", {{"n", i32(), /*Mutable=*/true}}, i32());
  F.assign(name("n"), AssignOp::Sub, lit(1));
  F.ret(name("n"));
  std::unique_ptr<Module> M = MB.take();
  expectBuilds(*M, "fn down(var n: i32) -> i32 { n -= 1; return n; }");
}

// let(Name, Init) and var(Name, Init) leave the type out, as `let x = e;`
// does: it prints left out and the verifier infers it; var(Name, T) is a
// declaration without an initializer, assigned later.
TEST(BuilderTest, InferredTypesAndLaterAssignment) {
  ModuleBuilder MB("infer.kir");
  FunctionBuilder F = MB.function("f", {{"a", f64()}}, f64());
  F.let("b", mul(name("a"), lit(2.0)));
  F.var("c", lit(1));
  F.var("d", f64());
  F.assign(name("d"), add(name("b"), name("c") /* i32 */));
  F.ret(name("d"));
  std::unique_ptr<Module> M = MB.take();
  // `c` is an i32 (an unsuffixed literal's default type): d = b + c is wrong.
  EXPECT_EQ(errorText(verifyModule(*M)),
            "infer.kir: error: operands of '+' must have the same type, found 'f64' and 'i32'\n");

  ModuleBuilder MB2("infer.kir");
  FunctionBuilder G = MB2.function("f", {{"a", f64()}}, f64());
  G.let("b", mul(name("a"), lit(2.0)));
  G.var("d", f64());
  G.assign(name("d"), name("b"));
  G.ret(name("d"));
  std::unique_ptr<Module> M2 = MB2.take();
  expectBuilds(*M2, "fn f(a: f64) -> f64 { let b = a * 2.0; var d: f64; d = b; return d; }");
  // The verifier gave `b` the type of its initializer.
  const auto *Body = llvm::cast<FunctionDecl>(*M2->Decls[0]).Body.get();
  EXPECT_EQ(llvm::cast<DeclStmt>(*Body->Body[0]).Var.Ty, f64());
}

// An array size may be any constant expression; the verifier folds it.
TEST(BuilderTest, ArraySizeExpressions) {
  ModuleBuilder MB("sizes.kir");
  MB.constant("S", i32(), lit(4));
  FunctionBuilder K = MB.kernel("k", {{"p", ptr(f32())}});
  K.sharedArray("t", f32(), add(mul(name("S"), lit(2)), lit(1)));
  K.varArray("a", i32(), name("S"));
  K.assign(index(name("p"), lit(0)), index(name("t"), lit(8)));
  std::unique_ptr<Module> M = MB.take();
  expectBuilds(*M, "const S: i32 = 4;\n"
                   "kernel k(p: ptr<f32>) { shared t: [f32; S * 2 + 1]; var a: [i32; S]; "
                   "p[0] = t[8]; }");
  const auto *Body = llvm::cast<FunctionDecl>(*M->Decls[1]).Body.get();
  EXPECT_EQ(llvm::cast<DeclStmt>(*Body->Body[0]).Var.Ty.getArrayCount(), 9u);
  EXPECT_EQ(llvm::cast<DeclStmt>(*Body->Body[1]).Var.Ty.getArrayCount(), 4u);
}

// A multi-dimensional array: the element type is the row; `t[y][x]` is an
// index of an index.
TEST(BuilderTest, MultiDimensionalArrays) {
  ModuleBuilder MB("tiles.kir");
  MB.constant("W", i32(), lit(16));
  FunctionBuilder K = MB.kernel("k", {{"p", ptr(f32())}});
  K.sharedArray("t", Type::getArray(ScalarKind::F32, 17), name("W"));
  K.varArray("c", Type::getArrayOf(Type::getArray(ScalarKind::I32, 4), 3), 2);
  K.assign(index(index(name("t"), lit(1)), lit(16)), index(name("p"), lit(0)));
  K.assign(index(name("p"), lit(1)),
           cast(index(index(index(name("c"), lit(1)), lit(2)), lit(3)), f32()));
  std::unique_ptr<Module> M = MB.take();
  expectBuilds(*M, "const W: i32 = 16;\n"
                   "kernel k(p: ptr<f32>) { shared t: [[f32; 17]; W]; var c: [[[i32; 4]; 3]; 2]; "
                   "t[1][16] = p[0]; p[1] = c[1][2][3] as f32; }");
  const auto *Body = llvm::cast<FunctionDecl>(*M->Decls[1]).Body.get();
  const uint64_t Dims[] = {16, 17};
  EXPECT_EQ(llvm::cast<DeclStmt>(*Body->Body[0]).Var.Ty,
            Type::getArray(ScalarKind::F32, Dims, AddrSpace::Shared));
  EXPECT_EQ(llvm::cast<DeclStmt>(*Body->Body[1]).Var.Ty.getSizeInBytes(), 2u * 3 * 4 * 4);
}
