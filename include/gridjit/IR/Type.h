//===- Type.h - KIR value types ---------------------------------*- C++ -*-===//
//
// Part of gridjit. KIR types are small values: a scalar, a pointer to a
// scalar in one address space, or an array of scalars in one address space
// (only as the type of a `var` or `shared` declaration), which may have up
// to MaxArrayRank dimensions (`[[f32; 17]; 16]`). They are compared by
// value. Where a scalar may stand as a pointee or an array element, so may
// an aggregate (a struct declared in the module, or a builtin vector type
// such as `f32x4`): the Type then refers to its Aggregate, which outlives
// it (the module's StructDecl, or a builtin's static description), and
// aggregates compare by identity.
//
//===----------------------------------------------------------------------===//

#ifndef GRIDJIT_IR_TYPE_H
#define GRIDJIT_IR_TYPE_H

#include <array>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace gridjit {

class Aggregate;

/// The scalar types of KIR, in the order the spec lists them.
/// The scalar types. New kinds are appended: the numbering is in cache
/// entries and the C API's gj_scalar_type. F16 (IEEE binary16) and BF16
/// (bfloat16) are storage types: memory, parameters, locals and `as`
/// conversions, but no arithmetic (LangRef, section 2).
enum class ScalarKind : uint8_t { Bool, I8, I16, I32, I64, U8, U16, U32, U64, F32, F64, F16, BF16 };

/// Where a pointer points: global memory (`ptr<T>`), a block's shared memory
/// (`ptr<T, shared>`) or a thread's local array (`ptr<T, local>`). Constant
/// is where a module-level `const` table or `constant` array lives (read
/// only in kernels; no pointer type names it).
enum class AddrSpace : uint8_t { Global, Shared, Local, Constant };

/// The spelling of a scalar type (`i32`, `f64`, `bool`, ...).
std::string_view scalarName(ScalarKind K);
/// Looks a scalar type up by its spelling; std::nullopt if it is not one.
std::optional<ScalarKind> scalarFromName(std::string_view Name);
/// Bits of the scalar (bool counts as 1).
unsigned scalarBits(ScalarKind K);
/// Bytes of the scalar in memory: 1, 2, 4 or 8 (bool is one byte, 0 or 1).
/// The one definition of a scalar's size: frames, shared memory layouts,
/// parameter sizes and buffers all use it (or Type::getElementBytes /
/// Type::getSizeInBytes).
unsigned scalarBytes(ScalarKind K);
bool isIntegerScalar(ScalarKind K); ///< i8..u64 (not bool)
bool isSignedScalar(ScalarKind K);  ///< i8..i64
bool isFloatScalar(ScalarKind K);   ///< f32, f64, f16, bf16
/// f16 and bf16: storage types, converted with `as` but never operands of
/// arithmetic, comparisons or math builtins.
bool isStorageOnlyScalar(ScalarKind K);

/// The most dimensions an array type may have: `[[[[T; a]; b]; c]; d]`.
inline constexpr unsigned MaxArrayRank = 4;

/// A KIR type. The default-constructed type is `Invalid`, which the verifier
/// uses for expressions whose type could not be determined (so that one
/// error does not cause a cascade of others).
class Type {
public:
  /// Struct: a value of an aggregate type (a struct or a vector type).
  enum Kind : uint8_t { Invalid, Void, Scalar, Pointer, Array, Struct };

  Type() = default;
  static Type getVoid() { return Type(Void, ScalarKind::Bool, AddrSpace::Global, 0); }
  static Type getScalar(ScalarKind S) { return Type(Scalar, S, AddrSpace::Global, 0); }
  static Type getPointer(ScalarKind Pointee, AddrSpace AS = AddrSpace::Global) {
    return Type(Pointer, Pointee, AS, 0);
  }
  /// An array of \p Count elements in \p AS: Local for a `var` array (a
  /// thread's own), Shared for a `shared` one (the verifier sets it from the
  /// declaration). Count == 0 is the unsized array of a kernel's dynamic
  /// shared memory (`shared s: [T];`).
  static Type getArray(ScalarKind Elem, uint64_t Count, AddrSpace AS = AddrSpace::Local) {
    return Type(Array, Elem, AS, Count);
  }
  /// A value of the struct or vector type \p A (never null).
  static Type getStruct(const Aggregate *A) {
    Type T(Struct, ScalarKind::Bool, AddrSpace::Global, 0);
    T.Agg = A;
    return T;
  }
  /// A pointer to \p Pointee, a scalar or an aggregate type, in \p AS.
  static Type getPointerTo(const Type &Pointee, AddrSpace AS = AddrSpace::Global) {
    Type T = getPointer(Pointee.S, AS);
    T.Agg = Pointee.Agg;
    return T;
  }
  /// An array of \p Count elements of \p Elem, a scalar, an aggregate or an
  /// array type
  /// (`[[f32; 17]; 16]` is getArrayOf(getArray(F32, 17), 16): 16 rows of
  /// 17), in \p AS. The rank is Elem's plus one; the caller keeps it at
  /// most MaxArrayRank (the parser and the verifier say so to the user).
  static Type getArrayOf(const Type &Elem, uint64_t Count, AddrSpace AS = AddrSpace::Local);
  /// An array of \p Elem with dimensions \p Dims, outermost first (1 to
  /// MaxArrayRank of them): {16, 17} is `[[f32; 17]; 16]`.
  static Type getArray(ScalarKind Elem, std::span<const uint64_t> Dims,
                       AddrSpace AS = AddrSpace::Local);
  /// The same with \p Elem a scalar or an aggregate type.
  static Type getArray(const Type &Elem, std::span<const uint64_t> Dims,
                       AddrSpace AS = AddrSpace::Local) {
    Type T = getArray(Elem.S, Dims, AS);
    T.Agg = Elem.Agg;
    return T;
  }

  Kind getKind() const { return K; }
  bool isValid() const { return K != Invalid; }
  bool isVoid() const { return K == Void; }
  bool isScalar() const { return K == Scalar; }
  bool isPointer() const { return K == Pointer; }
  bool isArray() const { return K == Array; }
  /// A struct or a vector value.
  bool isStruct() const { return K == Struct; }
  /// A value of a builtin vector type (`f32x4`, ...).
  bool isVector() const;
  /// The aggregate of a struct value, or the pointee of a pointer or the
  /// element of an array when that is an aggregate; null otherwise.
  const Aggregate *getAggregate() const { return Agg; }
  bool isBool() const { return K == Scalar && S == ScalarKind::Bool; }
  bool isInteger() const { return K == Scalar && isIntegerScalar(S); }
  bool isSignedInteger() const { return K == Scalar && isSignedScalar(S); }
  bool isUnsignedInteger() const { return isInteger() && !isSignedScalar(S); }
  bool isFloat() const { return K == Scalar && isFloatScalar(S); }
  bool isNumeric() const { return isInteger() || isFloat(); }

  /// The scalar itself, the pointee of a pointer, or the element of an array
  /// (meaningless where that is an aggregate: see getAggregate).
  ScalarKind getScalarKind() const { return S; }
  /// What a pointer points to, or the innermost element of an array: a
  /// scalar or an aggregate type.
  Type getPointeeType() const {
    Type T = getScalar(S);
    if (Agg)
      T = getStruct(Agg);
    return T;
  }
  /// Address space of a pointer, or where an array lives (Local or Shared).
  AddrSpace getAddrSpace() const { return AS; }
  /// Element count of an array's outermost dimension (0 for the unsized
  /// dynamic shared array): 16 for `[[f32; 17]; 16]`.
  uint64_t getArrayCount() const { return Dims[0]; }
  /// Dimensions of an array (1 for `[T; N]`, 2 for `[[T; M]; N]`); 0 for
  /// every other type.
  unsigned getArrayRank() const { return K == Array ? Rank : 0; }
  /// The count of dimension \p I of an array, outermost first: for
  /// `[[f32; 17]; 16]`, 16 then 17.
  uint64_t getArrayDim(unsigned I) const { return Dims[I]; }
  /// Scalar elements of an array in all: the product of its dimensions
  /// (272 for `[[f32; 17]; 16]`; 0 for the dynamic shared array).
  uint64_t getArrayElementCount() const;
  /// What indexing an array once gives: a row (`[f32; 17]` for
  /// `[[f32; 17]; 16]`, in the same address space) or, for a
  /// one-dimensional array, its scalar element.
  Type getArrayElementType() const;
  /// The same array in \p AS.
  Type withArrayAddrSpace(AddrSpace AS) const {
    Type T = *this;
    T.AS = AS;
    return T;
  }
  /// Bits of a scalar type.
  unsigned getBits() const { return scalarBits(S); }
  /// Bytes of one element in memory: the scalar itself, the pointee of a
  /// pointer or the element of an array (scalarBytes: bool is 1; an
  /// aggregate's C size, padding included).
  unsigned getElementBytes() const;
  /// Alignment in bytes of a value of this type in memory: a scalar's size,
  /// 8 for a pointer, an aggregate's (its largest member's, or a vector's
  /// size), an array's element's.
  unsigned getAlignInBytes() const;
  /// Bytes of a value of this type in memory: a scalar's bytes, 8 for a
  /// pointer (every target's pointers are 64-bit), all the elements of an
  /// array, every dimension (0 for the unsized dynamic shared array); 0 for
  /// void and invalid.
  uint64_t getSizeInBytes() const;

  /// The type as KIR spells it: `i32`, `ptr<f32, shared>`, `[f32; 256]`,
  /// `[[f32; 17]; 16]`.
  std::string str() const;

  friend bool operator==(const Type &A, const Type &B) {
    if (A.K != B.K)
      return false;
    switch (A.K) {
    case Invalid:
    case Void:
      return true;
    case Scalar:
      return A.S == B.S;
    case Pointer:
      return A.S == B.S && A.Agg == B.Agg && A.AS == B.AS;
    case Array:
      return A.S == B.S && A.Agg == B.Agg && A.Rank == B.Rank && A.Dims == B.Dims && A.AS == B.AS;
    case Struct:
      return A.Agg == B.Agg;
    }
    return false;
  }
  friend bool operator!=(const Type &A, const Type &B) { return !(A == B); }

private:
  Type(Kind K, ScalarKind S, AddrSpace AS, uint64_t Count)
      : K(K), S(S), AS(AS), Rank(K == Array ? 1 : 0), Dims{Count} {}

  Kind K = Invalid;
  ScalarKind S = ScalarKind::Bool;
  AddrSpace AS = AddrSpace::Global;
  /// An array's dimensions: Dims[0..Rank), outermost first; the rest 0.
  uint8_t Rank = 0;
  std::array<uint64_t, MaxArrayRank> Dims{};
  /// The aggregate of a struct value, pointee or element; null for scalars.
  const Aggregate *Agg = nullptr;
};

/// One field of an aggregate: its name, its type (a scalar other than
/// bool, a vector or a struct declared before), and its byte offset.
struct AggregateField {
  std::string Name;
  Type Ty;
  uint64_t Offset = 0;
};

/// A struct type (`struct Node { key: u32, value: f32 }`, owned by the
/// module's StructDecl) or a builtin vector type (`f32x4`: lanes x, y, z,
/// w). The layout is C's on x86-64 and NVPTX: each field at the next
/// multiple of its alignment, the size rounded up to the largest alignment
/// (a vector's alignment is its size, as CUDA's float4).
class Aggregate {
public:
  std::string Name;
  bool IsVector = false;
  std::vector<AggregateField> Fields;
  uint64_t Size = 0;  ///< bytes, padding included (set by layOut)
  uint64_t Align = 1; ///< bytes (set by layOut)

  /// Sets every field's offset, Size and Align from the fields' types.
  void layOut();
  /// The index of the field named \p FieldName, or std::nullopt.
  std::optional<unsigned> fieldIndex(std::string_view FieldName) const;
};

/// The builtin vector type spelt \p Name (`f32x2`, `f32x4`, `i32x2`,
/// `i32x4`, `u32x2`, `u32x4`, `f64x2`, `i64x2`, `u64x2`), or null.
const Aggregate *lookupVectorType(std::string_view Name);

} // namespace gridjit

#endif // GRIDJIT_IR_TYPE_H
