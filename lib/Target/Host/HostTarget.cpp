//===- HostTarget.cpp - KIR to native code for the CPU running gridjit ----===//
//
// Part of gridjit. The host target: its lowering registry (the common
// lowerings plus HostLowerings.cpp), the thread-loop lowering of every
// kernel (HostLowering.h), LLVM's optimisation pipeline with the loop and
// SLP vectorisers, and an object file (or assembly) for this CPU, which
// HostRuntime loads into an ORC LLJIT. See docs/HostTarget.md.
//
//===----------------------------------------------------------------------===//

#include "HostLowering.h"
#include "StackSizes.h"
#include "ThreadNests.h"

#include "../Pipeline.h"
#include "gridjit/Support/ByteCount.h"
#include "gridjit/Support/Diagnostics.h"
#include "gridjit/Target/CodegenTarget.h"
#include "gridjit/Target/HostABI.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/InstIterator.h"
#include "llvm/IR/LegacyPassManager.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/MC/MCSubtargetInfo.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Support/raw_ostream.h"
#include "llvm/Target/TargetMachine.h"
#include "llvm/TargetParser/Host.h"
#include "llvm/TargetParser/SubtargetFeature.h"
#include "llvm/Transforms/Utils/LowerAtomic.h"

#include <mutex>

using namespace gridjit;
using llvm::Expected;

namespace {

/// LLVM keeps its targets in process-wide registries; filling them is
/// idempotent and done once, before the first host target exists.
void initializeNativeBackend() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    llvm::InitializeNativeTarget();
    llvm::InitializeNativeTargetAsmPrinter();
  });
}

/// The lowering inlines every call of a synchronising function (its body
/// runs at block level), recursively: refuse a kernel whose inlined calls
/// nest deeper than the lowering's stack can take, before lowering it.
llvm::Error checkInlinedNesting(const Module &M) {
  host::SyncInfo Sync;
  DiagnosticEngine Diags(M.Name, M.Source);
  for (const FunctionDecl *K : M.getKernels()) {
    host::SyncInfo::InlinedNesting N = Sync.inlinedNesting(*K);
    if (N.Levels > host::MaxInlinedNesting)
      Diags.error(N.Via->getLoc(),
                  "calls of synchronising functions nest too deep for the host target: kernel '" +
                      K->Name + "' would inline them " + std::to_string(N.Levels) +
                      " levels deep from here (limit " + std::to_string(host::MaxInlinedNesting) +
                      ")");
  }
  return Diags.takeError();
}

class HostTarget : public CodegenTarget {
public:
  HostTarget(std::string Triple, std::string CPU, std::string Features, bool IterationMajor,
             bool Check, unsigned CheckArch)
      : CodegenTarget(TargetKind::Host), Triple(std::move(Triple)), CPU(std::move(CPU)),
        Features(std::move(Features)), IterationMajor(IterationMajor), Check(Check),
        CheckArch(CheckArch) {}

  llvm::Error init(llvm::ArrayRef<Op> Omit);

  llvm::Expected<std::shared_ptr<const Target>> makeChecked(unsigned Arch) const override {
    if (Arch < 70 || Arch > 90)
      return makeError(ErrorKind::InvalidArgument,
                       "checked code needs a GPU architecture from sm_70 to sm_90, not sm_" +
                           std::to_string(Arch));
    auto HT =
        std::make_shared<HostTarget>(Triple, CPU, Features, IterationMajor, /*Check=*/true, Arch);
    if (llvm::Error E = HT->init({}))
      return std::move(E);
    return HT;
  }

  std::string_view getArch() const override { return CPU; }
  std::string getFingerprint() const override { return Fingerprint; }
  EmitKind getPayloadKind() const override { return EmitKind::Object; }
  // Sync sites and kernel-checker sites (hostabi::SyncSite, CheckSite)
  // hold the module's name, a line, a column and the source line.
  bool embedsSourcePositions() const override { return true; }
  unsigned getAddrSpace(AddrSpace) const override { return 0; }
  // One OS thread runs all threads of a block, one after another, and no
  // other reaches its shared memory while it runs (a cooperative block
  // resumed on another worker after grid_sync() is handed over through
  // the pool's lock); local memory is one thread's.
  llvm::SyncScope::ID getAtomicScope(AddrSpace AS) const override {
    return AS == AddrSpace::Shared || AS == AddrSpace::Local ? llvm::SyncScope::SingleThread
                                                             : llvm::SyncScope::System;
  }
  std::string getConstantSymbol(llvm::StringRef Name) const override {
    return hostabi::ConstantPrefix + Name.str();
  }
  llvm::Error prepareModule(llvm::Module &IR) const override {
    IR.setTargetTriple(Triple);
    IR.setDataLayout(DataLayout);
    return llvm::Error::success();
  }
  void markKernel(llvm::Module &, llvm::Function &) const override {}
  llvm::Error lowerFunctions(const Module &M, llvm::Module &IR) const override {
    if (llvm::Error E = checkInlinedNesting(M))
      return E;
    host::HostModuleLowering L(*this, M, IR, /*Hooks=*/nullptr, IterationMajor,
                               Check ? CheckArch : 0);
    return L.run();
  }
  Expected<std::unique_ptr<llvm::TargetMachine>>
  createTargetMachine(const CompileOptions &Opts) const override;
  llvm::Error optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                       const CompileOptions &Opts) const override;
  Expected<std::string> codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                EmitKind Kind) const override;
  llvm::Error describeCode(const Module &M, llvm::StringRef Payload,
                           std::vector<KernelInfo> &Kernels) const override;

private:
  std::string Triple, CPU, Features;
  std::string DataLayout;
  std::string Fingerprint;
  bool IterationMajor;
  /// HostTargetOptions::Check and CheckArch.
  bool Check;
  unsigned CheckArch;
};

llvm::Error HostTarget::init(llvm::ArrayRef<Op> Omit) {
  LoweringRegistry &R = getMutableRegistry();
  if (llvm::Error E = host::registerHostLowerings(R, Omit, Check))
    return E;
  // Complete before use: a gap here is a bug in gridjit, caught when the
  // target is made rather than when some kernel first needs the op.
  if (Omit.empty() && !R.missing().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: target 'host' has no lowering for '%s'",
                                   std::string(opName(R.missing().front())).c_str());
  R.freeze();

  auto TM = createTargetMachine(CompileOptions());
  if (!TM)
    return TM.takeError();
  DataLayout = (*TM)->createDataLayout().getStringRepresentation();

  llvm::BLAKE3 H;
  H.update(R.fingerprint());
  H.update(Triple);
  H.update(CPU);
  H.update(Features);
  H.update("probe-stack=inline-asm"); // artifacts from before stack probes are misses
  H.update("stack-size-section");     // ... and from before KernelInfo::StackBytes
  H.update(IterationMajor ? "iteration-major" : "thread-major");
  if (Check) // unchecked fingerprints stay what they were
    H.update("checked sm_" + std::to_string(CheckArch) + " fast loads, proven shared");
  Fingerprint = llvm::toHex(H.final(), /*LowerCase=*/true);
  return llvm::Error::success();
}

Expected<std::unique_ptr<llvm::TargetMachine>>
HostTarget::createTargetMachine(const CompileOptions &Opts) const {
  std::string Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!T)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the native backend for '%s' is not available: %s",
                                   Triple.c_str(), Err.c_str());
  llvm::CodeGenOptLevel Levels[] = {llvm::CodeGenOptLevel::None, llvm::CodeGenOptLevel::Less,
                                    llvm::CodeGenOptLevel::Default,
                                    llvm::CodeGenOptLevel::Aggressive};
  llvm::TargetOptions Options; // no fast-math, no contraction: IEEE results
  // Every function's frame size in the object's .stack_sizes section
  // (clang's -fstack-size-section), which describeCode reads: the stack a
  // kernel needs, as laid out. The section is not loaded (not SHF_ALLOC):
  // the JIT links the object as before.
  Options.EmitStackSizeSection = true;
  std::unique_ptr<llvm::TargetMachine> TM(
      T->createTargetMachine(Triple, CPU, Features, Options, llvm::Reloc::PIC_,
                             llvm::CodeModel::Small, Levels[std::min(Opts.OptLevel, 3u)]));
  if (!TM)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot create a target machine for %s (cpu '%s')",
                                   Triple.c_str(), CPU.c_str());
  return std::move(TM);
}

// Turns every `singlethread` atomic (the lowering's atomics on shared and
// local memory, getAtomicScope) into a plain load, operation and store,
// keeping its alias metadata. No other OS thread can observe the memory
// between them, so the result is the same; the x86 code generator would
// still give a `singlethread` atomicrmw or cmpxchg a `lock` prefix (and a
// compare-exchange loop for min, max and the float operations), some 20
// times slower than the plain instructions, and the optimiser would not
// touch it. Fences keep their scope: they emit no instruction anyway.
static void expandSingleThreadAtomics(llvm::Module &IR) {
  std::vector<llvm::Instruction *> Atomics;
  for (llvm::Function &F : IR)
    for (llvm::Instruction &I : llvm::instructions(F))
      if (auto *RMW = llvm::dyn_cast<llvm::AtomicRMWInst>(&I)) {
        if (RMW->getSyncScopeID() == llvm::SyncScope::SingleThread)
          Atomics.push_back(RMW);
      } else if (auto *CX = llvm::dyn_cast<llvm::AtomicCmpXchgInst>(&I)) {
        if (CX->getSyncScopeID() == llvm::SyncScope::SingleThread)
          Atomics.push_back(CX);
      }
  for (llvm::Instruction *I : Atomics) {
    llvm::IRBuilder<> B(I);
    llvm::AAMDNodes AA = I->getAAMetadata();
    llvm::Value *Ptr;
    llvm::Type *Ty;
    llvm::Align Alignment;
    if (auto *RMW = llvm::dyn_cast<llvm::AtomicRMWInst>(I)) {
      Ptr = RMW->getPointerOperand();
      Ty = RMW->getType();
      Alignment = RMW->getAlign();
    } else {
      auto *CX = llvm::cast<llvm::AtomicCmpXchgInst>(I);
      Ptr = CX->getPointerOperand();
      Ty = CX->getNewValOperand()->getType();
      Alignment = CX->getAlign();
    }
    llvm::LoadInst *Old = B.CreateAlignedLoad(Ty, Ptr, Alignment, "old");
    Old->setAAMetadata(AA);
    llvm::Value *New, *Result = Old;
    if (auto *RMW = llvm::dyn_cast<llvm::AtomicRMWInst>(I)) {
      New = llvm::buildAtomicRMWValue(RMW->getOperation(), B, Old, RMW->getValOperand());
    } else {
      auto *CX = llvm::cast<llvm::AtomicCmpXchgInst>(I);
      llvm::Value *Equal = B.CreateICmpEQ(Old, CX->getCompareOperand(), "equal");
      New = B.CreateSelect(Equal, CX->getNewValOperand(), Old);
      Result = B.CreateInsertValue(llvm::PoisonValue::get(CX->getType()), Old, 0);
      Result = B.CreateInsertValue(Result, Equal, 1);
    }
    B.CreateAlignedStore(New, Ptr, Alignment)->setAAMetadata(AA);
    I->replaceAllUsesWith(Result);
    I->eraseFromParent();
  }
}

llvm::Error HostTarget::optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                                 const CompileOptions &Opts) const {
  if (Check)
    host::elideChecks(IR);
  expandSingleThreadAtomics(IR);
  host::outlineThreadNests(IR, /*Outline=*/Opts.OptLevel >= 1);
  // Stack-clash protection: a frame larger than a page (device functions'
  // local arrays, inlined into the entry) is touched one page at a time
  // as it is allocated, so that a kernel that runs off its thread's stack
  // faults in the guard page below it (and the runtime reports it) rather
  // than jumping past the guard into another thread's stack.
  for (llvm::Function &F : IR)
    if (!F.isDeclaration())
      F.addFnAttr("probe-stack", "inline-asm");
  // Thread loops are what the host target is built around: vectorise them.
  return runDefaultPipeline(IR, TM, Opts.OptLevel,
                            Opts.OptLevel >= 2 ? Vectorizers::Both : Vectorizers::None);
}

Expected<std::string> HostTarget::codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                          EmitKind Kind) const {
  return runBackend(IR, TM,
                    Kind == EmitKind::Object ? llvm::CodeGenFileType::ObjectFile
                                             : llvm::CodeGenFileType::AssemblyFile);
}

// Each kernel's stack need (KernelInfo::StackBytes): its entry's frame,
// the largest frame of its outlined thread nests (ThreadNests.h: the entry
// calls them one at a time), every other function's frame (device
// functions are all inlined into the entries, so there are none in
// practice; counting them all is a bound without a call graph, as KIR has
// no recursion), and the C library's.
llvm::Error HostTarget::describeCode(const Module &M, llvm::StringRef Payload,
                                     std::vector<KernelInfo> &Kernels) const {
  auto Frames = host::readStackSizes(Payload);
  if (!Frames)
    return Frames.takeError();
  uint64_t Others = 0;
  llvm::StringMap<uint64_t> LargestNest; // by entry name
  for (const auto &F : *Frames) {
    llvm::StringRef Name = F.first();
    if (!Name.starts_with(hostabi::EntryPrefix))
      Others += F.second;
    else if (size_t At = Name.find(host::OutlinedNestSuffix); At != llvm::StringRef::npos)
      LargestNest[Name.take_front(At)] = std::max(LargestNest[Name.take_front(At)], F.second);
  }
  DiagnosticEngine Diags(M.Name, M.Source);
  for (KernelInfo &K : Kernels) {
    std::string Entry = hostabi::EntryPrefix + K.Name;
    auto It = Frames->find(Entry);
    if (It == Frames->end())
      continue; // a dynamic frame (none is made): not known
    K.StackBytes = It->second + LargestNest.lookup(Entry) + Others + hostabi::LibraryCallStackBytes;
    if (K.StackBytes <= hostabi::MaxKernelStackBytes)
      continue;
    SourceLoc Where;
    for (const FunctionDecl *F : M.getKernels())
      if (F->Name == K.Name)
        Where = F->getLoc();
    Diags.error(Where,
                "kernel '" + K.Name + "' needs " + formatByteCount(K.StackBytes) +
                    " of stack on the host target, more than the " +
                    formatByteCount(hostabi::MaxKernelStackBytes) +
                    " a worker thread can give a kernel: the local arrays of the device "
                    "functions it calls live on the stack of the thread that runs it, all of "
                    "those on one call chain at once; make them smaller, or keep the data in a "
                    "buffer");
  }
  return Diags.takeError();
}

/// The host CPU's features as a target-feature string, sorted so that it
/// (and the fingerprint) is the same in every process.
std::string hostFeatures() {
  std::vector<std::string> List;
  for (const auto &F : llvm::sys::getHostCPUFeatures())
    List.push_back((F.second ? "+" : "-") + F.first().str());
  llvm::sort(List);
  return llvm::join(List, ",");
}

} // namespace

Expected<std::unique_ptr<Target>> gridjit::createHostTarget(const HostTargetOptions &Opts) {
  initializeNativeBackend();
  std::string Triple = llvm::sys::getProcessTriple();
  std::string CPU = Opts.CPU;
  std::string Features;
  if (CPU.empty()) {
    CPU = llvm::sys::getHostCPUName().str();
    Features = hostFeatures();
  }
  std::string Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!T)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the native backend for '%s' is not in this build: %s",
                                   Triple.c_str(), Err.c_str());
  {
    // Reject CPU names the backend does not know (it would only warn).
    std::unique_ptr<llvm::MCSubtargetInfo> STI(T->createMCSubtargetInfo(Triple, "", ""));
    if (STI && !STI->isCPUStringValid(CPU))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "unknown CPU '%s' for the host target (%s)", CPU.c_str(),
                                     Triple.c_str());
  }
  auto HT = std::make_unique<HostTarget>(std::move(Triple), std::move(CPU), std::move(Features),
                                         Opts.IterationMajor, Opts.Check, Opts.CheckArch);
  if (llvm::Error E = HT->init(Opts.OmitLowerings))
    return std::move(E);
  return std::move(HT);
}
