//===- SharedLayout.h - Where a kernel's shared arrays live -----*- C++ -*-===//
//
// Part of gridjit (internal header). The layout of a kernel's shared memory,
// computed in one place for what the launch metadata says
// (KernelInfo::StaticSharedBytes, Target.cpp) and for what the host
// lowering lays out (the offsets it addresses and the descriptor the host
// runtime reads, lib/Target/Host/KernelEntry.cpp), so the two never differ.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_SHAREDLAYOUT_H
#define GRIDJIT_LIB_TARGET_SHAREDLAYOUT_H

#include "gridjit/IR/AST.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstdint>
#include <vector>

namespace gridjit {

/// One block's shared memory: the static `shared` arrays and scalars at
/// offsets aligned to SharedLayout::Align, in declaration (source) order,
/// then the dynamic arrays `shared NAME: [T];`, whose size the launch gives.
struct SharedLayout {
  /// The alignment of every array (also what NVPTX gives each one).
  static constexpr uint64_t Align = 16;
  struct Entry {
    const VarDecl *Var;
    uint64_t Offset; ///< bytes from the start of the block's shared memory
  };
  /// Every `shared` declaration of the kernel (arrays and scalars) and of
  /// the device functions it calls, in the order layoutShared visits them;
  /// the dynamic
  /// arrays' offset is StaticBytes (every dynamic array of a kernel names
  /// the same memory, whatever its element type).
  std::vector<Entry> Arrays;
  /// Bytes of the static arrays as laid out, rounded up to Align: where the
  /// dynamic array starts. KernelInfo::StaticSharedBytes and the host
  /// descriptor's StaticSharedBytes are this value.
  uint64_t StaticBytes = 0;
  /// Declares the dynamic shared array.
  bool UsesDynamic = false;
};

/// True for `shared NAME: [T];`, the unsized dynamic array (a shared scalar
/// `shared NAME: T;` is static: one element, laid out as the arrays are).
inline bool isDynamicShared(const VarDecl &V) {
  return V.Ty.isArray() && V.Ty.getArrayCount() == 0;
}

/// Lays out the `shared` declarations of kernel \p K: those in its body,
/// then those of every device function it calls, directly or through
/// others, once per function (a function's static shared memory, as
/// CUDA's `__shared__` in a `__device__` function, is in the layout of
/// each kernel that reaches it, at an offset that depends on the kernel).
SharedLayout layoutShared(const FunctionDecl &K);

/// Calls \p OnShared on every `shared` declaration in the body of \p F
/// itself (not of the functions it calls), in source order.
void forEachOwnShared(const FunctionDecl &F, llvm::function_ref<void(const VarDecl &)> OnShared);

} // namespace gridjit

#endif // GRIDJIT_LIB_TARGET_SHAREDLAYOUT_H
