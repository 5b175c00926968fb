//===- NVPTXTarget.h - The NVPTX target's parts -----------------*- C++ -*-===//
//
// Part of gridjit (internal header). The NVPTX target is split by what each
// part does:
//   NVPTXTarget.cpp     the target: architectures, target machine, kernel
//                       marking, the last pass over the module, PTX output
//   NVPTXLowerings.cpp  GPU-specific op lowerings (thread indices, barriers,
//                       fences, warp operations, shared memory)
//   GridBarrier.cpp     grid_sync(): a grid-wide barrier in global memory
//   Libdevice.cpp       finding and linking libdevice, and the math
//                       builtins (libdevice, or approximate f32 instructions)
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_NVPTX_NVPTXTARGET_H
#define GRIDJIT_LIB_TARGET_NVPTX_NVPTXTARGET_H

#include "gridjit/Lower/LoweringContext.h"
#include "gridjit/Lower/LoweringRegistry.h"
#include "gridjit/Target/CodegenTarget.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <utility>

namespace gridjit::nvptx {

/// The target triple of every NVPTX module.
inline constexpr const char *Triple = "nvptx64-nvidia-cuda";

/// The LLVM address spaces of NVPTX that KIR uses.
enum NVPTXAddrSpace : unsigned { Generic = 0, Global = 1, Shared = 3, Const = 4 };

class NVPTXTarget : public CodegenTarget {
public:
  NVPTXTarget(const NVPTXArchInfo &Arch, std::string Libdevice, std::string LibdevicePath)
      : CodegenTarget(TargetKind::NVPTX), Arch(Arch), Libdevice(std::move(Libdevice)),
        LibdevicePath(std::move(LibdevicePath)) {}

  /// Fills and freezes the registry, makes the data layout and the
  /// fingerprint. Errors: a lowering is missing (and none was omitted).
  llvm::Error init(llvm::ArrayRef<Op> Omit);

  std::string_view getArch() const override { return Arch.Arch; }
  std::string getFingerprint() const override { return Fingerprint; }
  EmitKind getPayloadKind() const override { return EmitKind::Assembly; }
  unsigned getAddrSpace(AddrSpace AS) const override;
  llvm::Error prepareModule(llvm::Module &IR) const override;
  void markKernel(llvm::Module &IR, llvm::Function &F) const override;
  /// A cooperative kernel's hidden parameter: its grid barrier's state
  /// (GridBarrier.cpp).
  void addHiddenKernelParams(const FunctionDecl &K, llvm::LLVMContext &Ctx,
                             std::vector<llvm::Type *> &Params) const override;
  /// A cooperative kernel keeps that parameter where grid_sync() finds it.
  llvm::Error emitKernelPrologue(LoweringContext &C) const override;
  llvm::Error finishModule(llvm::Module &IR) const override;
  /// Refuses a kernel whose static shared memory is more than a block may
  /// declare (MaxStaticSharedBytes), with a located compile error, then
  /// lowers as every target does: ptxas would reject the PTX.
  llvm::Error lowerFunctions(const Module &M, llvm::Module &IR) const override;
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(const CompileOptions &Opts) const override;
  llvm::Error optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                       const CompileOptions &Opts) const override;
  llvm::Expected<std::string> codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                      EmitKind Kind) const override;
  /// Refuses a kernel whose frame in the PTX (its local depot) is larger
  /// than a GPU thread's local memory may be (MaxLocalBytes).
  llvm::Error describeCode(const Module &M, llvm::StringRef PTX,
                           std::vector<KernelInfo> &Kernels) const override;

  /// The most local memory a GPU thread may have: 512 KiB on every
  /// architecture gridjit compiles for (the CUDA C++ Programming Guide,
  /// "Technical Specifications per Compute Capability").
  static constexpr uint64_t MaxLocalBytes = 512u << 10;
  /// The most static shared memory a block may declare: 48 KiB on every
  /// architecture (more is dynamic shared memory only, with the kernel's
  /// opt-in; the CUDA C++ Programming Guide, "Technical Specifications per
  /// Compute Capability").
  static constexpr uint64_t MaxStaticSharedBytes = 48u << 10;

  /// False when libdevice was not found or not wanted: f32 math is then
  /// approximate and f64 math an error.
  bool hasLibdevice() const { return !Libdevice.empty(); }

private:
  llvm::Expected<std::unique_ptr<llvm::TargetMachine>> makeTargetMachine(unsigned OptLevel) const;

  NVPTXArchInfo Arch;
  std::string Libdevice; ///< libdevice bitcode, read once; empty if absent
  std::string LibdevicePath;
  std::string DataLayout;
  std::string Fingerprint;
};

/// Registers the GPU-specific lowerings (NVPTXLowerings.cpp), grid_sync
/// included, except the ops in \p Omit.
llvm::Error registerNVPTXLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit);

/// Registers the lowering of print (PrintLowering.cpp: a call of vprintf),
/// unless \p Omit names it.
llvm::Error registerPrintLowering(LoweringRegistry &R, llvm::ArrayRef<Op> Omit);

/// The lowering of grid_sync() (GridBarrier.cpp).
llvm::Expected<llvm::Value *> lowerGridSync(LoweringContext &C, const OpArgs &A);

/// Registers the lowerings of the math builtins (Libdevice.cpp), except
/// the ops in \p Omit.
llvm::Error registerMathLowerings(LoweringRegistry &R, llvm::ArrayRef<Op> Omit);

/// Reads libdevice from \p Path, or from the usual CUDA locations when
/// \p Path is empty. Returns (path, bitcode), both empty when none was
/// found. Errors: \p Path was given and cannot be read.
llvm::Expected<std::pair<std::string, std::string>> findLibdevice(const std::string &Path);

/// Links the libdevice functions that \p IR calls (only those) from the
/// bitcode \p Libdevice read from \p Path. Does nothing when \p IR calls
/// none.
llvm::Error linkLibdevice(llvm::Module &IR, llvm::StringRef Libdevice, llvm::StringRef Path);

} // namespace gridjit::nvptx

#endif // GRIDJIT_LIB_TARGET_NVPTX_NVPTXTARGET_H
