//===- HostRuntime.h - Run host-target kernels on a worker pool -*- C++ -*-===//
//
// Part of gridjit. A HostRuntime loads artifacts made by the host target
// (createHostTarget) into their own ORC LLJIT and launches their kernels:
// the blocks of a launch run in parallel on the runtime's worker pool, the
// threads of each block in the thread loops the compiler generated
// (docs/HostTarget.md).
//
// Threads belong to the caller: the pool has exactly the size asked for
// (default: the CPUs this process may run on), is owned by the HostRuntime
// object, and gridjit never calls OpenMP, reads or sets OMP_NUM_THREADS or
// any other environment variable, or changes another library's settings.
//
// Thread safety: a HostRuntime and its LoadedModules may be used from any
// number of threads at once; launches from different threads share the
// pool. A LoadedModule must outlive the launches that use it.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_RUNTIME_HOSTRUNTIME_H
#define GRIDJIT_RUNTIME_HOSTRUNTIME_H

#include "gridjit/IR/Type.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <type_traits>

namespace gridjit {

/// A grid or block size. Every component must be at least 1.
struct Dim3 {
  uint32_t X = 1, Y = 1, Z = 1;
  uint64_t count() const { return uint64_t(X) * Y * Z; }
};

/// How to launch a kernel.
struct LaunchConfig {
  Dim3 Grid;  ///< blocks
  Dim3 Block; ///< threads per block: at most 1024 in all
  /// Bytes of dynamic shared memory (`shared NAME: [T];`); must be
  /// non-zero exactly when the kernel declares it.
  uint32_t DynamicSharedBytes = 0;
};

/// One kernel argument: a scalar of a KIR scalar type, or a pointer.
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

  /// A pointer to global memory. For a pointer to a C++ arithmetic type
  /// the launch checks that it matches the parameter's pointee (float* for
  /// ptr<f32>, ...); a void pointer is accepted for any ptr<T>.
  template <typename T> static KernelArg pointer(T *P) {
    KernelArg A;
    A.IsPointer = true;
    A.Ptr = const_cast<void *>(static_cast<const void *>(P));
    A.Pointee = pointeeOf<std::remove_cv_t<T>>();
    return A;
  }

  bool isPointer() const { return IsPointer; }
  /// The scalar type (scalars), or the pointee when known (pointers).
  std::optional<ScalarKind> getKind() const { return IsPointer ? Pointee : Kind; }
  void *getPointer() const { return Ptr; }
  /// The scalar's bytes, as the kernel reads them (little-endian).
  const void *getScalarBytes() const { return Bytes; }

private:
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
  ScalarKind Kind = ScalarKind::Bool;
  std::optional<ScalarKind> Pointee;
  void *Ptr = nullptr;
  alignas(8) unsigned char Bytes[8] = {};
};

/// Options of a HostRuntime.
struct HostRuntimeOptions {
  /// Threads that run blocks (the calling thread of a launch counts as
  /// one). 0 (the default): the number of CPUs this process may run on
  /// (sched_getaffinity).
  unsigned NumThreads = 0;
  /// The host's co-residency limit for cooperative (grid_sync) launches:
  /// the most blocks such a launch may have. Every block of a cooperative
  /// grid keeps its state between grid-wide phases. Default 1024.
  uint32_t MaxCooperativeBlocks = 1024;
  /// The most bytes of shared memory (static and dynamic) one block may
  /// use. Default 1 MiB.
  uint64_t MaxSharedBytes = 1 << 20;
};

/// Per-launch counters, for `jit-run --stats`.
struct LaunchStats {
  double Milliseconds = 0; ///< wall time of the launch
  uint64_t Blocks = 0;
  unsigned Phases = 0;  ///< grid-wide phases (1 + grid_syncs passed)
  unsigned Workers = 0; ///< threads that ran blocks
};

class HostRuntime;

/// An artifact loaded for execution: its own LLJIT, and the kernels' entry
/// points and metadata. Made by HostRuntime::load.
class LoadedModule {
public:
  ~LoadedModule();
  LoadedModule(const LoadedModule &) = delete;
  LoadedModule &operator=(const LoadedModule &) = delete;
  /// The launch metadata of the kernels, as the artifact carries it.
  const std::vector<KernelInfo> &getKernels() const;

private:
  friend class HostRuntime;
  struct Impl;
  explicit LoadedModule(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

/// Loads and launches host kernels. Thread-safe.
class HostRuntime {
public:
  /// Creates a runtime and its worker pool. Errors: the native JIT cannot
  /// be set up.
  static llvm::Expected<std::unique_ptr<HostRuntime>> create(const HostRuntimeOptions &Opts = {});
  ~HostRuntime();
  HostRuntime(const HostRuntime &) = delete;
  HostRuntime &operator=(const HostRuntime &) = delete;

  /// Threads that run blocks (including a launch's calling thread).
  unsigned getNumThreads() const;
  const HostRuntimeOptions &getOptions() const;
  /// The CPUs this process may run on (sched_getaffinity), at least 1.
  static unsigned availableCPUs();

  /// Loads \p A (made by the host target for this CPU) into a new LLJIT.
  /// Errors: another target's artifact, an object that does not link, a
  /// kernel whose entry or descriptor is missing or of another ABI version.
  llvm::Expected<std::unique_ptr<LoadedModule>> load(const Artifact &A);

  /// Runs \p Kernel over \p Config with \p Args and returns when every
  /// block has finished. Before anything runs it checks the configuration
  /// (dimensions, block size, shared memory, the cooperative limit) and the
  /// arguments (count and types against the kernel's parameters); a
  /// synchronisation point reached by only part of a block or warp, or a
  /// grid_sync reached by only some blocks, stops the launch with an error
  /// naming the kernel and the source line. \p Stats, if given, is filled.
  llvm::Error launch(LoadedModule &M, llvm::StringRef Kernel, const LaunchConfig &Config,
                     llvm::ArrayRef<KernelArg> Args, LaunchStats *Stats = nullptr);

private:
  struct Impl;
  explicit HostRuntime(std::unique_ptr<Impl> I);
  std::unique_ptr<Impl> P;
};

} // namespace gridjit

#endif // GRIDJIT_RUNTIME_HOSTRUNTIME_H
