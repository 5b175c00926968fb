# Structs and vector types on the host, against NumPy (docs/LangRef.md,
# "Structs", "Vector types"): a struct's C layout is NumPy's aligned dtype
# (align=True) and ctypes.Structure's for the same fields; a buffer of
# structs is passed as the bytes of a structured array (`ptr<Node>` is
# described to a launch as `ptr<u8>`), read field by field and written
# whole by the kernel; a `ptr<f32x4>` takes a float32 array, four lanes an
# element; a struct `var` lives across sync_threads(); a device function
# takes and returns a struct by value.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import ctypes
import unittest

import numpy as np

import gridjit

SOURCE = """
struct Node { key: u32, value: f32, weight: f64 }
struct Mixed { a: u8, b: f64, c: u16, d: i32, e: u8 }
struct Outer { m: Mixed, tag: i16 }
struct WithVec { a: f32, v: f32x4, b: u8 }

fn scaled(n: Node, s: f32) -> Node {
  return Node { key: n.key + 1u32, value: n.value * s, weight: n.weight * 2.0f64 };
}

kernel bump(n: i32, nodes: ptr<Node>, s: f32, keys: ptr<u32>) {
  let i = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    keys[i] = nodes[i].key;
    nodes[i] = scaled(nodes[i], s);
  }
}

kernel fill(n: i32, outs: ptr<Outer>, vs: ptr<WithVec>) {
  let i = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    var m: Mixed = Mixed { a: i as u8, b: i as f64 * 0.5f64, c: 1000u16, d: -i, e: 7u8 };
    m.e += 1u8;
    outs[i] = Outer { m: m, tag: -3i16 };
    vs[i] = WithVec { a: 1.5, v: f32x4(i as f32, 2.0, 3.0, 4.0), b: 9u8 };
  }
}

kernel swizzle(n: i32, x: ptr<f32x4>, y: ptr<f32x4>) {
  let i = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    let v = x[i];
    y[i] = f32x4(v.w, v.z + 1.0, v.y * 2.0, v.x);
  }
}

kernel across(out: ptr<Node>) {
  var n: Node = Node { key: thread_idx.x as u32, value: 0.5, weight: 0.0f64 };
  sync_threads();
  n.value += thread_idx.x as f32;
  sync_threads();
  n.weight = n.value as f64 * 2.0f64;
  out[thread_idx.x] = n;
}
"""

NODE = np.dtype([("key", "<u4"), ("value", "<f4"), ("weight", "<f8")], align=True)
MIXED = np.dtype([("a", "u1"), ("b", "<f8"), ("c", "<u2"), ("d", "<i4"), ("e", "u1")], align=True)
OUTER = np.dtype([("m", MIXED), ("tag", "<i2")], align=True)
# A vector field is aligned to its size (16 for f32x4), which NumPy's
# sub-arrays are not: the offsets are given.
WITHVEC = np.dtype({"names": ["a", "v", "b"], "formats": ["<f4", ("<f4", (4,)), "u1"],
                    "offsets": [0, 16, 32], "itemsize": 48})


class CMixed(ctypes.Structure):
    _fields_ = [("a", ctypes.c_uint8), ("b", ctypes.c_double), ("c", ctypes.c_uint16),
                ("d", ctypes.c_int32), ("e", ctypes.c_uint8)]


class COuter(ctypes.Structure):
    _fields_ = [("m", CMixed), ("tag", ctypes.c_int16)]


class StructTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(SOURCE, target="host")

    def test_layout_is_c(self):
        # The dtypes above are what C gives: ctypes agrees on every offset.
        self.assertEqual(MIXED.itemsize, ctypes.sizeof(CMixed))
        self.assertEqual(OUTER.itemsize, ctypes.sizeof(COuter))
        for name, _ in CMixed._fields_:
            self.assertEqual(MIXED.fields[name][1], getattr(CMixed, name).offset)
        self.assertEqual(OUTER.fields["tag"][1], COuter.tag.offset)
        self.assertEqual((NODE.itemsize, MIXED.itemsize, OUTER.itemsize), (16, 32, 40))

    def test_fields_and_by_value(self):
        n = 100
        nodes = np.zeros(n, NODE)
        nodes["key"] = np.arange(n) * 3
        nodes["value"] = np.linspace(-1, 1, n, dtype=np.float32)
        nodes["weight"] = np.arange(n) / 7.0
        want = nodes.copy()
        keys = np.zeros(n, np.uint32)
        raw = nodes.view(np.uint8)
        self.mod["bump"][(n + 63) // 64, 64](n, raw, np.float32(1.5), keys)
        np.testing.assert_array_equal(keys, want["key"])
        np.testing.assert_array_equal(nodes["key"], want["key"] + 1)
        np.testing.assert_array_equal(nodes["value"], want["value"] * np.float32(1.5))
        np.testing.assert_array_equal(nodes["weight"], want["weight"] * 2)

    def test_whole_stores_at_c_offsets(self):
        n = 70
        outs = np.zeros(n, OUTER)
        vs = np.zeros(n, WITHVEC)
        self.mod["fill"][2, 64](n, outs.view(np.uint8), vs.view(np.uint8))
        i = np.arange(n)
        np.testing.assert_array_equal(outs["m"]["a"], i.astype(np.uint8))
        np.testing.assert_array_equal(outs["m"]["b"], i * 0.5)
        np.testing.assert_array_equal(outs["m"]["c"], 1000)
        np.testing.assert_array_equal(outs["m"]["d"], -i)
        np.testing.assert_array_equal(outs["m"]["e"], 8)
        np.testing.assert_array_equal(outs["tag"], -3)
        np.testing.assert_array_equal(vs["a"], 1.5)
        np.testing.assert_array_equal(vs["v"][:, 0], i.astype(np.float32))
        np.testing.assert_array_equal(vs["v"][:, 1:], np.tile([2, 3, 4], (n, 1)))
        np.testing.assert_array_equal(vs["b"], 9)

    def test_vector_buffers(self):
        n = 33
        x = np.random.default_rng(5).standard_normal(4 * n).astype(np.float32)
        y = np.zeros(4 * n, np.float32)
        self.mod["swizzle"][1, 64](n, x, y)
        v = x.reshape(n, 4)
        want = np.stack([v[:, 3], v[:, 2] + np.float32(1), v[:, 1] * np.float32(2), v[:, 0]], axis=1)
        np.testing.assert_array_equal(y.reshape(n, 4), want)

    def test_struct_var_across_barriers(self):
        out = np.zeros(96, NODE)
        self.mod["across"][1, 96](out.view(np.uint8))
        t = np.arange(96)
        np.testing.assert_array_equal(out["key"], t)
        np.testing.assert_array_equal(out["value"], (0.5 + t).astype(np.float32))
        np.testing.assert_array_equal(out["weight"], (0.5 + t) * 2)


if __name__ == "__main__":
    unittest.main()
