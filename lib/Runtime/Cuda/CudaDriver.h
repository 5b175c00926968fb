//===- CudaDriver.h - The CUDA driver, loaded at run time -------*- C++ -*-===//
//
// Part of gridjit (internal). A Driver is one loaded CUDA driver library:
// libcuda.so.1 (or what CudaDriverOptions / $GRIDJIT_CUDA_DRIVER name),
// opened with dlopen(RTLD_LOCAL) and read through llvm::sys::DynamicLibrary
// on that handle (so its symbols reach neither LLVM's search order nor the
// process's global namespace), every entry point of CudaDriverAPI.h resolved
// into a table of function pointers, and cuInit called once. The caller
// owns it; there is no global driver.
//
// Thread safety: after open() the table and everything describing the
// devices are immutable, so any number of threads may call through one
// Driver at once. makeCurrent() retains a device's primary context once per
// Driver (the first caller does it; others for the same device wait for
// that one call, and no lock is held across any other driver call) and
// makes it current in the calling thread.
//
// Errors: every CUresult other than CUDA_SUCCESS becomes a DriverCallError
// whose message names the call, the numeric code and the driver's own name
// and description of it, e.g.
//   cuModuleLoadDataEx failed: CUDA_ERROR_INVALID_PTX (218): a PTX JIT
//   compilation failed
// Use Driver::check (or the GRIDJIT_CU macro below) around every call.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_CUDA_CUDADRIVER_H
#define GRIDJIT_RUNTIME_CUDA_CUDADRIVER_H

#include "CudaDriverAPI.h"

#include "gridjit/Runtime/CudaDevices.h"
#include "gridjit/Support/Errors.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace gridjit::cuda {

/// The resolved entry points: one member per row of
/// GRIDJIT_CUDA_ENTRY_POINTS, named without the `_v2` suffix (so
/// `API.cuMemAlloc` is the library's `cuMemAlloc_v2`). All non-null once a
/// Driver exists.
struct DriverAPI {
#define GRIDJIT_CUDA_DECLARE_MEMBER(Name, Resolution, Params) PFN_##Name Name = nullptr;
  GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_CUDA_DECLARE_MEMBER)
#undef GRIDJIT_CUDA_DECLARE_MEMBER
};

/// How many entry points the table has.
#define GRIDJIT_CUDA_COUNT_ONE(Name, Resolution, Params) +1
constexpr unsigned NumEntryPoints = 0 GRIDJIT_CUDA_ENTRY_POINTS(GRIDJIT_CUDA_COUNT_ONE);
#undef GRIDJIT_CUDA_COUNT_ONE

/// A driver call that returned something other than CUDA_SUCCESS. Its kind
/// is what the result means (kindOf): a kernel's fault on the device, the
/// driver's watchdog, a launch the device cannot hold, or Driver.
class DriverCallError : public llvm::ErrorInfo<DriverCallError, KindedError> {
public:
  static char ID;
  DriverCallError(std::string Call, CUresult Code, std::string Message)
      : ErrorInfo(kindOf(Code), std::move(Message)), Call(std::move(Call)), Code(Code) {}
  /// The entry point, e.g. "cuModuleLoadDataEx".
  const std::string &getCall() const { return Call; }
  /// The driver's result.
  CUresult getCode() const { return Code; }
  /// The kind of error \p Code is: Fault for an illegal address,
  /// instruction or stack, or a failed launch (a kernel's fault, as the
  /// driver reports it); Timeout for CUDA_ERROR_LAUNCH_TIMEOUT;
  /// Configuration for a launch the device cannot hold; NoDevice for
  /// CUDA_ERROR_NO_DEVICE; Driver for every other.
  static ErrorKind kindOf(CUresult Code);

private:
  std::string Call;
  CUresult Code;
};

/// There is no usable driver, and that is not a failure (invariant 6): no
/// library to load, a driver that finds no device, or the CUDA toolkit's
/// stub library. Discovery turns it into an empty device list. Its kind is
/// NoDevice.
class DriverUnavailableError : public llvm::ErrorInfo<DriverUnavailableError, KindedError> {
public:
  static char ID;
  explicit DriverUnavailableError(std::string Reason)
      : ErrorInfo(ErrorKind::NoDevice, std::string()), Reason(std::move(Reason)) {}
  /// Why, e.g. "libcuda.so.1 not found" or "no device".
  const std::string &getReason() const { return Reason; }
  void log(llvm::raw_ostream &OS) const override { OS << "no CUDA devices (" << Reason << ")"; }

private:
  std::string Reason;
};

/// One loaded CUDA driver. See the file comment.
class Driver {
public:
  /// Loads the library (CudaDriverOptions::LibraryPath, else
  /// $GRIDJIT_CUDA_DRIVER, else libcuda.so.1), resolves every entry point
  /// (`_v2` first), calls cuInit(0), and reads the driver version and the
  /// device count. A DriverUnavailableError when there is no library, when
  /// cuInit reports CUDA_ERROR_NO_DEVICE or when the library is the
  /// toolkit's stub; another error when the library lacks entry points
  /// (all of them named) or a call fails.
  static llvm::Expected<std::unique_ptr<Driver>> open(const CudaDriverOptions &Options = {});

  /// Releases the primary contexts this Driver retained. The library stays
  /// loaded (unloading a CUDA driver under other users of it is unsafe). In
  /// a child of fork() it calls nothing (see forkError).
  ~Driver();
  Driver(const Driver &) = delete;
  Driver &operator=(const Driver &) = delete;

  /// The entry points; call them through check() / GRIDJIT_CU.
  const DriverAPI &api() const { return API; }
  /// The library as it was named to dlopen.
  const std::string &getLibraryPath() const { return LibraryPath; }
  /// cuDriverGetVersion: 1000 * major + 10 * minor.
  int getVersion() const { return Version; }
  /// Devices the driver reported at open().
  int getDeviceCount() const { return DeviceCount; }

  /// Success for CUDA_SUCCESS; otherwise a DriverCallError
  /// "<Call> failed: <NAME> (<code>): <description>", with the name and
  /// description from the driver's cuGetErrorName / cuGetErrorString.
  llvm::Error check(CUresult Result, llvm::StringRef Call) const;

  /// Everything discovery reports about device \p Ordinal.
  llvm::Expected<CudaDeviceInfo> getDeviceInfo(int Ordinal) const;

  /// Retains device \p Ordinal's primary context (once for this Driver) and
  /// makes it current in the calling thread; returns it. Call it in every
  /// thread before other calls that need a context (memory, modules,
  /// launches). A failed retain is remembered: later calls for that device
  /// return the same error. In a child of fork() of the process that opened
  /// this Driver: forkError(), and no driver call.
  llvm::Expected<CUcontext> makeCurrent(int Ordinal);

  /// CUDA does not survive fork(): a child of the process that initialised
  /// it cannot use the driver (calls fail, or hang). The error of a Driver
  /// used in such a child, and of open() there (kind NoDevice), which says
  /// so and what to do instead.
  static llvm::Error forkError();

  /// A context made current by enterContext(): when it is destroyed, the
  /// context that was current in the thread before is current again (a
  /// framework's own context, or none), so gridjit's calls leave the
  /// caller's thread as they found it. Move-only; use it in one thread.
  class ScopedContext {
  public:
    ScopedContext() = default;
    ScopedContext(ScopedContext &&O) noexcept
        : Drv(O.Drv), Previous(O.Previous), Restore(O.Restore) {
      O.Restore = false;
    }
    ScopedContext &operator=(ScopedContext &&) = delete;
    ~ScopedContext() {
      if (Restore) // nothing to report to; a failure leaves ours current
        (void)Drv->api().cuCtxSetCurrent(Previous);
    }

  private:
    friend class Driver;
    const Driver *Drv = nullptr;
    CUcontext Previous = nullptr;
    bool Restore = false;
  };
  /// makeCurrent(), and put back the thread's previous context when the
  /// result is destroyed (nothing to do when it was already this one).
  llvm::Expected<ScopedContext> enterContext(int Ordinal);

private:
  struct ContextSlot;
  Driver() = default;

  /// This Driver's process is a child of fork() of the one that opened it.
  bool forked() const;

  DriverAPI API;
  std::string LibraryPath;
  int Version = 0;
  int DeviceCount = 0;
  uint64_t OpenedIn = 0;                   ///< forkGeneration() at open()
  std::unique_ptr<ContextSlot[]> Contexts; ///< one per device
};

} // namespace gridjit::cuda

/// Calls entry point \p Name of driver \p D (a Driver or Driver *-like
/// reference) and turns its result into an llvm::Error:
///   if (Error E = GRIDJIT_CU(Drv, cuMemAlloc, &Ptr, Bytes)) return E;
#define GRIDJIT_CU(D, Name, ...) (D).check((D).api().Name(__VA_ARGS__), #Name)

#endif // GRIDJIT_RUNTIME_CUDA_CUDADRIVER_H
