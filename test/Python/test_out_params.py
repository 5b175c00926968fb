# `out` and `inout` parameters (docs/LangRef.md, "Out and inout
# parameters") on the host, against NumPy: divmod with two `out` results
# (numpy.divmod on u32, and numpy.fmod / truncation on i32, KIR's `/`
# truncating as C's does), sincos with two `out` results (numpy.sin and
# numpy.cos, to float32 accuracy), a Welford mean/variance update with
# three `inout` accumulators over each row of a matrix (numpy.mean and
# numpy.var), and a block-wide min/max through a function that
# synchronises (inlined at block level on the host) with its results
# `out` into a local and a local array's element.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import unittest

import numpy as np

import gridjit

SOURCE = """
fn divmod_u(a: u32, b: u32, out q: u32, out r: u32) {
  q = a / b;
  r = a % b;
}
fn divmod_i(a: i32, b: i32, out q: i32, out r: i32) {
  q = a / b;
  r = a - q * b;
}
fn sincos_(x: f32, out s: f32, out c: f32) {
  s = sin(x);
  c = cos(x);
}
fn welford(inout n: f32, inout mean: f32, inout m2: f32, x: f32) {
  n += 1.0;
  let d: f32 = x - mean;
  mean += d / n;
  m2 += d * (x - mean);
}
fn block_min_max(v: f32, out lo: f32, out hi: f32) {
  shared a: [f32; 256];
  shared b: [f32; 256];
  let t = thread_idx.x;
  a[t] = v;
  b[t] = v;
  sync_threads();
  for var w: i32 = block_dim.x / 2; w > 0; w >>= 1 {
    if t < w {
      a[t] = min(a[t], a[t + w]);
      b[t] = max(b[t], b[t + w]);
    }
    sync_threads();
  }
  lo = a[0];
  hi = b[0];
}

kernel divmods(n: i32, a: ptr<u32>, b: ptr<u32>, q: ptr<u32>, r: ptr<u32>,
               ai: ptr<i32>, bi: ptr<i32>, qi: ptr<i32>, ri: ptr<i32>) {
  let i = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    var t: [u32; 2];
    divmod_u(a[i], b[i], out t[0], out t[1]);
    q[i] = t[0];
    r[i] = t[1];
    divmod_i(ai[i], bi[i], out qi[i], out ri[i]);
  }
}
kernel sincos_k(n: i32, x: ptr<f32>, s: ptr<f32>, c: ptr<f32>) {
  let i = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    var sv: f32;
    var cv: f32;
    sincos_(x[i], out sv, out cv);
    s[i] = sv;
    c[i] = cv;
  }
}
kernel stats(rows: i32, cols: i32, x: ptr<f32>, mean: ptr<f32>, var_: ptr<f32>) {
  let r = block_idx.x * block_dim.x + thread_idx.x;
  if r < rows {
    var n: f32 = 0.0;
    var m: f32 = 0.0;
    var m2: f32 = 0.0;
    for j in 0..cols {
      welford(inout n, inout m, inout m2, x[r * cols + j]);
    }
    mean[r] = m;
    var_[r] = m2 / n;
  }
}
kernel minmax(x: ptr<f32>, out: ptr<f32>) {
  let t = thread_idx.x;
  var lo: f32;
  var hi: [f32; 1];
  block_min_max(x[block_idx.x * block_dim.x + t], out lo, out hi[0]);
  if t == 0 {
    out[2 * block_idx.x] = lo;
    out[2 * block_idx.x + 1] = hi[0];
  }
}
"""


class OutParamTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(SOURCE, target="host")
        cls.rng = np.random.default_rng(12)

    def test_divmod(self):
        n = 1000
        a = self.rng.integers(0, 2**32, n, dtype=np.uint32)
        b = self.rng.integers(1, 2**32, n, dtype=np.uint32)
        b[:100] = self.rng.integers(1, 50, 100, dtype=np.uint32)
        a[0], b[0] = 2**32 - 1, 1
        ai = self.rng.integers(-(2**31), 2**31, n, dtype=np.int32)
        bi = self.rng.integers(-1000, 1000, n, dtype=np.int32)
        bi[bi == 0] = 3
        q, r, qi, ri = (np.zeros(n, t) for t in (np.uint32, np.uint32, np.int32, np.int32))
        self.mod.divmods[(n + 127) // 128, 128](np.int32(n), a, b, q, r, ai, bi, qi, ri)
        wq, wr = np.divmod(a, b)
        np.testing.assert_array_equal(q, wq)
        np.testing.assert_array_equal(r, wr)
        # Truncating division, as C's (numpy's // floors).
        wqi = (np.abs(ai.astype(np.int64)) // np.abs(bi)) * np.sign(ai) * np.sign(bi)
        np.testing.assert_array_equal(qi, wqi)
        np.testing.assert_array_equal(ri, np.fmod(ai, bi))

    def test_sincos(self):
        n = 4096
        x = np.concatenate([self.rng.uniform(-10, 10, n - 4), [0, -0.0, np.pi, 1e4]])
        x = x.astype(np.float32)
        s, c = np.zeros(n, np.float32), np.zeros(n, np.float32)
        self.mod.sincos_k[n // 256, 256](np.int32(n), x, s, c)
        x64 = x.astype(np.float64)
        np.testing.assert_allclose(s, np.sin(x64), rtol=0, atol=2e-6)
        np.testing.assert_allclose(c, np.cos(x64), rtol=0, atol=2e-6)
        self.assertEqual(np.signbit(s[n - 3]), True)  # sin(-0) = -0

    def test_welford(self):
        for rows, cols in [(1, 1), (7, 3), (300, 50)]:
            with self.subTest(rows=rows, cols=cols):
                x = (self.rng.standard_normal((rows, cols)) * 3 + 10).astype(np.float32)
                mean, var = np.zeros(rows, np.float32), np.zeros(rows, np.float32)
                self.mod.stats[(rows + 63) // 64, 64](np.int32(rows), np.int32(cols), x, mean, var)
                x64 = x.astype(np.float64)
                np.testing.assert_allclose(mean, x64.mean(axis=1), rtol=1e-5)
                np.testing.assert_allclose(var, x64.var(axis=1), rtol=1e-4, atol=1e-5)

    def test_block_min_max(self):
        for block in [1, 2, 64, 256]:
            with self.subTest(block=block):
                blocks = 3
                x = self.rng.standard_normal(block * blocks).astype(np.float32)
                out = np.zeros(2 * blocks, np.float32)
                self.mod.minmax[blocks, block](x, out)
                rows = x.reshape(blocks, block)
                np.testing.assert_array_equal(out[0::2], rows.min(axis=1))
                np.testing.assert_array_equal(out[1::2], rows.max(axis=1))


if __name__ == "__main__":
    unittest.main()
