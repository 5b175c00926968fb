#!/usr/bin/env python3
"""Per-launch overhead of gridjit's Python package, against C++ and the C API.

Launches an empty kernel with four arguments (i32, f32, ptr<f32>, ptr<f32>)
on the host target, one block of one thread, so that what is measured is
the cost of getting a launch through each layer:

  C++         gridjit::Runtime::launch            } bench-CAPIBench (the
  C API       gj_launch                           } same run, a subprocess)
  Python      kernel[1, 1](n, a, x, y)            NumPy arrays
  Python      launcher(n, a, x, y)                the configured launcher kept
  Python      ... with gridjit.DeviceArray args
  Python      launcher(..., timeout=3600)         a launch option: the config copied
  Python      ... on the interruptible path       a helper thread runs the launch
                                                  while the main thread waits for
                                                  Ctrl-C (what a long launch does;
                                                  docs/Python.md, "Timeouts,
                                                  cancellation and Ctrl-C")
  ctypes      gj_launch called from Python with prebuilt arguments (the
              floor of any ctypes binding)
  Numba       an @njit function of the same four arguments, empty: the
              dispatch cost Python users know (Debian's python3-numba)

Each row is the best of several repetitions of many calls (µs per call),
and "vs C++" is its difference from the C++ row of the same run. The goal:
Python at most 5 µs above C++.

Usage: python3 benchmarks/python_launch_overhead.py [--build build] [--quick]
Run it with a Python that has NumPy (and Numba for the reference row), e.g.
Debian's /usr/bin/python3; speed is measured here, never asserted in tests.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import timeit

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

EMPTY = "kernel empty(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) { }"


def best_us(fn, number, repeat):
    """The best of \\p repeat runs of \\p number calls, in µs per call."""
    return min(timeit.repeat(fn, number=number, repeat=repeat)) / number * 1e6


def cxx_rows(build, quick):
    """{name: µs} of bench-CAPIBench's launch benchmarks, or {} (with a
    note on stderr) when it is not built."""
    exe = os.path.join(build, "bin", "bench-CAPIBench")
    if not os.path.exists(exe):
        print("note: %s is not built: no C++ and C API rows" % exe, file=sys.stderr)
        return {}
    with tempfile.TemporaryDirectory() as tmp:
        report = os.path.join(tmp, "capi.json")
        # The JSON goes to a file: the program's own console reporter
        # prints the table.
        args = [exe, "--benchmark_filter=Launch", "--benchmark_out_format=json", "--benchmark_out=" + report]
        if quick:
            args.append("--benchmark_min_time=0.05")
        subprocess.run(args, capture_output=True, text=True, check=True)
        with open(report) as f:
            data = json.load(f)
    rows = {}
    for b in data["benchmarks"]:
        if b.get("run_type", "iteration") != "iteration":
            continue
        scale = {"ns": 1e-3, "us": 1.0, "ms": 1e3}[b.get("time_unit", "ns")]
        name = b["name"].split("/")[0]
        rows[LABELS.get(name, name)] = b["real_time"] * scale
    return rows


# bench-CAPIBench's benchmarks, as the table names them.
LABELS = {
    "BM_Launch_Cxx": "C++ Runtime::launch",
    "BM_Launch_C": "C API gj_launch (linked into the program)",
    "BM_Launch_CShared": "C API gj_launch (libgridjit.so, dlopen)",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build directory (default: build/)")
    ap.add_argument("--quick", action="store_true", help="fewer repetitions (a smoke test)")
    opts = ap.parse_args()

    os.environ.setdefault("GRIDJIT_LIBRARY", os.path.join(opts.build, "lib", "libgridjit.so"))
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import ctypes

    import numpy as np

    import gridjit
    from gridjit import _capi

    number, repeat = (2000, 3) if opts.quick else (50000, 7)
    rows = []

    # C++ and the C API first, in a subprocess of this run.
    for name, us in cxx_rows(opts.build, opts.quick).items():
        rows.append((name, us))

    # One worker thread, as the C++ benchmark's runtime has: the launch
    # path is measured, not the pool's wake-up of idle threads.
    rt = gridjit.Runtime("host", threads=1)
    mod = gridjit.compile(EMPTY, runtime=rt)
    k = mod.empty
    x = np.zeros(16, np.float32)
    y = np.zeros(16, np.float32)
    launcher = k[1, 1]
    launcher(16, 2.0, x, y)  # loads the module
    dx, dy = rt.device_array(16, "f32"), rt.device_array(16, "f32")

    rows.append(("Python kernel[1, 1](n, a, x, y)", best_us(lambda: k[1, 1](16, 2.0, x, y), number, repeat)))
    rows.append(("Python launcher(n, a, x, y)", best_us(lambda: launcher(16, 2.0, x, y), number, repeat)))
    rows.append(("Python launcher, DeviceArray args", best_us(lambda: launcher(16, 2.0, dx, dy), number, repeat)))
    rows.append(
        ("Python launcher(..., timeout=3600)", best_us(lambda: launcher(16, 2.0, x, y, timeout=3600), number, repeat))
    )
    # The path a long launch takes from the main thread with Python's SIGINT
    # handler (installed here, for a run where SIGINT was ignored at start):
    # a launcher of two blocks on the one runtime thread, marked long.
    import signal

    signal.signal(signal.SIGINT, signal.default_int_handler)
    interruptible = k[2, 1]
    interruptible._long = True
    slow_number = max(200, number // 20)
    rows.append(
        (
            "Python launcher, interruptible path (helper thread)",
            best_us(lambda: interruptible(16, 2.0, x, y), slow_number, repeat),
        )
    )

    # The floor: gj_launch through ctypes with every argument prebuilt.
    args = (_capi.gj_arg * 4)()
    args[0].kind, args[0].type, args[0].value.i = _capi.GJ_ARG_SCALAR, 3, 16
    args[1].kind, args[1].type, args[1].value.f32 = _capi.GJ_ARG_SCALAR, 9, 2.0
    for i, a in ((2, x), (3, y)):
        args[i].kind, args[i].type, args[i].value.pointer = _capi.GJ_ARG_HOST_POINTER, 9, a.ctypes.data
    cfg = _capi.new_struct("gj_launch_config")
    lm, name, n4, cref = k._loaded(), b"empty", ctypes.c_size_t(4), ctypes.byref(cfg)
    size = ctypes.c_size_t(ctypes.sizeof(_capi.gj_arg))
    raw = _capi.gj_launch_raw
    assert raw(lm, name, cref, args, n4, size) == 0, _capi.last_error()
    rows.append(
        ("ctypes gj_launch, prebuilt arguments", best_us(lambda: raw(lm, name, cref, args, n4, size), number, repeat))
    )

    try:
        import numba
    except ImportError:
        numba = None
        print("note: no numba for %s: no Numba row" % sys.executable, file=sys.stderr)
    if numba is not None:

        @numba.njit
        def empty(n, a, x, y):
            pass

        empty(16, 2.0, x, y)
        us = best_us(lambda: empty(16, 2.0, x, y), number, repeat)
        rows.append(("Numba @njit empty(n, a, x, y) (%s)" % numba.__version__, us))

    base = next((us for name, us in rows if name == LABELS["BM_Launch_Cxx"]), None)
    print("| launch of an empty 4-argument host kernel | µs per launch | vs C++ |")
    print("|---|---:|---:|")
    for name, us in rows:
        diff = "" if base is None else "%+.2f" % (us - base)
        print("| %s | %.2f | %s |" % (name, us, diff))
    print("\n(%s, %s; best of %d × %d calls; load average %.1f)" % (
        gridjit.library_path, sys.executable, repeat, number, os.getloadavg()[0]))


if __name__ == "__main__":
    main()
