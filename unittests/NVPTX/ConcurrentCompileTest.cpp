//===- ConcurrentCompileTest.cpp - Many threads, one NVPTX target ---------===//
//
// Part of gridjit. 16 threads compile 50 different kernels at once,
// repeatedly, through one shared Target; every result must be identical to
// a serial compile of the same kernel. Run under TSan too (the tsan preset).
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <atomic>
#include <thread>

using namespace gridjit;
using namespace gridjit::test;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

/// Kernel number \p I: a different mix of constructs for each I (shared
/// memory and barriers, loops, device functions, atomics, warp shuffles,
/// libdevice math, and every tenth one grid_sync).
std::string makeKernel(unsigned I) {
  std::string N = std::to_string(I);
  std::string Extra;
  switch (I % 5) {
  case 0:
    Extra = "  acc = sqrt(acc + 1.0);\n";
    break;
  case 1:
    Extra = "  atomic_add(count, " + N + ");\n";
    break;
  case 2:
    Extra = "  acc += shfl_down(acc, " + std::to_string(1 + I % 16) + ");\n";
    break;
  case 3:
    Extra = "  acc = sin(acc) * " + N + ".25;\n";
    break;
  case 4:
    Extra = "  acc = max(acc, " + N + ".0) - min(acc, 2.0);\n";
    break;
  }
  if (I % 10 == 0)
    Extra += "  grid_sync();\n  acc += y[0];\n";
  return "const STEPS" + N + ": i32 = " + std::to_string(1 + I % 7) +
         ";\n"
         "fn helper" +
         N +
         "(v: f32) -> f32 {\n"
         "  return v * " +
         N +
         ".5 + 1.0;\n"
         "}\n"
         "kernel k" +
         N +
         "(n: i32, x: ptr<f32>, y: ptr<f32>, count: ptr<i32>) {\n"
         "  shared tile: [f32; 64];\n"
         "  let t: i32 = thread_idx.x;\n"
         "  let g: i32 = block_idx.x * block_dim.x + t;\n"
         "  if g < n {\n"
         "    tile[t % 64] = x[g];\n"
         "  }\n"
         "  sync_threads();\n"
         "  var acc: f32 = 0.0;\n"
         "  for j in 0..STEPS" +
         N +
         " {\n"
         "    acc += tile[(t + j) % 64] * (j as f32);\n"
         "  }\n" +
         Extra +
         "  if g < n {\n"
         "    y[g] = helper" +
         N +
         "(acc);\n"
         "  }\n"
         "}\n";
}

/// The first line where \p A and \p B differ, for a readable failure.
std::string firstDifference(const std::string &A, const std::string &B) {
  llvm::SmallVector<llvm::StringRef> LA, LB;
  llvm::StringRef(A).split(LA, '\n');
  llvm::StringRef(B).split(LB, '\n');
  for (size_t I = 0; I < std::min(LA.size(), LB.size()); ++I)
    if (LA[I] != LB[I])
      return "line " + std::to_string(I + 1) + ": serial '" + LA[I].str() + "' vs '" + LB[I].str() +
             "'";
  return "lengths differ: " + std::to_string(LA.size()) + " vs " + std::to_string(LB.size());
}

std::string compileOne(const Target &T, const std::string &Text, const std::string &Name) {
  auto M = parseAndVerify(Text, Name);
  if (!M)
    return "error: " + llvm::toString(M.takeError());
  auto A = T.compile(**M, {});
  if (!A)
    return "error: " + llvm::toString(A.takeError());
  return A->Payload;
}

TEST(ConcurrentCompileTest, SixteenThreadsFiftyKernelsMatchSerial) {
  auto T = createNVPTXTarget();
  ASSERT_TRUE(succeeded(T));
  constexpr unsigned NumKernels = 50, NumThreads = 16, Rounds = 2;

  std::vector<std::string> Texts, Serial;
  for (unsigned I = 0; I < NumKernels; ++I) {
    Texts.push_back(makeKernel(I));
    Serial.push_back(compileOne(**T, Texts[I], "k" + std::to_string(I) + ".kir"));
    ASSERT_THAT(Serial[I], Not(StartsWith("error"))) << Texts[I];
    ASSERT_THAT(Serial[I], HasSubstr(".entry k" + std::to_string(I)));
  }

  std::atomic<unsigned> Mismatches{0}, Compiles{0};
  std::vector<std::string> FirstMismatch(NumThreads);
  std::vector<std::thread> Threads;
  for (unsigned Th = 0; Th < NumThreads; ++Th)
    Threads.emplace_back([&, Th] {
      for (unsigned R = 0; R < Rounds; ++R)
        for (unsigned J = 0; J < NumKernels; ++J) {
          // Each thread walks the kernels in its own order.
          unsigned I = (J * 7 + Th * 3 + R) % NumKernels;
          std::string Out = compileOne(**T, Texts[I], "k" + std::to_string(I) + ".kir");
          ++Compiles;
          if (Out != Serial[I] && Mismatches++ == 0)
            FirstMismatch[Th] =
                "kernel " + std::to_string(I) + ": " + firstDifference(Serial[I], Out);
        }
    });
  for (std::thread &Th : Threads)
    Th.join();
  EXPECT_EQ(Compiles.load(), NumThreads * Rounds * NumKernels);
  EXPECT_EQ(Mismatches.load(), 0u);
  for (const std::string &S : FirstMismatch)
    if (!S.empty())
      ADD_FAILURE() << S;
}

} // namespace
