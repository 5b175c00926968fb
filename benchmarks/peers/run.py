#!/usr/bin/env python3
"""gridjit's Python package against Numba-CUDA, CuPy and Triton on one GPU,
in one run: the same saxpy, shared-memory reduction and empty kernel
(kernels.py) through each.

For every peer, two fresh processes share a new, empty cache directory
(GRIDJIT_CACHE_DIR, NUMBA_CACHE_DIR, CUPY_CACHE_DIR, TRITON_CACHE_DIR):

  cold   the first call of each kernel with nothing cached: compile, load,
         launch, wait (the first kernel also pays for the framework's
         compiler starting up);
  warm   the same in a new process over the filled cache (a cache hit: load,
         launch, wait), then the kernels' GPU time (CUDA events on the
         default stream, median of 20 batches of 10 launches, 2^26 floats)
         and the launch overhead of the empty kernel (host time per launch,
         best of 5 x 20000 launches and the wait for them): `call` is the
         per-call form (kernel[1, 1](...)), `launcher` a configured launcher
         kept in a variable where the framework has one.

Imports, the CUDA context and the first allocations are outside every
figure. Usage:

  python3 benchmarks/peers/run.py [--peers gridjit,numba,cupy,triton]
                                  [--log2n 26] [--quick] [--json FILE]

gridjit's package must be importable (PYTHONPATH=python, and
GRIDJIT_LIBRARY naming libgridjit.so where the package cannot find it); a
peer whose import fails is reported as such and the others run.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
PEERS = ("gridjit", "numba", "cupy", "triton")


def run_worker(peer, cache, log2n, measure, quick):
    env = dict(os.environ)
    for var, sub in (("GRIDJIT_CACHE_DIR", "gridjit"), ("NUMBA_CACHE_DIR", "numba"),
                     ("CUPY_CACHE_DIR", "cupy"), ("TRITON_CACHE_DIR", "triton")):
        env[var] = os.path.join(cache, sub)
    env["PYTHONPATH"] = HERE + os.pathsep + env.get("PYTHONPATH", "")
    args = [sys.executable, os.path.join(HERE, "worker.py"), peer, "--log2n", str(log2n)]
    if measure:
        args.append("--measure")
    if quick:
        args.append("--quick")
    try:
        p = subprocess.run(args, env=env, capture_output=True, text=True, timeout=600)
    except subprocess.TimeoutExpired:
        return {"error": "timed out after 600 s"}
    if p.returncode != 0:
        tail = (p.stderr or p.stdout).strip().splitlines()[-6:]
        return {"error": "exit %d: %s" % (p.returncode, " | ".join(tail))}
    return json.loads(p.stdout.strip().splitlines()[-1])


def fmt(v, spec="%.1f"):
    return "n/a" if v is None else spec % v


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--peers", default=",".join(PEERS))
    ap.add_argument("--log2n", type=int, default=26)
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    ap.add_argument("--json", help="write every result here")
    opts = ap.parse_args()

    results = {}
    for peer in opts.peers.split(","):
        with tempfile.TemporaryDirectory(prefix="peers-%s-" % peer) as cache:
            cold = run_worker(peer, cache, opts.log2n, False, opts.quick)
            warm = run_worker(peer, cache, opts.log2n, True, opts.quick) if "error" not in cold else cold
        results[peer] = {"cold": cold, "warm": warm}
        print("%s: %s" % (peer, "ok" if "error" not in warm else warm["error"]), file=sys.stderr, flush=True)

    if opts.json:
        with open(opts.json, "w") as f:
            json.dump(results, f, indent=1)

    ok = {p: r for p, r in results.items() if "error" not in r["warm"]}
    some = next(iter(ok.values()), None)
    if some:
        w = some["warm"]
        print("%s (%s), CUDA driver %d, n = 2^%d" % (w["device"], w["arch"], w["driver"], opts.log2n))
    for p, r in results.items():
        if p in ok:
            print("- %s: %s" % (p, r["warm"]["version"]))
        else:
            print("- %s: did not run: %s" % (p, r["warm"]["error"]))

    print("\nFirst call (ms): compile, load, launch, wait; cold = empty cache, warm = a new process on the filled cache")
    print("| peer | saxpy cold | reduce cold | empty cold | saxpy warm | reduce warm | empty warm |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for p, r in ok.items():
        c, w = r["cold"]["first_ms"], r["warm"]["first_ms"]
        print("| %s | %s |" % (p, " | ".join(fmt(d[k]) for d in (c, w) for k in ("saxpy", "reduce", "empty"))))

    print("\nKernel time (µs, GPU, median), 2^%d floats" % opts.log2n)
    print("| peer | saxpy | saxpy GB/s | reduce | reduce GB/s | results |")
    print("|---|---:|---:|---:|---:|---|")
    for p, r in ok.items():
        w = r["warm"]
        right = "right" if (w["saxpy_ok"] and w["reduce_ok"] and r["cold"]["saxpy_ok"] and r["cold"]["reduce_ok"]) else \
            "WRONG (saxpy %s, reduce rel. error %.1e)" % (w["saxpy_ok"], w["reduce_rel_err"])
        print("| %s | %s | %s | %s | %s | %s |" % (p, fmt(w["kernel_us"]["saxpy"]), fmt(w["saxpy_gbs"], "%.0f"),
                                                   fmt(w["kernel_us"]["reduce"]), fmt(w["reduce_gbs"], "%.0f"), right))

    print("\nLaunch overhead of the empty 4-argument kernel (µs per launch, host)")
    print("| peer | kernel[1, 1](...) | configured launcher |")
    print("|---|---:|---:|")
    for p, r in ok.items():
        u = r["warm"]["launch_us"]
        print("| %s | %s | %s |" % (p, fmt(u["call"], "%.2f"), fmt(u["launcher"], "%.2f")))
    bad = [p for p, r in ok.items() if not (r["warm"]["saxpy_ok"] and r["warm"]["reduce_ok"])]
    return 1 if bad or len(ok) < len(results) else 0


if __name__ == "__main__":
    sys.exit(main())
