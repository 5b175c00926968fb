//===- NVPTXTargetTest.cpp - NVPTX target options and fallbacks -----------===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string ptxOf(const Target &T, const char *Text, std::string &Error) {
  auto M = parseAndVerify(Text, "t.kir");
  if (!M) {
    Error = llvm::toString(M.takeError());
    return "";
  }
  auto PTX = T.emit(**M, EmitKind::Assembly, {});
  if (!PTX) {
    Error = llvm::toString(PTX.takeError());
    return "";
  }
  return *PTX;
}

/// The NVPTX target as it is where libdevice is not found.
auto targetWithoutLibdevice() {
  NVPTXTargetOptions Opts;
  Opts.UseLibdevice = false;
  return createNVPTXTarget(Opts);
}

// Without libdevice, f32 math uses the GPU's approximate instructions
// (documented accuracy) and f64 math is a located error naming the
// function.
TEST(NVPTXTargetTest, MathWithoutLibdevice) {
  auto T = targetWithoutLibdevice();
  ASSERT_TRUE(succeeded(T));
  std::string Err;
  std::string PTX = ptxOf(**T,
                          "kernel k(x: ptr<f32>) {\n"
                          "  x[0] = sin(x[0]) + cos(x[1]) + exp(x[2]) + log2(x[3]) +\n"
                          "         rsqrt(x[4]) + pow(x[5], x[6]) + tanh(x[7]) + tan(x[8]);\n"
                          "}\n",
                          Err);
  ASSERT_TRUE(Err.empty()) << Err;
  for (const char *Insn :
       {"sin.approx.f32", "cos.approx.f32", "ex2.approx", "lg2.approx", "rsqrt.approx"})
    EXPECT_THAT(PTX, HasSubstr(Insn)) << Insn << "\n" << PTX;
  EXPECT_THAT(PTX, Not(HasSubstr("__nv_")));

  PTX = ptxOf(**T,
              "kernel k(x: ptr<f64>) {\n"
              "  x[0] = sin(x[0]);\n"
              "}\n",
              Err);
  EXPECT_THAT(Err, HasSubstr("t.kir:2:10: error: 'sin' on f64 on target 'nvptx' needs libdevice"));
}

// Without libdevice, the rule is the same for the rest of CUDA's math
// library: exp10 has an approximate f32 form (ex2.approx of x * log2 10);
// the other libdevice functions are located errors on f32 too; the exact
// functions need no libdevice on either type.
TEST(NVPTXTargetTest, MoreMathWithoutLibdevice) {
  auto T = targetWithoutLibdevice();
  ASSERT_TRUE(succeeded(T));
  std::string Err;
  std::string PTX = ptxOf(**T,
                          "kernel k(x: ptr<f32>, y: ptr<f64>, b: ptr<bool>) {\n"
                          "  x[0] = exp10(x[1]) + rint(x[2]) + copysign(x[3], x[4]);\n"
                          "  y[0] = fdim(y[1], y[2]) + modf_frac(y[3]) + nearbyint(y[4]);\n"
                          "  b[0] = isnan(y[5]) || signbit(x[5]);\n"
                          "}\n",
                          Err);
  ASSERT_TRUE(Err.empty()) << Err;
  EXPECT_THAT(PTX, HasSubstr("ex2.approx"));
  EXPECT_THAT(PTX, HasSubstr("cvt.rni.f64.f64"));
  EXPECT_THAT(PTX, Not(HasSubstr("__nv_")));

  const std::pair<const char *, const char *> Cases[] = {
      {"  x[0] = atan2(x[1], x[2]);\n", "t.kir:2:10: error: 'atan2' on f32 on target 'nvptx' "
                                        "needs libdevice from the CUDA toolkit, which was not "
                                        "found (set CUDA_HOME)"},
      {"  x[0] = erfinv(x[1]);\n", "t.kir:2:10: error: 'erfinv' on f32 on target 'nvptx'"},
      {"  e[0] = frexp_exp(x[1]);\n", "t.kir:2:10: error: 'frexp_exp' on f32 on target 'nvptx'"},
      {"  y[0] = exp10(y[1]);\n", "t.kir:2:10: error: 'exp10' on f64 on target 'nvptx'"},
      {"  y[0] = ldexp(y[1], 3);\n", "t.kir:2:10: error: 'ldexp' on f64 on target 'nvptx'"},
  };
  for (const auto &[Line, Message] : Cases) {
    SCOPED_TRACE(Line);
    Err.clear();
    ptxOf(
        **T,
        (std::string("kernel k(x: ptr<f32>, y: ptr<f64>, e: ptr<i32>) {\n") + Line + "}\n").c_str(),
        Err);
    EXPECT_THAT(Err, HasSubstr(Message));
  }
}

TEST(NVPTXTargetTest, FingerprintDependsOnArchAndLibdevice) {
  NVPTXTargetOptions A, B, C;
  B.Arch = "sm_90";
  C.UseLibdevice = false;
  auto TA = createNVPTXTarget(A), TB = createNVPTXTarget(B), TC = createNVPTXTarget(C);
  ASSERT_TRUE(TA && TB && TC);
  EXPECT_NE((*TA)->getFingerprint(), (*TB)->getFingerprint());
  EXPECT_NE((*TA)->getFingerprint(), (*TC)->getFingerprint());
  // The registry itself is the same: only what the target links differs.
  EXPECT_EQ(CodegenTarget::get(**TA).getRegistry().fingerprint(),
            CodegenTarget::get(**TB).getRegistry().fingerprint());
}

TEST(NVPTXTargetTest, KernelMetadataForALaunch) {
  auto T = createNVPTXTarget();
  ASSERT_TRUE(succeeded(T));
  auto M = parseAndVerify("fn bar() { grid_sync(); }\n"
                          "kernel coop(n: i32, flag: bool, x: ptr<f64>) {\n"
                          "  shared a: [f32; 64];\n"
                          "  if n > 0 { shared b: [u8; 3]; b[0] = 1u8; }\n"
                          "  shared dyn: [i32];\n"
                          "  bar();\n"
                          "}\n"
                          "kernel plain(x: ptr<f32>) { x[0] = 1.0; }\n",
                          "meta.kir");
  ASSERT_TRUE(succeeded(M));
  auto A = (*T)->compile(**M, {});
  ASSERT_TRUE(succeeded(A));
  EXPECT_EQ(A->Kind, TargetKind::NVPTX);
  EXPECT_EQ(A->Arch, "sm_80");
  ASSERT_EQ(A->Kernels.size(), 2u);
  const KernelInfo *Coop = A->getKernel("coop");
  ASSERT_NE(Coop, nullptr);
  EXPECT_TRUE(Coop->Cooperative);
  // SharedLayout: `a` at 0, `b` at 256 (16-byte aligned), rounded up to 16.
  EXPECT_EQ(Coop->StaticSharedBytes, 64u * 4 + 16);
  EXPECT_TRUE(Coop->UsesDynamicShared);
  ASSERT_EQ(Coop->Params.size(), 3u);
  EXPECT_EQ(Coop->Params[0].Name, "n");
  EXPECT_EQ(Coop->Params[0].Size, 4u);
  EXPECT_EQ(Coop->Params[1].Size, 1u);
  EXPECT_EQ(Coop->Params[2].Ty, Type::getPointer(ScalarKind::F64));
  EXPECT_EQ(Coop->Params[2].Size, 8u);
  const KernelInfo *Plain = A->getKernel("plain");
  ASSERT_NE(Plain, nullptr);
  EXPECT_FALSE(Plain->Cooperative);
  EXPECT_EQ(Plain->StaticSharedBytes, 0u);
  EXPECT_FALSE(Plain->UsesDynamicShared);
  EXPECT_THAT(A->Payload, HasSubstr(".entry coop("));
}

// The static shared memory of a kernel counts its own declarations and
// those of every device function it reaches (directly or through another),
// each function once however often it is called; a function's dynamic
// array makes the kernel's launch need dynamic memory.
TEST(NVPTXTargetTest, SharedLayoutIncludesCalledFunctions) {
  auto T = createNVPTXTarget();
  ASSERT_TRUE(succeeded(T));
  auto M = parseAndVerify("fn leaf() -> u32 { shared n: u32; return n; }\n"
                          "fn mid() -> u32 { shared m: [f64; 5]; return leaf() + leaf(); }\n"
                          "fn dyn() -> f32 { shared d: [f32]; return d[0]; }\n"
                          "fn unused() { shared big: [u8; 1000]; big[0] = 1u8; }\n"
                          "kernel both(p: ptr<u32>) {\n"
                          "  shared own: [u8; 3];\n"
                          "  p[0] = mid() + leaf();\n"
                          "}\n"
                          "kernel only_leaf(p: ptr<u32>) { p[0] = leaf(); }\n"
                          "kernel with_dyn(p: ptr<f32>) { p[0] = dyn(); }\n"
                          "kernel none(p: ptr<u32>) { p[0] = 1u32; }\n",
                          "layout.kir");
  ASSERT_TRUE(succeeded(M));
  auto A = (*T)->compile(**M, {});
  ASSERT_TRUE(succeeded(A));
  auto Info = [&](const char *Name) {
    const KernelInfo *K = A->getKernel(Name);
    EXPECT_NE(K, nullptr) << Name;
    return K ? *K : KernelInfo();
  };
  // own (3 -> 16), mid's m (40 -> 48), leaf's n (4 -> 16): 80.
  EXPECT_EQ(Info("both").StaticSharedBytes, 16u + 48 + 16);
  EXPECT_FALSE(Info("both").UsesDynamicShared);
  EXPECT_EQ(Info("only_leaf").StaticSharedBytes, 16u);
  EXPECT_EQ(Info("with_dyn").StaticSharedBytes, 0u);
  EXPECT_TRUE(Info("with_dyn").UsesDynamicShared);
  EXPECT_EQ(Info("none").StaticSharedBytes, 0u);
}

} // namespace
