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
/// How many regions mapGuarded has mapped in this process (a statistic
/// for tests: a launch that reuses kept block memory maps none).
uint64_t guardedMappingsMade();
/// Unmaps the region of \p L whose memory starts at \p Memory.
void unmapGuarded(const GuardedLayout &L, char *Memory);

/// Guarded regions of one guard size, kept for reuse when freed: freed
/// regions of up to MaxKeptPages data pages are kept (KeptPerClass of each
/// size, MaxKeptBytes of data pages in all; larger ones, and any beyond
/// that, are unmapped at once) and handed out again, zeroed, so that a
/// program that allocates and frees them in a loop pays no system call.
/// A region is handed out again only for the same number of data pages,
/// so that the memory still ends where the rear guard starts. Thread-safe;
/// the lock is held only to take or put back a region. In a child of
/// fork() the kept regions are the child's own copies (private mappings)
/// and are reused there; a region another thread had taken when the
/// process forked is never put back in the child (that thread is not
/// there), so it stays mapped, unused.
class GuardedBufferPool {
public:
  /// A pool for regions between guards of \p Guard bytes (a whole number
  /// of pages).
  GuardedBufferPool(uint64_t Guard, unsigned MaxKeptPages, uint64_t MaxKeptBytes);
  GuardedBufferPool(const GuardedBufferPool &) = delete;
  GuardedBufferPool &operator=(const GuardedBufferPool &) = delete;
  /// Unmaps the regions kept for reuse (not the live ones: a region must
  /// not outlive its pool).
  ~GuardedBufferPool();
  /// \p Bytes of zeroed memory, or null (errno set) when the system
  /// refuses the mapping.
  char *allocate(uint64_t Bytes);
  /// Frees a region that allocate(\p Bytes) returned: kept for reuse
  /// where the limits allow, else unmapped.
  void free(char *Memory, uint64_t Bytes);
  /// Unmaps a region that allocate(\p Bytes) returned, never keeping it.
  void discard(char *Memory, uint64_t Bytes);

  /// At most this many regions of each size are kept.
  static constexpr unsigned KeptPerClass = 256;

private:
  /// The layout of \p Bytes in this pool (allocate checked it fits).
  GuardedLayout layout(uint64_t Bytes) const;
  const uint64_t Guard;
  const uint64_t MaxKeptBytes;
  std::mutex M;
  uint64_t KeptNow = 0; ///< bytes of the data pages kept
  /// Kept[k]: mapping bases of regions with k + 1 data pages.
  std::vector<std::vector<char *>> Kept;
  ForkHooks Fork{M, nullptr}; ///< last: see ForkHooks
};

/// The host runtime's device buffers: 64 KiB guards, regions of up to 16
/// pages kept, 4 MiB in all.
inline constexpr unsigned BufferKeptPages = 16;
inline constexpr uint64_t BufferKeptBytes = 4u << 20;

/// Block memory (each worker's shared memory and frames, a cooperative
/// grid's whole state): one-page guards; regions of up to 1 MiB of data
/// are kept for the next launch, 4 MiB in all per runtime. A launch whose
/// blocks need more maps its memory and unmaps it when it ends, as every
/// launch did before block memory was kept.
inline constexpr unsigned BlockKeptPages = 256;
inline constexpr uint64_t BlockKeptBytes = 4u << 20;

/// One launch's hold on a region of a pool's (the memory of one worker,
/// or of a cooperative grid), given back when it goes out of scope.
class BlockMemory {
public:
  explicit BlockMemory(GuardedBufferPool &Pool) : Pool(Pool) {}
  BlockMemory(const BlockMemory &) = delete;
  BlockMemory &operator=(const BlockMemory &) = delete;
  ~BlockMemory();
  /// \p Bytes (at least 64, 64-byte aligned), zeroed; false when the
  /// memory is not there.
  bool allocate(uint64_t Bytes);
  char *get() const { return Mem; }
  /// A kernel faulted while it ran in this memory: unmap it when the launch
  /// ends instead of keeping it (whatever state a faulting kernel left is
  /// never reused).
  void discard() { Discard = true; }

private:
  GuardedBufferPool &Pool;
  uint64_t Bytes = 0;
  char *Mem = nullptr;
  bool Discard = false;
};

} // namespace gridjit

#endif // GRIDJIT_LIB_RUNTIME_GUARDEDMEMORY_H
