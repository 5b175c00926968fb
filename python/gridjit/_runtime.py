"""Runtimes (the host CPU, a CUDA device) and device memory."""

import ctypes
import os
import threading
from ctypes import byref, c_void_p

from . import _capi, _interop, _types
from ._errors import InvalidArgumentError, NoDeviceError
from ._handle import Handle

# Target names as Python users write them -> the C API's.
_RUNTIME_TARGETS = {"host": "host", "cuda": "cuda", "nvptx": "cuda"}

#: The target of everything that takes one and is not given it: compile(),
#: compile_async(), Runtime(), runtime(), device_array(), to_device(), ...:
#: the host CPU, which every machine has, so that arrays are where the
#: kernels compiled by default run (docs/Python.md, "The default target").
DEFAULT_TARGET = "host"


def runtime_target(target):
    """"host" or "cuda" for a target name ("host", "cuda", "nvptx")."""
    name = str(target).split(":", 1)[0].strip().lower()
    try:
        return _RUNTIME_TARGETS[name]
    except KeyError:
        raise InvalidArgumentError(
            "gridjit: unknown target %r (known: host, cuda; 'nvptx' is the compiler's name for cuda)" % (target,)
        ) from None


class Runtime:
    """Runs compiled kernels on one target: ``"host"`` (this machine's CPU,
    with CUDA semantics) or ``"cuda"`` (an NVIDIA GPU through the CUDA
    driver), and owns device memory there.

    ``threads`` (host): threads that run blocks, 0 for the CPUs this process
    may run on; gridjit's own pool, independent of OpenMP and every other
    library's setting. ``device`` (cuda): the device ordinal.
    ``use_cubin_cache`` and ``cache_dir`` (cuda): keep the driver's cubins in
    the disk cache (docs/CUDA.md). ``catch_faults`` (host): turn a kernel's
    memory fault into a KernelFaultError, the process going on (the first
    launch installs SIGSEGV and SIGBUS handlers that pass every other fault
    on); False installs no signal handler, and a kernel's fault is the
    process's, as without gridjit. ``compiler`` (cuda): a gridjit.Compiler
    whose cache (directory and remote server) keeps the cubins too, so that
    a directory has one pruning policy; ``cache_dir`` is then not used.

    A Runtime is thread-safe. ``gridjit.runtime(target)`` gives the shared
    default one of a target."""

    def __init__(self, target=DEFAULT_TARGET, *, threads=0, device=0, use_cubin_cache=True, cache_dir=None,
                 catch_faults=True, compiler=None):
        self.target = runtime_target(target)
        opts = _capi.new_struct("gj_runtime_options")
        opts.target = self.target.encode()
        opts.threads = _count("threads", threads)
        opts.device = _count("device", device)
        opts.use_cubin_cache = 1 if use_cubin_cache else 0
        opts.cache_dir = _capi.encode_path(cache_dir, "cache_dir")
        if not catch_faults:
            opts.catch_faults = 0  # the init's default is 1
        if compiler is not None:
            opts.compiler = compiler._handle.value
        out = c_void_p()
        status = _capi.gj_runtime_create(byref(opts), byref(out))
        if status:
            e = _capi.error(status, "gj_runtime_create")
            if isinstance(e, NoDeviceError):
                # What this process can do instead, in the package's terms.
                e = NoDeviceError(
                    "%s. Kernels compiled for target=\"host\" run on this machine's CPU, and PTX compiles without "
                    "a device (gridjit.compile(source, target=\"cuda\").ptx)" % e.message,
                    e.status,
                )
            raise e
        self._handle = Handle(out.value, _capi.gj_runtime_destroy)
        self.threads = threads
        self.device = device
        self.catch_faults = bool(catch_faults)

    @property
    def warnings(self):
        """The warnings this runtime has given, in order (a tuple of str),
        which a library never prints. Today: the directory of its own
        cubin cache cannot be written (cubins are then not kept)."""
        h = self._handle
        n = _capi.gj_runtime_warning_count(h)
        return tuple(_capi.gj_runtime_warning(h, i).decode("utf-8", "replace") for i in range(n))

    def __repr__(self):
        if self.target == "cuda":
            return "<gridjit.Runtime cuda device %d>" % self.device
        return "<gridjit.Runtime host threads=%s>" % (self.threads or "all")

    def synchronize(self):
        """Waits until every launch and copy queued on this runtime has
        finished; raises the first error any of them met."""
        _capi.check(_capi.gj_runtime_synchronize(self._handle), "gj_runtime_synchronize")

    def device_array(self, shape, dtype="f32"):
        """A new DeviceArray of \\p shape and \\p dtype in this runtime
        (zeroed on the host target, undefined on CUDA)."""
        return DeviceArray(shape, dtype, runtime=self)

    def to_device(self, array):
        """A DeviceArray holding a copy of host array \\p array."""
        return to_device(array, runtime=self)


def _count(what, value):
    if not isinstance(value, int) or isinstance(value, bool) or value < 0 or value >= 1 << 32:
        raise InvalidArgumentError("gridjit: %s must be an integer from 0 to 2**32-1, not %r" % (what, value))
    return value


_defaults_lock = threading.Lock()
_default_runtimes = {}


def _after_fork_in_child():
    # Another thread may have held it at the fork (_compiler.py says more).
    global _defaults_lock
    _defaults_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def runtime(target=DEFAULT_TARGET):
    """The process's shared default Runtime of \\p target ("host" or
    "cuda"), created on first use with the default options (for CUDA,
    device 0). Raises NoDeviceError when CUDA cannot start."""
    t = runtime_target(target)
    r = _default_runtimes.get(t)
    if r is None:
        with _defaults_lock:
            r = _default_runtimes.get(t)
            if r is None:
                compiler = None
                if t == "cuda":
                    # The default compiler for device 0 keeps its cubins:
                    # one cache, one pruning policy, in the process.
                    from ._compiler import default_compiler

                    compiler = default_compiler("nvptx:" + (cuda_arch(0) or "sm_80"))
                r = _default_runtimes[t] = Runtime(t, compiler=compiler)
    return r


_default_runtime = runtime


def cuda_device_count():
    """The number of CUDA devices this process can use (0 without a
    driver)."""
    return _capi.gj_cuda_device_count()


# Workaround: the C API (gridjit-c/gridjit.h, API version 2) has no query
# for a CUDA device's compute capability, which decides the architecture to
# compile for (as jit-run does with gridjit::listCudaDevices). Until it has
# one, ask the driver gridjit itself loads ($GRIDJIT_CUDA_DRIVER, else
# libcuda.so.1) directly. It can go when the C API reports the device's
# architecture.
_NVPTX_ARCHS = (70, 72, 75, 80, 86, 87, 89, 90)  # NVPTXTarget's list (docs/Targets.md)
_arch_cache = {}


def cuda_arch(device=0):
    """The NVPTX architecture ("sm_86") to compile for on CUDA device
    \p device: its compute capability, clamped to the newest architecture
    gridjit knows that is not newer; None when the driver or the device
    cannot be asked."""
    # An int, checked before the lookup: 1.0 and True are equal to 1 as keys.
    device = _count("device", device)
    if device in _arch_cache:
        return _arch_cache[device]
    arch = None
    try:
        drv = ctypes.CDLL(os.environ.get("GRIDJIT_CUDA_DRIVER") or "libcuda.so.1", mode=os.RTLD_LOCAL)
        dev, major, minor = ctypes.c_int(), ctypes.c_int(), ctypes.c_int()
        if (
            drv.cuInit(0) == 0
            and drv.cuDeviceGet(byref(dev), ctypes.c_int(device)) == 0
            and drv.cuDeviceGetAttribute(byref(major), 75, dev) == 0
            and drv.cuDeviceGetAttribute(byref(minor), 76, dev) == 0
        ):
            have = major.value * 10 + minor.value
            fits = [a for a in _NVPTX_ARCHS if a <= have]
            if fits:
                arch = "sm_%d" % fits[-1]
    except (OSError, AttributeError):
        pass
    _arch_cache[device] = arch
    return arch


def _shape_tuple(shape):
    if isinstance(shape, int):
        shape = (shape,)
    shape = tuple(shape)
    for n in shape:
        # Below 2**63: the array interface and DLPack hold extents as int64
        # (a zero-size array may have any other extent).
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n < 1 << 63:
            raise ValueError("gridjit: shape %r: every extent must be an integer from 0 to 2**63-1" % (shape,))
    return shape


class DeviceArray:
    """A contiguous array in a runtime's device memory: gridjit's own,
    for users without CuPy, PyTorch or Numba. Pass it to kernels like any
    array; copy with ``copy_to_host()`` / ``copy_from_host()``.

    On a CUDA runtime it exposes ``__cuda_array_interface__`` (so CuPy,
    PyTorch and Numba can use it too); on the host runtime its memory is
    host memory and it exposes ``__array_interface__`` (``numpy.asarray``
    views it without a copy). On both it exports DLPack (``__dlpack__``,
    ``__dlpack_device__``: ``numpy.from_dlpack``, ``torch.from_dlpack``). The memory is freed when the array is
    garbage-collected; a pending CUDA launch that uses it must be
    synchronised first, as with any framework's arrays."""

    __slots__ = ("shape", "dtype", "size", "nbytes", "runtime", "_handle", "_address", "__weakref__")

    def __init__(self, shape, dtype="f32", *, runtime=None, target=DEFAULT_TARGET):
        rt = runtime if runtime is not None else _default_runtime(target)
        self.runtime = rt
        self.shape = _shape_tuple(shape)
        self.dtype = _types.resolve(dtype)
        size = 1
        for n in self.shape:
            size *= n
        self.size = size
        self.nbytes = size * self.dtype.itemsize
        # Checked here, exactly (Python's ints do not wrap): ctypes would pass
        # a size of 2**64 or more modulo 2**64 (2**62 f32 elements as 0 bytes).
        if self.nbytes > _capi.MAX_BUFFER_BYTES:
            raise InvalidArgumentError(
                "gridjit: a DeviceArray of shape %s and %s needs %d bytes, more than the limit of %d bytes (2**62) "
                "a buffer may have" % (self.shape, self.dtype, self.nbytes, _capi.MAX_BUFFER_BYTES)
            )
        out = c_void_p()
        # A zero-size array still owns a (1-byte) allocation, so that its
        # address is a valid one.
        _capi.check(_capi.gj_buffer_alloc(rt._handle, max(self.nbytes, 1), byref(out)), "gj_buffer_alloc")
        self._handle = Handle(out.value, _capi.gj_buffer_free, rt._handle)
        self._address = _capi.gj_buffer_address(self._handle)

    @property
    def address(self):
        """The device address of the first element (a host address on the
        host runtime, a CUdeviceptr on CUDA)."""
        return self._address

    @property
    def ndim(self):
        return len(self.shape)

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d DeviceArray")
        return self.shape[0]

    def __repr__(self):
        return "<gridjit.DeviceArray shape=%s dtype=%s on %r>" % (self.shape, self.dtype, self.runtime)

    def _host_view(self, obj, what):
        """(address, nbytes, keepalive) of a contiguous host buffer \\p obj of
        this array's size and element type."""
        ai = getattr(obj, "__array_interface__", None)
        if ai is not None:
            try:
                address, t, _ = _interop.from_array_interface(ai) if what == "out" else _readable(ai)
            except _interop.Reject as e:
                raise InvalidArgumentError("gridjit: %s: %s" % (what, e)) from None
            keep = obj
        else:
            try:
                view = memoryview(obj)
            except TypeError:
                raise InvalidArgumentError("gridjit: %s: %s is not an array or buffer" % (what, _interop.describe(obj))) from None
            if not view.c_contiguous:
                raise InvalidArgumentError("gridjit: %s: the buffer is not C-contiguous" % what)
            if what == "out" and view.readonly:
                raise InvalidArgumentError("gridjit: out: the buffer is read-only")
            t = _types.from_format(view.format)
            if t is None:
                raise InvalidArgumentError("gridjit: %s: element format %r is not a KIR scalar type" % (what, view.format))
            if view.nbytes == 0:
                address, keep = 0, view
            elif view.readonly:
                keep = ctypes.create_string_buffer(view.tobytes(), view.nbytes)
                address = ctypes.addressof(keep)
            else:
                keep = (ctypes.c_char * view.nbytes).from_buffer(view)
                address = ctypes.addressof(keep)
        if not _types.holds(self.dtype, t):
            raise InvalidArgumentError("gridjit: %s: element type %s does not match the DeviceArray's %s" % (what, t, self.dtype))
        nbytes = _nbytes(obj, t)
        if nbytes != self.nbytes:
            raise InvalidArgumentError(
                "gridjit: %s: %d bytes, but the DeviceArray holds %d (shape %s of %s)"
                % (what, nbytes, self.nbytes, self.shape, self.dtype)
            )
        return address, keep

    def copy_from_host(self, array):
        """Copies host array \\p array (same element type and size) in."""
        address, keep = self._host_view(array, "source")
        if self.nbytes:
            _capi.check(_capi.gj_buffer_write(self._handle, 0, address, self.nbytes), "gj_buffer_write")
        del keep

    def copy_to_host(self, out=None):
        """The contents, after every earlier launch of the runtime has
        finished: into \\p out (a writable host array of the same element
        type and size) if given, else into a new NumPy array of this shape."""
        if out is None:
            import numpy

            out = numpy.empty(self.shape, dtype=_types.numpy_dtype(self.dtype))
        address, keep = self._host_view(out, "out")
        if self.nbytes:
            _capi.check(_capi.gj_buffer_read(self._handle, 0, address, self.nbytes), "gj_buffer_read")
        del keep
        return out

    @property
    def __cuda_array_interface__(self):
        if self.runtime.target != "cuda":
            raise AttributeError("__cuda_array_interface__: this DeviceArray is in host memory")
        return {
            "shape": self.shape,
            "typestr": self.dtype.typestr,
            "data": (self._address, False),
            "strides": None,
            "version": 3,
            "stream": None,
        }

    def __dlpack_device__(self):
        """DLPack's (device type, device id): (kDLCPU, 0) on the host
        runtime, (kDLCUDA, ordinal) on a CUDA one."""
        if self.runtime.target == "cuda":
            return (_interop.kDLCUDA, self.runtime.device)
        return (_interop.kDLCPU, 0)

    def __dlpack__(self, stream=None, **kwargs):
        """A DLPack capsule of this array (``numpy.from_dlpack``,
        ``torch.from_dlpack``, ``cupy.from_dlpack``): the consumer views the
        same memory, which stays allocated until it is done. On CUDA every
        launch and copy queued on the runtime has finished before the
        consumer's work on \\p stream can start (the runtime is synchronised:
        gridjit has no events to order one stream after another)."""
        if self.runtime.target == "cuda" and stream != -1:
            self.runtime.synchronize()
        device_type, device_id = self.__dlpack_device__()
        return _interop.export_dlpack(self, self._address, self.shape, self.dtype, device_type, device_id)

    @property
    def __array_interface__(self):
        if self.runtime.target != "host":
            raise AttributeError("__array_interface__: this DeviceArray is in CUDA device memory")
        return {
            "shape": self.shape,
            "typestr": self.dtype.typestr,
            "data": (self._address, False),
            "strides": None,
            "version": 3,
        }


def _readable(ai):
    """from_array_interface for a source: read-only arrays are fine."""
    ai = dict(ai)
    data = ai.get("data")
    if isinstance(data, tuple) and len(data) == 2:
        ai["data"] = (data[0], False)
    return _interop.from_array_interface(ai)


def _nbytes(obj, t):
    nbytes = getattr(obj, "nbytes", None)
    if isinstance(nbytes, int):
        return nbytes
    ai = getattr(obj, "__array_interface__", None)
    if ai is not None:
        n = t.itemsize
        for d in ai.get("shape", ()):
            n *= d
        return n
    return memoryview(obj).nbytes


def device_array(shape, dtype="f32", *, runtime=None, target=DEFAULT_TARGET):
    """A new DeviceArray (uninitialised on CUDA, zeroed on the host) in
    \\p runtime, or the default runtime of \\p target (default: the host,
    as for compile())."""
    return DeviceArray(shape, dtype, runtime=runtime, target=target)


def device_array_like(array, *, runtime=None, target=DEFAULT_TARGET):
    """A new DeviceArray with \\p array's shape and element type."""
    ai = getattr(array, "__array_interface__", None) or getattr(array, "__cuda_array_interface__", None)
    if ai is not None:
        t = _types.from_typestr(ai["typestr"])
        shape = ai["shape"]
    else:
        view = memoryview(array)
        t, shape = _types.from_format(view.format), view.shape
    if t is None:
        raise InvalidArgumentError("gridjit: %s has no KIR element type" % _interop.describe(array))
    return DeviceArray(shape, t, runtime=runtime, target=target)


def to_device(array, *, runtime=None, target=DEFAULT_TARGET):
    """A DeviceArray holding a copy of host array \\p array (a NumPy array
    or any contiguous buffer)."""
    ai = getattr(array, "__array_interface__", None)
    if ai is not None:
        t = _types.from_typestr(ai.get("typestr", ""))
        shape = ai.get("shape", ())
    else:
        try:
            view = memoryview(array)
        except TypeError:
            raise InvalidArgumentError("gridjit: to_device: %s is not an array or buffer" % _interop.describe(array)) from None
        t, shape = _types.from_format(view.format), view.shape
    if t is None:
        raise InvalidArgumentError("gridjit: to_device: %s has no KIR element type" % _interop.describe(array))
    d = DeviceArray(shape, t, runtime=runtime, target=target)
    d.copy_from_host(array)
    return d
