//===- ProvenSharedTest.cpp - Proven shared arrays change no finding ------===//
//
// Part of gridjit. Checked code runs a kernel's proven entry, where the
// accesses of its proven shared arrays call nothing, when the block's
// shape lets the proofs hold (docs/Check.md, "Proven shared arrays"). The
// findings of a launch must not change. These tests generate small kernels
// of shared-array accesses, barriers, guarded tree steps and uniform loops
// (racy or not, initialised or not, in bounds or not), and run each in two
// variants on several block shapes: as written, and with a statement at
// its end that never runs but takes the address of the array, so that
// nothing is proven and every access is checked. Both must report the same
// findings, or none and write the same results.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Parse/Parser.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "gtest/gtest.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;

namespace {

/// A small deterministic generator (splitmix64).
struct Rng {
  uint64_t S;
  uint64_t next() {
    uint64_t Z = (S += 0x9e3779b97f4a7c15ull);
    Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ull;
    Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebull;
    return Z ^ (Z >> 31);
  }
  unsigned below(unsigned N) { return unsigned(next() % N); }
  template <typename T, size_t N> const T &pick(const T (&A)[N]) { return A[below(N)]; }
};

/// One generated kernel `k`; \p Disprove adds the statement that keeps the
/// array from being proven.
std::string kernel(uint64_t Seed, bool Disprove) {
  Rng R{Seed};
  unsigned N = R.below(2) ? 16 : 8;
  const char *Tids[] = {"tx", "ty * 4 + tx", "ty * 2 + tx", "tx * 2", "tx + 1", "ty"};
  std::string Tid = R.pick(Tids);
  auto Index = [&] {
    const std::string C = std::to_string(R.below(N));
    std::string Idx[] = {"tid", "tid",         "tid + 1",     "tid + k1",
                         C,     "tid * 2",     "tx",          "(tid + 1) % " + std::to_string(N),
                         "k1",  "tid - 1 + 1", "ty * 4 + tx", std::to_string(N - 1) + " - tid"};
    return R.pick(Idx);
  };
  std::string Body;
  auto Line = [&](const std::string &L) { Body += "  " + L + "\n"; };
  // Most kernels first fill the array at the thread's index (which covers
  // it in some shapes), as proven kernels do.
  if (R.below(5) < 3) {
    Line("s[tid] = tid + 1;");
    Line("sync_threads();");
  }
  unsigned Items = 2 + R.below(5);
  for (unsigned I = 0; I < Items; ++I) {
    switch (R.below(7)) {
    case 0:
      Line("s[" + Index() + "] = tid + acc;");
      break;
    case 1:
      Line("acc += s[" + Index() + "];");
      break;
    case 2:
    case 3:
      Line("sync_threads();");
      break;
    case 4:
      Line("if tid < " + std::to_string(R.below(N + 1)) + " {");
      Line(R.below(2) ? "  s[" + Index() + "] = acc + 1;" : "  acc += s[" + Index() + "];");
      Line("}");
      break;
    case 5: {
      const char *Cmp[] = {"<", "<", "<=", "<"};
      const char *Off[] = {"", "", " + 1", ""};
      Line("for var stride: i32 = " + std::to_string(N / 2) + "; stride > 0; stride >>= 1 {");
      Line("  if tid " + std::string(R.pick(Cmp)) + " stride {");
      Line("    s[tid] += s[tid + stride" + std::string(R.pick(Off)) + "];");
      Line("  }");
      if (R.below(4))
        Line("  sync_threads();");
      Line("}");
      break;
    }
    default:
      Line("for r in 0..2 {");
      Line("  if tid < " + std::to_string(N) + " {");
      Line("    s[" + Index() + "] = r + tid;");
      Line("  } else {");
      Line("    s[" + Index() + "] = 0;");
      Line("  }");
      if (R.below(4))
        Line("  sync_threads();");
      Line("  acc += s[" + Index() + "];");
      Line("  sync_threads();");
      Line("}");
      break;
    }
  }
  std::string K = "kernel k(out: ptr<i32>, z: i32, k1: i32) {\n"
                  "  shared s: [i32; " +
                  std::to_string(N) +
                  "];\n"
                  "  let tx: i32 = thread_idx.x;\n"
                  "  let ty: i32 = thread_idx.y;\n"
                  "  let tid: i32 = " +
                  Tid +
                  ";\n"
                  "  var acc: i32 = 0;\n" +
                  Body + "  out[(block_idx.x * block_dim.y + ty) * block_dim.x + tx] = acc;\n";
  if (Disprove)
    K += "  if z == 1 {\n    atomic_add(&s[0], 0);\n  }\n";
  return K + "}\n";
}

struct Compiled {
  std::unique_ptr<Module> M;
  Artifact A;
};

Compiled compile(const std::string &Source) {
  Compiled C;
  auto M = parseModule(Source, "gen.kir");
  EXPECT_TRUE(succeeded(M)) << Source;
  if (!M)
    return C;
  C.M = std::move(*M);
  EXPECT_TRUE(succeeded(verifyModule(*C.M))) << Source;
  static std::shared_ptr<const Target> Checked =
      llvm::cantFail(llvm::cantFail(createHostTarget())->makeChecked(80));
  CompileOptions O;
  O.OptLevel = 1;
  auto A = Checked->compile(*C.M, O);
  EXPECT_TRUE(succeeded(A)) << Source;
  if (A)
    C.A = std::move(*A);
  return C;
}

/// What one launch gives: the findings' text, or the results.
std::string run(HostRuntime &RT, const Artifact &A, unsigned BX, unsigned BY, int32_t K1) {
  auto L = RT.load(A);
  if (!L)
    return "LOAD: " + errorText(L.takeError());
  LaunchConfig C;
  C.Grid.X = 2;
  C.Block.X = BX;
  C.Block.Y = BY;
  std::vector<int32_t> Out(2 * BX * BY, -7);
  KernelArg Args[] = {KernelArg::pointer(Out.data()).withExtent(Out.size() * sizeof(int32_t)),
                      KernelArg::i32(0), KernelArg::i32(K1)};
  if (llvm::Error E = RT.launch(**L, "k", C, Args))
    return "FINDING: " + errorText(std::move(E));
  std::string R = "OUT:";
  for (int32_t V : Out)
    R += " " + std::to_string(V);
  return R;
}

TEST(ProvenSharedTest, GeneratedKernelsFindTheSameWithAndWithoutTheProvenEntry) {
  auto RT = llvm::cantFail(HostRuntime::create(HostRuntimeOptions()));
  const unsigned Shapes[][2] = {{8, 1}, {16, 1}, {4, 2}, {4, 4}, {2, 4}, {5, 1}, {8, 2}};
  const int32_t K1s[] = {0, 1, 4};
  unsigned Proven = 0, Kernels = 0, Clean = 0, Found = 0;
  for (uint64_t Seed = 1; Seed <= 160; ++Seed) {
    std::string Source = kernel(Seed, false), Plain = kernel(Seed, true);
    Compiled A = compile(Source), B = compile(Plain);
    if (A.A.Payload.empty() || B.A.Payload.empty())
      continue;
    ++Kernels;
    // The proven entry is a local function of the object.
    bool HasProven = A.A.Payload.find("__gridjit_proven_k") != std::string::npos;
    Proven += HasProven;
    EXPECT_EQ(B.A.Payload.find("__gridjit_proven_k"), std::string::npos) << Plain;
    for (const auto &S : Shapes)
      for (int32_t K1 : K1s) {
        std::string WithProofs = run(*RT, A.A, S[0], S[1], K1);
        std::string Checked = run(*RT, B.A, S[0], S[1], K1);
        ASSERT_EQ(WithProofs, Checked)
            << "block " << S[0] << "x" << S[1] << ", k1 = " << K1 << ":\n"
            << Source;
        (WithProofs.rfind("OUT:", 0) == 0 ? Clean : Found) += HasProven;
      }
  }
  // Not vacuous: many kernels are proven, and their launches both find
  // and do not.
  EXPECT_EQ(Kernels, 160u);
  EXPECT_GE(Proven, 10u);
  EXPECT_GE(Clean, 50u);
  EXPECT_GE(Found, 50u);
  std::printf("%u kernels, %u proven; their launches: %u clean, %u with findings\n", Kernels,
              Proven, Clean, Found);
}

} // namespace
