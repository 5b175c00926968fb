#!/usr/bin/env python3
"""Fills the file system that holds FILE: writes FILE until the disk is full.

Usage: fill.py FILE
Prints "full" once a write fails with ENOSPC (and a further one-byte write
to another file fails too). Standard library only.
"""
import errno
import os
import sys


def main():
    path = sys.argv[1]
    with open(path, "wb", buffering=0) as f:
        chunk = b"\0" * 4096
        while True:
            try:
                f.write(chunk)
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
        # The last partial page, byte by byte.
        while True:
            try:
                f.write(b"\0")
            except OSError as e:
                if e.errno != errno.ENOSPC:
                    raise
                break
    try:
        with open(path + ".probe", "wb", buffering=0) as g:
            g.write(b"x")
        print("not full")
        return 1
    except OSError as e:
        if e.errno != errno.ENOSPC:
            raise
    os.remove(path + ".probe")
    print("full")
    return 0


if __name__ == "__main__":
    sys.exit(main())
