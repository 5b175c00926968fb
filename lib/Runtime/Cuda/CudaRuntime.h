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

#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Runtime/Runtime.h"

#include <memory>

namespace gridjit {

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

private:
  CudaRuntime(std::unique_ptr<cuda::Driver> D, CudaDeviceInfo Info)
      : Runtime(TargetKind::NVPTX), Drv(std::move(D)), Info(std::move(Info)) {}
  /// Makes the device's primary context current in the calling thread.
  llvm::Error enter();

  std::unique_ptr<cuda::Driver> Drv;
  CudaDeviceInfo Info;
};

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_CUDA_CUDARUNTIME_H
