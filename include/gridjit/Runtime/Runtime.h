//===- Runtime.h - One interface to run kernels on any target ---*- C++ -*-===//
//
// Part of gridjit. A Runtime loads the Artifacts of one target, owns device
// memory, and launches kernels by name. HostRuntime (the host target, on
// the CPU) implements it today; a CUDA driver runtime for the nvptx target
// implements the same interface, so that jit-run and the C API have one
// code path for both targets (docs/Runtime.md).
//
// Device memory is named by DeviceBuffer (RAII: freed when the handle
// dies) and reached only through copyToDevice / copyFromDevice; a kernel
// gets it as KernelArg::buffer or KernelArg::devicePointer. On the host
// target device memory is ordinary host memory, so KernelArg::pointer to
// any host object works there too; on a GPU it does not.
//
// This header names no LLVM IR type.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_RUNTIME_H
#define GRIDJIT_RUNTIME_RUNTIME_H

#include "gridjit/Cache/TieredCache.h"
#include "gridjit/IR/Type.h"
#include "gridjit/Support/Errors.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <shared_mutex>
#include <string>
#include <type_traits>
#include <vector>

namespace gridjit {

class Runtime;

/// A grid or block size. Every component must be at least 1.
struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  /// X * Y * Z; UINT64_MAX when the product does not fit in 64 bits (it
  /// always does within the launch limits: at most 2^63 blocks, 1024
  /// threads), never a product that wrapped around.
  uint64_t count() const {
    uint64_t N;
    if (__builtin_mul_overflow(uint64_t(X), uint64_t(Y), &N) ||
        __builtin_mul_overflow(N, uint64_t(Z), &N))
      return UINT64_MAX;
    return N;
  }
};

/// How to launch a kernel.
struct LaunchConfig {
  Dim3 Grid;  ///< blocks
  Dim3 Block; ///< threads per block: at most 1024 in all
  /// Bytes of dynamic shared memory (`shared NAME: [T];`); must be
  /// non-zero exactly when the kernel declares it.
  uint32_t DynamicSharedBytes = 0;
};

/// Memory a Runtime allocated on its device, owned by this handle: it is
/// freed (Runtime::free, errors dropped) when the handle is destroyed or
/// assigned to, unless freed before. Move-only. A DeviceBuffer must not
/// outlive the Runtime that allocated it. Its address is a device address:
/// on the host target an ordinary pointer, on a GPU a CUdeviceptr that the
/// host must not dereference.
class DeviceBuffer {
public:
  DeviceBuffer() = default;
  DeviceBuffer(DeviceBuffer &&O) noexcept { *this = std::move(O); }
  DeviceBuffer &operator=(DeviceBuffer &&O) noexcept;
  DeviceBuffer(const DeviceBuffer &) = delete;
  DeviceBuffer &operator=(const DeviceBuffer &) = delete;
  ~DeviceBuffer();

  /// The device address of the first byte (0 for an empty handle).
  uint64_t getAddress() const { return Addr; }
  /// The bytes asked for when it was allocated.
  uint64_t size() const { return Bytes; }
  /// The runtime that allocated it; null for an empty handle.
  Runtime *getRuntime() const { return Owner; }
  explicit operator bool() const { return Owner != nullptr; }

private:
  friend class Runtime;
  DeviceBuffer(Runtime *R, uint64_t A, uint64_t N) : Owner(R), Addr(A), Bytes(N) {}
  Runtime *Owner = nullptr;
  uint64_t Addr = 0, Bytes = 0;
};

/// One kernel argument: a scalar of a KIR scalar type, or a pointer (a
/// host pointer, a device buffer or a raw device address).
class KernelArg {
public:
  static KernelArg boolean(bool V) { return scalar(ScalarKind::Bool, V); }
  static KernelArg i8(int8_t V) { return scalar(ScalarKind::I8, V); }
  static KernelArg i16(int16_t V) { return scalar(ScalarKind::I16, V); }
  static KernelArg i32(int32_t V) { return scalar(ScalarKind::I32, V); }
  static KernelArg i64(int64_t V) { return scalar(ScalarKind::I64, V); }
  static KernelArg u8(uint8_t V) { return scalar(ScalarKind::U8, V); }
  static KernelArg u16(uint16_t V) { return scalar(ScalarKind::U16, V); }
  static KernelArg u32(uint32_t V) { return scalar(ScalarKind::U32, V); }
  static KernelArg u64(uint64_t V) { return scalar(ScalarKind::U64, V); }
  static KernelArg f32(float V) { return scalar(ScalarKind::F32, V); }
  static KernelArg f64(double V) { return scalar(ScalarKind::F64, V); }
  /// An f16 or bf16 (\p K) scalar from its 16 bits (C++ has no portable
  /// half type; Support/HalfFloat.h rounds a double to them).
  static KernelArg halfBits(ScalarKind K, uint16_t Bits) { return scalar(K, Bits); }

  /// A host pointer to global memory (valid on the host target only). For a
  /// pointer to a C++ arithmetic type the launch checks that it matches the
  /// parameter's pointee (float* for ptr<f32>, ...); a void pointer is
  /// accepted for any ptr<T>.
  template <typename T> static KernelArg pointer(T *P) {
    KernelArg A = address(reinterpret_cast<uintptr_t>(static_cast<const volatile void *>(P)),
                          pointeeOf<std::remove_cv_t<T>>());
    A.IsHost = true;
    return A;
  }
  /// The start of device buffer \p B. With \p Pointee the launch checks it
  /// against the parameter's pointee like a typed pointer; without, it is
  /// accepted for any ptr<T>.
  static KernelArg buffer(const DeviceBuffer &B, std::optional<ScalarKind> Pointee = std::nullopt) {
    return address(B.getAddress(), Pointee);
  }
  /// A device address (for example inside a DeviceBuffer, or memory a
  /// framework such as PyTorch allocated on the device); \p Pointee as for
  /// buffer().
  static KernelArg devicePointer(uint64_t Addr, std::optional<ScalarKind> Pointee = std::nullopt) {
    return address(Addr, Pointee);
  }

  /// This pointer argument, declaring that the kernel may reach \p Bytes
  /// bytes from its address (a buffer's size, an array's bytes). 0 (the
  /// default) means unknown: a checked launch (docs/Check.md) then takes
  /// the extent from the host runtime's allocation the address lies in, to
  /// that allocation's end, and reports an access through a pointer in
  /// none. Unchecked launches ignore it (the C API's gj_arg::extent).
  /// Meaningless for scalars.
  KernelArg withExtent(uint64_t Bytes) const {
    KernelArg A = *this;
    A.Extent = Bytes;
    return A;
  }
  /// The extent given with withExtent(); 0: unknown.
  uint64_t getExtent() const { return Extent; }

  bool isPointer() const { return IsPointer; }
  /// Made by pointer(): a host pointer, which only the host target can use.
  bool isHostPointer() const { return IsHost; }
  /// The scalar type (scalars), or the pointee when known (pointers).
  std::optional<ScalarKind> getKind() const { return IsPointer ? Pointee : Kind; }
  /// The address of a pointer argument, as the kernel receives it.
  uint64_t getAddress() const { return Addr; }
  /// getAddress() as a host pointer (meaningful on the host target).
  void *getPointer() const { return reinterpret_cast<void *>(uintptr_t(Addr)); }
  /// The scalar's bytes, as the kernel reads them (little-endian).
  const void *getScalarBytes() const { return Bytes; }

private:
  static KernelArg address(uint64_t A, std::optional<ScalarKind> Pointee) {
    KernelArg Arg;
    Arg.IsPointer = true;
    Arg.Addr = A;
    Arg.Pointee = Pointee;
    return Arg;
  }
  template <typename V> static KernelArg scalar(ScalarKind K, V Value) {
    static_assert(sizeof(V) <= 8);
    KernelArg A;
    A.Kind = K;
    std::memcpy(A.Bytes, &Value, sizeof(V));
    return A;
  }
  template <typename T> static std::optional<ScalarKind> pointeeOf() {
    if constexpr (std::is_same_v<T, float>)
      return ScalarKind::F32;
    else if constexpr (std::is_same_v<T, double>)
      return ScalarKind::F64;
    else if constexpr (std::is_same_v<T, bool>)
      return ScalarKind::Bool;
    else if constexpr (std::is_integral_v<T>)
      return intKind(sizeof(T), std::is_signed_v<T>);
    else
      return std::nullopt;
  }
  static constexpr ScalarKind intKind(size_t Bytes, bool Signed) {
    switch (Bytes) {
    case 1:
      return Signed ? ScalarKind::I8 : ScalarKind::U8;
    case 2:
      return Signed ? ScalarKind::I16 : ScalarKind::U16;
    case 4:
      return Signed ? ScalarKind::I32 : ScalarKind::U32;
    default:
      return Signed ? ScalarKind::I64 : ScalarKind::U64;
    }
  }

  bool IsPointer = false;
  bool IsHost = false;
  ScalarKind Kind = ScalarKind::Bool;
  std::optional<ScalarKind> Pointee;
  uint64_t Addr = 0;
  uint64_t Extent = 0;
  alignas(8) unsigned char Bytes[8] = {};
};

/// Per-launch counters (`jit-run --stats`). Fields a target does not
/// measure stay 0.
struct LaunchStats {
  double Milliseconds = 0; ///< wall time of the launch
  uint64_t Blocks = 0;
  unsigned Phases = 0;      ///< host: grid-wide phases (1 + grid_syncs passed)
  unsigned Workers = 0;     ///< host: threads that ran blocks
  unsigned PoolThreads = 0; ///< host: threads the runtime could have used
  /// The kernel calls grid_sync() and was launched cooperatively (on the
  /// GPU: with cuLaunchCooperativeKernel).
  bool Cooperative = false;
  /// Host, a kernel that prints: the records written to the output, and
  /// those (and the bytes of their text) that did not fit in the print
  /// buffer (LaunchOptions::PrintBufferBytes). The output says so too.
  uint64_t PrintRecords = 0, PrintDroppedRecords = 0, PrintDroppedBytes = 0;
};

/// Receives the output of a launch's `print` calls (host target), one
/// record at a time, each a line ending in '\n', after the launch has run
/// (LaunchOptions::PrintOutput). Called on the launching thread.
using PrintHandler = std::function<void(llvm::StringRef Text)>;

/// Stops launches from another thread (LaunchOptions::Cancel). Once
/// cancel() has been called, a host launch that names the token takes no
/// more blocks: the blocks already running finish, and the launch returns
/// an error of kind Cancelled naming the kernel and how many blocks ran
/// (what they wrote stays written); a launch that starts with the token
/// already cancelled runs no block. A token stays cancelled: make a new
/// one for the launches after. Thread-safe (cancel() from any thread, a
/// signal handler included: it is one atomic store); it must outlive the
/// launches that name it.
class CancelToken {
public:
  CancelToken() = default;
  CancelToken(const CancelToken &) = delete;
  CancelToken &operator=(const CancelToken &) = delete;
  /// Asks every launch naming this token to stop.
  void cancel() { Cancelled.store(true, std::memory_order_relaxed); }
  bool isCancelled() const { return Cancelled.load(std::memory_order_relaxed); }

private:
  std::atomic<bool> Cancelled{false};
};

/// How to launch, beyond the configuration.
struct LaunchOptions {
  /// A stream of the caller's, as an opaque handle: on the nvptx target a
  /// CUstream (null: the runtime's own stream), so that a framework can
  /// put gridjit kernels on its own streams. The host runtime has no
  /// streams and runs every launch to completion before it returns: it
  /// rejects a non-null Stream with an error rather than ignore it.
  void *Stream = nullptr;
  /// Filled in, if given, when the launch has run (or failed while running).
  LaunchStats *Stats = nullptr;
  /// A watchdog, in milliseconds (0: none). The host runtime checks it
  /// between blocks: once it has passed, workers take no more blocks and
  /// the launch returns an error of kind Timeout naming the kernel and how
  /// many blocks ran (what they wrote stays written). A block that never
  /// finishes (`while true {}`) cannot be stopped: kernel code has no
  /// cancellation points (docs/Runtime.md, "Timeouts and cancellation").
  /// The nvptx runtime rejects a non-zero value: a GPU kernel cannot be
  /// stopped once queued.
  uint64_t TimeoutMilliseconds = 0;
  /// A token another thread may cancel (null: none). The host runtime
  /// checks it between blocks, as the timeout, and stops the launch with an
  /// error of kind Cancelled (CancelToken). With a token or a timeout each
  /// block is a call of its own, checked before it starts; without either,
  /// workers run chunks of blocks unchecked. The nvptx runtime rejects a
  /// non-null token, as it does a timeout.
  const CancelToken *Cancel = nullptr;
  /// The host runtime catches a memory fault (SIGSEGV, SIGBUS) of the
  /// kernel's code, a stack overflow included: the launch stops and returns
  /// a KernelFaultError naming the kernel and its blocks (what the kernel
  /// wrote until then stays written) instead of the process ending. The
  /// first such launch of a runtime installs process-wide SIGSEGV and
  /// SIGBUS handlers, shared by the live runtimes and removed with the last,
  /// that pass every other fault on, unchanged, to the handlers installed
  /// before them (docs/Runtime.md, "Catching a kernel's faults"). Off: a
  /// fault ends the process as it would without gridjit. Ignored by a
  /// runtime made with RuntimeOptions::CatchFaults off, and by the nvptx
  /// runtime (the driver reports a GPU's faults).
  bool CatchFaults = true;
  /// The default of PrintBufferBytes: 1 MiB, as CUDA's printf FIFO.
  static constexpr uint64_t DefaultPrintBufferBytes = 1u << 20;
  /// The largest PrintBufferBytes: 1 GiB (more is a Configuration error).
  static constexpr uint64_t MaxPrintBufferBytes = 1u << 30;
  /// Host target, a kernel that prints (KernelInfo::Prints): the bytes of
  /// the launch's print buffer (0: DefaultPrintBufferBytes), which each
  /// record takes its text and 16 bytes from, rounded up to 8. Records
  /// that do not fit are dropped, counted, and named by a last line of the
  /// output and by LaunchStats, never silently. A launch of a kernel that
  /// does not print allocates nothing. The nvptx runtime ignores it: the
  /// driver's printf FIFO holds a GPU's output (docs/CUDA.md, "Printing").
  uint64_t PrintBufferBytes = 0;
  /// Host target: where the output of `print` goes once the launch has run
  /// (also when it stopped on a fault, a timeout or a cancel: what was
  /// printed until then), ordered by block, then thread, then the order
  /// each thread printed in (docs/HostTarget.md, "Printing"). Empty: the
  /// process's standard output (C's stdout, flushed), as CUDA's printf
  /// does: a kernel's print is output its author asked for.
  PrintHandler PrintOutput;
  /// A launch of checked code (HostTargetOptions::Check, docs/Check.md):
  /// the distinct findings (deduplicated by their pair of source
  /// positions) to collect before the launch stops with an error of kind
  /// Check. 1 (the default) stops at the first; 0 is taken as 1.
  uint32_t CheckMaxFindings = 1;
  /// A checked launch: also report two writes of the same bytes that store
  /// the same value, which a race check filters out by default (frameworks
  /// rely on them, and they are harmless in practice).
  bool CheckSameValueWrites = false;
};

/// The error of a host launch whose kernel caused a memory fault
/// (LaunchOptions::CatchFaults). Its kind is ErrorKind::Fault.
class KernelFaultError : public llvm::ErrorInfo<KernelFaultError, KindedError> {
public:
  static char ID;
  KernelFaultError(std::string Kernel, std::string Message)
      : ErrorInfo(ErrorKind::Fault, std::move(Message)), Kernel(std::move(Kernel)) {}
  /// The kernel's name.
  const std::string &getKernel() const { return Kernel; }

private:
  std::string Kernel;
};

/// One finding of a checked launch (HostTargetOptions::Check; a
/// KernelCheckError holds them, docs/Check.md).
struct CheckFinding {
  enum KindType {
    OutOfBounds,       ///< an access outside the buffer or shared array it names
    UnknownExtent,     ///< an access through a pointer whose buffer size is unknown
    DataRace,          ///< two unordered accesses, at least one a write (Other is set)
    UninitialisedRead, ///< a read of shared memory no thread of the block wrote
    LocalIndex,        ///< a local or constant array's index out of range
    DivisionByZero,    ///< integer `/` or `%` by zero
    DivisionOverflow,  ///< signed MIN / -1 or MIN % -1
    ShiftAmount,       ///< a shift by a negative amount or one not below the width
    WarpLane,          ///< a warp operation reading a lane that does not exist
    GPULimit,          ///< the kernel or launch exceeds a GPU's limits (no position)
  };
  /// A position in the kernel's source: Line and Col 1-based, 0 unknown.
  struct Place {
    std::string File;
    uint32_t Line = 0, Col = 0;
    std::string SourceLine;
  };
  KindType Kind = OutOfBounds;
  Place At;    ///< the access or operation (GPULimit: none)
  Place Other; ///< DataRace: the other access; otherwise empty
  /// The thread (linear in its block) and block (linear in the grid) of
  /// the access; for DataRace also the other access's. 0 for GPULimit.
  uint64_t Block = 0, OtherBlock = 0;
  uint32_t Thread = 0, OtherThread = 0;
  std::string Headline; ///< the error line's message
  std::string Note;     ///< DataRace: the note's message; otherwise empty
  /// Rendered like a compile error: `FILE:LINE:COL: error: Headline`, the
  /// source line and a caret, then (DataRace) the note likewise. No final
  /// newline.
  std::string Text;
};

/// The error of a checked host launch that found something
/// (docs/Check.md). Its kind is ErrorKind::Check; its message is the
/// findings' Text in the order found, one after the other (a newline
/// between two).
class KernelCheckError : public llvm::ErrorInfo<KernelCheckError, KindedError> {
public:
  static char ID;
  KernelCheckError(std::string Kernel, std::vector<CheckFinding> Findings);
  /// The kernel's name.
  const std::string &getKernel() const { return Kernel; }
  /// What was found, in order, deduplicated (LaunchOptions::CheckMaxFindings at most).
  const std::vector<CheckFinding> &getFindings() const { return Findings; }

private:
  std::string Kernel;
  std::vector<CheckFinding> Findings;
};

/// An artifact loaded into a Runtime: the kernels' metadata, and whatever
/// the target needs to launch them. Made by Runtime::load; must outlive the
/// launches that use it.
class LoadedModule {
public:
  virtual ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;
  /// The target the artifact was compiled for.
  TargetKind getTargetKind() const { return Kind; }
  /// The launch metadata of the kernels, as the artifact carries it.
  const std::vector<KernelInfo> &getKernels() const { return Kernels; }
  /// The kernel named \p Name, or null.
  const KernelInfo *getKernel(llvm::StringRef Name) const;
  /// The module's constant memory (`constant NAME: [T; N];`), as the
  /// artifact carries it.
  const std::vector<ConstantInfo> &getConstants() const { return Constants; }
  /// The constant memory named \p Name, or null.
  const ConstantInfo *getConstant(llvm::StringRef Name) const;

protected:
  LoadedModule(TargetKind K, std::vector<KernelInfo> Infos, std::vector<ConstantInfo> Consts = {})
      : Kind(K), Kernels(std::move(Infos)), Constants(std::move(Consts)) {}

private:
  friend class Runtime;
  TargetKind Kind;
  std::vector<KernelInfo> Kernels;
  std::vector<ConstantInfo> Constants;
  /// Orders setConstant against launches of this module: a launch holds it
  /// shared until it returns, a set holds it exclusively (Runtime::setConstant).
  std::shared_mutex ConstantsLock;
  /// A turnstile in front of ConstantsLock: a set holds it while it waits,
  /// so launches that start meanwhile queue behind the set instead of
  /// starving it (glibc's reader-writer locks prefer readers).
  std::mutex ConstantsGate;
};

/// Loads artifacts of one target, owns its device memory and launches
/// kernels. Implementations are thread-safe: one Runtime, its modules and
/// buffers may be used from any number of threads at once.
class Runtime {
public:
  virtual ~Runtime();
  Runtime(const Runtime &) = delete;
  Runtime &operator=(const Runtime &) = delete;

  /// The target whose artifacts this runtime runs.
  TargetKind getTargetKind() const { return Kind; }

  /// Loads \p A. Errors: an artifact of another target, one that the
  /// device cannot load.
  virtual llvm::Expected<std::unique_ptr<LoadedModule>> load(const Artifact &A) = 0;

  /// \p Bytes of device memory (at least 64-byte aligned; zeroed on the
  /// host target, undefined on a GPU). Errors: more than
  /// limits::MaxBufferBytes (InvalidArgument, before anything is
  /// allocated), memory the target cannot give.
  llvm::Expected<DeviceBuffer> allocate(uint64_t Bytes);
  /// Frees \p B now (it becomes empty). An empty handle is fine.
  /// Errors: a buffer of another runtime, the device refusing; \p B then
  /// stays valid (the memory is still allocated), so the free can be tried
  /// again, and its destructor tries again.
  llvm::Error free(DeviceBuffer &B);
  /// Copies \p Bytes from host memory \p Src to \p Dst at \p Offset.
  /// Errors: a range outside the buffer, a buffer of another runtime.
  llvm::Error copyToDevice(const DeviceBuffer &Dst, const void *Src, uint64_t Bytes,
                           uint64_t Offset = 0);
  /// Copies \p Bytes of \p Src from \p Offset to host memory \p Dst, after
  /// every launch before it has finished writing it.
  llvm::Error copyFromDevice(void *Dst, const DeviceBuffer &Src, uint64_t Bytes,
                             uint64_t Offset = 0);

  /// Launches \p Kernel of \p M over \p Config with \p Args. Before
  /// anything runs it checks the kernel's name, the configuration against
  /// the launch limits of gridjit::limits and the target's own, and the
  /// arguments (count and types against the kernel's parameters;
  /// gridjit/Runtime/LaunchChecks.h). The host target returns when every
  /// block has finished; a GPU may return when the launch is queued (see
  /// synchronize()).
  llvm::Error launch(LoadedModule &M, llvm::StringRef Kernel, const LaunchConfig &Config,
                     llvm::ArrayRef<KernelArg> Args, const LaunchOptions &Opts = {});

  /// Sets constant memory \p Name of \p M (`constant NAME: [T; N];`) to
  /// the \p Bytes bytes at \p Data, the array's bytes in row-major order
  /// (little-endian scalars, bool one byte 0 or 1). The contents belong to
  /// the loaded module, as a CUDA module's `__constant__` globals do: every
  /// kernel of \p M reads them, other loads of the same artifact have their
  /// own, and they start as zero. The set waits for the launches of \p M in
  /// progress on this runtime to return, then writes; a launch that starts
  /// after it returns reads the new contents, one that returned before it
  /// started read the old ones, and none ever reads half of each (on a GPU,
  /// the copy is ordered after the work queued before it, as
  /// cudaMemcpyToSymbol's). Thread-safe. Errors: no constant memory of that
  /// name (NotFound, naming those the module has); \p Bytes not the array's
  /// size, or \p Elem given and not its element type (InvalidArgument);
  /// a module of another target (InvalidArgument); the device refusing.
  llvm::Error setConstant(LoadedModule &M, llvm::StringRef Name, const void *Data, uint64_t Bytes,
                          std::optional<ScalarKind> Elem = std::nullopt);

  /// Waits until every launch and copy this runtime queued has finished
  /// and returns the first error any of them met. (The host target runs
  /// everything synchronously: nothing to wait for.)
  virtual llvm::Error synchronize() = 0;

protected:
  explicit Runtime(TargetKind K) : Kind(K) {}

  /// The target's part of allocate/free/copies; the base class checks
  /// ownership and ranges before calling them.
  virtual llvm::Expected<uint64_t> allocateMemory(uint64_t Bytes) = 0;
  virtual llvm::Error freeMemory(uint64_t Addr, uint64_t Bytes) = 0;
  virtual llvm::Error writeMemory(uint64_t Addr, const void *Src, uint64_t Bytes) = 0;
  virtual llvm::Error readMemory(void *Dst, uint64_t Addr, uint64_t Bytes) = 0;
  /// The target's part of launch: \p Kernel is \p M's kernel of that name
  /// and \p M is of this runtime's target. Checks the configuration
  /// (checkLaunchConfig and the target's limits) and the arguments
  /// (checkArguments), then runs.
  virtual llvm::Error launchKernel(LoadedModule &M, const KernelInfo &Kernel,
                                   const LaunchConfig &Config, llvm::ArrayRef<KernelArg> Args,
                                   const LaunchOptions &Opts) = 0;
  /// The target's part of setConstant: writes C.Bytes bytes of \p Data to
  /// \p C of \p M (checked: of this target, and the size), while no launch
  /// of \p M is in progress. The default refuses (a runtime that has none).
  virtual llvm::Error writeConstant(LoadedModule &M, const ConstantInfo &C, const void *Data);

private:
  TargetKind Kind;
};

/// Options of createRuntime.
struct RuntimeOptions {
  /// Host target: threads that run blocks; 0 (the default) for the CPUs
  /// this process may run on (HostRuntimeOptions::NumThreads). At most
  /// limits::MaxThreads (1024): more is an error from createRuntime.
  unsigned NumThreads = 0;
  /// nvptx target: the ordinal of the CUDA device to run on.
  unsigned Device = 0;
  /// nvptx target: keep the cubins the driver compiles from PTX in the
  /// cache, so that a later process loads them without compiling
  /// (docs/CUDA.md, "The cubin cache").
  bool UseCubinCache = true;
  /// nvptx target: the cache directory of the disk tier the runtime makes
  /// when CubinTiers has none (empty: the default, as
  /// resolveCacheDirectory finds it).
  std::string CacheDir;
  /// nvptx target: the tiers to keep cubins in, with the cubin cache on.
  /// Give a Compiler's (Compiler::getCacheTiers()) so that the directory
  /// has one pruning policy and the server one breaker. Disk null: a disk
  /// tier of the runtime's own in CacheDir, with the default policy.
  /// Remote null: no remote tier. The runtime reads no environment
  /// variable of the remote cache: jit-run and the C API open the one
  /// $GRIDJIT_REMOTE_CACHE names and pass it here (docs/RemoteCache.md).
  CacheTiers CubinTiers;
  /// nvptx target: receives the warning of the disk tier the runtime makes
  /// itself (CubinTiers has no disk: the directory cannot be written, so
  /// cubins are not kept; once). Null: standard error, through
  /// llvm::WithColor::warning, as a Compiler's.
  WarningHandler Warning;
  /// nvptx target: the HMAC secret of the disk tier the runtime makes
  /// itself (DiskCacheOptions::Secret; docs/Cache.md, "Sharing a cache
  /// directory"). Empty: none. The runtime reads no environment: the C
  /// API passes $GRIDJIT_CACHE_SECRET_FILE's secret (resolveDiskCacheSecret).
  std::string CacheSecret;
  /// Host target: catch a kernel's memory faults (HostRuntimeOptions::
  /// CatchFaults). Off: the runtime installs no signal handler and gives
  /// no thread an alternate signal stack, and no launch catches a fault,
  /// whatever LaunchOptions::CatchFaults says.
  bool CatchFaults = true;
};

/// The runtime of target \p K. Errors: the runtime cannot start (nvptx:
/// "no CUDA device: <reason>" without a driver or a device, or an ordinal
/// RuntimeOptions::Device that does not exist).
llvm::Expected<std::unique_ptr<Runtime>> createRuntime(TargetKind K,
                                                       const RuntimeOptions &Opts = {});

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_RUNTIME_H
