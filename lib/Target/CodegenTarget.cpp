//===- CodegenTarget.cpp - Lower, optimise, generate code ------------------===//
//
// Part of gridjit. The pipeline every target runs (CodegenTarget::emit) and
// the LLVM pass runs that targets share (Pipeline.h).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Target/CodegenTarget.h"
#include "Pipeline.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <chrono>

using namespace gridjit;

namespace {
/// Adds the milliseconds since construction to *Slot (if any) when destroyed.
class PhaseTimer {
public:
  explicit PhaseTimer(double *Slot) : Slot(Slot), Start(std::chrono::steady_clock::now()) {}
  ~PhaseTimer() {
    if (Slot)
      *Slot += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - Start)
                   .count();
  }

private:
  double *Slot;
  std::chrono::steady_clock::time_point Start;
};
} // namespace

llvm::Expected<std::string> CodegenTarget::emit(const Module &M, EmitKind Kind,
                                                const CompileOptions &Opts,
                                                PhaseTimes *Times) const {
  // Each compile owns its context: nothing LLVM-side is shared between
  // threads compiling at the same time.
  llvm::LLVMContext Ctx;
  std::unique_ptr<llvm::Module> IR;
  {
    PhaseTimer T(Times ? &Times->LowerMs : nullptr);
    auto L = lower(M, Ctx);
    if (!L)
      return L.takeError();
    IR = std::move(*L);
  }
  auto TM = createTargetMachine(Opts);
  if (!TM)
    return TM.takeError();
  {
    PhaseTimer T(Times ? &Times->OptimizeMs : nullptr);
    if (llvm::Error E = optimize(*IR, **TM, Opts))
      return std::move(E);
  }
  if (Kind == EmitKind::LLVM) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    IR->print(OS, nullptr);
    return Text;
  }
  PhaseTimer T(Times ? &Times->CodegenMs : nullptr);
  return codegen(*IR, **TM, Kind);
}

llvm::Error gridjit::runDefaultPipeline(llvm::Module &IR, llvm::TargetMachine &TM,
                                        unsigned OptLevel, Vectorizers V) {
  llvm::PipelineTuningOptions PTO;
  if (V != Vectorizers::LLVMDefault) {
    PTO.LoopVectorization = V == Vectorizers::Both;
    PTO.SLPVectorization = V == Vectorizers::Both;
  }
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  llvm::PassBuilder PB(&TM, PTO);
  PB.registerModuleAnalyses(MAM);
  PB.registerCGSCCAnalyses(CGAM);
  PB.registerFunctionAnalyses(FAM);
  PB.registerLoopAnalyses(LAM);
  PB.crossRegisterProxies(LAM, FAM, CGAM, MAM);
  llvm::OptimizationLevel Levels[] = {llvm::OptimizationLevel::O0, llvm::OptimizationLevel::O1,
                                      llvm::OptimizationLevel::O2, llvm::OptimizationLevel::O3};
  llvm::OptimizationLevel L = Levels[std::min(OptLevel, 3u)];
  llvm::ModulePassManager MPM =
      OptLevel == 0 ? PB.buildO0DefaultPipeline(L) : PB.buildPerModuleDefaultPipeline(L);
  MPM.run(IR, MAM);
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  if (llvm::verifyModule(IR, &OS))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: optimisation produced invalid LLVM IR:\n%s",
                                   Problems.c_str());
  return llvm::Error::success();
}

llvm::Expected<std::string> gridjit::runBackend(llvm::Module &IR, llvm::TargetMachine &TM,
                                                llvm::CodeGenFileType Type) {
  llvm::SmallString<0> Out;
  llvm::raw_svector_ostream OS(Out);
  llvm::legacy::PassManager PM;
  if (TM.addPassesToEmitFile(PM, OS, nullptr, Type))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the %s backend cannot emit this file type",
                                   TM.getTargetTriple().getArchName().str().c_str());
  PM.run(IR);
  return std::string(Out.str());
}
