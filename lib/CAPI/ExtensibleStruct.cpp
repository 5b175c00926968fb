//===- ExtensibleStruct.cpp - Structs of the C API that grow --------------===//
//
// Part of gridjit. See ExtensibleStruct.h.
//
//===----------------------------------------------------------------------===//

#include "ExtensibleStruct.h"

#include "gridjit/Support/Errors.h"

#include "llvm/ADT/Twine.h"

#include <algorithm>
#include <cstring>

using namespace gridjit;
using namespace gridjit::capi;

llvm::Error capi::checkStructSize(const StructLayout &L, size_t CallerSize, const char *SizeName) {
  // First, before any byte is read or written: the copies below walk the
  // caller's whole struct.
  if (CallerSize > MaxStructBytes)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(L.Name) + " has " + llvm::Twine(CallerSize) + " bytes (" +
                         SizeName + "), more than the limit of " + llvm::Twine(MaxStructBytes) +
                         " for any version of a struct of this API (set " + SizeName +
                         " to its sizeof)");
  if (CallerSize < L.Oldest)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(L.Name) + " has " + llvm::Twine(CallerSize) + " bytes (" +
                         SizeName + "), fewer than the " + llvm::Twine(L.Oldest) +
                         " of its first version (set " + SizeName + " to its sizeof)");
  if (CallerSize % 8 != 0)
    return makeError(ErrorKind::InvalidArgument,
                     llvm::Twine(L.Name) + " has " + llvm::Twine(CallerSize) + " bytes (" +
                         SizeName + "), not a multiple of 8 as every version's size is (set " +
                         SizeName + " to its sizeof)");
  return llvm::Error::success();
}

llvm::Error capi::copyStructIn(const StructLayout &L, const void *Src, size_t CallerSize,
                               const char *SizeName, void *Dst) {
  if (llvm::Error E = checkStructSize(L, CallerSize, SizeName))
    return E;
  const auto *Bytes = static_cast<const unsigned char *>(Src);
  for (size_t I = L.Known; I < CallerSize; ++I)
    if (Bytes[I] != 0)
      return makeError(ErrorKind::InvalidArgument,
                       llvm::Twine(L.Name) + " has " + llvm::Twine(CallerSize) + " bytes (" +
                           SizeName + ") and this library knows " + llvm::Twine(L.Known) +
                           ": byte " + llvm::Twine(I) +
                           " is not zero, a field this library does not have");
  std::memcpy(Dst, Src, std::min(CallerSize, L.Known));
  return llvm::Error::success();
}

llvm::Error capi::copyStructOut(const StructLayout &L, const void *Src, void *Dst,
                                size_t CallerSize, const char *SizeName) {
  if (llvm::Error E = checkStructSize(L, CallerSize, SizeName))
    return E;
  size_t Common = std::min(CallerSize, L.Size);
  std::memcpy(Dst, Src, Common);
  std::memset(static_cast<unsigned char *>(Dst) + Common, 0, CallerSize - Common);
  return llvm::Error::success();
}
