//===- Target.h - Compilation targets and compiled artifacts ----*- C++ -*-===//
//
// Part of gridjit. A Target turns a verified KIR module into an artifact a
// runtime can load: PTX text for NVPTX, an object file for the host. Each
// target owns its LoweringRegistry, built completely and frozen in the
// constructor, and is immutable afterwards: one Target may compile from any
// number of threads at once. Every compile makes its own LLVMContext and
// TargetMachine.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TARGET_TARGET_H
#define GRIDJIT_TARGET_TARGET_H

#include "gridjit/IR/AST.h"
#include "gridjit/Lower/LoweringRegistry.h"

#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class LLVMContext;
class Module;
class TargetMachine;
} // namespace llvm

namespace gridjit {

/// A kernel parameter as a launch passes it.
struct KernelParamInfo {
  std::string Name;
  Type Ty;           ///< a scalar or ptr<T>
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
  /// Bytes of the kernel's `shared` arrays with a static size.
  uint64_t StaticSharedBytes = 0;
  /// Declares `shared NAME: [T];` (sized by the launch).
  bool UsesDynamicShared = false;
};

/// The result of a compile.
struct Artifact {
  std::string TargetName; ///< "nvptx" or "host"
  std::string Arch;       ///< "sm_80", or the host CPU name
  /// PTX text (NVPTX) or a relocatable object file (host).
  std::string Payload;
  std::vector<KernelInfo> Kernels;
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

/// A compilation target. Thread-safe: every method is const and the object
/// is immutable after construction.
class Target {
public:
  virtual ~Target();

  /// "nvptx" or "host".
  virtual std::string_view getName() const = 0;
  /// The architecture compiled for ("sm_80", or the host CPU).
  virtual std::string_view getArch() const = 0;
  const LoweringRegistry &getRegistry() const { return Registry; }
  /// A digest of everything about this target that changes generated code:
  /// the registry's fingerprint, the architecture and features, and the
  /// content of linked libraries (libdevice). Part of the cache key.
  virtual std::string getFingerprint() const = 0;

  /// KIR → LLVM IR (before optimisation) in \p Ctx. \p M must be verified.
  llvm::Expected<std::unique_ptr<llvm::Module>> lower(const Module &M,
                                                      llvm::LLVMContext &Ctx) const;
  /// A new TargetMachine for one compile (TargetMachines are not shared
  /// between compiles, so compiles on different threads share nothing).
  virtual llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(const CompileOptions &Opts) const = 0;
  /// Runs the optimisation pipeline for OptLevel on \p IR and verifies it.
  virtual llvm::Error optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                               const CompileOptions &Opts) const = 0;
  /// Generates target assembly (PTX for NVPTX) or an object file.
  virtual llvm::Expected<std::string> codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                              EmitKind Kind) const = 0;

  /// Lowers, optimises and generates code for \p M; fills \p Times if given
  /// (LowerMs, OptimizeMs, CodegenMs).
  llvm::Expected<Artifact> compile(const Module &M, const CompileOptions &Opts,
                                   PhaseTimes *Times = nullptr) const;
  /// The text of one stage: LLVM IR after optimisation (`EmitKind::LLVM`),
  /// assembly, or the object file's bytes.
  llvm::Expected<std::string> emit(const Module &M, EmitKind Kind, const CompileOptions &Opts,
                                   PhaseTimes *Times = nullptr) const;

  /// Launch metadata for every kernel of \p M (as compile() stores it).
  std::vector<KernelInfo> describeKernels(const Module &M) const;

  // Hooks for the shared lowering code.
  /// The LLVM address space of a KIR address space.
  virtual unsigned getAddrSpace(AddrSpace AS) const = 0;
  /// Sets the triple and data layout of a new module.
  virtual llvm::Error prepareModule(llvm::Module &IR) const = 0;
  /// Marks \p F as a kernel entry point.
  virtual void markKernel(llvm::Module &IR, llvm::Function &F) const = 0;
  /// Called once after every function is lowered (e.g. to link libraries).
  virtual llvm::Error finishModule(llvm::Module &IR) const { return llvm::Error::success(); }
  /// Lowers every function and kernel of verified \p M into \p IR; lower()
  /// calls it between prepareModule() and finishModule(). The default is the
  /// shared structural lowering of lib/Lower/Lowering.cpp. The host target
  /// replaces it with its thread-loop lowering (lib/Target/Host), which
  /// still lowers every operation through the registry.
  virtual llvm::Error lowerFunctions(const Module &M, llvm::Module &IR) const;

protected:
  explicit Target(std::string_view Name) : Registry(std::string(Name)) {}
  /// For constructors only: the registry is frozen when they return.
  LoweringRegistry &getMutableRegistry() { return Registry; }

private:
  LoweringRegistry Registry;
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
};

/// Creates the host target: kernels become native code for this CPU that
/// runs every thread of a block in loops split at synchronisation points,
/// loaded and launched by gridjit::HostRuntime. Errors: the native backend
/// is missing from this build, or an unknown CPU name.
llvm::Expected<std::unique_ptr<Target>> createHostTarget(const HostTargetOptions &Opts = {});

} // namespace gridjit

#endif // GRIDJIT_TARGET_TARGET_H
