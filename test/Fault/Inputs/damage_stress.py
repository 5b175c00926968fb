#!/usr/bin/env python3
"""Readers run one command over and over while a mutator damages entries.

Usage: damage_stress.py READERS RUNS CACHE_DIR EXPECTED -- COMMAND ARGS...

CACHE_DIR must already hold at least two entries (the command's own and
another kernel's); they are kept as the "good" copies the mutator puts back
or puts in the wrong place. READERS threads each run COMMAND RUNS times
(RUNS is multiplied by $GRIDJIT_FAULT_SCALE, default 1), every run under a
120 s bound; at the same time a mutator loops over the entries: deletes
them, truncates them in place or by replacement, flips a byte, empties
them, turns them into directories, FIFOs, symbolic links (to a FIFO, to
another entry), copies another key's valid entry over them, or restores a
good copy. Passes (exit 0, prints "N runs, all correct") when every run
exits 0 and prints exactly EXPECTED's bytes; a run that hangs, crashes,
fails or prints anything else is reported. Afterwards no temp or lock
file may be left in CACHE_DIR, and the good copies are put back. Standard library only.
"""
import os
import random
import re
import shutil
import stat
import subprocess
import sys
import threading
import time

ENTRY = re.compile(r"gridjit-[0-9a-f]{64}\.gjc")


def entries(d):
    """The regular files named like entries (never opens a FIFO)."""
    out = []
    for n in sorted(os.listdir(d)):
        p = os.path.join(d, n)
        if ENTRY.fullmatch(n) and stat.S_ISREG(os.lstat(p).st_mode):
            out.append(p)
    return out


def clear(path):
    if os.path.isdir(path) and not os.path.islink(path):
        shutil.rmtree(path, ignore_errors=True)
    else:
        try:
            os.remove(path)
        except FileNotFoundError:
            pass


def replace_with(path, data):
    tmp = path + ".mutator"  # not a name gridjit owns
    with open(tmp, "wb") as f:
        f.write(data)
    clear(path)
    os.rename(tmp, path)


def damage(path, kind, good, fifo, rng):
    data = good[path]
    others = [p for p in good if p != path]
    if kind == "delete":
        clear(path)
    elif kind == "truncate-in-place":
        # The same inode, shortened under a reader that may have it open.
        with open(path, "r+b") as f:
            f.truncate(rng.randrange(len(data)))
    elif kind == "truncate":
        replace_with(path, data[: rng.randrange(len(data))])
    elif kind == "flip":
        i = rng.randrange(len(data))
        replace_with(path, data[:i] + bytes([data[i] ^ (1 << rng.randrange(8))]) + data[i + 1:])
    elif kind == "zero":
        replace_with(path, b"")
    elif kind == "directory":
        clear(path)
        os.mkdir(path)
        with open(os.path.join(path, "inside"), "w") as f:
            f.write("a file inside\n")
    elif kind == "fifo":
        clear(path)
        os.mkfifo(path)
    elif kind == "fifo-link":
        clear(path)
        os.symlink(fifo, path)
    elif kind == "entry-link":
        clear(path)
        os.symlink(rng.choice(others), path)
    elif kind == "other-key":
        replace_with(path, good[rng.choice(others)])
    elif kind == "restore":
        replace_with(path, data)


KINDS = ["delete", "truncate-in-place", "truncate", "flip", "zero", "directory", "fifo",
         "fifo-link", "entry-link", "other-key", "restore"]


def main():
    readers, runs = int(sys.argv[1]), int(sys.argv[2])
    runs = max(1, int(runs * float(os.environ.get("GRIDJIT_FAULT_SCALE", "1"))))
    cache_dir, expected_file = sys.argv[3], sys.argv[4]
    assert sys.argv[5] == "--"
    cmd = sys.argv[6:]
    expected = open(expected_file, "rb").read()
    good = {p: open(p, "rb").read() for p in entries(cache_dir)}
    if len(good) < 2:
        print("need at least two entries in %s, found %d" % (cache_dir, len(good)))
        return 1
    fifo = os.path.join(os.path.dirname(os.path.abspath(cache_dir)), "stress-fifo")
    if not os.path.exists(fifo):
        os.mkfifo(fifo)

    failures = []
    lock = threading.Lock()
    done = threading.Event()
    kinds_done = {k: 0 for k in KINDS}

    def reader(seed):
        for i in range(runs):
            try:
                p = subprocess.run(cmd, capture_output=True, timeout=120)
            except subprocess.TimeoutExpired:
                with lock:
                    failures.append("reader %d run %d: hung (killed after 120 s)" % (seed, i))
                continue
            if p.returncode != 0 or p.stdout != expected:
                with lock:
                    failures.append("reader %d run %d: exit %d, %s output\n%s" % (
                        seed, i, p.returncode,
                        "right" if p.stdout == expected else "WRONG",
                        p.stderr.decode(errors="replace")))

    def mutator():
        rng = random.Random(1234)
        while not done.is_set():
            path = rng.choice(sorted(good))
            kind = rng.choice(KINDS)
            try:
                damage(path, kind, good, fifo, rng)
                kinds_done[kind] += 1
            except OSError:
                pass  # a reader's store raced with us: try something else
            time.sleep(rng.uniform(0, 0.004))

    m = threading.Thread(target=mutator)
    m.start()
    threads = [threading.Thread(target=reader, args=(r,)) for r in range(readers)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    done.set()
    m.join()

    # Put every good entry back, so that the directory can be used again.
    for p, data in good.items():
        replace_with(p, data)
    for f in failures:
        print(f)
    missing = [k for k, n in kinds_done.items() if n == 0]
    if missing:
        print("the mutator never managed: " + ", ".join(missing))
        failures.append("coverage")
    left = [n for n in os.listdir(cache_dir)
            if re.fullmatch(r"gridjit-[0-9a-f]{64}\.(tmp-.*|lock)", n)]
    for n in left:
        print("left in the cache directory: " + n)
    if failures or left:
        return 1
    print("%d runs, all correct" % (readers * runs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
