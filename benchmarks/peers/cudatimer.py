"""CUDA events through the driver API (ctypes on libcuda.so.1), so that every
framework's kernels are timed by the same clock on the same stream.

Every framework measured here (gridjit, Numba-CUDA, CuPy, Triton through
PyTorch) launches on the device's primary context and, unless told
otherwise, on the legacy default stream: events recorded on stream 0 of
that context bracket their kernels whichever launched them.
"""

import ctypes
import os
from ctypes import byref, c_float, c_int, c_void_p


class DriverError(RuntimeError):
    pass


class CudaTimer:
    """Times GPU work with cuEventRecord / cuEventElapsedTime on the legacy
    default stream of device \\p device's primary context."""

    def __init__(self, device=0):
        self.cu = ctypes.CDLL(os.environ.get("GRIDJIT_CUDA_DRIVER") or "libcuda.so.1", mode=os.RTLD_LOCAL)
        self._check(self.cu.cuInit(0), "cuInit")
        dev = c_int()
        self._check(self.cu.cuDeviceGet(byref(dev), c_int(device)), "cuDeviceGet")
        self.ctx = c_void_p()
        self._check(self.cu.cuDevicePrimaryCtxRetain(byref(self.ctx), dev), "cuDevicePrimaryCtxRetain")
        self.current()
        name = ctypes.create_string_buffer(256)
        self._check(self.cu.cuDeviceGetName(name, c_int(256), dev), "cuDeviceGetName")
        self.device_name = name.value.decode()
        major, minor = c_int(), c_int()
        self._check(self.cu.cuDeviceGetAttribute(byref(major), 75, dev), "cuDeviceGetAttribute")
        self._check(self.cu.cuDeviceGetAttribute(byref(minor), 76, dev), "cuDeviceGetAttribute")
        self.arch = "sm_%d%d" % (major.value, minor.value)
        version = c_int()
        self._check(self.cu.cuDriverGetVersion(byref(version)), "cuDriverGetVersion")
        self.driver_version = version.value
        # CUDA 12.8 added cuEventElapsedTime_v2 (the same call); a driver
        # keeps the old symbol for old programs, but take the new first.
        self._elapsed = getattr(self.cu, "cuEventElapsedTime_v2", None) or self.cu.cuEventElapsedTime
        self.start, self.end = c_void_p(), c_void_p()
        self._check(self.cu.cuEventCreate(byref(self.start), 0), "cuEventCreate")
        self._check(self.cu.cuEventCreate(byref(self.end), 0), "cuEventCreate")

    def _check(self, status, what):
        if status != 0:
            raise DriverError("%s failed: CUresult %d" % (what, status))

    def current(self):
        """Makes the primary context current in the calling thread (a
        library may leave another, or none, current)."""
        self._check(self.cu.cuCtxSetCurrent(self.ctx), "cuCtxSetCurrent")

    def synchronize(self):
        self.current()
        self._check(self.cu.cuCtxSynchronize(), "cuCtxSynchronize")

    def kernel_ms(self, launch, reps=20, batch=10):
        """The median over \\p reps of the GPU time of \\p batch back-to-back
        calls of \\p launch, per call, in milliseconds. One untimed call
        before each batch keeps the GPU busy while the start event is
        recorded, so that the first launch's host overhead is not counted."""
        times = []
        for _ in range(reps):
            launch()
            self.current()
            self._check(self.cu.cuEventRecord(self.start, c_void_p(0)), "cuEventRecord")
            for _ in range(batch):
                launch()
            self.current()
            self._check(self.cu.cuEventRecord(self.end, c_void_p(0)), "cuEventRecord")
            self._check(self.cu.cuEventSynchronize(self.end), "cuEventSynchronize")
            ms = c_float()
            self._check(self._elapsed(byref(ms), self.start, self.end), "cuEventElapsedTime")
            times.append(ms.value / batch)
        times.sort()
        return times[len(times) // 2]
