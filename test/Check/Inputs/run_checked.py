#!/usr/bin/env python3
"""Runs every kernel launch that the lit tests under the given directories
make with jit-run, with the same arguments and `--check` added
(test/Check/all-tests-checked.test): the kernels the test suite already
runs must be free of out-of-bounds accesses, races, uninitialised shared
memory and undefined operations, or be listed as known findings.

Usage: run_checked.py JIT_RUN SRC_ROOT DIR... [--skip DIR]... [--known FILE:KERNEL]...
                      [--jobs N]

A launch is taken from a RUN line (continuations joined) whose command
starts with `jit-run` and is expected to succeed: not after `not`, not
followed by `test $? -eq N` with N != 0, not an `--emit`, `--help` or
non-host (`--target`) run, not reading standard input. Its lit
substitutions (%s, %S, %t, %examples, ...) are replaced; a command that
names a file some earlier RUN line makes (%t...) is skipped. Each runs with
--check and must exit with status 0. A non-zero status other than 5 (the
checker's) is accepted only if the same command without --check exits with
it too (say, a file it cannot find). --known FILE:KERNEL names a launch
whose findings are known (the test's kernel has the bug on purpose, or
the finding is real and recorded in docs/Check.md): it must still be found
(status 5), so that the list stays true.
"""
import argparse
import concurrent.futures
import os
import re
import shlex
import subprocess
import sys
import tempfile


def run_lines(path):
    """The RUN commands of a file, continuation lines joined."""
    cmds, cur = [], None
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = re.search(r"RUN:(.*)$", line)
            if not m:
                continue
            text = m.group(1).strip()
            if cur is not None:
                cur += " " + text
            else:
                cur = text
            if cur.endswith("\\"):
                cur = cur[:-1]
                continue
            cmds.append(cur)
            cur = None
    return cmds


def launches(path, src_root, tmp):
    """(argv, kernel) for each jit-run launch of the file expected to succeed."""
    d = os.path.dirname(path)
    subst = [("%examples", os.path.join(src_root, "examples")),
             ("%docs", os.path.join(src_root, "docs")),
             ("%gridjit_src", src_root), ("%s", path), ("%S", d), ("%p", d)]
    out = []
    for cmd in run_lines(path):
        # Split into commands at ; && || and pipes, remembering what follows.
        parts = re.split(r"(\|\||&&|;|\|)", cmd)
        for i in range(0, len(parts), 2):
            seg = parts[i].strip()
            prev = parts[i - 1] if i else ""
            nxt = parts[i + 2].strip() if i + 2 < len(parts) else ""
            if not seg.startswith("jit-run ") or prev in ("||",):
                continue
            if i and prev == "|":
                continue  # reads a pipe
            m = re.match(r"test \$\? -eq (\d+)", nxt)
            if m and m.group(1) != "0":
                continue
            if "%t" in seg or "%T" in seg or "<" in seg or re.search(r"%\w", seg.replace("%s", "").replace("%S", "").replace("%examples", "").replace("%docs", "").replace("%gridjit_src", "").replace("%p", "")):
                continue
            for a, b in subst:
                seg = seg.replace(a, b)
            try:
                argv = shlex.split(seg)
            except ValueError:
                continue
            # Drop redirections.
            clean, skip_next = [], False
            for a in argv:
                if skip_next:
                    skip_next = False
                    continue
                if re.fullmatch(r"\d?>>?|&>", a):
                    skip_next = True
                    continue
                if re.fullmatch(r"\d?>>?\S+|\d>&\d|&>\S+", a):
                    continue
                clean.append(a)
            argv = clean[1:]
            if any(a.startswith(("--emit", "--help", "--target", "--version", "--list"))
                   or a == "-" for a in argv):
                continue
            if not any(a.endswith(".kir") for a in argv):
                continue
            kernel = ""
            for j, a in enumerate(argv):
                if a == "--kernel" and j + 1 < len(argv):
                    kernel = argv[j + 1]
                elif a.startswith("--kernel="):
                    kernel = a.split("=", 1)[1]
            out.append((argv, kernel))
    return out


def main():
    p = argparse.ArgumentParser(description="every jit-run launch of the lit tests, checked")
    p.add_argument("jit_run")
    p.add_argument("src_root")
    p.add_argument("dirs", nargs="+")
    p.add_argument("--skip", action="append", default=[], help="a directory left out")
    p.add_argument("--known", action="append", default=[], help="FILE:KERNEL with findings")
    p.add_argument("--jobs", type=int, default=2)
    o = p.parse_args()
    jit_run, src_root, args, jobs = o.jit_run, o.src_root, o.dirs, o.jobs
    skip, known = [os.path.realpath(d) for d in o.skip], set(o.known)
    files = []
    for d in args:
        for root, dirs, names in os.walk(d):
            dirs[:] = sorted(x for x in dirs if x not in ("Inputs", "Output"))
            if any(os.path.realpath(root).startswith(s) for s in skip):
                continue
            files += [os.path.join(root, n) for n in sorted(names)
                      if n.endswith((".kir", ".test"))]
    tmp = tempfile.mkdtemp(prefix="gridjit-checked-")
    work = []
    for path in files:
        for argv, kernel in launches(path, src_root, tmp):
            work.append((path, argv, kernel))

    def run(item):
        path, argv, kernel = item
        full = [jit_run] + argv + ["--check"]
        try:
            r = subprocess.run(full, capture_output=True, text=True, timeout=120)
            status = r.returncode
        except subprocess.TimeoutExpired:
            return item, "hang", "timed out"
        return item, status, r.stderr

    failures, ran, found, seen_known = 0, 0, 0, set()
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as ex:
        for (path, argv, kernel), status, err in ex.map(run, work):
            key = "%s:%s" % (os.path.basename(path), kernel)
            ran += 1
            if key in known:
                seen_known.add(key)
                if status != 5:
                    print("KNOWN FINDING NOT FOUND (status %s): %s" % (status, " ".join(argv)))
                    failures += 1
                found += 1
                continue
            if status == 0:
                continue
            if status != 5 and status != "hang":
                plain = subprocess.run([jit_run] + argv, capture_output=True, text=True,
                                       timeout=120)
                if plain.returncode == status:
                    continue
            print("FAILED (status %s, %s): jit-run %s --check\n%s" %
                  (status, os.path.relpath(path, src_root), " ".join(argv), err[-3000:]))
            failures += 1
    if known - seen_known:
        print("no such launch among the tests: " + ", ".join(sorted(known - seen_known)))
        failures += 1
    if failures:
        return 1
    print("run_checked: %d launches from %d files ran checked, %d known findings found, "
          "no other finding" % (ran, len(files), found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
