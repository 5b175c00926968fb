# What the Python package checks before a value reaches C (docs/Python.md,
# "Values that cross into C"): array sizes at the 64-bit boundaries (a
# DeviceArray of 2**62 f32 elements was a 0-byte buffer: ctypes passes a
# size modulo 2**64), a float argument in its own precision (a
# numpy.longdouble beyond f32's range reached the kernel as inf), launch
# configurations that are equal across types (k[1.0, 8] was accepted once
# k[1, 8] was cached), and strings with a NUL (a cache_dir 'a\0b' was 'a'
# in C).
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import fractions
import os
import pathlib
import re
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402
from gridjit import _capi  # noqa: E402

HEADER = pathlib.Path(__file__).resolve().parents[2] / "include" / "gridjit-c" / "gridjit.h"

FLOATS = """
kernel floats(a: f32, b: f64, out: ptr<f64>) {
  out[0] = a as f64;
  out[1] = b;
}
"""

F32_MAX = float(np.finfo(np.float32).max)
# The midpoint between the largest f32 and 2**128: from it on, a value
# rounds to infinity.
F32_LIMIT = 2**128 - 2**103
# numpy.longdouble has more range and precision than f64 here (x86-64's
# 80-bit format); where it is f64 itself, its own cases are f64's.
WIDE = np.finfo(np.longdouble).max > np.finfo(np.float64).max


class SizeTest(unittest.TestCase):
    """Sizes and shapes: checked exactly, before ctypes wraps them."""

    def test_header_limit_is_the_package_limit(self):
        m = re.search(r"#define GJ_MAX_BUFFER_BYTES \(\(uint64_t\)1 << (\d+)\)", HEADER.read_text())
        self.assertIsNotNone(m)
        self.assertEqual(_capi.MAX_BUFFER_BYTES, 1 << int(m.group(1)))

    def test_device_array_sizes(self):
        rt = gridjit.runtime("host")
        limit = _capi.MAX_BUFFER_BYTES
        for shape, dtype, nbytes in [
            ((1 << 62,), "f32", 1 << 64),  # 0 bytes through ctypes before
            ((1 << 61, 2), "f32", 1 << 64),
            (((1 << 64) - 1,), "u8", (1 << 64) - 1),
            (((1 << 63) - 1,), "f64", ((1 << 63) - 1) * 8),
            ((1 << 61, 1 << 61), "u8", 1 << 122),
            ((limit + 1,), "u8", limit + 1),
            (((limit // 8) + 1,), "f64", limit + 8),
        ]:
            with self.subTest(shape=shape, dtype=dtype):
                if shape[0] >= 1 << 63:
                    with self.assertRaisesRegex(ValueError, r"every extent must be an integer from 0 to 2\*\*63-1"):
                        rt.device_array(shape, dtype)
                    continue
                with self.assertRaises(gridjit.InvalidArgumentError) as cm:
                    rt.device_array(shape, dtype)
                self.assertEqual(
                    str(cm.exception),
                    "gridjit: a DeviceArray of shape %s and %s needs %d bytes, more than the limit of %d bytes "
                    "(2**62) a buffer may have" % (shape, dtype, nbytes, limit),
                )
                self.assertIsInstance(cm.exception, ValueError)
        # The limit itself is gj_buffer_alloc's to try: the host cannot map it.
        with self.assertRaisesRegex(gridjit.Error, "cannot allocate a device buffer of 4611686018427387904 bytes") as cm:
            rt.device_array(limit // 4, "f32")
        self.assertEqual(cm.exception.status, "GJ_ERROR_FAILED")
        # Extents of zero-size arrays: any up to 2**63 - 1 (int64, as the
        # array interface and DLPack hold them).
        empty = rt.device_array(((1 << 63) - 1, 0), "f32")
        self.assertEqual((empty.shape, empty.nbytes, empty.size), (((1 << 63) - 1, 0), 0, 0))
        for shape in [(1 << 63, 0), (1 << 64, 0), (-1,), (True,)]:
            with self.subTest(shape=shape):
                with self.assertRaisesRegex(ValueError, r"every extent must be an integer from 0 to 2\*\*63-1"):
                    rt.device_array(shape, "f32")

    def test_to_device_of_a_claimed_shape(self):
        class Claims:
            """An array interface that claims 2**62 f32 elements."""

            __array_interface__ = {"shape": (1 << 62,), "typestr": "<f4", "data": (4096, False), "version": 3}

        with self.assertRaisesRegex(gridjit.InvalidArgumentError, r"needs 18446744073709551616 bytes, more than"):
            gridjit.to_device(Claims())


class FloatTest(unittest.TestCase):
    """A float argument is checked in its own precision before it is
    converted."""

    @classmethod
    def setUpClass(cls):
        cls.k = gridjit.compile(FLOATS).floats

    def run_floats(self, a, b=0.0):
        out = np.zeros(2, np.float64)
        self.k[1, 1](a, b, out)
        return out

    def test_f32_limit_in_every_type(self):
        below = fractions.Fraction(F32_LIMIT - 1)
        # Inside the limit, exactly: the largest f32, even where f64's
        # rounding reaches the limit (2**128 - 2**103 - 1 is 2**128 - 2**103
        # as an f64).
        for v in [F32_MAX, np.float32(F32_MAX), np.float64(F32_MAX), F32_LIMIT - 1, below, -(F32_LIMIT - 1)]:
            with self.subTest(v=v):
                self.assertEqual(abs(self.run_floats(v)[0]), F32_MAX)
        for v in [1e39, np.float64(1e39), F32_LIMIT, 10**39, fractions.Fraction(F32_LIMIT), -F32_LIMIT]:
            with self.subTest(v=v):
                with self.assertRaisesRegex(gridjit.ArgumentError, r"argument 1 \('a: f32'\) must fit in f32, but "):
                    self.run_floats(v)
        # Infinities and NaN are what they say.
        for v in [float("inf"), np.float64("-inf"), np.longdouble("inf")]:
            self.assertEqual(self.run_floats(v)[0], float(v))
        self.assertTrue(np.isnan(self.run_floats(np.longdouble("nan"))[0]))

    @unittest.skipUnless(WIDE, "numpy.longdouble is f64 here")
    def test_longdouble(self):
        # Finite beyond f32 (and f64): refused, as 1e39 is; it became inf.
        for v in [np.longdouble("1e39"), np.longdouble("-1e39"), np.longdouble("1e400"), np.longdouble(float(F32_LIMIT))]:
            with self.subTest(v=v):
                with self.assertRaisesRegex(
                    gridjit.ArgumentError,
                    r"^kernel 'floats': argument 1 \('a: f32'\) must fit in f32, but numpy\.\w+ .* was given "
                    r"\(it would round to infinity\)$",
                ):
                    self.run_floats(v)
        with self.assertRaisesRegex(gridjit.ArgumentError, r"argument 2 \('b: f64'\) must fit in f64, but numpy\.\w+ "):
            self.run_floats(0.0, np.longdouble("1e400"))
        # Just below the f32 limit in the longdouble's own precision: the
        # largest f32 (through f64 it rounded up to the limit and was refused).
        just_below = np.longdouble(F32_LIMIT) - np.longdouble(2.0**70)
        self.assertLess(just_below, np.longdouble(F32_LIMIT))
        self.assertEqual(float(just_below), float(F32_LIMIT))
        self.assertEqual(self.run_floats(just_below)[0], F32_MAX)
        # Values in range arrive rounded once, as C rounds them.
        third = np.longdouble(1) / np.longdouble(3)
        self.assertEqual(self.run_floats(third, third).tolist(), [float(np.float32(third)), float(np.float64(third))])
        big = np.longdouble(np.finfo(np.float64).max)
        self.assertEqual(self.run_floats(0.0, big)[1], float(np.finfo(np.float64).max))


class ConfigurationCacheTest(unittest.TestCase):
    """The cache of launch configurations holds types as well as values."""

    @classmethod
    def setUpClass(cls):
        cls.k = gridjit.compile(gjtest.SAXPY).saxpy

    def launch(self, config):
        x = np.zeros(8, np.float32)
        self.k[config](8, 1.0, x, x)

    def error(self, config):
        try:
            self.launch(config)
        except gridjit.ConfigurationError as e:
            return str(e)
        return None

    def test_equal_configurations_of_other_types(self):
        bad = [(1.0, 8), (True, 8), (1, 8.0), (1, True), ((1.0, 1), 8), ((1, True), 8), (np.float64(1), 8),
               (1, 8, None, 0.0), (1, 8, None, False)]
        # Uncached: the errors a configuration of these types gets.
        uncached = {repr(c): self.error(c) for c in bad}
        for c in bad:
            self.assertIsNotNone(uncached[repr(c)], c)
        # Cached: the valid configuration they equal is launched (and kept)
        # first; each still gets its own error.
        for good in [(1, 8), ((1, 1), 8), (1, 8, None, 0), (np.int64(1), 8)]:
            self.launch(good)
        for c in bad:
            with self.subTest(config=c):
                self.assertEqual(self.error(c), uncached[repr(c)])
        # A configuration nested deeper than a grid's tuple is refused
        # uncached (hashing it would recurse as deep as it nests).
        deep = 1
        for _ in range(100000):
            deep = (deep,)
        with self.assertRaisesRegex(gridjit.ConfigurationError, "every dimension must be an integer"):
            self.k[deep, 8]
        # And the valid ones still hit the cache.
        self.assertIs(self.k[1, 8], self.k[1, 8])
        self.assertIs(self.k[(1, 1), 8], self.k[(1, 1), 8])
        self.assertIsNot(self.k[1, 8], self.k[np.int64(1), 8])


class OptionTest(unittest.TestCase):
    def test_bool_is_no_count(self):
        # True == 1, but a flag is no level or count.
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "opt_level must be 0, 1, 2 or 3, not True"):
            gridjit.Compiler("host", opt_level=True)
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "threads must be"):
            gridjit.Compiler("host", threads=True)
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "threads must be"):
            gridjit.Runtime("host", threads=True)


class StringTest(unittest.TestCase):
    """Every string the package passes to C: one with a NUL is refused,
    naming the argument, never cut short."""

    def test_nul_in_strings(self):
        d = gjtest.scratch_dir()
        for what, make in [
            ("cache_dir", lambda: gridjit.Compiler("host", cache_dir=os.path.join(d, "a\0b"))),
            ("cache_dir", lambda: gridjit.Compiler("host", cache_dir=pathlib.Path(d) / "a\0b")),
            ("cache_dir", lambda: gridjit.Compiler("host", cache_dir=os.fsencode(d) + b"/a\0b")),
            ("cache_dir", lambda: gridjit.Runtime("host", cache_dir=os.path.join(d, "a\0b"))),
            ("targets", lambda: gridjit.Compiler("host:x86-64\0,nvptx")),
            ("name", lambda: gridjit.compile(gjtest.SAXPY, name="saxpy\0.kir")),
            ("name", lambda: gridjit.Compiler("host").compile_async(gjtest.SAXPY, name="saxpy\0.kir")),
        ]:
            with self.subTest(what=what):
                with self.assertRaisesRegex(
                    gridjit.InvalidArgumentError, r"^gridjit: %s .* contains a NUL character, where C would cut it short$" % what
                ) as cm:
                    make()
                self.assertIsInstance(cm.exception, ValueError)
        self.assertFalse(os.path.exists(os.path.join(d, "a")), "a cut cache_dir was made")
        # A name that is no NUL is used as given.
        with self.assertRaisesRegex(gridjit.CompileError, r"^we\\ird\.kir:1:"):
            gridjit.compile("kernel k( {", name="we\\ird.kir")

    def test_nul_in_an_argument_message(self):
        # A message built from a type's module (which may hold a NUL)
        # reaches C whole.
        k = gridjit.compile(FLOATS).floats
        odd = type("Odd", (), {"__module__": "my\0module"})()
        with self.assertRaisesRegex(gridjit.ArgumentError, r"must be a real number, but my\\x00module\.Odd "):
            k[1, 1](odd, 0.0, np.zeros(2))


if __name__ == "__main__":
    unittest.main()
