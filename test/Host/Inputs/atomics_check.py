#!/usr/bin/env python3
"""Checks the values that atomics returned (test/Host/atomics.kir): every
ticket 0..N-1 handed out exactly once, and the exchanged-out values plus the
final value are exactly the initial value plus every value exchanged in.

Usage: atomics_check.py OUTPUT N
"""
import re
import sys

out = {}
for line in open(sys.argv[1]):
    m = re.match(r"^(\w+) = \[(.*)\]$", line.strip())
    if m:
        out[m.group(1)] = [int(v) for v in m.group(2).split(",")]
n = int(sys.argv[2])
ok = True
if sorted(out["tickets"]) != list(range(n)):
    print("tickets: not a permutation of 0..%d" % (n - 1))
    ok = False
if sorted(out["olds"] + [out["acc"][7]]) != sorted([0] + [g + 1 for g in range(n)]):
    print("exchange: values were lost or duplicated")
    ok = False
print("atomics_check: " + ("ok" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
