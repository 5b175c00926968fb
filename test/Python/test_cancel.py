# Timeouts, cancellation and Ctrl-C (docs/Python.md, "Timeouts,
# cancellation and Ctrl-C"). A host launch given timeout= raises
# KernelTimeoutError, one given cancel= raises KernelCancelledError once
# another thread cancels the token, each stopped between blocks; a CUDA
# launch refuses both (test_cuda.py). A process that runs a long kernel and
# gets SIGINT sees KeyboardInterrupt while the kernel runs, the kernel stops,
# and the process goes on and launches again.
#
# No time is measured: every wait has a generous bound after which the test
# fails (a kernel that is not stopped would run for hours), and the counts
# say how far a launch got.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import signal
import subprocess
import sys
import threading
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402
from gridjit import _cancel  # noqa: E402

# count: one atomic add a block. slow: a block that loops, so that running
# all 2^31 - 1 blocks of a launch would take hours.
KERNELS = """
kernel count(hits: ptr<u64>) {
  atomic_add(&hits[0], 1u64);
}

kernel slow(hits: ptr<u64>, out: ptr<i32>, spins: i32) {
  var x: i32 = 0;
  var i: i32 = 0;
  while i < spins {
    x = x * 3 + i;
    i = i + 1;
  }
  out[thread_idx.x] = x;
  if thread_idx.x == 0 {
    atomic_add(&hits[0], 1u64);
  }
}
"""

# Bounds for waits: far more than any machine needs, far less than
# running the whole grid.
DEADLINE = 120
ALL = 0x7FFFFFFF

# The child of the Ctrl-C test: it reports when the kernel runs (a thread
# watching the counter the kernel writes), then waits in the launch.
# Python installs its SIGINT handler only where SIGINT is not ignored at
# start, which it may be under a test runner: the child installs it.
CHILD = r"""
import signal, sys, threading, time
import numpy as np
import gridjit
signal.signal(signal.SIGINT, signal.default_int_handler)
mod = gridjit.compile(%r)
hits = np.zeros(1, np.uint64)
out = np.zeros(32, np.int32)

def watch():
    while hits[0] == 0:
        time.sleep(0.001)
    print("running", flush=True)

threading.Thread(target=watch, daemon=True).start()
try:
    mod.slow[%d, 32](hits, out, 1000)
    print("finished: no KeyboardInterrupt")
except KeyboardInterrupt:
    ran = int(hits[0])
    print("KeyboardInterrupt after", "some" if 0 < ran < %d else ran, "blocks", flush=True)
# The process goes on: another launch, and the counter stands still.
after = int(hits[0])
time.sleep(0.05)
print("stopped:", int(hits[0]) == after)
hits[0] = 0
mod.count[64, 8](hits)
print("launched again:", int(hits[0]))
""" % (KERNELS, ALL, ALL)


class CancelTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.rt = gridjit.Runtime("host", threads=2)
        cls.mod = gridjit.compile(KERNELS, runtime=cls.rt)
        cls.out = np.zeros(32, np.int32)
        # Python's own SIGINT handler, which a test runner may have left
        # out (SIGINT ignored at start).
        cls.old_handler = signal.signal(signal.SIGINT, signal.default_int_handler)

    @classmethod
    def tearDownClass(cls):
        signal.signal(signal.SIGINT, cls.old_handler)

    def test_a_timeout_stops_the_launch(self):
        hits = np.zeros(1, np.uint64)
        with self.assertRaises(gridjit.KernelTimeoutError) as cm:
            self.mod.slow[ALL, 32](hits, self.out, 1000, timeout=0.001)
        e = cm.exception
        self.assertEqual(e.status, "GJ_ERROR_TIMEOUT")
        self.assertIsInstance(e, gridjit.LaunchError)
        self.assertEqual(
            str(e),
            "kernel 'slow' did not finish within 1 ms (LaunchOptions::TimeoutMilliseconds): stopped after %d of "
            "%d blocks; memory the kernel wrote until then stays written" % (hits[0], ALL),
        )
        # Rounded up to whole milliseconds, through Kernel.launch too.
        with self.assertRaisesRegex(gridjit.KernelTimeoutError, "within 2 ms"):
            self.mod.slow.launch(ALL, 32, hits, self.out, 1000, timeout=0.0011)
        # A timeout that does not pass changes nothing.
        hits[0] = 0
        self.mod.count[64, 8](hits, timeout=3600)
        self.assertEqual(hits[0], 64 * 8)

    def test_cancel_from_another_thread(self):
        hits = np.zeros(1, np.uint64)
        token = gridjit.CancelToken()
        self.assertFalse(token.cancelled)

        def cancel_when_running():
            for _ in range(DEADLINE * 1000):
                if hits[0]:
                    break
                threading.Event().wait(0.001)
            token.cancel()

        t = threading.Thread(target=cancel_when_running)
        t.start()
        with self.assertRaises(gridjit.KernelCancelledError) as cm:
            self.mod.slow[ALL, 32](hits, self.out, 1000, cancel=token)
        t.join()
        e = cm.exception
        self.assertEqual(e.status, "GJ_ERROR_CANCELLED")
        self.assertIsInstance(e, gridjit.LaunchError)
        self.assertNotIsInstance(e, gridjit.KernelTimeoutError)
        self.assertEqual(
            str(e),
            "kernel 'slow' was cancelled (LaunchOptions::Cancel): stopped after %d of %d blocks; memory the "
            "kernel wrote until then stays written" % (hits[0], ALL),
        )
        self.assertGreater(hits[0], 0)
        self.assertTrue(token.cancelled)
        self.assertEqual(repr(token), "<gridjit.CancelToken cancelled>")
        # It stays cancelled: the next launch given it runs no block, on any
        # thread, with a timeout too.
        hits[0] = 0
        for launch in (
            lambda: self.mod.count[64, 8](hits, cancel=token),
            lambda: self.mod.count.launch(1, 8, hits, cancel=token, timeout=3600),
        ):
            with self.assertRaisesRegex(gridjit.KernelCancelledError, "stopped after 0 of"):
                launch()
        errors = []

        def other_thread():
            try:
                self.mod.count[64, 8](hits, cancel=token)
            except gridjit.KernelCancelledError as e:
                errors.append(e)

        t = threading.Thread(target=other_thread)
        t.start()
        t.join()
        self.assertEqual(len(errors), 1)
        self.assertEqual(hits[0], 0)
        # A fresh token changes nothing.
        fresh = gridjit.CancelToken()
        self.assertEqual(repr(fresh), "<gridjit.CancelToken>")
        self.mod.count[64, 8](hits, cancel=fresh)
        self.assertEqual(hits[0], 64 * 8)

    def test_bad_options(self):
        hits = np.zeros(1, np.uint64)
        for bad in (0, -1, float("nan"), float("inf"), True, "1", 2.0**70):
            with self.subTest(timeout=bad):
                with self.assertRaisesRegex(gridjit.InvalidArgumentError, r"^gridjit: kernel 'count': timeout "):
                    self.mod.count[1, 1](hits, timeout=bad)
        with self.assertRaisesRegex(
            gridjit.InvalidArgumentError, "^gridjit: kernel 'count': cancel must be a gridjit.CancelToken, not Event$"
        ):
            self.mod.count[1, 1](hits, cancel=threading.Event())
        self.assertEqual(hits[0], 0)
        # A NumPy number is a number of seconds.
        self.mod.count[1, 1](hits, timeout=np.float32(10))
        self.assertEqual(hits[0], 1)

    def test_which_launches_are_interruptible(self):
        # Launches with more blocks than the runtime has threads, and 2^22
        # threads for each of them: the rest keep the fast path.
        k = self.mod.count
        self.assertTrue(k[ALL, 1]._long)
        self.assertTrue(k[(1024, 1024), 8]._long)  # 2^23 threads for 2 threads
        self.assertFalse(k[(1024, 1024), 7]._long)
        self.assertFalse(k[2, 1024]._long)  # no more blocks than threads
        self.assertFalse(k[1, 1]._long)
        self.assertEqual(_cancel.LONG_LAUNCH_THREADS_PER_WORKER, 1 << 22)
        self.assertTrue(_cancel.interruptible_here())
        seen = []
        t = threading.Thread(target=lambda: seen.append(_cancel.interruptible_here()))
        t.start()
        t.join()
        self.assertEqual(seen, [False])
        old = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            self.assertFalse(_cancel.interruptible_here())
        finally:
            signal.signal(signal.SIGINT, old)

    def test_ctrl_c_stops_a_long_launch(self):
        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p)
        env["GRIDJIT_NUM_THREADS"] = "2"
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
        )
        try:
            lines = []
            timer = threading.Timer(DEADLINE, child.kill)  # never a hang
            timer.start()
            try:
                line = child.stdout.readline()
                self.assertEqual(line, "running\n", child.stderr.read() if not line else "")
                child.send_signal(signal.SIGINT)
                out, err = child.communicate()
            finally:
                timer.cancel()
            lines = (line + out).splitlines()
            self.assertEqual(child.returncode, 0, err)
            self.assertEqual(
                lines,
                ["running", "KeyboardInterrupt after some blocks", "stopped: True", "launched again: 512"],
                err,
            )
        finally:
            if child.poll() is None:
                child.kill()
                child.wait()


if __name__ == "__main__":
    unittest.main()
