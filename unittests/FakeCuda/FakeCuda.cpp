//===- FakeCuda.cpp - A fake CUDA driver library for the tests ------------===//
//
// Part of gridjit's test suite. Built as libgridjit-fake-cuda.so in the
// build's lib directory and loaded by the library exactly as libcuda.so.1
// is (CudaDriverOptions::LibraryPath or $GRIDJIT_CUDA_DRIVER). It exports
// the driver's entry points under their real names (`_v2` where the driver
// has one), defined against the declarations of
// lib/Runtime/Cuda/CudaDriverAPI.h, so a signature that differs does not
// compile. Device memory is host memory (malloc); contexts are per-device
// objects made current per thread; modules, links and launches are
// bookkeeping with the driver's checks (see "Modules, links, functions,
// launches" below): no kernel code runs.
//
// Configured by environment variables that only this fake reads, each read
// again by every cuInit (so one test process can try several setups):
//   GRIDJIT_FAKE_CUDA_DEVICES  N (N devices like sm_80:108:40GiB), or a
//                              comma-separated list of sm_XY:SMS:MEMORY
//                              (MEMORY as 512MiB or 40GiB); unset: 1
//   GRIDJIT_FAKE_CUDA_VERSION  what cuDriverGetVersion reports (12040)
//   GRIDJIT_FAKE_CUDA_FAIL     NAME:CODE[,NAME:CODE...]: entry point NAME
//                              (with or without _v2) returns CUresult CODE;
//                              read on every call
//   GRIDJIT_FAKE_CUDA_FUNC_ATTRS max_threads:N,regs:N,static_shared:N,
//                              occupancy:N: the attributes of the functions
//                              of modules loaded from now on
//   GRIDJIT_FAKE_CUDA_DEVICE_ATTRS max_grid_x:N,max_grid_y:N,max_grid_z:N,
//                              cooperative:0|1: every device's attributes
//                              of those names (read on every query)
//   GRIDJIT_FAKE_CUDA_LOG      a file to which every launch, PTX compile
//                              and cuFuncSetAttribute appends a line (for
//                              tests of other processes, e.g. jit-run)
//   GRIDJIT_FAKE_CUDA_ECHO     1: a launch "runs" by writing the bytes of
//                              its parameters after the first, in order,
//                              into the allocation the first points to
//                              (so a test can see that every launch got
//                              its own arguments)
//   GRIDJIT_FAKE_CUDA_LAUNCH_US N: a launch takes N microseconds, with
//                              the fake's lock released (so launches from
//                              several threads overlap)
// A cooperative launch of a module with gridjit's grid barrier (its PTX
// has __gridjit_grid_state_addr) gets the address of the barrier's state
// as its last parameter; the fake checks that it is device memory whose
// count is 0 and that no other launch is using it, holds it while the
// launch runs and leaves it as the barrier does (count 0, generation + 1).
// A violation is CUDA_ERROR_LAUNCH_FAILED (the real GPU would hang or
// give wrong results).
// The variant libgridjit-fake-cuda-nolaunch.so (built with
// GRIDJIT_FAKE_CUDA_WITHOUT_LAUNCH) lacks cuLaunchKernel, for the
// missing-entry-point error.
//
//===----------------------------------------------------------------------===//

#include "Runtime/Cuda/CudaDriverAPI.h"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <type_traits>
#include <vector>

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

namespace {

struct FakeDevice {
  std::string Name;
  int Major = 8, Minor = 0;
  int SMs = 108;
  size_t Memory = size_t(40) << 30;
};

/// A primary context: one per device slot.
struct FakeContext {
  int Device = 0;
  int Retains = 0;      ///< current reference count
  int TotalRetains = 0; ///< retains ever made (for the tests)
};

constexpr int MaxDevices = 16;

/// Calls \p Set(KEY, N) for every `KEY:N` of the comma-separated list in
/// the environment variable \p Var (nothing when it is unset).
template <typename SetFn> void forEachSetting(const char *Var, SetFn Set) {
  const char *Spec = std::getenv(Var);
  if (!Spec)
    return;
  std::string S = Spec;
  size_t Pos = 0;
  while (Pos < S.size()) {
    size_t End = S.find(',', Pos);
    if (End == std::string::npos)
      End = S.size();
    std::string Item = S.substr(Pos, End - Pos);
    size_t Colon = Item.find(':');
    int V = Colon == std::string::npos ? 0 : std::atoi(Item.c_str() + Colon + 1);
    Set(Item.substr(0, Colon), V);
    Pos = End + 1;
  }
}

std::mutex Lock; // guards everything below but the thread's current context
bool Initialized = false;
std::vector<FakeDevice> Devices;
FakeContext Contexts[MaxDevices];
std::map<uintptr_t, size_t> Allocations; // start -> size
/// The `.const` globals of loaded modules (FakeGlobal), start -> size:
/// copies reach them as allocations, but they are no allocation of the caller's.
std::map<uintptr_t, size_t> ModuleGlobals;
/// The device whose primary context made each allocation (start ->
/// device): releasing the context's last reference frees them, as the
/// real driver does when it destroys a context.
std::map<uintptr_t, int> AllocationDevices;
thread_local CUcontext Current = nullptr;

/// "NAME" without a trailing "_v2".
std::string baseName(std::string Name) {
  if (Name.size() > 3 && Name.compare(Name.size() - 3, 3, "_v2") == 0)
    Name.resize(Name.size() - 3);
  return Name;
}

/// The failure GRIDJIT_FAKE_CUDA_FAIL configures for \p Name, or success.
CUresult configuredFailure(const char *Name) {
  const char *Spec = std::getenv("GRIDJIT_FAKE_CUDA_FAIL");
  if (!Spec)
    return CUDA_SUCCESS;
  std::string S = Spec, Want = baseName(Name);
  size_t Pos = 0;
  while (Pos <= S.size()) {
    size_t End = S.find(',', Pos);
    if (End == std::string::npos)
      End = S.size();
    std::string Item = S.substr(Pos, End - Pos);
    size_t Colon = Item.find(':');
    if (Colon != std::string::npos && baseName(Item.substr(0, Colon)) == Want)
      return static_cast<CUresult>(std::atoi(Item.c_str() + Colon + 1));
    Pos = End + 1;
  }
  return CUDA_SUCCESS;
}

/// What every entry point but cuInit and the error/version queries does
/// first: the configured failure, then "not initialised".
CUresult enter(const char *Name) {
  if (CUresult R = configuredFailure(Name))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return Initialized ? CUDA_SUCCESS : CUDA_ERROR_NOT_INITIALIZED;
}

/// enter(), and a context must be current in this thread.
CUresult enterWithContext(const char *Name) {
  if (CUresult R = enter(Name))
    return R;
  return Current ? CUDA_SUCCESS : CUDA_ERROR_INVALID_CONTEXT;
}

/// Parses "40GiB" / "512MiB" into bytes; false when it is neither.
bool parseMemory(const std::string &S, size_t &Bytes) {
  char *End = nullptr;
  unsigned long long N = std::strtoull(S.c_str(), &End, 10);
  if (End == S.c_str())
    return false;
  if (std::strcmp(End, "GiB") == 0)
    Bytes = size_t(N) << 30;
  else if (std::strcmp(End, "MiB") == 0)
    Bytes = size_t(N) << 20;
  else
    return false;
  return true;
}

/// The devices GRIDJIT_FAKE_CUDA_DEVICES describes; false when malformed.
bool parseDevices(std::vector<FakeDevice> &Out) {
  const char *Spec = std::getenv("GRIDJIT_FAKE_CUDA_DEVICES");
  std::string S = Spec ? Spec : "1";
  Out.clear();
  if (!S.empty() && S.find_first_not_of("0123456789") == std::string::npos) {
    int N = std::atoi(S.c_str());
    if (N > MaxDevices)
      return false;
    Out.resize(N);
  } else {
    size_t Pos = 0;
    while (Pos <= S.size()) {
      size_t End = S.find(',', Pos);
      if (End == std::string::npos)
        End = S.size();
      std::string Item = S.substr(Pos, End - Pos);
      FakeDevice D;
      char Mem[32] = {0};
      int Arch = 0;
      if (std::sscanf(Item.c_str(), "sm_%d:%d:%31s", &Arch, &D.SMs, Mem) != 3 || Arch < 10 ||
          D.SMs <= 0 || !parseMemory(Mem, D.Memory) || Out.size() == MaxDevices)
        return false;
      D.Major = Arch / 10;
      D.Minor = Arch % 10;
      Out.push_back(D);
      Pos = End + 1;
    }
  }
  for (size_t I = 0; I < Out.size(); ++I)
    Out[I].Name = "gridjit fake GPU " + std::to_string(I);
  return true;
}

/// The opt-in shared memory per block of an architecture, as NVIDIA's
/// tables give it.
int sharedOptin(const FakeDevice &D) {
  int Arch = D.Major * 10 + D.Minor;
  if (Arch >= 90)
    return 232448; // 227 KiB
  if (Arch == 80 || Arch == 87)
    return 166912; // 163 KiB
  if (Arch >= 86)
    return 101376; // 99 KiB
  if (Arch == 75)
    return 65536;
  return 98304; // sm_70, sm_72
}

/// The allocation holding [Ptr, Ptr + Bytes), or false.
bool inAllocation(CUdeviceptr Ptr, size_t Bytes) {
  std::lock_guard<std::mutex> G(Lock);
  for (const auto *Map : {&Allocations, &ModuleGlobals}) {
    auto It = Map->upper_bound(Ptr);
    if (It == Map->begin())
      continue;
    --It;
    if (Ptr >= It->first && Ptr - It->first + Bytes <= It->second)
      return true;
  }
  return false;
}

struct ErrorText {
  CUresult Code;
  const char *Name, *Text;
};
const ErrorText ErrorTexts[] = {
    {CUDA_SUCCESS, "CUDA_SUCCESS", "no error"},
    {CUDA_ERROR_INVALID_VALUE, "CUDA_ERROR_INVALID_VALUE", "invalid argument"},
    {CUDA_ERROR_OUT_OF_MEMORY, "CUDA_ERROR_OUT_OF_MEMORY", "out of memory"},
    {CUDA_ERROR_NOT_INITIALIZED, "CUDA_ERROR_NOT_INITIALIZED", "initialization error"},
    {CUDA_ERROR_DEINITIALIZED, "CUDA_ERROR_DEINITIALIZED", "driver shutting down"},
    {CUDA_ERROR_STUB_LIBRARY, "CUDA_ERROR_STUB_LIBRARY", "CUDA driver is a stub library"},
    {CUDA_ERROR_NO_DEVICE, "CUDA_ERROR_NO_DEVICE", "no CUDA-capable device is detected"},
    {CUDA_ERROR_INVALID_DEVICE, "CUDA_ERROR_INVALID_DEVICE", "invalid device ordinal"},
    {CUDA_ERROR_INVALID_IMAGE, "CUDA_ERROR_INVALID_IMAGE", "device kernel image is invalid"},
    {CUDA_ERROR_INVALID_CONTEXT, "CUDA_ERROR_INVALID_CONTEXT", "invalid device context"},
    {CUDA_ERROR_NO_BINARY_FOR_GPU, "CUDA_ERROR_NO_BINARY_FOR_GPU",
     "no kernel image is available for execution on the device"},
    {CUDA_ERROR_INVALID_PTX, "CUDA_ERROR_INVALID_PTX", "a PTX JIT compilation failed"},
    {CUDA_ERROR_UNSUPPORTED_PTX_VERSION, "CUDA_ERROR_UNSUPPORTED_PTX_VERSION",
     "the provided PTX was compiled with an unsupported toolchain."},
    {CUDA_ERROR_INVALID_HANDLE, "CUDA_ERROR_INVALID_HANDLE", "invalid resource handle"},
    {CUDA_ERROR_NOT_FOUND, "CUDA_ERROR_NOT_FOUND", "named symbol not found"},
    {CUDA_ERROR_NOT_READY, "CUDA_ERROR_NOT_READY", "device not ready"},
    {CUDA_ERROR_ILLEGAL_ADDRESS, "CUDA_ERROR_ILLEGAL_ADDRESS",
     "an illegal memory access was encountered"},
    {CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES, "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "too many resources requested for launch"},
    {CUDA_ERROR_LAUNCH_TIMEOUT, "CUDA_ERROR_LAUNCH_TIMEOUT",
     "the launch timed out and was terminated"},
    {CUDA_ERROR_LAUNCH_FAILED, "CUDA_ERROR_LAUNCH_FAILED", "unspecified launch failure"},
    {CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE, "CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE",
     "too many blocks in cooperative launch"},
    {CUDA_ERROR_NOT_SUPPORTED, "CUDA_ERROR_NOT_SUPPORTED", "operation not supported"},
    {CUDA_ERROR_UNKNOWN, "CUDA_ERROR_UNKNOWN", "unknown error"},
};

const ErrorText *findError(CUresult R) {
  for (const ErrorText &E : ErrorTexts)
    if (E.Code == R)
      return &E;
  return nullptr;
}

} // namespace

//===--- Initialisation, versions, errors ---------------------------------===//

FAKE_EXPORT CUresult cuInit(unsigned int Flags) {
  if (CUresult R = configuredFailure("cuInit"))
    return R;
  if (Flags != 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::vector<FakeDevice> Parsed;
  if (!parseDevices(Parsed)) {
    std::fprintf(stderr, "fake CUDA driver: bad GRIDJIT_FAKE_CUDA_DEVICES\n");
    return CUDA_ERROR_INVALID_VALUE;
  }
  std::lock_guard<std::mutex> G(Lock);
  Devices = std::move(Parsed);
  Initialized = true;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDriverGetVersion(int *Version) {
  if (CUresult R = configuredFailure("cuDriverGetVersion"))
    return R;
  if (!Version)
    return CUDA_ERROR_INVALID_VALUE;
  const char *V = std::getenv("GRIDJIT_FAKE_CUDA_VERSION");
  *Version = V ? std::atoi(V) : 12040;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuGetErrorName(CUresult Error, const char **Name) {
  if (CUresult R = configuredFailure("cuGetErrorName"))
    return R;
  const ErrorText *E = findError(Error);
  if (!Name)
    return CUDA_ERROR_INVALID_VALUE;
  *Name = E ? E->Name : nullptr;
  return E ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuGetErrorString(CUresult Error, const char **Text) {
  if (CUresult R = configuredFailure("cuGetErrorString"))
    return R;
  const ErrorText *E = findError(Error);
  if (!Text)
    return CUDA_ERROR_INVALID_VALUE;
  *Text = E ? E->Text : nullptr;
  return E ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}

//===--- Devices ----------------------------------------------------------===//

FAKE_EXPORT CUresult cuDeviceGetCount(int *Count) {
  if (CUresult R = enter("cuDeviceGetCount"))
    return R;
  if (!Count)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  *Count = static_cast<int>(Devices.size());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGet(CUdevice *Device, int Ordinal) {
  if (CUresult R = enter("cuDeviceGet"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  if (!Device)
    return CUDA_ERROR_INVALID_VALUE;
  if (Ordinal < 0 || Ordinal >= static_cast<int>(Devices.size()))
    return CUDA_ERROR_INVALID_DEVICE;
  *Device = Ordinal;
  return CUDA_SUCCESS;
}

/// The device \p D, or null (Lock held).
static const FakeDevice *getDevice(CUdevice D) {
  return D >= 0 && D < static_cast<int>(Devices.size()) ? &Devices[D] : nullptr;
}

FAKE_EXPORT CUresult cuDeviceGetName(char *Name, int Length, CUdevice Device) {
  if (CUresult R = enter("cuDeviceGetName"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  const FakeDevice *D = getDevice(Device);
  if (!D)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!Name || Length <= 0)
    return CUDA_ERROR_INVALID_VALUE;
  std::snprintf(Name, Length, "%s", D->Name.c_str());
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceGetAttribute(int *Value, CUdevice_attribute Attribute,
                                          CUdevice Device) {
  if (CUresult R = enter("cuDeviceGetAttribute"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  const FakeDevice *D = getDevice(Device);
  if (!D)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!Value)
    return CUDA_ERROR_INVALID_VALUE;
  switch (Attribute) {
  case CU_DEVICE_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_X:
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Y:
    *Value = 1024;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_BLOCK_DIM_Z:
    *Value = 64;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X:
    *Value = 2147483647;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y:
  case CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z:
    *Value = 65535;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK:
    *Value = 49152;
    break;
  case CU_DEVICE_ATTRIBUTE_WARP_SIZE:
    *Value = 32;
    break;
  case CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT:
    *Value = D->SMs;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR:
    *Value = D->Major;
    break;
  case CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR:
    *Value = D->Minor;
    break;
  case CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH:
    *Value = 1;
    break;
  case CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN:
    *Value = sharedOptin(*D);
    break;
  default:
    return CUDA_ERROR_INVALID_VALUE;
  }
  static const std::pair<const char *, CUdevice_attribute> Overridable[] = {
      {"max_grid_x", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_X},
      {"max_grid_y", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Y},
      {"max_grid_z", CU_DEVICE_ATTRIBUTE_MAX_GRID_DIM_Z},
      {"cooperative", CU_DEVICE_ATTRIBUTE_COOPERATIVE_LAUNCH}};
  forEachSetting("GRIDJIT_FAKE_CUDA_DEVICE_ATTRS", [&](const std::string &Key, int V) {
    for (const auto &[Name, Attr] : Overridable)
      if (Key == Name && Attr == Attribute)
        *Value = V;
  });
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDeviceTotalMem_v2(size_t *Bytes, CUdevice Device) {
  if (CUresult R = enter("cuDeviceTotalMem_v2"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  const FakeDevice *D = getDevice(Device);
  if (!D)
    return CUDA_ERROR_INVALID_DEVICE;
  if (!Bytes)
    return CUDA_ERROR_INVALID_VALUE;
  *Bytes = D->Memory;
  return CUDA_SUCCESS;
}

//===--- Contexts ---------------------------------------------------------===//

FAKE_EXPORT CUresult cuDevicePrimaryCtxRetain(CUcontext *Context, CUdevice Device) {
  if (CUresult R = enter("cuDevicePrimaryCtxRetain"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  if (!getDevice(Device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (!Context)
    return CUDA_ERROR_INVALID_VALUE;
  FakeContext &C = Contexts[Device];
  C.Device = Device;
  ++C.Retains;
  ++C.TotalRetains;
  *Context = reinterpret_cast<CUcontext>(&C);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuDevicePrimaryCtxRelease_v2(CUdevice Device) {
  if (CUresult R = enter("cuDevicePrimaryCtxRelease_v2"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  if (!getDevice(Device))
    return CUDA_ERROR_INVALID_DEVICE;
  if (Contexts[Device].Retains == 0)
    return CUDA_ERROR_INVALID_CONTEXT;
  if (--Contexts[Device].Retains == 0) {
    // The context is destroyed, and the memory allocated in it with it
    // (a buffer whose cuMemFree failed, say).
    for (auto It = AllocationDevices.begin(); It != AllocationDevices.end();) {
      if (It->second != Device) {
        ++It;
        continue;
      }
      std::free(reinterpret_cast<void *>(It->first));
      Allocations.erase(It->first);
      It = AllocationDevices.erase(It);
    }
  }
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSetCurrent(CUcontext Context) {
  if (CUresult R = enter("cuCtxSetCurrent"))
    return R;
  if (Context) {
    std::lock_guard<std::mutex> G(Lock);
    auto *C = reinterpret_cast<FakeContext *>(Context);
    if (C < Contexts || C >= Contexts + MaxDevices || C->Retains == 0)
      return CUDA_ERROR_INVALID_CONTEXT;
  }
  Current = Context;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxGetCurrent(CUcontext *Context) {
  if (CUresult R = enter("cuCtxGetCurrent"))
    return R;
  if (!Context)
    return CUDA_ERROR_INVALID_VALUE;
  *Context = Current;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuCtxSynchronize() { return enterWithContext("cuCtxSynchronize"); }

//===--- Events (every launch has finished when its call returns) ---------===//

namespace {
struct FakeEvent {
  int Device = 0;
};
std::vector<std::unique_ptr<FakeEvent>> Events; // guarded by Lock
int LiveEvents = 0;

/// \p E if it is a live event (Lock held), else null.
FakeEvent *findEvent(CUevent E) {
  for (const auto &Ev : Events)
    if (reinterpret_cast<CUevent>(Ev.get()) == E)
      return Ev.get();
  return nullptr;
}
} // namespace

FAKE_EXPORT CUresult cuEventCreate(CUevent *Event, unsigned int) {
  if (CUresult R = enterWithContext("cuEventCreate"))
    return R;
  if (!Event)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  Events.push_back(std::make_unique<FakeEvent>());
  Events.back()->Device = reinterpret_cast<FakeContext *>(Current)->Device;
  *Event = reinterpret_cast<CUevent>(Events.back().get());
  ++LiveEvents;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventRecord(CUevent Event, CUstream) {
  if (CUresult R = enterWithContext("cuEventRecord"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return findEvent(Event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuEventQuery(CUevent Event) {
  if (CUresult R = enterWithContext("cuEventQuery"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return findEvent(Event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

// Every fake launch has finished when its call returns, so an event has
// completed once recorded, and no time passes between two: what
// benchmarks/peers' timer reads (their figures mean nothing on the fake).
FAKE_EXPORT CUresult cuEventSynchronize(CUevent Event) {
  if (CUresult R = enterWithContext("cuEventSynchronize"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return findEvent(Event) ? CUDA_SUCCESS : CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuEventElapsedTime(float *Ms, CUevent Start, CUevent End) {
  if (CUresult R = enterWithContext("cuEventElapsedTime"))
    return R;
  if (!Ms)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  if (!findEvent(Start) || !findEvent(End))
    return CUDA_ERROR_INVALID_HANDLE;
  *Ms = 0.001f;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuEventDestroy_v2(CUevent Event) {
  if (CUresult R = enterWithContext("cuEventDestroy_v2"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  for (auto It = Events.begin(); It != Events.end(); ++It)
    if (reinterpret_cast<CUevent>(It->get()) == Event) {
      Events.erase(It);
      --LiveEvents;
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_HANDLE;
}

//===--- Memory (host memory standing in for the device's) ---------------===//

FAKE_EXPORT CUresult cuMemAlloc_v2(CUdeviceptr *Ptr, size_t Bytes) {
  if (CUresult R = enterWithContext("cuMemAlloc_v2"))
    return R;
  if (!Ptr || Bytes == 0)
    return CUDA_ERROR_INVALID_VALUE;
  void *P = std::malloc(Bytes);
  if (!P)
    return CUDA_ERROR_OUT_OF_MEMORY;
  std::lock_guard<std::mutex> G(Lock);
  *Ptr = reinterpret_cast<uintptr_t>(P);
  Allocations[*Ptr] = Bytes;
  AllocationDevices[*Ptr] = reinterpret_cast<FakeContext *>(Current)->Device;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemFree_v2(CUdeviceptr Ptr) {
  if (CUresult R = enterWithContext("cuMemFree_v2"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  auto It = Allocations.find(Ptr);
  if (It == Allocations.end())
    return CUDA_ERROR_INVALID_VALUE;
  std::free(reinterpret_cast<void *>(It->first));
  AllocationDevices.erase(It->first);
  Allocations.erase(It);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyHtoD_v2(CUdeviceptr Dst, const void *Src, size_t Bytes) {
  if (CUresult R = enterWithContext("cuMemcpyHtoD_v2"))
    return R;
  if (!Src || !inAllocation(Dst, Bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(reinterpret_cast<void *>(Dst), Src, Bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoH_v2(void *Dst, CUdeviceptr Src, size_t Bytes) {
  if (CUresult R = enterWithContext("cuMemcpyDtoH_v2"))
    return R;
  if (!Dst || !inAllocation(Src, Bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memcpy(Dst, reinterpret_cast<const void *>(Src), Bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemcpyDtoD_v2(CUdeviceptr Dst, CUdeviceptr Src, size_t Bytes) {
  if (CUresult R = enterWithContext("cuMemcpyDtoD_v2"))
    return R;
  if (!inAllocation(Dst, Bytes) || !inAllocation(Src, Bytes))
    return CUDA_ERROR_INVALID_VALUE;
  std::memmove(reinterpret_cast<void *>(Dst), reinterpret_cast<const void *>(Src), Bytes);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD8_v2(CUdeviceptr Dst, unsigned char Value, size_t Count) {
  if (CUresult R = enterWithContext("cuMemsetD8_v2"))
    return R;
  if (!inAllocation(Dst, Count))
    return CUDA_ERROR_INVALID_VALUE;
  std::memset(reinterpret_cast<void *>(Dst), Value, Count);
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuMemsetD32Async(CUdeviceptr Dst, unsigned int Value, size_t Count, CUstream) {
  if (CUresult R = enterWithContext("cuMemsetD32Async"))
    return R;
  if (Dst % 4 || !inAllocation(Dst, Count * 4))
    return CUDA_ERROR_INVALID_VALUE;
  auto *P = reinterpret_cast<uint32_t *>(Dst);
  std::fill(P, P + Count, Value);
  return CUDA_SUCCESS;
}

//===--- Modules, links, functions, launches ------------------------------===//
//
// No code runs: a "PTX compile" finds the module's `.entry` names (and
// counts one compile), a "cubin" is the text "GRIDJIT-FAKE-CUBIN sm_XY\n"
// followed by the PTX it came from (loading it compiles nothing, and a
// cubin for another architecture is CUDA_ERROR_NO_BINARY_FOR_GPU), and a
// launch is checked against the device's and the function's limits as the
// driver checks it, then counted.

namespace {

/// A function's attributes, from GRIDJIT_FAKE_CUDA_FUNC_ATTRS
/// ("max_threads:N,regs:N,static_shared:N,occupancy:N"), read when its
/// module is loaded.
struct FakeFunction {
  std::string Name;
  int MaxThreads = 1024;
  int Regs = 32;
  int StaticShared = 0;
  int MaxDynamicShared = 49152;
  int Occupancy = 0; ///< blocks per SM; 0: min(32, 2048 / block size)
  /// Bytes of each `.param` of the entry, in order.
  std::vector<unsigned> ParamBytes;
  /// The module has gridjit's grid barrier: a cooperative launch's last
  /// parameter is the barrier's state.
  bool GridState = false;
};

/// A module-scope `.const` array of the PTX (`.visible .const .align 4
/// .b8 NAME[BYTES];`): zeroed memory in ModuleGlobals, so that cuMemcpyHtoD
/// reaches it, freed with its module.
struct FakeGlobal {
  std::string Name;
  CUdeviceptr Addr = 0;
  size_t Bytes = 0;
};

struct FakeModule {
  int Device = 0;
  std::vector<std::unique_ptr<FakeFunction>> Functions;
  std::vector<FakeGlobal> Globals;
  ~FakeModule();
};

struct FakeLink {
  std::string Ptx;
  std::string Cubin;
  /// cuLinkCreate's options: the link's logs go there (as the driver's do).
  unsigned int NumOptions = 0;
  CUjit_option *Options = nullptr;
  void **Values = nullptr;
};

const char CubinMagic[] = "GRIDJIT-FAKE-CUBIN ";
std::vector<std::unique_ptr<FakeModule>> Modules; // guarded by Lock
std::vector<std::unique_ptr<FakeLink>> Links;     // guarded by Lock

/// Destroys the object \p H names in \p Objects (Lock held), or
/// CUDA_ERROR_INVALID_HANDLE when it names none.
template <typename T, typename Handle>
CUresult eraseHandle(std::vector<std::unique_ptr<T>> &Objects, Handle H) {
  for (auto It = Objects.begin(); It != Objects.end(); ++It)
    if (reinterpret_cast<Handle>(It->get()) == H) {
      Objects.erase(It);
      return CUDA_SUCCESS;
    }
  return CUDA_ERROR_INVALID_HANDLE;
}

int PtxCompiles = 0, Launches = 0, CooperativeLaunches = 0, FuncSetAttributes = 0;

/// Appends \p Line to $GRIDJIT_FAKE_CUDA_LOG, if set. Called with Lock held.
void logLine(const std::string &Line) {
  const char *Path = std::getenv("GRIDJIT_FAKE_CUDA_LOG");
  if (!Path || !*Path)
    return;
  if (std::FILE *F = std::fopen(Path, "a")) {
    std::fprintf(F, "%s\n", Line.c_str());
    std::fclose(F);
  }
}

/// "NAME grid (X, Y, Z) block (X, Y, Z) shared N".
std::string describeLaunch(const std::string &Name, unsigned GX, unsigned GY, unsigned GZ,
                           unsigned BX, unsigned BY, unsigned BZ, unsigned Shared) {
  auto D = [](unsigned X, unsigned Y, unsigned Z) {
    return "(" + std::to_string(X) + ", " + std::to_string(Y) + ", " + std::to_string(Z) + ")";
  };
  return Name + " grid " + D(GX, GY, GZ) + " block " + D(BX, BY, BZ) + " shared " +
         std::to_string(Shared);
}

/// The device whose context is current in this thread (one must be).
int currentDevice() { return reinterpret_cast<FakeContext *>(Current)->Device; }

/// "sm_XY" of device \p D (Lock held).
std::string archOf(int D) {
  return "sm_" + std::to_string(Devices[D].Major) + std::to_string(Devices[D].Minor);
}

/// Writes \p Info and \p Error into the log buffers \p Options name, and the
/// bytes written back into the size options' slots, as the driver does.
void writeLogs(unsigned int N, CUjit_option *Options, void **Values, const std::string &Info,
               const std::string &Error) {
  for (unsigned int I = 0; Options && Values && I < N; ++I) {
    bool IsInfo = Options[I] == CU_JIT_INFO_LOG_BUFFER;
    if (!IsInfo && Options[I] != CU_JIT_ERROR_LOG_BUFFER)
      continue;
    CUjit_option SizeOption =
        IsInfo ? CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES : CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES;
    for (unsigned int J = 0; J < N; ++J) {
      if (Options[J] != SizeOption)
        continue;
      size_t Size = reinterpret_cast<uintptr_t>(Values[J]);
      char *Buf = static_cast<char *>(Values[I]);
      if (!Buf || Size == 0)
        continue;
      const std::string &Text = IsInfo ? Info : Error;
      size_t Len = std::min(Text.size(), Size - 1);
      std::memcpy(Buf, Text.data(), Len);
      Buf[Len] = '\0';
      Values[J] = reinterpret_cast<void *>(static_cast<uintptr_t>(Len + 1));
    }
  }
}

/// The `.entry` names of \p Ptx, each with the configured attributes.
std::vector<std::unique_ptr<FakeFunction>> parseEntries(const std::string &Ptx) {
  FakeFunction Proto;
  forEachSetting("GRIDJIT_FAKE_CUDA_FUNC_ATTRS", [&](const std::string &Key, int V) {
    if (Key == "max_threads")
      Proto.MaxThreads = V;
    else if (Key == "regs")
      Proto.Regs = V;
    else if (Key == "static_shared")
      Proto.StaticShared = V;
    else if (Key == "occupancy")
      Proto.Occupancy = V;
  });
  Proto.MaxDynamicShared = 49152 - Proto.StaticShared;
  std::vector<std::unique_ptr<FakeFunction>> Out;
  for (size_t Pos = Ptx.find(".entry "); Pos != std::string::npos;
       Pos = Ptx.find(".entry ", Pos + 1)) {
    size_t Begin = Pos + 7;
    size_t End = Ptx.find_first_of("( \t\n", Begin);
    if (End == std::string::npos || End == Begin)
      continue;
    Out.push_back(std::make_unique<FakeFunction>(Proto));
    Out.back()->Name = Ptx.substr(Begin, End - Begin);
    Out.back()->GridState = Ptx.find("__gridjit_grid_state_addr") != std::string::npos;
    // `.param .u64 NAME_param_0, .param .f32 ...)`: sizes from the types.
    size_t Close = Ptx.find(')', End);
    for (size_t P = Ptx.find(".param ", End); P < Close; P = Ptx.find(".param ", P + 1)) {
      size_t Type = Ptx.find('.', P + 6);
      unsigned Bits = unsigned(std::atoi(Ptx.c_str() + Type + 2));
      Out.back()->ParamBytes.push_back(Ptx.compare(Type + 1, 4, "pred") == 0 ? 1 : Bits / 8);
    }
  }
  return Out;
}

/// The `.const NAME[BYTES]` arrays of \p Ptx (initialised or not), each
/// given zeroed memory (Lock held).
std::vector<FakeGlobal> parseGlobals(const std::string &Ptx) {
  std::vector<FakeGlobal> Out;
  for (size_t Pos = Ptx.find(".const "); Pos != std::string::npos;
       Pos = Ptx.find(".const ", Pos + 1)) {
    size_t Eol = Ptx.find('\n', Pos);
    std::string Line = Ptx.substr(Pos, Eol == std::string::npos ? Eol : Eol - Pos);
    size_t Open = Line.find('['), Close = Line.find(']');
    size_t NameStart = Line.rfind(' ', Open);
    if (Open == std::string::npos || Close == std::string::npos || NameStart == std::string::npos)
      continue;
    FakeGlobal G;
    G.Name = Line.substr(NameStart + 1, Open - NameStart - 1);
    G.Bytes = std::strtoull(Line.c_str() + Open + 1, nullptr, 10);
    void *P = std::calloc(1, G.Bytes ? G.Bytes : 1);
    G.Addr = reinterpret_cast<uintptr_t>(P);
    ModuleGlobals[G.Addr] = G.Bytes;
    Out.push_back(G);
  }
  return Out;
}

} // namespace

// With Lock held (cuModuleUnload), or at exit.
FakeModule::~FakeModule() {
  for (const FakeGlobal &G : Globals) {
    ModuleGlobals.erase(G.Addr);
    std::free(reinterpret_cast<void *>(G.Addr));
  }
}

namespace {

/// \p F if it is a function of a loaded module (Lock held), else null.
FakeFunction *findFunction(CUfunction F) {
  for (const auto &M : Modules)
    for (const auto &Fn : M->Functions)
      if (reinterpret_cast<CUfunction>(Fn.get()) == F)
        return Fn.get();
  return nullptr;
}

/// Blocks of \p Fn with \p BlockSize threads and \p DynamicShared bytes
/// of dynamic shared memory one SM holds at once. As the driver's occupancy
/// calculator, none when the dynamic shared memory is above the function's
/// current limit (CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES).
int occupancy(const FakeFunction &Fn, int BlockSize, size_t DynamicShared) {
  if (BlockSize <= 0 || BlockSize > Fn.MaxThreads || DynamicShared > size_t(Fn.MaxDynamicShared))
    return 0;
  return Fn.Occupancy ? Fn.Occupancy : std::min(32, 2048 / BlockSize);
}

/// The driver's checks of a launch (Lock held).
CUresult checkLaunch(const FakeFunction &Fn, unsigned GX, unsigned GY, unsigned GZ, unsigned BX,
                     unsigned BY, unsigned BZ, unsigned Shared) {
  if (!GX || !GY || !GZ || !BX || !BY || !BZ || BX > 1024 || BY > 1024 || BZ > 64 ||
      GX > 2147483647u || GY > 65535 || GZ > 65535 || uint64_t(BX) * BY * BZ > 1024)
    return CUDA_ERROR_INVALID_VALUE;
  if (BX * BY * BZ > unsigned(Fn.MaxThreads))
    return CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES;
  if (Shared > unsigned(Fn.MaxDynamicShared))
    return CUDA_ERROR_INVALID_VALUE;
  return CUDA_SUCCESS;
}

/// The allocation's start and size holding [Ptr, Ptr + Bytes) (Lock
/// held), or null.
uint8_t *allocationAt(CUdeviceptr Ptr, size_t Bytes, size_t *Room = nullptr) {
  auto It = Allocations.upper_bound(Ptr);
  if (It == Allocations.begin())
    return nullptr;
  --It;
  if (Ptr < It->first || Ptr - It->first + Bytes > It->second)
    return nullptr;
  if (Room)
    *Room = It->second - (Ptr - It->first);
  return reinterpret_cast<uint8_t *>(Ptr);
}

/// Runs a launch of \p Fn that passed the driver's checks (see the file
/// comment): the grid barrier's state, the echo, the launch's duration.
/// Called with \p G (on Lock) held; releases it while the launch "runs".
CUresult runLaunch(std::unique_lock<std::mutex> &G, const FakeFunction &Fn, bool Cooperative,
                   void **Params, const std::string &What) {
  size_t N = Fn.ParamBytes.size();
  if (N && !Params)
    return CUDA_ERROR_INVALID_VALUE;
  uint32_t *State = nullptr;
  if (Cooperative && Fn.GridState) {
    uint64_t Addr = 0;
    if (N == 0 || Fn.ParamBytes[N - 1] != 8)
      return CUDA_ERROR_INVALID_VALUE;
    std::memcpy(&Addr, Params[N - 1], 8);
    State = reinterpret_cast<uint32_t *>(allocationAt(Addr, 8));
    if (!State || Addr % 4) {
      logLine("grid barrier state outside device memory: " + What);
      return CUDA_ERROR_ILLEGAL_ADDRESS;
    }
    if (State[0] != 0) {
      logLine("grid barrier state in use or not zeroed: " + What);
      return CUDA_ERROR_LAUNCH_FAILED;
    }
    State[0] = 0xFFFFFFFFu; // in use until the launch ends
    --N;
  }
  const char *Echo = std::getenv("GRIDJIT_FAKE_CUDA_ECHO");
  if (Echo && std::strcmp(Echo, "1") == 0 && N >= 1 && Fn.ParamBytes[0] == 8) {
    uint64_t Dst = 0;
    std::memcpy(&Dst, Params[0], 8);
    size_t Room = 0;
    if (uint8_t *Out = allocationAt(Dst, 0, &Room))
      for (size_t I = 1; I < N && Fn.ParamBytes[I] <= Room; ++I) {
        std::memcpy(Out, Params[I], Fn.ParamBytes[I]);
        Out += Fn.ParamBytes[I];
        Room -= Fn.ParamBytes[I];
      }
  }
  if (const char *Us = std::getenv("GRIDJIT_FAKE_CUDA_LAUNCH_US")) {
    G.unlock();
    std::this_thread::sleep_for(std::chrono::microseconds(std::atoi(Us)));
    G.lock();
  }
  if (State) {
    State[0] = 0;
    ++State[1];
  }
  return CUDA_SUCCESS;
}

} // namespace

FAKE_EXPORT CUresult cuModuleLoadDataEx(CUmodule *Module, const void *Image,
                                        unsigned int NumOptions, CUjit_option *Options,
                                        void **Values) {
  if (CUresult R = enterWithContext("cuModuleLoadDataEx")) {
    if (R != CUDA_ERROR_NOT_INITIALIZED && R != CUDA_ERROR_INVALID_CONTEXT)
      writeLogs(NumOptions, Options, Values, "",
                "ptxas fatal   : configured failure of cuModuleLoadDataEx (fake driver)");
    return R;
  }
  if (!Module || !Image)
    return CUDA_ERROR_INVALID_VALUE;
  std::string Text = static_cast<const char *>(Image);
  std::lock_guard<std::mutex> G(Lock);
  int Dev = currentDevice();
  if (Text.compare(0, sizeof(CubinMagic) - 1, CubinMagic) == 0) {
    size_t Eol = Text.find('\n');
    std::string Arch = Text.substr(sizeof(CubinMagic) - 1, Eol - (sizeof(CubinMagic) - 1));
    if (Eol == std::string::npos || Arch != archOf(Dev))
      return CUDA_ERROR_NO_BINARY_FOR_GPU;
    Text = Text.substr(Eol + 1);
  } else if (Text.find(".version") != std::string::npos) {
    ++PtxCompiles;
    logLine("ptx compile (cuModuleLoadDataEx)");
  } else {
    return CUDA_ERROR_INVALID_IMAGE;
  }
  auto M = std::make_unique<FakeModule>();
  M->Device = Dev;
  M->Functions = parseEntries(Text);
  M->Globals = parseGlobals(Text);
  writeLogs(NumOptions, Options, Values,
            "info    : fake driver loaded " + std::to_string(M->Functions.size()) +
                " entry function(s) for " + archOf(Dev),
            "");
  *Module = reinterpret_cast<CUmodule>(M.get());
  Modules.push_back(std::move(M));
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuModuleUnload(CUmodule Module) {
  if (CUresult R = enterWithContext("cuModuleUnload"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return eraseHandle(Modules, Module);
}

FAKE_EXPORT CUresult cuModuleGetFunction(CUfunction *Function, CUmodule Module, const char *Name) {
  if (CUresult R = enterWithContext("cuModuleGetFunction"))
    return R;
  if (!Function || !Name)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  for (const auto &M : Modules) {
    if (reinterpret_cast<CUmodule>(M.get()) != Module)
      continue;
    for (const auto &F : M->Functions)
      if (F->Name == Name) {
        *Function = reinterpret_cast<CUfunction>(F.get());
        return CUDA_SUCCESS;
      }
    return CUDA_ERROR_NOT_FOUND;
  }
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuModuleGetGlobal_v2(CUdeviceptr *Ptr, size_t *Bytes, CUmodule Module,
                                          const char *Name) {
  if (CUresult R = enterWithContext("cuModuleGetGlobal_v2"))
    return R;
  if (!Name)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  for (const auto &M : Modules) {
    if (reinterpret_cast<CUmodule>(M.get()) != Module)
      continue;
    for (const FakeGlobal &Gl : M->Globals)
      if (Gl.Name == Name) {
        if (Ptr)
          *Ptr = Gl.Addr;
        if (Bytes)
          *Bytes = Gl.Bytes;
        return CUDA_SUCCESS;
      }
    return CUDA_ERROR_NOT_FOUND;
  }
  return CUDA_ERROR_INVALID_HANDLE;
}

FAKE_EXPORT CUresult cuLinkCreate_v2(unsigned int NumOptions, CUjit_option *Options, void **Values,
                                     CUlinkState *State) {
  if (CUresult R = enterWithContext("cuLinkCreate_v2"))
    return R;
  if (!State)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  Links.push_back(std::make_unique<FakeLink>());
  Links.back()->NumOptions = NumOptions;
  Links.back()->Options = Options;
  Links.back()->Values = Values;
  *State = reinterpret_cast<CUlinkState>(Links.back().get());
  return CUDA_SUCCESS;
}

/// The link \p State (Lock held), or null.
static FakeLink *findLink(CUlinkState State) {
  for (const auto &L : Links)
    if (reinterpret_cast<CUlinkState>(L.get()) == State)
      return L.get();
  return nullptr;
}

FAKE_EXPORT CUresult cuLinkAddData_v2(CUlinkState State, CUjitInputType Type, void *Data,
                                      size_t Size, const char *, unsigned int NumOptions,
                                      CUjit_option *Options, void **Values) {
  if (CUresult R = enterWithContext("cuLinkAddData_v2")) {
    if (R != CUDA_ERROR_NOT_INITIALIZED && R != CUDA_ERROR_INVALID_CONTEXT) {
      const char *Log = "ptxas fatal   : configured failure of cuLinkAddData (fake driver)";
      writeLogs(NumOptions, Options, Values, "", Log);
      std::lock_guard<std::mutex> G(Lock);
      if (FakeLink *L = findLink(State))
        writeLogs(L->NumOptions, L->Options, L->Values, "", Log);
    }
    return R;
  }
  if (!Data || Type != CU_JIT_INPUT_PTX)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  FakeLink *L = findLink(State);
  if (!L)
    return CUDA_ERROR_INVALID_HANDLE;
  std::string Ptx(static_cast<const char *>(Data), Size);
  if (!Ptx.empty() && Ptx.back() == '\0')
    Ptx.pop_back();
  if (Ptx.find(".version") == std::string::npos)
    return CUDA_ERROR_INVALID_PTX;
  ++PtxCompiles;
  logLine("ptx compile (cuLinkAddData)");
  L->Ptx += Ptx;
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLinkComplete(CUlinkState State, void **Cubin, size_t *Size) {
  if (CUresult R = enterWithContext("cuLinkComplete"))
    return R;
  if (!Cubin || !Size)
    return CUDA_ERROR_INVALID_VALUE;
  std::lock_guard<std::mutex> G(Lock);
  FakeLink *L = findLink(State);
  if (!L)
    return CUDA_ERROR_INVALID_HANDLE;
  L->Cubin = CubinMagic + archOf(currentDevice()) + "\n" + L->Ptx;
  *Cubin = L->Cubin.data();
  *Size = L->Cubin.size() + 1; // with its terminating NUL
  return CUDA_SUCCESS;
}

FAKE_EXPORT CUresult cuLinkDestroy(CUlinkState State) {
  if (CUresult R = enterWithContext("cuLinkDestroy"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  return eraseHandle(Links, State);
}

FAKE_EXPORT CUresult cuFuncGetAttribute(int *Value, CUfunction_attribute Attribute,
                                        CUfunction Function) {
  if (CUresult R = enterWithContext("cuFuncGetAttribute"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  FakeFunction *F = findFunction(Function);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!Value)
    return CUDA_ERROR_INVALID_VALUE;
  switch (Attribute) {
  case CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK:
    *Value = F->MaxThreads;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES:
    *Value = F->StaticShared;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_NUM_REGS:
    *Value = F->Regs;
    return CUDA_SUCCESS;
  case CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES:
    *Value = F->MaxDynamicShared;
    return CUDA_SUCCESS;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

FAKE_EXPORT CUresult cuFuncSetAttribute(CUfunction Function, CUfunction_attribute Attribute,
                                        int Value) {
  if (CUresult R = enterWithContext("cuFuncSetAttribute"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  FakeFunction *F = findFunction(Function);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (Attribute != CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES || Value < 0 ||
      Value + F->StaticShared > sharedOptin(Devices[currentDevice()]))
    return CUDA_ERROR_INVALID_VALUE;
  F->MaxDynamicShared = Value;
  ++FuncSetAttributes;
  logLine("cuFuncSetAttribute " + F->Name + " max_dynamic_shared " + std::to_string(Value));
  return CUDA_SUCCESS;
}

#ifndef GRIDJIT_FAKE_CUDA_WITHOUT_LAUNCH
FAKE_EXPORT CUresult cuLaunchKernel(CUfunction Function, unsigned int GX, unsigned int GY,
                                    unsigned int GZ, unsigned int BX, unsigned int BY,
                                    unsigned int BZ, unsigned int Shared, CUstream, void **Params,
                                    void **) {
  if (CUresult R = enterWithContext("cuLaunchKernel"))
    return R;
  std::unique_lock<std::mutex> G(Lock);
  FakeFunction *F = findFunction(Function);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult R = checkLaunch(*F, GX, GY, GZ, BX, BY, BZ, Shared))
    return R;
  std::string What = describeLaunch(F->Name, GX, GY, GZ, BX, BY, BZ, Shared);
  logLine("cuLaunchKernel " + What);
  CUresult R = runLaunch(G, *F, /*Cooperative=*/false, Params, What);
  Launches += R == CUDA_SUCCESS;
  return R;
}
#endif

FAKE_EXPORT CUresult cuLaunchCooperativeKernel(CUfunction Function, unsigned int GX,
                                               unsigned int GY, unsigned int GZ, unsigned int BX,
                                               unsigned int BY, unsigned int BZ,
                                               unsigned int Shared, CUstream, void **Params) {
  if (CUresult R = enterWithContext("cuLaunchCooperativeKernel"))
    return R;
  std::unique_lock<std::mutex> G(Lock);
  FakeFunction *F = findFunction(Function);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (CUresult R = checkLaunch(*F, GX, GY, GZ, BX, BY, BZ, Shared))
    return R;
  uint64_t Resident = uint64_t(occupancy(*F, BX * BY * BZ, Shared)) * Devices[currentDevice()].SMs;
  if (uint64_t(GX) * GY * GZ > Resident)
    return CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE;
  std::string What = describeLaunch(F->Name, GX, GY, GZ, BX, BY, BZ, Shared);
  logLine("cuLaunchCooperativeKernel " + What);
  CUresult R = runLaunch(G, *F, /*Cooperative=*/true, Params, What);
  CooperativeLaunches += R == CUDA_SUCCESS;
  return R;
}

FAKE_EXPORT CUresult cuOccupancyMaxActiveBlocksPerMultiprocessor(int *NumBlocks,
                                                                 CUfunction Function, int BlockSize,
                                                                 size_t DynamicShared) {
  if (CUresult R = enterWithContext("cuOccupancyMaxActiveBlocksPerMultiprocessor"))
    return R;
  std::lock_guard<std::mutex> G(Lock);
  FakeFunction *F = findFunction(Function);
  if (!F)
    return CUDA_ERROR_INVALID_HANDLE;
  if (!NumBlocks)
    return CUDA_ERROR_INVALID_VALUE;
  *NumBlocks = occupancy(*F, BlockSize, DynamicShared);
  return CUDA_SUCCESS;
}

//===--- For the tests ----------------------------------------------------===//

/// How many times device \p Device's primary context was ever retained.
FAKE_EXPORT int gridjitFakeCudaPrimaryCtxRetains(int Device) {
  std::lock_guard<std::mutex> G(Lock);
  return Device >= 0 && Device < MaxDevices ? Contexts[Device].TotalRetains : -1;
}

/// Device \p Device's primary context's current reference count.
FAKE_EXPORT int gridjitFakeCudaPrimaryCtxRefs(int Device) {
  std::lock_guard<std::mutex> G(Lock);
  return Device >= 0 && Device < MaxDevices ? Contexts[Device].Retains : -1;
}

/// Copies the first \p Bytes bytes of `.const` global \p Name of the module
/// loaded last that has one into \p Out; -1 if none has, or it is smaller.
FAKE_EXPORT int gridjitFakeCudaReadGlobal(const char *Name, void *Out, size_t Bytes) {
  std::lock_guard<std::mutex> G(Lock);
  for (auto M = Modules.rbegin(); M != Modules.rend(); ++M)
    for (const FakeGlobal &Gl : (*M)->Globals)
      if (Gl.Name == Name) {
        if (Bytes > Gl.Bytes)
          return -1;
        std::memcpy(Out, reinterpret_cast<const void *>(Gl.Addr), Bytes);
        return 0;
      }
  return -1;
}

/// PTX compiles so far (cuModuleLoadDataEx of PTX, cuLinkAddData).
FAKE_EXPORT int gridjitFakeCudaPtxCompiles() {
  std::lock_guard<std::mutex> G(Lock);
  return PtxCompiles;
}

/// Successful launches so far: \p Cooperative selects
/// cuLaunchCooperativeKernel's.
FAKE_EXPORT int gridjitFakeCudaLaunches(int Cooperative) {
  std::lock_guard<std::mutex> G(Lock);
  return Cooperative ? CooperativeLaunches : Launches;
}

/// Successful cuFuncSetAttribute calls so far (dynamic shared opt-ins).
FAKE_EXPORT int gridjitFakeCudaFuncSetAttributes() {
  std::lock_guard<std::mutex> G(Lock);
  return FuncSetAttributes;
}

/// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES of the function named
/// \p Name in the module loaded last that has one; -1 if none has.
FAKE_EXPORT int gridjitFakeCudaMaxDynamicShared(const char *Name) {
  std::lock_guard<std::mutex> G(Lock);
  for (auto M = Modules.rbegin(); M != Modules.rend(); ++M)
    for (const auto &Fn : (*M)->Functions)
      if (Fn->Name == Name)
        return Fn->MaxDynamicShared;
  return -1;
}

/// How many events are live.
FAKE_EXPORT int gridjitFakeCudaLiveEvents() {
  std::lock_guard<std::mutex> G(Lock);
  return LiveEvents;
}

/// How many device allocations are live.
FAKE_EXPORT int gridjitFakeCudaLiveAllocations() {
  std::lock_guard<std::mutex> G(Lock);
  return static_cast<int>(Allocations.size());
}

/// How many modules are loaded (not yet unloaded).
FAKE_EXPORT int gridjitFakeCudaLiveModules() {
  std::lock_guard<std::mutex> G(Lock);
  return static_cast<int>(Modules.size());
}

/// How many link states are live (created, not yet destroyed).
FAKE_EXPORT int gridjitFakeCudaLiveLinks() {
  std::lock_guard<std::mutex> G(Lock);
  return static_cast<int>(Links.size());
}

// Every export has exactly the type CudaDriverAPI.h declares for it.
#define FAKE_CHECK_TYPE(Name, Symbol)                                                              \
  static_assert(std::is_same_v<decltype(&Symbol), PFN_##Name>, #Symbol " has the wrong type");
FAKE_CHECK_TYPE(cuInit, cuInit)
FAKE_CHECK_TYPE(cuDriverGetVersion, cuDriverGetVersion)
FAKE_CHECK_TYPE(cuGetErrorName, cuGetErrorName)
FAKE_CHECK_TYPE(cuGetErrorString, cuGetErrorString)
FAKE_CHECK_TYPE(cuDeviceGetCount, cuDeviceGetCount)
FAKE_CHECK_TYPE(cuDeviceGet, cuDeviceGet)
FAKE_CHECK_TYPE(cuDeviceGetName, cuDeviceGetName)
FAKE_CHECK_TYPE(cuDeviceGetAttribute, cuDeviceGetAttribute)
FAKE_CHECK_TYPE(cuDeviceTotalMem, cuDeviceTotalMem_v2)
FAKE_CHECK_TYPE(cuDevicePrimaryCtxRetain, cuDevicePrimaryCtxRetain)
FAKE_CHECK_TYPE(cuDevicePrimaryCtxRelease, cuDevicePrimaryCtxRelease_v2)
FAKE_CHECK_TYPE(cuCtxSetCurrent, cuCtxSetCurrent)
FAKE_CHECK_TYPE(cuCtxGetCurrent, cuCtxGetCurrent)
FAKE_CHECK_TYPE(cuCtxSynchronize, cuCtxSynchronize)
FAKE_CHECK_TYPE(cuMemAlloc, cuMemAlloc_v2)
FAKE_CHECK_TYPE(cuMemFree, cuMemFree_v2)
FAKE_CHECK_TYPE(cuMemcpyHtoD, cuMemcpyHtoD_v2)
FAKE_CHECK_TYPE(cuMemcpyDtoH, cuMemcpyDtoH_v2)
FAKE_CHECK_TYPE(cuMemcpyDtoD, cuMemcpyDtoD_v2)
FAKE_CHECK_TYPE(cuMemsetD8, cuMemsetD8_v2)
FAKE_CHECK_TYPE(cuModuleLoadDataEx, cuModuleLoadDataEx)
FAKE_CHECK_TYPE(cuModuleUnload, cuModuleUnload)
FAKE_CHECK_TYPE(cuModuleGetFunction, cuModuleGetFunction)
FAKE_CHECK_TYPE(cuModuleGetGlobal, cuModuleGetGlobal_v2)
FAKE_CHECK_TYPE(cuLinkCreate, cuLinkCreate_v2)
FAKE_CHECK_TYPE(cuLinkAddData, cuLinkAddData_v2)
FAKE_CHECK_TYPE(cuLinkComplete, cuLinkComplete)
FAKE_CHECK_TYPE(cuLinkDestroy, cuLinkDestroy)
FAKE_CHECK_TYPE(cuFuncGetAttribute, cuFuncGetAttribute)
FAKE_CHECK_TYPE(cuFuncSetAttribute, cuFuncSetAttribute)
FAKE_CHECK_TYPE(cuLaunchCooperativeKernel, cuLaunchCooperativeKernel)
FAKE_CHECK_TYPE(cuOccupancyMaxActiveBlocksPerMultiprocessor,
                cuOccupancyMaxActiveBlocksPerMultiprocessor)
FAKE_CHECK_TYPE(cuMemsetD32Async, cuMemsetD32Async)
FAKE_CHECK_TYPE(cuEventCreate, cuEventCreate)
FAKE_CHECK_TYPE(cuEventRecord, cuEventRecord)
FAKE_CHECK_TYPE(cuEventQuery, cuEventQuery)
FAKE_CHECK_TYPE(cuEventDestroy, cuEventDestroy_v2)
#ifndef GRIDJIT_FAKE_CUDA_WITHOUT_LAUNCH
FAKE_CHECK_TYPE(cuLaunchKernel, cuLaunchKernel)
#endif
