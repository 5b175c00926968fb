# Thread hygiene (1): gridjit never holds the GIL across a compile or a
# launch. One Python thread compiles a large module, in four parts, and
# then runs a long kernel through the package while another Python thread
# counts; the counter must advance during every part of both.
#
# Nothing here measures time. The interpreter's switch interval is made
# so long that a thread holding the GIL keeps it until it blocks or
# releases it, and the counting thread releases it at every step
# (time.sleep(0)). So the counter can advance while the compiling thread
# is inside gj_compile only if that call released the GIL: each of the
# four compiles must see it advance (a call holding the GIL would see it
# stand still, exactly). For the launch the kernel itself watches the
# counter (a NumPy array the counting thread writes) for a fixed number of
# spins and must see it change in every quarter of them, which cannot
# happen while its launch holds the GIL.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import sys
import threading
import time
import unittest
from ctypes import byref, c_void_p

import numpy as np

import gridjit

# Each kernel has a loop and some arithmetic, so that compiling a part
# takes a while.
KERNELS = 8
PARTS = 4

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
    """Counts, storing the count into progress[0] and letting the GIL go
    at every step."""

    def __init__(self, progress):
        super().__init__(daemon=True)
        self.progress = progress
        self.stop = False

    def run(self):
        count = 0
        progress = self.progress
        while not self.stop:
            count += 1
            progress[0] = count
            time.sleep(0)  # releases the GIL


class GilTest(unittest.TestCase):
    def test_compile_and_launch_release_the_gil(self):
        from gridjit import _capi

        progress = np.zeros(1, np.int64)
        counter = Counter(progress)
        # No disk cache and a fresh salt: the modules really compile.
        compiler = gridjit.Compiler("host", use_disk_cache=False)
        runtime = gridjit.Runtime("host", threads=1)
        salt = int.from_bytes(os.urandom(3), "little")
        sources = [large_module(salt + part).encode() for part in range(PARTS)]
        seen = np.zeros(4, np.int64)
        spins = 8_000_000
        result = {"compile_counts": []}

        def work():
            # gj_compile as the package calls it (Compiler.compile), so that
            # no other call of the package releases the GIL in between.
            for src in sources:
                out = c_void_p()
                c0 = progress[0]
                status = _capi.gj_compile(compiler._handle, src, len(src), b"gil.kir", None, byref(out))
                c1 = progress[0]
                _capi.check(status)
                _capi.gj_module_release(out)
                result["compile_counts"].append(c1 - c0)
            mod = compiler.compile(sources[0], runtime=runtime)
            k = mod.watch_python[1, 1]
            c0 = progress[0]
            k(progress, spins, seen)
            c1 = progress[0]
            result.update(launch_counts=(c0, c1), kernels=len(mod.kernel_names))

        old_interval = sys.getswitchinterval()
        sys.setswitchinterval(1000.0)  # no preemption: only released GILs switch
        try:
            counter.start()
            worker = threading.Thread(target=work)
            worker.start()
            worker.join()
        finally:
            counter.stop = True
            sys.setswitchinterval(old_interval)
            counter.join()

        self.assertEqual(result["kernels"], KERNELS + 1)
        # Every compile: the counter advanced while the call ran.
        self.assertEqual(len(result["compile_counts"]), PARTS)
        self.assertTrue(
            all(n > 0 for n in result["compile_counts"]),
            "counter steps during each compile: %s" % result["compile_counts"],
        )
        # The launch: the kernel saw the counter change in every quarter of
        # its run (and the launching thread saw it advance across the call).
        self.assertTrue(all(seen > 0), "changes of the counter the kernel saw, by quarter: %s" % list(seen))
        c0, c1 = result["launch_counts"]
        self.assertGreaterEqual(c1 - c0, seen.sum())


if __name__ == "__main__":
    unittest.main()
