# The kernel checker from Python (docs/Python.md, "The kernel checker"):
# compile(..., check=True) and Compiler(check=True) make checked code (the
# host target's checked twin; its own compiler and cache entries), cuda and
# an architecture outside sm_70..sm_90 are refused; every array argument
# reaches gj_launch with its extent (a NumPy array's bytes, a view's, a
# buffer's, an __array_interface__'s or __cuda_array_interface__'s from its
# shape and type, a DLPack tensor's, a DeviceArray's; KIR's null: 0), and
# the launch keywords check_max_findings= and check_same_value_writes=
# reach gj_launch_config. End to end (FindingTest): a read past a NumPy
# array's real size raises KernelCheckError naming the parameter, a view is
# checked against the view's own bytes, a race is found and more findings
# are collected on request, and two arguments whose memory overlaps keep
# the checker's calls of a read-only parameter's loads (a race between
# them is found); every finding kind is tested in test/Check.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import array
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402
from gridjit import _interop, _kernel, _types  # noqa: E402


class Recorded:
    """gj_launch, recording each call's launch configuration and extents
    before it passes the call on (installed before a kernel is made, whose
    launch function takes gj_launch from the package then)."""

    def __init__(self):
        self.calls = []
        self.real = _kernel._launch

    def __call__(self, lm, name, config, args, nargs, arg_size):
        c = config._obj
        self.calls.append(
            {
                "max_findings": c.check_max_findings,
                "same_value_writes": c.check_same_value_writes,
                "extents": [args[i].extent for i in range(nargs.value)],
            }
        )
        return self.real(lm, name, config, args, nargs, arg_size)

    def __enter__(self):
        _kernel._launch = self
        return self

    def __exit__(self, *exc):
        _kernel._launch = self.real


class CompileTest(unittest.TestCase):
    def test_checked_compile_runs_and_has_its_own_compiler(self):
        mod = gridjit.compile(gjtest.SAXPY, check=True)
        x = np.arange(100, dtype=np.float32)
        y = np.ones(100, np.float32)
        mod.saxpy[1, 128](100, 2.0, x, y)
        self.assertTrue((y == 2 * x + 1).all())
        checked = gridjit.default_compiler("host", check=True)
        self.assertTrue(checked.check)
        self.assertEqual(checked.check_arch, 80)
        self.assertIs(checked, gridjit.default_compiler("host", check=True, check_arch="sm_80"))
        self.assertIsNot(checked, gridjit.default_compiler("host"))
        self.assertFalse(gridjit.default_compiler("host").check)
        self.assertIn("check=sm_80", repr(checked))
        # The checked twin emits its own stages.
        self.assertIn("__gridjit_entry_saxpy", mod.inspect_llvm())

    def test_architectures(self):
        mod = gridjit.compile(gjtest.SAXPY, check=True, check_arch="sm_90")
        self.assertIn("saxpy", mod.kernel_names)
        self.assertEqual(gridjit.Compiler("host", check=True, check_arch=70, use_disk_cache=False).check_arch, 70)
        with self.assertRaises(gridjit.InvalidArgumentError) as e:
            gridjit.compile(gjtest.SAXPY, check=True, check_arch=60)
        self.assertIn("checked code needs a GPU architecture from sm_70 to sm_90, not sm_60", str(e.exception))
        for bad in ("sm_x", 80.0, True, -1):
            with self.assertRaises(gridjit.InvalidArgumentError) as e:
                gridjit.compile(gjtest.SAXPY, check=True, check_arch=bad)
            self.assertIn("check_arch must be a GPU architecture such as 80 or 'sm_80', not %r" % (bad,), str(e.exception))

    def test_cuda_has_no_checked_code(self):
        with self.assertRaises(gridjit.InvalidArgumentError) as e:
            gridjit.compile(gjtest.SAXPY, "cuda:sm_80", check=True)
        self.assertIn("target 'nvptx' has no checked code", str(e.exception))

    def test_a_compiler_keeps_its_own_check_options(self):
        plain = gridjit.Compiler("host", use_disk_cache=False)
        checked = gridjit.Compiler("host", use_disk_cache=False, check=True)
        self.assertEqual(gridjit.compile(gjtest.SAXPY, compiler=plain, check=False).kernel_names, ("saxpy",))
        self.assertEqual(gridjit.compile(gjtest.SAXPY, compiler=checked, check=True).kernel_names, ("saxpy",))
        for compiler, options in ((plain, {"check": True}), (checked, {"check": False}), (checked, {"check_arch": 90})):
            with self.assertRaises(gridjit.InvalidArgumentError) as e:
                gridjit.compile(gjtest.SAXPY, compiler=compiler, **options)
            self.assertIn("a compiler's code is checked or not as it was made", str(e.exception))

    def test_compile_async(self):
        mod = gridjit.compile_async(gjtest.SAXPY, check=True).result()
        self.assertIn("saxpy", mod.kernel_names)


class ExtentTest(unittest.TestCase):
    def launch(self, *args, **kw):
        with Recorded() as r:
            mod = gridjit.compile(
                "kernel k(a: ptr<f32>, b: ptr<f32>, c: ptr<f32>, d: ptr<f32>, e: ptr<f32>) { }", check=True
            )
            mod.k[1, 1](*args, **kw)
        self.assertEqual(len(r.calls), 1)
        return r.calls[0]

    def test_every_kind_of_array_has_its_extent(self):
        x = np.zeros(100, np.float32)

        class Interface:  # an __array_interface__ of its own
            __array_interface__ = x[:7].__array_interface__

        rt = gridjit.runtime("host")
        dev = rt.device_array(12, "f32")
        # The fast path (an ndarray of the parameter's type), a view into
        # one, the buffer protocol, the array interface, a DeviceArray.
        call = self.launch(x, x[10:20], array.array("f", [0] * 5), Interface(), dev)
        self.assertEqual(call["extents"], [400, 40, 20, 28, 48])
        # KIR's null pointer has no extent; views of one element have one
        # element's.
        call = self.launch(None, np.zeros(3, np.float32), x[:1], x[99:], dev)
        self.assertEqual(call["extents"], [0, 12, 4, 4, 48])

    def test_array_interfaces_and_dlpack(self):
        cai = {"data": (0x10000, False), "shape": (3, 4), "typestr": "<f8", "version": 3}
        self.assertEqual(_interop.from_array_interface(cai, "__cuda_array_interface__"), (0x10000, _types.f64, 96))
        strided = dict(cai, strides=(32, 8))
        self.assertEqual(_interop.from_array_interface(strided, "__cuda_array_interface__")[2], 96)
        scalar = {"data": (0x10000, False), "shape": (), "typestr": "<i4", "version": 3}
        self.assertEqual(_interop.from_array_interface(scalar)[2], 4)
        t = np.zeros((2, 5), np.int16)
        address, st, capsule, extent = _interop.from_dlpack(t, False)
        self.assertEqual((address, st, extent), (t.ctypes.data, _types.i16, 20))

    def test_launch_options(self):
        x = np.zeros(4, np.float32)
        args = (x, x, x, x, x)
        self.assertEqual(self.launch(*args)["max_findings"], 1)
        self.assertEqual(self.launch(*args)["same_value_writes"], 0)
        call = self.launch(*args, check_max_findings=5, check_same_value_writes=True)
        self.assertEqual((call["max_findings"], call["same_value_writes"]), (5, 1))
        call = self.launch(*args, check_max_findings=1, check_same_value_writes=np.bool_(True))
        self.assertEqual((call["max_findings"], call["same_value_writes"]), (1, 1))
        mod = gridjit.compile("kernel k(a: ptr<f32>, b: ptr<f32>, c: ptr<f32>, d: ptr<f32>, e: ptr<f32>) { }")
        for bad in ({"check_max_findings": -1}, {"check_max_findings": 2**32}, {"check_max_findings": True}):
            with self.assertRaises(gridjit.ConfigurationError) as e:
                mod.k[1, 1](*args, **bad)
            self.assertIn("check_max_findings", str(e.exception))
        with self.assertRaises(gridjit.ConfigurationError) as e:
            mod.k[1, 1](*args, check_same_value_writes="yes")
        self.assertIn("check_same_value_writes 'yes': expected True or False", str(e.exception))


class FindingTest(unittest.TestCase):
    def test_a_read_past_an_array_names_the_parameter(self):
        mod = gridjit.compile(gjtest.SAXPY, check=True)
        x = np.arange(96, dtype=np.float32)
        y = np.ones(100, np.float32)
        with self.assertRaises(gridjit.KernelCheckError) as e:
            mod.saxpy[1, 128](100, 2.0, x, y)
        self.assertIsInstance(e.exception, gridjit.LaunchError)
        self.assertIn(
            "error: out-of-bounds read of 'x' in kernel 'saxpy': element 96 (bytes 384..387) is "
            "outside its 96 elements (384 bytes), by thread (96, 0, 0) of block (0, 0, 0)",
            str(e.exception),
        )
        # A view is its own buffer: 10 elements of a larger array.
        big = np.arange(200, dtype=np.float32)
        with self.assertRaises(gridjit.KernelCheckError) as e:
            mod.saxpy[1, 128](11, 2.0, big[50:60], y)
        self.assertIn("element 10 (bytes 40..43) is outside its 10 elements (40 bytes)", str(e.exception))
        # In bounds, the same kernel runs clean and right (the stopped
        # launches wrote y for the threads before the finding).
        y[:] = 1
        mod.saxpy[1, 128](10, 2.0, big[50:60], y)
        self.assertTrue((y[:10] == 2 * big[50:60] + 1).all())

    def test_a_race_and_more_findings(self):
        src = "kernel race(out: ptr<i32>) { out[0] = thread_idx.x; out[1] = block_idx.x; }"
        mod = gridjit.compile(src, name="race.kir", check=True)
        out = np.zeros(2, np.int32)
        with self.assertRaises(gridjit.KernelCheckError) as e:
            mod.race[2, 4](out)
        text = str(e.exception)
        self.assertIn("error: data race in kernel 'race': write of 'out' element 0 by thread (1, 0, 0) of block (0, 0, 0)", text)
        self.assertIn("note: conflicts with this write of 'out' element 0 by thread (0, 0, 0)", text)
        self.assertEqual(text.count("error:"), 1)
        with self.assertRaises(gridjit.KernelCheckError) as e:
            mod.race[2, 4](out, check_max_findings=2)
        # The second: out[1], which the threads of one block write with the
        # same value (not reported) and the two blocks with different ones.
        self.assertEqual(str(e.exception).count("error:"), 2)
        self.assertIn("write of 'out' element 1 by thread (0, 0, 0) of block (1, 0, 0)", str(e.exception))
        self.assertIn("no grid_sync() orders them", str(e.exception))

    def test_arguments_that_overlap_lose_the_fast_path(self):
        # x is read only, so its load skips the checker while in x's extent
        # (docs/Check.md, "Cost") -- unless another argument's memory
        # overlaps x's: here y is x shifted by one element, and thread i
        # reads what thread i + 1 writes.
        src = "kernel shift(n: i32, x: ptr<f32>, y: ptr<f32>) {\n  let i: i32 = thread_idx.x;\n  if i < n { y[i] = x[i + 1]; }\n}\n"
        mod = gridjit.compile(src, name="shift.kir", check=True)
        a = np.arange(65, dtype=np.float32)
        b = np.zeros(64, np.float32)
        mod.shift[1, 64](64, a, b)
        self.assertTrue((b == a[1:]).all())
        with self.assertRaises(gridjit.KernelCheckError) as e:
            mod.shift[1, 64](64, a, a[:64])
        text = str(e.exception)
        self.assertIn(
            "shift.kir:3:14: error: data race in kernel 'shift': write of 'y' element 1 by thread (1, 0, 0) of block (0, 0, 0)",
            text,
        )
        self.assertIn("shift.kir:3:21: note: conflicts with this read of 'x' element 1 by thread (0, 0, 0)", text)


if __name__ == "__main__":
    unittest.main()
