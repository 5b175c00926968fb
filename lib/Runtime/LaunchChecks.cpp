//===- LaunchChecks.cpp - Checks every runtime makes before a launch ------===//
//
// Part of gridjit. See gridjit/Runtime/LaunchChecks.h. The messages are
// part of jit-run's interface (test/Host pins them).
//
//===----------------------------------------------------------------------===//

#include "gridjit/Runtime/LaunchChecks.h"

#include "gridjit/Support/Limits.h"

using namespace gridjit;
using llvm::Error;

/// A configuration error (ErrorKind::Configuration).
static Error badConfig(const llvm::Twine &Msg) { return makeError(ErrorKind::Configuration, Msg); }

std::string gridjit::formatDim3(const Dim3 &D) {
  return "(" + std::to_string(D.X) + ", " + std::to_string(D.Y) + ", " + std::to_string(D.Z) + ")";
}

std::string gridjit::describeLaunch(const KernelInfo &K, const LaunchConfig &C) {
  return "kernel '" + K.Name + "' launched with grid " + formatDim3(C.Grid) + " and block " +
         formatDim3(C.Block);
}

llvm::Expected<const KernelInfo &> gridjit::findKernel(const LoadedModule &M,
                                                       llvm::StringRef Name) {
  if (const KernelInfo *K = M.getKernel(Name))
    return *K;
  std::string Known;
  for (const KernelInfo &K : M.getKernels())
    Known += (Known.empty() ? "" : ", ") + K.Name;
  return makeError(ErrorKind::NotFound, "no kernel '" + Name + "' in the loaded module (kernels: " +
                                            (Known.empty() ? std::string("none") : Known) + ")");
}

/// X * Y * Z in decimal, exact even where it does not fit in 64 bits
/// (Dim3::count() saturates): up to (2^32 - 1)^3.
static std::string exactCount(const Dim3 &D) {
  unsigned __int128 N = static_cast<unsigned __int128>(D.X) * D.Y * D.Z;
  std::string Digits;
  do {
    Digits.insert(Digits.begin(), char('0' + unsigned(N % 10)));
    N /= 10;
  } while (N);
  return Digits;
}

Error gridjit::checkLaunchConfig(const KernelInfo &K, const LaunchConfig &C) {
  // Made only for an error: a launch that passes pays for no formatting.
  auto Where = [&] { return describeLaunch(K, C); };
  if (!C.Grid.X || !C.Grid.Y || !C.Grid.Z)
    return badConfig(Where() + ": every grid dimension must be at least 1");
  if (!C.Block.X || !C.Block.Y || !C.Block.Z)
    return badConfig(Where() + ": every block dimension must be at least 1");
  // The same limits let the host target tell LLVM the ranges of the
  // launch dimensions (KernelEntry.cpp).
  using namespace limits;
  auto Dims = [](const uint32_t(&D)[3]) {
    return "(" + std::to_string(D[0]) + ", " + std::to_string(D[1]) + ", " + std::to_string(D[2]) +
           ")";
  };
  if (C.Block.count() > MaxThreadsPerBlock)
    return badConfig(Where() + ": a block of " + exactCount(C.Block) +
                     " threads exceeds the limit of " + std::to_string(MaxThreadsPerBlock) +
                     " threads per block");
  if (C.Block.X > MaxBlockDim[0] || C.Block.Y > MaxBlockDim[1] || C.Block.Z > MaxBlockDim[2])
    return badConfig(Where() + ": block dimensions are limited to " + Dims(MaxBlockDim));
  if (C.Grid.X > MaxGridDim[0] || C.Grid.Y > MaxGridDim[1] || C.Grid.Z > MaxGridDim[2])
    return badConfig(Where() + ": grid dimensions are limited to " + Dims(MaxGridDim));
  if (K.UsesDynamicShared && C.DynamicSharedBytes == 0)
    return badConfig(Where() +
                     ": the kernel declares dynamic shared memory ('shared NAME: [T];') but "
                     "the launch provides none (give its size in bytes, e.g. --shared)");
  if (!K.UsesDynamicShared && C.DynamicSharedBytes != 0)
    return badConfig(Where() + ": the launch provides " + std::to_string(C.DynamicSharedBytes) +
                     " bytes of dynamic shared memory but the kernel declares none");
  return Error::success();
}

static std::string signature(const KernelInfo &K) {
  std::string S;
  for (const KernelParamInfo &P : K.Params)
    S += (S.empty() ? "" : ", ") + P.Name + ": " + P.Ty.str();
  return S;
}

/// "an i32", "an f64", "a u8", "a bool": the type's spelling with its
/// article (i and f are read as letters: "an eye", "an eff").
static std::string withArticle(std::string_view Spelling) {
  bool Vowel = !Spelling.empty() && (Spelling[0] == 'i' || Spelling[0] == 'f');
  return (Vowel ? "an " : "a ") + std::string(Spelling);
}

std::string gridjit::describeArgument(const KernelInfo &K, size_t Index) {
  std::string S = "kernel '" + K.Name + "': argument " + std::to_string(Index + 1);
  if (Index < K.Params.size())
    S += " ('" + K.Params[Index].Name + ": " + K.Params[Index].Ty.str() + "')";
  return S;
}

Error gridjit::argumentError(const KernelInfo &K, size_t Index, const llvm::Twine &Problem,
                             ErrorKind Kind) {
  return makeError(Kind, describeArgument(K, Index) + " " + Problem);
}

Error gridjit::checkArgumentCount(const KernelInfo &K, uint64_t Given) {
  if (Given != K.Params.size())
    return makeError(ErrorKind::Argument,
                     "kernel '" + K.Name + "' takes " + std::to_string(K.Params.size()) +
                         " argument" + (K.Params.size() == 1 ? "" : "s") + " (" + signature(K) +
                         "), " + std::to_string(Given) + " given");
  return Error::success();
}

Error gridjit::checkArguments(const KernelInfo &K, llvm::ArrayRef<KernelArg> Args) {
  if (Error E = checkArgumentCount(K, Args.size()))
    return E;
  for (size_t I = 0; I < Args.size(); ++I) {
    const KernelParamInfo &P = K.Params[I];
    const KernelArg &A = Args[I];
    if (P.Ty.isPointer()) {
      if (!A.isPointer())
        return argumentError(
            K, I, "must be a pointer, but " + withArticle(scalarName(*A.getKind())) + " was given");
      if (A.getKind() && *A.getKind() != P.Ty.getScalarKind())
        return argumentError(K, I,
                             "must point to " + std::string(scalarName(P.Ty.getScalarKind())) +
                                 ", but a pointer to " + std::string(scalarName(*A.getKind())) +
                                 " was given");
      continue;
    }
    if (A.isPointer())
      return argumentError(K, I,
                           "must be " + withArticle(P.Ty.str()) + ", but a pointer was given");
    if (*A.getKind() != P.Ty.getScalarKind())
      return argumentError(K, I,
                           "must be " + withArticle(P.Ty.str()) + ", but " +
                               withArticle(scalarName(*A.getKind())) + " was given");
  }
  return Error::success();
}
