//===- CudaDevices.cpp - The NVIDIA GPUs this process can use -------------===//
//
// Part of gridjit. listCudaDevices: a Driver opened for the question and
// asked about every device. See gridjit/Runtime/CudaDevices.h.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Runtime/CudaDevices.h"

#include "CudaDriver.h"

using namespace gridjit;

std::string CudaDeviceInfo::getArch() const {
  return "sm_" + std::to_string(ComputeMajor) + std::to_string(ComputeMinor);
}

llvm::Expected<std::vector<CudaDeviceInfo>>
gridjit::listCudaDevices(const CudaDriverOptions &Options, std::string *WhyNone) {
  std::vector<CudaDeviceInfo> Devices;
  auto D = cuda::Driver::open(Options);
  if (!D) {
    llvm::Error Rest =
        llvm::handleErrors(D.takeError(), [&](const cuda::DriverUnavailableError &U) {
          if (WhyNone)
            *WhyNone = U.getReason();
        });
    if (Rest)
      return std::move(Rest);
    return Devices;
  }
  for (int I = 0; I < (*D)->getDeviceCount(); ++I) {
    auto Info = (*D)->getDeviceInfo(I);
    if (!Info)
      return Info.takeError();
    Devices.push_back(std::move(*Info));
  }
  if (Devices.empty() && WhyNone)
    *WhyNone = "no device";
  return Devices;
}
