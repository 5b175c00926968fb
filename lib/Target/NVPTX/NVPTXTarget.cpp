//===- NVPTXTarget.cpp - KIR to PTX through LLVM's NVPTX backend ----------===//
//
// Part of gridjit. The NVPTX target itself: the architectures it knows, its
// target machine, its registry (the common lowerings, NVPTXLowerings.cpp,
// GridBarrier.cpp and Libdevice.cpp), kernel marking, the last pass over
// each module, the optimisation pipeline and PTX emission.
//
//===----------------------------------------------------------------------===//

#include "NVPTXTarget.h"

#include "../../Lower/CommonLowerings.h"
#include "../Pipeline.h"
#include "../SharedLayout.h"
#include "gridjit/Support/ByteCount.h"
#include "gridjit/Support/Diagnostics.h"

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/IR/Module.h"
#include "llvm/MC/TargetRegistry.h"
#include "llvm/Support/BLAKE3.h"
#include "llvm/Support/TargetSelect.h"
#include "llvm/Target/TargetMachine.h"

#include <algorithm>
#include <mutex>

using namespace gridjit;
using namespace gridjit::nvptx;
using llvm::Expected;

namespace {

// PTX ISA version per architecture: the lowest that supports the
// architecture, so the PTX loads on the oldest driver that knows the GPU.
constexpr NVPTXArchInfo Archs[] = {
    {"sm_70", 70, 60}, {"sm_72", 72, 61}, {"sm_75", 75, 63}, {"sm_80", 80, 70},
    {"sm_86", 86, 71}, {"sm_87", 87, 74}, {"sm_89", 89, 78}, {"sm_90", 90, 78},
};

/// LLVM keeps its targets in process-wide registries; filling them is
/// idempotent and done once, before the first NVPTX target exists.
void initializeNVPTXBackend() {
  static std::once_flag Once;
  std::call_once(Once, [] {
    LLVMInitializeNVPTXTargetInfo();
    LLVMInitializeNVPTXTarget();
    LLVMInitializeNVPTXTargetMC();
    LLVMInitializeNVPTXAsmPrinter();
  });
}

/// True for names ptxas rejects or reads as something else: `_`, the
/// predefined `WARP_SZ`, and the names NVPTX gives parameters and return
/// values (`param0`, `retval0`, `<kernel>_param_<n>`).
bool isReservedInPTX(llvm::StringRef Name, const llvm::DenseSet<const llvm::Function *> &Kernels) {
  if (Name == "_" || Name == "WARP_SZ")
    return true;
  auto DigitsAfter = [&](llvm::StringRef Prefix) {
    llvm::StringRef Rest = Name;
    return Rest.consume_front(Prefix) && !Rest.empty() &&
           llvm::all_of(Rest, [](char C) { return llvm::isDigit(C); });
  };
  if (DigitsAfter("param") || DigitsAfter("retval"))
    return true;
  for (const llvm::Function *K : Kernels)
    if (DigitsAfter((K->getName() + "_param_").str()))
      return true;
  return false;
}

/// LLVM 19's NVPTX backend numbers call sites ("// callseq 12, 0") from one
/// process-wide counter, so the same module compiled twice in one process
/// gives different text. The numbers only appear in comments (and in the
/// names of indirect-call prototypes, which KIR never makes), so renumber
/// them from 0 in order of appearance: the PTX of a module is then the same
/// in every compile. Workaround; it can go once the counter is per target
/// machine (it is in later LLVM releases).
std::string renumberCallSites(llvm::StringRef PTX) {
  std::string Out;
  Out.reserve(PTX.size());
  llvm::DenseMap<unsigned, unsigned> Renamed;
  constexpr llvm::StringLiteral Key = "callseq ";
  while (true) {
    size_t Pos = PTX.find(Key);
    if (Pos == llvm::StringRef::npos)
      break;
    size_t Digits = Pos + Key.size();
    size_t End = Digits;
    while (End < PTX.size() && llvm::isDigit(PTX[End]))
      ++End;
    Out += PTX.substr(0, Digits);
    unsigned N;
    if (End > Digits && !PTX.substr(Digits, End - Digits).getAsInteger(10, N)) {
      auto [It, New] = Renamed.try_emplace(N, Renamed.size());
      Out += std::to_string(It->second);
    } else {
      Out += PTX.substr(Digits, End - Digits);
    }
    PTX = PTX.substr(End);
  }
  Out += PTX;
  return Out;
}

} // namespace

//===----------------------------------------------------------------------===//
// NVPTXTarget
//===----------------------------------------------------------------------===//

unsigned NVPTXTarget::getAddrSpace(AddrSpace AS) const {
  switch (AS) {
  case AddrSpace::Global:
    return Global;
  case AddrSpace::Shared:
    return Shared;
  case AddrSpace::Local:
    // Allocas are generic pointers in NVPTX IR (NVPTXLowerAlloca turns
    // them into local accesses), so `ptr<T, local>` is generic.
    return Generic;
  case AddrSpace::Constant:
    return Const; // `.const`, read with ld.const through the constant cache
  }
  return Generic;
}

llvm::Error NVPTXTarget::prepareModule(llvm::Module &IR) const {
  IR.setTargetTriple(Triple);
  IR.setDataLayout(DataLayout);
  return llvm::Error::success();
}

llvm::Error NVPTXTarget::init(llvm::ArrayRef<Op> Omit) {
  LoweringRegistry &R = getMutableRegistry();
  if (llvm::Error E = registerCommonLowerings(R, Omit))
    return E;
  if (llvm::Error E = registerNVPTXLowerings(R, Omit))
    return E;
  if (llvm::Error E = registerMathLowerings(R, Omit))
    return E;
  if (llvm::Error E = registerPrintLowering(R, Omit))
    return E;
  // Complete before use: a gap here is a bug in gridjit, caught when the
  // target is made rather than when some kernel first needs the op.
  if (Omit.empty() && !R.missing().empty())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "internal error: target 'nvptx' has no lowering for '%s'",
                                   std::string(opName(R.missing().front())).c_str());
  R.freeze();

  auto TM = makeTargetMachine(3);
  if (!TM)
    return TM.takeError();
  DataLayout = (*TM)->createDataLayout().getStringRepresentation();

  llvm::BLAKE3 H;
  H.update(R.fingerprint());
  H.update(Arch.Arch);
  H.update(std::to_string(Arch.PtxVersion));
  H.update(Libdevice);
  Fingerprint = llvm::toHex(H.final(), /*LowerCase=*/true);
  return llvm::Error::success();
}

Expected<std::unique_ptr<llvm::TargetMachine>>
NVPTXTarget::createTargetMachine(const CompileOptions &Opts) const {
  return makeTargetMachine(Opts.OptLevel);
}

Expected<std::unique_ptr<llvm::TargetMachine>>
NVPTXTarget::makeTargetMachine(unsigned OptLevel) const {
  std::string Err;
  const llvm::Target *T = llvm::TargetRegistry::lookupTarget(Triple, Err);
  if (!T)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the NVPTX backend is not available: %s", Err.c_str());
  llvm::TargetOptions Options;
  auto Level = llvm::CodeGenOptLevel::Aggressive;
  if (OptLevel == 0)
    Level = llvm::CodeGenOptLevel::None;
  else if (OptLevel == 1)
    Level = llvm::CodeGenOptLevel::Less;
  else if (OptLevel == 2)
    Level = llvm::CodeGenOptLevel::Default;
  std::string Features = "+ptx" + std::to_string(Arch.PtxVersion);
  std::unique_ptr<llvm::TargetMachine> TM(T->createTargetMachine(
      Triple, Arch.Arch, Features, Options, std::nullopt, std::nullopt, Level));
  if (!TM)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot create an NVPTX target machine for %s", Arch.Arch);
  return std::move(TM);
}

void NVPTXTarget::markKernel(llvm::Module &IR, llvm::Function &F) const {
  // LLVM 19's NVPTX backend recognises kernels by this annotation.
  llvm::LLVMContext &Ctx = IR.getContext();
  llvm::Metadata *MD[] = {
      llvm::ValueAsMetadata::get(&F), llvm::MDString::get(Ctx, "kernel"),
      llvm::ConstantAsMetadata::get(llvm::ConstantInt::get(llvm::Type::getInt32Ty(Ctx), 1))};
  IR.getOrInsertNamedMetadata("nvvm.annotations")->addOperand(llvm::MDNode::get(Ctx, MD));
}

// A kernel's static shared arrays, its own and those of the device
// functions it calls (SharedLayout), must fit in what a block may declare:
// ptxas rejects more ("uses too much shared data") and a launch could not
// have it. The error is at the declaration that crosses the limit.
llvm::Error NVPTXTarget::lowerFunctions(const Module &M, llvm::Module &IR) const {
  DiagnosticEngine Diags(M.Name, M.Source);
  for (const FunctionDecl *K : M.getKernels()) {
    SharedLayout L = layoutShared(*K);
    if (L.StaticBytes <= MaxStaticSharedBytes)
      continue;
    const VarDecl *Crossing = nullptr;
    for (const SharedLayout::Entry &E : L.Arrays)
      if (!Crossing && !isDynamicShared(*E.Var) &&
          E.Offset + E.Var->Ty.getSizeInBytes() > MaxStaticSharedBytes)
        Crossing = E.Var;
    Diags.error(Crossing ? Crossing->Loc : K->getLoc(),
                "kernel '" + K->Name + "' declares " + std::to_string(L.StaticBytes) +
                    " bytes of static shared memory; a GPU allows at most " +
                    std::to_string(MaxStaticSharedBytes) +
                    " (48 KiB) per block; use the dynamic shared array (shared t: [T];) for more");
  }
  if (llvm::Error E = Diags.takeError())
    return E;
  return LoweringTarget::lowerFunctions(M, IR);
}

// Links the libdevice functions the module calls (only those), then makes
// every non-kernel function internal so the optimiser may inline or drop it.
llvm::Error NVPTXTarget::finishModule(llvm::Module &IR) const {
  if (llvm::Error E = linkLibdevice(IR, Libdevice, LibdevicePath))
    return E;
  llvm::DenseSet<const llvm::Function *> Kernels;
  if (llvm::NamedMDNode *A = IR.getNamedMetadata("nvvm.annotations"))
    for (const llvm::MDNode *N : A->operands())
      if (auto *F = llvm::mdconst::dyn_extract_or_null<llvm::Function>(N->getOperand(0)))
        Kernels.insert(F);
  for (const llvm::Function *K : Kernels)
    if (isReservedInPTX(K->getName(), Kernels))
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "kernel '%s' cannot be compiled for nvptx: PTX reserves "
                                     "that name; rename the kernel",
                                     K->getName().str().c_str());
  for (llvm::Function &F : IR) {
    if (F.isDeclaration() || Kernels.count(&F))
      continue;
    F.setLinkage(llvm::GlobalValue::InternalLinkage);
    // Internal names are free to change: move device functions off names
    // that PTX gives another meaning (the '__' prefix is not open to KIR).
    if (isReservedInPTX(F.getName(), Kernels))
      F.setName("__gridjit_fn_" + F.getName());
  }
  return llvm::Error::success();
}

llvm::Error NVPTXTarget::optimize(llvm::Module &IR, llvm::TargetMachine &TM,
                                  const CompileOptions &Opts) const {
  return runDefaultPipeline(IR, TM, Opts.OptLevel, Vectorizers::LLVMDefault);
}

Expected<std::string> NVPTXTarget::codegen(llvm::Module &IR, llvm::TargetMachine &TM,
                                           EmitKind Kind) const {
  if (Kind == EmitKind::Object)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "the nvptx target emits PTX ('--emit=ptx'); a cubin is made "
                                   "by the CUDA driver when the module is loaded");
  auto PTX = runBackend(IR, TM, llvm::CodeGenFileType::AssemblyFile);
  if (!PTX)
    return PTX.takeError();
  return renumberCallSites(*PTX);
}

/// The bytes of kernel \p Name's local depot in \p PTX (`.local .align A
/// .b8 __local_depotN[SIZE];` in the body of `.entry NAME(`): its frame,
/// local arrays and the stack of what was inlined into it. 0 when it has
/// none.
static uint64_t localDepotBytes(llvm::StringRef PTX, llvm::StringRef Name) {
  size_t At = PTX.find((".entry " + Name + "(").str());
  if (At == llvm::StringRef::npos)
    return 0;
  llvm::StringRef Body = PTX.substr(At + 1);
  Body = Body.take_front(std::min(Body.find(".entry "), Body.find(".func ")));
  size_t Depot = Body.find("__local_depot");
  if (Depot == llvm::StringRef::npos)
    return 0;
  llvm::StringRef Size = Body.substr(Depot).split('[').second.split(']').first;
  uint64_t Bytes = 0;
  return Size.getAsInteger(10, Bytes) ? 0 : Bytes;
}

// ptxas accepts a larger frame than a GPU thread may have (it prints "N
// bytes stack frame") and the launch fails; a kernel whose own frame is
// larger is refused here instead, with the sizes. Device functions are
// inlined into the kernels, so the depot holds their local arrays; what
// ptxas adds (spills, the frames of functions it calls) comes on top, so a
// depot within the limit may still be too much, which the driver reports
// at the launch.
llvm::Error NVPTXTarget::describeCode(const Module &M, llvm::StringRef PTX,
                                      std::vector<KernelInfo> &) const {
  DiagnosticEngine Diags(M.Name, M.Source);
  for (const FunctionDecl *F : M.getKernels()) {
    uint64_t Bytes = localDepotBytes(PTX, F->Name);
    if (Bytes > MaxLocalBytes)
      Diags.error(F->getLoc(), "kernel '" + F->Name + "' needs " + formatByteCount(Bytes) +
                                   " of local memory per thread on the GPU, more than the " +
                                   formatByteCount(MaxLocalBytes) +
                                   " a GPU thread may have: the local arrays of the device "
                                   "functions it calls are all in its frame, those on one call "
                                   "chain at once; make them smaller, or keep the data in a "
                                   "buffer");
  }
  return Diags.takeError();
}

llvm::ArrayRef<NVPTXArchInfo> gridjit::getNVPTXArchs() { return Archs; }

Expected<std::unique_ptr<Target>> gridjit::createNVPTXTarget(const NVPTXTargetOptions &Opts) {
  const NVPTXArchInfo *Arch = nullptr;
  for (const NVPTXArchInfo &A : Archs)
    if (Opts.Arch == A.Arch)
      Arch = &A;
  if (!Arch) {
    std::string Known;
    for (const NVPTXArchInfo &A : Archs)
      Known += (Known.empty() ? "" : ", ") + std::string(A.Arch);
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown NVPTX architecture '%s' (known: %s)", Opts.Arch.c_str(),
                                   Known.c_str());
  }
  initializeNVPTXBackend();
  Expected<std::pair<std::string, std::string>> Lib = std::make_pair(std::string(), std::string());
  if (Opts.UseLibdevice)
    Lib = findLibdevice(Opts.LibdevicePath);
  if (!Lib)
    return Lib.takeError();
  auto T = std::make_unique<NVPTXTarget>(*Arch, std::move(Lib->second), std::move(Lib->first));
  if (llvm::Error E = T->init(Opts.OmitLowerings))
    return std::move(E);
  return std::move(T);
}
