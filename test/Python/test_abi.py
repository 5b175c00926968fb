# The package and a library of another version (docs/Python.md, "Versions";
# docs/CAPI.md, "Versions and growth"). The package passes the sizes of its
# own ctypes structs (struct_size, gj_launch's arg_size) and looks its
# struct classes up in gridjit._capi when it makes one, so a fresh process
# can give it the structs of another version before it makes anything,
# and then run the package's own code through them:
#
#  - an older package than the library: the structs of API version 1
#    (gj_runtime_options without catch_faults, a 16-byte gj_arg without
#    extent). Everything works, the fields it lacks take their defaults
#    (a kernel's fault is caught: catch_faults defaults to on);
#  - a newer package than the library: every struct with a field appended.
#    Zero, it is accepted; set, the library refuses it, naming the byte,
#    rather than ignore what the package asked for.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

PROLOGUE = """
import ctypes, sys
from ctypes import Structure, c_char_p, c_int32, c_size_t, c_uint32, c_uint64, c_void_p
sys.path.insert(0, %r)
import gjtest, numpy as np
import gridjit
from gridjit import _capi
""" % os.path.join(os.path.dirname(__file__), "Inputs")

# The package's structs as API version 1 had them.
OLDER = """
class gj_runtime_options(Structure):
    _fields_ = [("struct_size", c_size_t), ("target", c_char_p), ("threads", c_uint32), ("device", c_uint32),
                ("use_cubin_cache", c_int32), ("cache_dir", c_char_p)]

class gj_arg(Structure):
    _fields_ = [("kind", c_uint32), ("type", c_uint32), ("value", _capi._gj_arg_value)]

_capi.gj_runtime_options, _capi.gj_arg = gj_runtime_options, gj_arg
assert ctypes.sizeof(gj_runtime_options) == 40 and ctypes.sizeof(gj_arg) == 16
"""

# Every struct with a field the library does not have.
NEWER = """
for name in ("gj_compiler_options", "gj_kernel_info", "gj_param_info", "gj_runtime_options", "gj_arg",
             "gj_launch_config"):
    base = getattr(_capi, name)
    setattr(_capi, name, type(name, (base,), {"_fields_": [("newer", c_uint64)]}))
assert ctypes.sizeof(_capi.gj_arg) == 32 and ctypes.sizeof(_capi.gj_runtime_options) == 64
"""

# The package's own paths through those structs.
RUN = """
mod = gridjit.compile(gjtest.SAXPY)
k = mod.saxpy
print("params", [str(p) for p in k.params], "arg size", k._layout.size)
x = np.arange(100, dtype=np.float32)
y = np.ones(100, np.float32)
k[1, 128](100, 2.0, x, y)
print("saxpy", bool((y == 2 * x + 1).all()))
rt = gridjit.Runtime("host", threads=2)
mod.load(rt).saxpy[1, 128](100, 1.0, x, y)
print("own runtime", bool((y == 3 * x + 1).all()))
try:
    k[1, 128](100, 2.0, np.zeros(100), y)
except gridjit.ArgumentError as e:
    print("argument error:", e)
try:
    k[1, 128](100, 2.0, x)
except gridjit.ArgumentError as e:
    print("count error:", e)
far = gridjit.compile("kernel far(n: i32, out: ptr<f32>) { out[n] = 1.0; }")
try:
    far.far[1, 1](1000000000, x)
except gridjit.Error as e:
    print("fault:", type(e).__name__)
"""


# What RUN prints after its first line, whatever the structs.
COMMON = [
    "saxpy True",
    "own runtime True",
    "argument error: kernel 'saxpy': argument 3 ('x: ptr<f32>') must point to f32, but "
    "numpy.ndarray of float64 (element type f64) was given",
    "count error: kernel 'saxpy' takes 4 arguments (n: i32, a: f32, x: ptr<f32>, y: ptr<f32>), 3 given",
    "fault: KernelFaultError",
]


def run(structs, extra=""):
    return gjtest.run_python(PROLOGUE + structs + RUN + extra).stdout.splitlines()


class AbiTest(unittest.TestCase):
    def test_an_older_package(self):
        out = run(OLDER)
        self.assertEqual(out, ["params ['n: i32', 'a: f32', 'x: ptr<f32>', 'y: ptr<f32>'] arg size 16"] + COMMON)

    def test_a_newer_package(self):
        extra = """
opts = _capi.new_struct("gj_runtime_options")
assert opts.struct_size == 64 and opts.newer == 0 and opts.catch_faults == 1
opts.newer = 1
out = c_void_p()
try:
    _capi.check(_capi.gj_runtime_create(ctypes.byref(opts), ctypes.byref(out)))
except gridjit.InvalidArgumentError as e:
    print("newer runtime option set:", e)
info = _capi.gj_kernel_info()
ctypes.memset(ctypes.byref(info), 0xab, ctypes.sizeof(info))
info.struct_size = ctypes.sizeof(info)
_capi.check(_capi.gj_module_kernel(mod._handle, 0, ctypes.byref(info)))
print("kernel info", info.name.decode(), info.num_params, "newer field", info.newer)
args = (_capi.gj_arg * 4)()
args[0].kind, args[0].type, args[0].newer = _capi.GJ_ARG_SCALAR, 3, 7
cfg = _capi.new_struct("gj_launch_config")
status = _capi.gj_launch(mod._loaded_handle(), b"saxpy", ctypes.byref(cfg), args, 4, ctypes.sizeof(_capi.gj_arg))
print("newer argument field set:", _capi.error(status))
"""
        out = run(NEWER, extra)
        self.assertEqual(
            out,
            ["params ['n: i32', 'a: f32', 'x: ptr<f32>', 'y: ptr<f32>'] arg size 32"]
            + COMMON
            + [
                "newer runtime option set: gridjit: gj_runtime_options has 64 bytes (struct_size) and "
                "this library knows 56: byte 56 is not zero, a field this library does not have",
                "kernel info saxpy 4 newer field 0",
                "newer argument field set: gridjit: kernel 'saxpy': argument 1 ('n: i32'): gj_arg has 32 bytes "
                "(arg_size) and this library knows 24: byte 24 is not zero, a field this library does not have",
            ],
        )


if __name__ == "__main__":
    unittest.main()
