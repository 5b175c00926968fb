#!/usr/bin/env python3
"""Runs one command in N processes at once and compares what they print.

Usage: parallel.py N CACHE_DIR -- COMMAND ARGS...

All N processes are started before any is waited for. Passes (exit 0, and
prints "all N succeeded with identical output") when every process exits
with 0 and all standard outputs are byte-identical; afterwards CACHE_DIR
must hold only finished entries (gridjit-<key>.gjc): no lock or temp file
may be left behind. Prints the number of entries and the sum of the
"compiles" counters that the processes report with --stats, so a test can
check how many processes compiled. Standard library only.
"""
import os
import re
import subprocess
import sys


def main():
    n = int(sys.argv[1])
    cache_dir = sys.argv[2]
    assert sys.argv[3] == "--"
    cmd = sys.argv[4:]
    procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
             for _ in range(n)]
    results = [p.communicate() + (p.returncode,) for p in procs]
    ok = True
    for i, (out, err, rc) in enumerate(results):
        if rc != 0:
            print("process %d exited with %d:\n%s" % (i, rc, err.decode(errors="replace")))
            ok = False
    outputs = set(out for out, _, _ in results)
    if len(outputs) != 1:
        print("the processes printed %d different outputs" % len(outputs))
        ok = False
    compiles = 0
    for _, err, _ in results:
        m = re.search(rb"^\s+compiles\s+(\d+)", err, re.M)
        if m:
            compiles += int(m.group(1))
    names = sorted(os.listdir(cache_dir)) if os.path.isdir(cache_dir) else []
    entries = [x for x in names if re.fullmatch(r"gridjit-[0-9a-f]{64}\.gjc", x)]
    for x in names:
        if x not in entries:
            print("left in the cache directory: " + x)
            ok = False
    print("entries: %d" % len(entries))
    print("compiles: %d" % compiles)
    if ok:
        print("all %d succeeded with identical output" % n)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
