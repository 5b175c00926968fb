"""Compilers, compiled modules, compile() and compile_async()."""

import os
import struct
import threading
import weakref
from concurrent.futures import Future
from ctypes import byref, c_char_p, c_int32, c_size_t, c_uint64, c_void_p, create_string_buffer, string_at

from . import _capi, _types
from ._errors import InvalidArgumentError, NotFoundError
from ._handle import Handle
from ._kernel import Kernel, Param
from ._runtime import DEFAULT_TARGET, cuda_arch, runtime_target
from ._runtime import runtime as _default_runtime

# Python's target names -> the compiler's.
_COMPILER_TARGETS = {"host": "host", "cuda": "nvptx", "nvptx": "nvptx"}


def _compiler_target(spec):
    """("nvptx", "sm_80") for "cuda:sm_80", ("host", "") for "host"."""
    name, _, arch = str(spec).strip().partition(":")
    try:
        return _COMPILER_TARGETS[name.lower()], arch
    except KeyError:
        raise InvalidArgumentError("gridjit: unknown target %r (known: host, cuda)" % (spec,)) from None


def _targets_string(targets):
    if targets is None:
        return None
    if isinstance(targets, str):
        targets = targets.split(",")
    out = []
    for t in targets:
        name, arch = _compiler_target(t)
        out.append(name + (":" + arch if arch else ""))
    return ",".join(out)


def _check_arch(check_arch):
    """The architecture number of \\p check_arch, an int (80) or "sm_80".
    Whether there is checked code for it is gj_compile's to say."""
    value = check_arch
    if isinstance(value, str) and value.lower().startswith("sm_") and value[3:].isdigit():
        value = int(value[3:])
    if not isinstance(value, int) or isinstance(value, bool) or not 0 <= value < 1 << 32:
        raise InvalidArgumentError(
            "gridjit: check_arch must be a GPU architecture such as 80 or 'sm_80', not %r" % (check_arch,)
        )
    return value


def _source_bytes(source, name):
    if isinstance(source, os.PathLike):
        path = os.fspath(source)
        with open(path, "rb") as f:
            return f.read(), name if name is not None else path
    if isinstance(source, str):
        return source.encode("utf-8"), name
    if isinstance(source, (bytes, bytearray, memoryview)):
        return bytes(source), name
    raise TypeError(
        "gridjit: the source must be KIR text (str or bytes) or a path (os.PathLike), not %s" % type(source).__name__
    )


class Compiler:
    """Compiles KIR for the host CPU and NVIDIA GPUs, with a content-hashed
    memory and disk cache (docs/Cache.md). Thread-safe: any number of
    threads may compile at once; compiles of one source compile once.

    ``targets``: the targets it compiles for, e.g. ``"host"``, ``"cuda"``,
    ``"cuda:sm_90"`` or a list of them (default: host and cuda); the first
    is the default target of compile(). ``opt_level``: 0..3 (default 3).
    ``threads``: threads for compile_async, 0 for the CPUs this process may
    run on. ``use_disk_cache``, ``cache_dir``: the disk cache and its
    directory (default: $GRIDJIT_CACHE_DIR, $XDG_CACHE_HOME/gridjit,
    ~/.cache/gridjit). ``check``: every compile makes checked code (the
    kernel checker, docs/Check.md; host target only: a compile for cuda is
    then an InvalidArgumentError), held to the limits of GPU architecture
    ``check_arch`` (80 or "sm_80", the default; 70 to 90)."""

    def __init__(
        self, targets=None, *, opt_level=3, threads=0, use_disk_cache=True, cache_dir=None, check=False, check_arch=80
    ):
        opts = _capi.new_struct("gj_compiler_options")
        self.targets = _targets_string(targets) if targets is not None else "host,nvptx"
        opts.targets = _capi.encode(self.targets, "targets")
        if not isinstance(opt_level, int) or isinstance(opt_level, bool) or not 0 <= opt_level <= 3:
            raise InvalidArgumentError("gridjit: opt_level must be 0, 1, 2 or 3, not %r" % (opt_level,))
        opts.opt_level = opt_level
        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads < 1 << 32:
            raise InvalidArgumentError("gridjit: threads must be a non-negative integer, not %r" % (threads,))
        opts.threads = threads
        opts.use_disk_cache = 1 if use_disk_cache else 0
        opts.cache_dir = _capi.encode_path(cache_dir, "cache_dir")
        self.check = bool(check)
        self.check_arch = _check_arch(check_arch)
        opts.check = 1 if self.check else 0
        opts.check_arch = self.check_arch
        out = c_void_p()
        _capi.check(_capi.gj_compiler_create(byref(opts), byref(out)), "gj_compiler_create")
        self._handle = Handle(out.value, _capi.gj_compiler_destroy)
        self.opt_level = opt_level
        self.threads = threads

    def __repr__(self):
        checked = " check=sm_%d" % self.check_arch if self.check else ""
        return "<gridjit.Compiler targets=%s opt_level=%d%s>" % (self.targets, self.opt_level, checked)

    @property
    def warnings(self):
        """The warnings this compiler has given, in order (a tuple of str):
        what jit-run prints as ``gridjit: warning: ...``, which a library
        never prints. Today: a disk cache directory that cannot be used (the
        compiler then caches in memory only)."""
        h = self._handle
        n = _capi.gj_compiler_warning_count(h)
        return tuple(_capi.gj_compiler_warning(h, i).decode("utf-8", "replace") for i in range(n))

    def _target_arg(self, target):
        if target is None:
            return None
        name, arch = _compiler_target(target)
        if arch:
            raise InvalidArgumentError(
                "gridjit: compile(target=%r): the architecture is the compiler's choice; make a "
                "gridjit.Compiler(targets=%r) for it" % (target, target)
            )
        return name.encode()

    def compile(self, source, target=None, *, name=None, runtime=None):
        """Compiles KIR \\p source (text, bytes, or a path) for \\p target
        ("host" or "cuda"; default: the compiler's first target), or finds
        it in the cache. \\p name names the source in diagnostics. Kernels
        of the module launch on \\p runtime (default: the shared runtime of
        the target, started on first launch). Raises CompileError with the
        located diagnostic."""
        data, name = _source_bytes(source, name)
        out = c_void_p()
        _capi.check(
            _capi.gj_compile(
                self._handle, data, len(data), _capi.encode(name, "name"), self._target_arg(target), byref(out)
            ),
            "gj_compile",
        )
        return Module(Handle(out.value, _capi.gj_module_release), runtime, source=_Source(self, data, name))

    def compile_async(self, source, target=None, *, name=None, runtime=None):
        """compile() on one of the compiler's own threads: returns a
        concurrent.futures.Future of the Module at once. The compile runs in
        the library (no Python thread and no GIL involved); a small waiter
        thread, blocked in gj_compile_job_wait without the GIL, completes
        the future."""
        data, name = _source_bytes(source, name)
        target_arg = self._target_arg(target)
        out = c_void_p()
        _capi.check(
            _capi.gj_compile_async(self._handle, data, len(data), _capi.encode(name, "name"), target_arg, byref(out)),
            "gj_compile_async",
        )
        job = Handle(out.value, _capi.gj_compile_job_destroy, self._handle)
        future = Future()
        future.set_running_or_notify_cancel()
        pending = (job, future, runtime, _Source(self, data, name))
        with _pending_lock:
            _pending.add(pending)
        _start_waiter(pending)
        return future


# compile_async's jobs whose waiter has not finished: a child of fork(),
# which has none of the parent's threads, starts a waiter of its own for
# each (_after_fork_in_child).
_pending_lock = threading.Lock()
_pending = set()


def _start_waiter(pending):
    threading.Thread(target=_wait_for_job, args=pending, name="gridjit-compile-wait", daemon=True).start()


def _wait_for_job(job, future, runtime, source):
    try:
        out = c_void_p()
        status = _capi.gj_compile_job_wait(job, byref(out))
        _capi.check(status, "gj_compile_job_wait")
        module = Module(Handle(out.value, _capi.gj_module_release), runtime, source=source)
    except BaseException as e:  # the future carries every failure
        future.set_exception(e)
    else:
        future.set_result(module)
    finally:
        with _pending_lock:
            _pending.discard((job, future, runtime, source))
        job.close()


class _Source:
    """What a Module was compiled from, for inspect_llvm() and
    inspect_asm(): the compiler (its targets and optimisation level), the
    source's bytes and its name."""

    __slots__ = ("compiler", "data", "name")

    def __init__(self, compiler, data, name):
        self.compiler = compiler
        self.data = data
        self.name = name


class Module:
    """A compiled module: its kernels as attributes (``mod.saxpy``) or
    items (``mod["saxpy"]``), ``target`` ("host" or "cuda"), ``arch``,
    ``payload`` (the object file or PTX), ``kernel_names``,
    ``inspect_llvm()`` and ``inspect_asm()``. The module is loaded into its
    runtime on the first launch.

    The module's own attributes come first: a kernel whose name is one of
    them (``ptx``, ``target``, ...) is ``mod["ptx"]``, and an attribute that
    fails (``ptx`` of a host module) raises its own error, never "no
    kernel"."""

    def __init__(self, handle, runtime=None, _kernels=None, source=None):
        self._handle = handle
        self._source = source
        self._texts = {}
        target = _capi.gj_module_target(handle).decode()
        self._compiler_target = target.encode()
        self.target = "cuda" if target == "nvptx" else target
        self.arch = _capi.gj_module_arch(handle).decode()
        if runtime is not None and runtime_target(runtime.target) != self.target:
            raise InvalidArgumentError(
                "gridjit: a module compiled for %s cannot run on a %s runtime" % (self.target, runtime.target)
            )
        self._runtime = runtime
        self._lock = threading.Lock()
        _modules.add(self)  # its lock is renewed in a child of fork()
        self._lm = None
        self._kernels = {}
        infos = _kernels if _kernels is not None else _read_kernels(handle)
        for index, (name, params, coop, dyn, static) in enumerate(infos):
            self._kernels[name] = Kernel(self, index, name, params, coop, dyn, static)
        self._infos = tuple(
            (k.name, k.params, k.cooperative, k.uses_dynamic_shared, k.static_shared_bytes) for k in self._kernels.values()
        )
        # Each kernel whose name is free is an attribute of the instance:
        # mod.saxpy is a plain lookup. A name of the class's (ptx, load, ...)
        # or one already set above stays the module's; mod["name"] reaches
        # the kernel.
        for name, kernel in self._kernels.items():
            if name not in self.__dict__ and not hasattr(type(self), name):
                self.__dict__[name] = kernel

    def __repr__(self):
        return "<gridjit.Module %s (%s) kernels: %s>" % (self.target, self.arch, ", ".join(self._kernels) or "none")

    @property
    def kernel_names(self):
        """The kernels' names, in the module's order."""
        return tuple(self._kernels)

    @property
    def kernels(self):
        """The Kernel objects, by name."""
        return dict(self._kernels)

    def __getattr__(self, name):
        # Python calls this when normal lookup raised AttributeError: the
        # name is no attribute (the kernels are attributes: __init__), or
        # one of the class's that failed (a property such as ptx, which
        # raises AttributeError to say why). The latter is looked up again,
        # to raise its own error.
        if hasattr(type(self), name):
            return object.__getattribute__(self, name)
        kernels = self.__dict__.get("_kernels")
        if name.startswith("__") or kernels is None:
            raise AttributeError(name)
        raise AttributeError(
            "gridjit: the module has no kernel '%s' (its kernels: %s)" % (name, ", ".join(kernels) or "none")
        )

    def __getitem__(self, name):
        try:
            return self._kernels[name]
        except KeyError:
            raise NotFoundError(
                "gridjit: the module has no kernel '%s' (its kernels: %s)" % (name, ", ".join(self._kernels) or "none")
            ) from None

    def __contains__(self, name):
        return name in self._kernels

    def __iter__(self):
        return iter(self._kernels.values())

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._kernels))

    @property
    def payload(self):
        """The compiled bytes: a relocatable object (host) or PTX (cuda)."""
        data, size = c_void_p(), c_size_t()
        _capi.check(_capi.gj_module_payload(self._handle, byref(data), byref(size)), "gj_module_payload")
        return string_at(data.value, size.value) if size.value else b""

    @property
    def ptx(self):
        """The PTX text of a cuda module. A host module has none: reading it
        raises AttributeError saying so (``hasattr(mod, "ptx")`` is False)."""
        if self.target != "cuda":
            raise AttributeError(
                "gridjit: Module.ptx: this module was compiled for %s (%s), which has no PTX: compile with "
                "target=\"cuda\" for PTX (mod.payload is the host's object file, mod.inspect_asm() its assembly)"
                % (self.target, self.arch)
            )
        return self.payload.decode("utf-8")

    def inspect_llvm(self):
        """The module's LLVM IR after optimisation (str), as ``jit-run
        --emit=llvm`` prints it: one LLVM module holding every kernel.
        Compiled again, with the module's compiler, target and optimisation
        level, on the first call (the cache holds only the payload); kept
        for the next."""
        return self._emitted("llvm")

    def inspect_asm(self):
        """The module's assembly (str): the host CPU's (as ``jit-run
        --emit=asm`` prints it, compiled again on the first call, as
        inspect_llvm), or, for cuda, the PTX (the payload itself)."""
        if self.target == "cuda":
            return self.ptx
        return self._emitted("asm")

    def _emitted(self, stage):
        text = self._texts.get(stage)
        if text is None:
            src = self._source
            data, size = c_void_p(), c_size_t()
            _capi.check(
                _capi.gj_emit(
                    src.compiler._handle,
                    src.data,
                    len(src.data),
                    _capi.encode(src.name, "name"),
                    self._compiler_target,
                    stage.encode(),
                    byref(data),
                    byref(size),
                ),
                "gj_emit",
            )
            try:
                text = string_at(data.value, size.value).decode("utf-8", "replace")
            finally:
                _capi.gj_text_free(data)
            self._texts[stage] = text
        return text

    @property
    def runtime(self):
        """The Runtime the kernels launch on."""
        rt = self._runtime
        if rt is None:
            rt = self._runtime = _default_runtime(self.target)
        return rt

    def load(self, runtime):
        """This module for launches on \\p runtime (another device, another
        host thread count): a new Module sharing the compiled code."""
        return Module(self._handle, runtime, self._infos, self._source)

    @property
    def constants(self):
        """The module's constant memory (``constant NAME: [T; N];``): a dict
        of each name to its element type and its size in bytes."""
        out = {}
        for i in range(_capi.gj_module_constant_count(self._handle)):
            name, elem, nbytes = c_char_p(), c_int32(), c_uint64()
            _capi.check(
                _capi.gj_module_constant(self._handle, i, byref(name), byref(elem), byref(nbytes)),
                "gj_module_constant",
            )
            out[name.value.decode()] = (_types.BY_CODE[elem.value], nbytes.value)
        return out

    def set_constant(self, name, values):
        """Sets constant memory ``name`` of this module, as loaded into its
        runtime, to ``values``: a C-contiguous array (NumPy, anything with
        the buffer protocol) of the element type, or a sequence (nested for
        a multi-dimensional array) of numbers, with every element. The
        contents start as zero, belong to this Module object's loaded module
        (every kernel of it reads them) and are what every launch after the
        call reads (docs/Python.md, "Constant memory"). Errors:
        NotFoundError for an unknown name, InvalidArgumentError for another
        element type or size."""
        info = self.constants.get(name)
        if info is None:
            raise NotFoundError(
                "gridjit: the module has no constant memory %r (it has: %s)"
                % (name, ", ".join(self.constants) or "none")
            )
        elem, nbytes = info
        data = _constant_bytes(name, elem, values)
        buf = create_string_buffer(data, len(data))
        status = _capi.gj_loaded_module_set_constant(self._loaded_handle(), name.encode(), buf, len(data))
        _capi.check(status, "gj_loaded_module_set_constant")

    def _loaded_handle(self):
        lm = self._lm
        if lm is None:
            with self._lock:
                lm = self._lm
                if lm is None:
                    rt = self.runtime
                    out = c_void_p()
                    _capi.check(_capi.gj_runtime_load(rt._handle, self._handle, byref(out)), "gj_runtime_load")
                    lm = self._lm = Handle(out.value, _capi.gj_loaded_module_destroy, rt._handle)
        return lm


def _constant_bytes(name, elem, values):
    """The bytes of ``values`` for constant memory ``name`` of element type
    ``elem`` (set_constant)."""
    try:
        view = memoryview(values)
    except TypeError:
        view = None
    if view is not None:
        got = _types.from_format(view.format)
        if got is None or not _types.holds(elem, got):
            raise InvalidArgumentError(
                "gridjit: constant memory %r holds %s, given an array of %s" % (name, elem, got or view.format)
            )
        if not view.c_contiguous:
            raise InvalidArgumentError("gridjit: constant memory %r: the array must be C-contiguous" % name)
        return view.tobytes()
    fmt = {v: k for k, v in _types._BY_FORMAT.items() if k not in "lL"}.get(elem)
    if elem is _types.f16:
        fmt = "e"
    if fmt is None:
        raise InvalidArgumentError(
            "gridjit: constant memory %r holds %s: give an array (a sequence of numbers cannot be one)" % (name, elem)
        )
    flat = []

    def walk(v):
        if isinstance(v, (list, tuple)):
            for x in v:
                walk(x)
        else:
            flat.append(v)

    walk(values)
    try:
        return struct.pack("<%d%s" % (len(flat), fmt), *flat)
    except struct.error as e:
        raise InvalidArgumentError("gridjit: constant memory %r: %s" % (name, e)) from None


def _read_kernels(handle):
    infos = []
    for k in range(_capi.gj_module_kernel_count(handle)):
        info = _capi.new_struct("gj_kernel_info")
        _capi.check(_capi.gj_module_kernel(handle, k, byref(info)), "gj_module_kernel")
        params = []
        for p in range(info.num_params):
            pi = _capi.new_struct("gj_param_info")
            _capi.check(_capi.gj_module_kernel_param(handle, k, p, byref(pi)), "gj_module_kernel_param")
            params.append(Param(pi.name.decode(), _types.BY_CODE.get(pi.type), bool(pi.is_pointer)))
        infos.append(
            (info.name.decode(), params, bool(info.cooperative), bool(info.uses_dynamic_shared), info.static_shared_bytes)
        )
    return infos


_defaults_lock = threading.Lock()
_default_compilers = {}
_modules = weakref.WeakSet()


def _after_fork_in_child():
    """A child of fork() has only the thread that forked (the library makes
    its own objects usable there: docs/Python.md, "multiprocessing and
    fork()"). A lock another thread held at the fork would stay held: the
    package's are made anew. A compile_async job still waited for gets a
    waiter of its own; the library finishes the job there (with its
    module, or with an error if the compile was unfinished at the fork)."""
    global _defaults_lock, _pending_lock
    _defaults_lock = threading.Lock()
    _pending_lock = threading.Lock()
    for m in list(_modules):
        m._lock = threading.Lock()
    for pending in list(_pending):
        if not pending[1].done():
            _start_waiter(pending)


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def default_compiler(targets=None, *, check=False, check_arch=80):
    """The process's shared Compiler for \p targets (default: host and
    cuda), created on first use: one for checked code (\p check, held to
    GPU architecture \p check_arch) and one for unchecked code. They all
    share the disk cache."""
    check = bool(check)
    arch = _check_arch(check_arch) if check else 0
    key = (_targets_string(targets) if targets is not None else None, arch)
    c = _default_compilers.get(key)
    if c is None:
        with _defaults_lock:
            c = _default_compilers.get(key)
            if c is None:
                c = _default_compilers[key] = Compiler(targets, check=check, check_arch=arch or 80)
    return c


def _compiler_for(target, compiler, runtime, check=None, check_arch=None):
    """The compiler and the target argument of compile(target=...,
    check=..., check_arch=...). A \p compiler given must have the check
    options asked for (None: whatever it has)."""
    if compiler is not None:
        differs = check is not None and bool(check) != compiler.check
        if check_arch is not None and not differs:
            differs = not compiler.check or _check_arch(check_arch) != compiler.check_arch
        if differs:
            raise InvalidArgumentError(
                "gridjit: compile(check=%r, check_arch=%r) with %r: a compiler's code is checked or not as it "
                "was made; make a gridjit.Compiler(..., check=True, check_arch=...) for checked code"
                % (check, check_arch, compiler)
            )
        return compiler, target
    checked = {"check": bool(check), "check_arch": 80 if check_arch is None else check_arch}
    name, arch = _compiler_target(DEFAULT_TARGET if target is None else target)
    if name == "host":
        return default_compiler("host:" + arch if arch else "host", **checked), None
    # CUDA: unless the caller names the architecture, the device the module
    # will run on decides it, as in jit-run (sm_80 without a device).
    if not arch:
        arch = cuda_arch(runtime.device if runtime is not None else 0) or "sm_80"
    return default_compiler("nvptx:" + arch, **checked), None


def compile(source, target=DEFAULT_TARGET, *, name=None, compiler=None, runtime=None, check=None, check_arch=None):
    """Compiles KIR \\p source for \\p target ("host", the default as for
    device_array() and Runtime(); "cuda", or "cuda:sm_XY") with \\p compiler (default: a shared one per target; for
    CUDA the device of \\p runtime decides the architecture unless the
    target names one) and returns the Module; see Compiler.compile.
    ``check=True``: checked code (the kernel checker, docs/Check.md; host
    target only, else InvalidArgumentError), held to the limits of GPU
    architecture ``check_arch`` (80 or "sm_80", the default; 70 to 90):
    its launches raise KernelCheckError at what the kernel must not do.
    With \\p compiler, the compiler's own check options must be those
    asked for."""
    c, t = _compiler_for(target, compiler, runtime, check, check_arch)
    return c.compile(source, t, name=name, runtime=runtime)


def compile_async(source, target=DEFAULT_TARGET, *, name=None, compiler=None, runtime=None, check=None, check_arch=None):
    """compile() in the background: a concurrent.futures.Future of the
    Module; see Compiler.compile_async."""
    c, t = _compiler_for(target, compiler, runtime, check, check_arch)
    return c.compile_async(source, t, name=name, runtime=runtime)
