# benchmarks/python_launch_overhead.py keeps working: a quick run prints
# the table with every row this build can give. (Speed is measured by the
# benchmark, never asserted here.)
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import importlib.util
import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.dirname(os.path.dirname(os.environ["GRIDJIT_LIBRARY"]))


class BenchmarkTest(unittest.TestCase):
    def test_quick_run(self):
        p = subprocess.run(
            [sys.executable, os.path.join(ROOT, "benchmarks", "python_launch_overhead.py"), "--quick", "--build", BUILD],
            capture_output=True,
            text=True,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        rows = {line.split("|")[1].strip(): line for line in p.stdout.splitlines() if line.startswith("| ")}
        expected = [
            "Python kernel[1, 1](n, a, x, y)",
            "Python launcher(n, a, x, y)",
            "Python launcher, DeviceArray args",
            "Python launcher(..., timeout=3600)",
            "Python launcher, interruptible path (helper thread)",
            "ctypes gj_launch, prebuilt arguments",
        ]
        if os.path.exists(os.path.join(BUILD, "bin", "bench-CAPIBench")):
            expected += ["C++ Runtime::launch", "C API gj_launch (libgridjit.so, dlopen)"]
        for name in expected:
            self.assertIn(name, rows, p.stdout)
        if importlib.util.find_spec("numba") is not None:
            self.assertTrue(any(name.startswith("Numba @njit") for name in rows), p.stdout)


if __name__ == "__main__":
    unittest.main()
