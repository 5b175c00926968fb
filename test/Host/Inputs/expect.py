#!/usr/bin/env python3
"""Checks `NAME = [v0, v1, ...]` lines (jit-run --print) against values
computed independently, in Python, from a formula given on the command line.

Usage: jit-run ... --print y | expect.py [--ulps N] [--atol X] [--f32] 'y=[EXPR...]' ...

Each argument NAME=EXPR is evaluated with `math`, `f32` (round a number to
the nearest float32), `i32`/`u32`/`i64`/`u64` (wrap an integer to that
width) and every printed buffer (by its name: use it for inputs the kernel
does not change) in scope. Integers and booleans must match exactly. Floats must
match exactly, or to within N units in the last place of float32 (--f32)
or float64 when --ulps is given, or to within X when --atol is given (for
results whose rounding error a formula's cancellation amplifies, such as
option prices); NaN matches NaN; None matches anything.

Prints one line `expect: ok (NAMES)` when everything matches; otherwise the
first mismatches, and exits with status 1. Standard library only.
"""
import math
import re
import struct
import sys


def f32(x):
    try:
        return struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:  # beyond float32's range
        return math.copysign(math.inf, x)


def wrap(bits, signed):
    def w(v):
        v &= (1 << bits) - 1
        if signed and v >= 1 << (bits - 1):
            v -= 1 << bits
        return v
    return w


def parse_value(text):
    text = text.strip()
    if text in ("true", "false"):
        return text == "true"
    if re.fullmatch(r"-?\d+", text):
        return int(text)
    return float(text)  # also nan, inf, -inf


def ordered(x, single):
    """The float's bits as an integer ordered like the floats."""
    if single:
        (i,) = struct.unpack("<i", struct.pack("<f", x))
    else:
        (i,) = struct.unpack("<q", struct.pack("<d", x))
    return i if i >= 0 else -(i & (2 ** (31 if single else 63) - 1))


def close(got, want, ulps, single, atol=None):
    if want is None:  # any value
        return True
    if isinstance(want, bool) or isinstance(got, bool):
        return bool(got) == bool(want)
    if isinstance(want, int) and isinstance(got, int):
        return got == want
    got, want = float(got), float(want)
    if math.isnan(want) or math.isnan(got):
        return math.isnan(want) and math.isnan(got)
    if single:
        got, want = f32(got), f32(want)
    if got == want:
        return True
    if atol is not None and abs(got - want) <= atol:
        return True
    if ulps is None or math.isinf(got) or math.isinf(want):
        return False
    return abs(ordered(got, single) - ordered(want, single)) <= ulps


def main():
    args = sys.argv[1:]
    ulps, single, atol = None, False, None
    specs = []
    while args:
        a = args.pop(0)
        if a == "--ulps":
            ulps = int(args.pop(0))
        elif a == "--atol":
            atol = float(args.pop(0))
        elif a == "--f32":
            single = True
        else:
            specs.append(a)
    printed = {}
    for line in sys.stdin:
        m = re.match(r"^(\w+) = \[(.*)\]\s*$", line)
        if m:
            body = m.group(2).strip()
            printed[m.group(1)] = [parse_value(v) for v in body.split(",")] if body else []
    scope = {"math": math, "f32": f32, "i32": wrap(32, True), "u32": wrap(32, False),
             "i64": wrap(64, True), "u64": wrap(64, False), "i8": wrap(8, True),
             "u8": wrap(8, False), "i16": wrap(16, True), "u16": wrap(16, False)}
    for name, values in printed.items():
        # A float32 printed with 9 digits reads back as the same float32.
        scope[name] = [f32(v) if single and isinstance(v, float) else v for v in values]
    bad = []
    for spec in specs:
        name, expr = spec.split("=", 1)
        want = eval(expr, scope)
        got = printed.get(name)
        if got is None:
            bad.append("%s: not printed" % name)
            continue
        if len(got) != len(want):
            bad.append("%s: %d values printed, %d expected" % (name, len(got), len(want)))
            continue
        for i, (g, w) in enumerate(zip(got, want)):
            if not close(g, w, ulps, single, atol):
                bad.append("%s[%d]: got %r, expected %r" % (name, i, g, w))
                if len(bad) > 10:
                    break
    if bad:
        print("expect: MISMATCH")
        for b in bad:
            print("  " + b)
        return 1
    print("expect: ok (%s)" % " ".join(s.split("=", 1)[0] for s in specs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
