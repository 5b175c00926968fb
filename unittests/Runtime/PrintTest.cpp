//===- PrintTest.cpp - print on the host: order, buffers, threads ----------===//
//
// Part of gridjit. The C++ side of a kernel's print (docs/HostTarget.md,
// "Printing"): the metadata that gives a launch a buffer, the order of the
// lines whatever the workers, a full buffer's report, launches from several
// threads at once, a cooperative kernel's phases.
//
//===----------------------------------------------------------------------===//

#include "RuntimeTestUtil.h"
#include "TestSupport.h"

#include "gridjit/IR/Builder.h"
#include "gridjit/IR/Printer.h"
#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/Target.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <string>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;

namespace {

const char *Source = R"(
fn note(b: i32, t: i32) {
  print("b{} t{} fn", b, t);
}
kernel lines(tag: i32) {
  let b: i32 = block_idx.x;
  let t: i32 = thread_idx.x;
  print("b{} t{} a {}", b, t, tag);
  sync_threads();
  note(b, t);
}
kernel phases() {
  print("b{} t{} before", block_idx.x, thread_idx.x);
  grid_sync();
  print("b{} t{} after", block_idx.x, thread_idx.x);
}
kernel diverges() {
  print("t{} before", thread_idx.x);
  if thread_idx.x == 0 {
    sync_threads();
  }
}
kernel quiet(out: ptr<i32>) {
  out[thread_idx.x] = 1;
}
)";

const Artifact &artifact() {
  static Artifact A = compileForTest(createHostTarget(), Source, "print-test.kir");
  return A;
}

/// What `lines` prints for \p Grid blocks of \p Block threads.
std::string expectedLines(unsigned Grid, unsigned Block, int Tag) {
  std::string S;
  for (unsigned B = 0; B < Grid; ++B)
    for (unsigned T = 0; T < Block; ++T)
      S += "b" + std::to_string(B) + " t" + std::to_string(T) + " a " + std::to_string(Tag) +
           "\nb" + std::to_string(B) + " t" + std::to_string(T) + " fn\n";
  return S;
}

// The C++ builder makes the same call the parser does.
TEST(PrintTest, TheBuilderMakesPrint) {
  using namespace gridjit::kir;
  ModuleBuilder MB("built.kir");
  FunctionBuilder K = MB.kernel("k", {{"n", i32()}});
  K.print("n = {}, {{}}\\t", name("n"));
  std::unique_ptr<Module> M = MB.take();
  ASSERT_TRUE(succeeded(verifyModule(*M)));
  EXPECT_THAT(printModule(*M), ::testing::HasSubstr("  print(\"n = {}, {{}}\\t\", n);\n"));
  ModuleBuilder Bad("bad.kir");
  Bad.kernel("k", {}).print("{}");
  std::unique_ptr<Module> BM = Bad.take();
  EXPECT_THAT(errorText(verifyModule(*BM)),
              ::testing::HasSubstr("the format of 'print' has 1 '{}' but 0 arguments follow"));
}

TEST(PrintTest, OnlyKernelsThatPrintSayTheyDo) {
  const Artifact &A = artifact();
  ASSERT_NE(A.getKernel("lines"), nullptr);
  EXPECT_TRUE(A.getKernel("lines")->Prints);
  EXPECT_TRUE(A.getKernel("phases")->Prints);
  EXPECT_FALSE(A.getKernel("quiet")->Prints);
}

TEST(PrintTest, LinesComeByBlockThenThreadWhateverTheWorkers) {
  HostRuntimeOptions O;
  O.NumThreads = 4;
  LoadedHost L = loadHost(artifact(), O);
  ASSERT_TRUE(L.M);
  std::string Out;
  unsigned Calls = 0;
  LaunchStats S;
  LaunchOptions LO;
  LO.Stats = &S;
  LO.PrintOutput = [&](llvm::StringRef Text) {
    Out += Text;
    ++Calls;
    EXPECT_TRUE(Text.ends_with("\n"));
  };
  KernelArg Args[] = {KernelArg::i32(7)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "lines", config1D(9, 5), Args, LO)));
  EXPECT_EQ(Out, expectedLines(9, 5, 7));
  EXPECT_EQ(Calls, 90u); // one call per line
  EXPECT_EQ(S.PrintRecords, 90u);
  EXPECT_EQ(S.PrintDroppedRecords, 0u);
}

TEST(PrintTest, AFullBufferIsReportedNeverSilent) {
  LoadedHost L = loadHost(artifact());
  ASSERT_TRUE(L.M);
  std::string Out;
  LaunchStats S;
  LaunchOptions LO;
  LO.Stats = &S;
  LO.PrintOutput = [&](llvm::StringRef Text) { Out += Text; };
  // "b0 tN a 1\n" is 10 bytes: a record of 16 + 10 -> 32. The two before
  // the barrier fit in 70, the two after it do not.
  LO.PrintBufferBytes = 70;
  KernelArg Args[] = {KernelArg::i32(1)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "lines", config1D(1, 2), Args, LO)));
  EXPECT_EQ(S.PrintRecords, 2u);
  EXPECT_EQ(S.PrintDroppedRecords, 2u);
  EXPECT_EQ(S.PrintDroppedBytes, 18u); // the two "b0 tN fn\n" after the barrier
  EXPECT_THAT(Out, ::testing::HasSubstr("the print buffer of kernel 'lines' (70 bytes) is full: 2 "
                                        "records"));
  // The limit, checked before anything runs.
  LO.PrintBufferBytes = LaunchOptions::MaxPrintBufferBytes + 1;
  EXPECT_THAT(errorText(L.RT->launch(*L.M, "lines", config1D(1, 2), Args, LO)),
              ::testing::HasSubstr("a print buffer of 1073741825 bytes is more than the "
                                   "1073741824 allowed"));
}

TEST(PrintTest, LaunchesFromManyThreadsKeepTheirOwnLines) {
  HostRuntimeOptions O;
  O.NumThreads = 2;
  LoadedHost L = loadHost(artifact(), O);
  ASSERT_TRUE(L.M);
  std::vector<std::string> Outs(4);
  std::vector<std::thread> Threads;
  for (int T = 0; T < 4; ++T)
    Threads.emplace_back([&, T] {
      for (int Round = 0; Round < 5; ++Round) {
        std::string Out;
        LaunchOptions LO;
        LO.PrintOutput = [&](llvm::StringRef Text) { Out += Text; };
        KernelArg Args[] = {KernelArg::i32(T)};
        if (llvm::Error E = L.RT->launch(*L.M, "lines", config1D(6, 4), Args, LO))
          Out = llvm::toString(std::move(E));
        if (Out != expectedLines(6, 4, T))
          Outs[T] = Out; // the first wrong one, for the message
      }
    });
  for (std::thread &T : Threads)
    T.join();
  for (int T = 0; T < 4; ++T)
    EXPECT_EQ(Outs[T], "") << "launching thread " << T;
}

TEST(PrintTest, ACooperativeKernelPrintsAcrossItsPhases) {
  LoadedHost L = loadHost(artifact());
  ASSERT_TRUE(L.M);
  std::string Out;
  LaunchOptions LO;
  LO.PrintOutput = [&](llvm::StringRef Text) { Out += Text; };
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "phases", config1D(3, 2), {}, LO)));
  std::string Want;
  for (int B = 0; B < 3; ++B)
    for (int T = 0; T < 2; ++T)
      Want += "b" + std::to_string(B) + " t" + std::to_string(T) + " before\nb" +
              std::to_string(B) + " t" + std::to_string(T) + " after\n";
  EXPECT_EQ(Out, Want);
}

// A launch that stops with an error still writes what was printed before.
TEST(PrintTest, ALaunchThatFailsStillWritesItsLines) {
  LoadedHost L = loadHost(artifact());
  ASSERT_TRUE(L.M);
  std::string Out;
  LaunchOptions LO;
  LO.PrintOutput = [&](llvm::StringRef Text) { Out += Text; };
  EXPECT_THAT(errorText(L.RT->launch(*L.M, "diverges", config1D(1, 3), {}, LO)),
              ::testing::HasSubstr("divergent"));
  EXPECT_EQ(Out, "t0 before\nt1 before\nt2 before\n");
}

TEST(PrintTest, AKernelThatDoesNotPrintGetsNoBufferAndNoOutput) {
  LoadedHost L = loadHost(artifact());
  ASSERT_TRUE(L.M);
  bool Called = false;
  LaunchStats S;
  LaunchOptions LO;
  LO.Stats = &S;
  LO.PrintOutput = [&](llvm::StringRef) { Called = true; };
  // A buffer size no launch could allocate is never asked for.
  LO.PrintBufferBytes = LaunchOptions::MaxPrintBufferBytes;
  int Out[4] = {};
  KernelArg Args[] = {KernelArg::pointer(Out)};
  ASSERT_TRUE(succeeded(L.RT->launch(*L.M, "quiet", config1D(1, 4), Args, LO)));
  EXPECT_FALSE(Called);
  EXPECT_EQ(S.PrintRecords, 0u);
  EXPECT_EQ(Out[3], 1);
}

} // namespace
