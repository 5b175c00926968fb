"""One process of one peer: the first call of each kernel (compile, load,
launch, wait), the results checked against NumPy, and, with --measure, the
kernels' GPU time and the launch overhead of the empty kernel.

Usage (run.py starts it): python3 worker.py PEER [--log2n N] [--measure]
Prints one JSON object on its last line.
"""

import argparse
import importlib
import json
import sys
import time

import numpy as np

from cudatimer import CudaTimer
from kernels import A


def first_call_ms(peer, call):
    t0 = time.perf_counter()
    call()
    peer.synchronize()
    return (time.perf_counter() - t0) * 1e3


def launch_us(peer, launch, number, repeat):
    """Best of \\p repeat: \\p number launches and the wait for them, in
    microseconds per launch."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            launch()
        peer.synchronize()
        best = min(best, (time.perf_counter() - t0) / number)
    return best * 1e6


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("peer", choices=("gridjit", "numba", "cupy", "triton"))
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--measure", action="store_true")
    ap.add_argument("--quick", action="store_true")
    opts = ap.parse_args()

    t0 = time.perf_counter()
    mod = importlib.import_module("peer_" + opts.peer)
    import_ms = (time.perf_counter() - t0) * 1e3
    timer = CudaTimer()

    n = 1 << opts.log2n
    rng = np.random.default_rng(12345)
    x = rng.random(n, dtype=np.float32)
    y0 = rng.random(n, dtype=np.float32)
    # Allocation and the upload start the framework's CUDA context: not
    # part of any first call.
    peer = mod.Peer(x, y0)
    peer.synchronize()

    out = {"peer": opts.peer, "version": mod.version(), "device": timer.device_name, "arch": timer.arch,
           "driver": timer.driver_version, "n": n, "import_ms": import_ms, "first_ms": {}}
    for name in ("saxpy", "reduce", "empty"):
        out["first_ms"][name] = first_call_ms(peer, getattr(peer, name))

    # The first calls' results.
    y = peer.get("y")
    want_y = np.float32(A) * x + y0
    out["saxpy_ok"] = bool(np.allclose(y, want_y, rtol=1e-6, atol=1e-6))
    got = float(peer.get("result")[0])
    want = float(np.sum(x, dtype=np.float64))
    out["reduce_rel_err"] = abs(got - want) / want
    out["reduce_ok"] = out["reduce_rel_err"] < 1e-5

    if opts.measure:
        timer.synchronize()
        reps, number, repeat = (5, 1000, 3) if opts.quick else (20, 20000, 5)
        k = {}
        for name in ("saxpy", "reduce"):
            k[name] = timer.kernel_ms(getattr(peer, name), reps=reps) * 1e3
        out["kernel_us"] = k
        # saxpy reads x and y and writes y; reduce reads x.
        out["saxpy_gbs"] = 12 * n / (k["saxpy"] * 1e-6) / 1e9
        out["reduce_gbs"] = 4 * n / (k["reduce"] * 1e-6) / 1e9
        out["launch_us"] = {
            "call": launch_us(peer, peer.empty, number, repeat),
            "launcher": launch_us(peer, peer.empty_launcher(), number, repeat),
        }
    sys.stdout.flush()
    print(json.dumps(out))


if __name__ == "__main__":
    main()
