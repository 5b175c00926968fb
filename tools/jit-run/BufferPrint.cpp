//===- BufferPrint.cpp - jit-run's --print: slices and summaries ----------===//
//
// Part of gridjit. See BufferPrint.h and docs/jit-run.md.
//
//===----------------------------------------------------------------------===//

#include "BufferPrint.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace jitrun;
using gridjit::ScalarKind;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

Expected<PrintSpec> jitrun::parsePrintSpec(StringRef Spec) {
  PrintSpec P;
  auto Bad = [&](const llvm::Twine &Why) { return usageError("--print " + Spec + ": " + Why); };
  StringRef S = Spec.trim();
  P.Summary = S.consume_back(":summary");
  S = S.rtrim();
  P.Label = S.str();
  size_t Open = S.find('[');
  StringRef Name = S.take_front(Open).rtrim();
  if (Name.empty() || !llvm::all_of(Name, [](char C) { return llvm::isAlnum(C) || C == '_'; }))
    return Bad("expected NAME, NAME[INDEX] or NAME[START:STOP:STEP], each optionally followed "
               "by :summary");
  P.Name = Name.str();
  if (Open == StringRef::npos)
    return std::move(P);
  StringRef Inner = S.drop_front(Open + 1);
  if (!Inner.consume_back("]"))
    return Bad("expected ']' at the end");
  llvm::SmallVector<StringRef, 3> Parts;
  Inner.split(Parts, ':');
  if (Parts.size() > 3)
    return Bad("a slice is START:STOP or START:STOP:STEP");
  // Each part: empty (the default) or a decimal integer, maybe negative.
  auto ReadInt = [&](StringRef T, std::optional<int64_t> &Out) -> Error {
    T = T.trim();
    int64_t V;
    if (T.empty())
      return Error::success();
    if (T.getAsInteger(10, V))
      return Bad("'" + T + "' is not an integer");
    Out = V;
    return Error::success();
  };
  if (Parts.size() == 1) {
    if (Parts[0].trim().empty())
      return Bad("expected an index or a slice between '[' and ']'");
    if (Error E = ReadInt(Parts[0], P.Index))
      return std::move(E);
    return std::move(P);
  }
  P.IsSlice = true;
  if (Error E = ReadInt(Parts[0], P.Start))
    return std::move(E);
  if (Error E = ReadInt(Parts[1], P.Stop))
    return std::move(E);
  if (Parts.size() == 3)
    if (Error E = ReadInt(Parts[2], P.Step))
      return std::move(E);
  if (P.Step && *P.Step == 0)
    return Bad("the step must not be zero");
  return std::move(P);
}

Expected<Selection> jitrun::selectElements(const PrintSpec &P, uint64_t Count) {
  Selection S;
  // A buffer holds at most 16 GiB (MaxBufferArgBytes): N and every index
  // below fit in int64_t with room to spare.
  int64_t N = int64_t(Count);
  if (P.Index) {
    int64_t I = *P.Index < 0 ? *P.Index + N : *P.Index;
    if (I < 0 || I >= N)
      return usageError("--print " + P.Label + ": index " + llvm::Twine(*P.Index) +
                        " is out of range: buffer '" + P.Name + "' has " + llvm::Twine(Count) +
                        (Count == 1 ? " element" : " elements"));
    S.First = I;
    S.Length = 1;
    S.Single = true;
    return S;
  }
  if (!P.IsSlice) {
    S.Length = Count;
    return S;
  }
  // Python's slice.indices(): a negative bound counts from the end; then
  // bounds are clamped, to [0, N] going up and to [-1, N - 1] going down
  // (-1: before the first element).
  int64_t Step = P.Step.value_or(1);
  auto Bound = [&](std::optional<int64_t> V, int64_t Default, int64_t Lo, int64_t Hi) {
    if (!V)
      return Default;
    return std::clamp(*V < 0 ? *V + N : *V, Lo, Hi);
  };
  if (Step > 0) {
    int64_t Start = Bound(P.Start, 0, 0, N), Stop = Bound(P.Stop, N, 0, N);
    S.First = Start;
    S.Length = Stop > Start ? (uint64_t(Stop - Start) + uint64_t(Step) - 1) / uint64_t(Step) : 0;
  } else {
    int64_t Start = Bound(P.Start, N - 1, -1, N - 1), Stop = Bound(P.Stop, -1, -1, N - 1);
    uint64_t Down = uint64_t(-(Step + 1)) + 1; // |Step|, INT64_MIN included
    S.First = Start;
    S.Length = Start > Stop ? (uint64_t(Start - Stop) + Down - 1) / Down : 0;
  }
  S.Step = Step;
  return S;
}

namespace {

/// An element as a number that orders exactly: integers (bool as 0 or 1)
/// as themselves, floats as doubles.
struct Number {
  enum { Signed, Unsigned, Float } Kind;
  int64_t S = 0;
  uint64_t U = 0;
  double F = 0;

  bool isNaN() const { return Kind == Float && std::isnan(F); }
  long double value() const {
    return Kind == Signed ? (long double)S : Kind == Unsigned ? (long double)U : (long double)F;
  }
  bool operator<(const Number &O) const {
    return Kind == Signed ? S < O.S : Kind == Unsigned ? U < O.U : F < O.F;
  }
};

Number decode(const ArgValue &A, size_t I) {
  uint64_t Bits = getElementBits(A, I);
  ScalarKind K = A.kind();
  Number V{Number::Unsigned};
  if (gridjit::isFloatScalar(K)) {
    V.Kind = Number::Float;
    V.F = floatValue(K, Bits);
  } else if (gridjit::isSignedScalar(K)) {
    unsigned Shift = 64 - gridjit::scalarBits(K);
    V.Kind = Number::Signed;
    V.S = int64_t(Bits << Shift) >> Shift;
  } else {
    V.U = Bits;
  }
  return V;
}

/// The index in the buffer of the \p N-th selected element.
size_t elementAt(const Selection &S, uint64_t N) { return size_t(S.First + int64_t(N) * S.Step); }

/// `count N, nan K, min A, max B, mean M` of the elements \p S selects.
void printSummary(llvm::raw_ostream &OS, const ArgValue &A, const Selection &S) {
  ScalarKind K = A.kind();
  bool IsFloat = gridjit::isFloatScalar(K);
  uint64_t NaNs = 0, Numbers = 0;
  size_t MinAt = 0, MaxAt = 0;
  std::optional<Number> Min, Max;
  long double Sum = 0;
  for (uint64_t N = 0; N < S.Length; ++N) {
    size_t I = elementAt(S, N);
    Number V = decode(A, I);
    if (V.isNaN()) {
      ++NaNs;
      continue;
    }
    ++Numbers;
    Sum += V.value();
    if (!Min || V < *Min)
      Min = V, MinAt = I;
    if (!Max || *Max < V)
      Max = V, MaxAt = I;
  }
  OS << "count " << S.Length;
  if (IsFloat)
    OS << ", nan " << NaNs;
  if (!Numbers)
    return;
  OS << ", min ";
  writeElement(OS, A, MinAt);
  OS << ", max ";
  writeElement(OS, A, MaxAt);
  OS << ", mean ";
  // The mean of narrow floats is printed as an f32's; integers' as an f64's.
  writeFloat(OS, double(Sum / Numbers),
             IsFloat && K != ScalarKind::F64 ? ScalarKind::F32 : ScalarKind::F64);
}

} // namespace

void jitrun::printSelection(llvm::raw_ostream &OS, const ArgValue &A, const PrintSpec &P,
                            const Selection &S) {
  OS << P.Label;
  if (P.Summary) {
    OS << ": ";
    printSummary(OS, A, S);
  } else if (S.Single) {
    OS << " = ";
    writeElement(OS, A, size_t(S.First));
  } else {
    OS << " = [";
    for (uint64_t N = 0; N < S.Length; ++N) {
      if (N)
        OS << ", ";
      writeElement(OS, A, elementAt(S, N));
    }
    OS << ']';
  }
  OS << '\n';
}
