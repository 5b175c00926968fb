//===- KernelArgs.cpp - jit-run's --arg specs, buffers and .npy files -----===//
//
// Part of gridjit. See KernelArgs.h and docs/jit-run.md.
//
//===----------------------------------------------------------------------===//

#include "KernelArgs.h"

#include "gridjit/Support/HalfFloat.h"

#include "llvm/ADT/ScopeExit.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cerrno>
#include <cmath>
#include <cstring>

using namespace jitrun;
using gridjit::ScalarKind;
using llvm::Error;
using llvm::Expected;
using llvm::StringRef;

gridjit::KernelArg ArgValue::toKernelArg() const {
  using gridjit::KernelArg;
  if (isPointer())
    return KernelArg::pointer(const_cast<void *>(data()));
  uint64_t Bits = Storage.empty() ? 0 : Storage[0];
  double D;
  float F;
  switch (kind()) {
  case ScalarKind::Bool:
    return KernelArg::boolean(Bits & 1);
  case ScalarKind::I8:
    return KernelArg::i8(int8_t(Bits));
  case ScalarKind::I16:
    return KernelArg::i16(int16_t(Bits));
  case ScalarKind::I32:
    return KernelArg::i32(int32_t(Bits));
  case ScalarKind::I64:
    return KernelArg::i64(int64_t(Bits));
  case ScalarKind::U8:
    return KernelArg::u8(uint8_t(Bits));
  case ScalarKind::U16:
    return KernelArg::u16(uint16_t(Bits));
  case ScalarKind::U32:
    return KernelArg::u32(uint32_t(Bits));
  case ScalarKind::U64:
    return KernelArg::u64(Bits);
  case ScalarKind::F32:
    std::memcpy(&F, &Bits, 4);
    return KernelArg::f32(F);
  case ScalarKind::F64:
    std::memcpy(&D, &Bits, 8);
    return KernelArg::f64(D);
  case ScalarKind::F16:
  case ScalarKind::BF16:
    return KernelArg::halfBits(kind(), uint16_t(Bits));
  }
  return KernelArg::u64(Bits);
}

//===----------------------------------------------------------------------===//
// Literals
//===----------------------------------------------------------------------===//

/// The bits of the number \p V converted to kind \p K (as `V as T`).
static uint64_t fromDouble(ScalarKind K, double V) {
  uint64_t Bits = 0;
  if (K == ScalarKind::F32) {
    float F = float(V);
    std::memcpy(&Bits, &F, 4);
  } else if (K == ScalarKind::F16) {
    Bits = gridjit::f16FromDouble(V);
  } else if (K == ScalarKind::BF16) {
    Bits = gridjit::bf16FromDouble(V);
  } else if (K == ScalarKind::F64) {
    std::memcpy(&Bits, &V, 8);
  } else if (K == ScalarKind::Bool) {
    Bits = V != 0;
  } else if (gridjit::isSignedScalar(K)) {
    Bits = uint64_t(int64_t(V));
  } else {
    Bits = uint64_t(V);
  }
  return Bits;
}

double jitrun::floatValue(ScalarKind K, uint64_t Bits) {
  switch (K) {
  case ScalarKind::F16:
    return gridjit::f16ToDouble(uint16_t(Bits));
  case ScalarKind::BF16:
    return gridjit::bf16ToDouble(uint16_t(Bits));
  case ScalarKind::F32: {
    float F;
    std::memcpy(&F, &Bits, 4);
    return F;
  }
  default: {
    double D;
    std::memcpy(&D, &Bits, 8);
    return D;
  }
  }
}

/// Parses a literal of scalar type \p K into its little-endian bytes.
static Expected<uint64_t> parseLiteral(ScalarKind K, StringRef Text, const llvm::Twine &Where) {
  StringRef T = Text.trim();
  auto Bad = [&](const llvm::Twine &Why) {
    return usageError(Where + ": '" + T + "' is not " + Why);
  };
  if (K == ScalarKind::Bool) {
    if (T == "true" || T == "1")
      return 1;
    if (T == "false" || T == "0")
      return 0;
    return Bad("a bool (true, false, 1 or 0)");
  }
  if (gridjit::isFloatScalar(K)) {
    std::string S = T.str();
    char *End = nullptr;
    errno = 0;
    double D = S.empty() ? 0 : std::strtod(S.c_str(), &End);
    if (S.empty() || *End != '\0')
      return Bad(llvm::Twine("a number of type ") + gridjit::scalarName(K).data());
    // Like integers, a finite number too large for the type is an error, not
    // inf; inf and nan are accepted only when spelled so (inf, -inf, nan).
    StringRef Spelled = T.ltrim("+-");
    bool NonFinite =
        Spelled.starts_with_insensitive("inf") || Spelled.starts_with_insensitive("nan");
    uint64_t Bits = fromDouble(K, D);
    if (!NonFinite && std::isinf(floatValue(K, Bits)))
      return usageError(Where + ": " + T + " does not fit in " + gridjit::scalarName(K).data());
    return Bits;
  }
  bool Neg = T.consume_front("-");
  uint64_t Mag;
  bool Failed = T.starts_with_insensitive("0x") ? T.drop_front(2).getAsInteger(16, Mag)
                                                : T.getAsInteger(10, Mag);
  std::string TypeName(gridjit::scalarName(K));
  if (Failed || T.empty())
    return Bad("an integer of type " + TypeName);
  unsigned Bits = gridjit::scalarBits(K);
  if (gridjit::isSignedScalar(K)) {
    uint64_t Limit = uint64_t(1) << (Bits - 1); // |MIN|
    if ((Neg && Mag > Limit) || (!Neg && Mag > Limit - 1))
      return usageError(Where + ": " + (Neg ? "-" : "") + T + " does not fit in " + TypeName);
  } else {
    if (Neg && Mag != 0)
      return usageError(Where + ": -" + T + " does not fit in " + TypeName);
    if (Bits < 64 && Mag >> Bits)
      return usageError(Where + ": " + T + " does not fit in " + TypeName);
  }
  uint64_t V = Neg ? 0 - Mag : Mag;
  if (Bits < 64)
    V &= (uint64_t(1) << Bits) - 1;
  return V;
}

//===----------------------------------------------------------------------===//
// Buffers
//===----------------------------------------------------------------------===//

static void setElem(ArgValue &A, size_t I, uint64_t Bits) {
  unsigned Size = gridjit::scalarBytes(A.kind());
  std::memcpy(reinterpret_cast<char *>(A.data()) + I * Size, &Bits, Size);
}

static uint64_t getElem(const ArgValue &A, size_t I) {
  uint64_t Bits = 0;
  unsigned Size = gridjit::scalarBytes(A.kind());
  std::memcpy(&Bits, reinterpret_cast<const char *>(A.data()) + I * Size, Size);
  return Bits;
}

static void resize(ArgValue &A, size_t Count) {
  A.Count = Count;
  size_t Bytes = Count * gridjit::scalarBytes(A.kind());
  A.Storage.assign((Bytes + 7) / 8 + 2 * ArgValue::Pad, 0);
}

/// The element count N of a generated buffer of \p K: its bytes, N times
/// the element's size, checked (without overflow) against
/// MaxBufferArgBytes before anything is allocated.
static Expected<size_t> parseCount(StringRef T, ScalarKind K, const llvm::Twine &Where) {
  StringRef Digits = T.trim();
  uint64_t N, Bytes;
  unsigned Size = gridjit::scalarBytes(K);
  auto TooMany = [&](const llvm::Twine &Total) {
    return usageError(Where + ": " + Digits + " elements of " + gridjit::scalarName(K).data() +
                      " need " + Total + " bytes; the limit is " + llvm::Twine(MaxBufferArgBytes) +
                      " (16 GiB)");
  };
  if (Digits.getAsInteger(10, N)) {
    // Digits alone that do not fit in 64 bits: a count, far too large.
    if (!Digits.empty() && llvm::all_of(Digits, llvm::isDigit))
      return TooMany("more than 2^64");
    return usageError(Where + ": '" + T + "' is not an element count");
  }
  if (__builtin_mul_overflow(N, uint64_t(Size), &Bytes))
    return TooMany("more than 2^64");
  if (Bytes > MaxBufferArgBytes)
    return TooMany(llvm::Twine(Bytes));
  return N;
}

/// splitmix64: a small, well-mixed generator, so that `rand:N:SEED` gives
/// the same data on every machine.
static uint64_t splitmix64(uint64_t &State) {
  uint64_t Z = (State += 0x9e3779b97f4a7c15ULL);
  Z = (Z ^ (Z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  Z = (Z ^ (Z >> 27)) * 0x94d049bb133111ebULL;
  return Z ^ (Z >> 31);
}

static const char *npyDescr(ScalarKind K) {
  switch (K) {
  case ScalarKind::Bool:
    return "|b1";
  case ScalarKind::I8:
    return "|i1";
  case ScalarKind::U8:
    return "|u1";
  case ScalarKind::I16:
    return "<i2";
  case ScalarKind::U16:
    return "<u2";
  case ScalarKind::I32:
    return "<i4";
  case ScalarKind::U32:
    return "<u4";
  case ScalarKind::I64:
    return "<i8";
  case ScalarKind::U64:
    return "<u8";
  case ScalarKind::F32:
    return "<f4";
  case ScalarKind::F64:
    return "<f8";
  case ScalarKind::F16:
    return "<f2";
  case ScalarKind::BF16:
    return "<u2"; // NumPy has no bfloat16: the bits, as torch's .view(torch.uint16)
  }
  return "";
}

/// An error about the .npy file \p Path given for \p A.
static Error npyError(const ArgValue &A, StringRef Path, const llvm::Twine &Why) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                 A.Option + " " + A.Param.Name + "=@" + Path + ": " + Why);
}

Expected<std::string> jitrun::readFileBounded(StringRef Path, uint64_t Limit, bool RegularOnly) {
  using namespace llvm::sys;
  auto Fail = [&](const llvm::Twine &Why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(), Why);
  };
  auto TooBig = [&] {
    return Fail("the file is larger than the limit of " + llvm::Twine(Limit) + " bytes");
  };
  fs::file_t F;
  if (Path == "-") {
    F = fs::getStdinHandle();
  } else {
    auto FOrErr = fs::openNativeFileForRead(Path);
    if (!FOrErr)
      return Fail(llvm::toString(FOrErr.takeError()));
    F = *FOrErr;
  }
  auto Close = llvm::make_scope_exit([&] {
    if (Path != "-")
      fs::closeFile(F);
  });
  fs::file_status St;
  bool Regular = !fs::status(F, St) && St.type() == fs::file_type::regular_file;
  if (RegularOnly && !Regular)
    return Fail("not a regular file");
  if (Regular && St.getSize() > Limit)
    return TooBig();
  std::string Out;
  char Chunk[1 << 16];
  for (;;) {
    auto N = fs::readNativeFile(F, llvm::MutableArrayRef<char>(Chunk, sizeof(Chunk)));
    if (!N)
      return Fail(llvm::toString(N.takeError()));
    if (*N == 0)
      return std::move(Out);
    if (Out.size() + *N > Limit)
      return TooBig();
    Out.append(Chunk, *N);
  }
}

namespace {
/// A strict reader of the header dictionary of a .npy file: a Python dict
/// literal with exactly the keys 'descr' (a string), 'fortran_order'
/// (True or False) and 'shape' (a tuple of non-negative integers), each once.
struct NpyHeader {
  std::string Descr;
  bool FortranOrder = false;
  llvm::SmallVector<uint64_t, 4> Shape;
  std::string ShapeText;

  static Expected<NpyHeader> parse(StringRef Text) {
    NpyHeader H;
    StringRef S = Text;
    auto Fail = [&](const llvm::Twine &Why) {
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "bad header: " + Why + " (at offset " +
                                         llvm::Twine(S.data() - Text.data()) + ")");
    };
    auto Skip = [&] { S = S.ltrim(); };
    auto ReadString = [&](std::string &Out) -> bool {
      if (S.empty() || (S[0] != '\'' && S[0] != '"'))
        return false;
      char Q = S[0];
      size_t End = S.find(Q, 1);
      if (End == StringRef::npos)
        return false;
      Out = S.substr(1, End - 1).str();
      S = S.drop_front(End + 1);
      return true;
    };
    Skip();
    if (!S.consume_front("{"))
      return Fail("expected '{'");
    bool Seen[3] = {false, false, false};
    for (;;) {
      Skip();
      if (S.consume_front("}"))
        break;
      std::string Key;
      if (!ReadString(Key))
        return Fail(S.empty() ? "unterminated dictionary" : "expected a quoted key or '}'");
      Skip();
      if (!S.consume_front(":"))
        return Fail("expected ':' after '" + Key + "'");
      Skip();
      int Idx = Key == "descr" ? 0 : Key == "fortran_order" ? 1 : Key == "shape" ? 2 : -1;
      if (Idx < 0)
        return Fail("unknown key '" + Key + "'");
      if (Seen[Idx])
        return Fail("duplicate key '" + Key + "'");
      Seen[Idx] = true;
      if (Idx == 0) {
        if (!ReadString(H.Descr))
          return Fail("'descr' must be a string");
      } else if (Idx == 1) {
        if (S.consume_front("True"))
          H.FortranOrder = true;
        else if (S.consume_front("False"))
          H.FortranOrder = false;
        else
          return Fail("'fortran_order' must be True or False");
      } else {
        if (!S.consume_front("("))
          return Fail("'shape' must be a tuple");
        size_t Close = S.find(')');
        if (Close == StringRef::npos)
          return Fail("unterminated 'shape' tuple");
        H.ShapeText = S.take_front(Close).str();
        llvm::SmallVector<StringRef, 4> Parts;
        S.take_front(Close).split(Parts, ',');
        for (size_t I = 0; I < Parts.size(); ++I) {
          StringRef P = Parts[I].trim();
          if (P.empty() && I + 1 == Parts.size() && I > 0)
            break; // a trailing comma: (4,)
          if (P.empty() && Parts.size() == 1)
            break; // (): a scalar
          uint64_t D;
          if (P.empty() || P.getAsInteger(10, D))
            return Fail("cannot read the shape '(" + H.ShapeText + ")'");
          H.Shape.push_back(D);
        }
        S = S.drop_front(Close + 1);
      }
      Skip();
      if (S.consume_front(","))
        continue;
      Skip();
      if (S.consume_front("}"))
        break;
      return Fail(S.empty() ? "unterminated dictionary" : "expected ',' or '}'");
    }
    if (!S.trim().empty())
      return Fail("unexpected text after the dictionary");
    static const char *const Names[] = {"descr", "fortran_order", "shape"};
    for (int I = 0; I < 3; ++I)
      if (!Seen[I])
        return Fail(llvm::Twine("missing key '") + Names[I] + "'");
    return std::move(H);
  }
};
} // namespace

/// The header dictionary of .npy file \p Data and where its payload starts.
static Expected<std::pair<StringRef, size_t>> npyHeader(const ArgValue &A, StringRef Path,
                                                        StringRef Data) {
  if (Data.size() < 10 || !Data.starts_with("\x93NUMPY"))
    return npyError(A, Path, "not a NumPy .npy file");
  unsigned Major = uint8_t(Data[6]);
  size_t HeaderLen, Start;
  if (Major == 1) {
    HeaderLen = uint8_t(Data[8]) | uint8_t(Data[9]) << 8;
    Start = 10;
  } else if (Major == 2 || Major == 3) {
    if (Data.size() < 12)
      return npyError(A, Path, "truncated header");
    HeaderLen = uint32_t(uint8_t(Data[8])) | uint32_t(uint8_t(Data[9])) << 8 |
                uint32_t(uint8_t(Data[10])) << 16 | uint32_t(uint8_t(Data[11])) << 24;
    Start = 12;
  } else {
    return npyError(A, Path, "unsupported .npy format version " + llvm::Twine(Major));
  }
  if (Data.size() - Start < HeaderLen)
    return npyError(A, Path, "truncated header");
  return std::make_pair(Data.substr(Start, HeaderLen), Start + HeaderLen);
}

static Error readNpy(ArgValue &A, StringRef Path) {
  auto Buf = jitrun::readFileBounded(Path, jitrun::MaxNpyBytes, /*RegularOnly=*/true);
  if (!Buf)
    return npyError(A, Path, "cannot read the file: " + llvm::toString(Buf.takeError()));
  return jitrun::parseNpy(A, Path, *Buf);
}

Error jitrun::parseNpy(ArgValue &A, StringRef Path, StringRef Data) {
  auto HeaderAndStart = npyHeader(A, Path, Data);
  if (!HeaderAndStart)
    return HeaderAndStart.takeError();
  auto [HeaderText, PayloadStart] = *HeaderAndStart;
  auto Header = NpyHeader::parse(HeaderText);
  if (!Header)
    return npyError(A, Path, llvm::toString(Header.takeError()));
  StringRef Descr = Header->Descr;
  ScalarKind K = A.kind();
  StringRef Want = npyDescr(K);
  bool DescrOK = Descr == Want ||
                 (gridjit::scalarBytes(K) == 1 && Descr.size() == 3 &&
                  (Descr[0] == '<' || Descr[0] == '|') && Descr.drop_front() == Want.drop_front());
  if (!DescrOK)
    return npyError(A, Path,
                    "dtype '" + Descr + "' does not match the parameter's element type " +
                        gridjit::scalarName(K).data() + " (dtype '" + Want + "')");
  StringRef Shape = Header->ShapeText;
  if (Header->FortranOrder && Header->Shape.size() > 1)
    return npyError(A, Path, "Fortran-ordered arrays are not supported; save it in C order");
  // The element count and byte size, with checked multiplication: a shape
  // whose product does not fit in 64 bits cannot match any file.
  uint64_t Count = 1, Need;
  for (uint64_t D : Header->Shape)
    if (__builtin_mul_overflow(Count, D, &Count))
      return npyError(A, Path, "the shape (" + Shape + ") has too many elements");
  if (__builtin_mul_overflow(Count, uint64_t(gridjit::scalarBytes(K)), &Need))
    return npyError(A, Path, "the shape (" + Shape + ") has too many elements");
  StringRef Payload = Data.substr(PayloadStart);
  if (Payload.size() != Need)
    return npyError(A, Path,
                    "the shape (" + Shape + ") needs " + llvm::Twine(Need) +
                        " bytes of data, the file has " + llvm::Twine(Payload.size()));
  resize(A, Count);
  std::memcpy(A.data(), Payload.data(), Need);
  if (K == ScalarKind::Bool)
    for (size_t I = 0; I < Count; ++I)
      setElem(A, I, getElem(A, I) != 0);
  return Error::success();
}

/// Fills \p A with a list of literals; \p S is what follows the '['.
static Error parseList(ArgValue &A, StringRef S, const std::string &Where) {
  if (!S.consume_back("]"))
    return usageError(Where + ": a list must end with ']'");
  llvm::SmallVector<StringRef, 16> Items;
  if (!S.trim().empty())
    S.split(Items, ',');
  resize(A, Items.size());
  for (size_t I = 0; I < Items.size(); ++I) {
    auto Bits = parseLiteral(A.kind(), Items[I], Where + " element " + llvm::Twine(I));
    if (!Bits)
      return Bits.takeError();
    setElem(A, I, *Bits);
  }
  return Error::success();
}

/// Fills \p A with \p N values of `rand:N:SEED`.
static void fillRandom(ArgValue &A, size_t N, uint64_t Seed) {
  ScalarKind K = A.kind();
  resize(A, N);
  uint64_t State = Seed;
  for (size_t I = 0; I < N; ++I) {
    uint64_t R = splitmix64(State);
    uint64_t Bits;
    if (K == ScalarKind::F32 || gridjit::isStorageOnlyScalar(K))
      Bits = fromDouble(K, double(R >> 40) * 0x1p-24); // [0, 1) (to f16: may round to 1)
    else if (K == ScalarKind::F64)
      Bits = fromDouble(K, double(R >> 11) * 0x1p-53);
    else if (K == ScalarKind::Bool)
      Bits = R >> 63;
    else
      Bits = R; // every bit pattern of the type, uniformly
    setElem(A, I, Bits);
  }
}

/// Fills \p A from a generated SPEC: zeros:N, iota:N, fill:N:V or
/// rand:N[:SEED].
static Error parseGenerator(ArgValue &A, StringRef S, StringRef Spec, const std::string &Where) {
  ScalarKind K = A.kind();
  auto [Kind, Rest] = S.split(':');
  llvm::SmallVector<StringRef, 3> Fields;
  Rest.split(Fields, ':');
  auto NeedFields = [&](size_t Min, size_t Max, const char *Form) -> Expected<size_t> {
    if (Rest.empty() || Fields.size() < Min || Fields.size() > Max)
      return usageError(Where + ": expected '" + Form + "', got '" + Spec + "'");
    return parseCount(Fields[0], K, Where);
  };
  if (Kind == "zeros" || Kind == "iota") {
    auto N = NeedFields(1, 1, Kind == "zeros" ? "zeros:N" : "iota:N");
    if (!N)
      return N.takeError();
    resize(A, *N);
    if (Kind == "iota")
      for (size_t I = 0; I < *N; ++I)
        setElem(A, I, K == ScalarKind::Bool ? (I & 1) : fromDouble(K, double(I)));
    return Error::success();
  }
  if (Kind == "fill") {
    auto N = NeedFields(2, 2, "fill:N:V");
    if (!N)
      return N.takeError();
    auto Bits = parseLiteral(K, Fields[1], Where);
    if (!Bits)
      return Bits.takeError();
    resize(A, *N);
    for (size_t I = 0; I < *N; ++I)
      setElem(A, I, *Bits);
    return Error::success();
  }
  if (Kind == "rand") {
    auto N = NeedFields(1, 2, "rand:N[:SEED]");
    if (!N)
      return N.takeError();
    uint64_t Seed = 0;
    if (Fields.size() == 2 && Fields[1].trim().getAsInteger(10, Seed))
      return usageError(Where + ": '" + Fields[1] + "' is not a seed (an unsigned integer)");
    fillRandom(A, *N, Seed);
    return Error::success();
  }
  return usageError(Where + ": '" + Spec + "' is not a buffer (" + listBufferSpecForms() + ")");
}

llvm::ArrayRef<BufferSpecForm> jitrun::getBufferSpecForms() {
  // parseArg and parseGenerator read exactly these; docs/jit-run.md
  // (ARGUMENTS) has the same rows.
  static const BufferSpecForm Forms[] = {
      {"zeros:N", "N zeros"},
      {"fill:N:V", "N copies of the literal V"},
      {"iota:N", "0, 1, ..., N-1"},
      {"rand:N[:SEED]", "N pseudo-random values from SEED (default 0), the same everywhere"},
      {"[v0,v1,...]", "the literals given ([] is empty)"},
      {"@NAME[+K]", "the buffer of buffer parameter NAME, from its element K (default 0) on"},
      {"@FILE.npy", "a NumPy .npy file whose dtype is the element type's"},
  };
  return Forms;
}

std::string jitrun::listBufferSpecForms() {
  std::string Out;
  llvm::ArrayRef<BufferSpecForm> Forms = getBufferSpecForms();
  for (size_t I = 0; I < Forms.size(); ++I)
    Out += std::string(I == 0 ? "" : I + 1 == Forms.size() ? " or " : ", ") + Forms[I].Syntax;
  return Out;
}

Expected<std::optional<ArgValue>> jitrun::parseAlias(const gridjit::KernelInfo &K,
                                                     const gridjit::KernelParamInfo &P,
                                                     StringRef Spec) {
  StringRef S = Spec.trim();
  if (!P.Ty.isPointer() || !S.consume_front("@"))
    return std::nullopt;
  auto [Name, Offset] = S.split('+');
  Name = Name.trim();
  const gridjit::KernelParamInfo *Target = nullptr;
  size_t Index = 0;
  for (; Index < K.Params.size(); ++Index)
    if (K.Params[Index].Name == Name) {
      Target = &K.Params[Index];
      break;
    }
  if (!Target)
    return std::nullopt; // a file
  std::string Where = "--arg " + P.Name + "=" + Spec.trim().str();
  if (Target->Name == P.Name)
    return usageError(Where + ": a parameter cannot share its own buffer");
  if (!Target->Ty.isPointer())
    return usageError(Where + ": '" + Name + "' is a scalar parameter, not a buffer");
  if (Target->Ty.getScalarKind() != P.Ty.getScalarKind())
    return usageError(Where + ": '" + P.Name + "' is " + P.Ty.str() + " and '" + Name + "' is " +
                      Target->Ty.str() +
                      "; a parameter shares only a buffer of its own element type");
  ArgValue A;
  A.Param = P;
  A.AliasOf = Index;
  if (S.contains('+') && Offset.trim().getAsInteger(10, A.AliasOffset))
    return usageError(Where + ": '" + Offset + "' is not an element offset (an unsigned integer)");
  return std::optional<ArgValue>(std::move(A));
}

Error jitrun::refreshAlias(ArgValue &A, const ArgValue &Target) {
  if (A.AliasOffset > Target.Count)
    return usageError("--arg " + A.Param.Name + "=@" + Target.Param.Name + "+" +
                      llvm::Twine(A.AliasOffset) + ": the offset is past the end of '" +
                      Target.Param.Name + "' (" + llvm::Twine(Target.Count) + " elements)");
  if (Target.AliasOf)
    return usageError("--arg " + A.Param.Name + "=@" + Target.Param.Name + ": '" +
                      Target.Param.Name +
                      "' shares another parameter's buffer itself; name that "
                      "parameter");
  resize(A, Target.Count - A.AliasOffset);
  unsigned Size = gridjit::scalarBytes(A.kind());
  std::memcpy(A.data(), static_cast<const char *>(Target.data()) + A.AliasOffset * Size,
              A.Count * Size);
  return Error::success();
}

Expected<ArgValue> jitrun::parseArg(const gridjit::KernelParamInfo &P, StringRef Spec,
                                    StringRef Option) {
  ArgValue A;
  A.Param = P;
  A.Option = Option.str();
  std::string Where = Option.str() + " " + P.Name;
  if (!P.Ty.isPointer()) {
    auto Bits = parseLiteral(P.Ty.getScalarKind(), Spec, Where);
    if (!Bits)
      return Bits.takeError();
    A.Storage = {*Bits};
    return std::move(A);
  }
  StringRef S = Spec.trim();
  Error E = S.consume_front("@")   ? readNpy(A, S)
            : S.consume_front("[") ? parseList(A, S, Where)
                                   : parseGenerator(A, S, Spec, Where);
  if (E)
    return std::move(E);
  return std::move(A);
}

Expected<ArgValue> jitrun::parseConstant(const gridjit::ConstantInfo &C, StringRef Spec) {
  // The bytes are a buffer's: parsed as a ptr<T> argument's, with the plain
  // list `v0,v1,...` (and a single value) read as `[v0,v1,...]`.
  gridjit::KernelParamInfo P{C.Name, gridjit::Type::getPointer(C.Ty.getScalarKind()), 8, 8};
  StringRef S = Spec.trim();
  bool Generator = S.starts_with("zeros:") || S.starts_with("fill:") || S.starts_with("iota:") ||
                   S.starts_with("rand:");
  std::string Text =
      S.starts_with("@") || S.starts_with("[") || Generator ? S.str() : "[" + S.str() + "]";
  auto A = parseArg(P, Text, "--constant");
  if (!A)
    return A.takeError();
  uint64_t Want = C.Ty.getArrayElementCount();
  if (A->Count != Want)
    return usageError("--constant " + C.Name + ": " + llvm::Twine(A->Count) +
                      (A->Count == 1 ? " value" : " values") + " given; '" + C.Name + "' of type " +
                      C.Ty.str() + " has " + llvm::Twine(Want) + " elements");
  return A;
}

//===----------------------------------------------------------------------===//
// Output
//===----------------------------------------------------------------------===//

uint64_t jitrun::getElementBits(const ArgValue &A, size_t I) { return getElem(A, I); }

void jitrun::writeElement(llvm::raw_ostream &OS, const ArgValue &A, size_t I) {
  ScalarKind K = A.kind();
  uint64_t Bits = getElem(A, I);
  switch (K) {
  case ScalarKind::Bool:
    OS << (Bits ? "true" : "false");
    return;
  case ScalarKind::F32:
  case ScalarKind::F64:
  case ScalarKind::F16:
  case ScalarKind::BF16:
    writeFloat(OS, floatValue(K, Bits), K);
    return;
  default:
    if (gridjit::isSignedScalar(K)) {
      unsigned Shift = 64 - gridjit::scalarBits(K);
      OS << (int64_t(Bits << Shift) >> Shift);
    } else {
      OS << Bits;
    }
  }
}

void jitrun::writeFloat(llvm::raw_ostream &OS, double V, ScalarKind K) {
  if (std::isnan(V))
    OS << "nan"; // a NaN's sign means nothing; C libraries print "-nan"
  else
    // Enough digits that the printed number reads back as the same value.
    OS << llvm::format(K == ScalarKind::F16    ? "%.5g"
                       : K == ScalarKind::BF16 ? "%.4g"
                       : K == ScalarKind::F32  ? "%.9g"
                                               : "%.17g",
                       V);
}

std::string jitrun::formatBuffer(const ArgValue &A) {
  std::string Out;
  llvm::raw_string_ostream OS(Out);
  OS << A.Param.Name << " = [";
  for (size_t I = 0; I < A.Count; ++I) {
    if (I)
      OS << ", ";
    writeElement(OS, A, I);
  }
  OS << "]";
  return Out;
}

Error jitrun::writeNpy(StringRef Path, const ArgValue &A) {
  std::string Header = "{'descr': '" + std::string(npyDescr(A.kind())) +
                       "', 'fortran_order': False, 'shape': (" + std::to_string(A.Count) + ",), }";
  // Magic (6) + version (2) + length (2) + header + '\n', padded to 64.
  size_t Total = 10 + Header.size() + 1;
  Header.append((64 - Total % 64) % 64, ' ');
  Header += '\n';
  std::error_code EC;
  llvm::raw_fd_ostream OS(Path, EC, llvm::sys::fs::OF_None);
  if (EC)
    return llvm::createStringError(EC, "--out %s: cannot open '%s' for writing: %s",
                                   A.Param.Name.c_str(), Path.str().c_str(), EC.message().c_str());
  OS << "\x93NUMPY" << char(1) << char(0) << char(Header.size() & 0xff) << char(Header.size() >> 8)
     << Header;
  OS.write(reinterpret_cast<const char *>(A.data()), A.Count * gridjit::scalarBytes(A.kind()));
  OS.close();
  if (OS.has_error())
    return llvm::createStringError(OS.error(), "--out %s: cannot write '%s'", A.Param.Name.c_str(),
                                   Path.str().c_str());
  return Error::success();
}
