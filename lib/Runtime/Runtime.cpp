//===- Runtime.cpp - The runtime interface and the runtime by target ------===//
//
// Part of gridjit. What every Runtime does the same way: device buffers'
// ownership and ranges, the kernel lookup of a launch; and createRuntime,
// the one place that knows every runtime (docs/Runtime.md).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Runtime/Runtime.h"

#include "gridjit/Runtime/HostRuntime.h"
#include "gridjit/Runtime/LaunchChecks.h"
#include "gridjit/Support/Limits.h"

#include "Cuda/CudaRuntime.h"

using namespace gridjit;
using llvm::Error;

char gridjit::KernelFaultError::ID = 0;
char gridjit::KernelCheckError::ID = 0;

static std::string joinFindings(const std::vector<CheckFinding> &Findings) {
  std::string S;
  for (const CheckFinding &F : Findings)
    S += (S.empty() ? "" : "\n") + F.Text;
  return S;
}

KernelCheckError::KernelCheckError(std::string Kernel, std::vector<CheckFinding> Findings)
    : ErrorInfo(ErrorKind::Check, joinFindings(Findings)), Kernel(std::move(Kernel)),
      Findings(std::move(Findings)) {}

//===----------------------------------------------------------------------===//
// DeviceBuffer, LoadedModule
//===----------------------------------------------------------------------===//

DeviceBuffer &DeviceBuffer::operator=(DeviceBuffer &&O) noexcept {
  if (this == &O)
    return *this;
  if (Owner)
    llvm::consumeError(Owner->free(*this));
  Owner = O.Owner;
  Addr = O.Addr;
  Bytes = O.Bytes;
  O.Owner = nullptr;
  O.Addr = O.Bytes = 0;
  return *this;
}

DeviceBuffer::~DeviceBuffer() {
  if (Owner)
    llvm::consumeError(Owner->free(*this));
}

LoadedModule::~LoadedModule() = default;

const KernelInfo *LoadedModule::getKernel(llvm::StringRef Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

const ConstantInfo *LoadedModule::getConstant(llvm::StringRef Name) const {
  for (const ConstantInfo &C : Constants)
    if (C.Name == Name)
      return &C;
  return nullptr;
}

//===----------------------------------------------------------------------===//
// Runtime
//===----------------------------------------------------------------------===//

Runtime::~Runtime() = default;

llvm::Expected<DeviceBuffer> Runtime::allocate(uint64_t Bytes) {
  // Before the target's allocator rounds it (to 64 bytes, pages, guard
  // regions, the driver's granularity) or adds to it.
  if (Bytes > limits::MaxBufferBytes)
    return makeError(ErrorKind::InvalidArgument,
                     "cannot allocate a device buffer of " + llvm::Twine(Bytes) +
                         " bytes: more than the limit of " + llvm::Twine(limits::MaxBufferBytes) +
                         " bytes (2^62) a buffer may have");
  auto Addr = allocateMemory(Bytes);
  if (!Addr)
    return Addr.takeError();
  return DeviceBuffer(this, *Addr, Bytes);
}

Error Runtime::free(DeviceBuffer &B) {
  if (!B)
    return Error::success();
  if (B.Owner != this)
    return makeError(ErrorKind::InvalidArgument, "cannot free a device buffer of another runtime");
  // A free the device refused leaves the handle valid: the memory is still
  // allocated, and the caller (or the handle's destructor) can try again
  // once the failure clears instead of leaking it.
  if (Error E = freeMemory(B.Addr, B.Bytes))
    return E;
  B.Owner = nullptr;
  B.Addr = B.Bytes = 0;
  return Error::success();
}

/// Checks that [Offset, Offset + Bytes) of \p B is memory of \p RT.
static Error checkRange(const Runtime *RT, const DeviceBuffer &B, uint64_t Offset, uint64_t Bytes,
                        const char *What) {
  if (!B)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(What) + ": the device buffer is empty");
  if (B.getRuntime() != RT)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(What) + ": the device buffer belongs to another runtime");
  if (Offset > B.size() || Bytes > B.size() - Offset)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(What) + ": bytes [" + llvm::Twine(Offset) + ", " +
                         llvm::Twine(Offset) + " + " + llvm::Twine(Bytes) +
                         ") are outside the buffer of " + llvm::Twine(B.size()) + " bytes");
  return Error::success();
}

Error Runtime::copyToDevice(const DeviceBuffer &Dst, const void *Src, uint64_t Bytes,
                            uint64_t Offset) {
  if (Error E = checkRange(this, Dst, Offset, Bytes, "copyToDevice"))
    return E;
  if (Bytes == 0)
    return Error::success();
  return writeMemory(Dst.getAddress() + Offset, Src, Bytes);
}

Error Runtime::copyFromDevice(void *Dst, const DeviceBuffer &Src, uint64_t Bytes, uint64_t Offset) {
  if (Error E = checkRange(this, Src, Offset, Bytes, "copyFromDevice"))
    return E;
  if (Bytes == 0)
    return Error::success();
  return readMemory(Dst, Src.getAddress() + Offset, Bytes);
}

Error Runtime::launch(LoadedModule &M, llvm::StringRef Kernel, const LaunchConfig &Config,
                      llvm::ArrayRef<KernelArg> Args, const LaunchOptions &Opts) {
  if (M.getTargetKind() != Kind)
    return makeError(ErrorKind::InvalidArgument,
                     "cannot launch a kernel of a module loaded for target '" +
                         std::string(getTargetName(M.getTargetKind())) + "' on the " +
                         std::string(getTargetName(Kind)) + " runtime");
  auto K = findKernel(M, Kernel);
  if (!K)
    return K.takeError();
  // A GPU kernel cannot be stopped once queued: refused, never ignored.
  if ((Opts.TimeoutMilliseconds || Opts.Cancel) && Kind != TargetKind::Host)
    return makeError(
        ErrorKind::InvalidArgument,
        "kernel '" + K->Name + "': the " + std::string(getTargetName(Kind)) +
            " runtime cannot stop a launch (LaunchOptions::" +
            (Opts.TimeoutMilliseconds ? "TimeoutMilliseconds must be 0" : "Cancel must be null") +
            " there)");
  // A setConstant waits for this launch to return (LoadedModule::ConstantsLock).
  std::shared_lock<std::shared_mutex> Reading(M.ConstantsLock, std::defer_lock);
  if (!M.getConstants().empty()) {
    std::lock_guard<std::mutex> Turn(M.ConstantsGate);
    Reading.lock();
  }
  return launchKernel(M, *K, Config, Args, Opts);
}

Error Runtime::setConstant(LoadedModule &M, llvm::StringRef Name, const void *Data, uint64_t Bytes,
                           std::optional<ScalarKind> Elem) {
  if (M.getTargetKind() != Kind)
    return makeError(ErrorKind::InvalidArgument,
                     "cannot set constant memory of a module loaded for target '" +
                         std::string(getTargetName(M.getTargetKind())) + "' on the " +
                         std::string(getTargetName(Kind)) + " runtime");
  const ConstantInfo *C = M.getConstant(Name);
  if (!C) {
    std::string Known;
    for (const ConstantInfo &K : M.getConstants())
      Known += (Known.empty() ? "" : ", ") + ("'" + K.Name + "'");
    return makeError(ErrorKind::NotFound,
                     "no constant memory named '" + Name.str() + "' in the module (" +
                         (Known.empty() ? std::string("it declares none") : "it has " + Known) +
                         ")");
  }
  if (Elem && *Elem != C->Ty.getScalarKind())
    return makeError(ErrorKind::InvalidArgument,
                     "constant memory '" + C->Name + "' of type '" + C->Ty.str() + "' holds '" +
                         std::string(scalarName(C->Ty.getScalarKind())) + "', given '" +
                         std::string(scalarName(*Elem)) + "'");
  if (Bytes != C->Bytes)
    return makeError(ErrorKind::InvalidArgument,
                     "constant memory '" + C->Name + "' of type '" + C->Ty.str() + "' takes " +
                         std::to_string(C->Bytes) + " bytes, given " + std::to_string(Bytes));
  if (!Data)
    return makeError(ErrorKind::InvalidArgument,
                     "constant memory '" + C->Name + "': the data pointer is null");
  std::unique_lock<std::shared_mutex> Writing(M.ConstantsLock, std::defer_lock);
  {
    std::lock_guard<std::mutex> Turn(M.ConstantsGate);
    Writing.lock();
  }
  return writeConstant(M, *C, Data);
}

Error Runtime::writeConstant(LoadedModule &, const ConstantInfo &C, const void *) {
  return makeError(ErrorKind::Failed, "this runtime cannot set constant memory ('" + C.Name + "')");
}

//===----------------------------------------------------------------------===//
// The runtime by target
//===----------------------------------------------------------------------===//

llvm::Expected<std::unique_ptr<Runtime>> gridjit::createRuntime(TargetKind K,
                                                                const RuntimeOptions &Opts) {
  switch (K) {
  case TargetKind::Host: {
    HostRuntimeOptions HO; // HostRuntime::create checks the thread count
    HO.NumThreads = Opts.NumThreads;
    HO.CatchFaults = Opts.CatchFaults;
    auto RT = HostRuntime::create(HO);
    if (!RT)
      return RT.takeError();
    return std::unique_ptr<Runtime>(std::move(*RT));
  }
  case TargetKind::NVPTX: {
    CudaRuntimeOptions CO;
    CO.Device = Opts.Device;
    CO.UseCubinCache = Opts.UseCubinCache;
    CO.CacheDir = Opts.CacheDir;
    CO.CubinTiers = Opts.CubinTiers;
    CO.Warning = Opts.Warning;
    CO.CacheSecret = Opts.CacheSecret;
    auto RT = CudaRuntime::create(CO);
    if (!RT)
      return RT.takeError();
    return std::unique_ptr<Runtime>(std::move(*RT));
  }
  }
  return makeError(ErrorKind::InvalidArgument, "unknown target kind");
}
