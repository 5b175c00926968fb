#!/usr/bin/env python3
"""Runs every kernel of every KIR file under the given directories on the
host (test/Host/all-test-kernels.test): the kernels that other suites only
compile or print must also execute.

Usage: run_all_kernels.py JIT_RUN DIR... [--skip DIR] [--unrunnable FILE:KERNEL]...
                          [--keep-going]

For each .kir file that verifies (`jit-run FILE --emit=kir` succeeds), each
kernel runs with a grid of 2 blocks of 4 threads (small, since kernels
written to check code generation assume nothing about their launch), every scalar argument 1
(true for bool) and every pointer argument a zero-filled buffer of 65536
elements; a kernel that declares dynamic shared memory gets 4096 bytes.
A run must end with status 0, or 1 with a message (a divergent
synchronisation point is a legitimate outcome for such arbitrary
arguments); a crash, a hang (30 s) or any other status is a failure.
Prints one summary line; exits 1 on the first failure, naming the file and
kernel (--keep-going: after listing every failure). --unrunnable names a
kernel that cannot run with such arguments (it writes out of its arrays
whatever the launch, i.e. undefined behaviour on any target); it is
skipped, and it is an error if it does not exist.
"""
import os
import re
import subprocess
import sys


def params_of(canonical):
    """kernel name -> [(param, type)] from a canonically printed module."""
    kernels = {}
    for m in re.finditer(r"^kernel (\w+)\((.*)\) \{$", canonical, re.M):
        params = []
        for p in re.split(r",\s*(?![^<]*>)", m.group(2)):
            p = p.strip()
            if p:
                name, ty = p.split(":", 1)
                # `var NAME: T` is a mutable parameter called NAME.
                name = re.sub(r"^var\s+", "", name.strip())
                params.append((name, ty.strip()))
        kernels[m.group(1)] = params
    return kernels


def arg_for(name, ty):
    if ty.startswith("ptr<"):
        return "%s=zeros:65536" % name
    return "%s=%s" % (name, "true" if ty == "bool" else "1")


def main():
    args = sys.argv[1:]
    jit_run = args.pop(0)
    skip, unrunnable, keep_going = [], set(), False
    while "--skip" in args:
        i = args.index("--skip")
        skip.append(os.path.realpath(args[i + 1]))
        del args[i:i + 2]
    while "--unrunnable" in args:
        i = args.index("--unrunnable")
        unrunnable.add(args[i + 1])
        del args[i:i + 2]
    if "--keep-going" in args:
        args.remove("--keep-going")
        keep_going = True
    failures = 0
    skipped = set()
    files = []
    for d in args:
        for root, dirs, names in os.walk(d):
            dirs[:] = [x for x in dirs if x != "Inputs" and x != "Output"]
            if any(os.path.realpath(root).startswith(s) for s in skip):
                continue
            files += [os.path.join(root, n) for n in sorted(names) if n.endswith(".kir")]
    ran = errors = 0
    for path in sorted(files):
        printed = subprocess.run([jit_run, path, "--emit=kir"], capture_output=True, text=True)
        if printed.returncode != 0:
            continue  # a file of invalid programs (a diagnostics test)
        for kernel, params in params_of(printed.stdout).items():
            key = "%s:%s" % (os.path.basename(path), kernel)
            if key in unrunnable:
                skipped.add(key)
                continue
            cmd = [jit_run, path, "--kernel", kernel, "--grid", "2", "--block", "4"]
            for name, ty in params:
                cmd += ["--arg", arg_for(name, ty)]
            for shared in (None, "4096"):
                full = cmd + (["--shared", shared] if shared else [])
                try:
                    r = subprocess.run(full, capture_output=True, text=True, timeout=30)
                except subprocess.TimeoutExpired:
                    r = subprocess.CompletedProcess(full, "hang", "", "timed out")
                if r.returncode == 1 and "declares dynamic shared memory" in r.stderr and not shared:
                    continue
                break
            if r.returncode == 0:
                ran += 1
            elif r.returncode == 1 and "error:" in r.stderr:
                errors += 1
            else:
                print("FAILED (status %s): %s\n%s" % (r.returncode, " ".join(full),
                                                       r.stderr[-2000:]))
                failures += 1
                if not keep_going:
                    return 1
    if failures:
        return 1
    if unrunnable - skipped:
        print("no such kernel to skip: " + ", ".join(sorted(unrunnable - skipped)))
        return 1
    print("run_all_kernels: %d kernels ran, %d stopped with an error message, %d skipped, "
          "no crash" % (ran, errors, len(skipped)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
