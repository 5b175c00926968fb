//===- KernelEntry.h - The entry function of a host kernel ------*- C++ -*-===//
//
// Part of gridjit (internal header). Emits, for each kernel, the entry
// function the host runtime calls (gridjit/Target/HostABI.h): its
// signature, the parameters and launch dimensions it reads once, the
// shared arrays it places, the loop over its blocks around the kernel's
// block-level code, the per-thread frame's alias metadata, the descriptor
// `__gridjit_desc_<kernel>`, and the reports (SyncSite constants, error
// returns) through which the entry tells the runtime what went wrong.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_TARGET_HOST_KERNELENTRY_H
#define GRIDJIT_LIB_TARGET_HOST_KERNELENTRY_H

#include "LoweringState.h"

namespace gridjit::host {

class KernelEntryEmitter : HostLoweringPart {
public:
  explicit KernelEntryEmitter(HostModuleLowering &L) : HostLoweringPart(L) {}

  /// Lowers kernel \p K: its entry function, with a fresh FunctionState,
  /// and its descriptor.
  llvm::Error lowerKernel(const FunctionDecl &K);
  /// Tells LLVM that the plumbing's frame accesses and every other memory
  /// access in \p F never alias, so that a value kept in the frame does
  /// not stop thread loops from being vectorised.
  void tagMemoryAccesses(llvm::Function &F);

  /// The address of field \p Offset of the entry's BlockContext.
  llvm::Value *ctxField(unsigned Offset);
  /// The SyncSite constant of the point at \p Loc (\p What: its spelling,
  /// e.g. "sync_threads()"), one per point: what the runtime's reports
  /// name.
  llvm::Constant *siteFor(SourceLoc Loc, llvm::StringRef What);
  /// A private constant C string \p S, for the sites.
  llvm::Constant *stringConstant(llvm::StringRef S);
  /// The text of \p Loc's line ("" for an invalid location).
  llvm::StringRef sourceLineOf(SourceLoc Loc) const;
  /// Stores the error report in the context and returns EntryError.
  void emitErrorReturn(llvm::Constant *Site, llvm::Value *Arrived, llvm::Value *Expected,
                       llvm::Value *Warp);

private:
  /// The alias scope list of the frame's private slots (made once).
  llvm::MDNode *PrivateScope = nullptr;

  /// The entry function's declaration (its signature and attributes).
  llvm::Expected<llvm::Function *> createEntry(const FunctionDecl &K);
  /// Loads the kernel's parameters from the argument array.
  void loadParameters(const FunctionDecl &K, llvm::Value *Args);
  /// Loads the launch dimensions and the block memory's bases from the
  /// context.
  void loadLaunchDimensions();
  /// Addresses the shared arrays (SharedLayout) in the entry block.
  llvm::Error placeSharedArrays(const FunctionDecl &K);
  /// The loop over blocks [first, end), with the kernel's body inside.
  llvm::Error emitBlockLoop(const FunctionDecl &K, llvm::Function &F);
  /// One block: the resumption of a cooperative kernel, the state words,
  /// the kernel's body.
  llvm::Error emitBlockBody(const FunctionDecl &K);
  /// The descriptor `__gridjit_desc_<kernel>` the runtime reads.
  void emitDescriptor(const FunctionDecl &K);
};

} // namespace gridjit::host

#endif // GRIDJIT_LIB_TARGET_HOST_KERNELENTRY_H
