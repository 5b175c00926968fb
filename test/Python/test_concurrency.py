# Thread hygiene (3): concurrency. 8 Python threads compile and launch
# different kernels at once and all get correct results; 8 threads launch
# one kernel object at once; two launches of one kernel that take its last
# argument slot at the same moment; and 4 processes, each doing the 8-thread work,
# share one cache directory at the same time, then a fifth process runs
# every kernel again from that cache.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import subprocess
import sys
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402

THREADS = 8
PROCESSES = 4


def source(i):
    """Kernel i: y = x * (i + 2) + i, and a second kernel with a loop so
    that the modules are not all trivial."""
    return """
kernel affine%d(n: i32, x: ptr<f32>, y: ptr<f32>) {
  let t: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if t < n { y[t] = x[t] * %d.0 + %d.0; }
}
kernel sum%d(n: i32, x: ptr<f32>, out: ptr<f32>) {
  var acc: f32 = 0.0;
  for j in 0..n { acc += x[j]; }
  out[0] = acc + %d.0;
}
""" % (i, i + 2, i, i, i)


def work(i, barrier, errors, compiler=None, rounds=3):
    """Compile kernel i (after all threads meet at the barrier) and check
    its results; any failure goes to \\p errors."""
    try:
        barrier.wait()
        for r in range(rounds):
            mod = gridjit.compile(source(i), compiler=compiler)
            n = 1000 + 37 * i + r
            x = np.arange(n, dtype=np.float32)
            y = np.zeros(n, np.float32)
            getattr(mod, "affine%d" % i)[(n + 127) // 128, 128](n, x, y)
            np.testing.assert_array_equal(y, x * (i + 2) + i)
            out = np.zeros(1, np.float32)
            getattr(mod, "sum%d" % i)[1, 1](64, np.ones(64, np.float32), out)
            assert out[0] == 64 + i, out
    except BaseException as e:  # reported by the main thread
        errors.append((i, e))


def run_threads(compiler=None):
    barrier = threading.Barrier(THREADS)
    errors = []
    threads = [threading.Thread(target=work, args=(i, barrier, errors, compiler)) for i in range(THREADS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors


class ThreadsTest(unittest.TestCase):
    def test_eight_threads_compile_and_launch(self):
        self.assertEqual(run_threads(), [])
        # A compiler of the test's own, without the disk cache: every
        # module compiles in this process, concurrently.
        self.assertEqual(run_threads(gridjit.Compiler("host", use_disk_cache=False)), [])

    def test_eight_threads_launch_one_kernel(self):
        k = gridjit.compile(source(99)).affine99
        barrier = threading.Barrier(THREADS)
        errors = []

        def launch_many(t):
            try:
                barrier.wait()
                for r in range(200):
                    n = 64 + t * 8 + r % 8
                    x = np.full(n, t + r, np.float32)
                    y = np.zeros(n, np.float32)
                    k[1, 128](n, x, y)
                    np.testing.assert_array_equal(y, x * 101 + 99)
            except BaseException as e:
                errors.append((t, e))

        threads = [threading.Thread(target=launch_many, args=(t,)) for t in range(THREADS)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])


PROCESS = r"""
import os, sys
sys.path.insert(0, os.environ["TEST_DIR"])
import test_concurrency as t
errors = t.run_threads()
if errors:
    print(errors)
    sys.exit(1)
print("ok")
"""


class ProcessesTest(unittest.TestCase):
    def test_four_processes_share_a_cache(self):
        cache = os.path.join(gjtest.scratch_dir(), "shared-cache")
        env = dict(os.environ, GRIDJIT_CACHE_DIR=cache, TEST_DIR=os.path.dirname(os.path.abspath(__file__)))
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        procs = [
            subprocess.Popen(
                [sys.executable, "-c", PROCESS], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
            )
            for _ in range(PROCESSES)
        ]
        for p in procs:
            out, err = p.communicate()
            self.assertEqual((p.returncode, out.strip()), (0, "ok"), err)
        entries = [f for _, _, files in os.walk(cache) for f in files]
        self.assertGreaterEqual(len(entries), THREADS, entries)
        # A fifth process runs every kernel from the shared cache.
        p = subprocess.run([sys.executable, "-c", PROCESS], env=env, capture_output=True, text=True)
        self.assertEqual((p.returncode, p.stdout.strip()), (0, "ok"), p.stderr)
        self.assertEqual(sorted(f for _, _, files in os.walk(cache) for f in files), sorted(entries))


class SlotPoolTest(unittest.TestCase):
    def test_two_launches_take_the_last_slot_at_once(self):
        # A kernel keeps its gj_arg arrays in a pool, one taken per launch.
        # This pool has one slot, and makes the two launches meet in it
        # (barriers of the two threads), as the interpreter may interleave
        # them between any two bytecodes: after a check whether it is empty,
        # if a launch makes one, and after a pop (or a failed one). A launch
        # that checks the pool, then pops, finds it empty once the other
        # thread took the slot in between (IndexError). The launch pops at
        # once instead, and makes a slot when there is none: both run, each
        # on its own slot.
        class RacingPool(list):
            def __init__(self):
                super().__init__()
                self.checked = threading.Barrier(2, timeout=30)
                self.popped = threading.Barrier(2, timeout=30)

            def __len__(self):
                n = super().__len__()
                self.checked.wait()
                return n

            def pop(self, *args):
                try:
                    return super().pop(*args)
                finally:
                    self.popped.wait()

        from gridjit import _kernel

        k = gridjit.compile(gjtest.SAXPY).saxpy
        k._pool = RacingPool()
        k._pool.append(_kernel._Slot(k._template, k._layout))
        k._launch = k._generate_launch()
        launch = k[1, 64]
        start = threading.Barrier(2)
        errors, results = [], []

        def one(a):
            try:
                x = np.arange(64, dtype=np.float32)
                y = np.ones(64, np.float32)
                start.wait()
                launch(64, a, x, y)
                results.append((a, y))
            except BaseException as e:
                errors.append(e)

        threads = [threading.Thread(target=one, args=(a,)) for a in (2.0, 3.0)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertEqual(errors, [])
        for a, y in results:
            np.testing.assert_array_equal(y, a * np.arange(64) + 1)
        self.assertEqual(sorted(a for a, _ in results), [2.0, 3.0])
        # Both slots went back to the pool.
        self.assertEqual(list.__len__(k._pool), 2)


if __name__ == "__main__":
    unittest.main()
