//===- Target.h - Compilation targets and compiled artifacts ----*- C++ -*-===//
//
// Part of gridjit. A Target turns a verified KIR module into an artifact a
// runtime can load: PTX text for NVPTX, an object file for the host. Each
// target owns its LoweringRegistry, built completely and frozen in the
// constructor, and is immutable afterwards: one Target may compile from any
// number of threads at once. Every compile makes its own LLVMContext and
// has a TargetMachine to itself (one the target kept from an earlier
// compile, or a new one: docs/Targets.md).
//
// This is the public face of a target and names no LLVM IR type; the code
// generation hooks (lowering, optimisation, the backend) are the internal
// CodegenTarget's (gridjit/Target/CodegenTarget.h), which every Target is.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TARGET_TARGET_H
#define GRIDJIT_TARGET_TARGET_H

#include "gridjit/IR/AST.h"
#include "gridjit/Lower/Op.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit {

/// The targets gridjit compiles for. The library calls the GPU target
/// "nvptx" everywhere (getName(), Artifact, cache keys, CompileRequest);
/// `cuda` is only jit-run's spelling of "run on an NVIDIA GPU".
enum class TargetKind : uint8_t {
  NVPTX, ///< PTX text for NVIDIA GPUs, loaded through the CUDA driver
  Host,  ///< an object file for the CPU running gridjit, run by HostRuntime
};
/// "nvptx" or "host": the target's name in messages, cache keys and entries.
std::string_view getTargetName(TargetKind K);
/// The kind named \p Name ("nvptx", "host"), or std::nullopt.
std::optional<TargetKind> parseTargetName(std::string_view Name);

/// A kernel parameter as a launch passes it.
struct KernelParamInfo {
  std::string Name;
  /// A scalar or ptr<T> with T a scalar: a pointer to a vector type is
  /// described as one to its lanes' scalar (`ptr<f32x4>` as `ptr<f32>`),
  /// a pointer to a struct as `ptr<u8>` (LangRef, "Structs").
  Type Ty;
  uint32_t Size = 0; ///< bytes of the value as passed (8 for pointers)
  uint32_t Align = 0;
};

/// What a launch needs to know about a kernel; stored with the artifact so
/// that a kernel loaded from the cache launches exactly like a fresh one.
struct KernelInfo {
  std::string Name;
  std::vector<KernelParamInfo> Params;
  /// Calls grid_sync() (directly or through functions): must be launched
  /// cooperatively, with the whole grid co-resident.
  bool Cooperative = false;
  /// Bytes of the kernel's `shared` arrays with a static size, as laid out:
  /// each array at a 16-byte aligned offset in declaration order, the total
  /// rounded up to 16 (where the dynamic shared array starts). The host
  /// runtime allocates and checks exactly this (its descriptor carries the
  /// same layout); on a GPU the driver's own count decides the launch.
  uint64_t StaticSharedBytes = 0;
  /// Declares `shared NAME: [T];` (sized by the launch).
  bool UsesDynamicShared = false;
  /// Host target: an upper bound of the bytes of stack the kernel's code
  /// needs on the thread that runs it, known when it is compiled (KIR has
  /// no recursion): its entry function's frame as the code generator laid
  /// it out (every device function is inlined into it, local arrays
  /// included), the frames of the module's other functions (all of them,
  /// as if one call chain held them), and hostabi::LibraryCallStackBytes
  /// for the C library functions it calls. The compile refuses a kernel
  /// that needs more than hostabi::MaxKernelStackBytes; the host runtime
  /// refuses to launch it on a thread with less stack left. 0: not known
  /// (the nvptx target: the driver places a thread's local memory).
  uint64_t StackBytes = 0;
  /// Calls `print` (directly or through functions): the host runtime
  /// gives such a launch a print buffer, and only such a launch
  /// (LaunchOptions::PrintBufferBytes).
  bool Prints = false;
};

/// Constant memory of a module (`constant NAME: [T; N];`), which the host
/// sets before a launch (Runtime::setConstant); stored with the artifact,
/// as KernelInfo is, so that a module from the cache can still be set.
struct ConstantInfo {
  std::string Name;   ///< as declared
  std::string Symbol; ///< its symbol in the payload (nvptx: Name; host: prefixed)
  Type Ty;            ///< the array type (every dimension's count)
  /// Bytes of the whole array (Ty.getSizeInBytes()).
  uint64_t Bytes = 0;
};

/// The result of a compile.
struct Artifact {
  TargetKind Kind = TargetKind::Host; ///< the target it was compiled for
  std::string Arch;                   ///< "sm_80", or the host CPU name
  /// PTX text (NVPTX) or a relocatable object file (host).
  std::string Payload;
  std::vector<KernelInfo> Kernels;
  /// The module's constant memory, in declaration order.
  std::vector<ConstantInfo> Constants;
  const KernelInfo *getKernel(std::string_view Name) const;
};

/// Wall-clock milliseconds of each phase of one compile.
struct PhaseTimes {
  double ParseMs = 0, VerifyMs = 0, LowerMs = 0, OptimizeMs = 0, CodegenMs = 0;
};

/// What to print for `--emit`.
enum class EmitKind { LLVM, Assembly, Object };

/// Options of one compile.
struct CompileOptions {
  /// 0..3, as -O0..-O3. Default 3.
  unsigned OptLevel = 3;
};

class CodegenTarget;

/// A compilation target. Thread-safe: every method is const and the object
/// is immutable after construction. Every Target is a CodegenTarget (the
/// constructor is private to it), which holds the code-generation hooks.
class Target {
public:
  virtual ~Target();

  /// Which target this is; code that depends on the target asks this (or a
  /// virtual method), never compares names.
  TargetKind getKind() const { return Kind; }
  /// "nvptx" or "host" (getTargetName(getKind())).
  std::string_view getName() const { return getTargetName(Kind); }
  /// The architecture compiled for ("sm_80", or the host CPU).
  virtual std::string_view getArch() const = 0;
  /// A digest of everything about this target that changes generated code:
  /// the registry's fingerprint, the architecture and features, and the
  /// content of linked libraries (libdevice). Part of the cache key.
  virtual std::string getFingerprint() const = 0;
  /// The digest of the target's table of op lowerings alone
  /// (LoweringRegistry::fingerprint()); also part of the cache key.
  virtual std::string getRegistryFingerprint() const = 0;
  /// What compile() stores as the artifact's payload: PTX text
  /// (`EmitKind::Assembly`) for NVPTX, an object file for the host.
  virtual EmitKind getPayloadKind() const = 0;
  /// Whether this target's artifacts embed where things are in the source
  /// text: the module's name, lines, columns and source lines (the host
  /// target's sync sites and kernel-checker sites, which its runtime's
  /// messages print). When true, the cache key also covers the module's
  /// name and exact text (docs/Cache.md, "The key"), so that respelled
  /// text never reuses an artifact that names another spelling's
  /// positions. Default false: the artifact depends on the verified
  /// module alone (NVPTX: PTX carries no file name or position).
  virtual bool embedsSourcePositions() const { return false; }

  /// Lowers, optimises and generates code for \p M; fills \p Times if given
  /// (LowerMs, OptimizeMs, CodegenMs).
  llvm::Expected<Artifact> compile(const Module &M, const CompileOptions &Opts,
                                   PhaseTimes *Times = nullptr) const;
  /// The text of one stage: LLVM IR after optimisation (`EmitKind::LLVM`),
  /// assembly, or the object file's bytes.
  virtual llvm::Expected<std::string> emit(const Module &M, EmitKind Kind,
                                           const CompileOptions &Opts,
                                           PhaseTimes *Times = nullptr) const = 0;

  /// This target with checked code (HostTargetOptions::Check,
  /// docs/Check.md) held to the limits of GPU architecture sm_\p Arch: a new
  /// target of the same CPU and options, whose fingerprint differs. Errors:
  /// a target that has no checked code (nvptx: the checker runs kernels on
  /// the host), or an Arch outside 70..90.
  virtual llvm::Expected<std::shared_ptr<const Target>> makeChecked(unsigned Arch) const;

  /// Launch metadata for every kernel of \p M (as compile() stores it).
  std::vector<KernelInfo> describeKernels(const Module &M) const;
  /// The constant memory of verified \p M (as compile() stores it).
  std::vector<ConstantInfo> describeConstants(const Module &M) const;

private:
  friend class CodegenTarget;
  explicit Target(TargetKind Kind) : Kind(Kind) {}
  TargetKind Kind;
};

/// Options of the NVPTX target.
struct NVPTXTargetOptions {
  /// "sm_70" ... "sm_90" (sm_70 sm_72 sm_75 sm_80 sm_86 sm_87 sm_89 sm_90).
  /// Default sm_80.
  std::string Arch = "sm_80";
  /// Path of libdevice.10.bc. Empty: look in $CUDA_HOME/nvvm/libdevice and
  /// /usr/local/cuda/nvvm/libdevice. When it is not found, f32 math uses
  /// approximate instructions and f64 math fails to compile, naming the
  /// function.
  std::string LibdevicePath;
  /// False: do not look for libdevice at all. f32 math then uses the GPU's
  /// approximate instructions and f64 math fails to compile (docs/Targets.md).
  bool UseLibdevice = true;
  /// For tests: ops to leave out of the registry, to check that a missing
  /// lowering is reported as an error.
  std::vector<Op> OmitLowerings;
};

/// Creates the NVPTX target. Errors: an unknown architecture, a libdevice
/// path that was given but cannot be read.
llvm::Expected<std::unique_ptr<Target>> createNVPTXTarget(const NVPTXTargetOptions &Opts = {});

/// The architectures createNVPTXTarget accepts, and the PTX ISA version
/// used for each ("sm_80" -> 70 for PTX 7.0).
struct NVPTXArchInfo {
  const char *Arch;
  unsigned SmVersion;
  unsigned PtxVersion;
};
llvm::ArrayRef<NVPTXArchInfo> getNVPTXArchs();

/// Options of the host target (docs/HostTarget.md).
struct HostTargetOptions {
  /// The CPU to generate code for, as LLVM names it ("skylake-avx512",
  /// "x86-64-v3", ...). Empty (the default): the CPU this process runs on
  /// (llvm::sys::getHostCPUName) with the features it reports, which is
  /// what an artifact that runs here wants.
  std::string CPU;
  /// For tests: ops to leave out of the registry, to check that a missing
  /// lowering is reported as an error.
  std::vector<Op> OmitLowerings;
  /// Run loops without a synchronisation point whose trip count may differ
  /// between threads iteration-major: the threads of a block take each
  /// iteration together (docs/HostTarget.md, "Iteration-major loops").
  /// False runs every such loop thread by thread, as before: for measuring
  /// the rule and for the differential fuzzer. Part of the target's
  /// fingerprint, so the two never share cached code.
  bool IterationMajor = true;
  /// Checked code (docs/Check.md): every access through a pointer, to
  /// shared memory and to a local array, every integer division and shift
  /// and every warp operation is checked at run time (bounds, races,
  /// uninitialised shared memory, what CUDA leaves undefined), and each
  /// synchronisation point tells the checker. Part of the fingerprint, so
  /// checked and unchecked code never share a cache entry; unchecked code
  /// is the same with this option as without it.
  bool Check = false;
  /// Checked code: the GPU architecture (as in sm_80) whose limits a
  /// checked launch and a checked kernel are held to: static shared memory,
  /// block and grid sizes. Part of the fingerprint when Check is on.
  unsigned CheckArch = 80;
};

/// Creates the host target: kernels become native code for this CPU that
/// runs every thread of a block in loops split at synchronisation points,
/// loaded and launched by gridjit::HostRuntime. Errors: the native backend
/// is missing from this build, or an unknown CPU name.
llvm::Expected<std::unique_ptr<Target>> createHostTarget(const HostTargetOptions &Opts = {});

/// The target named \p Name with default options but for the architecture:
/// "host" (\p Arch is the CPU, empty: this machine's) or "nvptx" (\p Arch
/// is sm_XX, empty: sm_80).
llvm::Expected<std::unique_ptr<Target>> createTargetByName(std::string_view Name,
                                                           std::string_view Arch = {});

} // namespace gridjit

#endif // GRIDJIT_TARGET_TARGET_H
