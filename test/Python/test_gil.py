# Thread hygiene (1): gridjit never holds the GIL across a compile or a
# launch. One Python thread compiles a large module and then runs a long
# kernel through the package while another Python thread counts; the
# counter must advance throughout both calls.
#
# For the compile, the counting thread timestamps its progress, and no gap
# in it may cover more than a quarter of the compile (a compile holding the
# GIL would stop the counter for all of it). For the launch the proof is
# exact: the kernel itself watches the counter (a NumPy array the counting
# thread writes) for a fixed number of spins, long enough for the scheduler
# to run every thread many times over, and must see it change in every
# quarter of them, which cannot happen while its launch holds the GIL.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import threading
import time
import unittest

import numpy as np

import gridjit

# Each kernel has a loop and some arithmetic, so that compiling the module
# takes a while (about 40 ms per kernel on a CI machine).
KERNELS = 30

WATCHER = """
kernel watch_python(progress: ptr<i64>, spins: i64, seen: ptr<i64>) {
  // seen[q]: the changes of progress[0] seen in quarter q of the spins.
  var last: i64 = atomic_add(progress, 0);
  let quarter: i64 = spins / 4;
  for q in 0..4 {
    var changes: i64 = 0;
    for s in 0..quarter {
      let now: i64 = atomic_add(progress, 0);
      if now != last {
        changes += 1;
        last = now;
      }
    }
    seen[q] = changes;
  }
}
"""


def large_module(salt):
    parts = [WATCHER]
    for i in range(KERNELS):
        parts.append(
            """
kernel work%d(n: i32, x: ptr<f32>, y: ptr<f32>) {
  let t: i32 = block_idx.x * block_dim.x + thread_idx.x;
  var acc: f32 = %d.0;
  for j in 0..n { acc = acc * 0.5 + x[(t + j) %% n] * %d.0; }
  if t < n { y[t] = acc; }
}"""
            % (i, salt, i)
        )
    return "\n".join(parts)


class Counter(threading.Thread):
    """Counts as fast as it can, storing the count into progress[0] and
    timestamping every 64th step."""

    def __init__(self, progress):
        super().__init__(daemon=True)
        self.progress = progress
        self.stop = False
        self.stamps = []

    def run(self):
        count = 0
        progress, stamps = self.progress, self.stamps
        while not self.stop:
            count += 1
            progress[0] = count
            if count % 64 == 0:
                stamps.append(time.monotonic_ns())


class GilTest(unittest.TestCase):
    def test_compile_and_launch_release_the_gil(self):
        progress = np.zeros(1, np.int64)
        counter = Counter(progress)
        # No disk cache and a fresh salt: the module really compiles.
        compiler = gridjit.Compiler("host", use_disk_cache=False)
        runtime = gridjit.Runtime("host", threads=1)
        source = large_module(int.from_bytes(os.urandom(3), "little"))
        seen = np.zeros(4, np.int64)
        spins = 8_000_000
        result = {}

        def work():
            t0 = time.monotonic_ns()
            mod = compiler.compile(source, runtime=runtime)
            t1 = time.monotonic_ns()
            k = mod.watch_python[1, 1]
            c0 = progress[0]
            k(progress, spins, seen)
            c1 = progress[0]
            result.update(compile=(t0, t1), launch_counts=(c0, c1), kernels=len(mod.kernel_names))

        counter.start()
        worker = threading.Thread(target=work)
        worker.start()
        worker.join()
        counter.stop = True
        counter.join()

        self.assertEqual(result["kernels"], KERNELS + 1)
        # The compile: the counter ran throughout.
        t0, t1 = result["compile"]
        during = [t for t in counter.stamps if t0 <= t <= t1]
        self.assertGreater(len(during), 10, "the counter hardly advanced during the compile")
        points = [t0] + during + [t1]
        widest = max(b - a for a, b in zip(points, points[1:]))
        self.assertLess(
            widest,
            (t1 - t0) / 4,
            "the counting thread stood still for %.0f ms of a %.0f ms compile" % (widest / 1e6, (t1 - t0) / 1e6),
        )
        # The launch: the kernel saw the counter change in every quarter of
        # its run (and the launching thread saw it advance across the call).
        self.assertTrue(all(seen > 0), "changes of the counter the kernel saw, by quarter: %s" % list(seen))
        c0, c1 = result["launch_counts"]
        self.assertGreaterEqual(c1 - c0, seen.sum())

if __name__ == "__main__":
    unittest.main()
