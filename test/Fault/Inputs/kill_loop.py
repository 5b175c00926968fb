#!/usr/bin/env python3
"""Kills a compiling jit-run at random points, then checks the next run.

Usage: kill_loop.py KILLS CACHE_DIR EXPECTED -- COMMAND ARGS...

KILLS (times $GRIDJIT_FAULT_SCALE, default 1) times: remove the entries of
CACHE_DIR (so the command compiles, takes the key's lock and stores),
start COMMAND, SIGKILL it after a random delay within the time a whole
run takes, then run COMMAND again with --stats (bounded by 120 s): it must
exit 0, print exactly EXPECTED's bytes and report 0 bad entries (a killed
writer never leaves a broken entry, and its lock never blocks). Prints
"K kills, every next run correct" and how many kills left a lock or temp
file behind. Standard library only.
"""
import os
import random
import re
import subprocess
import sys
import time

ENTRY = re.compile(r"gridjit-[0-9a-f]{64}\.gjc")


def main():
    kills = max(1, int(int(sys.argv[1]) * float(os.environ.get("GRIDJIT_FAULT_SCALE", "1"))))
    cache_dir, expected = sys.argv[2], open(sys.argv[3], "rb").read()
    assert sys.argv[4] == "--"
    cmd = sys.argv[5:]
    os.makedirs(cache_dir, exist_ok=True)

    def clear_entries():
        for n in os.listdir(cache_dir):
            if ENTRY.fullmatch(n):
                os.remove(os.path.join(cache_dir, n))

    clear_entries()
    start = time.monotonic()
    subprocess.run(cmd, capture_output=True, timeout=120, check=True)
    whole = time.monotonic() - start
    rng = random.Random(4321)
    failures, leftovers = [], 0
    for k in range(kills):
        clear_entries()
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rng.uniform(0, whole))
        p.kill()
        p.wait()
        if any(".tmp-" in n or n.endswith(".lock") for n in os.listdir(cache_dir)):
            leftovers += 1
        try:
            q = subprocess.run(cmd + ["--stats"], capture_output=True, timeout=120)
        except subprocess.TimeoutExpired:
            failures.append("kill %d: the next run hung" % k)
            continue
        err = q.stderr.decode(errors="replace")
        if q.returncode != 0 or q.stdout != expected or " 0 bad entries" not in err:
            failures.append("kill %d: next run exit %d, %s output\n%s" % (
                k, q.returncode, "right" if q.stdout == expected else "WRONG", err))
    for f in failures:
        print(f)
    if failures:
        return 1
    print("%d kills, every next run correct (%d left a lock or temp file)" % (kills, leftovers))
    return 0


if __name__ == "__main__":
    sys.exit(main())
