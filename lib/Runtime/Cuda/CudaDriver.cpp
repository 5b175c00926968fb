//===- CudaDriver.cpp - The CUDA driver, loaded at run time ---------------===//
//
// Part of gridjit. See CudaDriver.h.
//
//===----------------------------------------------------------------------===//

#include "CudaDriver.h"

#include "gridjit/Support/Environment.h"
#include "gridjit/Support/ForkSafety.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/DynamicLibrary.h"
#include "llvm/Support/FormatVariadic.h"

#include <atomic>
#include <dlfcn.h>
#include <mutex>

using namespace gridjit;
using namespace gridjit::cuda;
using llvm::Error;
using llvm::Expected;

char DriverCallError::ID = 0;
char DriverUnavailableError::ID = 0;

/// A device's primary context: retained by the first makeCurrent() for the
/// device, released by ~Driver.
struct Driver::ContextSlot {
  std::once_flag Once;
  CUcontext Context = nullptr;
  std::string Failure; ///< the retain's error message, when it failed
};

namespace {

/// forkGeneration() of the process image that first initialised CUDA (a
/// cuInit that succeeded), or -1: a child of that one cannot use it. The
/// driver's state is process-wide, so this is too.
std::atomic<int64_t> InitialisedIn{-1};

/// The library when nothing names another.
constexpr const char *DefaultLibrary = "libcuda.so.1";

/// How an entry point's symbol is looked up (see CudaDriverAPI.h).
enum Resolution { V2First, V2Only };

/// The address of entry point \p Name in \p Lib, or null.
void *resolve(llvm::sys::DynamicLibrary &Lib, llvm::StringRef Name, Resolution R) {
  std::string V2 = (Name + "_v2").str();
  if (void *P = Lib.getAddressOfSymbol(V2.c_str()))
    return P;
  if (R == V2Only)
    return nullptr;
  return Lib.getAddressOfSymbol(Name.str().c_str());
}

/// The error for a library that lacks entry points: all of them named.
Error missingEntryPoints(llvm::StringRef Path, llvm::ArrayRef<std::string> Missing) {
  std::string List;
  for (const std::string &M : Missing)
    List += (List.empty() ? "" : ", ") + M;
  if (Missing.size() == 1)
    return makeError(ErrorKind::Driver,
                     Path + " is not a usable CUDA driver: it lacks the entry point " + List);
  return makeError(ErrorKind::Driver, Path + " is not a usable CUDA driver: it lacks " +
                                          llvm::Twine(Missing.size()) + " of its " +
                                          llvm::Twine(NumEntryPoints) + " entry points: " + List);
}

/// The error for device \p Ordinal of a driver that has \p Count.
Error noSuchDevice(int Ordinal, int Count) {
  return makeError(ErrorKind::NotFound, "CUDA device " + llvm::Twine(Ordinal) +
                                            " does not exist (" + llvm::Twine(Count) + " device" +
                                            (Count == 1 ? "" : "s") + ")");
}

/// The library to load: the option, else $GRIDJIT_CUDA_DRIVER, else the
/// default.
std::string libraryPath(const CudaDriverOptions &Options) {
  if (!Options.LibraryPath.empty())
    return Options.LibraryPath;
  if (std::optional<std::string> Env = getEnv(EnvVar::GridjitCudaDriver); Env && !Env->empty())
    return *Env;
  return DefaultLibrary;
}

} // namespace

Expected<std::unique_ptr<Driver>> Driver::open(const CudaDriverOptions &Options) {
  std::unique_ptr<Driver> D(new Driver());
  D->LibraryPath = libraryPath(Options);

  // dlopen with RTLD_LOCAL, then symbols looked up through
  // sys::DynamicLibrary on that handle only. Not getPermanentLibrary, which
  // adds the library to LLVM's process-wide search order, and not
  // getLibrary either: LLVM 19 opens with RTLD_GLOBAL, which would make the
  // driver's symbols visible to every library loaded later and to the host
  // JIT's process-symbol lookup (invariant 8: no process-wide state). The
  // handle is never closed; see ~Driver.
  void *Handle = ::dlopen(D->LibraryPath.c_str(), RTLD_LAZY | RTLD_LOCAL);
  if (!Handle) {
    const char *Why = ::dlerror();
    std::string LoadError = Why ? Why : "";
    if (LoadError.find("No such file") != std::string::npos || LoadError.empty())
      return llvm::make_error<DriverUnavailableError>(D->LibraryPath + " not found");
    return llvm::make_error<DriverUnavailableError>(D->LibraryPath +
                                                    " cannot be loaded: " + LoadError);
  }
  llvm::sys::DynamicLibrary Lib(Handle);

  llvm::SmallVector<std::string> Missing;
#define GRIDJIT_CUDA_RESOLVE(Name, R, Params)                                                      \
  D->API.Name = reinterpret_cast<PFN_##Name>(resolve(Lib, #Name, R));                              \
  if (!D->API.Name)                                                                                \
    Missing.push_back(R == V2Only ? #Name "_v2" : #Name);
  GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_CUDA_RESOLVE)
#undef GRIDJIT_CUDA_RESOLVE
  if (!Missing.empty())
    return missingEntryPoints(D->LibraryPath, Missing);

  if (int64_t In = InitialisedIn.load(); In >= 0 && uint64_t(In) != forkGeneration())
    return llvm::make_error<DriverUnavailableError>(
        "CUDA was initialised before this process was forked from its parent, and CUDA does "
        "not survive fork(): use CUDA in a process that has not forked since CUDA started "
        "(Python's multiprocessing: the 'spawn' or 'forkserver' start method)");
  CUresult Init = D->API.cuInit(0);
  if (Init == CUDA_ERROR_NO_DEVICE)
    return llvm::make_error<DriverUnavailableError>("no device");
  if (Init == CUDA_ERROR_STUB_LIBRARY)
    return llvm::make_error<DriverUnavailableError>(
        D->LibraryPath + " is the CUDA toolkit's stub library (no NVIDIA driver installed)");
  if (Error E = D->check(Init, "cuInit"))
    return std::move(E);
  D->OpenedIn = forkGeneration();
  int64_t None = -1;
  InitialisedIn.compare_exchange_strong(None, int64_t(D->OpenedIn));
  if (Error E = GRIDJIT_CU(*D, cuDriverGetVersion, &D->Version))
    return std::move(E);
  if (Error E = GRIDJIT_CU(*D, cuDeviceGetCount, &D->DeviceCount))
    return std::move(E);
  if (D->DeviceCount < 0)
    D->DeviceCount = 0;
  D->Contexts.reset(new ContextSlot[D->DeviceCount]);
  return std::move(D);
}

Driver::~Driver() {
  if (forked())
    return; // the contexts are the parent's: no call may reach the driver here
  for (int I = 0; I < DeviceCount; ++I) {
    if (!Contexts[I].Context)
      continue;
    CUdevice Dev;
    if (API.cuDeviceGet(&Dev, I) == CUDA_SUCCESS)
      (void)API.cuDevicePrimaryCtxRelease(Dev); // nothing to report to in a destructor
  }
}

ErrorKind DriverCallError::kindOf(CUresult Code) {
  switch (Code) {
  case CUDA_ERROR_ILLEGAL_ADDRESS:
  case CUDA_ERROR_HARDWARE_STACK_ERROR:
  case CUDA_ERROR_ILLEGAL_INSTRUCTION:
  case CUDA_ERROR_MISALIGNED_ADDRESS:
  case CUDA_ERROR_INVALID_ADDRESS_SPACE:
  case CUDA_ERROR_INVALID_PC:
  case CUDA_ERROR_LAUNCH_FAILED:
    return ErrorKind::Fault;
  case CUDA_ERROR_LAUNCH_TIMEOUT:
    return ErrorKind::Timeout;
  case CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES:
  case CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE:
    return ErrorKind::Configuration;
  case CUDA_ERROR_NO_DEVICE:
    return ErrorKind::NoDevice;
  default:
    return ErrorKind::Driver;
  }
}

Error Driver::check(CUresult Result, llvm::StringRef Call) const {
  if (Result == CUDA_SUCCESS)
    return Error::success();
  const char *Name = nullptr;
  const char *Text = nullptr;
  if (API.cuGetErrorName(Result, &Name) != CUDA_SUCCESS || !Name)
    Name = "an unrecognised CUresult";
  if (API.cuGetErrorString(Result, &Text) != CUDA_SUCCESS || !Text)
    Text = "the driver has no description of it";
  return llvm::make_error<DriverCallError>(
      Call.str(), Result,
      llvm::formatv("{0} failed: {1} ({2}): {3}", Call, Name, static_cast<int>(Result), Text)
          .str());
}

Expected<CudaDeviceInfo> Driver::getDeviceInfo(int Ordinal) const {
  if (Ordinal < 0 || Ordinal >= DeviceCount)
    return noSuchDevice(Ordinal, DeviceCount);
  CudaDeviceInfo Info;
  Info.Ordinal = Ordinal;
  Info.DriverVersion = Version;
  CUdevice Dev;
  if (Error E = GRIDJIT_CU(*this, cuDeviceGet, &Dev, Ordinal))
    return std::move(E);
  char Name[256] = {0};
  if (Error E = GRIDJIT_CU(*this, cuDeviceGetName, Name, sizeof(Name) - 1, Dev))
    return std::move(E);
  Info.Name = Name;
  size_t Bytes = 0;
  if (Error E = GRIDJIT_CU(*this, cuDeviceTotalMem, &Bytes, Dev))
    return std::move(E);
  Info.TotalMemoryBytes = Bytes;

  int Cooperative = 0;
  const std::pair<CUdevice_attribute, int *> Attributes[] = {
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, &Info.ComputeMajor},
      {CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, &Info.ComputeMinor},
      {CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, &Info.MultiprocessorCount},
      {CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &Info.MaxThreadsPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X, &Info.MaxBlockDim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y, &Info.MaxBlockDim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z, &Info.MaxBlockDim[2]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X, &Info.MaxGridDim[0]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y, &Info.MaxGridDim[1]},
      {CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z, &Info.MaxGridDim[2]},
      {CU_DEVICE_ATTRIBUTE_WARP_SIZE, &Info.WarpSize},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK, &Info.SharedMemoryPerBlock},
      {CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, &Info.SharedMemoryPerBlockOptin},
      {CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH, &Cooperative},
  };
  for (const auto &[Attribute, Value] : Attributes)
    if (Error E = GRIDJIT_CU(*this, cuDeviceGetAttribute, Value, Attribute, Dev))
      return std::move(E);
  Info.CooperativeLaunch = Cooperative != 0;
  return Info;
}

bool Driver::forked() const { return forkGeneration() != OpenedIn; }

Error Driver::forkError() {
  return makeError(ErrorKind::NoDevice,
                   "CUDA cannot be used in this process: it is a child of fork() of the process "
                   "that initialised CUDA, and CUDA does not survive fork(). Create the CUDA "
                   "runtime in a process that has not forked since CUDA started (Python's "
                   "multiprocessing: the 'spawn' or 'forkserver' start method)");
}

Expected<CUcontext> Driver::makeCurrent(int Ordinal) {
  if (forked())
    return forkError();
  if (Ordinal < 0 || Ordinal >= DeviceCount)
    return noSuchDevice(Ordinal, DeviceCount);
  ContextSlot &Slot = Contexts[Ordinal];
  // The retain happens once; threads asking for the same device meanwhile
  // wait for it (there is nothing else they could do with the device).
  std::call_once(Slot.Once, [&] {
    CUdevice Dev;
    CUcontext Ctx = nullptr;
    Error E = GRIDJIT_CU(*this, cuDeviceGet, &Dev, Ordinal);
    if (!E)
      E = GRIDJIT_CU(*this, cuDevicePrimaryCtxRetain, &Ctx, Dev);
    if (E)
      Slot.Failure = llvm::toString(std::move(E));
    else
      Slot.Context = Ctx;
  });
  if (!Slot.Failure.empty())
    return makeError(ErrorKind::Driver, Slot.Failure);
  CUcontext Current = nullptr;
  if (Error E = GRIDJIT_CU(*this, cuCtxGetCurrent, &Current))
    return std::move(E);
  if (Current != Slot.Context)
    if (Error E = GRIDJIT_CU(*this, cuCtxSetCurrent, Slot.Context))
      return std::move(E);
  return Slot.Context;
}

Expected<Driver::ScopedContext> Driver::enterContext(int Ordinal) {
  if (forked())
    return forkError();
  CUcontext Before = nullptr;
  if (Error E = GRIDJIT_CU(*this, cuCtxGetCurrent, &Before))
    return std::move(E);
  auto Ctx = makeCurrent(Ordinal);
  if (!Ctx)
    return Ctx.takeError();
  ScopedContext S;
  S.Drv = this;
  S.Previous = Before;
  S.Restore = Before != *Ctx;
  return std::move(S);
}
