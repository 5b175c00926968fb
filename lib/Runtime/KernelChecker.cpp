//===- KernelChecker.cpp - The run-time half of checked launches ----------===//
//
// Part of gridjit. See KernelChecker.h.
//
// Shadow memory costs sizeof(ShadowByte) (24) bytes per byte of memory the
// kernel touches, in pages of 4 KiB of memory (96 KiB of shadow each),
// allocated zeroed on first touch and kept in a ShadowCache from one
// launch to the next.
//
//===----------------------------------------------------------------------===//

#include "KernelChecker.h"

#include "KernelFaults.h"

#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Support/Limits.h"

#include "llvm/Support/Compiler.h"
#include "llvm/Support/ErrorHandling.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>

using namespace gridjit;
namespace abi = gridjit::hostabi;

//===----------------------------------------------------------------------===//
// ShadowCache
//===----------------------------------------------------------------------===//

void ShadowCache::FreeDeleter::operator()(ShadowPage *P) const {
  std::free(P->PerByte);
  std::free(P);
}

ShadowCache::~ShadowCache() = default;

uint64_t ShadowCache::bytes() const { return Pages.size() * sizeof(ShadowPage) + PerByteBytes; }

void ShadowCache::clear() {
  Pages.clear();
  PerByteBytes = 0;
  std::fill(std::begin(RecentPages), std::end(RecentPages), Recent());
  Clock = 0;
}

void ShadowCache::beginLaunch() {
  if (bytes() > CapBytes || Clock > (uint64_t(1) << 31))
    clear();
}

static void *zeroed(size_t N, size_t Size) {
  void *Mem = std::calloc(N, Size);
  if (!Mem)
    llvm::report_bad_alloc_error("kernel checker: no memory for shadow memory");
  return Mem;
}

ShadowPage *ShadowCache::lookup(uint64_t Page) {
  auto &Slot = Pages[Page];
  if (!Slot)
    Slot.reset(static_cast<ShadowPage *>(zeroed(1, sizeof(ShadowPage))));
  return Slot.get();
}

void ShadowCache::split(ShadowPage &P, unsigned G) {
  if (!P.PerByte) {
    P.PerByte = static_cast<ShadowRecords *>(zeroed(ShadowPage::Bytes, sizeof(ShadowRecords)));
    PerByteBytes += ShadowPage::Bytes * sizeof(ShadowRecords);
  }
  std::fill_n(P.PerByte + 4 * G, 4, P.Granule[G]);
  P.Split[G / 64] |= uint64_t(1) << (G % 64);
}

//===----------------------------------------------------------------------===//
// KernelChecker
//===----------------------------------------------------------------------===//

KernelChecker::KernelChecker(const KernelInfo &K, const LaunchConfig &Cfg,
                             uint64_t StaticSharedBytes, uint32_t MaxFindings, bool SameValueWrites,
                             ShadowCache *C)
    : hostabi::CheckFastTable{}, Info(K), Cfg(Cfg), StaticShared(StaticSharedBytes),
      MaxFindings(std::max<uint32_t>(1, MaxFindings)), SameValueWrites(SameValueWrites),
      Params(K.Params.size()), OwnCache(C ? nullptr : std::make_unique<ShadowCache>()),
      Cache(C ? C : OwnCache.get()), Clock(Cache->Clock), Sites(1, nullptr) {
  Cache->beginLaunch();
  LaunchStart = tick();
}

KernelChecker::~KernelChecker() = default;

void KernelChecker::setPointerArg(unsigned Index, uint64_t Addr, std::optional<uint64_t> Bytes) {
  if (Index >= Params.size())
    Params.resize(Index + 1);
  Region &R = Params[Index];
  R.Param = int(Index);
  R.Name = Index < Info.Params.size() ? Info.Params[Index].Name.c_str() : "";
  R.Begin = Addr;
  R.Known = Bytes.has_value();
  R.End = Addr + (Bytes ? std::min(*Bytes, UINT64_MAX - Addr) : 0);
}

void KernelChecker::addAllocation(uint64_t Addr, uint64_t Bytes) {
  Region R;
  R.Begin = Addr;
  R.End = Addr + Bytes;
  auto At = std::lower_bound(Allocations.begin(), Allocations.end(), Addr,
                             [](const Region &A, uint64_t V) { return A.Begin < V; });
  Allocations.insert(At, R);
}

void KernelChecker::bind(abi::BlockContext &C) {
  C.CheckState = static_cast<abi::CheckFastTable *>(this);
  C.CheckAccess = &KernelChecker::access;
  C.CheckReport = &KernelChecker::report;
  C.CheckSync = &KernelChecker::sync;
}

uint64_t KernelChecker::shadowBytes() const { return Cache->bytes(); }

//===----------------------------------------------------------------------===//
// Events and ordering
//===----------------------------------------------------------------------===//

uint64_t KernelChecker::tick() {
  if (Clock < UINT32_MAX)
    return ++Clock;
  // The stamps would wrap: forget every record and start again. What was
  // recorded before is lost (a race across this point is missed; no
  // finding is made up: a shared byte written before it is not taken as
  // uninitialised until the next fresh block).
  Cache->clear();
  Clock = 1;
  LaunchStart = PhaseStart = BlockRunStart = SharedStale = 1;
  BlockSync = 0;
  std::fill(WarpSync.begin(), WarpSync.end(), 0);
  BlockRuns.assign(1, {1, CurBlock});
  UninitUnknown = true;
  return ++Clock;
}

void KernelChecker::beginPhase() {
  PhaseStart = tick();
  if (!ParamSlotsOpen)
    openParamSlots();
}

void KernelChecker::openParamSlots() {
  ParamSlotsOpen = true;
  // Out-of-bounds and unknown-extent accesses go to scratch memory, so the
  // bytes a kernel writes through an argument lie in its extent.
  // A private parameter's slot needs each thread's global index to be
  // its own: a one-dimensional grid of one-dimensional blocks, whose index
  // fits an i32 (PrivateParams.h).
  bool OneDimensional = Cfg.Grid.Y == 1 && Cfg.Grid.Z == 1 && Cfg.Block.Y == 1 &&
                        Cfg.Block.Z == 1 &&
                        uint64_t(Cfg.Grid.X) * Cfg.Block.X < (uint64_t(1) << 31);
  for (size_t P = 0; P < Params.size() && P < abi::CheckFastPrivateSlots; ++P) {
    const Region &R = Params[P];
    if (R.Param < 0 || !R.Known || R.End <= R.Begin)
      continue;
    bool Overlaps = false;
    for (size_t Q = 0; Q < Params.size() && !Overlaps; ++Q)
      Overlaps = Q != P && Params[Q].Param >= 0 && Params[Q].Known && Params[Q].Begin < R.End &&
                 R.Begin < Params[Q].End;
    if (Overlaps)
      continue;
    Slot[P] = {R.Begin, R.End - R.Begin};
    if (OneDimensional)
      Slot[abi::CheckFastPrivateSlots + P] = Slot[P];
  }
}

bool KernelChecker::allWritten(uint64_t Addr, uint64_t N) {
  auto Live = [&](const Access &P) { return P.Stamp != 0 && P.Stamp >= SharedStale; };
  for (uint64_t At = Addr, End = Addr + N; At < End;) {
    ShadowPage &P = Cache->page(At);
    uint64_t Off = At & (ShadowPage::Bytes - 1);
    unsigned G = unsigned(Off / 4);
    if (!P.isSplit(G)) {
      if (!Live(P.Granule[G].Write))
        return false;
      At += 4 - Off % 4; // the rest of the granule
      continue;
    }
    if (!Live(P.PerByte[Off].Write))
      return false;
    ++At;
  }
  return true;
}

void KernelChecker::openSharedSlot(const abi::CheckSite *S) {
  unsigned K = S->FastSlot;
  if (K < abi::CheckFastSharedSlots || K >= abi::CheckFastSlots || Slot[K].Size ||
      S->Kind == abi::CheckStore || S->Space != abi::CheckShared || !S->SharedBytes || !CurShared ||
      UninitUnknown)
    return;
  uint64_t &Looked = SlotLooked[K - abi::CheckFastSharedSlots];
  if (Looked == Clock) // no write of the array since (CheckElision.cpp)
    return;
  Looked = Clock;
  uint64_t Begin = uint64_t(uintptr_t(CurShared)) + S->SharedOffset;
  if (!allWritten(Begin, S->SharedBytes))
    return;
  Slot[K] = {Begin, S->SharedBytes};
  OpenShared.push_back(K);
}

void KernelChecker::enterBlock(uint64_t Block, char *Shared, bool Fresh) {
  CurBlock = Block;
  CurShared = Shared;
  for (unsigned K : OpenShared)
    Slot[K].Size = 0;
  OpenShared.clear();
  BlockSync = 0;
  WarpSync.assign((Cfg.Block.count() + 31) / 32, 0);
  BlockRunStart = tick();
  BlockRuns.emplace_back(BlockRunStart, Block);
  // A block's shared memory starts undefined: records older than its start
  // are another block's (or an earlier launch's). A resumed cooperative
  // block keeps its own memory (every block has its own there), and what
  // it wrote before in this launch.
  if (Fresh)
    UninitUnknown = false;
  SharedStale = Fresh ? BlockRunStart : LaunchStart;
}

void KernelChecker::sync(void *State, uint32_t Kind, uint64_t, uint32_t Warp) {
  auto &C = *static_cast<KernelChecker *>(static_cast<abi::CheckFastTable *>(State));
  uint64_t Now = C.tick();
  if (Kind == abi::CheckSyncThreads)
    C.BlockSync = Now;
  else if (Warp == abi::NoWarp)
    std::fill(C.WarpSync.begin(), C.WarpSync.end(), Now);
  else if (Warp < C.WarpSync.size())
    C.WarpSync[Warp] = Now;
}

LLVM_ATTRIBUTE_ALWAYS_INLINE bool KernelChecker::ordered(const Access &P, uint32_t Thread) const {
  if (P.Stamp < PhaseStart)
    return true;
  if (P.Stamp < BlockRunStart) // another block of this phase
    return false;
  if (P.Thread == Thread || P.Stamp < BlockSync)
    return true;
  uint32_t Warp = Thread / 32;
  return P.Thread / 32 == Warp && Warp < WarpSync.size() && P.Stamp < WarpSync[Warp];
}

uint64_t KernelChecker::blockOf(uint64_t Stamp) const {
  auto It = std::upper_bound(
      BlockRuns.begin(), BlockRuns.end(), Stamp,
      [](uint64_t S, const std::pair<uint64_t, uint64_t> &R) { return S < R.first; });
  return It == BlockRuns.begin() ? CurBlock : std::prev(It)->second;
}

uint32_t KernelChecker::addSite(const abi::CheckSite *S) {
  SiteSlot &Slot = SiteCache[(uintptr_t(S) >> 4) % std::size(SiteCache)];
  auto [It, New] = SiteIndex.try_emplace(S, uint32_t(Sites.size()));
  if (New) {
    if (Sites.size() < (1u << 20))
      Sites.push_back(S);
    else
      It->second = 0;
  }
  Slot.Site = S;
  Slot.Index = It->second;
  return It->second;
}

void *KernelChecker::scratch(uint64_t Bytes) {
  uint64_t Words = std::max<uint64_t>(8, (Bytes + 7) / 8);
  if (Scratch.size() < Words)
    Scratch.resize(Words);
  std::fill(Scratch.begin(), Scratch.end(), 0);
  return Scratch.data();
}

//===----------------------------------------------------------------------===//
// Findings
//===----------------------------------------------------------------------===//

std::string KernelChecker::threadString(uint32_t Thread) const {
  Dim3 T;
  T.X = Thread % Cfg.Block.X;
  T.Y = Thread / Cfg.Block.X % Cfg.Block.Y;
  T.Z = Thread / Cfg.Block.X / Cfg.Block.Y;
  return formatDim3(T);
}

std::string KernelChecker::blockString(uint64_t Block) const {
  Dim3 B;
  B.X = uint32_t(Block % Cfg.Grid.X);
  B.Y = uint32_t(Block / Cfg.Grid.X % Cfg.Grid.Y);
  B.Z = uint32_t(Block / Cfg.Grid.X / Cfg.Grid.Y);
  return formatDim3(B);
}

std::string KernelChecker::by(uint64_t Block, uint32_t Thread) const {
  return "thread " + threadString(Thread) + " of block " + blockString(Block);
}

static CheckFinding::Place placeOf(const abi::CheckSite *S) {
  CheckFinding::Place P;
  P.File = S->Module ? S->Module : "";
  P.Line = S->Line;
  P.Col = S->Col;
  P.SourceLine = S->SourceLine ? S->SourceLine : "";
  return P;
}

CheckFinding KernelChecker::located(CheckFinding::KindType Kind, const abi::CheckSite *S,
                                    uint64_t Block, uint32_t Thread, std::string Headline) const {
  CheckFinding F;
  F.Kind = Kind;
  F.At = placeOf(S);
  F.Block = Block;
  F.Thread = Thread;
  F.Headline = std::move(Headline);
  return F;
}

/// `FILE:LINE:COL: error: MSG` (or `note:`), the source line and a caret:
/// rendered as a compile error is (DiagnosticError: long lines windowed,
/// non-ASCII lines with their caret); without the source line where it is
/// not known. Ends in '\n'.
static std::string renderAt(const CheckFinding::Place &P, bool Note, const std::string &Msg) {
  std::string Source;
  if (P.Line && !P.SourceLine.empty())
    Source = std::string(P.Line - 1, '\n') + P.SourceLine + "\n";
  SourceLoc Loc;
  Loc.Line = P.Line;
  Loc.Col = std::max<uint32_t>(P.Col, 1);
  DiagnosticError D(P.File, Source, {{Loc, Msg}}, /*Truncated=*/false, ErrorKind::Check);
  std::string Text;
  llvm::raw_string_ostream OS(Text);
  D.log(OS);
  OS.flush();
  if (Note) {
    std::string Head = P.File;
    if (P.Line)
      Head += ":" + std::to_string(P.Line) + ":" + std::to_string(Loc.Col);
    Head += ": error: ";
    if (llvm::StringRef(Text).starts_with(Head))
      Text = Head.substr(0, Head.size() - 7) + "note: " + Text.substr(Head.size());
  }
  return Text;
}

void KernelChecker::addFinding(CheckFinding F) {
  if (limitReached())
    return;
  const std::string &File = F.Kind == CheckFinding::GPULimit ? F.Headline : F.At.File;
  if (!Seen.emplace(int(F.Kind), File, F.At.Line, F.At.Col, F.Other.File, F.Other.Line, F.Other.Col)
           .second)
    return;
  std::string Text;
  if (F.Kind == CheckFinding::GPULimit) {
    Text = "error: " + F.Headline;
  } else {
    Text = renderAt(F.At, /*Note=*/false, F.Headline);
    if (F.Kind == CheckFinding::DataRace)
      Text += renderAt(F.Other, /*Note=*/true, F.Note);
  }
  if (!Text.empty() && Text.back() == '\n')
    Text.pop_back();
  F.Text = std::move(Text);
  Findings.push_back(std::move(F));
}

void KernelChecker::stopIfLimit() {
  if (!limitReached() || !Jump)
    return;
  sigjmp_buf *J = Jump;
  Jump = nullptr;
  leaveFaultScope();
  siglongjmp(*J, 1);
}

bool KernelChecker::call(llvm::function_ref<void()> Run) {
  sigjmp_buf J;
  if (sigsetjmp(J, /*savemask=*/0)) {
    Jump = nullptr;
    return false;
  }
  Jump = &J;
  Run();
  Jump = nullptr;
  return true;
}

llvm::Error KernelChecker::takeError() {
  if (Findings.empty())
    return llvm::Error::success();
  return llvm::make_error<KernelCheckError>(Info.Name, std::move(Findings));
}

//===----------------------------------------------------------------------===//
// GPU limits
//===----------------------------------------------------------------------===//

/// The largest shared memory per block (static + dynamic) a kernel may opt
/// into on sm_\p Arch, in KiB.
static uint64_t optInSharedKiB(uint64_t Arch) {
  if (Arch >= 90)
    return 227;
  if (Arch >= 86)
    return 99;
  if (Arch >= 80)
    return 163;
  if (Arch >= 75)
    return 64;
  if (Arch >= 70)
    return 96;
  return 48;
}

bool KernelChecker::checkGPULimits(uint64_t Arch) {
  if (Arch == 0)
    Arch = 80;
  auto Limit = [&](std::string Headline) {
    CheckFinding F;
    F.Kind = CheckFinding::GPULimit;
    F.Headline = std::move(Headline);
    addFinding(std::move(F));
  };
  std::string K = "kernel '" + Info.Name + "'";
  constexpr uint64_t StaticMax = 48u << 10;
  if (StaticShared > StaticMax)
    Limit(K + " has " + std::to_string(StaticShared) +
          " bytes of static shared memory; a GPU allows " + std::to_string(StaticMax) +
          " (48 KiB) per block");
  if (Cfg.Block.count() > limits::MaxThreadsPerBlock)
    Limit(K + " is launched with blocks of " + std::to_string(Cfg.Block.count()) +
          " threads; a GPU allows " + std::to_string(limits::MaxThreadsPerBlock) + " per block");
  auto Over = [](const Dim3 &D, const uint32_t(&M)[3]) {
    return D.X > M[0] || D.Y > M[1] || D.Z > M[2];
  };
  auto Dims = [](const uint32_t(&M)[3]) {
    Dim3 D;
    D.X = M[0];
    D.Y = M[1];
    D.Z = M[2];
    return formatDim3(D);
  };
  if (Over(Cfg.Block, limits::MaxBlockDim))
    Limit(K + " is launched with block " + formatDim3(Cfg.Block) +
          "; a GPU allows block dimensions up to " + Dims(limits::MaxBlockDim));
  if (Over(Cfg.Grid, limits::MaxGridDim))
    Limit(K + " is launched with grid " + formatDim3(Cfg.Grid) +
          "; a GPU allows grid dimensions up to " + Dims(limits::MaxGridDim));
  uint64_t Total = StaticShared + Cfg.DynamicSharedBytes;
  uint64_t KiB = optInSharedKiB(Arch);
  if (Total > KiB << 10)
    Limit(K + " uses " + std::to_string(Total) + " bytes of shared memory per block (" +
          std::to_string(StaticShared) + " static, " + std::to_string(Cfg.DynamicSharedBytes) +
          " dynamic); sm_" + std::to_string(Arch) + " allows " + std::to_string(KiB << 10) + " (" +
          std::to_string(KiB) + " KiB) per block");
  return limitReached();
}

//===----------------------------------------------------------------------===//
// Accesses
//===----------------------------------------------------------------------===//

/// "read", "write", or the atomic's name.
static std::string verb(const abi::CheckSite *S) {
  if (S->Kind == abi::CheckLoad)
    return "read";
  if (S->Kind == abi::CheckStore)
    return "write";
  return S->What && *S->What ? S->What : "atomic";
}

static const char *memoryName(const abi::CheckSite *S) { return S->Memory ? S->Memory : ""; }

bool KernelChecker::locate(const abi::CheckSite *S, uint64_t Addr, Region &R) const {
  uint64_t Shared = uint64_t(uintptr_t(CurShared));
  uint64_t SharedTotal = StaticShared + Cfg.DynamicSharedBytes;
  if (S->Space == abi::CheckShared || S->Space == abi::CheckDynamicShared) {
    R.Shared = true;
    R.Name = memoryName(S);
    if (S->Space == abi::CheckDynamicShared) {
      R.Begin = Shared + StaticShared;
      R.End = R.Begin + Cfg.DynamicSharedBytes;
    } else if (S->SharedBytes) {
      R.Begin = Shared + S->SharedOffset;
      R.End = R.Begin + S->SharedBytes;
    } else {
      R.Begin = Shared;
      R.End = Shared + SharedTotal;
    }
    return true;
  }
  if (S->Param >= 0 && size_t(S->Param) < Params.size() && Params[S->Param].Param >= 0) {
    R = Params[S->Param];
    return true;
  }
  // By address: the arguments' buffers, the runtime's allocations, the
  // running block's shared memory.
  for (const Region &P : Params)
    if (P.Param >= 0 && P.Known && Addr >= P.Begin && Addr < P.End) {
      R = P;
      return true;
    }
  auto It = std::upper_bound(Allocations.begin(), Allocations.end(), Addr,
                             [](uint64_t V, const Region &A) { return V < A.Begin; });
  if (It != Allocations.begin() && Addr < std::prev(It)->End) {
    R = *std::prev(It);
    R.Name = memoryName(S);
    return true;
  }
  if (CurShared && Addr >= Shared && Addr < Shared + SharedTotal) {
    R.Begin = Shared;
    R.End = Shared + SharedTotal;
    R.Shared = true;
    R.Name = memoryName(S);
    return true;
  }
  return false;
}

LLVM_ATTRIBUTE_ALWAYS_INLINE bool KernelChecker::quickAccess(const abi::CheckSite *S,
                                                             uint32_t Thread, uint64_t A) {
  uint32_t N = S->Bytes;
  if ((N != 4 && N != 2 && N != 1) || (A & (N - 1)))
    return false; // (an access of 1, 2 or 4 bytes aligned lies in one granule)
  // The region, as locate() finds it for these two kinds of site.
  uint64_t Begin, End;
  bool Shared = S->Space != abi::CheckGlobal;
  if (!Shared) {
    if (S->Param < 0 || size_t(S->Param) >= Params.size())
      return false;
    const Region &R = Params[S->Param];
    if (R.Param < 0 || !R.Known)
      return false;
    Begin = R.Begin;
    End = R.End;
  } else if (S->Space == abi::CheckShared && S->SharedBytes) {
    Begin = uint64_t(uintptr_t(CurShared)) + S->SharedOffset;
    End = Begin + S->SharedBytes;
  } else {
    return false;
  }
  if (A < Begin || A > End || End - A < N)
    return false;
  ShadowPage &P = Cache->page(A);
  uint64_t Off = A & (ShadowPage::Bytes - 1);
  unsigned G = unsigned(Off / 4);
  // The records: the granule's while uniform (a whole-granule access), the
  // bytes' once split (a split granule's write of all 4 bytes makes it
  // uniform again: trackAccess does that).
  bool IsRead = S->Kind != abi::CheckStore, IsWrite = S->Kind != abi::CheckLoad;
  uint32_t Atomic = S->Kind == abi::CheckAtomic;
  ShadowByte *Recs;
  if (!P.isSplit(G)) {
    if (N != 4)
      return false;
    Recs = &P.Granule[G];
    N = 1;
  } else {
    if (N == 4 && IsWrite)
      return false;
    Recs = P.PerByte + Off;
  }
  // trackAccess's outcome when no record conflicts with this access (and,
  // for a shared read, each byte was written in the block).
  uint64_t Stale = Shared ? SharedStale : 0;
  auto Live = [&](const Access &P) { return P.Stamp != 0 && P.Stamp >= Stale; };
  auto Quiet = [&](const Access &P) __attribute__((always_inline)) {
    return P.Stamp < PhaseStart || !Live(P) || ordered(P, Thread);
  };
  auto Clear = [&](const Access &P) { return Quiet(P) || (Atomic && P.Atomic); };
  bool CheckUninit = IsRead && Shared && !UninitUnknown;
  for (uint32_t I = 0; I < N; ++I) {
    const ShadowByte &B = Recs[I];
    if (!Clear(B.Write) || (CheckUninit && !Live(B.Write)) ||
        (IsWrite && !(Clear(B.Read[0]) && Clear(B.Read[1]))))
      return false;
  }
  Access Cur;
  Cur.Stamp = Clock;
  Cur.Thread = Thread;
  Cur.Atomic = Atomic;
  Cur.Site = siteIndex(S);
  for (uint32_t I = 0; I < N; ++I) {
    ShadowByte &B = Recs[I];
    if (IsWrite) {
      B.Write = Cur;
      B.Read[0] = B.Read[1] = Access{};
    } else {
      (Quiet(B.Read[0]) ? B.Read[0] : B.Read[1]) = Cur;
    }
  }
  return true;
}

void *KernelChecker::access(void *State, const abi::CheckSite *Site, uint64_t Block,
                            uint32_t Thread, void *Addr, const void *Value) {
  auto &C = *static_cast<KernelChecker *>(static_cast<abi::CheckFastTable *>(State));
  void *To = Addr;
  if (LLVM_UNLIKELY(!C.quickAccess(Site, Thread, uint64_t(uintptr_t(Addr))))) {
    To = C.onAccess(Site, Block, Thread, Addr, Value);
    // Here, with no object of onAccess's left to destroy.
    C.stopIfLimit();
  }
  if (Site->FastSlot)
    C.openSharedSlot(Site);
  return To;
}

/// "element 8 (bytes 32..35)": the element of \p ElemBytes bytes at byte
/// \p Offset (negative before the start) of \p Bytes bytes.
static std::string elementAt(int64_t Offset, uint64_t Bytes, uint64_t ElemBytes) {
  int64_t E = int64_t(std::max<uint64_t>(1, ElemBytes));
  int64_t Elem = Offset >= 0 ? Offset / E : -((-Offset + E - 1) / E);
  return "element " + std::to_string(Elem) + " (bytes " + std::to_string(Offset) + ".." +
         std::to_string(Offset + int64_t(Bytes) - 1) + ")";
}

void *KernelChecker::onAccess(const abi::CheckSite *S, uint64_t Block, uint32_t Thread, void *Addr,
                              const void *Value) {
  uint64_t A = uint64_t(uintptr_t(Addr));
  uint64_t N = std::max<uint32_t>(1, S->Bytes);
  // A parameter's site: its region, without a copy (locate's first case
  // that applies to a global site).
  if (LLVM_LIKELY(S->Space == abi::CheckGlobal && S->Param >= 0 &&
                  size_t(S->Param) < Params.size() && Params[S->Param].Param >= 0)) {
    const Region &R = Params[S->Param];
    if (LLVM_UNLIKELY(!R.Known || A < R.Begin || A > R.End || R.End - A < N))
      return badAccess(S, Block, Thread, A, N, R, /*Located=*/true);
    trackAccess(S, Block, Thread, A, Value, R);
    return Addr;
  }
  Region R;
  bool Located = locate(S, A, R);
  if (LLVM_UNLIKELY(!Located || !R.Known || A < R.Begin || A > R.End || R.End - A < N))
    return badAccess(S, Block, Thread, A, N, R, Located);
  trackAccess(S, Block, Thread, A, Value, R);
  return Addr;
}

void *KernelChecker::badAccess(const abi::CheckSite *S, uint64_t Block, uint32_t Thread, uint64_t A,
                               uint64_t N, const Region &R, bool Located) {
  if (!Located || !R.Known) {
    std::string K = "in kernel '" + Info.Name + "'";
    std::string Through = !*memoryName(S) ? "" : " through '" + std::string(memoryName(S)) + "'";
    std::string H;
    if (!R.Known && R.Param >= 0) {
      H = verb(S) + " through '" + std::string(R.Name) + "' " + K +
          ", whose buffer size is unknown (argument " + std::to_string(R.Param + 1) +
          " was passed without an extent), by " + by(Block, Thread);
    } else {
      std::string Unknown;
      for (const Region &P : Params)
        if (P.Param >= 0 && !P.Known)
          Unknown += (Unknown.empty() ? "'" : ", '") + std::string(P.Name) + "'";
      H = verb(S) + Through + " " + K + " is outside every buffer the launch knows" +
          (Unknown.empty() ? "" : " (arguments passed without an extent: " + Unknown + ")") +
          ", by " + by(Block, Thread);
    }
    addFinding(located(CheckFinding::UnknownExtent, S, Block, Thread, std::move(H)));
    return scratch(N);
  }
  std::string K = "in kernel '" + Info.Name + "'";
  uint64_t Size = R.End - R.Begin;
  uint64_t Elem = std::max<uint32_t>(1, S->ElemBytes);
  std::string H = "out-of-bounds " + verb(S) + " of " + (R.Shared ? "shared '" : "'") +
                  std::string(R.Name) + "' " + K + ": " + elementAt(int64_t(A - R.Begin), N, Elem) +
                  " is outside its " + std::to_string(Size / Elem) + " element" +
                  (Size / Elem == 1 ? "" : "s") + " (" + std::to_string(Size) + " bytes), by " +
                  by(Block, Thread);
  addFinding(located(CheckFinding::OutOfBounds, S, Block, Thread, std::move(H)));
  return scratch(N);
}

/// A site no record can name (the table of sites is full).
static const abi::CheckSite UnknownSite{};

void KernelChecker::trackAccess(const abi::CheckSite *S, uint64_t Block, uint32_t Thread,
                                uint64_t Addr, const void *Value, const Region &R) {
  uint64_t N = std::max<uint32_t>(1, S->Bytes);
  bool IsRead = S->Kind != abi::CheckStore, IsWrite = S->Kind != abi::CheckLoad;
  uint32_t Atomic = S->Kind == abi::CheckAtomic;
  // Records older than the block's start are another block's use of the
  // same shared memory (or an earlier launch's): neither races nor
  // initialisation. Every record older than the phase is ordered.
  uint64_t Stale = R.Shared ? SharedStale : 0;
  bool CheckUninit = R.Shared && IsRead && !UninitUnknown;
  auto Live = [&](const Access &P) { return P.Stamp != 0 && P.Stamp >= Stale; };
  auto Conflicts = [&](const Access &P) {
    return P.Stamp >= PhaseStart && Live(P) && !(P.Atomic && Atomic) && !ordered(P, Thread);
  };
  // A plain store of the bytes memory holds now (asked only on a conflict).
  int Benign = -1;
  auto IsBenign = [&] {
    if (Benign < 0)
      Benign = !SameValueWrites && S->Kind == abi::CheckStore && Value &&
               std::memcmp(Value, reinterpret_cast<const void *>(uintptr_t(Addr)), N) == 0;
    return Benign == 1;
  };
  Access Cur;
  Cur.Stamp = Clock;
  Cur.Thread = Thread;
  Cur.Atomic = Atomic;
  Cur.Site = siteIndex(S);
  std::optional<Access> Other;
  uint64_t OtherByte = 0;
  bool Uninitialised = false;
  // Checks one byte's records (or a uniform granule's: the same for each
  // of its bytes, so the first conflicting byte is its first) at \p At.
  auto Step = [&](ShadowByte &B, uint64_t At) __attribute__((always_inline)) {
    if (!Other) {
      if (Conflicts(B.Write) && !(!B.Write.Atomic && IsBenign()))
        Other = B.Write;
      else if (IsWrite)
        for (const Access &Rd : B.Read)
          if (!Other && Conflicts(Rd))
            Other = Rd;
      if (Other)
        OtherByte = At;
    }
    if (CheckUninit && !Live(B.Write))
      Uninitialised = true;
    if (IsWrite) {
      B.Write = Cur;
      B.Read[0] = B.Read[1] = Access{};
      return;
    }
    // A read: in the first slot that holds nothing unordered before it by
    // another thread, else over the second.
    Access *Slot = &B.Read[1];
    for (Access &Rd : B.Read)
      if (!Live(Rd) || ordered(Rd, Thread)) {
        Slot = &Rd;
        break;
      }
    *Slot = Cur;
  };
  for (uint64_t At = Addr, End = Addr + N; At < End;) {
    ShadowPage &P = Cache->page(At);
    uint64_t Off = At & (ShadowPage::Bytes - 1);
    unsigned G = unsigned(Off / 4);
    if (Off % 4 == 0 && End - At >= 4) {
      // The whole granule.
      if (!P.isSplit(G)) {
        Step(P.Granule[G], At);
      } else {
        for (unsigned I = 0; I < 4; ++I)
          Step(P.PerByte[Off + I], At + I);
        if (IsWrite) { // every byte holds this write only: uniform again
          P.Granule[G] = P.PerByte[Off];
          P.Split[G / 64] &= ~(uint64_t(1) << (G % 64));
        }
      }
      At += 4;
      continue;
    }
    if (!P.isSplit(G))
      Cache->split(P, G);
    for (uint64_t Stop = std::min(End, At - Off % 4 + 4); At < Stop; ++At)
      Step(P.PerByte[At & (ShadowPage::Bytes - 1)], At);
  }
  if (LLVM_UNLIKELY(Other || Uninitialised))
    reportTracked(S, Block, Thread, Addr, R, Other ? &*Other : nullptr, OtherByte, Uninitialised);
}

void KernelChecker::reportTracked(const abi::CheckSite *S, uint64_t Block, uint32_t Thread,
                                  uint64_t Addr, const Region &R, const Access *Other,
                                  uint64_t OtherByte, bool Uninitialised) {
  std::string K = "in kernel '" + Info.Name + "'";
  // " element 3"; nothing for a shared scalar; the byte for shared memory
  // whose array the site does not know (a device function's: its offset
  // depends on the kernel that calls it).
  auto ElementOf = [&](const abi::CheckSite *Site, uint64_t At) -> std::string {
    if (Site->Space == abi::CheckShared && Site->SharedBytes == 0)
      return " (byte " + std::to_string(At - R.Begin) + " of the block's shared memory)";
    if (Site->Space == abi::CheckShared && Site->SharedBytes == Site->ElemBytes)
      return "";
    return " element " + std::to_string((At - R.Begin) / std::max<uint32_t>(1, Site->ElemBytes));
  };
  if (Other) {
    const abi::CheckSite *OtherSite = Other->Site ? Sites[Other->Site] : &UnknownSite;
    uint64_t OtherBlock = blockOf(Other->Stamp);
    uint32_t OtherThread = Other->Thread;
    std::string Name = "'" + std::string(R.Name) + "'";
    std::string OtherName =
        !*memoryName(OtherSite) ? Name : "'" + std::string(memoryName(OtherSite)) + "'";
    std::string H = "data race " + K + ": " + verb(S) + " of " + (R.Shared ? "shared " : "") +
                    Name + ElementOf(S, Addr) + " by " + by(Block, Thread);
    CheckFinding F = located(CheckFinding::DataRace, S, Block, Thread, std::move(H));
    F.Other = placeOf(OtherSite);
    F.OtherBlock = OtherBlock;
    F.OtherThread = OtherThread;
    const char *Why = OtherBlock != Block ? "no grid_sync() orders them"
                      : OtherThread / 32 == Thread / 32
                          ? "neither a sync_threads() nor a sync_warp() orders them"
                          : "no sync_threads() orders them";
    F.Note = "conflicts with this " + verb(OtherSite) + " of " + OtherName +
             ElementOf(OtherSite, OtherByte) + " by " + by(OtherBlock, OtherThread) + "; " + Why;
    addFinding(std::move(F));
  }
  if (Uninitialised)
    addFinding(located(CheckFinding::UninitialisedRead, S, Block, Thread,
                       verb(S) + " of uninitialised shared memory " + K + ": '" +
                           std::string(R.Name) + "'" + ElementOf(S, Addr) + " by " +
                           by(Block, Thread) + "; no thread of the block has written it"));
}

//===----------------------------------------------------------------------===//
// What the kernel's code finds itself
//===----------------------------------------------------------------------===//

void KernelChecker::report(void *State, const abi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                           uint64_t A, uint64_t B) {
  auto &C = *static_cast<KernelChecker *>(static_cast<abi::CheckFastTable *>(State));
  C.onReport(Site, Block, Thread, A, B);
  C.stopIfLimit();
}

void KernelChecker::onReport(const abi::CheckSite *S, uint64_t Block, uint32_t Thread, uint64_t A,
                             uint64_t B) {
  std::string K = "in kernel '" + Info.Name + "'";
  std::string What = S->What ? S->What : "";
  std::string In = "in " + by(Block, Thread);
  int64_t SA = int64_t(A);
  switch (S->Kind) {
  case abi::CheckLocalIndex:
    addFinding(located(CheckFinding::LocalIndex, S, Block, Thread,
                       "index " + std::to_string(SA) + " is out of range of " + What + " '" +
                           std::string(memoryName(S)) + "' (" + std::to_string(B) + " element" +
                           (B == 1 ? "" : "s") + ") " + K + ", " + In));
    return;
  case abi::CheckDivByZero:
    addFinding(located(CheckFinding::DivisionByZero, S, Block, Thread,
                       "integer division by zero " + K + ": " + std::to_string(SA) + " " + What +
                           " 0 " + In));
    return;
  case abi::CheckDivOverflow: {
    unsigned Bits = SA == INT8_MIN ? 8 : SA == INT16_MIN ? 16 : SA == INT32_MIN ? 32 : 64;
    addFinding(located(CheckFinding::DivisionOverflow, S, Block, Thread,
                       "integer overflow " + K + ": " + std::to_string(SA) + " " + What +
                           " -1 does not fit in " + std::to_string(Bits) + " bits " + In));
    return;
  }
  case abi::CheckShiftAmount: {
    // "x << 33" when the site names the left operand, else "<< 33".
    std::string Expr =
        (!*memoryName(S) ? "" : std::string(memoryName(S)) + " ") + What + " " + std::to_string(SA);
    std::string H = "shift amount " + std::to_string(SA) + " of '" + Expr + "' " +
                    (SA < 0 ? std::string("is negative")
                            : "is not below the width (" + std::to_string(B) + " bits)");
    addFinding(located(CheckFinding::ShiftAmount, S, Block, Thread, H + " " + K + " " + In));
    return;
  }
  case abi::CheckWarpLane:
    addFinding(located(CheckFinding::WarpLane, S, Block, Thread,
                       What + " " + K + " reads lane " + std::to_string(SA) + " of warp " +
                           std::to_string(Thread / 32) + " of block " + blockString(Block) +
                           ", which has " + std::to_string(B) + " lane" + (B == 1 ? "" : "s") +
                           " (the block has " + std::to_string(Cfg.Block.count()) +
                           " threads), in thread " + threadString(Thread)));
    return;
  default:
    return;
  }
}
