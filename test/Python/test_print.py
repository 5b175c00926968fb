# print from a kernel, from Python (docs/Python.md, "Printing from a
# kernel"): a host kernel's lines go to sys.stdout as it is when the launch
# ends, so contextlib.redirect_stdout and unittest's/pytest's capture see
# them, in block, then thread order; print_buffer_bytes= sizes the buffer
# and a full one says so in the output; launches from several Python
# threads at once each get their own lines.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import contextlib
import io
import os
import sys
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402,F401

import gridjit  # noqa: E402

SOURCE = """
kernel show(n: i32, x: ptr<f32>, flag: bool) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n {
    print("i={} x={} flag={} u={}", i, x[i], flag, i as u8);
  }
}
kernel quiet(x: ptr<f32>) {
  x[thread_idx.x] = 1.0;
}
"""


def expected(n, x, flag):
    return "".join("i=%d x=%g flag=%s u=%d\n" % (i, x[i], "true" if flag else "false", i) for i in range(n))


class PrintTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.mod = gridjit.compile(SOURCE, target="host")

    def capture(self, launch):
        out = io.StringIO()
        with contextlib.redirect_stdout(out):
            launch()
        return out.getvalue()

    def test_lines_in_block_thread_order(self):
        x = (np.arange(40, dtype=np.float32) * 0.5).astype(np.float32)
        got = self.capture(lambda: self.mod.show[5, 8](37, x, True))
        self.assertEqual(got, expected(37, x, True))

    def test_own_runtime_many_threads(self):
        rt = gridjit.Runtime("host", threads=4)
        k = self.mod.load(rt).show
        x = np.arange(64, dtype=np.float32)
        got = self.capture(lambda: k[8, 8](64, x, False))
        self.assertEqual(got, expected(64, x, False))

    def test_small_buffer_reports_what_was_dropped(self):
        x = np.zeros(8, dtype=np.float32)
        # Each line "i=K x=0 flag=true u=K\n" is 22 bytes: 16 + 22 -> 40.
        got = self.capture(lambda: self.mod.show[1, 8](8, x, True, print_buffer_bytes=100))
        lines = got.splitlines()
        self.assertEqual(lines[:2], ["i=0 x=0 flag=true u=0", "i=1 x=0 flag=true u=1"])
        self.assertEqual(len(lines), 3)
        self.assertIn("print buffer of kernel 'show' (100 bytes) is full: 6 records", lines[2])

    def test_bad_buffer_sizes(self):
        x = np.zeros(8, dtype=np.float32)
        with self.assertRaises(gridjit.ConfigurationError):
            self.mod.show[1, 8](8, x, True, print_buffer_bytes=-1)
        with self.assertRaises(gridjit.ConfigurationError) as e:
            self.mod.show[1, 8](8, x, True, print_buffer_bytes=2**31)
        self.assertIn("more than the 1073741824 allowed", str(e.exception))

    def test_quiet_kernel_prints_nothing(self):
        x = np.zeros(4, dtype=np.float32)
        self.assertEqual(self.capture(lambda: self.mod.quiet[1, 4](x)), "")
        self.assertEqual(list(x), [1.0] * 4)

    def test_concurrent_launches_keep_their_lines(self):
        # Each thread's launch writes to a stream of its own (the callback
        # looks up sys.stdout, which redirect_stdout replaces globally, so
        # the threads write to one StringIO): every launch's lines are whole
        # and, per launch, in order; all 4 * 32 lines arrive.
        x = np.arange(32, dtype=np.float32)
        out = io.StringIO()
        errors = []

        def run():
            try:
                self.mod.show[4, 8](32, x, True)
            except Exception as e:  # reported below
                errors.append(e)

        with contextlib.redirect_stdout(out):
            threads = [threading.Thread(target=run) for _ in range(4)]
            for t in threads:
                t.start()
            for t in threads:
                t.join(timeout=300)
        self.assertEqual(errors, [])
        lines = out.getvalue().splitlines()
        self.assertEqual(sorted(lines), sorted(expected(32, x, True).splitlines() * 4))


if __name__ == "__main__":
    unittest.main()
