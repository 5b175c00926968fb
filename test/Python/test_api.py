# The Python package's API on the host target: compile, kernels and their
# parameters, launches with NumPy arrays and other host memory, scalar and
# array checks, errors carrying gridjit's located messages, compile_async.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import array
import concurrent.futures
import gc
import os
import pathlib
import sys
import unittest
import weakref

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"

KINDS = """
kernel kinds(b: bool, i8v: i8, i16v: i16, i32v: i32, i64v: i64, u8v: u8, u16v: u16,
             u32v: u32, u64v: u64, f32v: f32, f64v: f64, out: ptr<f64>) {
  out[0] = 0.0;
  if b { out[0] = 1.0; }
  out[1] = i8v as f64;
  out[2] = i16v as f64;
  out[3] = i32v as f64;
  out[4] = i64v as f64;
  out[5] = u8v as f64;
  out[6] = u16v as f64;
  out[7] = u32v as f64;
  out[8] = u64v as f64;
  out[9] = f32v as f64;
  out[10] = f64v;
}
"""

TYPED = """
kernel fill_i16(n: i32, p: ptr<i16>) { let i: i32 = thread_idx.x; if i < n { p[i] = (i * 3) as i16; } }
kernel fill_u8(n: i32, p: ptr<u8>) { let i: i32 = thread_idx.x; if i < n { p[i] = (i + 200) as u8; } }
kernel fill_bool(n: i32, p: ptr<bool>) { let i: i32 = thread_idx.x; if i < n { p[i] = i % 2 == 0; } }
kernel fill_f64(n: i32, p: ptr<f64>) { let i: i32 = thread_idx.x; if i < n { p[i] = (i as f64) * 0.5; } }
"""

GRID2D = """
kernel index2d(w: i32, h: i32, out: ptr<i32>) {
  let x: i32 = block_idx.x * block_dim.x + thread_idx.x;
  let y: i32 = block_idx.y * block_dim.y + thread_idx.y;
  if x < w && y < h { out[y * w + x] = y * 1000 + x + block_idx.z * 1000000; }
}
"""

DYNAMIC_SHARED = """
kernel reverse_block(x: ptr<f32>) {
  shared tile: [f32];
  let t: i32 = thread_idx.x;
  let i: i32 = block_idx.x * block_dim.x + t;
  tile[t] = x[i];
  sync_threads();
  x[i] = tile[block_dim.x - 1 - t];
}
"""


class CompileTest(unittest.TestCase):
    def test_module_and_kernel_info(self):
        mod = gridjit.compile(gjtest.SAXPY, target="host")
        self.assertEqual(mod.target, "host")
        self.assertTrue(mod.arch)
        self.assertEqual(mod.kernel_names, ("saxpy",))
        k = mod.saxpy
        self.assertIs(k, mod["saxpy"])
        self.assertIn("saxpy", mod)
        self.assertEqual(k.signature, "saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>)")
        self.assertEqual([p.name for p in k.params], ["n", "a", "x", "y"])
        self.assertEqual([p.is_pointer for p in k.params], [False, False, True, True])
        self.assertEqual([p.type for p in k.params], [gridjit.i32, gridjit.f32, gridjit.f32, gridjit.f32])
        self.assertFalse(k.cooperative)
        self.assertFalse(k.uses_dynamic_shared)
        # A relocatable ELF object for the host.
        self.assertEqual(mod.payload[:4], b"\x7fELF")

    def test_kernel_flags(self):
        mod = gridjit.compile(EXAMPLES / "grid_sync.kir")
        self.assertTrue(mod.two_phase.cooperative)
        self.assertTrue(gridjit.compile(DYNAMIC_SHARED).reverse_block.uses_dynamic_shared)
        self.assertEqual(gridjit.compile(EXAMPLES / "reduce.kir").reduce.static_shared_bytes, 256 * 4)

    def test_unknown_kernel(self):
        mod = gridjit.compile(gjtest.SAXPY)
        with self.assertRaisesRegex(AttributeError, r"no kernel 'sxpy' \(its kernels: saxpy\)"):
            mod.sxpy
        with self.assertRaises(gridjit.NotFoundError):
            mod["sxpy"]

    def test_compile_error_is_located(self):
        src = "kernel k(n: i32) {\n  let x: i32 = 1.5;\n}\n"
        with self.assertRaises(gridjit.CompileError) as cm:
            gridjit.compile(src, name="bad.kir")
        e = cm.exception
        self.assertIsInstance(e, gridjit.Error)
        self.assertEqual(e.status, "GJ_ERROR_COMPILE")
        # The full located diagnostic: position, message, the source line, a caret.
        self.assertIn("bad.kir:2:16: error: ", str(e))
        self.assertIn("  let x: i32 = 1.5;\n", str(e))
        self.assertIn("^", str(e))

    def test_source_forms(self):
        by_path = gridjit.compile(EXAMPLES / "saxpy.kir")
        self.assertEqual(by_path.kernel_names, ("saxpy",))
        by_bytes = gridjit.compile(gjtest.SAXPY.encode())
        self.assertEqual(by_bytes.kernel_names, ("saxpy",))
        with self.assertRaises(TypeError):
            gridjit.compile(42)
        # A path names the source in diagnostics.
        bad = pathlib.Path(gjtest.scratch_dir()) / "broken.kir"
        bad.write_text("kernel k() { oops }\n")
        with self.assertRaisesRegex(gridjit.CompileError, "broken.kir:1:"):
            gridjit.compile(bad)

    def test_unknown_target(self):
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "unknown target 'tpu'"):
            gridjit.compile(gjtest.SAXPY, target="tpu")

    def test_compiler_options(self):
        c = gridjit.Compiler("host", opt_level=0, threads=2, cache_dir=os.path.join(gjtest.scratch_dir(), "c2"))
        mod = c.compile(gjtest.SAXPY)
        x = np.arange(8, dtype=np.float32)
        y = np.zeros(8, dtype=np.float32)
        mod.saxpy[1, 8](8, 3.0, x, y)
        np.testing.assert_array_equal(y, 3 * x)
        with self.assertRaises(gridjit.InvalidArgumentError):
            gridjit.Compiler(opt_level=7)
        with self.assertRaisesRegex(gridjit.Error, "tpu"):
            gridjit.Compiler("host,tpu")


class LaunchTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(gjtest.SAXPY)

    def test_saxpy(self):
        n = 1000
        x = np.arange(n, dtype=np.float32)
        y = np.ones(n, dtype=np.float32)
        self.mod.saxpy[(n + 255) // 256, 256](n, 2.0, x, y)
        np.testing.assert_array_equal(y, 2 * x + 1)

    def test_configurations(self):
        mod = gridjit.compile(GRID2D)
        w, h = 37, 21
        out = np.full(w * h, -1, dtype=np.int32)
        mod.index2d[(3, 6), (16, 4)](w, h, out)
        ys, xs = np.divmod(np.arange(w * h), w)
        np.testing.assert_array_equal(out, ys * 1000 + xs)
        # Three dimensions, and the other spellings of the configuration.
        out[:] = -1
        mod.index2d[(3, 6, 2), (16, 4, 1)](w, h, out)
        self.assertTrue(np.all(out >= 0))
        out1 = np.zeros(4, dtype=np.int32)
        mod.index2d[1, 4](4, 1, out1)
        np.testing.assert_array_equal(out1, [0, 1, 2, 3])
        mod.index2d[np.int64(1), [4]](4, 1, out1)
        mod.index2d.launch(1, (4,), 4, 1, out1)
        np.testing.assert_array_equal(out1, [0, 1, 2, 3])

    def test_bad_configurations(self):
        k = self.mod.saxpy
        x = np.zeros(4, np.float32)
        # What a gj_launch_config can hold, gj_launch refuses in gridjit's
        # words (status set); what it cannot, Python refuses (no status).
        for config, msg, status in [
            ((0, 1), r"^kernel 'saxpy' launched with grid \(0, 1, 1\) and block \(1, 1, 1\): every grid "
                     r"dimension must be at least 1$", "GJ_ERROR_CONFIGURATION"),
            ((1, 1, 5), r"^kernel 'saxpy': the host runtime has no streams", "GJ_ERROR_CONFIGURATION"),
            ((1, 1, None, 64), r"the launch provides 64 bytes of dynamic shared memory but the kernel declares none",
             "GJ_ERROR_CONFIGURATION"),
            ((1, (1, 1, 1, 1)), "1 to 3 dimensions", None),
            ((1.5, 1), "grid 1.5", None),
            ((-1, 1), "grid -1: every dimension must be from 1 to 2\\*\\*32-1", None),
            ((1, 2**32), "block 4294967296", None),
            ((1, 1, None, -1), "shared memory bytes -1", None),
        ]:
            with self.subTest(config=config):
                with self.assertRaisesRegex(gridjit.ConfigurationError, msg) as cm:
                    k[config](4, 1.0, x, x)
                self.assertIsInstance(cm.exception, gridjit.LaunchError)
                self.assertIsInstance(cm.exception, ValueError)
                self.assertEqual(cm.exception.status, status)
        with self.assertRaisesRegex(gridjit.ConfigurationError, r"\[grid, block\]"):
            k[1](4, 1.0, x, x)
        with self.assertRaisesRegex(TypeError, r"saxpy\[grid, block\]"):
            k(4, 1.0, x, x)
        # gridjit's own limits, with its message.
        with self.assertRaisesRegex(gridjit.ConfigurationError, "exceeds the limit of 1024 threads per block") as cm:
            k[1, 2048](4, 1.0, x, x)
        self.assertEqual(cm.exception.status, "GJ_ERROR_CONFIGURATION")

    def test_kernel_fault_is_an_exception(self):
        # A host kernel's access outside its buffers is a KernelFaultError (a
        # LaunchError) naming the kernel; the process, the runtime and the module go on. The
        # buffer ends at an inaccessible page, so the first index past it
        # faults (and nothing else of the process is overwritten first).
        import ctypes
        import mmap
        page = mmap.PAGESIZE
        region = mmap.mmap(-1, 2 * page)
        base = ctypes.addressof(ctypes.c_char.from_buffer(region))
        libc = ctypes.CDLL(None, use_errno=True)
        libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        self.assertEqual(libc.mprotect(base + page, page, 0), 0)  # PROT_NONE
        out = np.frombuffer(region, np.float32, count=page // 4)
        mod = gridjit.compile("kernel put(n: i32, out: ptr<f32>) { out[n] = 1.0; }", name="put.kir")
        for _ in range(3):
            with self.assertRaisesRegex(gridjit.KernelFaultError,
                                        r"kernel 'put' accessed memory outside its buffers \(SIGSEGV at address 0x[0-9a-f]+, in block \(0, 0, 0\)\)") as cm:
                mod.put[1, 1](page // 4, out)
            self.assertIsInstance(cm.exception, gridjit.LaunchError)
            self.assertEqual(cm.exception.status, "GJ_ERROR_FAULT")
        mod.put[1, 1](page // 4 - 1, out)
        self.assertEqual(out[-1], 1.0)

    def test_few_parameters(self):
        mod = gridjit.compile("kernel nothing() {}\nkernel seven(x: ptr<i32>) { x[0] = 7; }")
        mod.nothing[1, 1]()
        with self.assertRaisesRegex(gridjit.ArgumentError, r"^kernel 'nothing' takes 0 arguments \(\), 1 given$") as cm:
            mod.nothing[1, 1](3)
        self.assertEqual(cm.exception.status, "GJ_ERROR_ARGUMENT")
        x = np.zeros(1, np.int32)
        mod.seven[1, 1](x)
        self.assertEqual(x[0], 7)
        with self.assertRaisesRegex(gridjit.ArgumentError, r"kernel 'seven' takes 1 argument \(x: ptr<i32>\), 0 given"):
            mod.seven[1, 1]()

    def test_dynamic_shared_memory(self):
        mod = gridjit.compile(DYNAMIC_SHARED)
        x = np.arange(64, dtype=np.float32)
        mod.reverse_block[2, 32, None, 32 * 4](x)
        np.testing.assert_array_equal(x, np.concatenate([np.arange(31, -1, -1), np.arange(63, 31, -1)]))
        with self.assertRaisesRegex(gridjit.ConfigurationError, "kernel 'reverse_block' launched with .*declares dynamic"):
            mod.reverse_block[2, 32](x)

    def test_cooperative_kernel(self):
        mod = gridjit.compile(EXAMPLES / "grid_sync.kir")
        n = 1000
        x = np.arange(n, dtype=np.float32)
        tmp = np.zeros(n, np.float32)
        y = np.zeros(n, np.float32)
        mod.two_phase[4, 64](n, x, tmp, y)
        np.testing.assert_array_equal(y, x * x + np.roll(x, -1) * np.roll(x, -1))

    def test_every_scalar_type(self):
        mod = gridjit.compile(KINDS)
        out = np.zeros(11, np.float64)
        mod.kinds[1, 1](True, -128, -32768, -(2**31), -(2**63), 255, 65535, 2**32 - 1, 2**64 - 1, 1.5, 2.25, out)
        np.testing.assert_array_equal(
            out, [1, -128, -32768, -(2**31), -(2**63), 255, 65535, 2**32 - 1, float(2**64 - 1), 1.5, 2.25]
        )
        # NumPy scalars work like Python's.
        mod.kinds[1, 1](
            np.bool_(False), np.int8(1), np.int16(2), np.int32(3), np.int64(4), np.uint8(5), np.uint16(6),
            np.uint32(7), np.uint64(8), np.float32(0.5), np.float64(0.25), out,
        )  # fmt: skip
        np.testing.assert_array_equal(out, [0, 1, 2, 3, 4, 5, 6, 7, 8, 0.5, 0.25])
        # Ints become floats; infinities stay.
        mod.kinds[1, 1](True, 0, 0, 0, 0, 0, 0, 0, 0, 3, float("inf"), out)
        self.assertEqual(out[9], 3.0)
        self.assertEqual(out[10], float("inf"))

    def test_scalar_checks(self):
        mod = gridjit.compile(KINDS)
        out = np.zeros(11, np.float64)
        good = [True, 0, 0, 0, 0, 0, 0, 0, 0, 0.0, 0.0, out]

        def bad(index, value, msg):
            args = list(good)
            args[index] = value
            with self.subTest(index=index, value=value):
                with self.assertRaisesRegex(gridjit.ArgumentError, msg) as cm:
                    mod.kinds[1, 1](*args)
                self.assertIsInstance(cm.exception, gridjit.LaunchError)

        # Every message begins as gridjit's C++ does (the C API builds it).
        bad(0, 1, r"^kernel 'kinds': argument 1 \('b: bool'\) must be a bool \(True or False\), but int 1 was given$")
        bad(1, 128, r"^kernel 'kinds': argument 2 \('i8v: i8'\) must fit in i8 \(-128 to 127\), but 128 was given$")
        bad(2, -32769, "must fit in i16")
        bad(3, 2**31, "must fit in i32")
        bad(4, 2**63, "must fit in i64")
        bad(5, -1, r"argument 6 \('u8v: u8'\) must fit in u8 \(0 to 255\), but -1 was given")
        bad(7, 2**32, "must fit in u32")
        bad(8, 2**64, "must fit in u64")
        bad(3, 1.0, r"argument 4 \('i32v: i32'\) must be an integer, but float 1.0 was given \(floats are not converted")
        bad(3, np.float32(1), "must be an integer, but numpy.float32")
        bad(3, True, "must be an integer, but a bool")
        bad(3, "7", "must be an integer, but str '7' was given")
        bad(9, 1e39, r"argument 10 \('f32v: f32'\) must fit in f32, but 1e\+39 was given")
        bad(9, "x", "must be a real number, but str 'x' was given")
        bad(10, 1j, "must be a real number, but complex")
        bad(10, False, "must be a real number, but a bool")
        bad(10, 10**400, "must be a real number that fits in an f64")
        bad(11, 5, r"argument 12 \('out: ptr<f64>'\) must be an array")
        with self.assertRaisesRegex(gridjit.ArgumentError, r"^kernel 'kinds' takes 12 arguments \(b: bool, .*\), 2 given$"):
            mod.kinds[1, 1](True, 0)

    def test_array_types(self):
        mod = gridjit.compile(TYPED)
        p = np.zeros(10, np.int16)
        mod.fill_i16[1, 10](10, p)
        np.testing.assert_array_equal(p, np.arange(10) * 3)
        b = np.zeros(10, np.bool_)
        mod.fill_bool[1, 10](10, b)
        np.testing.assert_array_equal(b, np.arange(10) % 2 == 0)
        u = np.zeros(10, np.uint8)
        mod.fill_u8[1, 10](10, u)
        np.testing.assert_array_equal(u, (np.arange(10) + 200) % 256)
        # A 2-D C-contiguous array is flat memory to the kernel.
        d = np.zeros((2, 5), np.float64)
        mod.fill_f64[1, 10](10, d)
        np.testing.assert_array_equal(d.ravel(), np.arange(10) * 0.5)

    def test_array_checks(self):
        x = np.zeros(16, np.float32)
        k = self.mod.saxpy[1, 16]
        with self.assertRaisesRegex(
            gridjit.ArgumentError,
            r"^kernel 'saxpy': argument 3 \('x: ptr<f32>'\) must point to f32, but numpy.ndarray of float64 "
            r"\(element type f64\) was given$",
        ):
            k(16, 1.0, np.zeros(16), x)
        with self.assertRaisesRegex(gridjit.ArgumentError, "argument 4 .*not C-contiguous"):
            k(8, 1.0, x[:8], np.zeros(16, np.float32)[::2])
        ro = np.zeros(16, np.float32)
        ro.flags.writeable = False
        with self.assertRaisesRegex(gridjit.ArgumentError, "argument 3 .*read-only"):
            k(16, 1.0, ro, x)
        with self.assertRaisesRegex(gridjit.ArgumentError, "complex128"):
            k(16, 1.0, np.zeros(16, np.complex128), x)
        with self.assertRaisesRegex(gridjit.ArgumentError, r"argument 4 \('y: ptr<f32>'\) must be an array .* but list"):
            k(16, 1.0, x, [1.0] * 16)
        # An empty array is fine when nothing is touched.
        k(0, 1.0, np.zeros(0, np.float32), np.zeros(0, np.float32))

    def test_other_host_memory(self):
        # The buffer protocol (array.array), the array interface of a
        # non-NumPy object, DLPack (a CPU tensor), and views of NumPy arrays.
        n = 8
        x = array.array("f", range(n))
        y = array.array("f", [1.0] * n)
        self.mod.saxpy[1, n](n, 2.0, x, y)
        self.assertEqual(list(y), [2.0 * i + 1 for i in range(n)])
        with self.assertRaisesRegex(gridjit.ArgumentError, r"must point to f32, but array.array \(element type f64\)"):
            self.mod.saxpy[1, n](n, 2.0, array.array("d", range(n)), y)

        class Interface:
            def __init__(self, a):
                self.a = a
                self.__array_interface__ = a.__array_interface__

        xs = np.arange(n, dtype=np.float32)
        for wrap in (Interface, gjtest.DLPackOnly):
            with self.subTest(wrap=wrap.__name__):
                ys = np.ones(n, np.float32)
                self.mod.saxpy[1, n](n, 3.0, wrap(xs), wrap(ys))
                np.testing.assert_array_equal(ys, 3 * xs + 1)
        with self.assertRaisesRegex(gridjit.ArgumentError, "DLPack element type .* not a KIR scalar type|element type f64"):
            self.mod.saxpy[1, n](n, 2.0, gjtest.DLPackOnly(np.zeros(n)), ys)
        # An offset view passes its own first element.
        big = np.zeros(20, np.float32)
        self.mod.saxpy[1, 4](4, 1.0, np.ones(4, np.float32), big[10:14])
        np.testing.assert_array_equal(np.nonzero(big)[0], [10, 11, 12, 13])


class DeviceArrayTest(unittest.TestCase):
    def test_host_device_array(self):
        mod = gridjit.compile(gjtest.SAXPY)
        rt = mod.runtime
        x = gridjit.to_device(np.arange(100, dtype=np.float32), runtime=rt)
        y = rt.device_array(100, "f32")
        self.assertEqual((y.shape, y.dtype, y.nbytes), ((100,), gridjit.f32, 400))
        np.testing.assert_array_equal(y.copy_to_host(), np.zeros(100))  # zeroed on the host
        mod.saxpy[1, 128](100, 2.0, x, y)
        np.testing.assert_array_equal(y.copy_to_host(), 2 * np.arange(100))
        # Host device memory is host memory: NumPy views it.
        np.testing.assert_array_equal(np.asarray(y), 2 * np.arange(100))
        out = np.empty(100, np.float32)
        self.assertIs(y.copy_to_host(out), out)
        like = gridjit.device_array_like(np.zeros((3, 4), np.int64), runtime=rt)
        self.assertEqual((like.shape, like.dtype), ((3, 4), gridjit.i64))
        # A copy is no launch: a wrong array is an invalid argument.
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "element type f64 does not match the DeviceArray's f32"):
            y.copy_from_host(np.zeros(100))
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "396 bytes, but the DeviceArray holds 400"):
            y.copy_from_host(np.zeros(99, np.float32))
        with self.assertRaisesRegex(gridjit.ArgumentError, r"must point to i32, but gridjit.DeviceArray of f32"):
            gridjit.compile(GRID2D).index2d[1, 1](1, 1, y)
        self.assertFalse(hasattr(y, "__cuda_array_interface__"))

    def test_dlpack_export(self):
        d = gridjit.to_device(np.arange(12, dtype=np.float32).reshape(3, 4))
        self.assertEqual(d.__dlpack_device__(), (1, 0))  # kDLCPU
        a = np.from_dlpack(d)
        self.assertEqual((a.shape, a.dtype), ((3, 4), np.float32))
        # The same memory, not a copy.
        self.assertEqual(a.__array_interface__["data"][0], d.address)
        d.copy_from_host(np.full((3, 4), 7, np.float32))
        np.testing.assert_array_equal(a, np.full((3, 4), 7))
        # The consumer keeps the memory: the DeviceArray goes when it is done.
        alive = weakref.ref(d)
        del d
        gc.collect()
        self.assertIsNotNone(alive())
        np.testing.assert_array_equal(a, np.full((3, 4), 7))
        del a
        gc.collect()
        self.assertIsNone(alive())
        # Every KIR type NumPy takes through DLPack (its 1.x has no bool).
        for dtype in (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64,
                      np.float32, np.float64):
            with self.subTest(dtype=dtype):
                host = np.arange(5).astype(dtype)
                np.testing.assert_array_equal(np.from_dlpack(gridjit.to_device(host)), host)
        # A zero-size array and a 0-d one.
        self.assertEqual(np.from_dlpack(gridjit.device_array((0, 3), "f64")).shape, (0, 3))
        self.assertEqual(np.from_dlpack(gridjit.device_array((), "i32")).shape, ())
        # A capsule nobody consumes does not keep the array for ever: the
        # next export lets it go.
        d = gridjit.device_array(4)
        alive = weakref.ref(d)
        capsule = d.__dlpack__()
        del d, capsule
        gridjit.device_array(1).__dlpack__()
        gc.collect()
        self.assertIsNone(alive())

    def test_gridjit_takes_its_own_dlpack(self):
        # As another framework would pass a gridjit array back: only DLPack.
        x = gridjit.to_device(np.arange(8, dtype=np.float32))
        y = gridjit.to_device(np.ones(8, np.float32))
        gridjit.compile(gjtest.SAXPY).saxpy[1, 8](8, 2.0, gjtest.DLPackOnly(x), gjtest.DLPackOnly(y))
        np.testing.assert_array_equal(y.copy_to_host(), 2 * np.arange(8) + 1)


class DefaultTargetTest(unittest.TestCase):
    def test_one_default_target(self):
        # compile(), the arrays and the runtimes default to one target, the
        # host, so that code naming no target works together.
        self.assertEqual(gridjit.DEFAULT_TARGET, "host")
        mod = gridjit.compile(gjtest.SAXPY)
        x = gridjit.to_device(np.arange(16, dtype=np.float32))
        y = gridjit.device_array(16)
        like = gridjit.device_array_like(np.zeros(4, np.int32))
        self.assertEqual(
            [mod.target, x.runtime.target, y.runtime.target, like.runtime.target, gridjit.Runtime().target],
            ["host"] * 5,
        )
        self.assertIs(gridjit.runtime(), gridjit.runtime("host"))
        self.assertIs(mod.runtime, x.runtime)
        mod.saxpy[1, 16](16, 2.0, x, y)
        np.testing.assert_array_equal(y.copy_to_host(), 2 * np.arange(16))
        self.assertEqual(gridjit.compile_async(gjtest.SAXPY).result().target, "host")


class AsyncTest(unittest.TestCase):
    def test_compile_async(self):
        sources = [gjtest.SAXPY.replace("saxpy", "saxpy%d" % i) for i in range(6)]
        futures = [gridjit.compile_async(s) for s in sources]
        for f in futures:
            self.assertIsInstance(f, concurrent.futures.Future)
        done = list(concurrent.futures.as_completed(futures))
        self.assertEqual(len(done), 6)
        for i, f in enumerate(futures):
            mod = f.result()
            k = mod["saxpy%d" % i]
            x = np.arange(4, dtype=np.float32)
            y = np.zeros(4, np.float32)
            k[1, 4](4, float(i), x, y)
            np.testing.assert_array_equal(y, i * x)

    def test_compile_async_error(self):
        f = gridjit.compile_async("kernel k() { nope; }", name="async.kir")
        with self.assertRaisesRegex(gridjit.CompileError, "async.kir:1:") as cm:
            f.result()
        self.assertIs(f.exception(), cm.exception)
        callbacks = []
        f2 = gridjit.compile_async(gjtest.SAXPY)
        f2.add_done_callback(callbacks.append)
        f2.result()
        concurrent.futures.wait([f2])
        self.assertEqual(callbacks, [f2])


class PackageTest(unittest.TestCase):
    def test_version_and_library(self):
        self.assertRegex(gridjit.__version__, r"^\d+\.\d+\.\d+")
        self.assertTrue(os.path.samefile(gridjit.library_path, os.environ["GRIDJIT_LIBRARY"]))

    def test_without_numpy(self):
        # NumPy is optional: buffers, DeviceArray and copies into buffers work.
        out = gjtest.run_python(
            "import sys, array\n"
            "sys.modules['numpy'] = None  # import numpy fails\n"
            "import gridjit\n"
            "sys.path.insert(0, %r)\n"
            "import gjtest\n"
            "m = gridjit.compile(gjtest.SAXPY)\n"
            "x = array.array('f', range(8))\n"
            "y = gridjit.to_device(array.array('f', [1.0] * 8), target='host')\n"
            "m.saxpy[1, 8](8, 2.0, x, y)\n"
            "out = array.array('f', [0.0] * 8)\n"
            "y.copy_to_host(out)\n"
            "print(list(out))\n" % os.path.join(os.path.dirname(__file__), "Inputs")
        ).stdout
        self.assertEqual(out.strip(), str([2.0 * i + 1 for i in range(8)]))

    def test_scalar_types(self):
        self.assertIs(gridjit._types.resolve(np.float32), gridjit.f32)
        self.assertIs(gridjit._types.resolve("u16"), gridjit.u16)
        self.assertIs(gridjit._types.resolve(float), gridjit.f64)
        with self.assertRaises(TypeError):
            gridjit._types.resolve(np.complex64)


if __name__ == "__main__":
    unittest.main()
