"""KIR's scalar types (gj_scalar_type) and how Python and array types map
onto them."""

import struct


class ScalarType:
    """One of KIR's scalar types: ``code`` (gj_scalar_type), ``name``
    (``"f32"``), ``itemsize`` (bytes), ``kind`` (``"b"`` bool, ``"i"``
    signed, ``"u"`` unsigned, ``"f"`` float), and for integers ``min`` and
    ``max``."""

    __slots__ = ("code", "name", "itemsize", "kind", "min", "max", "typestr")

    def __init__(self, code, name, itemsize, kind):
        self.code = code
        self.name = name
        self.itemsize = itemsize
        self.kind = kind
        bits = itemsize * 8
        if kind == "i":
            self.min, self.max = -(1 << (bits - 1)), (1 << (bits - 1)) - 1
        elif kind == "u":
            self.min, self.max = 0, (1 << bits) - 1
        else:
            self.min = self.max = None
        # The array interface's type string (little-endian).
        self.typestr = ("|" if itemsize == 1 else "<") + kind + str(itemsize)

    def __repr__(self):
        return "gridjit.%s" % self.name

    def __str__(self):
        return self.name

    def __reduce__(self):
        return (_by_name, (self.name,))


bool_ = ScalarType(0, "bool", 1, "b")
i8 = ScalarType(1, "i8", 1, "i")
i16 = ScalarType(2, "i16", 2, "i")
i32 = ScalarType(3, "i32", 4, "i")
i64 = ScalarType(4, "i64", 8, "i")
u8 = ScalarType(5, "u8", 1, "u")
u16 = ScalarType(6, "u16", 2, "u")
u32 = ScalarType(7, "u32", 4, "u")
u64 = ScalarType(8, "u64", 8, "u")
f32 = ScalarType(9, "f32", 4, "f")
f64 = ScalarType(10, "f64", 8, "f")
f16 = ScalarType(11, "f16", 2, "f")
#: bfloat16. NumPy has no such dtype: its arrays are the bits, as uint16
#: (typestr ``<u2``, what PyTorch's ``t.view(torch.uint16)`` gives); DLPack
#: names it (kDLBfloat), so a PyTorch bfloat16 tensor passes as it is.
bf16 = ScalarType(12, "bf16", 2, "f")
bf16.typestr = "<u2"

ALL = (bool_, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, f16, bf16)
BY_CODE = {t.code: t for t in ALL}
BY_NAME = {t.name: t for t in ALL}
BY_NAME["bool_"] = bool_
#: GJ_ANY: a pointer argument whose pointee is not checked.
ANY_CODE = 255

# (kind, itemsize) -> ScalarType, for the array interface and DLPack
# (bf16 has no array-interface type string of its own).
_BY_KIND_SIZE = {(t.kind, t.itemsize): t for t in ALL if t is not bf16}


def holds(want, got):
    """Whether memory of element type \p got may be given where \p want is
    needed: the same type, or uint16 bits for bf16 (NumPy has no bfloat16)."""
    return got is want or (want is bf16 and got is u16)


def _by_name(name):
    return BY_NAME[name]


def from_typestr(typestr):
    """The ScalarType of an array-interface type string (``"<f4"``), or
    None (big-endian, complex, structured, ...)."""
    if len(typestr) < 3 or typestr[0] not in "<|=":
        return None
    try:
        return _BY_KIND_SIZE.get((typestr[1], int(typestr[2:])))
    except ValueError:
        return None


# struct / memoryview format characters (native sizes on Linux x86-64 and
# aarch64: l and L are 8 bytes).
_BY_FORMAT = {
    "?": bool_,
    "b": i8,
    "h": i16,
    "i": i32,
    "l": i64 if struct.calcsize("l") == 8 else i32,
    "q": i64,
    "B": u8,
    "H": u16,
    "I": u32,
    "L": u64 if struct.calcsize("L") == 8 else u32,
    "Q": u64,
    "f": f32,
    "d": f64,
}


def from_format(fmt):
    """The ScalarType of a buffer-protocol format (``"f"``, ``"<d"``), or
    None."""
    if len(fmt) == 2 and fmt[0] in "@=<":
        fmt = fmt[1]
    return _BY_FORMAT.get(fmt)


# DLPack's DLDataTypeCode: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4,
# kDLBool 6.
_DLPACK_KIND = {0: "i", 1: "u", 2: "f", 6: "b"}
DLPACK_BFLOAT = 4


def from_dlpack(code, bits, lanes):
    """The ScalarType of a DLPack DLDataType, or None."""
    if lanes != 1 or bits % 8:
        return None
    if code == DLPACK_BFLOAT:
        return bf16 if bits == 16 else None
    kind = _DLPACK_KIND.get(code)
    if kind is None:
        return None
    return _BY_KIND_SIZE.get((kind, bits // 8))


def resolve(dtype):
    """The ScalarType that \\p dtype names: a ScalarType, a KIR name
    (``"f32"``), a NumPy dtype or type (``numpy.float32``), or Python's
    ``float`` (f64), ``int`` (i64), ``bool``."""
    if isinstance(dtype, ScalarType):
        return dtype
    if isinstance(dtype, str) and dtype in BY_NAME:
        return BY_NAME[dtype]
    if dtype is float:
        return f64
    if dtype is int:
        return i64
    if dtype is bool:
        return bool_
    # NumPy dtypes and scalar types, and anything else numpy.dtype takes.
    try:
        import numpy
    except ImportError:
        numpy = None
    if numpy is not None:
        try:
            t = from_typestr(numpy.dtype(dtype).str)
        except TypeError:
            t = None
        if t is not None:
            return t
    raise TypeError("gridjit: %r is not a KIR scalar type (bool, i8..i64, u8..u64, f32, f64, f16, bf16)" % (dtype,))


def numpy_dtype(t):
    """The NumPy dtype of ScalarType \\p t (NumPy must be installed)."""
    import numpy

    return numpy.dtype(t.typestr)
