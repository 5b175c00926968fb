# Thread hygiene (2): gridjit leaves OpenMP alone. A process that loaded
# libgomp and set its thread count, with omp_set_num_threads and
# separately with OMP_NUM_THREADS, still has that count after creating a
# compiler and a runtime with other thread counts, compiling (synchronously
# and on the compiler's threads) and launching; the environment is
# unchanged too, as C code (getenv) sees it.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

# Runs in a fresh process; prints one line of facts that the test checks.
SCENARIO = r"""
import ctypes, os, sys
import numpy as np
gomp = ctypes.CDLL("libgomp.so.1")
libc = ctypes.CDLL(None)
libc.getenv.restype = ctypes.c_char_p
if os.environ.get("SET_WITH_CALL"):
    gomp.omp_set_num_threads(int(os.environ["SET_WITH_CALL"]))
before = gomp.omp_get_max_threads()

import gridjit
sys.path.insert(0, os.environ["INPUTS"])
import gjtest

compiler = gridjit.Compiler("host", threads=2)
runtime = gridjit.Runtime("host", threads=5)
mod = compiler.compile(gjtest.SAXPY, runtime=runtime)
other = compiler.compile_async(gjtest.SAXPY.replace("saxpy", "saxpy2"), runtime=runtime).result()
n = 4096
x = np.arange(n, dtype=np.float32)
y = np.zeros(n, np.float32)
mod.saxpy[n // 64, 64](n, 2.0, x, y)
other.saxpy2[n // 64, 64](n, 1.0, x, y)
assert (y == 3 * x).all()
# The shared default runtime (threads: every CPU) too.
gridjit.compile(gjtest.SAXPY).saxpy[n // 64, 64](n, 1.0, x, y)

env = libc.getenv(b"OMP_NUM_THREADS")
print(before, gomp.omp_get_max_threads(), os.environ.get("OMP_NUM_THREADS"), env.decode() if env else None)
"""


class OpenMPTest(unittest.TestCase):
    def run_scenario(self, env):
        env = dict(env, INPUTS=os.path.join(os.path.dirname(__file__), "Inputs"))
        return gjtest.run_python(SCENARIO, env=env).stdout.split()

    def test_omp_set_num_threads_is_kept(self):
        before, after, py_env, c_env = self.run_scenario({"SET_WITH_CALL": "3", "OMP_NUM_THREADS": None})
        self.assertEqual(before, "3")
        self.assertEqual(after, "3")
        self.assertEqual((py_env, c_env), ("None", "None"))

    def test_omp_num_threads_environment_is_kept(self):
        before, after, py_env, c_env = self.run_scenario({"SET_WITH_CALL": None, "OMP_NUM_THREADS": "3"})
        self.assertEqual(before, "3")
        self.assertEqual(after, "3")
        self.assertEqual((py_env, c_env), ("3", "3"))


if __name__ == "__main__":
    unittest.main()
