# The package in multiprocessing workers started with fork (docs/Python.md,
# "multiprocessing and fork()"). The parent first uses everything that has
# threads (compile_async's pool, the host runtime's workers, the waiter of a
# compile_async); the workers, children of fork(), then compile both ways
# and launch on the parent's runtime, its modules and new ones. A compile
# the parent had not finished at the fork gives the child's future a result
# or an error, never a wait without end. CUDA (the fake driver) raises
# NoDeviceError in a child, which goes on with the host.
#
# Every wait is bounded: a worker that hangs makes the test fail (and the
# pool is terminated) instead of hanging it. No time is measured.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache GRIDJIT_CUDA_DRIVER=%fake_cuda GRIDJIT_FAKE_CUDA_DEVICES=1 %gridjit_python %s

import multiprocessing
import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402

DEADLINE = 120

COUNT = """
kernel count(hits: ptr<u64>) {
  atomic_add(&hits[0], 1u64);
}
"""


def scale(tag, k=1):
    """A module of its own for \\p tag: nothing cached has it."""
    return "".join(
        "kernel %s_%d(n: i32, s: f32, v: ptr<f32>) {\n"
        "  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;\n"
        "  if i < n { v[i] = v[i] * s; }\n"
        "}\n" % (tag, j)
        for j in range(k)
    )


# The parent's, used again by the workers.
PARENT = {}


def worker(i):
    """In a worker: the package as the parent left it."""
    hits = np.zeros(1, np.uint64)
    PARENT["count"].count[256, 8](hits)  # the parent's module and runtime
    out = [int(hits[0])]
    mod = gridjit.compile(scale("sync%d_%d" % (i, os.getpid())))
    fut = gridjit.compile_async(scale("async%d_%d" % (i, os.getpid())))
    amod = fut.result(timeout=DEADLINE)
    v = np.ones(100, np.float32)
    getattr(mod, "sync%d_%d_0" % (i, os.getpid()))[1, 128](100, 2.0, v)
    getattr(amod, "async%d_%d_0" % (i, os.getpid()))[1, 128](100, 3.0, v)
    out.append(float(v[0]))
    # A runtime of the worker's own, with threads of its own.
    rt = gridjit.Runtime("host", threads=3)
    hits[0] = 0
    PARENT["count"].load(rt).count[512, 8](hits)
    out.append(int(hits[0]))
    return out


def pending_result(conn):
    """In a child: what the future of the parent's unfinished compile
    gives."""
    try:
        PARENT["pending"].result(timeout=DEADLINE)
        conn.send("module")
    except gridjit.Error as e:
        conn.send("error: " + str(e))
    except Exception as e:  # a TimeoutError: the future never finished
        conn.send("%s: %s" % (type(e).__name__, e))


def cuda_child(conn):
    """In a child of a process that uses CUDA."""
    said = []
    x = PARENT["cuda_x"]
    try:
        PARENT["cuda_mod"].saxpy[1, 16](16, 2.0, x, x)
        said.append("launched")
    except gridjit.NoDeviceError as e:
        said.append(str(e))
    try:
        gridjit.Runtime("cuda")
        said.append("a new runtime")
    except gridjit.NoDeviceError as e:
        said.append(str(e))
    hits = np.zeros(1, np.uint64)
    PARENT["count"].count[64, 8](hits)
    said.append("host: %d" % hits[0])
    conn.send(said)


class ForkTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.ctx = multiprocessing.get_context("fork")
        # Threads everywhere: the compiler's pool (compile_async), the
        # waiters, the default host runtime's workers.
        PARENT["count"] = gridjit.compile(COUNT)
        for i in range(3):
            gridjit.compile_async(scale("parent%d" % i)).result(timeout=DEADLINE)
        hits = np.zeros(1, np.uint64)
        PARENT["count"].count[1024, 8](hits)
        assert hits[0] == 1024 * 8

    def run_child(self, target):
        parent, child = self.ctx.Pipe(duplex=False)
        p = self.ctx.Process(target=target, args=(child,))
        p.start()
        try:
            if not parent.poll(DEADLINE):
                self.fail("the child did not answer within %d s" % DEADLINE)
            return parent.recv()
        finally:
            p.join(DEADLINE)
            if p.is_alive():
                p.kill()
                p.join()
            self.assertEqual(p.exitcode, 0)

    def test_a_pool_of_forked_workers(self):
        with self.ctx.Pool(2) as pool:
            results = pool.map_async(worker, range(4)).get(timeout=DEADLINE)
        self.assertEqual(results, [[256 * 8, 6.0, 512 * 8]] * 4)
        # And the parent goes on.
        hits = np.zeros(1, np.uint64)
        PARENT["count"].count[64, 8](hits)
        self.assertEqual(hits[0], 512)

    def test_a_compile_unfinished_at_the_fork(self):
        PARENT["pending"] = gridjit.compile_async(scale("pending%d" % os.getpid(), 40))
        said = self.run_child(pending_result)
        self.assertIn(
            said,
            (
                "module",
                "error: the asynchronous compile was abandoned: the process forked (this is the child) before it "
                "finished, and only the parent finishes it",
            ),
        )
        self.assertIsInstance(PARENT["pending"].result(timeout=DEADLINE), gridjit.Module)

    def test_cuda_in_a_child(self):
        PARENT["cuda_mod"] = gridjit.compile(gjtest.SAXPY, target="cuda")
        PARENT["cuda_x"] = gridjit.device_array(16, "f32", target="cuda")
        PARENT["cuda_mod"].saxpy[1, 16](16, 2.0, PARENT["cuda_x"], PARENT["cuda_x"])
        said = self.run_child(cuda_child)
        self.assertEqual(
            said,
            [
                "CUDA cannot be used in this process: it is a child of fork() of the process that initialised CUDA, "
                "and CUDA does not survive fork(). Create the CUDA runtime in a process that has not forked since "
                "CUDA started (Python's multiprocessing: the 'spawn' or 'forkserver' start method)",
                "gridjit: no CUDA device: CUDA was initialised before this process was forked from its "
                "parent, and CUDA does not survive fork(): use CUDA in a process that has not forked since CUDA "
                "started (Python's multiprocessing: the 'spawn' or 'forkserver' start method). " + gjtest.NO_DEVICE_HINT,
                "host: 512",
            ],
        )
        # The parent's CUDA runtime goes on.
        PARENT["cuda_mod"].saxpy[1, 16](16, 2.0, PARENT["cuda_x"], PARENT["cuda_x"])
        gridjit.runtime("cuda").synchronize()


if __name__ == "__main__":
    unittest.main()
