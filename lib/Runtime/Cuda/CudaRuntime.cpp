//===- CudaRuntime.cpp - The runtime of the nvptx target, on the CUDA driver -===//
//
// Part of gridjit. See CudaRuntime.h. The launch checks' messages are part
// of the interface (docs/CUDA.md, "Launch checks"; unittests/Runtime/
// CudaRuntimeTest.cpp pins them).
//
//===----------------------------------------------------------------------===//

#include "CudaRuntime.h"

#include "gridjit/Runtime/LaunchChecks.h"

#include "llvm/ADT/SmallVector.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <mutex>

using namespace gridjit;
using llvm::Error;
using llvm::Expected;

namespace {

Error fail(ErrorKind K, const llvm::Twine &Msg) { return makeError(K, Msg); }

/// An error: \p What, the driver's \p E, and the driver JIT's error and
/// info logs (each NUL-terminated here, since the driver may fill them).
template <size_t N>
Error failWithJitLogs(const std::string &What, Error E, char (&InfoLog)[N], char (&ErrorLog)[N]) {
  InfoLog[N - 1] = ErrorLog[N - 1] = '\0';
  ErrorKind Kind = peekErrorKind(E);
  std::string Msg = What + ": " + llvm::toString(std::move(E));
  if (ErrorLog[0])
    Msg += "\nJIT error log:\n" + std::string(llvm::StringRef(ErrorLog).rtrim());
  if (InfoLog[0])
    Msg += "\nJIT info log:\n" + std::string(llvm::StringRef(InfoLog).rtrim());
  return fail(Kind, Msg);
}

/// "device N (NAME, sm_XY)".
std::string describeDevice(const CudaDeviceInfo &I) {
  return "device " + std::to_string(I.Ordinal) + " (" + I.Name + ", " + I.getArch() + ")";
}

/// The NN of "sm_NN" (or "sm_NNa"); 0 when \p Arch is not of that form.
unsigned smNumber(llvm::StringRef Arch) {
  unsigned N = 0;
  if (!Arch.consume_front("sm_"))
    return 0;
  Arch = Arch.take_while([](char C) { return C >= '0' && C <= '9'; });
  if (Arch.getAsInteger(10, N))
    return 0;
  return N;
}

} // namespace

/// A kernel of a loaded module: its function and the attributes the
/// launch checks need (read once at load).
struct gridjit::CudaKernel {
  CUfunction Fn = nullptr;
  int MaxThreads = 0;   ///< CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK
  int NumRegs = 0;      ///< CU_FUNC_ATTRIBUTE_NUM_REGS
  int StaticShared = 0; ///< CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES
  /// CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES as it is now: raised
  /// (never lowered) by the opt-in of a launch that needs more.
  std::atomic<int> MaxDynamicShared{0};
  std::mutex OptInLock; ///< serialises cuFuncSetAttribute
};

/// How a launch's messages name it: WHERE ("kernel 'K' launched with grid
/// (X, Y, Z) and block (X, Y, Z)") and DEV ("device N (NAME, sm_XY)").
struct gridjit::LaunchSite {
  std::string Where, Dev;
};

namespace {

/// A PTX artifact loaded into the device's primary context.
class CudaModule final : public LoadedModule {
public:
  CudaModule(cuda::Driver &D, int Ordinal, std::vector<KernelInfo> Infos,
             std::vector<ConstantInfo> Consts)
      : LoadedModule(TargetKind::NVPTX, std::move(Infos), std::move(Consts)), Drv(D),
        Ordinal(Ordinal), Kernels(getKernels().size()) {}
  ~CudaModule() override {
    if (!Module)
      return;
    // Nothing to report to in a destructor; a failing unload leaks the
    // module, which the context's release frees anyway.
    if (auto Ctx = Drv.enterContext(Ordinal))
      (void)Drv.api().cuModuleUnload(Module);
    else
      llvm::consumeError(Ctx.takeError());
  }

  /// The kernel for \p K, one of this module's KernelInfos.
  CudaKernel &kernel(const KernelInfo &K) { return Kernels[&K - getKernels().data()]; }

  cuda::Driver &Drv;
  int Ordinal;
  CUmodule Module = nullptr;
  std::vector<CudaKernel> Kernels; ///< parallel to getKernels()
};

/// Grid barrier states per chunk of device memory, and the bytes between
/// two (a cache line of their own, so that concurrent launches' atomics do
/// not contend).
constexpr size_t GridStatesPerChunk = 256, GridStateStride = 128;

} // namespace

//===----------------------------------------------------------------------===//
// Creation, contexts, memory
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<CudaRuntime>> CudaRuntime::create(unsigned Ordinal,
                                                           const CudaDriverOptions &DriverOptions) {
  CudaRuntimeOptions O;
  O.Device = Ordinal;
  O.Driver = DriverOptions;
  return create(O);
}

/// The cubin cache \p Opts describe: its tiers (CubinTiers), with a disk
/// tier of its own in CacheDir (or the default directory) when none is
/// given. Null when it has no tier at all (no directory to be had): every
/// load then compiles.
static std::unique_ptr<TieredCache> openCubinCache(const CudaRuntimeOptions &Opts) {
  TieredCacheOptions TO;
  TO.Tiers = Opts.CubinTiers;
  if (!TO.Tiers.Disk) {
    if (auto Dir = resolveCacheDirectory(Opts.CacheDir)) {
      DiskCacheOptions DO;
      DO.Dir = *Dir;
      // A directory that cannot be written costs every process a driver
      // compile per module: one warning says why.
      DO.Warning = Opts.Warning;
      DO.Consequence = "cubins are not kept: every load has the driver compile the PTX";
      DO.Secret = Opts.CacheSecret;
      TO.Tiers.Disk = std::make_shared<DiskCache>(DO);
    } else {
      llvm::consumeError(Dir.takeError());
    }
  }
  if (!TO.Tiers.Disk && !TO.Tiers.Remote)
    return nullptr;
  return std::make_unique<TieredCache>(std::move(TO));
}

Expected<std::unique_ptr<CudaRuntime>> CudaRuntime::create(const CudaRuntimeOptions &Opts) {
  unsigned Ordinal = Opts.Device;
  auto D = cuda::Driver::open(Opts.Driver);
  if (!D) {
    std::string Why;
    Error Rest = llvm::handleErrors(
        D.takeError(), [&](const cuda::DriverUnavailableError &U) { Why = U.getReason(); });
    if (Rest)
      return std::move(Rest);
    return fail(ErrorKind::NoDevice, "no CUDA device: " + Why);
  }
  int Count = (*D)->getDeviceCount();
  if (Count == 0)
    return fail(ErrorKind::NoDevice, "no CUDA device: the driver reports none");
  if (Ordinal >= unsigned(Count))
    return fail(ErrorKind::NotFound,
                "CUDA device " + llvm::Twine(Ordinal) + " does not exist: this machine has " +
                    llvm::Twine(Count) + " CUDA device" + (Count == 1 ? "" : "s") + " (ordinal" +
                    (Count == 1 ? " 0" : "s 0 to " + std::to_string(Count - 1)) + ")");
  auto Info = (*D)->getDeviceInfo(int(Ordinal));
  if (!Info)
    return Info.takeError();
  std::unique_ptr<CudaRuntime> RT(new CudaRuntime(std::move(*D), std::move(*Info)));
  if (auto Ctx = RT->enter(); !Ctx)
    return Ctx.takeError();
  if (Opts.UseCubinCache)
    RT->Cubins = openCubinCache(Opts);
  return std::move(RT);
}

CudaRuntime::~CudaRuntime() {
  if (GridStateChunks.empty())
    return;
  // Nothing to report to: a failure leaks what the context's release
  // frees anyway.
  if (auto Ctx = Drv->enterContext(Info.Ordinal)) {
    (void)Drv->api().cuCtxSynchronize();
    for (GridStateSlot &S : GridStates)
      if (S.Done)
        (void)Drv->api().cuEventDestroy(S.Done);
    for (CUdeviceptr Chunk : GridStateChunks)
      (void)Drv->api().cuMemFree(Chunk);
  } else {
    llvm::consumeError(Ctx.takeError());
  }
}

Expected<cuda::Driver::ScopedContext> CudaRuntime::enter() {
  return Drv->enterContext(Info.Ordinal);
}

Expected<uint64_t> CudaRuntime::allocateMemory(uint64_t Bytes) {
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  CUdeviceptr Ptr = 0;
  // cuMemAlloc refuses 0 bytes; an empty buffer still needs an address.
  if (Error E = GRIDJIT_CU(*Drv, cuMemAlloc, &Ptr, std::max<uint64_t>(Bytes, 1)))
    return std::move(E);
  return uint64_t(Ptr);
}

Error CudaRuntime::freeMemory(uint64_t Addr, uint64_t) {
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  return GRIDJIT_CU(*Drv, cuMemFree, CUdeviceptr(Addr));
}

Error CudaRuntime::writeMemory(uint64_t Addr, const void *Src, uint64_t Bytes) {
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  return GRIDJIT_CU(*Drv, cuMemcpyHtoD, CUdeviceptr(Addr), Src, Bytes);
}

Error CudaRuntime::writeConstant(LoadedModule &LM, const ConstantInfo &C, const void *Data) {
  auto &M = static_cast<CudaModule &>(LM);
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  CUdeviceptr Addr = 0;
  size_t Bytes = 0;
  if (Error E = GRIDJIT_CU(*Drv, cuModuleGetGlobal, &Addr, &Bytes, M.Module, C.Symbol.c_str()))
    return E;
  if (Bytes != C.Bytes)
    return makeError(ErrorKind::Failed, "constant memory '" + C.Name + "' has " +
                                            std::to_string(Bytes) +
                                            " bytes in the loaded module, " +
                                            std::to_string(C.Bytes) + " in its metadata");
  if (Error E = GRIDJIT_CU(*Drv, cuCtxSynchronize))
    return E;
  return GRIDJIT_CU(*Drv, cuMemcpyHtoD, Addr, Data, Bytes);
}

Error CudaRuntime::readMemory(void *Dst, uint64_t Addr, uint64_t Bytes) {
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  // A launch on a caller's (non-blocking) stream is not ordered before a
  // copy on the default stream: wait for everything first.
  if (Error E = GRIDJIT_CU(*Drv, cuCtxSynchronize))
    return E;
  return GRIDJIT_CU(*Drv, cuMemcpyDtoH, Dst, CUdeviceptr(Addr), Bytes);
}

Error CudaRuntime::synchronize() {
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  return GRIDJIT_CU(*Drv, cuCtxSynchronize);
}

//===----------------------------------------------------------------------===//
// Loading
//===----------------------------------------------------------------------===//

Expected<std::unique_ptr<LoadedModule>> CudaRuntime::load(const Artifact &A) {
  if (A.Kind != TargetKind::NVPTX)
    return fail(ErrorKind::InvalidArgument,
                "cannot load an artifact for target '" + std::string(getTargetName(A.Kind)) +
                    "' into the CUDA runtime (compile it with the nvptx target)");
  unsigned Want = smNumber(A.Arch);
  unsigned Have = unsigned(Info.ComputeMajor * 10 + Info.ComputeMinor);
  if (Want == 0)
    return fail(ErrorKind::InvalidArgument,
                "cannot load PTX for architecture '" + A.Arch + "': not an sm_XY architecture");
  if (Want > Have)
    return fail(ErrorKind::InvalidArgument,
                "cannot load PTX compiled for " + A.Arch + " on " + describeDevice(Info) +
                    ": the device's compute capability is older than the PTX's (compile for " +
                    Info.getArch() + " or older)");
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();

  bool FromCache = false;
  CachedArtifactRef Cubin;
  if (Cubins) {
    auto C = getCubin(A, FromCache, TieredCache::Mode::Lookup);
    if (!C)
      return C.takeError();
    Cubin = std::move(*C);
  }

  char InfoLog[8192] = {0}, ErrorLog[8192] = {0};
  CUjit_option Options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {InfoLog, reinterpret_cast<void *>(uintptr_t(sizeof(InfoLog))), ErrorLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(ErrorLog)))};
  auto M = std::make_unique<CudaModule>(*Drv, Info.Ordinal, A.Kernels, A.Constants);
  // The image: the cubin (cached or just linked), else the PTX;
  // NUL-terminated (std::string), as the driver wants PTX.
  auto LoadImage = [&] {
    return GRIDJIT_CU(*Drv, cuModuleLoadDataEx, &M->Module,
                      Cubin ? Cubin->Art.Payload.c_str() : A.Payload.c_str(),
                      unsigned(std::size(Options)), Options, Values);
  };
  Error Loaded = LoadImage();
  if (Loaded && FromCache) {
    // A cached cubin the driver refuses (e.g. damaged): compile afresh.
    llvm::consumeError(std::move(Loaded));
    M->Module = nullptr;
    auto C = getCubin(A, FromCache, TieredCache::Mode::Refresh);
    if (!C)
      return C.takeError();
    Cubin = std::move(*C);
    Values[1] = reinterpret_cast<void *>(uintptr_t(sizeof(InfoLog)));
    Values[3] = reinterpret_cast<void *>(uintptr_t(sizeof(ErrorLog)));
    Loaded = LoadImage();
  }
  if (Error E = std::move(Loaded)) {
    M->Module = nullptr;
    return failWithJitLogs(std::string("cannot load the ") +
                               (!Cubins     ? "PTX"
                                : FromCache ? "cached cubin of the PTX"
                                            : "cubin of the PTX") +
                               " (" + A.Arch + ") on " + describeDevice(Info),
                           std::move(E), InfoLog, ErrorLog);
  }
  for (const KernelInfo &KI : M->getKernels()) {
    CudaKernel &K = M->kernel(KI);
    if (Error E = GRIDJIT_CU(*Drv, cuModuleGetFunction, &K.Fn, M->Module, KI.Name.c_str()))
      return prefixError("kernel '" + KI.Name + "' has no entry in the loaded PTX", std::move(E));
    int MaxDynamic = 0;
    const std::pair<CUfunction_attribute, int *> Attributes[] = {
        {CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &K.MaxThreads},
        {CU_FUNC_ATTRIBUTE_NUM_REGS, &K.NumRegs},
        {CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &K.StaticShared},
        {CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, &MaxDynamic}};
    for (const auto &[Attribute, Value] : Attributes)
      if (Error E = GRIDJIT_CU(*Drv, cuFuncGetAttribute, Value, Attribute, K.Fn))
        return prefixError("kernel '" + KI.Name + "'", std::move(E));
    K.MaxDynamicShared = MaxDynamic;
  }
  return std::unique_ptr<LoadedModule>(std::move(M));
}

/// The cubin cache's key: the PTX, the device's compute capability and
/// the driver's version (and gridjit's, as every key has).
static CacheKey cubinKey(const Artifact &A, const CudaDeviceInfo &Info) {
  CacheKeyInputs In;
  In.GridjitVersion = std::string(getGridjitVersion());
  In.GridjitBuild = std::string(getGridjitBuildId());
  In.LLVMVersion = std::string(getLLVMVersion());
  In.TargetName = "nvptx-cubin";
  In.Arch = Info.getArch();
  In.TargetFingerprint = "cuda-driver=" + std::to_string(Info.DriverVersion);
  In.Options = "ptx-arch=" + A.Arch + ";";
  In.CanonicalModule = A.Payload;
  return computeCacheKey(In);
}

Expected<CachedArtifactRef> CudaRuntime::getCubin(const Artifact &A, bool &FromCache,
                                                  TieredCache::Mode M) {
  // Of the threads, processes and machines loading this PTX on such a
  // device at once, one compiles and the others load its cubin
  // (TieredCache.h; the Compiler does the same for modules). A refresh,
  // after the driver refused a cached cubin, compiles afresh and asks no
  // tier.
  TieredRequestInfo TI;
  auto C = Cubins->get(
      cubinKey(A, Info), {TargetKind::NVPTX, Info.getArch()}, [&] { return linkCubin(A); }, TI, M);
  FromCache = TI.Outcome != CacheOutcome::Compiled;
  return C;
}

Expected<Artifact> CudaRuntime::linkCubin(const Artifact &A) {
  char InfoLog[8192] = {0}, ErrorLog[8192] = {0};
  CUjit_option Options[] = {CU_JIT_INFO_LOG_BUFFER, CU_JIT_INFO_LOG_BUFFER_SIZE_BYTES,
                            CU_JIT_ERROR_LOG_BUFFER, CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES};
  void *Values[] = {InfoLog, reinterpret_cast<void *>(uintptr_t(sizeof(InfoLog))), ErrorLog,
                    reinterpret_cast<void *>(uintptr_t(sizeof(ErrorLog)))};
  CUlinkState Link = nullptr;
  if (Error E =
          GRIDJIT_CU(*Drv, cuLinkCreate, unsigned(std::size(Options)), Options, Values, &Link))
    return prefixError("cannot compile the PTX (" + A.Arch + ") for " + describeDevice(Info),
                       std::move(E));
  Artifact Entry;
  Error E =
      GRIDJIT_CU(*Drv, cuLinkAddData, Link, CU_JIT_INPUT_PTX, const_cast<char *>(A.Payload.c_str()),
                 A.Payload.size() + 1, "gridjit.ptx", 0, nullptr, nullptr);
  if (!E) {
    void *Data = nullptr;
    size_t Size = 0;
    E = GRIDJIT_CU(*Drv, cuLinkComplete, Link, &Data, &Size);
    if (!E)
      Entry.Payload.assign(static_cast<const char *>(Data), Size); // owned by Link: copy
  }
  (void)Drv->api().cuLinkDestroy(Link); // the cubin is copied; nothing to report
  if (E)
    return failWithJitLogs("cannot compile the PTX (" + A.Arch + ") for " + describeDevice(Info),
                           std::move(E), InfoLog, ErrorLog);
  Entry.Kind = TargetKind::NVPTX;
  Entry.Arch = Info.getArch();
  Entry.Kernels = A.Kernels;
  Entry.Constants = A.Constants;
  return std::move(Entry);
}

//===----------------------------------------------------------------------===//
// Launching
//===----------------------------------------------------------------------===//

/// "(X, Y, Z)".
static std::string dims(const int (&D)[3]) {
  return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " + std::to_string(D[2]) +
         ")";
}

/// The parameters of a launch: each argument's bytes as the kernel reads
/// them (a pointer is its CUdeviceptr, kept in \p Pointers). Error: a host
/// pointer, which a GPU cannot use.
static Error packParameters(const KernelInfo &KI, llvm::ArrayRef<KernelArg> Args,
                            llvm::SmallVectorImpl<uint64_t> &Pointers,
                            llvm::SmallVectorImpl<void *> &Params) {
  Pointers.assign(Args.size(), 0);
  Params.assign(Args.size(), nullptr);
  for (size_t I = 0; I < Args.size(); ++I) {
    if (!Args[I].isPointer()) {
      Params[I] = const_cast<void *>(Args[I].getScalarBytes());
      continue;
    }
    if (Args[I].isHostPointer())
      return argumentError(KI, I,
                           "is a host pointer (KernelArg::pointer), which a GPU cannot use; pass a "
                           "device buffer (KernelArg::buffer) or a device address "
                           "(KernelArg::devicePointer)");
    Pointers[I] = Args[I].getAddress();
    Params[I] = &Pointers[I];
  }
  return Error::success();
}

Error CudaRuntime::launchKernel(LoadedModule &LM, const KernelInfo &KI, const LaunchConfig &C,
                                llvm::ArrayRef<KernelArg> Args, const LaunchOptions &Opts) {
  CudaKernel &K = static_cast<CudaModule &>(LM).kernel(KI);
  // Every check that needs no device state comes first, so that a refused
  // launch changes nothing (docs/CUDA.md, "Launch checks").
  if (Error E = checkLaunchConfig(KI, C))
    return E;
  LaunchSite S{describeLaunch(KI, C), describeDevice(Info)};
  if (Error E = checkDeviceLimits(K, KI, C, S))
    return E;
  if (Error E = checkArguments(KI, Args))
    return E;
  llvm::SmallVector<uint64_t, 16> Pointers;
  llvm::SmallVector<void *, 16> Params;
  if (Error E = packParameters(KI, Args, Pointers, Params))
    return E;
  auto Ctx = enter();
  if (!Ctx)
    return Ctx.takeError();
  if (Error E = grantDynamicShared(K, KI, C, S))
    return E;
  return issueLaunch(K, KI, C, Params, Opts, S);
}

Error CudaRuntime::checkDeviceLimits(const CudaKernel &K, const KernelInfo &KI,
                                     const LaunchConfig &C, const LaunchSite &S) const {
  // The device's grid and block dimensions.
  if (C.Grid.X > unsigned(Info.MaxGridDim[0]) || C.Grid.Y > unsigned(Info.MaxGridDim[1]) ||
      C.Grid.Z > unsigned(Info.MaxGridDim[2]))
    return fail(ErrorKind::Configuration, S.Where + ": grid dimensions are limited to " +
                                              dims(Info.MaxGridDim) + " on " + S.Dev);
  if (C.Block.X > unsigned(Info.MaxBlockDim[0]) || C.Block.Y > unsigned(Info.MaxBlockDim[1]) ||
      C.Block.Z > unsigned(Info.MaxBlockDim[2]))
    return fail(ErrorKind::Configuration, S.Where + ": block dimensions are limited to " +
                                              dims(Info.MaxBlockDim) + " on " + S.Dev);

  // The function's threads per block (its registers included).
  uint64_t Threads = C.Block.count();
  if (Threads > uint64_t(K.MaxThreads))
    return fail(ErrorKind::Configuration,
                S.Where + ": a block of " + std::to_string(Threads) +
                    " threads exceeds this kernel's limit of " + std::to_string(K.MaxThreads) +
                    " threads per block on " + S.Dev + " (it uses " + std::to_string(K.NumRegs) +
                    " registers per thread); the largest valid block has " +
                    std::to_string(K.MaxThreads) + " threads");

  // Shared memory: the function's static size plus the launch's dynamic
  // size, within the device's opt-in limit.
  uint64_t Static = uint64_t(K.StaticShared), Dynamic = C.DynamicSharedBytes;
  uint64_t Limit = uint64_t(std::max(Info.SharedMemoryPerBlockOptin, Info.SharedMemoryPerBlock));
  if (Static + Dynamic > Limit)
    return fail(ErrorKind::Configuration,
                S.Where + ": " + std::to_string(Static) + " bytes of static and " +
                    std::to_string(Dynamic) +
                    " bytes of dynamic shared memory exceed the limit of " + std::to_string(Limit) +
                    " bytes per block on " + S.Dev +
                    "; the largest valid dynamic shared memory for this kernel is " +
                    std::to_string(Limit > Static ? Limit - Static : 0) + " bytes");

  if (KI.Cooperative && !Info.CooperativeLaunch)
    return fail(ErrorKind::Configuration,
                S.Where +
                    ": the kernel calls grid_sync(), so it must be launched cooperatively, but " +
                    S.Dev + " does not support cooperative launches");
  return Error::success();
}

Error CudaRuntime::grantDynamicShared(CudaKernel &K, const KernelInfo &KI, const LaunchConfig &C,
                                      const LaunchSite &S) {
  uint64_t Dynamic = C.DynamicSharedBytes;
  if (Dynamic <= uint64_t(K.MaxDynamicShared.load()))
    return KI.Cooperative ? checkResidency(K, C, S) : Error::success();
  // Above the function's current dynamic limit (48 KiB less static by
  // default) but within the device's opt-in limit: opt in. The new limit
  // is published (MaxDynamicShared) only once the launch is granted, so a
  // thread that reads it never launches on a limit that is put back.
  std::lock_guard<std::mutex> G(K.OptInLock);
  int Before = K.MaxDynamicShared.load();
  if (Dynamic <= uint64_t(Before))
    return KI.Cooperative ? checkResidency(K, C, S) : Error::success();
  if (Error E = GRIDJIT_CU(*Drv, cuFuncSetAttribute, K.Fn,
                           CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, int(Dynamic)))
    return prefixError(S.Where + ": cannot opt in to " + std::to_string(Dynamic) +
                           " bytes of dynamic shared memory",
                       std::move(E));
  // The residency of a cooperative grid is computed with the limit raised
  // (the driver's occupancy counts no block whose dynamic shared memory is
  // above it); a grid that does not fit puts the old limit back.
  if (KI.Cooperative)
    if (Error E = checkResidency(K, C, S)) {
      (void)Drv->api().cuFuncSetAttribute(K.Fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                          Before);
      return E;
    }
  K.MaxDynamicShared = int(Dynamic);
  return Error::success();
}

Error CudaRuntime::checkResidency(const CudaKernel &K, const LaunchConfig &C, const LaunchSite &S) {
  uint64_t Threads = C.Block.count();
  int PerSM = 0;
  if (Error E = GRIDJIT_CU(*Drv, cuOccupancyMaxActiveBlocksPerMultiprocessor, &PerSM, K.Fn,
                           int(Threads), size_t(C.DynamicSharedBytes)))
    return prefixError(S.Where, std::move(E));
  uint64_t Resident = uint64_t(std::max(PerSM, 0)) * uint64_t(Info.MultiprocessorCount);
  if (C.Grid.count() <= Resident)
    return Error::success();
  return fail(
      ErrorKind::Configuration,
      S.Where + ": the kernel calls grid_sync(), so its whole grid must be resident at once, but " +
          std::to_string(C.Grid.count()) + " blocks exceed the " + std::to_string(Resident) +
          " that fit on " + S.Dev + " (" + std::to_string(PerSM) +
          (PerSM == 1 ? " block" : " blocks") + " of " + std::to_string(Threads) +
          " threads per SM x " + std::to_string(Info.MultiprocessorCount) +
          " SMs); the largest valid grid has " + std::to_string(Resident) + " blocks");
}

Error CudaRuntime::issueLaunch(const CudaKernel &K, const KernelInfo &KI, const LaunchConfig &C,
                               llvm::SmallVectorImpl<void *> &Params, const LaunchOptions &Opts,
                               const LaunchSite &S) {
  auto Stream = static_cast<CUstream>(Opts.Stream);
  auto Start = std::chrono::steady_clock::now();
  CUresult R;
  const char *Call;
  if (KI.Cooperative) {
    Call = "cuLaunchCooperativeKernel";
    R = launchCooperative(K.Fn, C, Stream, Params, Call);
  } else {
    Call = "cuLaunchKernel";
    R = Drv->api().cuLaunchKernel(K.Fn, C.Grid.X, C.Grid.Y, C.Grid.Z, C.Block.X, C.Block.Y,
                                  C.Block.Z, C.DynamicSharedBytes, Stream, Params.data(), nullptr);
  }
  if (Opts.Stats) {
    Opts.Stats->Milliseconds =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start).count();
    Opts.Stats->Blocks = C.Grid.count();
    Opts.Stats->Cooperative = KI.Cooperative;
  }
  if (R == CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES || R == CUDA_ERROR_COOPERATIVE_LAUNCH_TOO_LARGE)
    return fail(ErrorKind::Configuration,
                S.Where + ": the driver refused the launch although it passed gridjit's checks (" +
                    std::to_string(K.NumRegs) + " registers per thread, at most " +
                    std::to_string(K.MaxThreads) + " threads per block, " +
                    std::to_string(K.StaticShared) + " + " + std::to_string(C.DynamicSharedBytes) +
                    " bytes of shared memory, on " + S.Dev +
                    "): " + llvm::toString(Drv->check(R, Call)));
  if (Error E = Drv->check(R, Call))
    return prefixError(S.Where, std::move(E));
  return Error::success();
}

//===----------------------------------------------------------------------===//
// Grid barrier state
//===----------------------------------------------------------------------===//
//
// Every cooperative launch gets its own barrier state (GridBarrier.cpp):
// a slot of device memory, zeroed on the launch's stream just before it,
// and not given to another launch until the event recorded after it has
// completed. So launches need not wait for each other or for the GPU,
// and cooperative launches of one module run at once from any number of
// threads and streams (docs/CUDA.md, "Cooperative launches").

CUresult CudaRuntime::acquireGridState(size_t &Slot) {
  auto TakeFree = [&] {
    std::lock_guard<std::mutex> G(GridStateLock);
    for (size_t I = 0; I < GridStates.size(); ++I) {
      GridStateSlot &S = GridStates[I];
      // cuEventQuery does not block. Any answer but "done" (not ready, or
      // an error the launch will meet anyway) keeps the slot taken.
      if (!S.Issuing && (!S.Done || Drv->api().cuEventQuery(S.Done) == CUDA_SUCCESS)) {
        S.Issuing = true;
        Slot = I;
        return true;
      }
    }
    return false;
  };
  if (TakeFree())
    return CUDA_SUCCESS;
  // None free: a new chunk, allocated without GridStateLock held. One
  // thread at a time adds one; the others, having waited for it, take
  // slots of the chunk it added.
  std::lock_guard<std::mutex> Grow(GridStateGrowLock);
  if (TakeFree())
    return CUDA_SUCCESS;
  CUdeviceptr Chunk = 0;
  if (CUresult R = Drv->api().cuMemAlloc(&Chunk, GridStatesPerChunk * GridStateStride))
    return R;
  std::lock_guard<std::mutex> G(GridStateLock);
  GridStateChunks.push_back(Chunk);
  size_t First = GridStates.size();
  for (size_t I = 0; I < GridStatesPerChunk; ++I)
    GridStates.push_back({Chunk + I * GridStateStride, nullptr, false});
  GridStates[First].Issuing = true;
  Slot = First;
  return CUDA_SUCCESS;
}

CUresult CudaRuntime::launchCooperative(CUfunction Fn, const LaunchConfig &C, CUstream Stream,
                                        llvm::SmallVectorImpl<void *> &Params, const char *&Call) {
  size_t Slot = 0;
  Call = "cuMemAlloc";
  if (CUresult R = acquireGridState(Slot))
    return R;
  CUdeviceptr Addr;
  CUevent Done;
  {
    std::lock_guard<std::mutex> G(GridStateLock);
    Addr = GridStates[Slot].Addr;
    Done = GridStates[Slot].Done;
  }
  auto Release = [&](CUevent NewDone) {
    std::lock_guard<std::mutex> G(GridStateLock);
    GridStates[Slot].Done = NewDone;
    GridStates[Slot].Issuing = false;
  };
  CUresult R = CUDA_SUCCESS;
  if (!Done) {
    Call = "cuEventCreate";
    R = Drv->api().cuEventCreate(&Done, CU_EVENT_DISABLE_TIMING);
    if (R != CUDA_SUCCESS) {
      Release(nullptr);
      return R;
    }
  }
  Call = "cuMemsetD32Async";
  R = Drv->api().cuMemsetD32Async(Addr, 0, 2, Stream);
  if (R != CUDA_SUCCESS) {
    Release(Done); // nothing was queued with the slot
    return R;
  }
  Params.push_back(&Addr);
  Call = "cuLaunchCooperativeKernel";
  R = Drv->api().cuLaunchCooperativeKernel(Fn, C.Grid.X, C.Grid.Y, C.Grid.Z, C.Block.X, C.Block.Y,
                                           C.Block.Z, C.DynamicSharedBytes, Stream, Params.data());
  Params.pop_back();
  // The slot is busy until the stream has passed the memset (and the
  // launch, if queued): a failed record leaves it taken for good, and is
  // the launch's error when it had none (the context is likely broken).
  if (CUresult Recorded = Drv->api().cuEventRecord(Done, Stream)) {
    std::lock_guard<std::mutex> G(GridStateLock);
    GridStates[Slot].Done = Done;
    if (R == CUDA_SUCCESS)
      Call = "cuEventRecord";
    return R == CUDA_SUCCESS ? Recorded : R;
  }
  Release(Done);
  return R;
}
