//===- CheckedCodeTest.cpp - The host target's checked code ---------------===//
//
// Part of gridjit. Checked code (HostTargetOptions::Check) calls the
// runtime's checker through the BlockContext (gridjit/Target/HostABI.h).
// These tests compile kernels with the checked host target, load the object
// into an LLJIT of their own and run the entry with recording stubs as the
// BlockContext's Check* functions: each access, report and synchronisation
// is pinned with the fields of its CheckSite, and unchecked code is shown
// to have none of it.
//
//===----------------------------------------------------------------------===//

#include "TestSupport.h"

#include "gridjit/Compiler/Compiler.h"
#include "gridjit/Sema/Verifier.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/HostABI.h"
#include "gridjit/Target/Target.h"

#include "llvm/ExecutionEngine/Orc/ExecutionUtils.h"
#include "llvm/ExecutionEngine/Orc/LLJIT.h"
#include "llvm/Support/MemoryBuffer.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

using namespace gridjit;
using namespace gridjit::test;
namespace habi = gridjit::hostabi;

namespace {

using ::testing::HasSubstr;
using ::testing::Not;

/// One call of the checker, as the stubs record it.
struct Event {
  enum { Access, Report, Sync } What = Access;
  const habi::CheckSite *Site = nullptr;
  uint64_t Block = 0;
  uint32_t Thread = 0;
  void *Addr = nullptr;
  std::vector<char> Value; ///< the bytes a store passes (Site->Bytes)
  bool HasValue = false;
  uint64_t A = 0, B = 0;
  uint32_t Kind = 0, Warp = 0; ///< Sync
};

/// What checked code's calls record. It starts with the fast-path table
/// that CheckState points to, every slot closed unless a test opens one.
struct Recorder : habi::CheckFastTable {
  Recorder() : habi::CheckFastTable{} {}
  std::vector<Event> Events;
  /// Accesses whose Site->What and Site->Memory are these.
  std::vector<Event> accesses(const std::string &What, const std::string &Memory) const {
    std::vector<Event> R;
    for (const Event &E : Events)
      if (E.What == Event::Access && E.Site->What == What && E.Site->Memory == Memory)
        R.push_back(E);
    return R;
  }
  std::vector<Event> reports(uint32_t Kind) const {
    std::vector<Event> R;
    for (const Event &E : Events)
      if (E.What == Event::Report && E.Site->Kind == Kind)
        R.push_back(E);
    return R;
  }
};

void *recordAccess(void *State, const habi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                   void *Addr, const void *Value) {
  Event E;
  E.What = Event::Access;
  E.Site = Site;
  E.Block = Block;
  E.Thread = Thread;
  E.Addr = Addr;
  if (Value) {
    E.HasValue = true;
    E.Value.assign(static_cast<const char *>(Value),
                   static_cast<const char *>(Value) + Site->Bytes);
  }
  static_cast<Recorder *>(static_cast<habi::CheckFastTable *>(State))
      ->Events.push_back(std::move(E));
  return Addr;
}
void recordReport(void *State, const habi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                  uint64_t A, uint64_t B) {
  Event E;
  E.What = Event::Report;
  E.Site = Site;
  E.Block = Block;
  E.Thread = Thread;
  E.A = A;
  E.B = B;
  static_cast<Recorder *>(static_cast<habi::CheckFastTable *>(State))
      ->Events.push_back(std::move(E));
}
void recordSync(void *State, uint32_t Kind, uint64_t Block, uint32_t Warp) {
  Event E;
  E.What = Event::Sync;
  E.Kind = Kind;
  E.Block = Block;
  E.Warp = Warp;
  static_cast<Recorder *>(static_cast<habi::CheckFastTable *>(State))
      ->Events.push_back(std::move(E));
}

std::unique_ptr<Module> parse(const char *Source) {
  auto M = parseAndVerify(Source, "check.kir");
  if (!M) {
    ADD_FAILURE() << errorText(M.takeError());
    return nullptr;
  }
  return std::move(*M);
}

std::unique_ptr<Target> hostTarget(bool Check) {
  HostTargetOptions Opts;
  Opts.Check = Check;
  auto T = createHostTarget(Opts);
  if (!T) {
    ADD_FAILURE() << errorText(T.takeError());
    return nullptr;
  }
  return std::move(*T);
}

/// A kernel compiled by a target and loaded into an LLJIT of its own.
struct Loaded {
  std::unique_ptr<llvm::orc::LLJIT> JIT;
  habi::EntryFn Entry = nullptr;
  const habi::Descriptor *Desc = nullptr;
};

Loaded load(const Target &T, const Module &M, const std::string &Kernel, unsigned OptLevel) {
  Loaded L;
  CompileOptions Opts;
  Opts.OptLevel = OptLevel;
  auto A = T.compile(M, Opts);
  if (!succeeded(A)) {
    ADD_FAILURE() << "compile failed";
    return L;
  }
  auto JIT = llvm::orc::LLJITBuilder().create();
  if (!succeeded(JIT))
    return L;
  auto Gen = llvm::orc::DynamicLibrarySearchGenerator::GetForCurrentProcess(
      (*JIT)->getDataLayout().getGlobalPrefix());
  if (!succeeded(Gen))
    return L;
  (*JIT)->getMainJITDylib().addGenerator(std::move(*Gen));
  if (!succeeded((*JIT)->addObjectFile(llvm::MemoryBuffer::getMemBufferCopy(A->Payload))))
    return L;
  auto Entry = (*JIT)->lookup(habi::EntryPrefix + Kernel);
  auto Desc = (*JIT)->lookup(habi::DescriptorPrefix + Kernel);
  if (!succeeded(Entry) || !succeeded(Desc))
    return L;
  L.Entry = Entry->toPtr<habi::EntryFn>();
  L.Desc = Desc->toPtr<const habi::Descriptor *>();
  L.JIT = std::move(*JIT);
  return L;
}

/// \p Source compiled by the checked host target at -O\p OptLevel, its
/// kernel \p Kernel loaded (the sites the events point to live as long).
Loaded loadChecked(const char *Source, const std::string &Kernel, unsigned OptLevel) {
  auto T = hostTarget(true);
  auto M = parse(Source);
  if (!T || !M)
    return Loaded();
  return load(*T, *M, Kernel, OptLevel);
}

/// 64-byte aligned, zeroed memory.
struct Buffer {
  explicit Buffer(size_t Bytes) : P(std::aligned_alloc(64, (Bytes + 64) / 64 * 64)) {
    std::memset(P, 0, (Bytes + 64) / 64 * 64);
  }
  ~Buffer() { std::free(P); }
  char *get() const { return static_cast<char *>(P); }
  void *P;
};

/// Runs \p L's blocks [0, Blocks) of \p Threads threads (x only) with \p Args
/// and \p DynamicShared bytes, recording into \p R; returns the entry's
/// status. \p SharedOut: the shared memory's base, for the tests.
int32_t run(const Loaded &L, std::vector<void *> Args, uint32_t Blocks, uint32_t Threads,
            Recorder &R, uint64_t DynamicShared = 0, char **SharedOut = nullptr) {
  Buffer Shared(L.Desc->StaticSharedBytes + DynamicShared);
  Buffer Frame(L.Desc->FrameBytesPerThread * Threads);
  Buffer BlockFrame(L.Desc->FrameBytesPerBlock);
  habi::BlockContext Ctx{};
  Ctx.GridDim[0] = Blocks;
  Ctx.GridDim[1] = Ctx.GridDim[2] = 1;
  Ctx.BlockDim[0] = Threads;
  Ctx.BlockDim[1] = Ctx.BlockDim[2] = 1;
  Ctx.Shared = Shared.get();
  Ctx.Frame = Frame.get();
  Ctx.BlockFrame = BlockFrame.get();
  Ctx.CheckState = static_cast<habi::CheckFastTable *>(&R);
  Ctx.CheckAccess = recordAccess;
  Ctx.CheckReport = recordReport;
  Ctx.CheckSync = recordSync;
  if (SharedOut)
    *SharedOut = Shared.get();
  return L.Entry(Args.data(), &Ctx, 0, Blocks);
}

/// Runs \p L (as run does) with its
/// one argument, an i32 buffer of Blocks x Threads elements, into \p Out.
int32_t runWithOutput(const Loaded &L, std::vector<int32_t> &Out, uint32_t Blocks, uint32_t Threads,
                      Recorder &R, char **SharedOut = nullptr) {
  Out.assign(size_t(Blocks) * Threads, 0);
  int32_t *OutP = Out.data();
  return run(L, {&OutP}, Blocks, Threads, R, 0, SharedOut);
}

//===----------------------------------------------------------------------===//
// Accesses
//===----------------------------------------------------------------------===//

const char *Accesses = R"(
fn load_dev(q: ptr<f32>, i: i32) -> f32 { return q[i]; }
kernel acc(x: ptr<f32>, y: ptr<i32>, n: i32) {
  shared pad: [f32; 4];
  shared tile: [f32; 8];
  shared dyn: [i32];
  var loc: [i32; 4];
  let t: i32 = thread_idx.x;
  loc[t & 3] = t;
  tile[t] = x[t];
  dyn[t] = loc[t & 3];
  let old: i32 = atomic_add(&y[0], 1);
  let c: i32 = atomic_cas(&dyn[0], 0, 1);
  y[t + 1] = old * 100 + c * 10 + (load_dev(x, t) as i32);
  pad[0] = 1.0;
}
)";

class CheckedAccessTest : public ::testing::TestWithParam<unsigned> {};

TEST_P(CheckedAccessTest, EveryGlobalAndSharedAccessCallsTheCheckerWithItsSite) {
  Loaded L = loadChecked(Accesses, "acc", GetParam());
  ASSERT_TRUE(L.Entry);
  float X[4] = {3, 4, 5, 6};
  int32_t Y[5] = {};
  float *XP = X;
  int32_t *YP = Y;
  int32_t N = 4;
  Recorder R;
  char *Shared = nullptr;
  ASSERT_EQ(run(L, {&XP, &YP, &N}, 1, 4, R, 4 * 4, &Shared), habi::EntryDone);

  // Shared layout: pad at 0 (16 bytes), tile at 16 (32 bytes), the
  // dynamic array at 48.
  auto XLoads = R.accesses("load", "x");
  ASSERT_EQ(XLoads.size(), 4u);
  for (uint32_t I = 0; I < 4; ++I) {
    const Event &E = XLoads[I];
    EXPECT_EQ(E.Site->Kind, habi::CheckLoad);
    EXPECT_EQ(E.Site->Space, habi::CheckGlobal);
    EXPECT_EQ(E.Site->Param, 0);
    EXPECT_EQ(E.Site->Bytes, 4u);
    EXPECT_EQ(E.Site->ElemBytes, 4u);
    EXPECT_STREQ(E.Site->Module, "check.kir");
    EXPECT_STREQ(E.Site->Kernel, "acc");
    EXPECT_EQ(E.Site->Line, 10u);
    EXPECT_STREQ(E.Site->SourceLine, "  tile[t] = x[t];");
    EXPECT_FALSE(E.HasValue);
    EXPECT_EQ(E.Thread, I);
    EXPECT_EQ(E.Block, 0u);
    EXPECT_EQ(E.Addr, &X[I]);
  }
  auto Tile = R.accesses("store", "tile");
  ASSERT_EQ(Tile.size(), 4u);
  for (uint32_t I = 0; I < 4; ++I) {
    const Event &E = Tile[I];
    EXPECT_EQ(E.Site->Kind, habi::CheckStore);
    EXPECT_EQ(E.Site->Space, habi::CheckShared);
    EXPECT_EQ(E.Site->Param, -1);
    EXPECT_EQ(E.Site->SharedOffset, 16u);
    EXPECT_EQ(E.Site->SharedBytes, 32u);
    EXPECT_EQ(E.Addr, Shared + 16 + 4 * I);
    ASSERT_TRUE(E.HasValue);
    float V;
    std::memcpy(&V, E.Value.data(), 4);
    EXPECT_EQ(V, X[I]);
  }
  auto Pad = R.accesses("store", "pad");
  ASSERT_EQ(Pad.size(), 4u);
  EXPECT_EQ(Pad[0].Site->SharedOffset, 0u);
  EXPECT_EQ(Pad[0].Site->SharedBytes, 16u);
  auto Dyn = R.accesses("store", "dyn");
  ASSERT_EQ(Dyn.size(), 4u);
  EXPECT_EQ(Dyn[0].Site->Space, habi::CheckDynamicShared);
  EXPECT_EQ(Dyn[0].Site->SharedOffset, 48u);
  EXPECT_EQ(Dyn[0].Site->SharedBytes, 0u);
  EXPECT_EQ(Dyn[2].Addr, Shared + 48 + 8);
  auto Add = R.accesses("atomic_add", "y");
  ASSERT_EQ(Add.size(), 4u);
  EXPECT_EQ(Add[0].Site->Kind, habi::CheckAtomic);
  EXPECT_EQ(Add[0].Site->Space, habi::CheckGlobal);
  EXPECT_EQ(Add[0].Site->Param, 1);
  EXPECT_EQ(Add[0].Site->Bytes, 4u);
  EXPECT_FALSE(Add[0].HasValue);
  EXPECT_EQ(Add[0].Addr, &Y[0]);
  auto Cas = R.accesses("atomic_cas", "dyn");
  ASSERT_EQ(Cas.size(), 4u);
  EXPECT_EQ(Cas[0].Site->Kind, habi::CheckAtomic);
  EXPECT_EQ(Cas[0].Site->Space, habi::CheckDynamicShared);
  // The store of y passes the bytes it stores.
  auto YStores = R.accesses("store", "y");
  ASSERT_EQ(YStores.size(), 4u);
  for (uint32_t I = 0; I < 4; ++I) {
    EXPECT_EQ(YStores[I].Site->Param, 1);
    EXPECT_EQ(YStores[I].Addr, &Y[I + 1]);
    int32_t V;
    ASSERT_TRUE(YStores[I].HasValue);
    std::memcpy(&V, YStores[I].Value.data(), 4);
    EXPECT_EQ(V, Y[I + 1]);
  }
  // The device function's access: its parameter is no kernel parameter,
  // and the site names no kernel (it serves every kernel that calls it).
  auto Dev = R.accesses("load", "q");
  ASSERT_EQ(Dev.size(), 4u);
  EXPECT_EQ(Dev[3].Site->Param, -1);
  EXPECT_STREQ(Dev[3].Site->Kernel, "");
  EXPECT_EQ(Dev[3].Thread, 3u);
  EXPECT_EQ(Dev[3].Addr, &X[3]);
  // Local memory is not checked; nothing else is either.
  EXPECT_TRUE(R.accesses("store", "loc").empty());
  EXPECT_TRUE(R.accesses("load", "loc").empty());
  EXPECT_EQ(R.Events.size(), 4u * 8);
  // The kernel computed what unchecked code computes.
  EXPECT_EQ(Y[0], 4);
  EXPECT_EQ(Y[1] % 100, 3 + 10 * 0);
}

// x is read only (the kernel writes through y alone), and no thread writes
// t between the barrier and the end: both loads need only their bounds
// checked (CheckElision.cpp), and call the checker only when their bytes
// are outside their slot of the fast-path table.
const char *FastLoads = R"(
kernel fast(x: ptr<f32>, y: ptr<f32>) {
  shared t: [f32; 4];
  let i: i32 = thread_idx.x;
  t[i] = x[i];
  sync_threads();
  y[i] = t[3 - i] + x[i + 1];
}
)";

TEST_P(CheckedAccessTest, LoadsThatNeedOnlyTheirBoundsCallOnlyOutsideTheirOpenSlot) {
  Loaded L = loadChecked(FastLoads, "fast", GetParam());
  ASSERT_TRUE(L.Entry);
  float X[5] = {1, 2, 3, 4, 5}, Y[4] = {};
  float *XP = X, *YP = Y;
  // Every slot closed: every load calls; t's site names slot 128.
  Recorder Closed;
  ASSERT_EQ(run(L, {&XP, &YP}, 1, 4, Closed), habi::EntryDone);
  EXPECT_EQ(Closed.accesses("load", "x").size(), 8u);
  auto TLoads = Closed.accesses("load", "t");
  ASSERT_EQ(TLoads.size(), 4u);
  EXPECT_EQ(TLoads[0].Site->FastSlot, habi::CheckFastSharedSlots);
  EXPECT_EQ(Closed.accesses("load", "x")[0].Site->FastSlot, 0u);
  EXPECT_EQ(Closed.accesses("store", "t")[0].Site->FastSlot, 0u);
  for (int I = 0; I < 4; ++I)
    EXPECT_EQ(Y[I], X[3 - I] + X[I + 1]);

  // x's slot open over its first four elements: only x[4] calls. t's open
  // over all memory (each run has shared memory of its own).
  std::fill(std::begin(Y), std::end(Y), 0.0f);
  Recorder Open;
  Open.Slot[0] = {uint64_t(uintptr_t(X)), 4 * sizeof(float)};
  Open.Slot[habi::CheckFastSharedSlots] = {0, ~uint64_t(0)};
  ASSERT_EQ(run(L, {&XP, &YP}, 1, 4, Open, 0), habi::EntryDone);
  auto XLoads = Open.accesses("load", "x");
  ASSERT_EQ(XLoads.size(), 1u);
  EXPECT_EQ(XLoads[0].Addr, &X[4]);
  EXPECT_EQ(XLoads[0].Thread, 3u);
  EXPECT_TRUE(Open.accesses("load", "t").empty());
  EXPECT_EQ(Open.accesses("store", "t").size(), 4u);
  EXPECT_EQ(Open.accesses("store", "y").size(), 4u);
  for (int I = 0; I < 4; ++I)
    EXPECT_EQ(Y[I], X[3 - I] + X[I + 1]);
}

INSTANTIATE_TEST_SUITE_P(OptLevels, CheckedAccessTest, ::testing::Values(0u, 3u));

TEST(CheckedCodeTest, SharedScalarsAreCheckedAsTheirNamesAreReadAndAssigned) {
  Loaded L = loadChecked(R"(
kernel sc(out: ptr<i32>) {
  shared total: i32;
  shared flag: bool;
  if thread_idx.x == 0 { total = 5; flag = true; }
  sync_threads();
  total += 1;
  out[thread_idx.x] = total;
  total = total * 2;
}
)",
                         "sc", 3);
  ASSERT_TRUE(L.Entry);
  std::vector<int32_t> Out;
  Recorder R;
  char *Shared = nullptr;
  ASSERT_EQ(runWithOutput(L, Out, 1, 3, R, &Shared), habi::EntryDone);
  auto Stores = R.accesses("store", "total");
  auto Loads = R.accesses("load", "total");
  ASSERT_EQ(Stores.size(), 1u + 3 * 2);
  ASSERT_EQ(Loads.size(), 3u * 3);
  EXPECT_EQ(Stores[0].Site->Line, 5u);
  EXPECT_EQ(Stores[0].Site->Col, 26u);
  EXPECT_EQ(Stores[0].Site->Space, habi::CheckShared);
  EXPECT_EQ(Stores[0].Site->SharedOffset, 0u);
  EXPECT_EQ(Stores[0].Site->SharedBytes, 4u);
  EXPECT_EQ(Stores[0].Addr, Shared);
  ASSERT_TRUE(Stores[0].HasValue);
  int32_t V;
  std::memcpy(&V, Stores[0].Value.data(), 4);
  EXPECT_EQ(V, 5);
  EXPECT_EQ(Loads[0].Site->Line, 7u);
  EXPECT_EQ(Loads[1].Site->Line, 8u);
  EXPECT_EQ(Loads[1].Site->Kind, habi::CheckLoad);
  // `total = total * 2;`: the load at the operand, the store at the target.
  EXPECT_EQ(Loads[2].Site->Line, 9u);
  EXPECT_EQ(Loads[2].Site->Col, 11u);
  EXPECT_EQ(Stores[2].Site->Line, 9u);
  EXPECT_EQ(Stores[2].Site->Col, 3u);
  auto Flag = R.accesses("store", "flag");
  ASSERT_EQ(Flag.size(), 1u);
  EXPECT_EQ(Flag[0].Site->Bytes, 1u);
  EXPECT_EQ(Flag[0].Site->SharedOffset, 16u);
  ASSERT_TRUE(Flag[0].HasValue);
  EXPECT_EQ(Flag[0].Value[0], 1);
  EXPECT_EQ(Out, (std::vector<int32_t>{6, 13, 27}));
}

//===----------------------------------------------------------------------===//
// Undefined operations
//===----------------------------------------------------------------------===//

const char *Undefined = R"(
const TABLE: [i32; 4] = [1, 2, 3, 4];
kernel ub(out: ptr<i32>, m: i32, d: i32, s: i32, i: i32) {
  var loc: [i32; 4];
  out[0] = m / d;
  out[1] = m % d;
  out[2] = 1 << s;
  out[3] = m >> s;
  loc[i] = 3;
  out[4] = loc[i];
  out[5] = TABLE[i];
  out[6] = (m as u32 / d as u32) as i32;
}
)";

struct UBRun {
  Loaded L; ///< keeps the sites the events point to
  Recorder R;
  int32_t Out[7] = {};
};

class CheckedReportTest : public ::testing::TestWithParam<unsigned> {
protected:
  void runUB(UBRun &U, int32_t M, int32_t D, int32_t S, int32_t I) {
    U.L = loadChecked(Undefined, "ub", GetParam());
    ASSERT_TRUE(U.L.Entry);
    int32_t *OutP = U.Out;
    ASSERT_EQ(run(U.L, {&OutP, &M, &D, &S, &I}, 1, 1, U.R), habi::EntryDone);
  }
};

TEST_P(CheckedReportTest, DefinedOperationsReportNothing) {
  UBRun U;
  runUB(U, 7, 2, 1, 1);
  EXPECT_TRUE(U.R.reports(habi::CheckDivByZero).empty());
  EXPECT_TRUE(U.R.reports(habi::CheckDivOverflow).empty());
  EXPECT_TRUE(U.R.reports(habi::CheckShiftAmount).empty());
  EXPECT_TRUE(U.R.reports(habi::CheckLocalIndex).empty());
  EXPECT_EQ(U.Out[0], 3);
  EXPECT_EQ(U.Out[5], 2);
}

TEST_P(CheckedReportTest, DivisionByZeroIsReportedThenGivesZero) {
  UBRun U;
  runUB(U, -5, 0, 1, 1);
  auto Div = U.R.reports(habi::CheckDivByZero);
  ASSERT_EQ(Div.size(), 3u);
  EXPECT_STREQ(Div[0].Site->What, "/");
  EXPECT_STREQ(Div[1].Site->What, "%");
  EXPECT_STREQ(Div[2].Site->What, "/");
  EXPECT_EQ(Div[0].A, uint64_t(-5));           // sign-extended
  EXPECT_EQ(Div[2].A, uint64_t(uint32_t(-5))); // u32: zero-extended
  EXPECT_EQ(Div[0].B, 0u);
  EXPECT_EQ(Div[0].Site->Space, habi::CheckNotMemory);
  EXPECT_EQ(Div[0].Site->Bytes, 4u);
  EXPECT_EQ(Div[0].Site->Line, 5u);
  EXPECT_EQ(Div[0].Site->Col, 12u);
  EXPECT_STREQ(Div[0].Site->Kernel, "ub");
  EXPECT_EQ(U.Out[0], 0);
  EXPECT_EQ(U.Out[1], 0);
}

TEST_P(CheckedReportTest, MinByMinusOneIsReportedThenWraps) {
  UBRun U;
  runUB(U, INT32_MIN, -1, 1, 1);
  auto Ov = U.R.reports(habi::CheckDivOverflow);
  ASSERT_EQ(Ov.size(), 2u);
  EXPECT_STREQ(Ov[0].Site->What, "/");
  EXPECT_STREQ(Ov[1].Site->What, "%");
  EXPECT_EQ(Ov[0].A, uint64_t(int64_t(INT32_MIN)));
  EXPECT_EQ(Ov[0].B, ~uint64_t(0));
  EXPECT_TRUE(U.R.reports(habi::CheckDivByZero).empty());
  EXPECT_EQ(U.Out[0], INT32_MIN);
  EXPECT_EQ(U.Out[1], 0);
}

TEST_P(CheckedReportTest, ShiftAmountsOutOfRangeAreReportedThenTakenModuloTheWidth) {
  for (int32_t S : {32, -1, 31}) {
    UBRun U;
    runUB(U, 8, 1, S, 1);
    auto Sh = U.R.reports(habi::CheckShiftAmount);
    if (S == 31) {
      EXPECT_TRUE(Sh.empty());
      continue;
    }
    ASSERT_EQ(Sh.size(), 2u) << S;
    EXPECT_STREQ(Sh[0].Site->What, "<<");
    EXPECT_STREQ(Sh[1].Site->What, ">>");
    EXPECT_EQ(Sh[0].A, uint64_t(int64_t(S)));
    EXPECT_EQ(Sh[0].B, 32u);
    EXPECT_EQ(U.Out[2], 1 << (S & 31));
    EXPECT_EQ(U.Out[3], 8 >> (S & 31));
  }
}

TEST_P(CheckedReportTest, LocalAndConstantIndicesOutOfRangeAreReportedThenClamped) {
  for (int32_t I : {4, -1}) {
    UBRun U;
    runUB(U, 8, 1, 1, I);
    auto Ix = U.R.reports(habi::CheckLocalIndex);
    ASSERT_EQ(Ix.size(), 3u) << I;
    EXPECT_STREQ(Ix[0].Site->What, "local array");
    EXPECT_STREQ(Ix[0].Site->Memory, "loc");
    EXPECT_STREQ(Ix[2].Site->What, "constant array");
    EXPECT_STREQ(Ix[2].Site->Memory, "TABLE");
    EXPECT_EQ(Ix[0].A, uint64_t(int64_t(I)));
    EXPECT_EQ(Ix[0].B, 4u);
    EXPECT_EQ(Ix[0].Site->ElemBytes, 4u);
    EXPECT_EQ(U.Out[4], 3); // loc[3], clamped
    EXPECT_EQ(U.Out[5], 4); // TABLE[3]
  }
}

INSTANTIATE_TEST_SUITE_P(OptLevels, CheckedReportTest, ::testing::Values(0u, 3u));

TEST(CheckedCodeTest, AShuffleFromALaneAPartialWarpLacksIsReported) {
  Loaded L = loadChecked(R"(
kernel sh(out: ptr<i32>) {
  let t: i32 = thread_idx.x;
  out[t] = shfl_down(t, 4) + 1000 * shfl_xor(t, 8) + 100000 * shfl_up(t, 4);
}
)",
                         "sh", 3);
  ASSERT_TRUE(L.Entry);
  std::vector<int32_t> Out;
  Recorder R;
  // 40 threads: the second warp has 8 lanes.
  ASSERT_EQ(runWithOutput(L, Out, 1, 40, R), habi::EntryDone);
  auto Lane = R.reports(habi::CheckWarpLane);
  std::vector<std::pair<uint32_t, uint64_t>> Down, Xor;
  for (const Event &E : Lane) {
    EXPECT_EQ(E.B, 8u);
    EXPECT_EQ(E.Site->Line, 4u);
    if (std::string(E.Site->What) == "shfl_down()")
      Down.push_back({E.Thread, E.A});
    else if (std::string(E.Site->What) == "shfl_xor()")
      Xor.push_back({E.Thread, E.A});
    else
      ADD_FAILURE() << E.Site->What;
  }
  // Lanes 4..7 of the second warp read lanes 8..11; lanes 28..31 of the
  // first read past 32, which the full mask defines (their own value).
  EXPECT_EQ(Down,
            (std::vector<std::pair<uint32_t, uint64_t>>{{36, 8}, {37, 9}, {38, 10}, {39, 11}}));
  ASSERT_EQ(Xor.size(), 8u);
  EXPECT_EQ(Xor[0], (std::pair<uint32_t, uint64_t>{32, 8}));
  // Each such lane then reads its own value, as unchecked code does.
  EXPECT_EQ(Out[36], 36 + 1000 * 36 + 100000 * 32);
  EXPECT_EQ(Out[28], 28 + 1000 * 20 + 100000 * 24);
}

//===----------------------------------------------------------------------===//
// Synchronisation and the descriptor
//===----------------------------------------------------------------------===//

TEST(CheckedCodeTest, EachBlockTellsTheCheckerOfItsBarriersInOrder) {
  Loaded L = loadChecked(R"(
kernel sy(out: ptr<i32>) {
  shared s: [i32; 64];
  let t: i32 = thread_idx.x;
  s[t] = t;
  sync_threads();
  out[t] = s[63 - t];
  sync_warp();
  out[t] += 1;
}
)",
                         "sy", 3);
  ASSERT_TRUE(L.Entry);
  std::vector<int32_t> Out;
  Recorder R;
  ASSERT_EQ(runWithOutput(L, Out, 2, 64, R), habi::EntryDone);
  // Per block: 64 shared stores, sync_threads, 64 x (shared load, global
  // store), sync_warp, 64 x (global load, global store).
  std::vector<std::string> Seq;
  for (const Event &E : R.Events) {
    if (E.What == Event::Sync) {
      EXPECT_EQ(E.Warp, habi::NoWarp);
      Seq.push_back((E.Kind == habi::CheckSyncThreads ? "threads " : "warp ") +
                    std::to_string(E.Block));
    } else if (std::string A = "access " + std::to_string(E.Block);
               Seq.empty() || Seq.back() != A) {
      Seq.push_back(A);
    }
  }
  EXPECT_EQ(Seq,
            (std::vector<std::string>{"access 0", "threads 0", "access 0", "warp 0", "access 0",
                                      "access 1", "threads 1", "access 1", "warp 1", "access 1"}));
  EXPECT_EQ(R.Events.size(), 2u * (64 * 5 + 2));
  EXPECT_EQ(Out[0], 64);
}

TEST(CheckedCodeTest, TheDescriptorSaysCheckedAndTheArchitecture) {
  auto M = parse(Accesses);
  auto Checked = hostTarget(true), Plain = hostTarget(false);
  ASSERT_TRUE(M && Checked && Plain);
  Loaded C = load(*Checked, *M, "acc", 0);
  Loaded P = load(*Plain, *M, "acc", 0);
  ASSERT_TRUE(C.Desc && P.Desc);
  EXPECT_EQ(C.Desc->Checked, 1u);
  EXPECT_EQ(C.Desc->CheckArch, 80u);
  EXPECT_EQ(P.Desc->Checked, 0u);
  EXPECT_EQ(P.Desc->CheckArch, 0u);
  auto Sm86 = Plain->makeChecked(86);
  ASSERT_TRUE(succeeded(Sm86));
  Loaded C86 = load(**Sm86, *M, "acc", 0);
  ASSERT_TRUE(C86.Desc);
  EXPECT_EQ(C86.Desc->Checked, 1u);
  EXPECT_EQ(C86.Desc->CheckArch, 86u);
}

TEST(CheckedCodeTest, UncheckedCodeHasNoneOfIt) {
  auto M = parse(Accesses);
  auto Checked = hostTarget(true), Plain = hostTarget(false);
  ASSERT_TRUE(M && Checked && Plain);
  CompileOptions O0;
  O0.OptLevel = 0;
  auto PIR = Plain->emit(*M, EmitKind::LLVM, O0);
  auto CIR = Checked->emit(*M, EmitKind::LLVM, O0);
  ASSERT_TRUE(succeeded(PIR) && succeeded(CIR));
  EXPECT_THAT(*CIR, HasSubstr(".gridjit.check"));
  EXPECT_THAT(*CIR, HasSubstr("check.value"));
  EXPECT_THAT(*PIR, Not(HasSubstr(".gridjit.check")));
  EXPECT_THAT(*PIR, Not(HasSubstr("check.value")));
  EXPECT_THAT(*PIR, Not(HasSubstr("check.report")));
  EXPECT_THAT(*PIR, Not(HasSubstr("checked.addr")));
  // The registries differ in the ops checked code replaces, and so do the
  // fingerprints.
  const LoweringRegistry &PR = CodegenTarget::get(*Plain).getRegistry();
  const LoweringRegistry &CR = CodegenTarget::get(*Checked).getRegistry();
  EXPECT_NE(PR.lookup(Op::Load), CR.lookup(Op::Load));
  EXPECT_EQ(PR.lookup(Op::Add), CR.lookup(Op::Add));
  EXPECT_TRUE(CR.missing().empty());
  EXPECT_NE(Plain->getFingerprint(), Checked->getFingerprint());
}

} // namespace
