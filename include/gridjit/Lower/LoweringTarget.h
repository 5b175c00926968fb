//===- LoweringTarget.h - What the lowering needs from a target -*- C++ -*-===//
//
// Part of gridjit. The Lower layer's view of a target: its registry of op
// lowerings and the few hooks that the shared structural lowering calls
// (address spaces, the module's triple, kernel marking, a last pass over
// the module). The Target layer's CodegenTarget implements it; Lower never
// sees a Target, so the dependency runs one way (docs/Architecture.md).
//
// This header exposes LLVM IR types: it is for targets and their tests,
// not part of the public API.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LOWER_LOWERINGTARGET_H
#define GRIDJIT_LOWER_LOWERINGTARGET_H

#include "gridjit/IR/AST.h"
#include "gridjit/Lower/LoweringRegistry.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/Support/Error.h"

#include <memory>
#include <string>
#include <vector>

namespace llvm {
class Function;
class LLVMContext;
class Module;
class Type;
} // namespace llvm

namespace gridjit {

class LoweringContext;

/// A target as the lowering sees it. Immutable after construction (the
/// registry is frozen by the target's constructor), so one LoweringTarget
/// may lower modules on any number of threads at once.
class LoweringTarget {
public:
  virtual ~LoweringTarget();

  const LoweringRegistry &getRegistry() const { return Registry; }

  /// KIR → LLVM IR (before optimisation) in \p Ctx: prepareModule(),
  /// lowerFunctions(), finishModule(), then the IR verifier. \p M must be
  /// verified.
  llvm::Expected<std::unique_ptr<llvm::Module>> lower(const Module &M,
                                                      llvm::LLVMContext &Ctx) const;

  /// The LLVM address space of a KIR address space.
  virtual unsigned getAddrSpace(AddrSpace AS) const = 0;
  /// The LLVM synchronisation scope of an atomic on memory \p AS: the whole
  /// system (LLVM's default) unless the target knows fewer threads can see
  /// that memory. The host target's shared and local memory is reached by
  /// one OS thread only (the one running the block), so it says
  /// `singlethread` there (docs/HostTarget.md, "Atomics").
  virtual llvm::SyncScope::ID getAtomicScope(AddrSpace AS) const { return llvm::SyncScope::System; }
  /// Sets the triple and data layout of a new module.
  virtual llvm::Error prepareModule(llvm::Module &IR) const = 0;
  /// Marks \p F as a kernel entry point.
  virtual void markKernel(llvm::Module &IR, llvm::Function &F) const = 0;
  /// Appends to \p Params the types of the hidden parameters kernel \p K
  /// takes after its KIR parameters (none by default; the nvptx target's
  /// cooperative kernels take their grid barrier's state). Launchers pass
  /// them; KernelInfo::Params lists only the KIR parameters.
  virtual void addHiddenKernelParams(const FunctionDecl &K, llvm::LLVMContext &Ctx,
                                     std::vector<llvm::Type *> &Params) const {}
  /// Emits the start of kernel \p C.CurDecl's body, after its parameters
  /// are bound (the builder is in the entry block, and is left in the block
  /// where the body goes on). Nothing by default.
  virtual llvm::Error emitKernelPrologue(LoweringContext &C) const {
    return llvm::Error::success();
  }
  /// The symbol of constant memory \p Name (`constant NAME: [T; N];`) in
  /// the generated code, which the runtime looks up to set it: the name
  /// itself by default (the nvptx target's `.const` global, as CUDA's
  /// `__constant__`); the host target prefixes it (hostabi::ConstantPrefix).
  virtual std::string getConstantSymbol(llvm::StringRef Name) const { return Name.str(); }
  /// Called once after every function is lowered (e.g. to link libraries).
  virtual llvm::Error finishModule(llvm::Module &IR) const { return llvm::Error::success(); }
  /// Lowers every function and kernel of verified \p M into \p IR; lower()
  /// calls it between prepareModule() and finishModule(). The default is the
  /// shared structural lowering of lib/Lower/Lowering.cpp. The host target
  /// replaces it with its thread-loop lowering (lib/Target/Host), which
  /// still lowers every operation through the registry.
  virtual llvm::Error lowerFunctions(const Module &M, llvm::Module &IR) const;

protected:
  /// \p Name names the target in the registry's fingerprint and messages.
  explicit LoweringTarget(std::string Name) : Registry(std::move(Name)) {}
  /// For constructors only: the registry is frozen when they return.
  LoweringRegistry &getMutableRegistry() { return Registry; }

private:
  LoweringRegistry Registry;
};

} // namespace gridjit

#endif // GRIDJIT_LOWER_LOWERINGTARGET_H
