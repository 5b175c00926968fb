# Constant memory from Python (docs/Python.md, "Constant memory"):
# Module.constants describes it, Module.set_constant sets it from a NumPy
# array or a (nested) sequence; kernels read it, and the separable
# convolution example's two passes match a NumPy reference. Wrong names,
# element types and sizes raise the kinded errors; a set racing launches
# from other threads never gives a launch half of each.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import threading
import unittest

import numpy as np

import gridjit

EXAMPLE = os.path.join(os.path.dirname(__file__), "..", "..", "examples", "separable_convolution.kir")

SOURCE = """
constant LUT: [[i32; 4]; 2];
constant W: [f64; 3];
kernel k(out: ptr<f64>) {
  let i = thread_idx.x;
  out[i] = W[i % 3] + LUT[i / 4][i % 4] as f64;
}
kernel copy(out: ptr<i32>) {
  for i in 0..8 {
    out[block_idx.x * 8 + i] = LUT[i / 4][i % 4];
  }
}
"""


def reference(img, taps, axis):
    """The f32 convolution of img along axis with the edge clamped, summed in
    the kernels' order (tap 0 first)."""
    r = len(taps) // 2
    n = img.shape[axis]
    acc = np.zeros_like(img)
    for k, w in enumerate(taps):
        idx = np.clip(np.arange(n) + k - r, 0, n - 1)
        acc = (acc + np.float32(w) * np.take(img, idx, axis=axis)).astype(np.float32)
    return acc


class ConstantMemoryTest(unittest.TestCase):
    def test_describe_set_and_read(self):
        mod = gridjit.compile(SOURCE)
        self.assertEqual(mod.constants, {"LUT": (gridjit.i32, 32), "W": (gridjit.f64, 24)})
        out = np.full(8, -1.0)
        mod.k[1, 8](out)
        np.testing.assert_array_equal(out, np.zeros(8))  # they start as zero
        lut = np.arange(8, dtype=np.int32).reshape(2, 4) * 10
        mod.set_constant("LUT", lut)
        mod.set_constant("W", [0.5, 0.25, 0.125])
        mod.k[1, 8](out)
        np.testing.assert_array_equal(out, np.array([0.5, 0.25, 0.125] * 3)[:8] + lut.reshape(-1))
        mod.set_constant("LUT", [[1, 2, 3, 4], [5, 6, 7, 8]])
        mod.k[1, 8](out)
        np.testing.assert_array_equal(out, np.array([0.5, 0.25, 0.125] * 3)[:8] + np.arange(1, 9))

    def test_errors(self):
        mod = gridjit.compile(SOURCE)
        with self.assertRaisesRegex(gridjit.NotFoundError, "no constant memory 'LUX'.*LUT, W"):
            mod.set_constant("LUX", [1])
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "holds i32, given an array of f32"):
            mod.set_constant("LUT", np.zeros(8, np.float32))
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "takes 32 bytes, given 28"):
            mod.set_constant("LUT", np.zeros(7, np.int32))
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "C-contiguous"):
            mod.set_constant("LUT", np.zeros((4, 4), np.int32)[:, ::2])

    def test_sets_racing_launches(self):
        mod = gridjit.compile(SOURCE)
        mixed, errors = [], []

        def setter(base):
            for r in range(30):
                mod.set_constant("LUT", np.full(8, base + r, np.int32))

        def launcher():
            out = np.zeros(4 * 8, np.int32)
            for _ in range(20):
                mod.copy[4, 1](out)
                if len(set(out.tolist())) != 1:
                    mixed.append(out.copy())

        threads = [threading.Thread(target=setter, args=(b,)) for b in (0, 1000)]
        threads += [threading.Thread(target=launcher) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(mixed, [])
        self.assertEqual(errors, [])

    def test_separable_convolution_example(self):
        with open(EXAMPLE) as f:
            mod = gridjit.compile(f.read(), name="separable_convolution.kir")
        rng = np.random.default_rng(7)
        h, w = 37, 53
        img = rng.random((h, w), dtype=np.float32)
        taps = np.exp(-0.5 * ((np.arange(17) - 8) / 3.0) ** 2).astype(np.float32)
        taps /= taps.sum()
        mod.set_constant("FILTER", taps)
        tmp = np.zeros_like(img)
        out = np.zeros_like(img)
        grid = ((w + 15) // 16, (h + 3) // 4)
        mod.rows[grid, (16, 4)](img, tmp, w, h)
        mod.cols[grid, (16, 4)](tmp, out, w, h)
        expect_rows = reference(img, taps, axis=1)
        np.testing.assert_array_equal(tmp, expect_rows)
        np.testing.assert_array_equal(out, reference(expect_rows, taps, axis=0))


if __name__ == "__main__":
    unittest.main()
