//===- LoweringRegistryTest.cpp - Registry freeze, completeness, errors ---===//
//
// Part of gridjit.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Lower/LoweringRegistry.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <set>
#include <thread>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;

llvm::Expected<llvm::Value *> dummyLowering(LoweringContext &, const OpArgs &) { return nullptr; }

std::unique_ptr<Target> nvptx(NVPTXTargetOptions Opts = {}) {
  auto T = createNVPTXTarget(Opts);
  if (!T) {
    ADD_FAILURE() << errorText(T.takeError());
    return nullptr;
  }
  return std::move(*T);
}

TEST(LoweringRegistryTest, OpNamesAreUniqueAndCoverBuiltins) {
  std::set<std::string_view> Names;
  for (unsigned I = 0; I < NumOps; ++I)
    EXPECT_TRUE(Names.insert(opName(static_cast<Op>(I))).second) << opName(static_cast<Op>(I));
  EXPECT_EQ(opName(opFor(BuiltinFunc::GridSync)), "grid_sync");
  EXPECT_EQ(opName(opFor(BuiltinFunc::Popc)), "popc");
  EXPECT_EQ(opName(opFor(BuiltinValue::ThreadIdx)), "thread_idx");
  EXPECT_EQ(opName(opFor(BuiltinValue::WarpSize)), "warp_size");
  EXPECT_EQ(opName(opFor(BinaryOp::Shr)), "shr");
  EXPECT_EQ(opName(opFor(UnaryOp::AddrOf)), "element_addr");
}

TEST(LoweringRegistryTest, AddThenFreezeRejectsLateAndDuplicateRegistration) {
  LoweringRegistry R("test");
  EXPECT_FALSE(R.isFrozen());
  EXPECT_TRUE(succeeded(R.add(Op::Add, dummyLowering)));
  EXPECT_EQ(R.lookup(Op::Add), &dummyLowering);
  EXPECT_EQ(R.lookup(Op::Sub), nullptr);
  EXPECT_THAT(errorText(R.add(Op::Add, dummyLowering)), HasSubstr("two lowerings for 'add'"));
  R.freeze();
  EXPECT_TRUE(R.isFrozen());
  std::string Late = errorText(R.add(Op::Sub, dummyLowering));
  EXPECT_THAT(Late, HasSubstr("registry of target 'test' is frozen"));
  EXPECT_THAT(Late, HasSubstr("'sub'"));
  EXPECT_EQ(R.lookup(Op::Sub), nullptr) << "a rejected registration must not take effect";
}

TEST(LoweringRegistryTest, FingerprintDependsOnEntriesAndVersions) {
  LoweringRegistry A("t"), B("t"), C("t"), D("other");
  ASSERT_TRUE(succeeded(A.add(Op::Add, dummyLowering, 1)));
  ASSERT_TRUE(succeeded(B.add(Op::Add, dummyLowering, 1)));
  ASSERT_TRUE(succeeded(C.add(Op::Add, dummyLowering, 2)));
  ASSERT_TRUE(succeeded(D.add(Op::Add, dummyLowering, 1)));
  EXPECT_EQ(A.fingerprint(), B.fingerprint());
  EXPECT_NE(A.fingerprint(), C.fingerprint());
  EXPECT_NE(A.fingerprint(), D.fingerprint());
  EXPECT_EQ(A.fingerprint().size(), 64u);
}

TEST(LoweringRegistryTest, NVPTXRegistryIsCompleteAndFrozenAtConstruction) {
  auto T = nvptx();
  ASSERT_TRUE(T);
  const LoweringRegistry &R = CodegenTarget::get(*T).getRegistry();
  EXPECT_TRUE(R.isFrozen());
  EXPECT_TRUE(R.missing().empty()) << "missing: " << opName(R.missing().front());
  EXPECT_NE(R.lookup(Op::BuiltinGridSync), nullptr);
  // The registry of a constructed target cannot be changed: the only
  // mutable access is for constructors, so build a fresh one to show that
  // freezing is what rejects late additions.
  EXPECT_EQ(T->getName(), "nvptx");
  EXPECT_EQ(T->getArch(), "sm_80");
}

TEST(LoweringRegistryTest, TargetWithoutALoweringReportsOpTargetAndLine) {
  NVPTXTargetOptions Opts;
  Opts.OmitLowerings = {Op::BuiltinAtomicAdd};
  auto T = nvptx(Opts);
  ASSERT_TRUE(T);
  EXPECT_EQ(CodegenTarget::get(*T).getRegistry().lookup(Op::BuiltinAtomicAdd), nullptr);
  EXPECT_NE(CodegenTarget::get(*T).getRegistry().fingerprint(),
            CodegenTarget::get(*nvptx()).getRegistry().fingerprint());

  auto M = parseAndVerify("kernel k(p: ptr<i32>) {\n"
                          "  p[0] = 1;\n"
                          "  atomic_add(p, 2);\n"
                          "}\n",
                          "missing.kir");
  ASSERT_TRUE(succeeded(M));
  auto PTX = T->emit(**M, EmitKind::Assembly, {});
  ASSERT_TRUE(failed(PTX));
  std::string Msg = errorText(PTX.takeError());
  EXPECT_THAT(Msg,
              HasSubstr("missing.kir:3:3: error: no lowering for 'atomic_add' on target 'nvptx'"));
  EXPECT_THAT(Msg, HasSubstr("  atomic_add(p, 2);"));
}

TEST(LoweringRegistryTest, ConcurrentLookupsSeeTheWholeTable) {
  auto T = nvptx();
  ASSERT_TRUE(T);
  const LoweringRegistry &R = CodegenTarget::get(*T).getRegistry();
  std::vector<std::thread> Threads;
  std::atomic<unsigned> Missing{0};
  for (int I = 0; I < 8; ++I)
    Threads.emplace_back([&] {
      for (int Round = 0; Round < 1000; ++Round)
        for (unsigned O = 0; O < NumOps; ++O)
          if (!R.lookup(static_cast<Op>(O)))
            ++Missing;
    });
  for (std::thread &Th : Threads)
    Th.join();
  EXPECT_EQ(Missing.load(), 0u);
}

TEST(LoweringRegistryTest, UnknownArchitectureIsAnError) {
  NVPTXTargetOptions Opts;
  Opts.Arch = "sm_12";
  auto T = createNVPTXTarget(Opts);
  ASSERT_TRUE(failed(T));
  std::string Msg = errorText(T.takeError());
  EXPECT_THAT(Msg, HasSubstr("unknown NVPTX architecture 'sm_12'"));
  EXPECT_THAT(Msg, HasSubstr("sm_90"));
}

TEST(LoweringRegistryTest, UnreadableLibdeviceIsAnError) {
  NVPTXTargetOptions Opts;
  Opts.LibdevicePath = "/nonexistent/libdevice.10.bc";
  auto T = createNVPTXTarget(Opts);
  ASSERT_TRUE(failed(T));
  EXPECT_THAT(errorText(T.takeError()),
              HasSubstr("cannot read libdevice '/nonexistent/libdevice.10.bc'"));
}

} // namespace
