//===- TargetMachineReuseTest.cpp - Reused TargetMachines, same code ------===//
//
// Part of gridjit. A target keeps the TargetMachines of finished compiles
// and hands them to later ones (CodegenTarget::emit). This test compiles
// every .kir file of examples/ and test/ that compiles, for both targets
// at -O3 and at -O0 (one test each), twice over on one thread through one target (so
// every compile after the first of each level reuses a TargetMachine that
// has already compiled other modules), and once on a fresh thread with a
// new TargetMachine, and requires the same bytes from all three: PTX for
// NVPTX (call-site numbers included), the object file for the host.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/Support/MemoryBuffer.h"

#include "gtest/gtest.h"

#include <filesystem>
#include <thread>

using namespace gridjit;
using namespace gridjit::test;

namespace {

struct Input {
  std::string Path;
  std::unique_ptr<Module> M;
};

/// Every .kir file under examples/ and test/ that parses and verifies, in
/// path order. (Many files of test/ are meant to fail; they are skipped.)
std::vector<Input> loadInputs() {
  std::vector<std::string> Paths;
  for (const char *Dir : {"examples", "test"})
    for (const auto &E : std::filesystem::recursive_directory_iterator(
             std::filesystem::path(GRIDJIT_SOURCE_DIR) / Dir))
      if (E.is_regular_file() && E.path().extension() == ".kir")
        Paths.push_back(E.path().string());
  std::sort(Paths.begin(), Paths.end());
  std::vector<Input> Inputs;
  for (const std::string &P : Paths) {
    auto Buf = llvm::MemoryBuffer::getFile(P);
    if (!Buf)
      continue;
    auto M = parseModule((*Buf)->getBuffer(), P);
    if (!M) {
      llvm::consumeError(M.takeError());
      continue;
    }
    if (llvm::Error E = verifyModule(**M)) {
      llvm::consumeError(std::move(E));
      continue;
    }
    Inputs.push_back({P, std::move(*M)});
  }
  return Inputs;
}

/// The payload of compiling \p M with \p T at \p OptLevel, or "ERROR: ...".
std::string compileText(const Target &T, const Module &M, unsigned OptLevel) {
  CompileOptions Opts;
  Opts.OptLevel = OptLevel;
  auto A = T.compile(M, Opts);
  if (!A)
    return "ERROR: " + errorText(A.takeError());
  return std::move(A->Payload);
}

void checkReuseGivesSameCode(const Target &Warm, const Target &Fresh, unsigned Level) {
  const unsigned Levels[] = {Level};
  std::vector<Input> Inputs = loadInputs();
  ASSERT_GT(Inputs.size(), 50u) << "examples/ and test/ should hold many kernels";

  // Reference: each module on a new thread, with a new TargetMachine.
  std::vector<std::string> Ref;
  const CodegenTarget &F = CodegenTarget::get(Fresh);
  for (const Input &I : Inputs)
    for (unsigned L : Levels) {
      std::thread Th([&] {
        F.releaseIdleTargetMachines();
        uint64_t Before = F.getTargetMachineStats().Created;
        Ref.push_back(compileText(Fresh, *I.M, L));
        EXPECT_EQ(F.getTargetMachineStats().Created, Before + 1) << I.Path;
      });
      Th.join();
    }

  // Twice over on one thread through one target: every module after the
  // first of each level gets a TargetMachine that compiled others before.
  std::vector<std::string> Pass1, Pass2;
  std::thread Th([&] {
    for (std::vector<std::string> *Out : {&Pass1, &Pass2})
      for (const Input &I : Inputs)
        for (unsigned L : Levels)
          Out->push_back(compileText(Warm, *I.M, L));
  });
  Th.join();

  size_t Compiled = 0, K = 0;
  for (const Input &I : Inputs)
    for (unsigned L : Levels) {
      SCOPED_TRACE(I.Path + " -O" + std::to_string(L));
      EXPECT_EQ(Pass1[K], Ref[K]) << "first compile with a reused TargetMachine differs";
      EXPECT_EQ(Pass2[K], Ref[K]) << "second compile with a reused TargetMachine differs";
      Compiled += Ref[K].rfind("ERROR: ", 0) != 0;
      ++K;
    }
  EXPECT_GT(Compiled, 50u) << "too few of the files compile to show anything";

  // One TargetMachine was made; every other compile that got as far as
  // code generation reused it.
  TargetMachineStats S = CodegenTarget::get(Warm).getTargetMachineStats();
  EXPECT_EQ(S.Created, std::size(Levels));
  EXPECT_GE(S.Reused, Compiled - std::size(Levels));
  EXPECT_EQ(S.Idle, std::size(Levels));
}

TEST(TargetMachineReuseTest, NVPTXO3SameCodeAsANewTargetMachine) {
  auto Warm = createNVPTXTarget();
  auto Fresh = createNVPTXTarget();
  ASSERT_TRUE(succeeded(Warm));
  ASSERT_TRUE(succeeded(Fresh));
  checkReuseGivesSameCode(**Warm, **Fresh, 3);
}

TEST(TargetMachineReuseTest, NVPTXO0SameCodeAsANewTargetMachine) {
  auto Warm = createNVPTXTarget();
  auto Fresh = createNVPTXTarget();
  ASSERT_TRUE(succeeded(Warm));
  ASSERT_TRUE(succeeded(Fresh));
  checkReuseGivesSameCode(**Warm, **Fresh, 0);
}

TEST(TargetMachineReuseTest, HostO3SameCodeAsANewTargetMachine) {
  auto Warm = createHostTarget();
  auto Fresh = createHostTarget();
  ASSERT_TRUE(succeeded(Warm));
  ASSERT_TRUE(succeeded(Fresh));
  checkReuseGivesSameCode(**Warm, **Fresh, 3);
}

TEST(TargetMachineReuseTest, HostO0SameCodeAsANewTargetMachine) {
  auto Warm = createHostTarget();
  auto Fresh = createHostTarget();
  ASSERT_TRUE(succeeded(Warm));
  ASSERT_TRUE(succeeded(Fresh));
  checkReuseGivesSameCode(**Warm, **Fresh, 0);
}

TEST(TargetMachineReuseTest, ReleaseAndFailedCompiles) {
  auto T = createNVPTXTarget();
  ASSERT_TRUE(succeeded(T));
  const CodegenTarget &C = CodegenTarget::get(**T);
  auto M = parseModule("kernel k(p: ptr<f32>) { p[thread_idx.x] = 1.0; }", "k.kir");
  ASSERT_TRUE(succeeded(M));
  ASSERT_TRUE(succeeded(verifyModule(**M)));
  EXPECT_EQ(compileText(**T, **M, 3).rfind("ERROR", 0), std::string::npos);
  EXPECT_EQ(C.getTargetMachineStats().Idle, 1u);
  // A compile that fails in code generation does not give its
  // TargetMachine back (NVPTX emits no object files).
  auto Obj = (*T)->emit(**M, EmitKind::Object, {});
  ASSERT_TRUE(failed(Obj));
  EXPECT_EQ(C.getTargetMachineStats().Idle, 0u);
  EXPECT_EQ(C.getTargetMachineStats().Reused, 1u);
  EXPECT_EQ(compileText(**T, **M, 3).rfind("ERROR", 0), std::string::npos);
  EXPECT_EQ(C.getTargetMachineStats().Created, 2u);
  C.releaseIdleTargetMachines();
  EXPECT_EQ(C.getTargetMachineStats().Idle, 0u);
}

} // namespace
