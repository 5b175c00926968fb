# The general loop `for init; cond; update { }` (docs/LangRef.md, section
# 4) on the host target, against NumPy: a bitonic sort whose nested loops
# step by `k <<= 1` and `j >>= 1` with a barrier inside (numpy.sort), the
# shared-memory tree reduction with `s >>= 1` at every power-of-two block
# size up to 1024 (numpy sums, to a float32 tolerance), and an inclusive
# scan with `d *= 2` (numpy.cumsum).
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import unittest

import numpy as np

import gridjit

SOURCE = """
kernel bitonic(n: u32, v: ptr<f32>) {
  shared s: [f32; 1024];
  let t: u32 = thread_idx.x as u32;
  let base: u32 = block_idx.x as u32 * n;
  s[t] = v[base + t];
  sync_threads();
  for var k: u32 = 2; k <= n; k <<= 1 {
    for var j: u32 = k >> 1; j > 0; j >>= 1 {
      let p: u32 = t ^ j;
      if p > t {
        let a: f32 = s[t];
        let b: f32 = s[p];
        if ((t & k) == 0 && a > b) || ((t & k) != 0 && a < b) {
          s[t] = b;
          s[p] = a;
        }
      }
      sync_threads();
    }
  }
  v[base + t] = s[t];
}

kernel reduce(x: ptr<f32>, out: ptr<f32>) {
  shared sdata: [f32; 1024];
  let tid: i32 = thread_idx.x;
  sdata[tid] = x[block_idx.x * block_dim.x + tid];
  sync_threads();
  for var s: i32 = block_dim.x / 2; s > 0; s >>= 1 {
    if tid < s {
      sdata[tid] += sdata[tid + s];
    }
    sync_threads();
  }
  if tid == 0 {
    out[block_idx.x] = sdata[0];
  }
}

kernel scan(n: i32, x: ptr<i64>) {
  shared buf: [i64; 1024];
  let t: i32 = thread_idx.x;
  buf[t] = x[t];
  sync_threads();
  for var d: i32 = 1; d < n; d *= 2 {
    var v: i64 = buf[t];
    if t >= d {
      v += buf[t - d];
    }
    sync_threads();
    buf[t] = v;
    sync_threads();
  }
  x[t] = buf[t];
}
"""


class GeneralLoopTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(SOURCE, target="host")
        cls.rng = np.random.default_rng(22)

    def test_bitonic_sort(self):
        for n, blocks in [(2, 1), (32, 3), (256, 2), (1024, 1)]:
            with self.subTest(n=n):
                v = self.rng.standard_normal(n * blocks).astype(np.float32)
                v[: n // 2] = v[0]  # ties
                want = np.sort(v.reshape(blocks, n), axis=1).ravel()
                self.mod.bitonic[blocks, n](np.uint32(n), v)
                np.testing.assert_array_equal(v, want)

    def test_tree_reduction(self):
        for block in [1, 2, 4, 64, 128, 512, 1024]:
            with self.subTest(block=block):
                blocks = 3
                x = self.rng.random(block * blocks, dtype=np.float32)
                out = np.zeros(blocks, np.float32)
                self.mod.reduce[blocks, block](x, out)
                want = x.astype(np.float64).reshape(blocks, block).sum(axis=1)
                np.testing.assert_allclose(out, want, rtol=1e-5)

    def test_scan(self):
        for n in [1, 5, 64, 1000, 1024]:
            with self.subTest(n=n):
                x = self.rng.integers(-(2**40), 2**40, n, dtype=np.int64)
                want = np.cumsum(x)
                self.mod.scan[1, n](np.int32(n), x)
                np.testing.assert_array_equal(x, want)


if __name__ == "__main__":
    unittest.main()
