"""Checks jit-run's --print NAME[...] against Python's own indexing.

Usage: print_slices.py JIT_RUN KERNEL.kir

The kernel "keep" of KERNEL.kir has one parameter, y: ptr<i32>, and leaves it alone; y is
iota:10, so element i is i. Every slice and index below is printed by
jit-run in one run and compared line by line with what Python's list
indexing gives for the same text. Prints "N selections agree" or the
differences (exit 1).
"""

import subprocess
import sys

N = 10
SLICES = [
    ":", "::", "::1", "::-1", "0:0", "0:10", "0:10:3", "1:3", "3:1", "3:1:-1", "1:3:-1",
    "-1:", ":-1", "-3:-1", "-100:100", "100:", ":100", "-100:", ":-100", "5:", "::7", "::-7",
    "9:0:-4", "-1:-100:-3", "100:0:-1", "-100:100:-1", "2:8:100", "8:2:-100",
    "::9223372036854775807", "::-9223372036854775808", "-9223372036854775808:9223372036854775807",
]
INDICES = ["0", "9", "-1", "-10", "5"]


def main():
    jit_run, kernel = sys.argv[1], sys.argv[2]
    specs = SLICES + INDICES
    args = [jit_run, kernel, "--kernel", "keep", "--arg", "y=iota:%d" % N]
    for s in specs:
        args += ["--print", "y[%s]" % s]
    got = subprocess.run(args, capture_output=True, text=True, check=True).stdout.splitlines()
    items = list(range(N))
    want = []
    for s in SLICES:
        parts = [int(p) if p else None for p in s.split(":")]
        sel = items[slice(*parts)]
        want.append("y[%s] = [%s]" % (s, ", ".join(map(str, sel))))
    for s in INDICES:
        want.append("y[%s] = %d" % (s, items[int(s)]))
    bad = [(w, g) for w, g in zip(want, got) if w != g]
    if len(got) != len(want) or bad:
        print("%d lines, %d expected" % (len(got), len(want)))
        for w, g in bad:
            print("want: " + w)
            print("got:  " + g)
        return 1
    print("%d selections agree" % len(want))
    return 0


if __name__ == "__main__":
    sys.exit(main())
