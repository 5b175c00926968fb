"""Numba and gridjit in one Python process (test/CAPI/numba-coexistence.test).

Numba compiles through llvmlite, which carries its own LLVM (Debian's
llvmlite links libLLVM-14); libgridjit.so carries LLVM 19 inside. The two
must not bind to each other's symbols. This script:

1. imports numba, JIT-compiles an @njit function and checks its results;
2. loads libgridjit.so (argv[1]; argv[2] is how: "local", "global" or
   "first", see MODE) through ctypes and, through the C API,
   compiles KIR for the host target (a real compile: no disk cache), runs
   it on NumPy arrays and checks the results, and checks a compile error's
   located message;
3. JIT-compiles a new @njit function (after gridjit's LLVM has run) and
   calls the first one again, checking both;
4. compiles and runs another gridjit kernel, after Numba's second compile.

It prints one line per step and "coexistence ok" at the end; any wrong
result raises (a non-zero exit status).
"""

import ctypes
import sys

# "global": libgridjit.so is loaded RTLD_GLOBAL, as some frameworks load
# their native libraries, so whatever it exports enters the process's
# global scope. "first": also before Numba and llvmlite are imported, so
# that libLLVM-14's own references (its vtables, its options' globals)
# would bind to LLVM symbols libgridjit.so exported, if it exported any.
MODE = sys.argv[2] if len(sys.argv) > 2 else "local"
if MODE == "first":
    lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL)

import llvmlite.binding  # noqa: E402
import numba  # noqa: E402
import numpy as np  # noqa: E402

# --- 1. Numba first ----------------------------------------------------------


@numba.njit(cache=False)
def poly(x):
    out = np.empty_like(x)
    for i in range(x.shape[0]):
        out[i] = 3.0 * x[i] * x[i] + 2.0 * x[i] + 1.0
    return out


xs = np.linspace(-4.0, 4.0, 1001)
assert np.allclose(poly(xs), 3.0 * xs * xs + 2.0 * xs + 1.0)
print("numba before gridjit: ok (llvmlite's LLVM %d)" % llvmlite.binding.llvm_version_info[0])

# --- 2. gridjit through its C API --------------------------------------------

if MODE != "first":
    lib = ctypes.CDLL(sys.argv[1], mode=ctypes.RTLD_GLOBAL if MODE == "global" else ctypes.RTLD_LOCAL)


class CompilerOptions(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("targets", ctypes.c_char_p),
        ("opt_level", ctypes.c_uint32),
        ("threads", ctypes.c_uint32),
        ("use_disk_cache", ctypes.c_int32),
        ("cache_dir", ctypes.c_char_p),
    ]


class LaunchConfig(ctypes.Structure):
    _fields_ = [
        ("struct_size", ctypes.c_size_t),
        ("grid", ctypes.c_uint32 * 3),
        ("block", ctypes.c_uint32 * 3),
        ("dynamic_shared_bytes", ctypes.c_uint32),
        ("stream", ctypes.c_void_p),
    ]


class ArgValue(ctypes.Union):
    _fields_ = [
        ("i", ctypes.c_int64),
        ("u", ctypes.c_uint64),
        ("f32", ctypes.c_float),
        ("f64", ctypes.c_double),
        ("pointer", ctypes.c_void_p),
    ]


class Arg(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("type", ctypes.c_int), ("value", ArgValue)]


GJ_ARG_SCALAR, GJ_ARG_HOST_POINTER = 0, 3
GJ_I32, GJ_F32, GJ_F64 = 3, 9, 10
GJ_ERROR_COMPILE = 2

P = ctypes.c_void_p
lib.gj_last_error.restype = ctypes.c_char_p
lib.gj_compiler_options_init.argtypes = [ctypes.POINTER(CompilerOptions)]
lib.gj_compiler_create.argtypes = [ctypes.POINTER(CompilerOptions), ctypes.POINTER(P)]
lib.gj_compile.argtypes = [P, ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p, ctypes.c_char_p, ctypes.POINTER(P)]
lib.gj_runtime_create.argtypes = [P, ctypes.POINTER(P)]
lib.gj_runtime_load.argtypes = [P, P, ctypes.POINTER(P)]
lib.gj_launch_config_init.argtypes = [ctypes.POINTER(LaunchConfig)]
lib.gj_launch.argtypes = [P, ctypes.c_char_p, ctypes.POINTER(LaunchConfig), ctypes.POINTER(Arg), ctypes.c_size_t]
for name in ["gj_module_release", "gj_loaded_module_destroy", "gj_runtime_destroy", "gj_compiler_destroy"]:
    getattr(lib, name).argtypes = [P]
    getattr(lib, name).restype = None


def check(status, what):
    if status != 0:
        raise RuntimeError("%s: status %d: %s" % (what, status, lib.gj_last_error().decode()))


opts = CompilerOptions()
lib.gj_compiler_options_init(ctypes.byref(opts))
opts.use_disk_cache = 0  # compile for real, with gridjit's LLVM
compiler = P()
check(lib.gj_compiler_create(ctypes.byref(opts), ctypes.byref(compiler)), "gj_compiler_create")
runtime = P()
check(lib.gj_runtime_create(None, ctypes.byref(runtime)), "gj_runtime_create")


def run(source, name, kernel, n, args):
    """Compiles source, launches kernel over n threads with args."""
    src = source.encode()
    module, loaded = P(), P()
    check(lib.gj_compile(compiler, src, len(src), name.encode(), None, ctypes.byref(module)), "gj_compile")
    check(lib.gj_runtime_load(runtime, module, ctypes.byref(loaded)), "gj_runtime_load")
    config = LaunchConfig()
    lib.gj_launch_config_init(ctypes.byref(config))
    config.grid[0] = (n + 127) // 128
    config.block[0] = 128
    array = (Arg * len(args))(*args)
    check(lib.gj_launch(loaded, kernel.encode(), ctypes.byref(config), array, len(args)), "gj_launch")
    lib.gj_loaded_module_destroy(loaded)
    lib.gj_module_release(module)


def scalar(kind, **value):
    a = Arg(kind=GJ_ARG_SCALAR, type=kind)
    setattr(a.value, *next(iter(value.items())))
    return a


def pointer(array, kind):
    a = Arg(kind=GJ_ARG_HOST_POINTER, type=kind)
    a.value.pointer = array.ctypes.data
    return a


SAXPY = """
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}
"""
n = 10000
x = np.arange(n, dtype=np.float32)
y = np.full(n, 2.0, dtype=np.float32)
expected = np.float32(0.5) * x + y
run(SAXPY, "saxpy.kir", "saxpy", n, [scalar(GJ_I32, i=n), scalar(GJ_F32, f32=0.5), pointer(x, GJ_F32), pointer(y, GJ_F32)])
assert np.array_equal(y, expected), "gridjit's saxpy computed a wrong result"
print("gridjit saxpy through the C API: ok")

bad = b"kernel k(n: i32) {\n  let x: f32 = n;\n}\n"
module = P()
status = lib.gj_compile(compiler, bad, len(bad), b"bad.kir", None, ctypes.byref(module))
message = lib.gj_last_error().decode()
assert status == GJ_ERROR_COMPILE and message.startswith("bad.kir:2:"), (status, message)
print("gridjit compile error: " + message.splitlines()[0])

# --- 3. Numba again: a new function, compiled after gridjit's LLVM ran -------


@numba.njit(cache=False)
def dot_tanh(a, b):
    s = 0.0
    for i in range(a.shape[0]):
        s += np.tanh(a[i]) * b[i]
    return s


a = np.linspace(-1.0, 1.0, 513)
b = np.linspace(2.0, 3.0, 513)
assert abs(dot_tanh(a, b) - float(np.sum(np.tanh(a) * b))) < 1e-9
assert np.allclose(poly(xs), 3.0 * xs * xs + 2.0 * xs + 1.0)
print("numba after gridjit: ok")

# --- 4. gridjit once more, after Numba's second compile ------------------------

SCALE = """
kernel scale(n: i32, s: f64, v: ptr<f64>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { v[i] = v[i] * s + 1.0; }
}
"""
v = np.linspace(0.0, 1.0, 3000)
want = v * 4.0 + 1.0
run(SCALE, "scale.kir", "scale", v.shape[0], [scalar(GJ_I32, i=v.shape[0]), scalar(GJ_F64, f64=4.0), pointer(v, GJ_F64)])
assert np.array_equal(v, want), "gridjit's scale computed a wrong result"
print("gridjit after numba: ok")

lib.gj_runtime_destroy(runtime)
lib.gj_compiler_destroy(compiler)
print("coexistence ok")
