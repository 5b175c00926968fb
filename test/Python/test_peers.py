# benchmarks/peers/run.py (docs/CUDA.md, "Against Numba-CUDA, CuPy and
# Triton") keeps working: on the fake CUDA driver, which runs no kernel
# code, a quick run of the gridjit peer goes through every step (two
# processes on one cache, first calls, the CUDA-event timer, launch
# overhead) and prints every table, and the result check finds that no
# kernel ran. Speed is measured on a GPU, never asserted here.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t
# RUN: env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache GRIDJIT_CUDA_DRIVER=%fake_cuda %gridjit_python %s

import json
import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


class PeersTest(unittest.TestCase):
    def test_quick_run_on_the_fake_driver(self):
        out = os.path.join(os.environ["GJ_TEST_TMP"], "peers.json")
        env = dict(os.environ, PYTHONPATH=os.path.join(ROOT, "python"))
        p = subprocess.run(
            [sys.executable, os.path.join(ROOT, "benchmarks", "peers", "run.py"), "--peers", "gridjit",
             "--log2n", "10", "--quick", "--json", out],
            capture_output=True, text=True, env=env, timeout=600)
        # No kernel ran, so the results are wrong and the status says so.
        self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
        self.assertIn("gridjit fake GPU 0 (sm_80), CUDA driver 12040, n = 2^10", p.stdout)
        rows = [line for line in p.stdout.splitlines() if line.startswith("| gridjit |")]
        self.assertEqual(len(rows), 3, p.stdout)
        self.assertIn("WRONG", rows[1])
        with open(out) as f:
            result = json.load(f)["gridjit"]
        for phase in ("cold", "warm"):
            self.assertEqual(set(result[phase]["first_ms"]), {"saxpy", "reduce", "empty"})
            self.assertFalse(result[phase]["saxpy_ok"])
        self.assertGreater(result["warm"]["launch_us"]["call"], 0)
        # Each peer's two processes share a cache directory of their own,
        # never the caller's.
        cache = os.listdir(os.environ["GRIDJIT_CACHE_DIR"]) if os.path.isdir(os.environ["GRIDJIT_CACHE_DIR"]) else []
        self.assertEqual(cache, [], "run.py gives each peer its own cache directory")


if __name__ == "__main__":
    unittest.main()
