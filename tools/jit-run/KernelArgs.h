//===- KernelArgs.h - jit-run's --arg specs, buffers and .npy files -*- C++ -*-===//
//
// Part of gridjit. What `--arg NAME=SPEC` means for one kernel parameter
// (docs/jit-run.md): a scalar literal, or a buffer made from a SPEC
// (zeros, fill, iota, rand, a list, a NumPy file); and how buffers are
// printed (`--print`) and written (`--out`).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TOOLS_JITRUN_KERNELARGS_H
#define GRIDJIT_TOOLS_JITRUN_KERNELARGS_H

#include "Errors.h"

#include "gridjit/Runtime/Runtime.h"
#include "gridjit/Target/Target.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>
#include <vector>

namespace jitrun {

/// The value of one kernel argument.
struct ArgValue {
  gridjit::KernelParamInfo Param;
  /// Scalars: the value's bytes. Buffers: the elements (8-byte aligned),
  /// after Pad zero words and followed by Pad more. A GPU buffer is a copy
  /// of all of it, so that a kernel that strays a few elements out of its
  /// buffer stays in it; a host buffer, of the elements only: it ends at
  /// the runtime's guard region, and a stray write faults.
  std::vector<uint64_t> Storage;
  static constexpr size_t Pad = 8;
  size_t Count = 0; ///< buffer elements
  /// `--arg q=@x+K` (parseAlias): q has no buffer of its own; the kernel
  /// gets the address of element K of the buffer of argument *AliasOf,
  /// and Storage holds a copy of that buffer from element K on (for
  /// --print and --out), refreshed by refreshAlias.
  std::optional<size_t> AliasOf;
  uint64_t AliasOffset = 0;
  /// The option that gave it, for messages: "--arg" or "--constant".
  std::string Option = "--arg";
  bool isPointer() const { return Param.Ty.isPointer(); }
  gridjit::ScalarKind kind() const { return Param.Ty.getScalarKind(); }
  void *data() { return Storage.data() + (isPointer() ? Pad : 0); }
  const void *data() const { return Storage.data() + (isPointer() ? Pad : 0); }
  gridjit::KernelArg toKernelArg() const;
};

/// Parses \p Spec for \p P. Errors: UsageError for bad syntax or a value
/// out of range; a plain error for .npy files that cannot be used.
llvm::Expected<ArgValue> parseArg(const gridjit::KernelParamInfo &P, llvm::StringRef Spec,
                                  llvm::StringRef Option = "--arg");

/// `--constant NAME=SPEC` for constant memory \p C: `v0,v1,...` (or one
/// value), or any buffer SPEC of parseArg (`[...]`, `@FILE.npy`, `fill:N:V`,
/// ...), with exactly as many elements as \p C has (UsageError otherwise).
/// The elements are in data(), Count of them.
llvm::Expected<ArgValue> parseConstant(const gridjit::ConstantInfo &C, llvm::StringRef Spec);

/// `--arg NAME=@OTHER[+K]`, where OTHER is another buffer parameter of
/// \p K: parameter \p P gets the address of element K of OTHER's buffer
/// (one buffer passed to two parameters, or a pointer into it). Returns
/// the alias (AliasOf and AliasOffset set, no elements yet: see
/// refreshAlias) or std::nullopt when \p Spec is no such form (`@FILE.npy`
/// then). Errors (UsageError): OTHER is a scalar, is P itself, or has
/// another element type; K is not a count.
llvm::Expected<std::optional<ArgValue>>
parseAlias(const gridjit::KernelInfo &K, const gridjit::KernelParamInfo &P, llvm::StringRef Spec);

/// Gives alias \p A the elements of \p Target from A.AliasOffset on.
/// Error (UsageError): the offset is past the end of \p Target.
llvm::Error refreshAlias(ArgValue &A, const ArgValue &Target);

/// One form of a buffer SPEC (`--arg NAME=SPEC` for a ptr<T> parameter):
/// its syntax and what it makes. The one list that --help, the messages
/// and docs/jit-run.md's table show.
struct BufferSpecForm {
  const char *Syntax;  ///< "zeros:N"
  const char *Meaning; ///< "N zeros"
};
/// Every form parseArg reads for a buffer, in the order --help lists them.
llvm::ArrayRef<BufferSpecForm> getBufferSpecForms();
/// The forms' syntax as a list: "zeros:N, fill:N:V, ... or @FILE.npy".
std::string listBufferSpecForms();

/// `NAME = [v0, v1, ...]` with every element, each as writeElement writes it.
std::string formatBuffer(const ArgValue &A);

/// Writes element \p I of buffer \p A: integers in decimal, bool as
/// true/false, floats as writeFloat.
void writeElement(llvm::raw_ostream &OS, const ArgValue &A, size_t I);

/// Writes \p V as a value of float type \p K: f32 with %.9g, f64 with %.17g
/// (enough digits to read back the same value), NaN as "nan".
void writeFloat(llvm::raw_ostream &OS, double V, gridjit::ScalarKind K);

/// The bits of element \p I of buffer \p A (little-endian, zero-extended).
uint64_t getElementBits(const ArgValue &A, size_t I);
/// The value of \p Bits, an element of the float kind \p K (f16, bf16,
/// f32 or f64).
double floatValue(gridjit::ScalarKind K, uint64_t Bits);

/// Writes a buffer as a NumPy .npy file (format 1.0, little-endian).
llvm::Error writeNpy(llvm::StringRef Path, const ArgValue &A);

/// Fills buffer \p A from \p Data, the bytes of the .npy file \p Path (named
/// in errors): the header must be a well-formed format 1-3 header whose
/// dtype matches \p A's element type and whose shape matches the data size
/// exactly. `--arg NAME=@FILE.npy` reads the file and calls this.
llvm::Error parseNpy(ArgValue &A, llvm::StringRef Path, llvm::StringRef Data);

/// The largest .npy file `--arg NAME=@FILE.npy` reads: 16 GiB.
inline constexpr uint64_t MaxNpyBytes = uint64_t(16) << 30;

/// The largest buffer a generated SPEC makes (zeros:N, fill:N:V, iota:N,
/// rand:N): N elements of the parameter's type in at most 16 GiB, as a
/// .npy file's.
inline constexpr uint64_t MaxBufferArgBytes = MaxNpyBytes;

/// The largest source jit-run reads (a file or standard input): 64 MiB.
inline constexpr uint64_t MaxSourceBytes = uint64_t(64) << 20;

/// Reads all of \p Path ("-": standard input), failing once it is more than
/// \p Limit bytes, so that /dev/zero or an endless pipe cannot exhaust memory;
/// with \p RegularOnly, anything but a regular file is an error.
llvm::Expected<std::string> readFileBounded(llvm::StringRef Path, uint64_t Limit,
                                            bool RegularOnly = false);

} // namespace jitrun

#endif // GRIDJIT_TOOLS_JITRUN_KERNELARGS_H
