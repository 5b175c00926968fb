//===- HostTargetTest.cpp - The host target: registry, stages, threads ----===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/TargetParser/Host.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <thread>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

std::unique_ptr<Target> host(HostTargetOptions Opts = {}) {
  auto T = createHostTarget(Opts);
  if (!T) {
    ADD_FAILURE() << errorText(T.takeError());
    return nullptr;
  }
  return std::move(*T);
}

std::unique_ptr<Module> parse(const char *Source) {
  auto M = parseAndVerify(Source, "test.kir");
  if (!M) {
    ADD_FAILURE() << errorText(M.takeError());
    return nullptr;
  }
  return std::move(*M);
}

const char *Reduce = R"(
fn twice(v: f32) -> f32 { return 2.0 * v; }
kernel reduce(x: ptr<f32>, out: ptr<f32>) {
  shared s: [f32; 64];
  let t: i32 = thread_idx.x;
  s[t] = twice(x[t]) + sin(0.0);
  sync_threads();
  var stride: i32 = 32;
  while stride > 0 {
    if t < stride { s[t] += s[t + stride]; }
    sync_threads();
    stride >>= 1;
  }
  if t == 0 { out[block_idx.x] = s[0] + shfl(1.0, 0) - 1.0; }
}
)";

TEST(HostTargetTest, NameArchAndCompleteFrozenRegistry) {
  auto T = host();
  ASSERT_TRUE(T);
  EXPECT_EQ(T->getName(), "host");
  EXPECT_EQ(std::string(T->getArch()), llvm::sys::getHostCPUName().str());
  EXPECT_TRUE(CodegenTarget::get(*T).getRegistry().isFrozen());
  EXPECT_TRUE(CodegenTarget::get(*T).getRegistry().missing().empty());
  EXPECT_EQ(CodegenTarget::get(*T).getRegistry().getTargetName(), "host");
  // Every op of the spec, grid_sync included, is registered up front.
  EXPECT_NE(CodegenTarget::get(*T).getRegistry().lookup(Op::BuiltinGridSync), nullptr);
  EXPECT_NE(CodegenTarget::get(*T).getRegistry().lookup(Op::BuiltinShflXor), nullptr);
  // Late registration is refused (the registry is frozen).
  EXPECT_TRUE(CodegenTarget::get(*T).getRegistry().isFrozen());
}

TEST(HostTargetTest, FingerprintIsStableAndDependsOnTheCPU) {
  auto A = host(), B = host();
  HostTargetOptions Generic;
  Generic.CPU = "x86-64";
  auto C = host(Generic);
  ASSERT_TRUE(A && B && C);
  EXPECT_EQ(A->getFingerprint(), B->getFingerprint());
  EXPECT_NE(A->getFingerprint(), C->getFingerprint());
  EXPECT_EQ(C->getArch(), "x86-64");
}

TEST(HostTargetTest, UnknownCPUIsAnError) {
  HostTargetOptions Opts;
  Opts.CPU = "no-such-cpu";
  auto T = createHostTarget(Opts);
  ASSERT_FALSE(T);
  EXPECT_THAT(errorText(T.takeError()), HasSubstr("unknown CPU 'no-such-cpu'"));
}

TEST(HostTargetTest, MissingLoweringIsALocatedError) {
  HostTargetOptions Opts;
  Opts.OmitLowerings = {Op::BuiltinSin};
  auto T = host(Opts);
  auto M = parse(Reduce);
  ASSERT_TRUE(T && M);
  EXPECT_FALSE(CodegenTarget::get(*T).getRegistry().missing().empty());
  auto A = T->compile(*M, CompileOptions());
  ASSERT_FALSE(A);
  std::string Msg = errorText(A.takeError());
  EXPECT_THAT(Msg, HasSubstr("no lowering for 'sin' on target 'host'"));
  EXPECT_THAT(Msg, HasSubstr("test.kir:6:"));
}

TEST(HostTargetTest, EveryStage) {
  auto T = host();
  auto M = parse(Reduce);
  ASSERT_TRUE(T && M);
  auto IR = T->emit(*M, EmitKind::LLVM, CompileOptions());
  ASSERT_TRUE(succeeded(IR));
  EXPECT_THAT(*IR, HasSubstr("define"));
  EXPECT_THAT(*IR, HasSubstr("@__gridjit_entry_reduce("));
  EXPECT_THAT(*IR, HasSubstr("@__gridjit_desc_reduce"));
  auto Asm = T->emit(*M, EmitKind::Assembly, CompileOptions());
  ASSERT_TRUE(succeeded(Asm));
  EXPECT_THAT(*Asm, HasSubstr("__gridjit_entry_reduce:"));
  auto A = T->compile(*M, CompileOptions());
  ASSERT_TRUE(succeeded(A));
  EXPECT_EQ(A->Kind, TargetKind::Host);
  EXPECT_EQ(A->Payload.substr(0, 4), "\x7f"
                                     "ELF");
  ASSERT_EQ(A->Kernels.size(), 1u);
  EXPECT_EQ(A->Kernels[0].Name, "reduce");
  EXPECT_EQ(A->Kernels[0].StaticSharedBytes, 64u * 4);
  EXPECT_FALSE(A->Kernels[0].Cooperative);
}

TEST(HostTargetTest, EveryOptimisationLevelCompiles) {
  auto T = host();
  auto M = parse(Reduce);
  ASSERT_TRUE(T && M);
  for (unsigned L = 0; L <= 3; ++L) {
    CompileOptions O;
    O.OptLevel = L;
    auto A = T->compile(*M, O);
    EXPECT_TRUE(succeeded(A)) << "-O" << L;
  }
}

TEST(HostTargetTest, CompilesFromManyThreadsAtOnceWithIdenticalResults) {
  auto T = host();
  auto M = parse(Reduce);
  ASSERT_TRUE(T && M);
  auto Serial = T->compile(*M, CompileOptions());
  ASSERT_TRUE(succeeded(Serial));
  std::vector<std::string> Payloads(4);
  std::vector<std::thread> Threads;
  for (unsigned I = 0; I < Payloads.size(); ++I)
    Threads.emplace_back([&, I] {
      auto A = T->compile(*M, CompileOptions());
      Payloads[I] = A ? A->Payload : "error: " + errorText(A.takeError());
    });
  for (std::thread &Th : Threads)
    Th.join();
  for (const std::string &P : Payloads)
    EXPECT_TRUE(P == Serial->Payload) << "a concurrent compile differs";
}

TEST(HostTargetTest, KIRNamesDoNotCaptureLibraryCalls) {
  // A device function named like a C library function the generated code
  // calls must not be what sin() calls.
  auto T = host();
  auto M = parse(R"(
fn sinf(v: f32) -> f32 { return 42.0; }
kernel k(p: ptr<f32>) { p[0] = sin(p[0]) + sinf(1.0); }
)");
  ASSERT_TRUE(T && M);
  auto IR = T->emit(*M, EmitKind::LLVM, CompileOptions());
  ASSERT_TRUE(succeeded(IR));
  EXPECT_THAT(*IR, HasSubstr("declare float @sinf(float"));
}

// Shared arrays that need padding: `a` takes bytes [0, 3), `t` starts at
// 16 (every array is 16-byte aligned) and ends at 36, and the dynamic array
// starts at 48. What the launch metadata says (KernelInfo, the C API's
// static_shared_bytes) and what the host runtime allocates and checks (the
// entry's descriptor) are the same layout: before, the first said 23.
TEST(HostTargetTest, StaticSharedBytesIsTheLayoutTheRuntimeUses) {
  auto T = host();
  auto M = parse(R"(
kernel k(out: ptr<f32>) {
  shared a: [u8; 3];
  shared t: [f32; 5];
  shared d: [f32];
  let i: i32 = thread_idx.x;
  a[i % 3] = 1u8;
  t[i] = 10.0 + i as f32;
  d[i] = 20.0 + i as f32;
  sync_threads();
  out[i] = t[i] + d[i] + a[i % 3] as f32;
}
)");
  ASSERT_TRUE(T && M);
  auto A = T->compile(*M, CompileOptions());
  ASSERT_TRUE(succeeded(A));
  ASSERT_EQ(A->Kernels.size(), 1u);
  EXPECT_EQ(A->Kernels[0].StaticSharedBytes, 48u);
  EXPECT_TRUE(A->Kernels[0].UsesDynamicShared);
  auto IR = T->emit(*M, EmitKind::LLVM, CompileOptions());
  ASSERT_TRUE(succeeded(IR));
  // Descriptor: ABI version, frame bytes, block-frame bytes, static shared
  // bytes, grid_sync count, checked, checked architecture.
  EXPECT_THAT(*IR, ::testing::ContainsRegex("@__gridjit_desc_k = .*constant \\[7 x i64\\] "
                                            "\\[i64 3, i64 [0-9]+, i64 0, i64 48, i64 0, i64 0, "
                                            "i64 0\\]"));

  // The runtime's shared-memory check adds the dynamic bytes to the same 48.
  HostRuntimeOptions Opts;
  Opts.NumThreads = 1;
  Opts.MaxSharedBytes = 60;
  auto RT = HostRuntime::create(Opts);
  ASSERT_TRUE(succeeded(RT));
  auto L = (*RT)->load(*A);
  ASSERT_TRUE(succeeded(L));
  float Out[3] = {};
  KernelArg Args[] = {KernelArg::pointer(Out)};
  EXPECT_THAT(errorText((*RT)->launch(**L, "k", {{1, 1, 1}, {3, 1, 1}, 13}, Args)),
              HasSubstr("61 bytes of shared memory per block exceed the limit of 60 bytes"));
  // 12 bytes fit: the dynamic array (3 floats) starts after `t`, not on it.
  ASSERT_TRUE(succeeded((*RT)->launch(**L, "k", {{1, 1, 1}, {3, 1, 1}, 12}, Args)));
  for (int I = 0; I < 3; ++I)
    EXPECT_EQ(Out[I], 31.0f + 2 * I) << I;
}

} // namespace
