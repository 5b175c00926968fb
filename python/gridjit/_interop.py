"""Memory from other libraries: the array interface (NumPy), the buffer
protocol, ``__cuda_array_interface__`` (CuPy, PyTorch, Numba), DLPack
(``__dlpack__`` / ``__dlpack_device__``), and CUDA streams of other
frameworks.

The extractors of a ``ptr<T>`` argument return its address, scalar type
and extent (the bytes of the array from its address to its end: what a
checked launch holds the kernel's accesses to, docs/Check.md), and for
the buffer protocol and DLPack a ``keepalive``, or raise Reject with the
reason; the caller names the kernel and the parameter. ``keepalive`` is
whatever must stay referenced until the launch call returns (a DLPack
capsule, a ctypes view pinning a buffer export).
"""

import ctypes
import sys
from ctypes import POINTER, Structure, c_char_p, c_int32, c_int64, c_uint8, c_uint16, c_uint64, c_void_p

from . import _types


class Reject(Exception):
    """An argument that cannot be used (the message says why)."""


def describe(obj):
    """A short description of \\p obj's type for messages."""
    t = type(obj)
    mod = getattr(t, "__module__", "")
    name = t.__qualname__ if mod in ("builtins", None) else "%s.%s" % (mod.split(".")[0], t.__qualname__)
    dtype = getattr(obj, "dtype", None)
    if dtype is not None and not callable(dtype):
        return "%s of %s" % (name, dtype)
    return name


# ---- The array interface and the buffer protocol (host memory) -----------


def _contiguous(shape, strides, itemsize):
    """Whether \\p strides describe a C-contiguous layout (None: they do)."""
    if strides is None:
        return True
    expected = itemsize
    for n, s in zip(reversed(shape), reversed(strides)):
        if n != 1 and s != expected:
            return False
        expected *= n
    return True


def _elements(shape):
    n = 1
    for d in shape:
        n *= d
    return n


def from_array_interface(ai, what="__array_interface__"):
    """(address, type, extent) of an array-interface dict (host or CUDA):
    the extent is the bytes of its shape (it is C-contiguous)."""
    data = ai.get("data")
    if not isinstance(data, tuple) or len(data) != 2:
        raise Reject("%s has no (pointer, read_only) data" % what)
    address, readonly = data
    if readonly:
        raise Reject("the array is read-only (a kernel may write through any pointer); pass a writable array")
    if ai.get("mask") is not None:
        raise Reject("masked arrays are not supported")
    typestr = ai.get("typestr", "")
    t = _types.from_typestr(typestr)
    if t is None:
        raise Reject("element type %r is not a KIR scalar type" % typestr)
    shape = tuple(ai.get("shape", ()))
    if not _contiguous(shape, ai.get("strides"), t.itemsize):
        raise Reject("the array is not C-contiguous (strides %s); pass a contiguous copy" % (ai.get("strides"),))
    return address or 0, t, _elements(shape) * t.itemsize


def from_buffer(obj):
    """(address, type, keepalive, extent) of a writable buffer-protocol
    object."""
    try:
        view = memoryview(obj)
    except TypeError:
        return None
    if view.readonly:
        raise Reject("the buffer is read-only (a kernel may write through any pointer)")
    if not view.c_contiguous:
        raise Reject("the buffer is not C-contiguous")
    t = _types.from_format(view.format)
    if t is None:
        raise Reject("element format %r is not a KIR scalar type" % view.format)
    if view.nbytes == 0:
        return 0, t, None, 0
    # from_buffer pins the export while the view lives (no resize can move
    # the memory during the launch).
    pin = (ctypes.c_char * view.nbytes).from_buffer(view)
    return ctypes.addressof(pin), t, pin, view.nbytes


# ---- DLPack ----------------------------------------------------------------

kDLCPU = 1
kDLCUDA = 2
kDLCUDAHost = 3
kDLCUDAManaged = 13


class DLDevice(Structure):
    _fields_ = [("device_type", c_int32), ("device_id", c_int32)]


class DLDataType(Structure):
    _fields_ = [("code", c_uint8), ("bits", c_uint8), ("lanes", c_uint16)]


class DLTensor(Structure):
    _fields_ = [
        ("data", c_void_p),
        ("device", DLDevice),
        ("ndim", c_int32),
        ("dtype", DLDataType),
        ("shape", POINTER(c_int64)),
        ("strides", POINTER(c_int64)),
        ("byte_offset", c_uint64),
    ]


class DLManagedTensor(Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", c_void_p), ("deleter", c_void_p)]


_PyCapsule_GetPointer = ctypes.pythonapi["PyCapsule_GetPointer"]
_PyCapsule_GetPointer.restype = c_void_p
_PyCapsule_GetPointer.argtypes = [ctypes.py_object, c_char_p]
_PyCapsule_IsValid = ctypes.pythonapi["PyCapsule_IsValid"]
_PyCapsule_IsValid.restype = ctypes.c_int
_PyCapsule_IsValid.argtypes = [ctypes.py_object, c_char_p]


def from_dlpack(obj, want_cuda, stream=None):
    """(address, type, capsule, extent) of an object exporting DLPack. The capsule
    is the keepalive: dropping it (name still "dltensor") lets its
    destructor call the producer's deleter, as the protocol asks of a
    consumer that does not take ownership."""
    device_type, device_id = obj.__dlpack_device__()
    if want_cuda:
        if device_type not in (kDLCUDA, kDLCUDAManaged):
            raise Reject("DLPack device type %d is not CUDA memory" % device_type)
        # The stream the kernel will run on: 1 is CUDA's legacy default
        # stream, where launches without a stream go.
        capsule = obj.__dlpack__(stream=stream if stream else 1)
    else:
        if device_type not in (kDLCPU, kDLCUDAHost, kDLCUDAManaged):
            raise Reject("DLPack device type %d is not host memory" % device_type)
        capsule = obj.__dlpack__()
    if not _PyCapsule_IsValid(capsule, b"dltensor"):
        raise Reject("__dlpack__() did not return a 'dltensor' capsule")
    managed = DLManagedTensor.from_address(_PyCapsule_GetPointer(capsule, b"dltensor"))
    t = managed.dl_tensor
    st = _types.from_dlpack(t.dtype.code, t.dtype.bits, t.dtype.lanes)
    if st is None:
        raise Reject(
            "DLPack element type (code %d, %d bits, %d lanes) is not a KIR scalar type"
            % (t.dtype.code, t.dtype.bits, t.dtype.lanes)
        )
    shape = [t.shape[i] for i in range(t.ndim)]
    strides = None
    if t.strides:
        # DLPack strides count elements, not bytes.
        strides = [t.strides[i] * st.itemsize for i in range(t.ndim)]
    if not _contiguous(shape, strides, st.itemsize):
        raise Reject("the DLPack tensor is not C-contiguous (strides %s)" % strides)
    return (t.data or 0) + t.byte_offset, st, capsule, _elements(shape) * st.itemsize


# ---- DLPack, produced ------------------------------------------------------

# DLDataTypeCode of a KIR scalar kind: kDLInt 0, kDLUInt 1, kDLFloat 2,
# kDLBool 6.
_DLPACK_CODE = {"i": 0, "u": 1, "f": 2, "b": 6}

# Function objects of the package's own (pythonapi["NAME"] makes a new one;
# pythonapi.NAME is shared with whoever else sets its argtypes).
_PyCapsule_New = ctypes.pythonapi["PyCapsule_New"]
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [c_void_p, c_void_p, c_void_p]

# The capsule's name must outlive every capsule: one buffer for all.
_DLTENSOR_NAME = ctypes.create_string_buffer(b"dltensor")


class _Export(Structure):
    """What one exported tensor keeps in C memory: the DLManagedTensor the
    consumer gets and its shape."""

    _fields_ = [("managed", DLManagedTensor), ("shape", c_int64 * 32)]


# Exports not released yet, by the address of their DLManagedTensor: each
# holds its C memory, the object whose memory it describes (a DeviceArray),
# so that neither goes while a consumer may use them, and its capsule.
# The GIL guards it (the deleter is a ctypes callback, which takes the GIL).
#
# An export is released when its consumer calls the deleter, as DLPack
# says. A capsule that nobody consumed is the producer's to free, which its
# destructor does in C producers; here the capsule has no destructor (a
# destructor written in Python cannot run while the consumer that dropped
# the capsule has an exception set, which is when it is most often
# dropped), so each new export releases those of the earlier ones that
# nobody else holds and nobody consumed.
_live_exports = {}


def _release_export(managed):
    _live_exports.pop(managed, None)


# The DLManagedTensor's deleter: the consumer calls it when it is done with
# the tensor.
_dlpack_deleter = ctypes.CFUNCTYPE(None, c_void_p)(_release_export)


def _release_abandoned():
    for key, entry in list(_live_exports.items()):
        # Held by the entry alone (and getrefcount's argument), and still
        # named "dltensor": dropped unconsumed.
        if sys.getrefcount(entry[2]) == 2 and _PyCapsule_IsValid(entry[2], b"dltensor"):
            del _live_exports[key]


def export_dlpack(owner, address, shape, scalar_type, device_type, device_id):
    """A DLPack capsule ("dltensor", unversioned DLManagedTensor) for the
    contiguous array of \\p shape and \\p scalar_type at \\p address on
    device (\\p device_type, \\p device_id); \\p owner (whose memory it is)
    stays alive until the consumer is done with it."""
    if len(shape) > 32:
        raise ValueError("DLPack export: %d dimensions (at most 32)" % len(shape))
    _release_abandoned()
    e = _Export()
    t = e.managed.dl_tensor
    t.data = address or None
    t.device.device_type = device_type
    t.device.device_id = device_id
    t.ndim = len(shape)
    # bf16's kind is "f" too, but DLPack has a code of its own for it.
    t.dtype.code = _types.DLPACK_BFLOAT if scalar_type is _types.bf16 else _DLPACK_CODE[scalar_type.kind]
    t.dtype.bits = scalar_type.itemsize * 8
    t.dtype.lanes = 1
    for i, n in enumerate(shape):
        e.shape[i] = n
    t.shape = ctypes.cast(ctypes.addressof(e.shape), POINTER(c_int64))
    t.strides = None  # compact, row-major
    t.byte_offset = 0
    e.managed.manager_ctx = None
    e.managed.deleter = ctypes.cast(_dlpack_deleter, c_void_p)
    key = ctypes.addressof(e.managed)
    capsule = _PyCapsule_New(key, ctypes.addressof(_DLTENSOR_NAME), None)
    _live_exports[key] = (e, owner, capsule)
    return capsule


# ---- Streams ---------------------------------------------------------------


def stream_handle(stream):
    """The CUstream (an int, 0 for none) of \\p stream: None, an int, or a
    stream object of another framework: ``__cuda_stream__()`` (the CUDA
    stream protocol), ``.cuda_stream`` (PyTorch), ``.ptr`` (CuPy),
    ``.handle`` (Numba; a ctypes c_void_p or an int)."""
    if stream is None:
        return 0
    if isinstance(stream, int) and not isinstance(stream, bool):
        if stream < 0 or stream >= 1 << 64:
            raise ValueError("stream handle %d is not a pointer" % stream)
        return stream
    proto = getattr(stream, "__cuda_stream__", None)
    if proto is not None:
        value = proto()
        if isinstance(value, tuple):
            value = value[1]
        return stream_handle(value)
    for attr in ("cuda_stream", "ptr", "handle"):
        value = getattr(stream, attr, None)
        if value is None:
            continue
        if isinstance(value, ctypes.c_void_p):
            value = value.value or 0
        elif not isinstance(value, int) and hasattr(type(value), "__int__"):
            value = int(value)  # cuda-python's CUstream (Numba with the NVIDIA bindings)
        if isinstance(value, int):
            return stream_handle(value)
    raise TypeError(
        "gridjit: %s is not a CUDA stream (expected None, an int handle, or an object with "
        "__cuda_stream__, .cuda_stream, .ptr or .handle)" % describe(stream)
    )
