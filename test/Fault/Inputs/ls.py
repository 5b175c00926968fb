#!/usr/bin/env python3
"""Lists what a cache directory holds, by kind, one line each.

Usage: ls.py DIR
Prints "entries: N", "temps: N", "locks: N" and "other: N" (the names of
gridjit-<key>.gjc, gridjit-<key>.tmp-*, gridjit-<key>.lock, and anything
else). Standard library only.
"""
import os
import re
import sys


def main():
    names = os.listdir(sys.argv[1]) if os.path.isdir(sys.argv[1]) else []
    kinds = {"entries": 0, "temps": 0, "locks": 0, "other": 0}
    for n in names:
        if re.fullmatch(r"gridjit-[0-9a-f]{64}\.gjc", n):
            kinds["entries"] += 1
        elif re.fullmatch(r"gridjit-[0-9a-f]{64}\.tmp-.*", n):
            kinds["temps"] += 1
        elif re.fullmatch(r"gridjit-[0-9a-f]{64}\.lock", n):
            kinds["locks"] += 1
        else:
            kinds["other"] += 1
    for k, v in kinds.items():
        print("%s: %d" % (k, v))
    return 0


if __name__ == "__main__":
    sys.exit(main())
