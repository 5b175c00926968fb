//===- Target.cpp - The public face of a target ---------------------------===//
//
// Part of gridjit. What every target shares above code generation: names,
// compile() into an Artifact, and the launch metadata of kernels.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Target/Target.h"

#include "SharedLayout.h"

#include "gridjit/Support/Errors.h"
#include "gridjit/Target/CodegenTarget.h"

#include "llvm/Support/Casting.h"

using namespace gridjit;

namespace {
struct TargetNameEntry {
  TargetKind Kind;
  std::string_view Name;
};
constexpr TargetNameEntry TargetNames[] = {
    {TargetKind::NVPTX, "nvptx"},
    {TargetKind::Host, "host"},
};
} // namespace

std::string_view gridjit::getTargetName(TargetKind K) {
  for (const TargetNameEntry &E : TargetNames)
    if (E.Kind == K)
      return E.Name;
  return "unknown";
}

std::optional<TargetKind> gridjit::parseTargetName(std::string_view Name) {
  for (const TargetNameEntry &E : TargetNames)
    if (E.Name == Name)
      return E.Kind;
  return std::nullopt;
}

Target::~Target() = default;

llvm::Expected<std::shared_ptr<const Target>> Target::makeChecked(unsigned) const {
  return makeError(ErrorKind::InvalidArgument,
                   "target '" + std::string(getName()) +
                       "' has no checked code: the kernel checker runs kernels on the host "
                       "target (docs/Check.md)");
}

const KernelInfo *Artifact::getKernel(std::string_view Name) const {
  for (const KernelInfo &K : Kernels)
    if (K.Name == Name)
      return &K;
  return nullptr;
}

llvm::Expected<Artifact> Target::compile(const Module &M, const CompileOptions &Opts,
                                         PhaseTimes *Times) const {
  auto Payload = emit(M, getPayloadKind(), Opts, Times);
  if (!Payload)
    return Payload.takeError();
  Artifact A;
  A.Kind = getKind();
  A.Arch = std::string(getArch());
  A.Payload = std::move(*Payload);
  A.Kernels = describeKernels(M);
  A.Constants = describeConstants(M);
  if (llvm::Error E = CodegenTarget::get(*this).describeCode(M, A.Payload, A.Kernels))
    return std::move(E);
  return A;
}

std::vector<ConstantInfo> Target::describeConstants(const Module &M) const {
  std::vector<ConstantInfo> Constants;
  for (const auto &D : M.Decls)
    if (const auto *C = llvm::dyn_cast<ConstDecl>(D.get()); C && C->isConstantMemory())
      Constants.push_back({C->Var.Name, CodegenTarget::get(*this).getConstantSymbol(C->Var.Name),
                           C->Var.Ty, C->Var.Ty.getSizeInBytes()});
  return Constants;
}

// What a launch knows of a pointer to a struct or a vector type is what
// its buffer holds: a vector's lanes (`ptr<f32x4>` takes an f32 buffer, 4
// values per element) or a struct's bytes (`ptr<Node>` takes a u8 buffer,
// or any with GJ_ANY); the module's aggregates do not outlive it, and the
// launch metadata (and the cache) hold only scalars and pointers to them.
static Type launchType(const Type &T) {
  const Aggregate *A = T.getAggregate();
  if (!T.isPointer() || !A)
    return T;
  ScalarKind Elem = A->IsVector ? A->Fields[0].Ty.getScalarKind() : ScalarKind::U8;
  return Type::getPointer(Elem, T.getAddrSpace());
}

std::vector<KernelInfo> Target::describeKernels(const Module &M) const {
  std::vector<KernelInfo> Kernels;
  for (const FunctionDecl *F : M.getKernels()) {
    KernelInfo K;
    K.Name = F->Name;
    K.Cooperative = F->UsesGridSync;
    K.Prints = F->UsesPrint;
    for (const auto &P : F->Params) {
      auto Size = static_cast<uint32_t>(P->Ty.getSizeInBytes());
      K.Params.push_back({P->Name, launchType(P->Ty), Size, Size});
    }
    SharedLayout Shared = layoutShared(*F);
    K.StaticSharedBytes = Shared.StaticBytes;
    K.UsesDynamicShared = Shared.UsesDynamic;
    Kernels.push_back(std::move(K));
  }
  return Kernels;
}
