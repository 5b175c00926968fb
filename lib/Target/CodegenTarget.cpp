//===- CodegenTarget.cpp - Lower, optimise, generate code ------------------===//
//
// Part of gridjit. The pipeline every target runs (CodegenTarget::emit) and
// the LLVM pass runs that targets share (Pipeline.h).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Target/CodegenTarget.h"
#include "Pipeline.h"

#include "gridjit/Support/ForkSafety.h"

#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Passes/StandardInstrumentations.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

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

//===----------------------------------------------------------------------===//
// Reusing TargetMachines
//===----------------------------------------------------------------------===//

/// The idle TargetMachines of one target, by opt level. Making a
/// TargetMachine costs about a tenth of a small kernel's compile (NVPTX:
/// the subtarget and its lowering tables; docs/Targets.md), so compiles
/// take one from here and give it back. A TargetMachine is in the list only
/// while no compile uses it, so no two threads ever use one at once; the
/// lock is held only to take or give back, never while compiling.
class CodegenTarget::TargetMachinePool {
public:
  /// A TargetMachine for \p OptLevel that the caller uses alone, or null if
  /// none is idle.
  std::unique_ptr<llvm::TargetMachine> take(unsigned OptLevel) {
    std::lock_guard<std::mutex> G(Mu);
    for (auto It = Idle.rbegin(); It != Idle.rend(); ++It)
      if (It->first == OptLevel) {
        std::unique_ptr<llvm::TargetMachine> TM = std::move(It->second);
        Idle.erase(std::next(It).base());
        ++Reused;
        return TM;
      }
    ++Created;
    return nullptr;
  }

  /// Keeps \p TM for a later compile at \p OptLevel, or frees it when as
  /// many are idle as compiles can run at once.
  void giveBack(unsigned OptLevel, std::unique_ptr<llvm::TargetMachine> TM) {
    std::unique_ptr<llvm::TargetMachine> Excess; // freed after the lock
    std::lock_guard<std::mutex> G(Mu);
    if (Idle.size() >= MaxIdle) {
      Excess = std::move(Idle.front().second);
      Idle.erase(Idle.begin());
    }
    Idle.emplace_back(OptLevel, std::move(TM));
  }

  TargetMachineStats stats() {
    std::lock_guard<std::mutex> G(Mu);
    return {Created, Reused, Idle.size()};
  }

  void clear() {
    std::vector<std::pair<unsigned, std::unique_ptr<llvm::TargetMachine>>> Old;
    {
      std::lock_guard<std::mutex> G(Mu);
      Old.swap(Idle);
    }
  }

private:
  /// More idle TargetMachines than threads that can compile at once would
  /// never be used together.
  const size_t MaxIdle = std::clamp<size_t>(std::thread::hardware_concurrency(), 4, 64);
  std::mutex Mu;
  /// Least recently given back first.
  std::vector<std::pair<unsigned, std::unique_ptr<llvm::TargetMachine>>> Idle;
  uint64_t Created = 0, Reused = 0;
  ForkHooks Fork{Mu, nullptr}; ///< last: see ForkHooks
};

CodegenTarget::CodegenTarget(TargetKind Kind)
    : Target(Kind), LoweringTarget(std::string(getTargetName(Kind))),
      Pool(std::make_unique<TargetMachinePool>()) {}

CodegenTarget::~CodegenTarget() = default;

TargetMachineStats CodegenTarget::getTargetMachineStats() const { return Pool->stats(); }

void CodegenTarget::releaseIdleTargetMachines() const { Pool->clear(); }

llvm::Expected<std::string> CodegenTarget::emit(const Module &M, EmitKind Kind,
                                                const CompileOptions &Opts,
                                                PhaseTimes *Times) const {
  // A fork() waits until this compile has left LLVM (ForkSafety.h).
  LLVMSection InLLVM;
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
  // An idle TargetMachine of this target, else a new one (in no phase's
  // time); given back only after a successful compile.
  std::unique_ptr<llvm::TargetMachine> TM = Pool->take(Opts.OptLevel);
  if (!TM) {
    auto New = createTargetMachine(Opts);
    if (!New)
      return New.takeError();
    TM = std::move(*New);
  }
  std::string Result;
  {
    PhaseTimer T(Times ? &Times->OptimizeMs : nullptr);
    if (llvm::Error E = optimize(*IR, *TM, Opts))
      return std::move(E);
  }
  if (Kind == EmitKind::LLVM) {
    llvm::raw_string_ostream OS(Result);
    IR->print(OS, nullptr);
  } else {
    PhaseTimer T(Times ? &Times->CodegenMs : nullptr);
    auto Code = codegen(*IR, *TM, Kind);
    if (!Code)
      return Code.takeError();
    Result = std::move(*Code);
  }
  Pool->giveBack(Opts.OptLevel, std::move(TM));
  return Result;
}

llvm::Error CodegenTarget::describeCode(const Module &, llvm::StringRef,
                                        std::vector<KernelInfo> &) const {
  return llvm::Error::success();
}

llvm::Error gridjit::runDefaultPipeline(llvm::Module &IR, llvm::TargetMachine &TM,
                                        unsigned OptLevel, Vectorizers V) {
  llvm::PipelineTuningOptions PTO;
  if (V != Vectorizers::LLVMDefault) {
    PTO.LoopVectorization = V == Vectorizers::Both;
    PTO.SLPVectorization = V == Vectorizers::Both;
  }
  // A module that uses `null` (lowerNull) treats address 0 as an address
  // in every function, which a null argument may reach.
  if (llvm::any_of(IR, [](const llvm::Function &F) {
        return F.hasFnAttribute(llvm::Attribute::NullPointerIsValid);
      }))
    for (llvm::Function &F : IR)
      if (!F.isDeclaration())
        F.addFnAttr(llvm::Attribute::NullPointerIsValid);
  llvm::LoopAnalysisManager LAM;
  llvm::FunctionAnalysisManager FAM;
  llvm::CGSCCAnalysisManager CGAM;
  llvm::ModuleAnalysisManager MAM;
  // LLVM's standard instrumentation, set up as clang and opt set it up, so
  // that LLVM's debugging options (--print-after-all, --time-passes, ...;
  // jit-run passes them on, docs/jit-run.md) see this pipeline and not
  // only the code generator's passes. Without such an option it does next
  // to nothing.
  llvm::PassInstrumentationCallbacks PIC;
  llvm::StandardInstrumentations SI(IR.getContext(), /*DebugLogging=*/false);
  SI.registerCallbacks(PIC, &MAM);
  llvm::PassBuilder PB(&TM, PTO, std::nullopt, &PIC);
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
#ifndef NDEBUG
  // LLVM's own pipeline on IR that passed the verifier after lowering: a
  // broken result is an LLVM bug, checked (like clang does) only in builds
  // with assertions, where it costs a verifier run per compile.
  std::string Problems;
  llvm::raw_string_ostream OS(Problems);
  if (llvm::verifyModule(IR, &OS))
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: optimisation produced invalid LLVM IR:\n%s",
                                   Problems.c_str());
#endif
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
