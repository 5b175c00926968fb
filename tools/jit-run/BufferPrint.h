//===- BufferPrint.h - jit-run's --print: slices and summaries --*- C++ -*-===//
//
// Part of gridjit. What `--print SPEC` means (docs/jit-run.md, PRINTING
// BUFFERS): a whole buffer, one element or a Python-like slice of it, each
// either printed element by element or summarised (count, NaNs, min, max,
// mean).
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_TOOLS_JITRUN_BUFFERPRINT_H
#define GRIDJIT_TOOLS_JITRUN_BUFFERPRINT_H

#include "KernelArgs.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <optional>
#include <string>

namespace jitrun {

/// What one `--print SPEC` asks for: `NAME`, `NAME[INDEX]` or
/// `NAME[START:STOP[:STEP]]`, each optionally followed by `:summary`.
struct PrintSpec {
  std::string Label; ///< SPEC without `:summary`, as given: what the output names
  std::string Name;  ///< the buffer parameter
  /// `NAME[INDEX]`: one element; a negative index counts from the end.
  std::optional<int64_t> Index;
  /// `NAME[START:STOP:STEP]`: any part may be empty (Python's defaults).
  bool IsSlice = false;
  std::optional<int64_t> Start, Stop, Step;
  bool Summary = false; ///< `:summary`: the summary instead of the elements
};

/// Parses \p Spec. Errors (UsageError): a SPEC of another form, a part
/// that is not an integer, a zero step.
llvm::Expected<PrintSpec> parsePrintSpec(llvm::StringRef Spec);

/// The elements a PrintSpec selects from a buffer: Length of them, the
/// first at First, each Step after the one before.
struct Selection {
  int64_t First = 0, Step = 1;
  uint64_t Length = 0;
  bool Single = false; ///< `NAME[INDEX]`: one element, printed as a value
};

/// The elements \p P selects from a buffer of \p Count elements, by
/// Python's rules: a slice's bounds are clamped to the buffer (so a slice
/// may be empty); an index outside it is a UsageError.
llvm::Expected<Selection> selectElements(const PrintSpec &P, uint64_t Count);

/// Writes what \p P asks of buffer \p A, whose elements \p S selects, and
/// a newline: `LABEL = [v0, v1, ...]`, `LABEL = v` for one element, or
/// `LABEL: count N, nan K, min A, max B, mean M` for a summary (nan for
/// float types only; min, max and mean when there is a non-NaN element;
/// min and max printed as the elements are, mean as a double, f32's with
/// %.9g).
void printSelection(llvm::raw_ostream &OS, const ArgValue &A, const PrintSpec &P,
                    const Selection &S);

} // namespace jitrun

#endif // GRIDJIT_TOOLS_JITRUN_BUFFERPRINT_H
