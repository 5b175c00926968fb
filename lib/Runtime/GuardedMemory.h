//===- GuardedMemory.h - Kernel memory between guard regions ----*- C++ -*-===//
//
// Part of gridjit (internal header). Every byte a host kernel is given to
// write - the runtime's device buffers and each block's shared memory and
// frames - lies in its own mapping between two inaccessible guard regions,
// away from the heap and the stacks that hold the runtime's and the
// application's state. A kernel that runs off either end of its memory
// faults (and the host runtime turns the fault into a KernelFaultError,
// KernelFaults.h) instead of overwriting malloc's metadata or another
// object (docs/Runtime.md, "Device buffers between guard pages").
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_RUNTIME_GUARDEDMEMORY_H
#define GRIDJIT_LIB_RUNTIME_GUARDEDMEMORY_H

#include "gridjit/Support/ForkSafety.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace gridjit {

/// The system's page size.
uint64_t pageBytes();
/// The guard regions of device buffers and signal stacks: 64 KiB (a whole
/// number of pages; one page where pages are larger). A write up to this
/// far past the end of a buffer's memory, or before its start, faults.
uint64_t bufferGuardBytes();

/// Where a region of \p Bytes (at least 64, rounded up to a multiple of
/// 64) lies in its mapping: [guard][data pages][guard], the memory placed
/// at the end of the data pages so that its end meets the rear guard.
struct GuardedLayout {
  uint64_t Bytes = 0;     ///< usable bytes: Bytes asked for, rounded up
  uint64_t DataBytes = 0; ///< the accessible pages
  uint64_t Guard = 0;     ///< bytes of each guard region
  uint64_t Length = 0;    ///< the whole mapping, both guards included
  /// The layout of \p Bytes between guards of \p Guard bytes (a whole
  /// number of pages); false when it does not fit in the address space.
  bool compute(uint64_t Bytes, uint64_t Guard);
  /// The memory's start in a mapping at \p Base.
  char *memory(char *Base) const { return Base + Guard + (DataBytes - Bytes); }
  /// The mapping's start, from the memory's.
  char *base(char *Memory) const { return Memory - (DataBytes - Bytes) - Guard; }
};

/// Maps a region for \p L: inaccessible guards, zero-filled data pages.
/// Null (with errno set) when the system refuses.
char *mapGuarded(const GuardedLayout &L);
/// Unmaps the region of \p L whose memory starts at \p Memory.
void unmapGuarded(const GuardedLayout &L, char *Memory);

/// Memory for one block's shared memory and frames, owned by one launch:
/// between guard pages (one page each: a launch maps it for each worker,
/// and a larger reservation costs the launch time), zero-filled (fresh
/// anonymous pages).
class BlockMemory {
public:
  BlockMemory() = default;
  BlockMemory(const BlockMemory &) = delete;
  BlockMemory &operator=(const BlockMemory &) = delete;
  ~BlockMemory();
  /// Maps \p Bytes (at least 64, 64-byte aligned); false when the memory
  /// is not there.
  bool allocate(uint64_t Bytes);
  char *get() const { return Mem; }

private:
  GuardedLayout L;
  char *Mem = nullptr;
};

/// The host runtime's device buffers: each in its own guarded region,
/// 64-byte aligned and zeroed. Freed regions of up to KeptClasses pages
/// are kept (KeptPerClass of each size, KeptBytes in all) and handed out
/// again, zeroed, so that a program that allocates and frees small
/// buffers in a loop pays no system call for them. Thread-safe.
class GuardedBufferPool {
public:
  GuardedBufferPool() = default;
  GuardedBufferPool(const GuardedBufferPool &) = delete;
  GuardedBufferPool &operator=(const GuardedBufferPool &) = delete;
  /// Unmaps the regions kept for reuse (not the live buffers: a buffer
  /// must not outlive its runtime).
  ~GuardedBufferPool();
  /// \p Bytes of zeroed memory, or null (errno set) when the system
  /// refuses the mapping.
  char *allocate(uint64_t Bytes);
  /// Frees a buffer that allocate(\p Bytes) returned.
  void free(char *Memory, uint64_t Bytes);

private:
  /// Regions whose data pages number 1 to KeptClasses are kept.
  static constexpr unsigned KeptClasses = 16;
  /// At most this many regions of each class are kept...
  static constexpr unsigned KeptPerClass = 256;
  /// ... and at most this many bytes of data pages in all.
  static constexpr uint64_t KeptBytes = 4u << 20;
  std::mutex M;
  uint64_t KeptNow = 0; ///< bytes of the data pages kept
  /// Kept[k]: mapping bases of regions with k + 1 data pages.
  std::vector<char *> Kept[KeptClasses];
  ForkHooks Fork{M, nullptr}; ///< last: see ForkHooks
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_GUARDEDMEMORY_H
