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

#include "llvm/Support/Error.h"

#include <memory>
#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace gridjit {

class CodegenTarget : public Target, public LoweringTarget {
public:
  /// The CodegenTarget that \p T is (every Target is one).
  static const CodegenTarget &get(const Target &T) { return static_cast<const CodegenTarget &>(T); }

  std::string getRegistryFingerprint() const override { return getRegistry().fingerprint(); }
  /// lower(), createTargetMachine(), optimize(), then codegen() (or the IR
  /// printed, for `EmitKind::LLVM`), each compile in its own LLVMContext.
  llvm::Expected<std::string> emit(const Module &M, EmitKind Kind, const CompileOptions &Opts,
                                   PhaseTimes *Times = nullptr) const override;

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

protected:
  explicit CodegenTarget(TargetKind Kind)
      : Target(Kind), LoweringTarget(std::string(getTargetName(Kind))) {}
};

} // namespace gridjit

#endif // GRIDJIT_TARGET_CODEGENTARGET_H
