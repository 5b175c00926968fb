//===- KernelChecker.h - The run-time half of checked launches --*- C++ -*-===//
//
// Part of gridjit (internal header). A launch of checked code
// (hostabi::Descriptor::Checked) gets one KernelChecker: the launch's known
// memory (each pointer argument's buffer, the runtime's allocations, the
// running block's shared memory), shadow memory recording the last write
// and the unordered reads of each byte, a launch-wide clock of
// synchronisation events, and the findings. Checked code reaches it through
// the BlockContext's CheckState and the three functions access(), report()
// and sync() (hostabi::CheckAccessFn, CheckReportFn, CheckSyncFn). The host
// runtime runs a checked launch's blocks one at a time, in order, on one
// thread (docs/Check.md), so the checker takes no lock and its findings
// are deterministic.
//
// Ordering: every synchronisation event (a block's start, a sync_threads()
// of the running block, a sync_warp() of one of its warps, the start of a
// grid-wide phase) advances the clock and is recorded; an access is stamped
// with the clock. A recorded access is ordered before the current one iff
// it is older than the current phase's start (so every record of an
// earlier launch is); or it is of the same block and older than the
// block's last sync_threads(); or of the same warp and older than that
// warp's last sync_warp(); or of the same thread. Blocks run one at a
// time, so a record of the current phase is of the running block iff it
// is not older than the block run's start.
//
// The shadow and its clock live in a ShadowCache that the runtime keeps
// from one checked launch to the next (HostRuntime: one per runtime, lent
// to one launch at a time), so a launch does not pay for allocating and
// zeroing shadow pages again.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_KERNELCHECKER_H
#define GRIDJIT_LIB_RUNTIME_KERNELCHECKER_H

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/Support/Error.h"

#include <csetjmp>
#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

namespace gridjit {

/// One access as shadow memory records it, in 8 bytes: its stamp (0:
/// none), thread (a block has at most 1024 threads), whether atomic, and
/// its site (an index into the launch's table of sites; 0: a site past the
/// table's 2^20 - 1, reported at an unknown position). Its block is not
/// recorded: blocks run one at a time, so it is the block whose run the
/// stamp falls in (KernelChecker::blockOf).
struct ShadowAccess {
  uint64_t Stamp : 32;
  uint64_t Thread : 11;
  uint64_t Atomic : 1;
  uint64_t Site : 20;
};
static_assert(sizeof(ShadowAccess) == 8, "a shadow record is 8 bytes");

/// The shadow of one byte (or of a uniform 4-byte granule): its last write
/// and up to two unordered reads by distinct threads.
struct ShadowRecords {
  ShadowAccess Write, Read[2];
};
static_assert(sizeof(ShadowRecords) == 24, "three records");

/// The shadow of 4 KiB of memory: one ShadowRecords per aligned 4-byte
/// granule while its 4 bytes' records are the same (every access so far
/// was aligned and of 4 or 8 bytes), and per byte (Bytes, made on the
/// first split in the page) once a smaller or unaligned access split the
/// granule (Split's bit); an aligned write of the whole granule makes it
/// uniform again. Checking a uniform granule once gives what checking each
/// of its bytes would: per-byte semantics exactly, at 6 bytes of shadow
/// per byte.
struct ShadowPage {
  static constexpr unsigned Shift = 12;
  static constexpr uint64_t Bytes = uint64_t(1) << Shift;
  static constexpr unsigned Granules = Bytes / 4;
  ShadowRecords Granule[Granules];
  uint64_t Split[Granules / 64];
  ShadowRecords *PerByte; ///< Bytes records, or null
  bool isSplit(unsigned G) const { return Split[G / 64] >> (G % 64) & 1; }
};

/// Shadow memory and its clock, kept across checked launches: ShadowPages
/// (24 KiB and a bit each; 96 KiB more for a page with split granules),
/// made zeroed on first touch and kept. The clock never goes back while the
/// pages are kept, so every record of an earlier launch is older than a
/// later launch's start: ordered before everything it does, and not an
/// initialisation of a block's shared memory. Bounded: a launch that
/// starts with more than the cap's bytes of shadow, or with the clock past
/// 2^31, drops every page and restarts the clock (a launch itself may grow
/// past the cap). Not thread-safe: one launch uses it at a time
/// (HostRuntime lends it under a lock it does not hold while the kernel
/// runs; a concurrent checked launch gets a fresh one).
class ShadowCache {
public:
  /// The default cap: 1 GiB of shadow (about 170 MiB of memory touched by
  /// 4-byte accesses, 34 MiB by byte accesses).
  static constexpr uint64_t DefaultCapBytes = uint64_t(1) << 30;

  explicit ShadowCache(uint64_t CapBytes = DefaultCapBytes) : CapBytes(CapBytes) {}
  ~ShadowCache();
  ShadowCache(const ShadowCache &) = delete;
  ShadowCache &operator=(const ShadowCache &) = delete;

  /// Bytes of shadow memory held now.
  uint64_t bytes() const;
  /// Drops every page and restarts the clock.
  void clear();
  /// A launch starts: clears when over the cap or when the clock is past
  /// 2^31 (a launch then has 2^31 events before the clock wraps; see
  /// KernelChecker::tick).
  void beginLaunch();
  /// The shadow page of the memory page holding \p Addr.
  ShadowPage &page(uint64_t Addr) {
    uint64_t P = Addr >> ShadowPage::Shift;
    Recent &R = RecentPages[P % NumRecent];
    if (R.Page != P) {
      R.Ptr = lookup(P);
      R.Page = P;
    }
    return *R.Ptr;
  }
  /// Splits granule \p G of \p P: each of its bytes gets its records.
  void split(ShadowPage &P, unsigned G);

  /// The clock: the last stamp given (0: none yet).
  uint64_t Clock = 0;

private:
  ShadowPage *lookup(uint64_t Page);
  struct FreeDeleter {
    void operator()(ShadowPage *P) const;
  };
  uint64_t CapBytes;
  uint64_t PerByteBytes = 0;
  llvm::DenseMap<uint64_t, std::unique_ptr<ShadowPage, FreeDeleter>> Pages;
  /// The pages used last, direct-mapped by page number: a kernel that
  /// streams through a few buffers finds each one's page here.
  struct Recent {
    uint64_t Page = ~uint64_t(0);
    ShadowPage *Ptr = nullptr;
  };
  static constexpr unsigned NumRecent = 16;
  Recent RecentPages[NumRecent];
};

/// A launch's checker. Its first part is the table of the inline fast path
/// of checked code (hostabi::CheckFastTable), which the BlockContext's
/// CheckState points to.
class KernelChecker : public hostabi::CheckFastTable {
public:
  /// A checker for a launch of \p K over \p Cfg whose descriptor has
  /// \p StaticSharedBytes; \p MaxFindings (0 is taken as 1) and
  /// \p SameValueWrites as LaunchOptions::CheckMaxFindings and
  /// CheckSameValueWrites.
  /// \p Cache: the shadow to use (kept by the caller across launches, one
  /// launch at a time); null: a shadow of this checker's own.
  KernelChecker(const KernelInfo &K, const LaunchConfig &Cfg, uint64_t StaticSharedBytes,
                uint32_t MaxFindings, bool SameValueWrites, ShadowCache *Cache = nullptr);
  ~KernelChecker();
  KernelChecker(const KernelChecker &) = delete;
  KernelChecker &operator=(const KernelChecker &) = delete;

  /// Pointer argument \p Index (0-based) points to \p Addr; \p Bytes: the
  /// bytes from there the kernel may reach, std::nullopt when unknown.
  void setPointerArg(unsigned Index, uint64_t Addr, std::optional<uint64_t> Bytes);
  /// Other memory the launch knows ([Addr, Addr + Bytes): an allocation of
  /// the runtime), found by address for an access that names no argument.
  void addAllocation(uint64_t Addr, uint64_t Bytes);

  /// Records a finding for each GPU limit (of sm_\p Arch) the kernel or the
  /// launch exceeds. True when that reached the finding limit (the launch
  /// must not run).
  bool checkGPULimits(uint64_t Arch);

  /// The runtime's events: a grid-wide phase starts (every launch has a
  /// first; the parameters' fast-path slots open then); block \p Block, whose shared memory starts
  /// at \p Shared, is about to run (\p Fresh: from its start; false: a cooperative block resumed
  /// after a grid_sync, its shared memory kept).
  void beginPhase();
  void enterBlock(uint64_t Block, char *Shared, bool Fresh);

  /// Calls \p Run (which calls the kernel's entry) in a scope that a
  /// finding reaching the limit leaves by a jump out of the kernel's frames
  /// (after clearing the fault-catching scope inside it, if any). False
  /// when it was left so.
  bool call(llvm::function_ref<void()> Run);
  /// The finding limit was reached: the launch must stop.
  bool limitReached() const { return Findings.size() >= MaxFindings; }

  /// Points \p C's Check* fields at this checker.
  void bind(hostabi::BlockContext &C);

  /// What was found, in order.
  const std::vector<CheckFinding> &findings() const { return Findings; }
  /// A KernelCheckError holding the findings, or success when there are none.
  llvm::Error takeError();
  /// Bytes of shadow memory held now (a statistic for tests).
  uint64_t shadowBytes() const;

  /// hostabi::CheckAccessFn, CheckReportFn and CheckSyncFn with \p State a
  /// KernelChecker (as the CheckFastTable it starts with).
  static void *access(void *State, const hostabi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                      void *Addr, const void *Value);
  static void report(void *State, const hostabi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                     uint64_t A, uint64_t B);
  static void sync(void *State, uint32_t Kind, uint64_t Block, uint32_t Warp);

  using Access = ShadowAccess;
  using ShadowByte = ShadowRecords;

private:
  /// A known memory range, and how to name it.
  struct Region {
    uint64_t Begin = 0, End = 0;
    const char *Name = ""; ///< the argument's or the site's memory name
    bool Shared = false;
    bool Known = true; ///< false: a pointer argument without an extent
    int Param = -1;
  };

  void *onAccess(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread, void *Addr,
                 const void *Value);
  void onReport(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread, uint64_t A,
                uint64_t B);
  /// The region \p S's access at \p Addr must lie in; false when none is
  /// known (an unknown-extent finding is due).
  bool locate(const hostabi::CheckSite *S, uint64_t Addr, Region &R) const;
  /// The common case, with few branches: an aligned load, store or atomic
  /// of 1, 2 or 4 bytes through a parameter or a static shared array, in
  /// bounds, whose records (its uniform granule's, or its bytes' in a split
  /// granule) hold nothing it conflicts with: records it as trackAccess
  /// would and returns true. False: nothing done.
  bool quickAccess(const hostabi::CheckSite *S, uint32_t Thread, uint64_t A);
  /// An access outside the region it must lie in, or with none: a finding;
  /// returns the zeroed scratch the access gets instead.
  [[gnu::noinline]] void *badAccess(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread,
                                    uint64_t A, uint64_t N, const Region &R, bool Located);
  /// trackAccess's findings: a race with \p Other (at \p OtherByte) and/or
  /// an uninitialised read.
  [[gnu::noinline]] void reportTracked(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread,
                                       uint64_t Addr, const Region &R, const Access *Other,
                                       uint64_t OtherByte, bool Uninitialised);
  void trackAccess(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread, uint64_t Addr,
                   const void *Value, const Region &R);
  bool ordered(const Access &P, uint32_t Thread) const;
  /// Opens the fast-path slot of each pointer argument whose extent is
  /// known and whose memory no other pointer argument's overlaps.
  void openParamSlots();
  /// Opens \p S's shared-array slot (CheckSite::FastSlot) when every byte
  /// of the array was written in the running block (looked at once per
  /// synchronisation interval).
  void openSharedSlot(const hostabi::CheckSite *S);
  /// Whether each byte of [Addr, Addr + N) of the running block's shared
  /// memory holds a write of this block run.
  bool allWritten(uint64_t Addr, uint64_t N);
  /// Advances the clock for an event; when it would wrap, drops the shadow
  /// and restarts it (races across the wrap are missed; uninitialised reads
  /// are not reported until the next fresh block: never a false finding).
  uint64_t tick();
  /// The index of \p S in Sites, added on first use.
  uint32_t siteIndex(const hostabi::CheckSite *S) {
    const SiteSlot &Slot = SiteCache[(uintptr_t(S) >> 4) % std::size(SiteCache)];
    return Slot.Site == S ? Slot.Index : addSite(S);
  }
  uint32_t addSite(const hostabi::CheckSite *S);
  /// The block whose run \p Stamp (of this launch) falls in.
  uint64_t blockOf(uint64_t Stamp) const;
  void *scratch(uint64_t Bytes);

  /// Adds a finding unless one with the same positions was found before.
  void addFinding(CheckFinding F);
  /// Leaves the kernel (call()'s scope) when the limit is reached.
  void stopIfLimit();
  std::string threadString(uint32_t Thread) const;
  std::string blockString(uint64_t Block) const;
  std::string by(uint64_t Block, uint32_t Thread) const;
  CheckFinding located(CheckFinding::KindType Kind, const hostabi::CheckSite *S, uint64_t Block,
                       uint32_t Thread, std::string Headline) const;

  const KernelInfo &Info;
  const LaunchConfig Cfg;
  const uint64_t StaticShared;
  const uint32_t MaxFindings;
  const bool SameValueWrites;

  std::vector<Region> Params;      ///< by argument index (Begin == End == 0 for scalars)
  std::vector<Region> Allocations; ///< sorted by Begin

  std::unique_ptr<ShadowCache> OwnCache;
  ShadowCache *Cache;
  uint64_t &Clock;
  uint64_t LaunchStart = 0, PhaseStart = 0;
  uint64_t CurBlock = 0, BlockRunStart = 0;
  /// Shared-memory records older than this are another block's (or an
  /// earlier launch's): neither races nor initialisation.
  uint64_t SharedStale = 0;
  /// The clock wrapped in this block run (tick): skip uninitialised reads.
  bool UninitUnknown = false;
  char *CurShared = nullptr;
  uint64_t BlockSync = 0;
  std::vector<uint64_t> WarpSync;
  /// (stamp of a block run's start, block), in order: blockOf.
  std::vector<std::pair<uint64_t, uint64_t>> BlockRuns;

  /// The sites this launch's records name (index 0: unknown), a map to
  /// their index, and a direct-mapped cache of it.
  std::vector<const hostabi::CheckSite *> Sites;
  llvm::DenseMap<const hostabi::CheckSite *, uint32_t> SiteIndex;
  struct SiteSlot {
    const hostabi::CheckSite *Site = nullptr;
    uint32_t Index = 0;
  };
  SiteSlot SiteCache[64];

  bool ParamSlotsOpen = false;
  /// The shared-array slots open now (closed when a block starts), and the
  /// clock when each was last looked at.
  std::vector<unsigned> OpenShared;
  uint64_t SlotLooked[hostabi::CheckFastSlots - hostabi::CheckFastSharedSlots] = {};

  std::vector<uint64_t> Scratch; ///< the zeroed area out-of-bounds accesses get

  std::vector<CheckFinding> Findings;
  /// The findings' positions (GPU limits: their headlines), for dedup.
  std::set<std::tuple<int, std::string, uint32_t, uint32_t, std::string, uint32_t, uint32_t>> Seen;
  sigjmp_buf *Jump = nullptr;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_KERNELCHECKER_H
