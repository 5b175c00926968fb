"""Kernels and their launches: ``kernel[grid, block](args...)``.

The launch path is built once per kernel (and configuration) and kept lean,
because it runs for every launch: a launch function generated for the
kernel's parameters checks each argument and writes it straight into a
reusable gj_arg array (through typed memoryviews of the array's bytes), the
launch configuration is a prebuilt gj_launch_config, and gj_launch is
called without ctypes argument conversion. The GIL is released for the
whole gj_launch call.

Errors have gridjit's words and kinds: what a gj_arg or gj_launch_config
can express (the number of arguments, a grid dimension of 0, a stream for
a host kernel) is left to gj_launch to refuse; what only Python sees (an
object that is no array, an int of 70 bits, a read-only array) is worded
here after "must ..." and made into gridjit's error, with the message's
beginning and the status of the C++ library, by gj_kernel_argument_error.
"""

import ctypes
import difflib
import math
import numbers
import operator
import os
import reprlib
import struct
import sys
from ctypes import byref, c_size_t, c_void_p

from . import _cancel, _capi, _interop, _types
from ._errors import ArgumentError, ConfigurationError
from ._runtime import DeviceArray

try:
    import numpy as _np

    _ndarray = _np.ndarray
    _np_bool = _np.bool_
except ImportError:  # NumPy is optional: arrays then come as buffers, DLPack or DeviceArray.
    _np = None

    class _ndarray:  # never the type of anything
        pass

    _np_bool = _ndarray

_char_from_buffer = ctypes.c_char.from_buffer
_addressof = ctypes.addressof
_launch = _capi.gj_launch_raw

# The largest magnitude that rounds to a finite f32 (2**128 - 2**103): the
# midpoint between the largest f32 and 2**128. Below it (exactly), a value
# rounds to at most the largest f32.
_F32_LIMIT = float(2**128 - 2**103)
_F32_MAX = float.fromhex("0x1.fffffep127")

_U32 = 1 << 32

# A launch's keywords that are its options, never a parameter's name.
_LAUNCH_OPTIONS = ("timeout", "cancel", "check_max_findings", "check_same_value_writes")
# A parameter not given yet (Kernel._bind).
_UNSET = object()


class Param:
    """One kernel parameter: ``name``, ``type`` (a ScalarType: the scalar's,
    or a pointer's pointee) and ``is_pointer``."""

    __slots__ = ("name", "type", "is_pointer")

    def __init__(self, name, type, is_pointer):
        self.name = name
        self.type = type
        self.is_pointer = is_pointer

    def __str__(self):
        t = ("ptr<%s>" if self.is_pointer else "%s") % (self.type.name if self.type else "any")
        return "%s: %s" % (self.name, t)

    def __repr__(self):
        return "<gridjit.Param %s>" % self


_repr = reprlib.Repr()
_repr.maxlevel = 3


def _short_repr(value):
    """repr() of a configuration's value for a message, cut short where it
    nests deep or runs long."""
    return _repr.repr(value)


def _dim3(kernel, value, what):
    """A (x, y, z) of a grid or block given as an int or 1..3 ints, each
    one a gj_launch_config can hold (0 too: gj_launch refuses it, in its
    words)."""
    shown = _short_repr(value)
    if hasattr(type(value), "__index__"):
        dims = (value, 1, 1)
    else:
        try:
            dims = tuple(value)
        except TypeError:
            raise ConfigurationError(
                "gridjit: kernel '%s': %s %s: expected an int or a tuple of 1 to 3 ints" % (kernel.name, what, shown)
            ) from None
        if not 1 <= len(dims) <= 3:
            raise ConfigurationError(
                "gridjit: kernel '%s': %s %s: expected 1 to 3 dimensions" % (kernel.name, what, shown)
            )
        dims = dims + (1,) * (3 - len(dims))
    out = []
    for d in dims:
        if isinstance(d, (bool, _np_bool)) or not hasattr(type(d), "__index__"):
            raise ConfigurationError(
                "gridjit: kernel '%s': %s %s: every dimension must be an integer" % (kernel.name, what, shown)
            )
        d = operator.index(d)
        if not 0 <= d < _U32:
            raise ConfigurationError(
                "gridjit: kernel '%s': %s %s: every dimension must be from 1 to 2**32-1" % (kernel.name, what, shown)
            )
        out.append(d)
    return tuple(out)


class _Layout:
    """Where the fields of the package's gj_arg are (_capi.gj_arg, read when
    a kernel is made: its size is gj_launch's arg_size)."""

    __slots__ = ("cls", "size", "kind", "type", "value", "extent", "arg_size")

    def __init__(self):
        cls = self.cls = _capi.gj_arg
        self.size = ctypes.sizeof(cls)
        self.kind = cls.kind.offset
        self.type = cls.type.offset
        self.value = cls.value.offset
        # None: a gj_arg of API version 1, without extent (test_abi.py).
        self.extent = cls.extent.offset if hasattr(cls, "extent") else None
        self.arg_size = c_size_t(self.size)


class _Slot:
    """One reusable gj_arg array: its bytes, typed views of them, the
    ctypes array passed to gj_launch, and what must stay alive until the
    launch returns."""

    __slots__ = ("buf", "carray", "q", "Q", "d", "f", "keep")

    def __init__(self, template, layout):
        self.buf = bytearray(template)
        n = len(template) // layout.size
        mv = memoryview(self.buf)
        self.q = mv.cast("q")
        self.Q = mv.cast("Q")
        self.d = mv.cast("d")
        self.f = mv.cast("f")
        # The array gj_launch reads is the bytearray itself (a kernel without
        # parameters gets an unused one-element array).
        self.carray = (layout.cls * n).from_buffer(self.buf) if n else (layout.cls * 1)()
        self.keep = []


class _Argument:
    """Argument \\p index of \\p kernel, for its errors."""

    __slots__ = ("kernel", "index")

    def __init__(self, kernel, index):
        self.kernel = kernel
        self.index = index

    def error(self, problem):
        """The ArgumentError `kernel 'K': argument N ('p: T') PROBLEM`, as
        gridjit makes it (gj_kernel_argument_error)."""
        k = self.kernel
        # A NUL (a type's name may hold one) would end the message in C.
        problem = problem.replace("\0", "\\x00").encode("utf-8", "backslashreplace")
        status = _capi.gj_kernel_argument_error(k.module._handle, k.index, self.index, problem)
        return _capi.error(status, "gj_kernel_argument_error")


class Kernel:
    """A kernel of a compiled Module. Launch it Numba- and CuPy-style::

        mod.saxpy[grid, block](n, a, x, y)
        mod.saxpy[grid, block](n, 2.0, x=x, y=y)     # arguments by name
        mod.saxpy[grid, block, stream](...)          # CUDA: a stream
        mod.saxpy[grid, block, stream, shared](...)  # + dynamic shared bytes

    ``grid`` and ``block`` are ints or tuples of 1 to 3 ints. Arguments
    are given by position, by parameter name, or both (positional ones
    first); ``timeout=``, ``cancel=``, ``print_buffer_bytes=``,
    ``check_max_findings=`` and ``check_same_value_writes=`` are always the
    launch's options (below), so a parameter of such a name is given by
    position. A host kernel's ``print`` output goes to ``sys.stdout`` after
    the launch (``print_buffer_bytes=`` sizes its buffer; docs/Python.md,
    "Printing from a kernel"). On the host
    target the call returns when the kernel has finished; on CUDA when it is
    queued (``runtime.synchronize()`` or a copy waits for it). A host launch
    takes ``timeout=SECONDS`` (KernelTimeoutError once it has passed) and
    ``cancel=CancelToken`` (KernelCancelledError once cancelled), both
    checked between blocks, and Ctrl-C stops a long one (KeyboardInterrupt):
    docs/Python.md, "Timeouts, cancellation and Ctrl-C". A kernel of
    checked code (``compile(..., check=True)``) raises KernelCheckError at
    its first finding, or once it has ``check_max_findings=N`` distinct
    ones; ``check_same_value_writes=True`` also reports unsynchronised
    writes of the same value (docs/Python.md, "The kernel checker"). Every
    array argument is passed with its extent, its bytes from its address
    to its end.
    """

    __slots__ = (
        "module",
        "index",
        "name",
        "params",
        "cooperative",
        "uses_dynamic_shared",
        "static_shared_bytes",
        "_name_b",
        "_nargs",
        "_nargs_c",
        "_launch",
        "_template",
        "_layout",
        "_pool",
        "_launchers",
        "_launcher_class",
        "_lm",
        "_cuda",
        "__weakref__",
    )

    def __init__(self, module, index, name, params, cooperative, uses_dynamic_shared, static_shared_bytes):
        self.module = module
        self.index = index
        self.name = name
        self.params = tuple(params)
        self.cooperative = cooperative
        self.uses_dynamic_shared = uses_dynamic_shared
        self.static_shared_bytes = static_shared_bytes
        self._name_b = name.encode("utf-8")
        self._nargs = len(self.params)
        self._nargs_c = c_size_t(self._nargs)
        self._cuda = module.target == "cuda"
        # The gj_arg array with every constant field filled in: the kind of
        # every argument and the type of every parameter (a pointer's claimed
        # pointee is the parameter's own, once the launch function checked
        # it). Each launch writes a pointer's extent.
        L = self._layout = _Layout()
        template = bytearray(L.size * self._nargs)
        for i, p in enumerate(self.params):
            kind = _capi.GJ_ARG_DEVICE_POINTER if p.is_pointer else _capi.GJ_ARG_SCALAR
            struct.pack_into("=I", template, i * L.size + L.kind, kind)
            struct.pack_into("=I", template, i * L.size + L.type, p.type.code if p.type is not None else _types.ANY_CODE)
        self._template = bytes(template)
        self._pool = []
        self._launchers = {}
        self._lm = None
        self._launch = self._generate_launch()

    @property
    def signature(self):
        """``"saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>)"``."""
        return "%s(%s)" % (self.name, ", ".join(str(p) for p in self.params))

    def __repr__(self):
        return "<gridjit.Kernel %s on %s>" % (self.signature, self.module.target)

    def __call__(self, *args, **kwargs):
        raise TypeError(
            "gridjit: kernel '%s' needs a launch configuration: %s[grid, block](...)" % (self.name, self.name)
        )

    def __getitem__(self, config):
        # Keyed on the types as well as the values: (1, 8), (1.0, 8) and
        # (True, 8) are equal and hash alike, and only the first is a valid
        # configuration (_Launcher refuses the others, cached or not).
        try:
            key = _typed_key(config)
            launcher = self._launchers.get(key)
        except TypeError:  # an unhashable configuration (a list): not cached
            return self._launcher_class(self, config)
        if launcher is None:
            launcher = self._launcher_class(self, config)
            if len(self._launchers) >= 256:
                self._launchers.clear()
            self._launchers[key] = launcher
        return launcher

    def launch(self, grid, block, /, *args, stream=None, shared=0, timeout=None, cancel=None, **kwargs):
        """The same as ``kernel[grid, block, stream, shared](*args,
        timeout=timeout, cancel=cancel, **kwargs)``: a parameter named
        stream, shared, timeout or cancel is given by position here."""
        return self._launcher_class(self, (grid, block, stream, shared))(
            *args, timeout=timeout, cancel=cancel, **kwargs
        )

    def _bind(self, config, args, kw):
        """The launch's arguments in parameter order, from \\p args by
        position and then \\p kw by parameter name (a launch's keywords
        other than its options), or an ArgumentError naming the signature:
        a name that is no parameter, a parameter given twice or not at
        all. Only launches given keywords come here."""
        params = self.params
        if len(args) > len(params):
            raise self._count_error(config, args + tuple(kw.values()))
        index = {p.name: i for i, p in enumerate(params)}
        unknown = [name for name in kw if name not in index]
        if unknown:
            hint = ""
            close = difflib.get_close_matches(str(unknown[0]), list(index), n=1)
            if len(unknown) == 1 and close:
                hint = " (did you mean '%s'?)" % close[0]
            raise ArgumentError(
                "kernel '%s' has no parameter%s %s%s: its signature is %s"
                % (
                    self.name,
                    "s" if len(unknown) > 1 else "",
                    ", ".join("'%s'" % name for name in unknown),
                    hint,
                    self.signature,
                ),
                "GJ_ERROR_ARGUMENT",
            )
        bound = list(args) + [_UNSET] * (len(params) - len(args))
        for name, value in kw.items():
            i = index[name]
            if i < len(args):
                raise _Argument(self, i).error(
                    "was given twice, by position and as %s=: the kernel takes %s" % (name, self.signature)
                )
            bound[i] = value
        missing = [i for i, v in enumerate(bound) if v is _UNSET]
        if missing:
            names = [params[i].name for i in missing]
            option = [n for n in names if n in _LAUNCH_OPTIONS]
            raise _Argument(self, missing[0]).error(
                "was not given (missing: %s): the kernel takes %s%s"
                % (
                    ", ".join(names),
                    self.signature,
                    "; %s= is the launch's option, so give the parameter %s by position"
                    % (option[0], option[0])
                    if option
                    else "",
                )
            )
        return tuple(bound)

    # ---- The launch path --------------------------------------------------

    def _loaded(self):
        lm = self._lm
        if lm is None:
            lm = self._lm = c_void_p(self.module._loaded_handle().value)
        return lm

    def _pointer_function(self, i, p):
        """The general path of pointer argument \\p i: ``f(slot, v, stream)``
        checks any kind of memory the target takes, keeps what must stay
        alive in ``slot.keep``, and returns the address and the extent."""
        where = _Argument(self, i)
        t = p.type
        find = self._cuda_pointer if self._cuda else self._host_pointer

        def pointer(slot, v, stream):
            if v is None:  # KIR's null pointer (docs/LangRef.md, section 2)
                return 0, 0
            address, got, keep, extent = find(v, where, stream)
            if t is not None and not _types.holds(t, got):
                raise where.error(
                    "must point to %s, but %s (element type %s) was given" % (t.name, _interop.describe(v), got)
                )
            if keep is not None:
                slot.keep.append(keep)
            return address, extent

        return pointer

    def _generate_launch(self):
        """The kernel's launch function, ``launch(config, stream, args)``,
        generated as Python source with one straight-line block per
        parameter (as namedtuple and dataclasses generate theirs): each
        checks its argument against the parameter and writes it into the
        gj_arg array of a slot, with the common cases (an int in range, a
        float, a NumPy array of the right dtype) inline and everything else
        in a helper that converts or explains. Then one gj_launch."""
        L = self._layout
        env = {
            "check": _capi.check,
            "launch_raw": _launch,
            "pool": self._pool,
            "new_slot": lambda: _Slot(self._template, L),
            "kernel": self,
            "name": self._name_b,
            "nargs": self._nargs_c,
            "arg_size": L.arg_size,
            "ndarray": _ndarray,
            "from_buffer": _char_from_buffer,
            "addressof": _addressof,
            "as_bool": _as_bool,
            "as_int": _as_int,
            "as_float": _as_float,
            "as_f32": _as_f32,
            "out_of_range": _out_of_range,
            "check_f32": _check_f32,
            "F32_LIMIT": _F32_LIMIT,
        }
        names = ["a%d" % i for i in range(self._nargs)]
        body = []
        views = set()
        for i, p in enumerate(self.params):
            a, where, t = names[i], "W%d" % i, p.type
            env[where] = _Argument(self, i)
            qi = (i * L.size + L.value) // 8  # the value's index in an 8-byte view
            if p.is_pointer:
                views.add("Q")
                env["pointer%d" % i] = self._pointer_function(i, p)
                # The address, and the extent where the gj_arg has one.
                if L.extent is None:
                    general = "Q[%d] = pointer%d(slot, %s, stream)[0]" % (qi, i, a)
                    fast_extent = []
                else:
                    qe = (i * L.size + L.extent) // 8
                    general = "Q[%d], Q[%d] = pointer%d(slot, %s, stream)" % (qi, qe, i, a)
                    fast_extent = ["        Q[%d] = %s.nbytes" % (qe, a)]
                if self._cuda or _np is None or t is None:
                    body.append(general)
                    continue
                env["DT%d" % i] = _types.numpy_dtype(t)
                body += [
                    "if type(%s) is ndarray and %s.dtype is DT%d:" % (a, a, i),
                    "    try:",
                    "        Q[%d] = addressof(from_buffer(%s))" % (qi, a),
                    *fast_extent,
                    "    except Exception:  # read-only, not contiguous, empty: the general path says which",
                    "        " + general,
                    "else:",
                    "    " + general,
                ]
            elif t.kind == "b":
                views.add("q")
                body += [
                    "q[%d] = %s if %s is True or %s is False else as_bool(%s, %s)" % (qi, a, a, a, a, where),
                ]
            elif t.kind in "iu":
                view = "q" if t.kind == "i" else "Q"
                views.add(view)
                body += [
                    "if type(%s) is not int:" % a,
                    "    %s = as_int(%s, %s)" % (a, a, where),
                    "if %s < %d or %s > %d:" % (a, t.min, a, t.max),
                    "    raise out_of_range(%s, %s, %r)" % (a, where, t.name),
                    "%s[%d] = %s" % (view, qi, a),
                ]
            elif t.itemsize == 8:
                views.add("d")
                body.append("d[%d] = %s if type(%s) is float else as_float(%s, %s)" % (qi, a, a, a, where))
            else:
                views.add("f")
                body += [
                    "if type(%s) is not float:" % a,
                    "    %s = as_f32(%s, %s)" % (a, a, where),
                    "if not -F32_LIMIT < %s < F32_LIMIT:" % a,
                    "    check_f32(%s, %s)" % (a, where),
                    "f[%d] = %s" % ((i * L.size + L.value) // 4, a),
                ]
        # The body, shared by the two functions made of it below.
        lines = []
        if names:
            lines += [
                "    try:",
                "        %s, = args" % ", ".join(names),
                "    except ValueError:",
                "        raise kernel._count_error(config, args) from None",
            ]
        else:
            lines += ["    if args:", "        raise kernel._count_error(config, args)"]
        lines += [
            "    lm = kernel._lm or kernel._loaded()",
            # One atomic pop, never a check then a pop: another thread may
            # take the last slot in between (test_concurrency.py).
            "    try:",
            "        slot = pool.pop()",
            "    except IndexError:",
            "        slot = new_slot()",
            "    try:",
        ]
        lines += ["        %s = slot.%s" % (v, v) for v in sorted(views)]
        lines += ["        " + line for line in body]
        lines += [
            "        status = launch_raw(lm, name, config, slot.carray, nargs, arg_size)",
            "    finally:",
            "        if slot.keep:",
            "            slot.keep.clear()",
            "        pool.append(slot)",
            "    if status:",
            "        check(status, 'gj_launch')",
        ]
        # launch(config, stream, args), for every path; and the kernel's
        # launchers' __call__, the fast path, with the body inline (one
        # Python frame less): a launch given a keyword (an argument by name,
        # an option), or a long one, goes to _Launcher._launch_with, which
        # calls launch(). Keywords come as **kw, whose emptiness is the
        # fast path's one test (cheaper than testing two keyword-only
        # options for None).
        source = "\n".join(
            ["def launch(config, stream, args):"]
            + lines
            + [
                "",
                "def call(self, /, *args, **kw):",
                "    if kw or self._long:",
                "        return self._launch_with(args, kw)",
                "    config = self._config",
                "    stream = self.stream",
            ]
            + lines
        ) + "\n"
        exec(compile(source, "<gridjit launch of %s>" % self.name, "exec"), env)
        launch = env["launch"]
        launch.source = source
        self._launcher_class = type("_Launcher", (_Launcher,), {"__slots__": (), "__call__": env["call"]})
        return launch

    def _count_error(self, config, args):
        """The error of a launch with the wrong number of arguments, as
        gj_launch says it: it is given that many arguments (zeros) and
        refuses their count before it reads any of them."""
        L = self._layout
        n = len(args)
        array = (L.cls * max(n, 1))()
        status = _launch(self._lm or self._loaded(), self._name_b, config, array, c_size_t(n), L.arg_size)
        if status == _capi.GJ_OK:  # cannot be: the counts differ
            raise AssertionError("gridjit: gj_launch took %d arguments for kernel '%s'" % (n, self.name))
        return _capi.error(status, "gj_launch")

    def _host_pointer(self, v, where, stream=None):
        """(address, type, keepalive, extent) of host memory \\p v."""
        try:
            if isinstance(v, DeviceArray):
                if v.runtime.target != "host":
                    raise _interop.Reject("a DeviceArray in CUDA device memory cannot be passed to a host kernel")
                return v._address, v.dtype, None, v.nbytes
            ai = getattr(v, "__array_interface__", None)
            if ai is not None:
                address, t, extent = _interop.from_array_interface(ai)
                return address, t, None, extent
            if hasattr(v, "__cuda_array_interface__"):
                raise _interop.Reject("CUDA device memory (__cuda_array_interface__) cannot be passed to a host kernel")
            if hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
                return _interop.from_dlpack(v, False)
            got = _interop.from_buffer(v)
            if got is not None:
                return got
        except _interop.Reject as e:
            raise where.error("cannot take %s: %s" % (_interop.describe(v), e)) from None
        raise where.error(
            "must be an array (NumPy, the buffer protocol, DLPack, gridjit.DeviceArray), but %s was given" % _got(v)
        )

    def _cuda_pointer(self, v, where, stream):
        """(address, type, keepalive, extent) of CUDA device memory \\p v."""
        try:
            if type(v) is DeviceArray:
                rt = v.runtime
                if rt.target != "cuda":
                    raise _interop.Reject(
                        "a DeviceArray in host memory cannot be passed to a CUDA kernel; allocate it with "
                        "target='cuda'"
                    )
                own = self.module.runtime
                if rt is not own and rt.device != own.device:
                    raise _interop.Reject(
                        "the DeviceArray is on CUDA device %d, the kernel runs on device %d" % (rt.device, own.device)
                    )
                return v._address, v.dtype, None, v.nbytes
            cai = getattr(v, "__cuda_array_interface__", None)
            if cai is not None:
                address, t, extent = _interop.from_array_interface(cai, "__cuda_array_interface__")
                return address, t, None, extent
            host = hasattr(v, "__array_interface__") or _is_buffer(v)
            if not host and hasattr(v, "__dlpack__") and hasattr(v, "__dlpack_device__"):
                host = v.__dlpack_device__()[0] == _interop.kDLCPU
                if not host:
                    return _interop.from_dlpack(v, True, stream)
            if host:
                raise _interop.Reject(
                    "host memory cannot be passed to a CUDA kernel; copy it to the device first "
                    "(gridjit.to_device(array), or your framework's own)"
                )
        except _interop.Reject as e:
            raise where.error("cannot take %s: %s" % (_interop.describe(v), e)) from None
        raise where.error(
            "must be a device array (__cuda_array_interface__, DLPack, gridjit.DeviceArray), but %s was given"
            % _got(v)
        )


def _typed_key(value, depth=2):
    """A dictionary key for \\p value that holds the type of every part of
    it: values that compare equal across types (1, 1.0, True,
    numpy.int64(1)) get different keys, so that a cache keyed on it never
    takes one for the other. Tuples nest \\p depth levels at most (a launch
    configuration's grid and block); deeper, TypeError, as for a value that
    cannot be a key."""
    if isinstance(value, tuple):
        if depth == 0:
            raise TypeError("gridjit: a tuple nested too deep for a key")
        return (type(value), tuple(_typed_key(v, depth - 1) for v in value))
    return (type(value), value)


def _is_buffer(v):
    try:
        memoryview(v)
        return True
    except TypeError:
        return False


def _got(v):
    r = repr(v)
    if len(r) > 40:
        r = r[:37] + "..."
    return "%s %s" % (_interop.describe(v), r)


def _as_bool(v, where):
    """\\p v as a bool for a bool parameter: True, False, numpy.bool_."""
    if isinstance(v, _np_bool):
        return bool(v)
    raise where.error("must be a bool (True or False), but %s was given" % _got(v))


def _out_of_range(v, where, type_name):
    t = _types.BY_NAME[type_name]
    return where.error("must fit in %s (%d to %d), but %d was given" % (t.name, t.min, t.max, v))


def _check_f32(v, where):
    """Infinities and NaN pass; a finite value that would round to an f32
    infinity does not."""
    if v == v and v not in (float("inf"), float("-inf")):
        raise where.error("must fit in f32, but %r was given (it would round to infinity)" % (v,))


def _rounded(v, to, where):
    """NumPy float \\p v rounded to \\p to (numpy.float32 or numpy.float64)
    directly, in \\p v's own precision, as C rounds it (a longdouble has more
    range and precision than f64: through float(), 1e400 would become inf
    and a value just below the f32 limit would round up to it); a finite
    value that becomes infinite is refused."""
    with _np.errstate(over="ignore"):
        r = to(v)
    if _np.isinf(r) and _np.isfinite(v):
        raise where.error(
            "must fit in %s, but %s was given (it would round to infinity)" % (_types.resolve(to).name, _got(v))
        )
    return float(r)


def _as_f32(v, where):
    """\\p v (anything but a float) as the float an f32 parameter gets,
    checked in \\p v's own precision before it is converted: a NumPy float
    is rounded to f32 directly; an int or another real is compared with the
    f32 limit exactly, and one inside it that reaches the limit only through
    f64's rounding becomes the largest f32, as it would in C. What is left
    beyond the limit, the launch's check of the float refuses."""
    if _np is not None and isinstance(v, _np.floating):
        return _rounded(v, _np.float32, where)
    f = _as_float(v, where)
    if -_F32_LIMIT < v < _F32_LIMIT and not -_F32_LIMIT < f < _F32_LIMIT:
        return math.copysign(_F32_MAX, f)
    return f


def _as_int(v, where):
    """\\p v as an int for an integer parameter: ints and NumPy integers;
    not bools, floats or anything else."""
    if isinstance(v, (bool, _np_bool)):
        raise where.error("must be an integer, but a bool (%r) was given" % (v,))
    if isinstance(v, numbers.Integral) or (
        _np is not None and isinstance(v, _np.integer)
    ):
        return int(v)
    if isinstance(v, numbers.Real):
        raise where.error("must be an integer, but %s was given (floats are not converted to integers)" % _got(v))
    raise where.error("must be an integer, but %s was given" % _got(v))


def _as_float(v, where):
    """\\p v as a float for a floating-point parameter: floats, ints, NumPy
    reals; not bools, complex numbers or anything else."""
    if isinstance(v, (bool, _np_bool)):
        raise where.error("must be a real number, but a bool (%r) was given" % (v,))
    if _np is not None and isinstance(v, _np.floating):
        return _rounded(v, _np.float64, where)
    if isinstance(v, numbers.Real) or (_np is not None and isinstance(v, _np.integer)):
        try:
            return float(v)
        except OverflowError:
            raise where.error("must be a real number that fits in an f64, but %s was given" % _got(v)) from None
    raise where.error("must be a real number, but %s was given" % _got(v))


def _workers(kernel):
    """The threads of the host runtime \p kernel launches on."""
    rt = kernel.module.runtime
    if rt.threads:
        return rt.threads
    try:
        return len(os.sched_getaffinity(0))  # what the runtime counts
    except (AttributeError, OSError):
        return os.cpu_count() or 1


def _write_printed(text, size, _user):
    """gj_print_callback of host launches: a kernel's print output goes to
    ``sys.stdout`` as it is when the launch ends (so that
    ``contextlib.redirect_stdout`` and pytest's ``capsys`` capture it)."""
    sys.stdout.write(ctypes.string_at(text, size).decode("utf-8", "replace"))


# One callback for every launch; it must live as long as the package.
_PRINT_CALLBACK = _capi.gj_print_callback(_write_printed)
_PRINT_CALLBACK_ADDRESS = ctypes.cast(_PRINT_CALLBACK, c_void_p).value


class _Launcher:
    """A kernel with a launch configuration: call it with the arguments."""

    __slots__ = ("kernel", "grid", "block", "stream", "shared", "_struct", "_config", "_launch", "_long", "_can_stop")

    def __init__(self, kernel, config):
        if not isinstance(config, tuple) or not 2 <= len(config) <= 4:
            raise ConfigurationError(
                "gridjit: kernel '%s': the launch configuration is [grid, block], [grid, block, stream] or "
                "[grid, block, stream, shared_bytes], not [%r]" % (kernel.name, config)
            )
        grid, block = config[0], config[1]
        stream = config[2] if len(config) > 2 else None
        shared = config[3] if len(config) > 3 else 0
        self.kernel = kernel
        # Values a gj_launch_config holds are gj_launch's to refuse (a
        # dimension of 0, too many threads, shared memory the kernel does
        # not declare, a stream for a host kernel), in gridjit's words.
        self.grid = _dim3(kernel, grid, "grid")
        self.block = _dim3(kernel, block, "block")
        if not isinstance(shared, int) or isinstance(shared, bool) or not 0 <= shared < _U32:
            raise ConfigurationError(
                "gridjit: kernel '%s': shared memory bytes %r: expected an int from 0 to 2**32-1" % (kernel.name, shared)
            )
        self.shared = shared
        self.stream = _interop.stream_handle(stream)
        c = _capi.new_struct("gj_launch_config")
        c.grid[:] = self.grid
        c.block[:] = self.block
        c.dynamic_shared_bytes = shared
        c.stream = self.stream or None
        if not kernel._cuda:  # a GPU's printf goes to the process's stdout (docs/Python.md)
            c.print_callback = _PRINT_CALLBACK_ADDRESS
        self._struct = c  # what _config points into
        self._config = byref(c)
        self._launch = kernel._launch
        # A host launch with more blocks than the runtime has threads can be
        # stopped between blocks; a long one (many threads for each runtime
        # thread) takes the interruptible path by itself (_cancel.py).
        self._can_stop = self._long = False
        blocks = self.grid[0] * self.grid[1] * self.grid[2]
        if not kernel._cuda and blocks > 1:
            workers = _workers(kernel)
            self._can_stop = blocks > workers
            threads = blocks * self.block[0] * self.block[1] * self.block[2]
            self._long = self._can_stop and threads >= workers * _cancel.LONG_LAUNCH_THREADS_PER_WORKER

    def __repr__(self):
        return "<gridjit launch of %s grid=%s block=%s shared=%d stream=%#x>" % (
            self.kernel.name,
            self.grid,
            self.block,
            self.shared,
            self.stream,
        )

    def __call__(self, /, *args, **kw):
        # What each kernel's launchers do, in one generated function
        # (Kernel._generate_launch): this one is never called on them.
        if kw or self._long:
            self._launch_with(args, kw)
        else:
            self._launch(self._config, self.stream, args)

    def _launch_with(self, args, kw):
        """A launch given keywords (arguments by name, the options timeout=
        and cancel=), or a long one. With a timeout or a cancel token, or a
        long one: on the main thread, with Python's SIGINT handler, one
        whose grid has more blocks than the runtime has threads runs
        interruptibly (_cancel.run_interruptibly), Ctrl-C cancelling its
        token."""
        kernel = self.kernel
        timeout = kw.pop("timeout", None)
        cancel = kw.pop("cancel", None)
        print_bytes = kw.pop("print_buffer_bytes", 0)
        max_findings = kw.pop("check_max_findings", 1)
        same_value_writes = kw.pop("check_same_value_writes", False)
        if kw:
            args = kernel._bind(self._config, args, kw)
        ms = _cancel.timeout_ms(kernel, timeout)
        token = None if cancel is None else _cancel.check_token(kernel, cancel)
        if not isinstance(print_bytes, int) or isinstance(print_bytes, bool) or not 0 <= print_bytes < 2**64:
            raise ConfigurationError(
                "gridjit: kernel '%s': print_buffer_bytes %r: expected an int from 0 (the default, 1 MiB) "
                "to 2**30" % (kernel.name, print_bytes)
            )
        if not isinstance(max_findings, int) or isinstance(max_findings, bool) or not 0 <= max_findings < _U32:
            raise ConfigurationError(
                "gridjit: kernel '%s': check_max_findings %r: expected an int from 1 (the default) to 2**32-1"
                % (kernel.name, max_findings)
            )
        if not isinstance(same_value_writes, (bool, _np_bool)):
            raise ConfigurationError(
                "gridjit: kernel '%s': check_same_value_writes %r: expected True or False"
                % (kernel.name, same_value_writes)
            )
        interruptible = self._can_stop and _cancel.interruptible_here()
        if interruptible and token is None:
            token = _cancel.CancelToken()
        checked = max_findings > 1 or same_value_writes
        if ms == 0 and token is None and print_bytes == 0 and not checked:
            self._launch(self._config, self.stream, args)
            return
        c = type(self._struct).from_buffer_copy(self._struct)
        if checked:
            c.check_max_findings = max_findings
            c.check_same_value_writes = 1 if same_value_writes else 0
        c.print_buffer_bytes = print_bytes
        c.timeout_ms = ms
        c.cancel = token._handle.value if token is not None else None
        if interruptible:
            _cancel.run_interruptibly(self._launch, byref(c), self.stream, args, token)
        else:
            self._launch(byref(c), self.stream, args)
