# f16 and bf16 buffers on the host: a kernel reads them, computes in f32
# (or f64) and writes them back, compared bit for bit with NumPy's float16
# rounding (f16) and with a bfloat16 reference made with integer operations
# here (bf16; NumPy has none). The inputs sweep the formats' boundaries:
# zeros of both signs, subnormals, the smallest normals, the largest finite
# values and the values that round past them to infinity, ties, NaN.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import struct
import sys
import unittest

import numpy as np

import gridjit

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

SOURCE = """
kernel widen_f16(n: i32, x: ptr<f16>, y: ptr<f32>, z: ptr<f64>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = x[i] as f32; z[i] = x[i] as f64; }
}
kernel narrow_f16(n: i32, x: ptr<f32>, d: ptr<f64>, y: ptr<f16>, z: ptr<f16>, w: ptr<f16>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = x[i] as f16; z[i] = d[i] as f16; w[i] = (x[i] as i32) as f16; }
}
kernel widen_bf16(n: i32, x: ptr<bf16>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = x[i] as f32; }
}
kernel narrow_bf16(n: i32, x: ptr<f32>, d: ptr<f64>, y: ptr<bf16>, z: ptr<bf16>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = x[i] as bf16; z[i] = d[i] as bf16; }
}
kernel scale(n: i32, a: f16, x: ptr<f16>, y: ptr<f16>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = ((a as f32) * (x[i] as f32)) as f16; }
}
"""


def bf16_from_f64(v):
    """bfloat16 bits of the double v, rounded once to nearest even, with
    integer operations on the double's bits (NaN: a quiet NaN)."""
    (b,) = struct.unpack("<Q", struct.pack("<d", v))
    sign = (b >> 48) & 0x8000
    exp = (b >> 52) & 0x7FF
    mant = b & ((1 << 52) - 1)
    if exp == 0x7FF:
        return sign | 0x7F80 | (0x40 if mant else 0)
    if exp == 0:
        return sign
    e = exp - 1023
    if e > 127:
        return sign | 0x7F80
    m = mant | (1 << 52)
    shift = 52 - 7 + max(0, -126 - e)
    if shift > 53:
        return sign
    r = ((e + 126) << 7 if e >= -126 else 0) + (m >> shift)
    rest, half = m & ((1 << shift) - 1), 1 << (shift - 1)
    if rest > half or (rest == half and r & 1):
        r += 1
    return sign | r


def bits(a):
    return a.view(np.uint16)


def sweep():
    """f64 values at the formats' edges, and random ones."""
    f16max, bf16max = 65504.0, float.fromhex("0x1.fep127")
    vals = [0.0, -0.0, 1.0, -1.0, 0.1, 1 / 3, 2.0**-24, 2.0**-25, 2.0**-25 * 1.5, 2.0**-14,
            2.0**-14 * (1 - 2**-11), f16max, 65519.99, 65520.0, -65520.0, 1e6,
            2.0**-133, 2.0**-134, 2.0**-126, bf16max, float.fromhex("0x1.ff7fffffffffffp127"),
            float.fromhex("0x1.ff8p127"), 3e38, 1 + 2**-8, 1 + 3 * 2**-8, 1 + 2**-8 + 2**-30,
            float("inf"), float("-inf"), float("nan")]
    rng = np.random.default_rng(22)
    vals += list(rng.standard_normal(200) * 10.0 ** rng.integers(-45, 39, 200))
    return np.array(vals, dtype=np.float64)


class HalfTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(SOURCE, target="host")

    def run_kernel(self, name, n, *args):
        self.mod[name][(n + 63) // 64, 64](n, *args)

    def test_f16_narrow_matches_numpy(self):
        d = sweep()
        with np.errstate(over="ignore"):
            x = d.astype(np.float32)
        y, z, w = (np.zeros(len(d), np.float16) for _ in range(3))
        self.run_kernel("narrow_f16", len(d), x, d, y, z, w)
        with np.errstate(over="ignore", invalid="ignore"):
            want_y = x.astype(np.float16)
            want_z = d.astype(np.float16)  # NumPy rounds f64 -> f16 once
            # `as i32` rounds toward zero and saturates; NaN gives 0.
            ints = np.clip(np.trunc(np.nan_to_num(x.astype(np.float64), nan=0.0)), -(2**31), 2**31 - 1)
            want_w = ints.astype(np.float16)
        nan = np.isnan(want_y)
        np.testing.assert_array_equal(np.isnan(y), nan)
        np.testing.assert_array_equal(bits(y)[~nan], bits(want_y)[~nan])
        np.testing.assert_array_equal(bits(z)[~np.isnan(d)], bits(want_z)[~np.isnan(d)])
        np.testing.assert_array_equal(w, want_w)

    def test_f16_widen_is_exact(self):
        x = np.arange(65536, dtype=np.uint16).view(np.float16)  # every f16
        y, z = np.zeros(len(x), np.float32), np.zeros(len(x), np.float64)
        self.run_kernel("widen_f16", len(x), x, y, z)
        nan = np.isnan(x)
        np.testing.assert_array_equal(np.isnan(y), nan)
        np.testing.assert_array_equal(y[~nan], x[~nan].astype(np.float32))
        np.testing.assert_array_equal(z[~nan], x[~nan].astype(np.float64))
        np.testing.assert_array_equal(np.signbit(y[~nan]), np.signbit(x[~nan]))

    def test_bf16_widen_is_exact(self):
        b = np.arange(65536, dtype=np.uint32)
        y = np.zeros(len(b), np.float32)
        self.run_kernel("widen_bf16", len(b), b.astype(np.uint16), y)
        want = (b << 16).view(np.float32)
        nan = np.isnan(want)
        np.testing.assert_array_equal(np.isnan(y), nan)
        np.testing.assert_array_equal(y.view(np.uint32)[~nan], (b << 16)[~nan])

    def test_bf16_narrow_matches_reference(self):
        d = sweep()
        with np.errstate(over="ignore"):
            x = d.astype(np.float32)
        y, z = np.zeros(len(d), np.uint16), np.zeros(len(d), np.uint16)
        self.run_kernel("narrow_bf16", len(d), x, d, y, z)
        for i, (xv, dv) in enumerate(zip(x, d)):
            self.assertEqual(int(y[i]), bf16_from_f64(float(xv)), "f32 %r" % float(xv))
            self.assertEqual(int(z[i]), bf16_from_f64(float(dv)), "f64 %r" % float(dv))

    def test_f16_scalar_argument(self):
        x = np.array([1, 2, -3, 1000], dtype=np.float16)
        y = np.zeros(4, np.float16)
        self.run_kernel("scale", 4, np.float16(0.1), x, y)
        want = (np.float32(np.float16(0.1)) * x.astype(np.float32)).astype(np.float16)
        np.testing.assert_array_equal(bits(y), bits(want))
        with self.assertRaisesRegex(gridjit.Error, "must fit in f16"):
            self.run_kernel("scale", 4, 70000.0, x, y)

    def test_dlpack(self):
        # f16: NumPy's float16 through DLPack (kDLFloat, 16 bits), both ways.
        host = np.array([1, 0.5, -2], np.float16)
        d = gridjit.to_device(host)
        self.assertEqual(d.dtype, gridjit.f16)
        np.testing.assert_array_equal(np.from_dlpack(d), host)
        # bf16: kDLBfloat, exported by a DeviceArray and taken by a launch
        # (as PyTorch's bfloat16 tensors arrive).
        b = gridjit.device_array(3, "bf16")
        b.copy_from_host(np.array([0x3F80, 0x4000, 0xC040], np.uint16))  # 1, 2, -3
        self.assertEqual(b.__dlpack__().__class__.__name__, "PyCapsule")
        y = np.zeros(3, np.float32)
        self.run_kernel("widen_bf16", 3, gjtest.DLPackOnly(b), y)
        np.testing.assert_array_equal(y, [1, 2, -3])
        with self.assertRaisesRegex(gridjit.ArgumentError, "must point to bf16"):
            self.run_kernel("widen_bf16", 3, host, y)  # f16 is not bf16
        # NumPy has no bfloat16: a uint16 array of the bits is taken.
        y[:] = 0
        self.run_kernel("widen_bf16", 3, np.array([0x3F80, 0x4000, 0xC040], np.uint16), y)
        np.testing.assert_array_equal(y, [1, 2, -3])

    def test_dtypes(self):
        self.assertEqual(gridjit.f16.typestr, "<f2")
        self.assertEqual(gridjit.bf16.typestr, "<u2")


if __name__ == "__main__":
    unittest.main()
