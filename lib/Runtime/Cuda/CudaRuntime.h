//===- CudaRuntime.h - The runtime of the nvptx target, on the CUDA driver -*- C++ -*-===//
//
// Part of gridjit (internal). CudaRuntime runs the PTX artifacts of the
// nvptx target on one CUDA device through a cuda::Driver it owns: the
// device's primary context made current in every calling thread, device
// memory with cuMemAlloc, PTX loaded with the driver JIT's logs captured,
// and launches checked against the device's and the function's limits
// before cuLaunchKernel / cuLaunchCooperativeKernel (docs/CUDA.md,
// "Running kernels"). createRuntime(TargetKind::NVPTX, ...) makes one.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_CUDA_CUDARUNTIME_H
#define GRIDJIT_RUNTIME_CUDA_CUDARUNTIME_H

#include "CudaDriver.h"

#include "gridjit/Cache/TieredCache.h"
#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/Runtime.h"

#include "llvm/ADT/SmallVector.h"

#include <memory>
#include <mutex>
#include <vector>

namespace gridjit {

struct CudaKernel;
struct LaunchSite;

/// How to make a CudaRuntime.
struct CudaRuntimeOptions {
  /// The device's ordinal.
  unsigned Device = 0;
  /// The driver library (CudaDriverOptions::LibraryPath, ...).
  CudaDriverOptions Driver;
  /// Keep the cubins the driver compiles in the cache (the cubin cache,
  /// docs/CUDA.md); off: every load compiles the PTX.
  bool UseCubinCache = true;
  /// The cache directory of the disk tier the runtime makes when
  /// CubinTiers has none (resolveCacheDirectory's argument: empty for the
  /// default).
  std::string CacheDir;
  /// The tiers to keep cubins in (RuntimeOptions::CubinTiers): used only
  /// with the cubin cache on.
  CacheTiers CubinTiers;
  /// Receives the warning of the disk tier made here (RuntimeOptions::
  /// Warning); null: standard error.
  WarningHandler Warning;
  /// The secret of the disk tier made here (RuntimeOptions::CacheSecret).
  std::string CacheSecret;
};

/// The nvptx target's Runtime: one CUDA device. Thread-safe. Its modules
/// and buffers must not outlive it.
class CudaRuntime final : public Runtime {
public:
  /// Opens the driver (\p DriverOptions) and selects device \p Ordinal.
  /// Errors: "no CUDA device: <reason>" when there is no driver or no
  /// device; "CUDA device N does not exist (M devices ...)" for an ordinal
  /// out of range; a failing driver call.
  static llvm::Expected<std::unique_ptr<CudaRuntime>>
  create(unsigned Ordinal, const CudaDriverOptions &DriverOptions = {});
  /// The same, with the cubin cache's options.
  static llvm::Expected<std::unique_ptr<CudaRuntime>> create(const CudaRuntimeOptions &Opts);
  ~CudaRuntime() override;

  /// What discovery reports about the device this runtime runs on.
  const CudaDeviceInfo &getDeviceInfo() const { return Info; }

  llvm::Expected<std::unique_ptr<LoadedModule>> load(const Artifact &A) override;
  /// cuCtxSynchronize: waits for every launch and copy of the device.
  llvm::Error synchronize() override;

protected:
  llvm::Expected<uint64_t> allocateMemory(uint64_t Bytes) override;
  llvm::Error freeMemory(uint64_t Addr, uint64_t Bytes) override;
  llvm::Error writeMemory(uint64_t Addr, const void *Src, uint64_t Bytes) override;
  llvm::Error readMemory(void *Dst, uint64_t Addr, uint64_t Bytes) override;
  llvm::Error launchKernel(LoadedModule &M, const KernelInfo &Kernel, const LaunchConfig &Config,
                           llvm::ArrayRef<KernelArg> Args, const LaunchOptions &Opts) override;
  /// cuModuleGetGlobal, then cuMemcpyHtoD after cuCtxSynchronize (a launch
  /// on a caller's non-blocking stream is not ordered before the copy).
  llvm::Error writeConstant(LoadedModule &M, const ConstantInfo &C, const void *Data) override;

private:
  CudaRuntime(std::unique_ptr<cuda::Driver> D, CudaDeviceInfo Info)
      : Runtime(TargetKind::NVPTX), Drv(std::move(D)), Info(std::move(Info)) {}
  /// Makes the device's primary context current in the calling thread
  /// until the result is destroyed; then the thread's previous context is
  /// current again.
  llvm::Expected<cuda::Driver::ScopedContext> enter();
  /// The cubin of \p A for this device, as an artifact of this device's
  /// architecture: from the cubin cache, else compiled by the driver's
  /// linker (and stored). Sets \p FromCache.
  llvm::Expected<CachedArtifactRef> getCubin(const Artifact &A, bool &FromCache,
                                             TieredCache::Mode M);
  /// \p A's PTX compiled by the driver's linker (cuLink*), as the cubin
  /// cache's artifact. Errors carry the JIT's logs.
  llvm::Expected<Artifact> linkCubin(const Artifact &A);

  // launchKernel's parts, in the order of docs/CUDA.md, "Launch checks".
  /// The device's grid and block dimensions, the function's threads per
  /// block, shared memory against the device's opt-in limit, cooperative
  /// launch support. Reads no device state.
  llvm::Error checkDeviceLimits(const CudaKernel &K, const KernelInfo &KI, const LaunchConfig &C,
                                const LaunchSite &S) const;
  /// Raises the function's dynamic shared memory limit to what \p C asks
  /// when it is lower (the limit only grows), and checks that a
  /// cooperative grid is resident at once (which needs the raised limit);
  /// a refused grid puts the limit back. The one part that changes device
  /// state, after every other check.
  llvm::Error grantDynamicShared(CudaKernel &K, const KernelInfo &KI, const LaunchConfig &C,
                                 const LaunchSite &S);
  /// A cooperative grid against occupancy x SMs.
  llvm::Error checkResidency(const CudaKernel &K, const LaunchConfig &C, const LaunchSite &S);
  /// cuLaunchKernel or (cooperative) launchCooperative, the launch's
  /// statistics, and the driver's refusal explained.
  llvm::Error issueLaunch(const CudaKernel &K, const KernelInfo &KI, const LaunchConfig &C,
                          llvm::SmallVectorImpl<void *> &Params, const LaunchOptions &Opts,
                          const LaunchSite &S);

  /// A grid barrier's state for one cooperative launch: 8 bytes of device
  /// memory (the count and the generation), and the event recorded after
  /// the last launch that used it. A slot is free when no launch is being
  /// issued with it and its event has completed.
  struct GridStateSlot {
    CUdeviceptr Addr = 0;
    CUevent Done = nullptr; ///< made on first use
    bool Issuing = false;
  };
  /// Sets \p Slot to a free slot (marked Issuing), or a new one; fails
  /// only allocating a new chunk (cuMemAlloc's result).
  CUresult acquireGridState(size_t &Slot);
  /// The state of a cooperative launch of \p Fn: zeroed on \p Stream,
  /// then the launch with \p Params and the state's address appended,
  /// then the slot's event recorded. Returns the launch's result; \p Call
  /// names the entry point that failed.
  CUresult launchCooperative(CUfunction Fn, const LaunchConfig &C, CUstream Stream,
                             llvm::SmallVectorImpl<void *> &Params, const char *&Call);

  std::unique_ptr<cuda::Driver> Drv;
  CudaDeviceInfo Info;
  std::unique_ptr<TieredCache> Cubins; ///< null: no cubin cache
  std::mutex GridStateLock;            ///< guards GridStates and GridStateChunks
  /// Held by the one thread that adds a chunk, so that threads that all
  /// find the slots taken at once add one chunk, not one each.
  std::mutex GridStateGrowLock;
  std::vector<GridStateSlot> GridStates;
  std::vector<CUdeviceptr> GridStateChunks; ///< the allocations of the slots
};

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_CUDA_CUDARUNTIME_H
