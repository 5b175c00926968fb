//===- HostRuntime.h - Run host-target kernels on a worker pool -*- C++ -*-===//
//
// Part of gridjit. A HostRuntime, the host target's gridjit::Runtime
// (Runtime.h, docs/Runtime.md), loads artifacts made by the host target
// (createHostTarget) into their own ORC LLJIT and launches their kernels:
// the blocks of a launch run in parallel on the runtime's worker pool, the
// threads of each block in the thread loops the compiler generated
// (docs/HostTarget.md).
//
// Threads belong to the caller: the pool has exactly the size asked for
// (default: the CPUs this process may run on), is owned by the HostRuntime
// object, and gridjit never calls OpenMP, reads or sets OMP_NUM_THREADS or
// any other environment variable, or changes another library's settings.
//
// Thread safety: a HostRuntime and its LoadedModules may be used from any
// number of threads at once; launches from different threads share the
// pool. A LoadedModule must outlive the launches that use it.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_HOSTRUNTIME_H
#define GRIDJIT_RUNTIME_HOSTRUNTIME_H

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>

namespace gridjit {

/// Options of a HostRuntime.
struct HostRuntimeOptions {
  /// Threads that run blocks (the calling thread of a launch counts as
  /// one). 0 (the default): the number of CPUs this process may run on
  /// (sched_getaffinity).
  unsigned NumThreads = 0;
  /// The host's co-residency limit for cooperative (grid_sync) launches:
  /// the most blocks such a launch may have. Every block of a cooperative
  /// grid keeps its state between grid-wide phases. Default 1024.
  uint32_t MaxCooperativeBlocks = 1024;
  /// The most bytes of shared memory (static and dynamic) one block may
  /// use. Default 1 MiB.
  uint64_t MaxSharedBytes = 1 << 20;
  /// Catch a kernel's memory faults (LaunchOptions::CatchFaults, which may
  /// turn it off per launch; docs/Runtime.md, "Catching a kernel's
  /// faults"). Off: this runtime never installs a signal handler, its
  /// threads get no alternate signal stacks, and a kernel's fault ends the
  /// process as it would without gridjit. Default on.
  bool CatchFaults = true;
};

/// Loads and launches host kernels: the Runtime of the host target.
/// Device memory is host memory (allocate gives zeroed, 64-byte aligned
/// memory, each buffer in a mapping of its own between guard regions so
/// that a kernel's write past it faults; copies are memcpy), so a kernel
/// may also be given plain host pointers (KernelArg::pointer). Launches are synchronous: launch
/// returns when every block has finished, synchronize() has nothing to wait for, and a launch
/// naming a stream (LaunchOptions::Stream) is rejected. Thread-safe.
class HostRuntime final : public Runtime {
public:
  /// Creates a runtime and its worker pool. Errors: the native JIT cannot
  /// be set up.
  static llvm::Expected<std::unique_ptr<HostRuntime>> create(const HostRuntimeOptions &Opts = {});
  ~HostRuntime() override;

  /// Threads that run blocks (including a launch's calling thread).
  unsigned getNumThreads() const;
  const HostRuntimeOptions &getOptions() const;
  /// The CPUs this process may run on (sched_getaffinity), at least 1.
  static unsigned availableCPUs();
  /// A launch's scheduling rule (docs/HostTarget.md, "Scheduling"): the
  /// workers of a launch of \p NumBlocks blocks of \p BlockThreads threads
  /// take chunks of this many consecutive blocks from one counter:
  /// NumBlocks / (16 * Workers), or 1 where that is at most 1 (so that a
  /// fault names its block), else at least MinChunkThreads threads. A
  /// cooperative launch hands out single blocks.
  static uint64_t chunkBlocks(uint64_t NumBlocks, uint64_t BlockThreads, unsigned Workers);
  /// The fewest threads in a chunk: a handoff of a chunk to another CPU
  /// costs about as much as this many threads of a small kernel.
  static constexpr uint64_t MinChunkThreads = 2048;

  /// Loads \p A (made by the host target for this CPU) into a new LLJIT.
  /// Errors: another target's artifact, an object that does not link, a
  /// kernel whose entry or descriptor is missing or of another ABI version.
  llvm::Expected<std::unique_ptr<LoadedModule>> load(const Artifact &A) override;

  /// Runs \p Kernel over \p Config with \p Args and returns when every
  /// block has finished (Runtime::launch). Before anything runs it checks
  /// the configuration (dimensions, block size, shared memory, the
  /// cooperative limit) and the arguments (count and types against the
  /// kernel's parameters); a synchronisation point reached by only part of
  /// a block or warp, or a grid_sync reached by only some blocks, stops the
  /// launch with an error naming the kernel and the source line.
  using Runtime::launch;
  /// As Runtime::launch, filling \p Stats (if not null).
  llvm::Error launch(LoadedModule &M, llvm::StringRef Kernel, const LaunchConfig &Config,
                     llvm::ArrayRef<KernelArg> Args, LaunchStats *Stats);

  /// Launches are synchronous: always succeeds.
  llvm::Error synchronize() override;

private:
  struct Impl;
  explicit HostRuntime(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;

  llvm::Expected<uint64_t> allocateMemory(uint64_t Bytes) override;
  llvm::Error freeMemory(uint64_t Addr, uint64_t Bytes) override;
  llvm::Error writeMemory(uint64_t Addr, const void *Src, uint64_t Bytes) override;
  llvm::Error readMemory(void *Dst, uint64_t Addr, uint64_t Bytes) override;
  llvm::Error launchKernel(LoadedModule &M, const KernelInfo &Kernel, const LaunchConfig &Config,
                           llvm::ArrayRef<KernelArg> Args, const LaunchOptions &Opts) override;
  /// Copies into the global of the JIT-ed module.
  llvm::Error writeConstant(LoadedModule &M, const ConstantInfo &C, const void *Data) override;
};

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_HOSTRUNTIME_H
