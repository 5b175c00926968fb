//===- CudaDevices.h - The NVIDIA GPUs this process can use -----*- C++ -*-===//
//
// Part of gridjit. Device discovery through the CUDA driver (libcuda.so.1,
// loaded at run time; no CUDA toolkit is needed). No driver library, or a
// driver that finds no device, means an empty list, not an error
// (docs/CUDA.md, "Driver loading and devices"); a library that loads but is
// not a working driver is an error that says what is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_CUDADEVICES_H
#define GRIDJIT_RUNTIME_CUDADEVICES_H

#include "llvm/Support/Error.h"

#include <cstdint>
#include <string>
#include <vector>

namespace gridjit {

/// How the CUDA driver library is found.
struct CudaDriverOptions {
  /// The driver library to load (a file name searched like dlopen does, or a
  /// path). Empty: $GRIDJIT_CUDA_DRIVER when it is set, else `libcuda.so.1`.
  std::string LibraryPath;
};

/// One device as the driver describes it.
struct CudaDeviceInfo {
  int Ordinal = 0;      ///< the driver's device ordinal (0, 1, ...)
  std::string Name;     ///< e.g. "NVIDIA H100 80GB HBM3"
  int ComputeMajor = 0; ///< compute capability, e.g. 9 for sm_90
  int ComputeMinor = 0; ///< e.g. 0 for sm_90
  int MultiprocessorCount = 0;
  uint64_t TotalMemoryBytes = 0;
  int MaxThreadsPerBlock = 0;
  int MaxBlockDim[3] = {0, 0, 0};
  int MaxGridDim[3] = {0, 0, 0};
  int WarpSize = 0;
  /// Shared memory a block may use without opting in (bytes).
  int SharedMemoryPerBlock = 0;
  /// Shared memory a block may use after opting in to the large carve-out
  /// (CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, bytes).
  int SharedMemoryPerBlockOptin = 0;
  /// The device supports cooperative launches (grid_sync kernels).
  bool CooperativeLaunch = false;
  /// cuDriverGetVersion: 1000 * major + 10 * minor, e.g. 12040 for 12.4.
  int DriverVersion = 0;

  /// The NVPTX architecture of the device, e.g. "sm_90".
  std::string getArch() const;
};

/// Every CUDA device, in ordinal order. An empty list when there is no
/// driver library (it cannot be loaded), when the driver reports no device
/// (cuInit's CUDA_ERROR_NO_DEVICE, or a count of 0), or when the library is
/// the CUDA toolkit's stub (no driver installed); then \p WhyNone, when
/// given, says which ("libcuda.so.1 not found: ...", "no device"). A library
/// that loads but lacks an entry point, or a driver call that fails
/// otherwise, is an error naming the library or the call.
llvm::Expected<std::vector<CudaDeviceInfo>> listCudaDevices(const CudaDriverOptions &Options = {},
                                                            std::string *WhyNone = nullptr);

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_CUDADEVICES_H
