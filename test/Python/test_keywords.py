# Launch arguments by parameter name (docs/Python.md, "Launching"):
# `k[grid, block](n=n, a=2.0, x=x, y=y)`, positional and named mixed, in
# any order of the names; a name that is no parameter, a parameter given
# twice and one not given at all are ArgumentErrors naming the signature;
# `timeout=` and `cancel=` stay the launch's options, also for a kernel
# with a parameter of that name; `k.launch(...)` takes names too. A launch
# by position alone never leaves the launchers' generated fast path.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402
from gridjit import _kernel  # noqa: E402

SIGNATURE = "saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>)"

# Parameters named as the launch's options and as Python's own words: only
# the options are taken from the keywords; `self` is a name like any other.
NAMES = """
kernel named(timeout: i32, cancel: i32, self: i32, stream: i32, out: ptr<i32>) {
  out[0] = timeout;
  out[1] = cancel;
  out[2] = self;
  out[3] = stream;
}
"""


class KeywordTest(unittest.TestCase):
    def setUp(self):
        self.mod = gridjit.compile(gjtest.SAXPY)
        self.x = np.arange(16, dtype=np.float32)
        self.y = np.ones(16, dtype=np.float32)

    def expect_saxpy(self, a):
        np.testing.assert_array_equal(self.y, a * self.x + 1)
        self.y[:] = 1

    def test_by_name_and_mixed(self):
        k, x, y = self.mod.saxpy, self.x, self.y
        k[1, 16](n=16, a=2.0, x=x, y=y)
        self.expect_saxpy(2.0)
        k[1, 16](y=y, x=x, a=3.0, n=16)  # any order
        self.expect_saxpy(3.0)
        k[1, 16](16, 4.0, y=y, x=x)  # positional first, then names
        self.expect_saxpy(4.0)
        k[1, 16](16, 5.0, x, y=y)
        self.expect_saxpy(5.0)
        # A kept launcher, the options, and launch() take names as well.
        launcher = k[1, 16]
        launcher(16, a=6.0, x=x, y=y, timeout=60)
        self.expect_saxpy(6.0)
        k.launch(1, 16, n=16, a=7.0, x=x, y=y, cancel=gridjit.CancelToken())
        self.expect_saxpy(7.0)
        # Arguments given by name are checked as positional ones are.
        with self.assertRaisesRegex(
            gridjit.ArgumentError, r"^kernel 'saxpy': argument 3 \('x: ptr<f32>'\) must point to f32, but"
        ):
            k[1, 16](16, 2.0, y=y, x=np.zeros(16, np.float64))

    def test_unknown_names(self):
        k, x, y = self.mod.saxpy, self.x, self.y
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](nn=16, a=2.0, x=x, y=y)
        self.assertEqual(
            str(cm.exception),
            "kernel 'saxpy' has no parameter 'nn' (did you mean 'n'?): its signature is " + SIGNATURE,
        )
        self.assertEqual(cm.exception.status, "GJ_ERROR_ARGUMENT")
        self.assertIsInstance(cm.exception, TypeError)
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](16, 2.0, x, y, q=1, r=2)
        self.assertEqual(
            str(cm.exception), "kernel 'saxpy' has no parameters 'q', 'r': its signature is " + SIGNATURE
        )
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](16, 2.0, x, y, **{"0": 1})
        self.assertEqual(str(cm.exception), "kernel 'saxpy' has no parameter '0': its signature is " + SIGNATURE)

    def test_given_twice(self):
        k, x, y = self.mod.saxpy, self.x, self.y
        for args, kw, index, param in [
            ((16,), dict(n=16, a=2.0, x=x, y=y), 1, "n: i32"),
            ((16, 2.0, x, y), dict(y=y), 4, "y: ptr<f32>"),
        ]:
            with self.subTest(kw=sorted(kw)):
                with self.assertRaises(gridjit.ArgumentError) as cm:
                    k[1, 16](*args, **kw)
                name = param.split(":")[0]
                self.assertEqual(
                    str(cm.exception),
                    "kernel 'saxpy': argument %d ('%s') was given twice, by position and as %s=: the kernel "
                    "takes %s" % (index, param, name, SIGNATURE),
                )
        self.assertTrue((self.y == 1).all(), "nothing ran")

    def test_missing(self):
        k, x, y = self.mod.saxpy, self.x, self.y
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](16, y=y)
        self.assertEqual(
            str(cm.exception),
            "kernel 'saxpy': argument 2 ('a: f32') was not given (missing: a, x): the kernel takes " + SIGNATURE,
        )
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](n=16, a=1.0, x=x)  # the last one
        self.assertEqual(
            str(cm.exception),
            "kernel 'saxpy': argument 4 ('y: ptr<f32>') was not given (missing: y): the kernel takes " + SIGNATURE,
        )
        # Too many by position is the count's error, as without names.
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 16](16, 2.0, x, y, 5, a=1.0)
        self.assertEqual(str(cm.exception), "kernel 'saxpy' takes 4 arguments (%s), 6 given" % SIGNATURE[6:-1])

    def test_options_keep_their_names(self):
        mod = gridjit.compile(NAMES)
        k = mod.named
        out = np.zeros(4, np.int32)
        k[1, 1](1, 2, 3, 4, out)
        self.assertEqual(list(out), [1, 2, 3, 4])
        k[1, 1](5, 6, self=7, stream=8, out=out)
        self.assertEqual(list(out), [5, 6, 7, 8])
        # timeout= and cancel= are the launch's: given by name, they are
        # options (checked as such), and the parameters are missing.
        with self.assertRaises(gridjit.ArgumentError) as cm:
            k[1, 1](cancel=gridjit.CancelToken(), self=1, stream=1, out=out, timeout=5)
        self.assertEqual(
            str(cm.exception),
            "kernel 'named': argument 1 ('timeout: i32') was not given (missing: timeout, cancel): the kernel "
            "takes named(timeout: i32, cancel: i32, self: i32, stream: i32, out: ptr<i32>); timeout= is the "
            "launch's option, so give the parameter timeout by position",
        )
        with self.assertRaisesRegex(gridjit.InvalidArgumentError, "timeout"):
            k[1, 1](1, 2, 3, 4, out, timeout=-1)
        # launch()'s own keywords are stream, shared, timeout and cancel;
        # its grid and block are positional, names free for parameters.
        k.launch(1, 1, 9, 10, 11, 12, out=out)
        self.assertEqual(list(out), [9, 10, 11, 12])
        gb = gridjit.compile("kernel gb(grid: i32, block: i32, out: ptr<i32>) { out[0] = grid * 10 + block; }").gb
        gb.launch(1, 1, out=out, grid=3, block=4)
        self.assertEqual(out[0], 34)

    def test_positional_launches_stay_on_the_fast_path(self):
        # A launch by position alone runs the launcher's generated __call__
        # to its end: it never reaches _launch_with, where names are bound.
        k, x, y = self.mod.saxpy, self.x, self.y
        launcher = k[1, 16]
        calls = []
        original = _kernel._Launcher._launch_with

        def spy(self, args, kw):
            calls.append(dict(kw))
            return original(self, args, kw)

        _kernel._Launcher._launch_with = spy
        try:
            launcher(16, 2.0, x, y)
            self.assertEqual(calls, [])
            launcher(16, 2.0, x, y=y)
            self.assertEqual(calls, [{"y": y}])
        finally:
            _kernel._Launcher._launch_with = original
        self.assertIn("def call(self, /, *args, **kw):\n    if kw or self._long:", k._launch.source)


if __name__ == "__main__":
    unittest.main()
