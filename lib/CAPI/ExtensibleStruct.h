//===- ExtensibleStruct.h - Structs of the C API that grow ------*- C++ -*-===//
//
// Part of gridjit (internal). The one implementation of the rule by which
// the C API's structs grow (docs/CAPI.md, "Versions and growth"), Linux's
// for its extensible system-call structs (copy_struct_from_user, clone3,
// openat2): the caller says how many bytes its struct has (struct_size, or
// gj_launch's arg_size); a smaller struct is read as far as it goes and the
// fields it lacks keep their defaults; a larger one is accepted when every
// byte beyond what this library knows is zero; the library never writes
// beyond the caller's size. Every struct of the C API is read and written
// through these functions; unittests/CAPI/ExtensibleStructTest.cpp checks
// them at the boundary sizes.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_LIB_CAPI_EXTENSIBLESTRUCT_H
#define GRIDJIT_LIB_CAPI_EXTENSIBLESTRUCT_H

#include "llvm/Support/Error.h"

#include <cstddef>

namespace gridjit::capi {

/// What this library knows of one struct of the C API.
struct StructLayout {
  /// The struct's name in messages ("gj_runtime_options").
  const char *Name;
  /// Its size in the API version that introduced it: the smallest size a
  /// caller may give.
  size_t Oldest;
  /// The bytes this library reads: the end of its last field, less any
  /// reserved field at the end (which must be zero, like an unknown tail).
  size_t Known;
  /// sizeof in this library (Known and the reserved fields after it).
  size_t Size;
};

/// The most bytes a caller's struct may have, as clone3 limits its own to
/// a page: far more than any version of a struct of this API will have,
/// and a bound on the bytes copyStructIn reads and copyStructOut writes
/// (a struct_size of SIZE_MAX is refused, not walked).
inline constexpr size_t MaxStructBytes = 4096;

/// Checks a caller's size \p CallerSize of \p L (named \p SizeName in
/// messages: "struct_size", "arg_size"): at most MaxStructBytes, at least
/// L.Oldest and a multiple of 8 (the size of every version of every
/// struct: they hold 8-byte fields and no tail padding). Errors of kind
/// InvalidArgument.
llvm::Error checkStructSize(const StructLayout &L, size_t CallerSize, const char *SizeName);

/// Reads the caller's struct of \p CallerSize bytes at \p Src into \p Dst
/// (L.Size bytes that hold the defaults): its first min(CallerSize,
/// L.Known) bytes are copied; its bytes from L.Known on must all be zero,
/// else the error names the first that is not ("gj_runtime_options has 64
/// bytes (struct_size) and this library knows 56: byte 60 is not zero, a
/// field this library does not have"). \p Dst is unchanged on error.
llvm::Error copyStructIn(const StructLayout &L, const void *Src, size_t CallerSize,
                         const char *SizeName, void *Dst);

/// Writes this library's struct \p Src (L.Size bytes) into the caller's
/// \p CallerSize bytes at \p Dst: the first min(CallerSize, L.Size) bytes,
/// then zeros up to CallerSize (the fields of a newer version that this
/// library does not know). Writes nothing on error (checkStructSize).
llvm::Error copyStructOut(const StructLayout &L, const void *Src, void *Dst, size_t CallerSize,
                          const char *SizeName);

} // namespace gridjit::capi

#endif // GRIDJIT_LIB_CAPI_EXTENSIBLESTRUCT_H
