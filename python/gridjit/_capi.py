"""The C API (include/gridjit-c/gridjit.h) through ctypes.

Finds and loads libgridjit.so, declares the structs and functions of the
header, and turns a failed call's status into the matching Python exception
carrying gridjit_last_error()'s full message.

The structs grow as the C API's do (docs/CAPI.md, "Versions and growth"):
the package passes the sizes of its own ctypes structs (struct_size,
gj_launch's arg_size), so that it works with a library whose structs are
larger (newer) or smaller (older) than its own. Functions taking a struct
are declared with void pointers and the package looks the struct classes
up here when it makes one, so that test/Python/test_abi.py can give the
package structs of another version.

Every function is called through a ctypes.CDLL, which releases the GIL for
the duration of the foreign call: compiles, launches, copies and waits never
hold the interpreter lock.
"""

import ctypes
import os
import re
from ctypes import (
    POINTER,
    Structure,
    Union,
    c_char_p,
    c_double,
    c_float,
    c_int,
    c_int32,
    c_int64,
    c_size_t,
    c_uint32,
    c_uint64,
    c_void_p,
)

from ._errors import InvalidArgumentError, _error_for_status

#: The C API version this package was written against (GJ_API_VERSION).
API_VERSION = 3

#: The library's file name.
LIBRARY_NAME = "libgridjit.so"


def _checkout_root(here):
    """The checkout whose python/gridjit \\p here is, or None for an
    installed package (site-packages, a --target directory: their parent
    holds no python/pyproject.toml of gridjit's)."""
    python_dir = os.path.dirname(here)
    root = os.path.dirname(python_dir)
    if os.path.basename(python_dir) == "python" and os.path.isfile(os.path.join(python_dir, "pyproject.toml")):
        return root
    return None


def _candidates():
    """The places to look for libgridjit.so when GRIDJIT_LIBRARY is not
    set, in order, as (path, why)."""
    here = os.path.dirname(os.path.abspath(__file__))
    found = []
    build_dir = os.environ.get("GRIDJIT_BUILD_DIR")
    if build_dir:
        found.append((os.path.join(build_dir, "lib", LIBRARY_NAME), "GRIDJIT_BUILD_DIR"))
    # The package inside a checkout (python/gridjit): the build tree of the
    # CMake presets (build/ for release and ci, then the others). An
    # installed package has no checkout: a build tree that happens to be
    # next to its directory is not its library.
    checkout = _checkout_root(here)
    if checkout is not None:
        for sub in ("build", "build-debug", "build-asan", "build-tsan"):
            found.append((os.path.join(checkout, sub, "lib", LIBRARY_NAME), "the checkout's build tree"))
    # An installed package with the library bundled next to it (setup.py
    # copies it in when one is found at install time).
    found.append((os.path.join(here, LIBRARY_NAME), "next to the package"))
    return found


def _open(path):
    # RTLD_LOCAL (ctypes' default on Linux): none of the library's symbols
    # become visible to libraries loaded later.
    return ctypes.CDLL(path, mode=os.RTLD_LOCAL)


def _load_named(env):
    """$GRIDJIT_LIBRARY, and nothing else: a path that does not load is an
    ImportError naming it and why, never a reason to load another library.
    The path is made absolute first: dlopen() searches the loader's path
    for a name without a slash, which could load another libgridjit.so than
    the file of that name in the current directory."""
    path = os.path.abspath(env)
    if not os.path.exists(path):
        why = "no such file"
    elif not os.path.isfile(path):
        why = "not a file"
    else:
        try:
            return _open(path), path
        except OSError as e:
            why = str(e)
    raise ImportError(
        "gridjit: cannot load GRIDJIT_LIBRARY=%s: %s (unset GRIDJIT_LIBRARY to search the usual places, or set it "
        "to a built libgridjit.so, e.g. build/lib/libgridjit.so)" % (env, why)
    )


def _load():
    env = os.environ.get("GRIDJIT_LIBRARY")
    if env:
        return _load_named(env)
    tried = []
    for path, why in _candidates():
        if os.path.isfile(path):
            try:
                return _open(path), path
            except OSError as e:
                raise ImportError("gridjit: cannot load %s (from %s): %s" % (path, why, e)) from None
        tried.append("%s (%s)" % (path, why))
    # Last: the dynamic loader's own search path (an installed library).
    try:
        return _open(LIBRARY_NAME), LIBRARY_NAME
    except OSError:
        tried.append("%s (the dynamic loader's search path)" % LIBRARY_NAME)
    raise ImportError(
        "gridjit: cannot find %s; looked for:\n  %s\n"
        "Build gridjit (cmake --build build) or set GRIDJIT_LIBRARY to the library's path."
        % (LIBRARY_NAME, "\n  ".join(tried))
    )


lib, library_path = _load()

# ---- Enums -----------------------------------------------------------------

GJ_OK = 0
GJ_ERROR_INVALID_ARGUMENT = 1
GJ_ERROR_COMPILE = 2
GJ_ERROR_NOT_FOUND = 3
GJ_ERROR_LAUNCH = 4
GJ_ERROR_NOT_READY = 5
GJ_ERROR_NO_DEVICE = 6
GJ_ERROR_FAILED = 7
GJ_ERROR_ARGUMENT = 8
GJ_ERROR_CONFIGURATION = 9
GJ_ERROR_DIVERGENCE = 10
GJ_ERROR_FAULT = 11
GJ_ERROR_TIMEOUT = 12
GJ_ERROR_DRIVER = 13
GJ_ERROR_IO = 14
GJ_ERROR_CANCELLED = 15
GJ_ERROR_CHECK = 16

#: GJ_MAX_BUFFER_BYTES: the most bytes a buffer may have (gj_buffer_alloc),
#: 2**62. test/Python/test_bounds.py reads it from the header.
MAX_BUFFER_BYTES = 1 << 62

GJ_ARG_SCALAR = 0
GJ_ARG_BUFFER = 1
GJ_ARG_DEVICE_POINTER = 2
GJ_ARG_HOST_POINTER = 3

# ---- Structs ---------------------------------------------------------------


class gj_compiler_options(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("targets", c_char_p),
        ("opt_level", c_uint32),
        ("threads", c_uint32),
        ("use_disk_cache", c_int32),
        ("cache_dir", c_char_p),
        ("check", c_int32),
        ("check_arch", c_uint32),
    ]


class gj_kernel_info(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("name", c_char_p),
        ("num_params", c_size_t),
        ("cooperative", c_int32),
        ("uses_dynamic_shared", c_int32),
        ("static_shared_bytes", c_uint64),
    ]


class gj_param_info(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("name", c_char_p),
        ("is_pointer", c_int32),
        ("type", c_uint32),
        ("size", c_uint32),
        ("align", c_uint32),
    ]


class gj_runtime_options(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("target", c_char_p),
        ("threads", c_uint32),
        ("device", c_uint32),
        ("use_cubin_cache", c_int32),
        ("cache_dir", c_char_p),
        ("catch_faults", c_int32),
        ("reserved", c_uint32),
        ("compiler", c_void_p),
    ]


class _gj_arg_value(Union):
    _fields_ = [
        ("i", c_int64),
        ("u", c_uint64),
        ("f32", c_float),
        ("f64", c_double),
        ("buffer", c_void_p),
        ("address", c_uint64),
        ("pointer", c_void_p),
    ]


class gj_arg(Structure):
    _fields_ = [("kind", c_uint32), ("type", c_uint32), ("value", _gj_arg_value), ("extent", c_uint64)]


class gj_launch_config(Structure):
    _fields_ = [
        ("struct_size", c_size_t),
        ("grid", c_uint32 * 3),
        ("block", c_uint32 * 3),
        ("dynamic_shared_bytes", c_uint32),
        ("stream", c_void_p),
        ("timeout_ms", c_uint64),
        ("cancel", c_void_p),
        ("print_buffer_bytes", c_uint64),
        ("print_callback", c_void_p),
        ("print_user_data", c_void_p),
        ("check_max_findings", c_uint32),
        ("check_same_value_writes", c_int32),
    ]


#: gj_print_callback: void (*)(const char *text, size_t size, void *user_data).
gj_print_callback = ctypes.CFUNCTYPE(None, c_void_p, c_size_t, c_void_p)


assert ctypes.sizeof(gj_arg) == 24, "gj_arg must be 24 bytes (kind, type, 8-byte value, extent)"

# ---- Functions -------------------------------------------------------------

_handle = c_void_p
_P = POINTER


def _declare(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


gj_api_version = _declare("gj_api_version", c_uint32)
gj_version_string = _declare("gj_version_string", c_char_p)

# Before anything else of the library is looked up: an older library lacks
# the symbols of the newer version.
_version = gj_api_version()
if _version < API_VERSION:
    raise ImportError(
        "gridjit: %s has C API version %d; this package needs %d or later"
        % (library_path, _version, API_VERSION)
    )

gj_status_name = _declare("gj_status_name", c_char_p, c_int)
gj_last_error = _declare("gj_last_error", c_char_p)
gj_scalar_type_name = _declare("gj_scalar_type_name", c_char_p, c_int)

# Struct pointers are c_void_p (see the module's comment); the *_init
# functions are API version 2's symbols, which take the struct's size.
gj_compiler_options_init = _declare("gj_compiler_options_init_v2", None, c_void_p, c_size_t)
gj_compiler_create = _declare("gj_compiler_create", c_int, c_void_p, _P(_handle))
gj_compiler_warning_count = _declare("gj_compiler_warning_count", c_size_t, _handle)
gj_compiler_warning = _declare("gj_compiler_warning", c_char_p, _handle, c_size_t)
gj_compiler_destroy = _declare("gj_compiler_destroy", None, _handle)
gj_compile = _declare(
    "gj_compile", c_int, _handle, c_char_p, c_size_t, c_char_p, c_char_p, _P(_handle)
)
gj_compile_async = _declare(
    "gj_compile_async", c_int, _handle, c_char_p, c_size_t, c_char_p, c_char_p, _P(_handle)
)
gj_compile_job_poll = _declare("gj_compile_job_poll", c_int, _handle)
gj_compile_job_wait = _declare("gj_compile_job_wait", c_int, _handle, _P(_handle))
gj_compile_job_destroy = _declare("gj_compile_job_destroy", None, _handle)
gj_emit = _declare(
    "gj_emit", c_int, _handle, c_char_p, c_size_t, c_char_p, c_char_p, c_char_p, _P(c_void_p), _P(c_size_t)
)
gj_text_free = _declare("gj_text_free", None, c_void_p)

gj_module_release = _declare("gj_module_release", None, _handle)
gj_module_target = _declare("gj_module_target", c_char_p, _handle)
gj_module_arch = _declare("gj_module_arch", c_char_p, _handle)
gj_module_payload = _declare("gj_module_payload", c_int, _handle, _P(c_void_p), _P(c_size_t))
gj_module_kernel_count = _declare("gj_module_kernel_count", c_size_t, _handle)
gj_module_find_kernel = _declare("gj_module_find_kernel", c_int, _handle, c_char_p, _P(c_size_t))
gj_kernel_info_init = _declare("gj_kernel_info_init_v2", None, c_void_p, c_size_t)
gj_module_kernel = _declare("gj_module_kernel", c_int, _handle, c_size_t, c_void_p)
gj_param_info_init = _declare("gj_param_info_init_v2", None, c_void_p, c_size_t)
gj_module_kernel_param = _declare("gj_module_kernel_param", c_int, _handle, c_size_t, c_size_t, c_void_p)
gj_kernel_argument_error = _declare("gj_kernel_argument_error", c_int, _handle, c_size_t, c_size_t, c_char_p)

gj_runtime_options_init = _declare("gj_runtime_options_init_v2", None, c_void_p, c_size_t)
gj_runtime_create = _declare("gj_runtime_create", c_int, c_void_p, _P(_handle))
gj_runtime_destroy = _declare("gj_runtime_destroy", None, _handle)
gj_runtime_warning_count = _declare("gj_runtime_warning_count", c_size_t, _handle)
gj_runtime_warning = _declare("gj_runtime_warning", c_char_p, _handle, c_size_t)
gj_cuda_device_count = _declare("gj_cuda_device_count", c_int32)
gj_runtime_synchronize = _declare("gj_runtime_synchronize", c_int, _handle)
gj_runtime_load = _declare("gj_runtime_load", c_int, _handle, _handle, _P(_handle))
gj_loaded_module_destroy = _declare("gj_loaded_module_destroy", None, _handle)
gj_loaded_module_set_constant = _declare(
    "gj_loaded_module_set_constant", c_int, _handle, c_char_p, c_void_p, c_uint64
)
gj_module_constant_count = _declare("gj_module_constant_count", c_size_t, _handle)
gj_module_constant = _declare(
    "gj_module_constant", c_int, _handle, c_size_t, _P(c_char_p), _P(c_int32), _P(c_uint64)
)

gj_buffer_alloc = _declare("gj_buffer_alloc", c_int, _handle, c_uint64, _P(_handle))
gj_buffer_free = _declare("gj_buffer_free", None, _handle)
gj_buffer_address = _declare("gj_buffer_address", c_uint64, _handle)
gj_buffer_size = _declare("gj_buffer_size", c_uint64, _handle)
gj_buffer_write = _declare("gj_buffer_write", c_int, _handle, c_uint64, c_void_p, c_uint64)
gj_buffer_read = _declare("gj_buffer_read", c_int, _handle, c_uint64, c_void_p, c_uint64)

gj_launch_config_init = _declare("gj_launch_config_init_v2", None, c_void_p, c_size_t)
gj_launch = _declare("gj_launch_v2", c_int, _handle, c_char_p, c_void_p, c_void_p, c_size_t, c_size_t)
gj_cancel_token_create = _declare("gj_cancel_token_create", c_int, _P(_handle))
gj_cancel_token_cancel = _declare("gj_cancel_token_cancel", c_int, _handle)
gj_cancel_token_is_cancelled = _declare("gj_cancel_token_is_cancelled", c_int32, _handle)
gj_cancel_token_destroy = _declare("gj_cancel_token_destroy", None, _handle)

# The launch path's gj_launch: a second function object (lib[...] makes a new
# one) without argtypes, so that ctypes converts nothing: the launch passes
# ctypes objects only (a c_void_p, bytes, byref(config), an array, two
# c_size_t; see _kernel.py), which skips a from_param call per argument.
gj_launch_raw = lib["gj_launch_v2"]
gj_launch_raw.restype = c_int



def last_error():
    """The calling thread's last error message (str)."""
    return gj_last_error().decode("utf-8", "replace")


# The C API begins a message with the function that failed
# ("gj_runtime_create: no CUDA device: ..."); a Python caller called none of
# them by that name.
_C_FUNCTION_PREFIX = re.compile(r"^gj_[a-z0-9_]+: ")


def error(status, what=None):
    """The exception for failed \\p status (the message is gj_last_error()'s,
    which must be read on the same thread, right after the call: every call
    here does that), speaking of gridjit rather than of the C function: a
    leading "gj_NAME: " becomes "gridjit: "."""
    message = _C_FUNCTION_PREFIX.sub("gridjit: ", last_error(), count=1)
    return _error_for_status(gj_status_name(status).decode(), message, what)


def check(status, what=None):
    """Raises error(status) for a failed \\p status."""
    if status != GJ_OK:
        raise error(status, what)


def new_struct(name):
    """A struct of the class _capi.NAME (looked up now: see the module's
    comment), filled by its *_init function with the defaults and its own
    size."""
    cls = globals()[name]
    s = cls()
    globals()[name + "_init"](ctypes.byref(s), ctypes.sizeof(cls))
    return s


def _no_nul(b, what, given):
    if b"\0" in b:
        raise InvalidArgumentError("gridjit: %s %r contains a NUL character, where C would cut it short" % (what, given))
    return b


def encode(s, what):
    """A str (or bytes, or None) as the bytes a char* argument takes. C
    reads the string up to its first NUL, so a NUL inside it would cut it
    short silently (a cache directory "/a\\0b" would be "/a"): that is an
    InvalidArgumentError (a ValueError) naming the argument \\p what."""
    if s is None:
        return None
    return _no_nul(s if isinstance(s, bytes) else str(s).encode("utf-8"), what, s)


def encode_path(path, what):
    """A path (str, bytes, os.PathLike, or None) as the bytes a char*
    argument takes: in the file system's encoding (os.fsencode, so that a
    name that is not UTF-8 survives), checked as encode() checks."""
    if path is None:
        return None
    return _no_nul(os.fsencode(os.fspath(path)), what, path)
