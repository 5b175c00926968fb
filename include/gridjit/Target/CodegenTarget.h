//===- CodegenTarget.h - The code-generation side of a target ---*- C++ -*-===//
//
// Part of gridjit. What every Target is underneath: a LoweringTarget (the
// registry and the lowering hooks) that also knows how to make a
// TargetMachine, optimise and run the backend. Target::emit() strings these
// together; the NVPTX and host targets implement the hooks.
//
// This header exposes LLVM IR types: it is for targets and their tests,
// not part of the public API (docs/Architecture.md).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TARGET_CODEGENTARGET_H
#define GRIDJIT_TARGET_CODEGENTARGET_H

#include "gridjit/Lower/LoweringTarget.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace gridjit {

/// How often a target's compiles found a TargetMachine to reuse
/// (CodegenTarget::getTargetMachineStats).
struct TargetMachineStats {
  uint64_t Created = 0; ///< made by createTargetMachine() for a compile
  uint64_t Reused = 0;  ///< taken from the target's idle TargetMachines
  uint64_t Idle = 0;    ///< idle now, kept for later compiles
};

class CodegenTarget : public Target, public LoweringTarget {
public:
  ~CodegenTarget() override;

  /// The CodegenTarget that \p T is (every Target is one).
  static const CodegenTarget &get(const Target &T) { return static_cast<const CodegenTarget &>(T); }

  std::string getRegistryFingerprint() const override { return getRegistry().fingerprint(); }
  /// lower(), then optimize() and codegen() (or the IR printed, for
  /// `EmitKind::LLVM`) with a TargetMachine for Opts.OptLevel; each compile
  /// in its own LLVMContext.
  ///
  /// TargetMachines are reused: a compile takes an idle one for its opt
  /// level from this target (or makes one with createTargetMachine()) and
  /// gives it back when it succeeds, so a TargetMachine is used by one
  /// compile, on one thread, at a time, and later compiles (on any thread)
  /// skip making one. A reused TargetMachine generates byte-identical code
  /// to a new one (unittests/Target/TargetMachineReuseTest.cpp).
  llvm::Expected<std::string> emit(const Module &M, EmitKind Kind, const CompileOptions &Opts,
                                   PhaseTimes *Times = nullptr) const override;

  /// A new TargetMachine for one compile. It must depend only on the
  /// target's own (immutable) settings and Opts.OptLevel: emit() reuses
  /// TargetMachines between compiles with the same OptLevel.
  virtual llvm::Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(const CompileOptions &Opts) const = 0;
  /// Runs the optimisation pipeline for OptLevel on \p IR (verified after
  /// lowering; verified again here in builds with assertions).
  virtual llvm::Error optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                               const CompileOptions &Opts) const = 0;
  /// Generates target assembly (PTX for NVPTX) or an object file.
  virtual llvm::Expected<std::string> codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                              EmitKind Kind) const = 0;
  /// Completes \p Kernels, the launch metadata of \p M
  /// (Target::describeKernels), from \p Payload, the code compile()
  /// generated for it: what only the generated code knows (the host
  /// target's KernelInfo::StackBytes). Errors: a kernel that needs more
  /// than any thread the target runs it on has (a located compile error).
  /// The default adds nothing.
  virtual llvm::Error describeCode(const Module &M, llvm::StringRef Payload,
                                   std::vector<KernelInfo> &Kernels) const;

  /// TargetMachines made and reused by this target's compiles so far.
  TargetMachineStats getTargetMachineStats() const;
  /// Frees the idle TargetMachines (the memory they hold); the next compile
  /// of each opt level makes a new one. Safe while other threads compile.
  void releaseIdleTargetMachines() const;

protected:
  explicit CodegenTarget(TargetKind Kind);

private:
  class TargetMachinePool;
  /// The idle TargetMachines (thread-safe; defined in CodegenTarget.cpp).
  std::unique_ptr<TargetMachinePool> Pool;
};

} // namespace gridjit

#endif // GRIDJIT_TARGET_CODEGENTARGET_H
