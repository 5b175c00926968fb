//===- TargetByName.cpp - Make a target from its name ---------------------===//
//
// Part of gridjit. The one place that knows every target: its own library
// (gridjitTargets) above the NVPTX and host targets, so that neither of
// them, nor the Target core, depends on the other.
//
//===----------------------------------------------------------------------===//

#include "gridjit/Target/Target.h"

#include "llvm/Support/ErrorHandling.h"

using namespace gridjit;

llvm::Expected<std::unique_ptr<Target>> gridjit::createTargetByName(std::string_view Name,
                                                                    std::string_view Arch) {
  std::optional<TargetKind> K = parseTargetName(Name);
  if (!K)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "unknown target '%s' (known: host, nvptx)",
                                   std::string(Name).c_str());
  switch (*K) {
  case TargetKind::Host: {
    HostTargetOptions O;
    O.CPU = std::string(Arch);
    return createHostTarget(O);
  }
  case TargetKind::NVPTX: {
    NVPTXTargetOptions O;
    if (!Arch.empty())
      O.Arch = std::string(Arch);
    return createNVPTXTarget(O);
  }
  }
  llvm_unreachable("a TargetKind without a constructor");
}
