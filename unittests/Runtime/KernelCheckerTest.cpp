//===- KernelCheckerTest.cpp - The run-time half of checked launches ------===//
//
// Part of gridjit. KernelChecker (lib/Runtime/KernelChecker.h) driven the
// way checked code drives it: a BlockContext bound to the checker, and
// CheckAccess / CheckReport / CheckSync calls for several threads, syncs
// and blocks, with the memory accessed as the code would after each check.
// Every finding's text is checked exactly.
//
//===----------------------------------------------------------------------===//

#include "Runtime/KernelChecker.h"

#include "TestSupport.h"

#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Errors.h"

#include "llvm/AsmParser/Parser.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <array>
#include <csetjmp>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
namespace habi = gridjit::hostabi;

namespace {

constexpr const char *Src = "  v = x[i];";
/// How a finding at column 7 of a line of Src ends: the line and a caret.
const std::string SourceAndCaret = "\n  v = x[i];\n      ^";

/// A site at line \p Line, column 7 of "k.kir", in kernel 'k'.
habi::CheckSite site(uint32_t Kind, uint32_t Space, int32_t Param, const char *Memory,
                     uint32_t Line, const char *What = "", uint64_t SharedOffset = 0,
                     uint64_t SharedBytes = 0, uint32_t Bytes = 4) {
  habi::CheckSite S{};
  S.Module = "k.kir";
  S.Line = Line;
  S.Col = 7;
  S.SourceLine = Src;
  S.Kernel = "k";
  S.What = What;
  S.Kind = Kind;
  S.Space = Space;
  S.Bytes = Kind >= habi::CheckLocalIndex ? 0 : Bytes;
  S.ElemBytes = 4;
  S.Param = Param;
  S.Memory = Memory;
  S.SharedOffset = SharedOffset;
  S.SharedBytes = SharedBytes;
  return S;
}

/// Kernel 'k'(n: i32, x: ptr<f32>, y: ptr<f32>, z: ptr<f32>), 64 bytes of
/// static shared memory ('s' at 0, 't' at 32), 16 dynamic, grid (2, 1, 1)
/// of blocks (64, 1, 1). x is Buf[0..8) and y Buf[8..16), with extents; z
/// has none.
struct KernelCheckerTest : ::testing::Test {
  KernelInfo Info;
  LaunchConfig Cfg;
  alignas(64) float Buf[16] = {};
  alignas(64) char Shared[128] = {};
  std::unique_ptr<KernelChecker> Ck;
  habi::BlockContext Ctx{};

  void SetUp() override {
    Info.Name = "k";
    Info.Params = {{"n", Type::getScalar(ScalarKind::I32), 4, 4},
                   {"x", Type::getPointer(ScalarKind::F32), 8, 8},
                   {"y", Type::getPointer(ScalarKind::F32), 8, 8},
                   {"z", Type::getPointer(ScalarKind::F32), 8, 8}};
    Cfg.Grid.X = 2;
    Cfg.Block.X = 64;
    Cfg.DynamicSharedBytes = 16;
    make();
  }
  void make(uint32_t MaxFindings = 100, bool SameValue = false) {
    Ck = std::make_unique<KernelChecker>(Info, Cfg, 64, MaxFindings, SameValue);
    Ck->setPointerArg(1, addr(&Buf[0]), 32);
    Ck->setPointerArg(2, addr(&Buf[8]), 32);
    Ck->setPointerArg(3, addr(&Buf[4]), std::nullopt);
    Ck->bind(Ctx);
    Ck->beginPhase();
    Ck->enterBlock(0, Shared, true);
  }
  static uint64_t addr(const void *P) { return uint64_t(uintptr_t(P)); }

  /// Checks and does a load of 4 bytes at \p P; returns where it went.
  void *load(const habi::CheckSite &S, uint64_t Block, uint32_t Thread, void *P) {
    void *To = Ctx.CheckAccess(Ctx.CheckState, &S, Block, Thread, P, nullptr);
    float V;
    std::memcpy(&V, To, 4);
    return To;
  }
  /// Checks and does a store of \p V at \p P.
  void *store(const habi::CheckSite &S, uint64_t Block, uint32_t Thread, void *P, float V) {
    void *To = Ctx.CheckAccess(Ctx.CheckState, &S, Block, Thread, P, &V);
    std::memcpy(To, &V, 4);
    return To;
  }
  void *atomic(const habi::CheckSite &S, uint64_t Block, uint32_t Thread, void *P) {
    void *To = Ctx.CheckAccess(Ctx.CheckState, &S, Block, Thread, P, nullptr);
    float V;
    std::memcpy(&V, To, 4);
    V += 1;
    std::memcpy(To, &V, 4);
    return To;
  }
  void syncThreads(uint64_t Block) {
    Ctx.CheckSync(Ctx.CheckState, habi::CheckSyncThreads, Block, 0);
  }
  void syncWarp(uint64_t Block, uint32_t Warp) {
    Ctx.CheckSync(Ctx.CheckState, habi::CheckSyncWarp, Block, Warp);
  }

  std::vector<std::string> texts() const {
    std::vector<std::string> T;
    for (const CheckFinding &F : Ck->findings())
      T.push_back(F.Text);
    return T;
  }
  /// The headline lines (the first line of each finding's text).
  std::vector<std::string> headlines() const {
    std::vector<std::string> T;
    for (const CheckFinding &F : Ck->findings())
      T.push_back(F.Headline);
    return T;
  }
};

using ::testing::ElementsAre;
using ::testing::IsEmpty;

TEST_F(KernelCheckerTest, OutOfBoundsThroughAParameterIsRenderedLikeACompileError) {
  auto S = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 3);
  EXPECT_EQ(load(S, 0, 7, &Buf[7]), &Buf[7]); // the last element: fine
  EXPECT_TRUE(Ck->findings().empty());
  // Buf[8] is y's first element: still outside x's own buffer.
  void *To = load(S, 0, 8, &Buf[8]);
  EXPECT_NE(To, &Buf[8]);
  ASSERT_EQ(Ck->findings().size(), 1u);
  const CheckFinding &F = Ck->findings()[0];
  EXPECT_EQ(F.Kind, CheckFinding::OutOfBounds);
  EXPECT_EQ(F.Text, "k.kir:3:7: error: out-of-bounds read of 'x' in kernel 'k': element 8 (bytes "
                    "32..35) is outside its 8 elements (32 bytes), by thread (8, 0, 0) of block "
                    "(0, 0, 0)" +
                        SourceAndCaret);
  EXPECT_EQ(F.At.Line, 3u);
  EXPECT_EQ(F.Block, 0u);
  EXPECT_EQ(F.Thread, 8u);
}

TEST_F(KernelCheckerTest, OutOfBoundsGetsZeroedScratchAndNegativeOffsetsAreNamed) {
  auto S = site(habi::CheckStore, habi::CheckGlobal, 2, "y", 4);
  // Before y's start (inside x): a write there goes to scratch, not to x.
  Buf[7] = 5;
  void *To = store(S, 1, 2, &Buf[7], 9.0f);
  EXPECT_EQ(Buf[7], 5.0f);
  auto L = site(habi::CheckLoad, habi::CheckGlobal, 2, "y", 5);
  void *Again = load(L, 1, 2, &Buf[6]);
  float Got;
  std::memcpy(&Got, Again, 4);
  EXPECT_EQ(Got, 0.0f) << "an out-of-bounds load reads zeros";
  (void)To;
  EXPECT_THAT(headlines(),
              ElementsAre("out-of-bounds write of 'y' in kernel 'k': element -1 (bytes -4..-1) is "
                          "outside its 8 elements (32 bytes), by thread (2, 0, 0) of block (1, 0, "
                          "0)",
                          "out-of-bounds read of 'y' in kernel 'k': element -2 (bytes -8..-5) is "
                          "outside its 8 elements (32 bytes), by thread (2, 0, 0) of block (1, 0, "
                          "0)"));
}

TEST_F(KernelCheckerTest, UnknownExtentIsReportedNeverTrusted) {
  auto S = site(habi::CheckLoad, habi::CheckGlobal, 3, "z", 3);
  EXPECT_NE(load(S, 0, 1, &Buf[4]), &Buf[4]);
  EXPECT_THAT(headlines(), ElementsAre("read through 'z' in kernel 'k', whose buffer size is "
                                       "unknown (argument 4 was passed without an extent), by "
                                       "thread (1, 0, 0) of block (0, 0, 0)"));
  EXPECT_EQ(Ck->findings()[0].Kind, CheckFinding::UnknownExtent);
}

TEST_F(KernelCheckerTest, AccessesWithoutAParameterAreFoundByAddress) {
  float Other[4] = {};
  alignas(64) float Alloc[4] = {};
  Ck->addAllocation(addr(Alloc), sizeof(Alloc));
  auto S = site(habi::CheckLoad, habi::CheckGlobal, -1, "p", 3);
  EXPECT_EQ(load(S, 0, 0, &Buf[9]), &Buf[9]);     // y's buffer
  EXPECT_EQ(load(S, 0, 0, &Alloc[3]), &Alloc[3]); // an allocation of the runtime's
  EXPECT_TRUE(Ck->findings().empty());
  // Found in x, but reaching past its end.
  auto Wide = site(habi::CheckLoad, habi::CheckGlobal, -1, "p", 4, "", 0, 0, 8);
  EXPECT_NE(Ctx.CheckAccess(Ctx.CheckState, &Wide, 0, 0, &Buf[7], nullptr), &Buf[7]);
  EXPECT_NE(load(S, 0, 0, &Other[0]), &Other[0]);
  EXPECT_THAT(headlines(),
              ElementsAre("out-of-bounds read of 'x' in kernel 'k': element 7 (bytes 28..35) is "
                          "outside its 8 elements (32 bytes), by thread (0, 0, 0) of block (0, 0, "
                          "0)",
                          "read through 'p' in kernel 'k' is outside every buffer the launch knows "
                          "(arguments passed without an extent: 'z'), by thread (0, 0, 0) of "
                          "block (0, 0, 0)"));
}

TEST_F(KernelCheckerTest, SharedArraysAreCheckedAgainstTheirOwnSizes) {
  auto S = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
  auto T = site(habi::CheckStore, habi::CheckShared, -1, "t", 4, "", 32, 32);
  auto D = site(habi::CheckLoad, habi::CheckDynamicShared, -1, "d", 5, "", 64, 0);
  auto All = site(habi::CheckStore, habi::CheckShared, -1, "u", 6, "", 0, 0);
  store(S, 0, 0, Shared + 28, 1);
  store(T, 0, 0, Shared + 32, 1);
  store(All, 0, 0, Shared + 76, 1); // the whole 80 bytes
  EXPECT_TRUE(Ck->findings().empty());
  store(S, 0, 9, Shared + 32, 1); // 't'[0]
  load(D, 0, 4, Shared + 80);     // past 16 bytes
  store(All, 0, 0, Shared + 80, 1);
  EXPECT_THAT(headlines(),
              ElementsAre("out-of-bounds write of shared 's' in kernel 'k': element 8 (bytes "
                          "32..35) is outside its 8 elements (32 bytes), by thread (9, 0, 0) of "
                          "block (0, 0, 0)",
                          "out-of-bounds read of shared 'd' in kernel 'k': element 4 (bytes "
                          "16..19) is outside its 4 elements (16 bytes), by thread (4, 0, 0) of "
                          "block (0, 0, 0)",
                          "out-of-bounds write of shared 'u' in kernel 'k': element 20 (bytes "
                          "80..83) is outside its 20 elements (80 bytes), by thread (0, 0, 0) of "
                          "block (0, 0, 0)"));
}

TEST_F(KernelCheckerTest, WriteThenReadInSharedMemoryIsARaceWithBothPlaces) {
  auto W = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
  store(W, 0, 3, Shared + 12, 1);
  load(R, 0, 40, Shared + 12);
  ASSERT_EQ(Ck->findings().size(), 1u);
  const CheckFinding &F = Ck->findings()[0];
  EXPECT_EQ(F.Kind, CheckFinding::DataRace);
  EXPECT_EQ(F.Text,
            "k.kir:4:7: error: data race in kernel 'k': read of shared 's' element 3 by "
            "thread (40, 0, 0) of block (0, 0, 0)" +
                SourceAndCaret +
                "\n"
                "k.kir:3:7: note: conflicts with this write of 's' element 3 by thread (3, 0, "
                "0) of block (0, 0, 0); no sync_threads() orders them" +
                SourceAndCaret);
  EXPECT_EQ(F.Other.Line, 3u);
  EXPECT_EQ(F.OtherThread, 3u);
  EXPECT_EQ(F.Thread, 40u);
}

TEST_F(KernelCheckerTest, PositionsWithoutSourceTextHaveNoSourceLine) {
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 2);
  auto R = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 0);
  W.SourceLine = "";
  R.Col = 0;
  store(W, 0, 1, &Buf[0], 1);
  load(R, 0, 33, &Buf[0]);
  EXPECT_THAT(texts(), ElementsAre("k.kir: error: data race in kernel 'k': read of 'x' element 0 "
                                   "by thread (33, 0, 0) of block (0, 0, 0)\n"
                                   "k.kir:2:7: note: conflicts with this write of 'x' element 0 "
                                   "by thread (1, 0, 0) of block (0, 0, 0); no sync_threads() "
                                   "orders them"));
}

TEST_F(KernelCheckerTest, ReadThenWriteIsARaceAndSyncThreadsOrdersBoth) {
  auto W = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
  auto W2 = site(habi::CheckStore, habi::CheckShared, -1, "s", 5, "", 0, 32);
  store(W, 0, 1, Shared + 4, 1);
  syncThreads(0);
  load(R, 0, 1, Shared + 4);
  load(R, 0, 2, Shared + 4);
  syncThreads(0);
  store(W2, 0, 40, Shared + 4, 2); // ordered after both reads
  EXPECT_THAT(Ck->findings(), IsEmpty());
  load(R, 0, 50, Shared + 4); // no sync since thread 40's write
  load(R, 0, 40, Shared + 4);
  syncThreads(0);
  load(R, 0, 9, Shared + 4);
  store(W2, 0, 9, Shared + 4, 3); // the sync orders the other threads' reads before it
  EXPECT_THAT(headlines(),
              ElementsAre("data race in kernel 'k': read of shared 's' element 1 by thread (50, "
                          "0, 0) of block (0, 0, 0)"));
  load(R, 0, 20, Shared + 4);
  syncThreads(0);
  load(R, 0, 21, Shared + 4);
  load(R, 0, 22, Shared + 4);
  store(W, 0, 60, Shared + 4, 4); // read-then-write: conflicts with thread 21's read
  ASSERT_EQ(Ck->findings().size(), 2u);
  EXPECT_EQ(Ck->findings()[1].Headline, "data race in kernel 'k': write of shared 's' element 1 "
                                        "by thread (60, 0, 0) of block (0, 0, 0)");
  EXPECT_EQ(Ck->findings()[1].Note, "conflicts with this read of 's' element 1 by thread (21, 0, "
                                    "0) of block (0, 0, 0); no sync_threads() orders them");
}

TEST_F(KernelCheckerTest, SameValueWritesAreFilteredUnlessAsked) {
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto W2 = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 4);
  store(W, 0, 1, &Buf[2], 7);
  store(W2, 0, 40, &Buf[2], 7);
  EXPECT_THAT(Ck->findings(), IsEmpty());
  store(W2, 0, 2, &Buf[2], 8);
  EXPECT_THAT(headlines(), ElementsAre("data race in kernel 'k': write of 'x' element 2 by thread "
                                       "(2, 0, 0) of block (0, 0, 0)"));
  EXPECT_EQ(Ck->findings()[0].Note, "conflicts with this write of 'x' element 2 by thread (40, 0, "
                                    "0) of block (0, 0, 0); no sync_threads() orders them");

  make(100, /*SameValue=*/true);
  store(W, 0, 1, &Buf[3], 7);
  store(W2, 0, 40, &Buf[3], 7);
  EXPECT_THAT(headlines(), ElementsAre("data race in kernel 'k': write of 'x' element 3 by thread "
                                       "(40, 0, 0) of block (0, 0, 0)"));
}

TEST_F(KernelCheckerTest, AtomicsDoNotRaceWithAtomicsButDoWithPlainAccesses) {
  auto A = site(habi::CheckAtomic, habi::CheckShared, -1, "s", 3, "atomic_add", 0, 32);
  auto Init = site(habi::CheckStore, habi::CheckShared, -1, "s", 2, "", 0, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
  store(Init, 0, 0, Shared, 0);
  store(Init, 0, 0, Shared + 8, 0);
  syncThreads(0);
  for (uint32_t T = 0; T < 64; ++T)
    atomic(A, 0, T, Shared);
  EXPECT_THAT(Ck->findings(), IsEmpty());
  load(R, 0, 5, Shared);
  EXPECT_THAT(headlines(), ElementsAre("data race in kernel 'k': read of shared 's' element 0 by "
                                       "thread (5, 0, 0) of block (0, 0, 0)"));
  EXPECT_EQ(Ck->findings()[0].Note,
            "conflicts with this atomic_add of 's' element 0 by thread (63, 0, 0) of block (0, 0, "
            "0); no sync_threads() orders them");
  // A plain read, then an atomic of another thread.
  load(R, 0, 6, Shared + 8);
  atomic(A, 0, 50, Shared + 8);
  ASSERT_EQ(Ck->findings().size(), 2u);
  EXPECT_EQ(Ck->findings()[1].Headline, "data race in kernel 'k': atomic_add of shared 's' "
                                        "element 2 by thread (50, 0, 0) of block (0, 0, 0)");
}

TEST_F(KernelCheckerTest, SyncWarpOrdersItsOwnWarpOnly) {
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto R = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4);
  store(W, 0, 1, &Buf[0], 1);
  syncWarp(0, 0);
  load(R, 0, 31, &Buf[0]); // same warp: ordered
  EXPECT_THAT(Ck->findings(), IsEmpty());
  load(R, 0, 32, &Buf[0]); // warp 1: not
  EXPECT_THAT(headlines(), ElementsAre("data race in kernel 'k': read of 'x' element 0 by thread "
                                       "(32, 0, 0) of block (0, 0, 0)"));
  // Another warp's sync_warp does not order warp 0; NoWarp orders every warp.
  auto W2 = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 6);
  auto R2 = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 7);
  store(W2, 0, 2, &Buf[1], 1);
  syncWarp(0, 1);
  load(R2, 0, 3, &Buf[1]);
  ASSERT_EQ(Ck->findings().size(), 2u);
  EXPECT_EQ(Ck->findings()[1].Note, "conflicts with this write of 'x' element 1 by thread (2, 0, "
                                    "0) of block (0, 0, 0); neither a sync_threads() nor a "
                                    "sync_warp() orders them");
  store(W2, 0, 2, &Buf[2], 1);
  syncWarp(0, habi::NoWarp);
  load(R2, 0, 3, &Buf[2]);
  EXPECT_EQ(Ck->findings().size(), 2u);
}

TEST_F(KernelCheckerTest, BlocksRaceInGlobalMemoryUntilAGridSync) {
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto R = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4);
  store(W, 0, 0, &Buf[0], 1);
  Ck->enterBlock(1, Shared, true);
  load(R, 1, 0, &Buf[0]);
  EXPECT_THAT(headlines(), ElementsAre("data race in kernel 'k': read of 'x' element 0 by thread "
                                       "(0, 0, 0) of block (1, 0, 0)"));
  EXPECT_EQ(Ck->findings()[0].Note, "conflicts with this write of 'x' element 0 by thread (0, 0, "
                                    "0) of block (0, 0, 0); no grid_sync() orders them");
  EXPECT_EQ(Ck->findings()[0].OtherBlock, 0u);
  // A grid_sync (a new phase) orders everything before it.
  store(W, 1, 0, &Buf[1], 1);
  Ck->beginPhase();
  Ck->enterBlock(0, Shared, false);
  load(R, 0, 5, &Buf[1]);
  EXPECT_EQ(Ck->findings().size(), 1u);
}

TEST_F(KernelCheckerTest, ANewBlockStartsWithFreshSharedMemory) {
  auto W = site(habi::CheckStore, habi::CheckShared, -1, "t", 3, "", 32, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "t", 4, "", 32, 32);
  store(W, 0, 5, Shared + 52, 1);
  syncThreads(0);
  load(R, 0, 6, Shared + 52);
  EXPECT_THAT(Ck->findings(), IsEmpty());
  // Block 1 reuses the memory: block 0's write neither races nor initialises.
  Ck->enterBlock(1, Shared, true);
  load(R, 1, 5, Shared + 52);
  EXPECT_THAT(headlines(),
              ElementsAre("read of uninitialised shared memory in kernel 'k': 't' element 5 by "
                          "thread (5, 0, 0) of block (1, 0, 0); no thread of the block has "
                          "written it"));
  EXPECT_EQ(Ck->findings()[0].Kind, CheckFinding::UninitialisedRead);
  // A cooperative block resumed after a grid_sync keeps its own writes.
  store(W, 1, 7, Shared + 56, 1);
  Ck->beginPhase();
  Ck->enterBlock(1, Shared, false);
  load(R, 1, 8, Shared + 56);
  EXPECT_EQ(Ck->findings().size(), 1u);
}

TEST_F(KernelCheckerTest, UninitialisedReadsIncludeAtomics) {
  auto A = site(habi::CheckAtomic, habi::CheckDynamicShared, -1, "d", 3, "atomic_max", 64, 0);
  atomic(A, 0, 2, Shared + 64 + 4);
  EXPECT_THAT(headlines(),
              ElementsAre("atomic_max of uninitialised shared memory in kernel 'k': 'd' element 1 "
                          "by thread (2, 0, 0) of block (0, 0, 0); no thread of the block has "
                          "written it"));
  // Global memory is not checked for initialisation.
  auto G = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4);
  load(G, 0, 2, &Buf[1]);
  EXPECT_EQ(Ck->findings().size(), 1u);
}

TEST_F(KernelCheckerTest, WhatTheCodeFindsItselfIsRendered) {
  Cfg.Block.X = 200;
  make();
  auto Local = site(habi::CheckLocalIndex, habi::CheckNotMemory, -1, "a", 3, "local array");
  auto Const = site(habi::CheckLocalIndex, habi::CheckNotMemory, -1, "c", 4, "constant array");
  auto Div = site(habi::CheckDivByZero, habi::CheckNotMemory, -1, "", 5, "/");
  auto Rem = site(habi::CheckDivOverflow, habi::CheckNotMemory, -1, "", 6, "%");
  auto Shl = site(habi::CheckShiftAmount, habi::CheckNotMemory, -1, "x", 7, "<<");
  auto Shr = site(habi::CheckShiftAmount, habi::CheckNotMemory, -1, "", 8, ">>");
  auto Lane = site(habi::CheckWarpLane, habi::CheckNotMemory, -1, "", 9, "shfl_down()");
  auto R = [&](const habi::CheckSite &S, uint32_t Thread, int64_t A, uint64_t B) {
    Ctx.CheckReport(Ctx.CheckState, &S, 0, Thread, uint64_t(A), B);
  };
  R(Local, 1, 7, 4);
  R(Const, 1, -1, 16);
  R(Div, 2, 5, 0);
  R(Rem, 3, INT32_MIN, uint64_t(-1));
  R(Shl, 4, 33, 32);
  R(Shr, 4, -1, 64);
  R(Lane, 195, 24, 8);
  EXPECT_THAT(
      headlines(),
      ElementsAre("index 7 is out of range of local array 'a' (4 elements) in kernel 'k', in "
                  "thread (1, 0, 0) of block (0, 0, 0)",
                  "index -1 is out of range of constant array 'c' (16 elements) in kernel 'k', "
                  "in thread (1, 0, 0) of block (0, 0, 0)",
                  "integer division by zero in kernel 'k': 5 / 0 in thread (2, 0, 0) of block "
                  "(0, 0, 0)",
                  "integer overflow in kernel 'k': -2147483648 % -1 does not fit in 32 bits in "
                  "thread (3, 0, 0) of block (0, 0, 0)",
                  "shift amount 33 of 'x << 33' is not below the width (32 bits) in kernel 'k' "
                  "in thread (4, 0, 0) of block (0, 0, 0)",
                  "shift amount -1 of '>> -1' is negative in kernel 'k' in thread (4, 0, 0) of "
                  "block (0, 0, 0)",
                  "shfl_down() in kernel 'k' reads lane 24 of warp 6 of block (0, 0, 0), which "
                  "has 8 lanes (the block has 200 threads), in thread (195, 0, 0)"));
  std::vector<CheckFinding::KindType> Kinds;
  for (const CheckFinding &F : Ck->findings())
    Kinds.push_back(F.Kind);
  EXPECT_THAT(Kinds, ElementsAre(CheckFinding::LocalIndex, CheckFinding::LocalIndex,
                                 CheckFinding::DivisionByZero, CheckFinding::DivisionOverflow,
                                 CheckFinding::ShiftAmount, CheckFinding::ShiftAmount,
                                 CheckFinding::WarpLane));
}

TEST_F(KernelCheckerTest, ThreadsAndBlocksAreThreeDimensional) {
  Cfg.Block = {8, 4, 2};
  Cfg.Grid = {3, 2, 2};
  make();
  auto Div = site(habi::CheckDivByZero, habi::CheckNotMemory, -1, "", 5, "/");
  Ctx.CheckReport(Ctx.CheckState, &Div, 1 + 3 * 1 + 6 * 1, 5 + 8 * 1 + 32 * 1, 1, 0);
  EXPECT_THAT(headlines(), ElementsAre("integer division by zero in kernel 'k': 1 / 0 in thread "
                                       "(5, 1, 1) of block (1, 1, 1)"));
}

TEST_F(KernelCheckerTest, FindingsAreDeduplicatedByPositionAndLimited) {
  make(/*MaxFindings=*/2);
  auto S = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 3);
  for (uint32_t T = 8; T < 40; ++T)
    load(S, 0, T, &Buf[8 + T % 8]);
  EXPECT_EQ(Ck->findings().size(), 1u) << "one site: one finding";
  EXPECT_FALSE(Ck->limitReached());
  auto S2 = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4);
  auto S3 = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 5);
  load(S2, 0, 1, &Buf[8]);
  EXPECT_TRUE(Ck->limitReached());
  load(S3, 0, 1, &Buf[8]);
  EXPECT_EQ(Ck->findings().size(), 2u);
  EXPECT_EQ(Ck->findings()[1].At.Line, 4u);
}

TEST_F(KernelCheckerTest, TheLimitLeavesTheKernelByAJump) {
  make(/*MaxFindings=*/1);
  auto S = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 3);
  int After = 0;
  bool Finished = Ck->call([&] {
    load(S, 0, 0, &Buf[0]);
    ++After;
    load(S, 0, 0, &Buf[8]); // the first finding: the limit
    ++After;
  });
  EXPECT_FALSE(Finished);
  EXPECT_EQ(After, 1);
  EXPECT_TRUE(Ck->call([&] { ++After; })) << "a call that finds nothing returns";
  llvm::Error E = Ck->takeError();
  ASSERT_TRUE(E.isA<KernelCheckError>());
  EXPECT_EQ(peekErrorKind(E), ErrorKind::Check);
  llvm::handleAllErrors(std::move(E), [&](const KernelCheckError &KE) {
    EXPECT_EQ(KE.getKernel(), "k");
    ASSERT_EQ(KE.getFindings().size(), 1u);
    EXPECT_EQ(KE.message(), KE.getFindings()[0].Text);
  });
}

TEST_F(KernelCheckerTest, GPULimitsAreFindingsWithoutAPosition) {
  Cfg.DynamicSharedBytes = 60000;
  auto Big = std::make_unique<KernelChecker>(Info, Cfg, 122880, 10, false);
  EXPECT_FALSE(Big->checkGPULimits(80));
  ASSERT_EQ(Big->findings().size(), 2u);
  EXPECT_EQ(Big->findings()[0].Text, "error: kernel 'k' has 122880 bytes of static shared "
                                     "memory; a GPU allows 49152 (48 KiB) per block");
  EXPECT_EQ(Big->findings()[1].Text,
            "error: kernel 'k' uses 182880 bytes of shared memory per block (122880 static, "
            "60000 dynamic); sm_80 allows 166912 (163 KiB) per block");
  EXPECT_EQ(Big->findings()[0].Kind, CheckFinding::GPULimit);
  // At the limit: fine; the arch's own maximum.
  Cfg.DynamicSharedBytes = (64u << 10) - 49152;
  auto AtLimit = std::make_unique<KernelChecker>(Info, Cfg, 49152, 10, false);
  EXPECT_FALSE(AtLimit->checkGPULimits(75));
  EXPECT_THAT(AtLimit->findings(), IsEmpty());
  Cfg.DynamicSharedBytes += 1;
  auto Over = std::make_unique<KernelChecker>(Info, Cfg, 49152, 1, false);
  EXPECT_TRUE(Over->checkGPULimits(75)) << "the limit reached: the launch must not run";
  EXPECT_THAT(Over->findings()[0].Text,
              ::testing::HasSubstr("; sm_75 allows 65536 (64 KiB) per block"));
}

TEST_F(KernelCheckerTest, TheRenderedTextIsDeterministic) {
  auto Run = [&] {
    make(10);
    auto W = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
    auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
    auto X = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 5);
    for (uint32_t T = 0; T < 64; ++T) {
      store(W, 0, T, Shared + 4 * (T % 8), float(T));
      load(R, 0, T, Shared + 4 * ((T + 1) % 8));
      load(X, 0, T, &Buf[T % 12]);
    }
    return texts();
  };
  std::vector<std::string> First = Run();
  EXPECT_FALSE(First.empty());
  EXPECT_EQ(Run(), First);
}

TEST_F(KernelCheckerTest, ShadowMemoryIsMadeOnlyForTouchedPages) {
  EXPECT_EQ(Ck->shadowBytes(), 0u);
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  store(W, 0, 0, &Buf[0], 1);
  EXPECT_GT(Ck->shadowBytes(), 0u);
  EXPECT_LE(Ck->shadowBytes(), 2 * 4096 * sizeof(KernelChecker::ShadowByte));
}

TEST_F(KernelCheckerTest, ShadowIsReusedAcrossLaunchesWithoutStaleFindings) {
  ShadowCache Cache;
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto R = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4);
  auto Launch = [&] {
    Ck = std::make_unique<KernelChecker>(Info, Cfg, 64, 100, false, &Cache);
    Ck->setPointerArg(1, addr(&Buf[0]), 32);
    Ck->bind(Ctx);
    Ck->beginPhase();
    Ck->enterBlock(0, Shared, true);
  };
  // Launch 1: thread 0 writes x[0], thread 1 reads it: a race.
  Launch();
  store(W, 0, 0, &Buf[0], 1);
  load(R, 0, 1, &Buf[0]);
  ASSERT_EQ(Ck->findings().size(), 1u);
  EXPECT_EQ(Ck->findings()[0].Kind, CheckFinding::DataRace);
  uint64_t Bytes = Cache.bytes();
  EXPECT_GT(Bytes, 0u);
  // Launch 2 keeps the shadow; launch 1's records are ordered before it.
  Launch();
  EXPECT_EQ(Cache.bytes(), Bytes);
  store(W, 0, 2, &Buf[0], 2);
  load(R, 1, 3, &Buf[0]);
  EXPECT_EQ(Ck->findings().size(), 1u); // block 1 against thread 2's write of this launch
  EXPECT_EQ(Ck->findings()[0].OtherThread, 2u);
  EXPECT_EQ(Ck->findings()[0].OtherBlock, 0u);
}

TEST_F(KernelCheckerTest, AnEarlierLaunchDoesNotInitialiseSharedMemory) {
  ShadowCache Cache;
  auto W = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
  for (bool Coop : {false, true}) {
    for (int Launch = 0; Launch < 2; ++Launch) {
      Ck = std::make_unique<KernelChecker>(Info, Cfg, 64, 100, false, &Cache);
      Ck->bind(Ctx);
      Ck->beginPhase();
      Ck->enterBlock(0, Shared, true);
      if (Coop) { // a cooperative block resumed in a later phase
        Ck->beginPhase();
        Ck->enterBlock(0, Shared, false);
      }
      if (Launch == 0) {
        store(W, 0, 0, Shared + 4, 1);
        EXPECT_THAT(Ck->findings(), IsEmpty());
      } else {
        load(R, 0, 1, Shared + 4);
        EXPECT_THAT(headlines(),
                    ElementsAre("read of uninitialised shared memory in kernel 'k': 's' element "
                                "1 by thread (1, 0, 0) of block (0, 0, 0); no thread of the "
                                "block has written it"));
      }
    }
  }
}

TEST_F(KernelCheckerTest, TheShadowIsDroppedPastItsCap) {
  auto W = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto Touch = [&](ShadowCache &Cache) {
    Ck = std::make_unique<KernelChecker>(Info, Cfg, 64, 100, false, &Cache);
    Ck->setPointerArg(1, addr(&Buf[0]), 32);
    Ck->bind(Ctx);
    Ck->beginPhase();
    Ck->enterBlock(0, Shared, true);
    uint64_t Before = Cache.bytes();
    store(W, 0, 0, &Buf[0], 1);
    return Before;
  };
  ShadowCache Small(sizeof(ShadowPage) - 1), Large(sizeof(ShadowPage));
  EXPECT_EQ(Touch(Small), 0u);
  EXPECT_EQ(Small.bytes(), sizeof(ShadowPage));
  EXPECT_EQ(Touch(Small), 0u); // over the cap when the launch started: dropped
  EXPECT_EQ(Touch(Large), 0u);
  EXPECT_EQ(Touch(Large), sizeof(ShadowPage)); // at the cap: kept
  EXPECT_EQ(ShadowCache::DefaultCapBytes, uint64_t(1) << 30);
}

TEST_F(KernelCheckerTest, SmallAndUnalignedAccessesKeepPerByteRecords) {
  auto W4 = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 3);
  auto R1 = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 4, "", 0, 0, 1);
  auto W1 = site(habi::CheckStore, habi::CheckGlobal, 1, "x", 5, "", 0, 0, 1);
  auto R4 = site(habi::CheckLoad, habi::CheckGlobal, 1, "x", 6);
  auto *Bytes = reinterpret_cast<char *>(&Buf[0]);
  store(W4, 0, 0, &Buf[0], 1);
  syncThreads(0);
  Ctx.CheckAccess(Ctx.CheckState, &R1, 0, 1, Bytes + 2, nullptr); // splits the granule
  char V = 7;
  Ctx.CheckAccess(Ctx.CheckState, &W1, 0, 2, Bytes + 3, &V); // not byte 2: no race
  EXPECT_THAT(Ck->findings(), IsEmpty());
  // A 4-byte read of the granule meets thread 2's write of byte 3 only.
  load(R4, 0, 3, &Buf[0]);
  ASSERT_EQ(Ck->findings().size(), 1u);
  EXPECT_EQ(Ck->findings()[0].OtherThread, 2u);
  EXPECT_EQ(Ck->findings()[0].Other.Line, 5u);
  // An unaligned 4-byte read across two granules meets thread 0's write
  // (ordered) and thread 2's (not): the race with line 5 is found again
  // only with a new position, so look at a new checker's.
  make();
  store(W4, 0, 0, &Buf[1], 1);
  Ctx.CheckAccess(Ctx.CheckState, &W1, 0, 2, Bytes + 2, &V);
  syncThreads(0);
  load(R4, 0, 3, Bytes + 2); // bytes 2..5: ordered after both writes
  EXPECT_THAT(Ck->findings(), IsEmpty());
  store(W4, 0, 4, Bytes + 4, 9.0f); // bytes 4..7: races with thread 3's read of 4..5
  ASSERT_EQ(Ck->findings().size(), 1u);
  EXPECT_EQ(Ck->findings()[0].OtherThread, 3u);
  // A whole-granule write makes it uniform again: a later 4-byte read by
  // another thread after a sync is clean.
  syncThreads(0);
  load(R4, 0, 5, Bytes + 4);
  EXPECT_EQ(Ck->findings().size(), 1u);
}

TEST_F(KernelCheckerTest, AClockWrapForgetsRecordsWithoutFalseFindings) {
  ShadowCache Cache;
  Ck = std::make_unique<KernelChecker>(Info, Cfg, 64, 100, false, &Cache);
  Ck->bind(Ctx);
  Ck->beginPhase();
  Ck->enterBlock(0, Shared, true);
  auto W = site(habi::CheckStore, habi::CheckShared, -1, "s", 3, "", 0, 32);
  auto R = site(habi::CheckLoad, habi::CheckShared, -1, "s", 4, "", 0, 32);
  store(W, 0, 0, Shared + 4, 1);
  Cache.Clock = UINT32_MAX; // the next event wraps the 32-bit stamps
  syncThreads(0);
  EXPECT_LT(Cache.Clock, 16u);
  load(R, 0, 1, Shared + 4); // its write was forgotten: not reported
  EXPECT_THAT(Ck->findings(), IsEmpty());
  Ck->enterBlock(1, Shared, true); // a fresh block is checked again
  load(R, 1, 1, Shared + 4);
  EXPECT_EQ(Ck->findings().size(), 1u);
}

//===----------------------------------------------------------------------===//
// Checked launches through HostRuntime
//===----------------------------------------------------------------------===//

// A hand-made module of checked code, as the host target's checked twin
// emits it: kernel 'k'(x: ptr<f32>) whose every thread loads x[block *
// blockDim.x + thread] through CheckAccess; 'f', which faults after a
// checked load; 'big', with 120 KiB of static shared memory, which faults
// if it ever runs.
constexpr const char *CheckedIR = R"IR(
@mod = private constant [6 x i8] c"k.kir\00"
@src = private constant [12 x i8] c"  v = x[i];\00"
@kn = private constant [2 x i8] c"k\00"
@what = private constant [5 x i8] c"load\00"
@mem = private constant [2 x i8] c"x\00"
@site = private constant { ptr, i32, i32, ptr, ptr, ptr, i32, i32, i32, i32, i32, ptr, i64, i64 } { ptr @mod, i32 3, i32 7, ptr @src, ptr @kn, ptr @what, i32 0, i32 0, i32 4, i32 4, i32 0, ptr @mem, i64 0, i64 0 }
@__gridjit_desc_k = constant [7 x i64] [i64 3, i64 0, i64 0, i64 0, i64 0, i64 1, i64 80]
@__gridjit_desc_f = constant [7 x i64] [i64 3, i64 0, i64 0, i64 0, i64 0, i64 1, i64 80]
@__gridjit_desc_big = constant [7 x i64] [i64 3, i64 0, i64 0, i64 122880, i64 0, i64 1, i64 80]
@__gridjit_desc_r = constant [7 x i64] [i64 3, i64 0, i64 0, i64 0, i64 0, i64 1, i64 80]
@__gridjit_desc_g = constant [7 x i64] [i64 3, i64 0, i64 0, i64 0, i64 1, i64 1, i64 80]
@whatst = private constant [6 x i8] c"store\00"
@wsite = private constant { ptr, i32, i32, ptr, ptr, ptr, i32, i32, i32, i32, i32, ptr, i64, i64 } { ptr @mod, i32 4, i32 7, ptr @src, ptr @kn, ptr @whatst, i32 1, i32 0, i32 4, i32 4, i32 0, ptr @mem, i64 0, i64 0 }

; 'r': thread 0 of every block writes x[0] = its block (a race between blocks).
define i32 @__gridjit_entry_r(ptr %args, ptr %ctx, i64 %first, i64 %end) {
entry:
  %xp = load ptr, ptr %args
  %x = load ptr, ptr %xp
  %stp = getelementptr i8, ptr %ctx, i64 96
  %st = load ptr, ptr %stp
  %fnp = getelementptr i8, ptr %ctx, i64 104
  %fn = load ptr, ptr %fnp
  %val = alloca float
  br label %loop
loop:
  %b = phi i64 [ %first, %entry ], [ %b1, %loop ]
  %bf = uitofp i64 %b to float
  store float %bf, ptr %val
  %to = call ptr %fn(ptr %st, ptr @wsite, i64 %b, i32 0, ptr %x, ptr %val)
  store float %bf, ptr %to
  %b1 = add i64 %b, 1
  %more = icmp ult i64 %b1, %end
  br i1 %more, label %loop, label %done
done:
  ret i32 0
}

; 'g' (cooperative): thread 0 of block b writes x[b]; grid_sync(); it
; reads x[(b + 1) % gridDim.x], which the next block wrote.
define i32 @__gridjit_entry_g(ptr %args, ptr %ctx, i64 %first, i64 %end) {
entry:
  %xp = load ptr, ptr %args
  %x = load ptr, ptr %xp
  %stp = getelementptr i8, ptr %ctx, i64 96
  %st = load ptr, ptr %stp
  %fnp = getelementptr i8, ptr %ctx, i64 104
  %fn = load ptr, ptr %fnp
  %rp = getelementptr i8, ptr %ctx, i64 24
  %resume = load i32, ptr %rp
  %gx = load i32, ptr %ctx
  %gx64 = zext i32 %gx to i64
  %val = alloca float
  %bf = uitofp i64 %first to float
  %start = icmp eq i32 %resume, 0
  br i1 %start, label %phase0, label %phase1
phase0:
  %a0 = getelementptr float, ptr %x, i64 %first
  store float %bf, ptr %val
  %to0 = call ptr %fn(ptr %st, ptr @wsite, i64 %first, i32 0, ptr %a0, ptr %val)
  store float %bf, ptr %to0
  ret i32 1
phase1:
  %n = add i64 %first, 1
  %j = urem i64 %n, %gx64
  %a1 = getelementptr float, ptr %x, i64 %j
  %to1 = call ptr %fn(ptr %st, ptr @site, i64 %first, i32 0, ptr %a1, ptr null)
  %v = load volatile float, ptr %to1
  ret i32 0
}

define i32 @__gridjit_entry_k(ptr %args, ptr %ctx, i64 %first, i64 %end) {
entry:
  %xp = load ptr, ptr %args
  %x = load ptr, ptr %xp
  %bdp = getelementptr i8, ptr %ctx, i64 12
  %bd = load i32, ptr %bdp
  %bd64 = zext i32 %bd to i64
  %stp = getelementptr i8, ptr %ctx, i64 96
  %st = load ptr, ptr %stp
  %fnp = getelementptr i8, ptr %ctx, i64 104
  %fn = load ptr, ptr %fnp
  br label %blocks
blocks:
  %b = phi i64 [ %first, %entry ], [ %b1, %next ]
  %more = icmp ult i64 %b, %end
  br i1 %more, label %threads, label %done
threads:
  %t = phi i64 [ 0, %blocks ], [ %t1, %threads ]
  %base = mul i64 %b, %bd64
  %i = add i64 %base, %t
  %addr = getelementptr float, ptr %x, i64 %i
  %t32 = trunc i64 %t to i32
  %to = call ptr %fn(ptr %st, ptr @site, i64 %b, i32 %t32, ptr %addr, ptr null)
  %v = load volatile float, ptr %to
  %t1 = add i64 %t, 1
  %tmore = icmp ult i64 %t1, %bd64
  br i1 %tmore, label %threads, label %next
next:
  %b1 = add i64 %b, 1
  br label %blocks
done:
  ret i32 0
}

define i32 @__gridjit_entry_f(ptr %args, ptr %ctx, i64 %first, i64 %end) {
  %r = call i32 @__gridjit_entry_k(ptr %args, ptr %ctx, i64 %first, i64 %end)
  store volatile i32 1, ptr inttoptr (i64 16 to ptr)
  ret i32 0
}

define i32 @__gridjit_entry_big(ptr %args, ptr %ctx, i64 %first, i64 %end) {
  store volatile i32 1, ptr inttoptr (i64 16 to ptr)
  ret i32 0
}
)IR";

/// The module above as a host artifact.
llvm::Expected<Artifact> checkedArtifact() {
  llvm::InitializeNativeTarget();
  llvm::InitializeNativeTargetAsmPrinter();
  llvm::LLVMContext Ctx;
  llvm::SMDiagnostic Diag;
  auto M = llvm::parseAssemblyString(CheckedIR, Diag, Ctx);
  if (!M)
    return llvm::createStringError("bad test IR: " + Diag.getMessage().str());
  std::string Triple = llvm::sys::getProcessTriple(), Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!T)
    return llvm::createStringError(Err);
  std::unique_ptr<llvm::TargetMachine> TM(
      T->createTargetMachine(Triple, "generic", "", {}, llvm::Reloc::PIC_));
  M->setTargetTriple(Triple);
  M->setDataLayout(TM->createDataLayout());
  llvm::SmallVector<char, 0> Obj;
  llvm::raw_svector_ostream OS(Obj);
  llvm::legacy::PassManager PM;
  if (TM->addPassesToEmitFile(PM, OS, nullptr, llvm::CodeGenFileType::ObjectFile))
    return llvm::createStringError("no object emission");
  PM.run(*M);
  Artifact A;
  A.Kind = TargetKind::Host;
  A.Payload.assign(Obj.begin(), Obj.end());
  for (const char *Name : {"k", "f", "big", "r", "g"}) {
    KernelInfo K;
    K.Name = Name;
    K.Params = {{"x", Type::getPointer(ScalarKind::F32), 8, 8}};
    A.Kernels.push_back(K);
  }
  A.Kernels[2].StaticSharedBytes = 122880;
  A.Kernels[4].Cooperative = true;
  return A;
}

struct CheckedLaunchTest : ::testing::Test {
  std::unique_ptr<HostRuntime> RT;
  std::unique_ptr<LoadedModule> M;
  void SetUp() override { start(1); }
  void start(unsigned Threads) {
    HostRuntimeOptions O;
    O.NumThreads = Threads;
    auto R = HostRuntime::create(O);
    ASSERT_TRUE(bool(R)) << llvm::toString(R.takeError());
    RT = std::move(*R);
    auto A = checkedArtifact();
    ASSERT_TRUE(bool(A)) << llvm::toString(A.takeError());
    auto L = RT->load(*A);
    ASSERT_TRUE(bool(L)) << llvm::toString(L.takeError());
    M = std::move(*L);
  }
  /// The launch's error text ("" for success) and kind.
  std::pair<std::string, ErrorKind> launch(const char *Kernel, uint32_t Grid, uint32_t Block,
                                           KernelArg Arg, const LaunchOptions &O = {}) {
    LaunchConfig C;
    C.Grid.X = Grid;
    C.Block.X = Block;
    llvm::Error E = RT->launch(*M, Kernel, C, {Arg}, O);
    ErrorKind K = peekErrorKind(E);
    return {errorMessage(std::move(E)), K};
  }
};

const std::string ThreadEight =
    "k.kir:3:7: error: out-of-bounds read of 'x' in kernel 'k': element 8 (bytes 32..35) is "
    "outside its 8 elements (32 bytes), by thread (8, 0, 0) of block (0, 0, 0)" +
    SourceAndCaret;

TEST_F(CheckedLaunchTest, ABufferOfTheRuntimeGivesItsExtent) {
  auto B = RT->allocate(32);
  ASSERT_TRUE(bool(B));
  EXPECT_EQ(launch("k", 1, 8, KernelArg::buffer(*B)).first, "");
  auto [Text, Kind] = launch("k", 1, 16, KernelArg::buffer(*B));
  EXPECT_EQ(Text, ThreadEight);
  EXPECT_EQ(Kind, ErrorKind::Check);
  // Into the buffer: to its end.
  auto [Inner, K2] = launch("k", 1, 8, KernelArg::devicePointer(B->getAddress() + 16));
  EXPECT_THAT(Inner, ::testing::HasSubstr("element 4 (bytes 16..19) is outside its 4 elements "
                                          "(16 bytes), by thread (4, 0, 0)"));
}

TEST_F(CheckedLaunchTest, AnExplicitExtentAndAnUnknownOne) {
  float X[16] = {};
  EXPECT_EQ(launch("k", 1, 16, KernelArg::pointer(X).withExtent(32)).first, ThreadEight);
  EXPECT_EQ(launch("k", 1, 16, KernelArg::pointer(X).withExtent(64)).first, "");
  EXPECT_EQ(launch("k", 1, 1, KernelArg::pointer(X)).first,
            "k.kir:3:7: error: read through 'x' in kernel 'k', whose buffer size is unknown "
            "(argument 1 was passed without an extent), by thread (0, 0, 0) of block (0, 0, 0)" +
                SourceAndCaret);
}

TEST_F(CheckedLaunchTest, BlocksRunInOrderWhateverTheWorkers) {
  float X[16] = {};
  LaunchOptions O;
  O.CheckMaxFindings = 5;
  // One site: one finding, the first in block order (block 1's thread 0
  // is the first past the end: blocks of 8, x of 8 elements).
  auto [One, K1] = launch("k", 4, 8, KernelArg::pointer(X).withExtent(32), O);
  start(4);
  auto [Four, K4] = launch("k", 4, 8, KernelArg::pointer(X).withExtent(32), O);
  EXPECT_EQ(One, Four);
  EXPECT_THAT(One, ::testing::HasSubstr("by thread (0, 0, 0) of block (1, 0, 0)"));
  LaunchStats S;
  O.Stats = &S;
  launch("k", 4, 8, KernelArg::pointer(X).withExtent(64), O);
  EXPECT_EQ(S.Workers, 1u);
}

TEST_F(CheckedLaunchTest, TheStopAndFaultCatchingCompose) {
  float X[16] = {};
  // Stopped at its first finding, inside runCatchingFaults' scope ...
  EXPECT_EQ(launch("k", 1, 16, KernelArg::pointer(X).withExtent(32)).first, ThreadEight);
  // ... which is left clean: a checked kernel's fault is still caught.
  auto [Text, Kind] = launch("f", 1, 4, KernelArg::pointer(X).withExtent(32));
  EXPECT_EQ(Kind, ErrorKind::Fault) << Text;
  EXPECT_THAT(Text, ::testing::HasSubstr("kernel 'f' accessed memory outside its buffers"));
  // A fault after findings: the fault's error first, then the findings.
  LaunchOptions O;
  O.CheckMaxFindings = 2;
  auto [Both, BothKind] = launch("f", 1, 16, KernelArg::pointer(X).withExtent(32), O);
  EXPECT_EQ(BothKind, ErrorKind::Fault);
  EXPECT_THAT(Both, ::testing::StartsWith("kernel 'f' accessed memory outside its buffers"));
  EXPECT_THAT(Both, ::testing::EndsWith("\nk.kir:3:7: error: out-of-bounds read of 'x' in kernel "
                                        "'f': element 8 (bytes 32..35) is outside its 8 elements "
                                        "(32 bytes), by thread (8, 0, 0) of block (0, 0, 0)" +
                                        SourceAndCaret));
  EXPECT_EQ(launch("k", 1, 8, KernelArg::pointer(X).withExtent(32)).first, "");
}

sigjmp_buf OutsideJump;
/// How often the test reached its faulting store, and at which of those
/// times the handler of its own saw the fault (0: never).
volatile sig_atomic_t StoreAttempts = 0, PassedOnAt = 0, PassedOn = 0;
/// The address of the fault passed on.
void *volatile PassedOnAddress = nullptr;
extern "C" void outsideAction(int, siginfo_t *Info, void *) {
  PassedOnAt = StoreAttempts;
  PassedOn = PassedOn + 1;
  PassedOnAddress = Info->si_addr;
  siglongjmp(OutsideJump, 1);
}
constexpr const char *StopChildVar = "GRIDJIT_KERNEL_CHECKER_CHILD";

// The finding limit leaves the kernel from inside runCatchingFaults' scope:
// the scope must be cleared, or a fault outside any kernel afterwards would
// be taken for the kernel's and jump into a dead frame. In a child process:
// it installs a SIGSEGV handler of its own before the runtime's.
TEST_F(CheckedLaunchTest, AFaultAfterAStopIsNotTheKernels) {
  ChildRun R = runChildTest("CheckedLaunchTest.DISABLED_AFaultAfterAStopChild",
                            {std::string(StopChildVar) + "=1"}, 300);
  EXPECT_EQ(R.ExitCode, 0) << R.Error << "\nchild output:\n" << R.Output;
  EXPECT_THAT(R.Output, ::testing::HasSubstr(ChildPassedLine));
}

TEST_F(CheckedLaunchTest, DISABLED_AFaultAfterAStopChild) {
  if (!std::getenv(StopChildVar))
    GTEST_SKIP() << "runs in a child process of its parent test";
  struct sigaction A;
  std::memset(&A, 0, sizeof(A));
  A.sa_sigaction = outsideAction;
  A.sa_flags = SA_SIGINFO | SA_NODEFER;
  sigemptyset(&A.sa_mask);
  ASSERT_EQ(sigaction(SIGSEGV, &A, nullptr), 0);
  float X[16] = {};
  ASSERT_EQ(launch("k", 1, 16, KernelArg::pointer(X).withExtent(32)).first, ThreadEight);
  if (sigsetjmp(OutsideJump, 1) == 0) {
    StoreAttempts = StoreAttempts + 1;
    *reinterpret_cast<volatile int *>(uintptr_t(16)) = 1; // not in a kernel
  }
  // Passed on, the first time, to the handler installed before gridjit's
  // (with a stale scope, gridjit's handler would have jumped back into the
  // finished launch's frames).
  EXPECT_EQ(PassedOnAt, 1);
  EXPECT_EQ(StoreAttempts, 1);
  EXPECT_EQ(PassedOn, 1);
  EXPECT_EQ(PassedOnAddress, reinterpret_cast<void *>(uintptr_t(16)));
}

TEST_F(CheckedLaunchTest, BlocksRaceUnlessAGridSyncOrdersThem) {
  float X[16] = {};
  auto [Text, Kind] = launch("r", 2, 1, KernelArg::pointer(X).withExtent(64));
  EXPECT_EQ(Kind, ErrorKind::Check);
  EXPECT_EQ(Text,
            "k.kir:4:7: error: data race in kernel 'r': write of 'x' element 0 by thread (0, "
            "0, 0) of block (1, 0, 0)" +
                SourceAndCaret +
                "\n"
                "k.kir:4:7: note: conflicts with this write of 'x' element 0 by thread (0, 0, 0) "
                "of block (0, 0, 0); no grid_sync() orders them" +
                SourceAndCaret);
  // Each block reads what the next wrote, after a grid_sync: clean.
  LaunchStats S;
  LaunchOptions O;
  O.Stats = &S;
  EXPECT_EQ(launch("g", 4, 1, KernelArg::pointer(X).withExtent(64), O).first, "");
  EXPECT_EQ(S.Phases, 2u);
  EXPECT_EQ(X[3], 3.0f);
}

TEST_F(CheckedLaunchTest, LaunchesReuseTheShadowConcurrentlyToo) {
  // Each launch of 'r' over one block writes x[0]; the runtime keeps the
  // shadow from one launch to the next, and the launches are ordered.
  float X[16] = {};
  for (int I = 0; I < 3; ++I)
    EXPECT_EQ(launch("r", 1, 1, KernelArg::pointer(X).withExtent(64)).first, "");
  EXPECT_EQ(launch("r", 2, 1, KernelArg::pointer(X).withExtent(64)).second, ErrorKind::Check);
  // Checked launches from several threads at once (each gets a shadow):
  // one block is clean, two race, every time.
  std::vector<int> Wrong(4, 0);
  std::vector<std::array<float, 16>> Bufs(Wrong.size());
  std::vector<std::thread> Threads;
  for (size_t T = 0; T < Wrong.size(); ++T)
    Threads.emplace_back([&, T] {
      for (int I = 0; I < 20; ++I) {
        LaunchConfig C;
        C.Grid.X = T % 2 ? 2 : 1;
        llvm::Error E =
            RT->launch(*M, "r", C, {KernelArg::pointer(Bufs[T].data()).withExtent(64)}, {});
        bool Raced = peekErrorKind(E) == ErrorKind::Check;
        llvm::consumeError(std::move(E));
        Wrong[T] += Raced != (T % 2 == 1);
      }
    });
  for (std::thread &T : Threads)
    T.join();
  EXPECT_THAT(Wrong, ::testing::Each(0));
}

TEST_F(CheckedLaunchTest, ACancelStopsACheckedLaunchBetweenBlocks) {
  float X[16] = {};
  CancelToken Cancel;
  Cancel.cancel();
  LaunchOptions O;
  O.Cancel = &Cancel;
  auto [Text, Kind] = launch("k", 4, 8, KernelArg::pointer(X).withExtent(32), O);
  EXPECT_EQ(Kind, ErrorKind::Cancelled);
  EXPECT_THAT(Text, ::testing::HasSubstr("stopped after 0 block runs of a checked launch"));
}

TEST_F(CheckedLaunchTest, GPULimitsStopTheLaunchBeforeAnyBlockRuns) {
  float X[16] = {};
  auto [Text, Kind] = launch("big", 1, 1, KernelArg::pointer(X).withExtent(64));
  EXPECT_EQ(Text, "error: kernel 'big' has 122880 bytes of static shared memory; a GPU allows "
                  "49152 (48 KiB) per block");
  EXPECT_EQ(Kind, ErrorKind::Check);
}

} // namespace
