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
// it is older than the current phase's start; or it is of the same block
// and older than the block's last sync_threads(); or of the same warp and
// older than that warp's last sync_warp(); or of the same thread.
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
#include <vector>

namespace gridjit {

class KernelChecker {
public:
  /// A checker for a launch of \p K over \p Cfg whose descriptor has
  /// \p StaticSharedBytes; \p MaxFindings (0 is taken as 1) and
  /// \p SameValueWrites as LaunchOptions::CheckMaxFindings and
  /// CheckSameValueWrites.
  KernelChecker(const KernelInfo &K, const LaunchConfig &Cfg, uint64_t StaticSharedBytes,
                uint32_t MaxFindings, bool SameValueWrites);
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
  /// first); block \p Block, whose shared memory starts at \p Shared, is
  /// about to run (\p Fresh: from its start; false: a cooperative block
  /// resumed after a grid_sync, its shared memory kept).
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
  /// Bytes of shadow memory allocated now (a statistic for tests).
  uint64_t shadowBytes() const;

  /// hostabi::CheckAccessFn, CheckReportFn and CheckSyncFn with \p State a
  /// KernelChecker.
  static void *access(void *State, const hostabi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                      void *Addr, const void *Value);
  static void report(void *State, const hostabi::CheckSite *Site, uint64_t Block, uint32_t Thread,
                     uint64_t A, uint64_t B);
  static void sync(void *State, uint32_t Kind, uint64_t Block, uint32_t Warp);

  /// One access as shadow memory records it, in 24 bytes. Stamp 0: none
  /// (the clock starts at 1 and would take 2^52 events to run out; a
  /// block has at most 1024 threads).
  struct Access {
    const hostabi::CheckSite *Site;
    uint64_t Block;
    uint64_t Stamp : 52;
    uint64_t Thread : 11;
    uint64_t Atomic : 1;
  };
  static_assert(sizeof(Access) == 24, "shadow memory's cost per byte is 3 of these");
  /// The shadow of one byte: its last write and up to two unordered reads
  /// by distinct threads.
  struct ShadowByte {
    Access Write, Read[2];
  };

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
  void trackAccess(const hostabi::CheckSite *S, uint64_t Block, uint32_t Thread, uint64_t Addr,
                   const void *Value, const Region &R);
  bool ordered(const Access &P, uint64_t Block, uint32_t Thread) const;
  ShadowByte &shadow(uint64_t Addr);
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

  uint64_t Clock = 1;
  uint64_t PhaseStart = 0;
  uint64_t CurBlock = 0, CurBlockStart = 0;
  char *CurShared = nullptr;
  uint64_t BlockSync = 0;
  std::vector<uint64_t> WarpSync;

  /// The shadow: pages of ShadowPageBytes bytes' records, made on first use.
  static constexpr unsigned ShadowPageShift = 12;
  static constexpr uint64_t ShadowPageBytes = uint64_t(1) << ShadowPageShift;
  struct FreeDeleter {
    void operator()(ShadowByte *P) const;
  };
  llvm::DenseMap<uint64_t, std::unique_ptr<ShadowByte, FreeDeleter>> Shadow;
  uint64_t LastPage = ~uint64_t(0);
  ShadowByte *LastPagePtr = nullptr;

  std::vector<uint64_t> Scratch; ///< the zeroed area out-of-bounds accesses get

  std::vector<CheckFinding> Findings;
  /// The findings' positions (GPU limits: their headlines), for dedup.
  std::set<std::tuple<int, std::string, uint32_t, uint32_t, std::string, uint32_t, uint32_t>> Seen;
  sigjmp_buf *Jump = nullptr;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_KERNELCHECKER_H
