# The Python package on the CUDA target, through the test suite's fake CUDA
# driver (unittests/FakeCuda: device memory is host memory, launches are
# checked and logged but no kernel code runs): compiling for the device's
# architecture, gridjit's DeviceArray, __cuda_array_interface__ and DLPack
# objects of "another framework" (memory it allocated through the driver
# itself), streams, shared memory, cooperative launches, and the errors.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t
# RUN: env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache GRIDJIT_CUDA_DRIVER=%fake_cuda \
# RUN:   GRIDJIT_FAKE_CUDA_LOG=%t/launches.log %gridjit_python %s

import ctypes
import gc
import os
import pathlib
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
LOG = os.environ["GRIDJIT_FAKE_CUDA_LOG"]
FAKE = os.environ["GRIDJIT_CUDA_DRIVER"]

DYNAMIC_SHARED = """
kernel scale_tile(n: i32, x: ptr<f32>) {
  shared tile: [f32];
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { tile[thread_idx.x] = x[i]; x[i] = tile[thread_idx.x] * 2.0; }
}
"""


def launches():
    """The fake driver's launch lines so far."""
    if not os.path.exists(LOG):
        return []
    with open(LOG) as f:
        return [line.strip() for line in f if line.startswith("cuLaunch")]


class Driver:
    """The fake driver, used directly as another framework would use the
    real one: its own allocations, in the primary context of device 0."""

    def __init__(self):
        d = self.lib = ctypes.CDLL(FAKE)
        d.cuMemAlloc_v2.argtypes = [ctypes.POINTER(ctypes.c_uint64), ctypes.c_size_t]
        d.cuMemFree_v2.argtypes = [ctypes.c_uint64]
        d.cuMemcpyHtoD_v2.argtypes = [ctypes.c_uint64, ctypes.c_void_p, ctypes.c_size_t]
        d.cuMemcpyDtoH_v2.argtypes = [ctypes.c_void_p, ctypes.c_uint64, ctypes.c_size_t]
        assert d.cuInit(0) == 0
        dev = ctypes.c_int()
        assert d.cuDeviceGet(ctypes.byref(dev), 0) == 0
        ctx = ctypes.c_void_p()
        assert d.cuDevicePrimaryCtxRetain(ctypes.byref(ctx), dev) == 0
        self.ctx = ctx

    def alloc(self, nbytes):
        assert self.lib.cuCtxSetCurrent(self.ctx) == 0
        p = ctypes.c_uint64()
        assert self.lib.cuMemAlloc_v2(ctypes.byref(p), nbytes) == 0
        return p.value

    def write(self, address, array):
        assert self.lib.cuCtxSetCurrent(self.ctx) == 0
        assert self.lib.cuMemcpyHtoD_v2(address, array.ctypes.data, array.nbytes) == 0

    def read(self, address, array):
        assert self.lib.cuCtxSetCurrent(self.ctx) == 0
        assert self.lib.cuMemcpyDtoH_v2(array.ctypes.data, address, array.nbytes) == 0
        return array


class ForeignArray:
    """A device array of "another framework", seen only through
    __cuda_array_interface__ (version 3)."""

    def __init__(self, driver, shape, typestr, **extra):
        self.nbytes = int(np.prod(shape)) * int(typestr[2:])
        self.address = driver.alloc(max(self.nbytes, 1))
        self.__cuda_array_interface__ = dict(
            shape=tuple(shape), typestr=typestr, data=(self.address, False), strides=None, version=3, stream=None
        )
        self.__cuda_array_interface__.update(extra)


class DLManagedTensor(ctypes.Structure):
    from gridjit._interop import DLTensor

    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_PyCapsule_New = ctypes.pythonapi.PyCapsule_New
_PyCapsule_New.restype = ctypes.py_object
_PyCapsule_New.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class ForeignDLPack:
    """A device tensor of "another framework", seen only through DLPack;
    remembers the stream each __dlpack__ call named."""

    def __init__(self, driver, n, code=2, bits=32, device_type=2):
        self.address = driver.alloc(n * bits // 8)
        self.shape = (ctypes.c_int64 * 1)(n)
        self.managed = DLManagedTensor()
        t = self.managed.dl_tensor
        t.data = self.address
        t.device.device_type = device_type
        t.device.device_id = 0
        t.ndim = 1
        t.dtype.code, t.dtype.bits, t.dtype.lanes = code, bits, 1
        t.shape = self.shape
        t.strides = None
        t.byte_offset = 0
        self.streams = []

    def __dlpack__(self, stream=None):
        self.streams.append(stream)
        return _PyCapsule_New(ctypes.addressof(self.managed), b"dltensor", None)

    def __dlpack_device__(self):
        return (self.managed.dl_tensor.device.device_type, 0)


class CudaTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.driver = Driver()
        cls.mod = gridjit.compile(gjtest.SAXPY, target="cuda")

    def test_compile_for_the_device(self):
        self.assertEqual(gridjit.cuda_device_count(), 1)
        self.assertEqual(self.mod.target, "cuda")
        # The fake's default device is an sm_80.
        self.assertEqual(self.mod.arch, "sm_80")
        self.assertIn(".target sm_80", self.mod.ptx)
        self.assertIn(".entry saxpy", self.mod.ptx)
        self.assertEqual(self.mod.saxpy.signature, "saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>)")
        # An explicit architecture.
        self.assertIn(".target sm_90", gridjit.compile(gjtest.SAXPY, target="cuda:sm_90").ptx)

    def test_device_array_round_trip(self):
        host = np.arange(1000, dtype=np.float32)
        d = gridjit.to_device(host, target="cuda")
        self.assertEqual(d.runtime.target, "cuda")
        np.testing.assert_array_equal(d.copy_to_host(), host)
        cai = d.__cuda_array_interface__
        self.assertEqual((cai["shape"], cai["typestr"], cai["version"]), ((1000,), "<f4", 3))
        self.assertEqual(cai["data"], (d.address, False))
        # Another framework reads gridjit's device memory through the address.
        np.testing.assert_array_equal(self.driver.read(d.address, np.empty(1000, np.float32)), host)
        self.assertFalse(hasattr(d, "__array_interface__"))
        e = gridjit.device_array((10, 10), np.int32, target="cuda")
        self.assertEqual((e.shape, e.dtype, e.nbytes, len(e)), ((10, 10), gridjit.i32, 400, 10))

    def test_dlpack_export(self):
        from gridjit import _interop

        d = gridjit.to_device(np.arange(16, dtype=np.float32), target="cuda")
        self.assertEqual(d.__dlpack_device__(), (2, 0))  # kDLCUDA, device 0


        address, t, capsule, extent = _interop.from_dlpack(gjtest.DLPackOnly(d), True)
        self.assertEqual((address, t, extent), (d.address, gridjit.f32, 64))
        del capsule
        before = len(launches())
        y = gridjit.device_array(16, "f32", target="cuda")
        self.mod.saxpy[1, 16](16, 2.0, gjtest.DLPackOnly(d), y)
        self.assertEqual(len(launches()), before + 1)

    def test_launch_with_device_arrays(self):
        before = len(launches())
        x = gridjit.to_device(np.arange(256, dtype=np.float32), target="cuda")
        y = gridjit.device_array(256, np.float32, target="cuda")
        self.mod.saxpy[2, 128](256, 2.0, x, y)
        gridjit.runtime("cuda").synchronize()
        self.assertEqual(launches()[before:], ["cuLaunchKernel saxpy grid (2, 1, 1) block (128, 1, 1) shared 0"])

    def test_none_is_the_null_pointer(self):
        # None for a ptr<T> is KIR's null: launched, not refused as "not an
        # array" (the kernel decides what null means; saxpy with n = 0
        # reads nothing).
        before = len(launches())
        self.mod.saxpy[1, 1](0, 2.0, None, None)
        gridjit.runtime("cuda").synchronize()
        self.assertEqual(launches()[before:], ["cuLaunchKernel saxpy grid (1, 1, 1) block (1, 1, 1) shared 0"])

    def test_timeout_and_cancel_are_refused(self):
        # A GPU kernel cannot be stopped once queued: refused, in gridjit's
        # words, and nothing is launched (docs/Python.md, "Timeouts,
        # cancellation and Ctrl-C"). A long grid keeps the fast path too.
        before = len(launches())
        x = gridjit.to_device(np.arange(256, dtype=np.float32), target="cuda")
        y = gridjit.device_array(256, np.float32, target="cuda")
        with self.assertRaisesRegex(
            gridjit.InvalidArgumentError,
            r"^kernel 'saxpy': the nvptx runtime cannot stop a launch "
            r"\(LaunchOptions::TimeoutMilliseconds must be 0 there\)$",
        ):
            self.mod.saxpy[2, 128](256, 2.0, x, y, timeout=1)
        with self.assertRaisesRegex(
            gridjit.InvalidArgumentError,
            r"^kernel 'saxpy': the nvptx runtime cannot stop a launch \(LaunchOptions::Cancel must be null there\)$",
        ):
            self.mod.saxpy.launch(2, 128, 256, 2.0, x, y, cancel=gridjit.CancelToken())
        self.assertEqual(launches()[before:], [])
        self.assertFalse(self.mod.saxpy[1 << 30, 1024]._long)

    def test_foreign_cuda_array_interface(self):
        before = len(launches())
        x = ForeignArray(self.driver, (64,), "<f4")
        y = ForeignArray(self.driver, (8, 8), "<f4", stream=1)
        self.mod.saxpy[(1, 2), (32, 2)](64, 1.0, x, y)
        self.assertEqual(launches()[before:], ["cuLaunchKernel saxpy grid (1, 2, 1) block (32, 2, 1) shared 0"])
        k = self.mod.saxpy[1, 64]
        for bad, msg in [
            (ForeignArray(self.driver, (64,), "<f8"), r"must point to f32, but __main__.ForeignArray \(element type f64\)"),
            (ForeignArray(self.driver, (64,), "<c8"), "element type '<c8' is not a KIR scalar type"),
            (ForeignArray(self.driver, (8, 8), "<f4", strides=(4, 32)), "not C-contiguous"),
            (ForeignArray(self.driver, (64,), "<f4", mask=object()), "masked arrays are not supported"),
        ]:
            with self.subTest(msg=msg):
                with self.assertRaisesRegex(gridjit.ArgumentError, r"^kernel 'saxpy': argument 3 \('x: ptr<f32>'\) .*" + msg):
                    k(64, 1.0, bad, y)
        ro = ForeignArray(self.driver, (64,), "<f4")
        ro.__cuda_array_interface__["data"] = (ro.address, True)
        with self.assertRaisesRegex(gridjit.ArgumentError, "read-only"):
            k(64, 1.0, ro, y)
        self.assertEqual(len(launches()), before + 1)

    def test_extents(self):
        """Every array argument reaches gj_launch with its extent (for the
        kernel checker, docs/Check.md): a DeviceArray's bytes, a
        __cuda_array_interface__'s from its shape and type, a DLPack
        tensor's; scalars and KIR's null pointer have none."""
        from gridjit import _kernel

        extents = []
        real = _kernel._launch

        def record(lm, name, config, args, nargs, arg_size):
            extents.append([args[i].extent for i in range(nargs.value)])
            return real(lm, name, config, args, nargs, arg_size)

        _kernel._launch = record  # taken by the kernels made from here on
        try:
            mod = gridjit.compile(gjtest.SAXPY, target="cuda")
        finally:
            _kernel._launch = real
        y = gridjit.device_array(16, "f32", target="cuda")
        mod.saxpy[1, 64](64, 1.0, ForeignArray(self.driver, (8, 8), "<f4"), y)
        mod.saxpy[1, 64](64, 1.0, ForeignDLPack(self.driver, 12), None)
        self.assertEqual(extents, [[0, 0, 256, 64], [0, 0, 48, 0]])

    def test_foreign_dlpack(self):
        before = len(launches())
        x = ForeignDLPack(self.driver, 32)
        y = ForeignDLPack(self.driver, 32)
        self.mod.saxpy[1, 32](32, 1.0, x, y)
        # Without a stream the launch goes to the legacy default stream (1
        # in DLPack's numbering), and the producer was told so.
        self.assertEqual(x.streams, [1])
        self.mod.saxpy[1, 32, 0x5000](32, 1.0, x, y)
        self.assertEqual(x.streams, [1, 0x5000])
        self.assertEqual(len(launches()), before + 2)
        with self.assertRaisesRegex(gridjit.ArgumentError, r"must point to f32, but .* \(element type f64\)"):
            self.mod.saxpy[1, 32](32, 1.0, ForeignDLPack(self.driver, 32, bits=64), y)
        with self.assertRaisesRegex(gridjit.ArgumentError, r"DLPack element type \(code 5"):
            self.mod.saxpy[1, 32](32, 1.0, ForeignDLPack(self.driver, 32, code=5), y)

    def test_streams(self):
        class TorchLike:
            cuda_stream = 0x1000

        class CupyLike:
            ptr = 0x2000

        class NumbaLike:
            handle = ctypes.c_void_p(0x3000)

        class Protocol:
            def __cuda_stream__(self):
                return (0, 0x4000)

        x = gridjit.device_array(16, "f32", target="cuda")
        for stream, handle in [(TorchLike(), 0x1000), (CupyLike(), 0x2000), (NumbaLike(), 0x3000),
                               (Protocol(), 0x4000), (0x5000, 0x5000), (None, 0)]:  # fmt: skip
            with self.subTest(stream=stream):
                launch = self.mod.saxpy[1, 16, stream]
                self.assertEqual(launch.stream, handle)
                launch(16, 1.0, x, x)
        with self.assertRaisesRegex(TypeError, "not a CUDA stream"):
            self.mod.saxpy[1, 16, "default"]

    def test_shared_memory_and_cooperative(self):
        before = len(launches())
        mod = gridjit.compile(DYNAMIC_SHARED, target="cuda")
        x = gridjit.device_array(64, "f32", target="cuda")
        mod.scale_tile[2, 32, None, 128](64, x)
        coop = gridjit.compile(EXAMPLES / "grid_sync.kir", target="cuda")
        arrays = [gridjit.device_array(100, "f32", target="cuda") for _ in range(3)]
        coop.two_phase[2, 64](100, *arrays)
        self.assertEqual(
            launches()[before:],
            [
                "cuLaunchKernel scale_tile grid (2, 1, 1) block (32, 1, 1) shared 128",
                "cuLaunchCooperativeKernel two_phase grid (2, 1, 1) block (64, 1, 1) shared 0",
            ],
        )
        with self.assertRaisesRegex(gridjit.ConfigurationError, "kernel 'scale_tile' launched with"):
            mod.scale_tile[2, 32](64, x)

    def test_memory_of_the_wrong_kind(self):
        x = gridjit.device_array(16, "f32", target="cuda")
        with self.assertRaisesRegex(
            gridjit.ArgumentError,
            r"^kernel 'saxpy': argument 3 \('x: ptr<f32>'\) cannot take numpy.ndarray of float32: host memory "
            r"cannot be passed to a CUDA kernel; copy it to the device first \(gridjit.to_device",
        ):
            self.mod.saxpy[1, 16](16, 1.0, np.zeros(16, np.float32), x)
        host_rt = gridjit.runtime("host")
        with self.assertRaisesRegex(gridjit.ArgumentError, "a DeviceArray in host memory cannot be passed to a CUDA kernel"):
            self.mod.saxpy[1, 16](16, 1.0, host_rt.device_array(16), x)
        host_mod = gridjit.compile(gjtest.SAXPY, target="host")
        with self.assertRaisesRegex(gridjit.ArgumentError, "CUDA device memory cannot be passed to a host kernel"):
            host_mod.saxpy[1, 16](16, 1.0, x, np.zeros(16, np.float32))
        with self.assertRaisesRegex(gridjit.ArgumentError, r"__cuda_array_interface__\) cannot be passed to a host kernel"):
            host_mod.saxpy[1, 16](16, 1.0, ForeignArray(self.driver, (16,), "<f4"), np.zeros(16, np.float32))
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "compiled for cuda cannot run on a host runtime"):
            gridjit.compile(gjtest.SAXPY, target="cuda", runtime=host_rt)

    def test_device_memory_is_freed(self):
        live = self.driver.lib.gridjitFakeCudaLiveAllocations
        before = live()
        arrays = [gridjit.device_array(1000, "f32", target="cuda") for _ in range(5)]
        self.assertEqual(live(), before + 5)
        self.mod.saxpy[4, 256](1000, 1.0, arrays[0], arrays[1])
        del arrays
        gc.collect()
        self.assertEqual(live(), before)

    def test_module_on_another_runtime(self):
        rt = gridjit.Runtime("cuda", device=0, use_cubin_cache=False)
        mod = self.mod.load(rt)
        self.assertIs(mod.runtime, rt)
        x = rt.device_array(16, "f32")
        before = len(launches())
        mod.saxpy[1, 16](16, 1.0, x, x)
        self.assertEqual(len(launches()), before + 1)


    def test_cubins_in_a_compilers_cache_and_runtime_warnings(self):
        # With compiler=, the runtime keeps its cubins in that compiler's
        # directory (one directory, one pruning policy), not in cache_dir.
        tmp = os.environ["GJ_TEST_TMP"]
        shared, unused = os.path.join(tmp, "shared-cubins"), os.path.join(tmp, "unused-cubins")
        c = gridjit.Compiler("cuda:sm_80", cache_dir=shared)
        rt = gridjit.Runtime("cuda", compiler=c, cache_dir=unused)
        x = rt.device_array(16, "f32")
        c.compile(gjtest.SAXPY).load(rt).saxpy[1, 16](16, 1.0, x, x)
        self.assertEqual(len(os.listdir(shared)), 2)  # the module's entry and the cubin's
        self.assertFalse(os.path.exists(unused))
        self.assertEqual(rt.warnings, ())
        # A cache directory the runtime cannot use: one warning, kept for
        # the caller, and the load still works.
        blocker = os.path.join(tmp, "not-a-directory")
        open(blocker, "w").close()
        rt2 = gridjit.Runtime("cuda", cache_dir=os.path.join(blocker, "cubins"))
        x2 = rt2.device_array(16, "f32")
        self.mod.load(rt2).saxpy[1, 16](16, 1.0, x2, x2)
        self.assertEqual(len(rt2.warnings), 1)
        self.assertIn("cubins are not kept", rt2.warnings[0])


class DeviceSelectionTest(unittest.TestCase):
    """Each in a fresh process: the fake reads its configuration at cuInit."""

    def run_with(self, devices, code, **env):
        env = dict(env, GRIDJIT_FAKE_CUDA_DEVICES=devices)
        prologue = "import gridjit, sys\nsys.path.insert(0, %r)\nimport gjtest\n" % os.path.join(
            os.path.dirname(__file__), "Inputs"
        )
        return gjtest.run_python(prologue + code, env=env).stdout

    def test_architecture_follows_the_device(self):
        code = "print(gridjit.compile(gjtest.SAXPY, target='cuda').arch)"
        self.assertEqual(self.run_with("sm_86:84:24GiB", code).strip(), "sm_86")
        # Newer than gridjit knows: the newest it knows.
        self.assertEqual(self.run_with("sm_100:132:80GiB", code).strip(), "sm_90")
        # Device 1 of two, through its runtime.
        code1 = "print(gridjit.compile(gjtest.SAXPY, target='cuda', runtime=gridjit.Runtime('cuda', device=1)).arch)"
        self.assertEqual(self.run_with("sm_80:108:40GiB,sm_75:40:16GiB", code1).strip(), "sm_75")

    def test_no_device(self):
        out = self.run_with(
            "0",
            "print(gridjit.cuda_device_count())\n"
            "m = gridjit.compile(gjtest.SAXPY, target='cuda')\n"
            "print(m.arch)\n"
            "try:\n"
            "    m.saxpy[1, 1](1, 1.0, None, None)\n"
            "except gridjit.NoDeviceError as e:\n"
            "    print('NoDeviceError', e.status)\n",
        )
        # No device: PTX still compiles (for the default sm_80); running is the error.
        self.assertEqual(out.split(), ["0", "sm_80", "NoDeviceError", "GJ_ERROR_NO_DEVICE"])

    def test_driver_failures_have_their_kind(self):
        # A driver call that failed is a DriverError; what the driver's
        # result means decides the class: a kernel's fault on the device
        # (CUDA_ERROR_ILLEGAL_ADDRESS) is a KernelFaultError, the driver's
        # watchdog a KernelTimeoutError, as on the host.
        for result, cls in [(2, "DriverError"), (700, "KernelFaultError"), (702, "KernelTimeoutError")]:
            with self.subTest(result=result):
                out = self.run_with(
                    "1",
                    "x = gridjit.device_array(4, 'f32', target='cuda')\n"
                    "try:\n"
                    "    gridjit.compile(gjtest.SAXPY, target='cuda').saxpy[1, 4](4, 1.0, x, x)\n"
                    "except gridjit.Error as e:\n"
                    "    print(type(e).__name__, e.status, isinstance(e, gridjit.LaunchError))\n"
                    "    print(e)\n",
                    GRIDJIT_FAKE_CUDA_FAIL="cuLaunchKernel:%d" % result,
                )
                self.assertEqual(out.split("\n")[0].split()[0], cls, out)
                self.assertIn("cuLaunchKernel failed", out)
                self.assertIn("(%d)" % result, out)


if __name__ == "__main__":
    unittest.main()
