#!/usr/bin/env python3
"""Feeds jit-run truncated and mutated KIR files and checks that it never
crashes or hangs: every run must exit with 0 (accepted) or 1 (a reported
error, with a message on stderr).

Usage: fuzz-driver.py JIT_RUN SEED_FILE... [--runs N] [--seed S]
Prints one summary line; exits 1 on the first failure, naming the input.
"""
import argparse
import os
import random
import subprocess
import sys
import tempfile


def mutate(rng, data):
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        op = rng.randrange(4)
        pos = rng.randrange(len(data) + 1)
        if op == 0 and data:  # flip a byte
            data[min(pos, len(data) - 1)] = rng.randrange(256)
        elif op == 1:  # insert punctuation the grammar cares about
            data[pos:pos] = rng.choice([b"{", b"}", b"(", b")", b";", b"[", b"..", b"/*", b"0x", b"1e", b"as", b"-", b"\x00"])
        elif op == 2 and data:  # delete a range
            del data[pos:pos + rng.randint(1, 8)]
        else:  # duplicate a range
            chunk = data[pos:pos + rng.randint(1, 16)]
            data[pos:pos] = chunk
    return bytes(data)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("jit_run")
    ap.add_argument("seeds", nargs="+")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args()

    rng = random.Random(args.seed)
    seeds = [open(p, "rb").read() for p in args.seeds]
    inputs = []
    for data in seeds:  # a few truncations of each seed, at random points
        for _ in range(max(1, args.runs // (2 * len(seeds)))):
            inputs.append(data[: rng.randrange(len(data) + 1)])
    while len(inputs) < args.runs:
        inputs.append(mutate(rng, rng.choice(seeds)))

    accepted = rejected = 0
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "input.kir")
        for data in inputs:
            with open(path, "wb") as f:
                f.write(data)
            try:
                r = subprocess.run([args.jit_run, path, "--emit=kir"], capture_output=True, timeout=20)
            except subprocess.TimeoutExpired:
                sys.stdout.write("HANG on input:\n%r\n" % data)
                return 1
            if r.returncode == 0:
                accepted += 1
            elif r.returncode == 1 and b"error:" in r.stderr:
                rejected += 1
            else:
                sys.stdout.write("BAD EXIT %d on input:\n%r\nstderr:\n%s\n" % (r.returncode, data, r.stderr.decode(errors="replace")))
                return 1
    print("fuzz-driver: %d runs, %d accepted, %d rejected with a message, no crash" % (len(inputs), accepted, rejected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
