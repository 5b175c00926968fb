//===- SharedForms.h - Shared-array indices as linear forms of the thread -*- C++ -*-===//
//
// Part of gridjit (internal header of the host target). What checked code
// needs to prove, before the launch, that a static shared array's
// accesses can neither race nor read uninitialised memory
// (CheckElision.cpp, "Proven shared arrays"; docs/Check.md).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_SHAREDFORMS_H
#define GRIDJIT_LIB_TARGET_HOST_SHAREDFORMS_H

#include <cstdint>
#include <map>
#include <optional>
#include <utility>
#include <vector>

namespace llvm {
class LLVMContext;
class MDNode;
} // namespace llvm

namespace gridjit {
class FunctionDecl;
class Module;
struct VarDecl;
namespace host {

/// An index as `Cx * thread_idx.x + Cy * thread_idx.y + Cz * thread_idx.z
/// + Sym + r` with r in [Lo, Hi]: C are constants >= 0, Sym (optional) a
/// value that no thread sees change between two barriers (a kernel
/// parameter, or the index of a loop whose body ends with sync_threads()
/// and does not change it), r made of constants and the indices of loops
/// with constant bounds.
struct SharedForm {
  int64_t C[3] = {0, 0, 0};
  int64_t Lo = 0, Hi = 0;
  unsigned Sym = 0; ///< 1 + an index into SharedForms::Symbols; 0: none
  /// The access is inside `if T < Guard` with T exactly its own thread
  /// part (no Sym, r = 0); 0: none.
  unsigned Guard = 0;
  /// Every thread of the block stored the array at `CoverC . thread_idx`,
  /// then passed a sync_threads(), before this access (in the same
  /// iteration of every loop around both).
  bool Covered = false;
  int64_t CoverC[3] = {0, 0, 0};

  bool pureThread() const { return !Sym && Lo == 0 && Hi == 0; }
  bool sameThreadPart(const SharedForm &O) const {
    return C[0] == O.C[0] && C[1] == O.C[1] && C[2] == O.C[2];
  }
};

/// \p F as the metadata the lowering puts on a checked access of a
/// shared array (SharedFormMD), and back (none for any other node).
llvm::MDNode *formMetadata(llvm::LLVMContext &Ctx, const SharedForm &F);
std::optional<SharedForm> formFromMetadata(const llvm::MDNode *MD);

struct SharedForms {
  /// By where the `t[i]` expression starts (line, column): the form of
  /// every access of the kernel's static shared arrays whose every use
  /// is such an access with an index that has a form, and its array.
  std::map<std::pair<unsigned, unsigned>, std::pair<const VarDecl *, SharedForm>> ByLoc;
  std::vector<const VarDecl *> Symbols;
};

/// The forms of kernel \p Kernel of verified module \p M.
SharedForms sharedForms(const Module &M, const FunctionDecl &Kernel);

} // namespace host
} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_HOST_SHAREDFORMS_H
