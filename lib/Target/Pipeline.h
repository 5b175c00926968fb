//===- Pipeline.h - The optimisation and backend runs targets share -*- C++ -*-===//
//
// Part of gridjit (internal header).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_PIPELINE_H
#define GRIDJIT_LIB_TARGET_PIPELINE_H

#include "llvm/Support/CodeGen.h"
#include "llvm/Support/Error.h"

#include <string>

namespace llvm {
class Module;
class TargetMachine;
} // namespace llvm

namespace gridjit {

/// Which of LLVM's vectorisers the pipeline runs. (A choice rather than
/// llvm::PipelineTuningOptions so that targets need not include
/// PassBuilder.h, which is by far the most expensive header to compile.)
enum class Vectorizers {
  LLVMDefault, ///< PipelineTuningOptions' defaults
  Both,        ///< the loop and the SLP vectoriser
  None,
};

/// Runs LLVM's default pipeline for \p OptLevel (the O0 pipeline at 0) with
/// \p TM's own pass-builder callbacks. In builds with assertions it then
/// verifies \p IR (a broken module is an internal error); the IR it starts
/// from was verified after lowering in every build.
llvm::Error runDefaultPipeline(llvm::Module &IR, llvm::TargetMachine &TM, unsigned OptLevel,
                               Vectorizers V);

/// Runs \p TM's backend on \p IR and returns the assembly or object file.
llvm::Expected<std::string> runBackend(llvm::Module &IR, llvm::TargetMachine &TM,
                                       llvm::CodeGenFileType Type);

} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_PIPELINE_H
