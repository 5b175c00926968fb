#!/usr/bin/env python3
"""Damages every gridjit cache entry in a directory, one way.

Usage: damage.py DIR KIND
KIND: truncate | flip | zero | version | directory | foreign | fifo | fifo-link
(fifo-link: a symbolic link to a FIFO made next to DIR)
Prints how many entries it damaged. Standard library only.
"""
import os
import re
import struct
import sys


def damage(path, kind):
    data = open(path, "rb").read()
    if kind == "truncate":
        data = data[: len(data) // 2]
    elif kind == "flip":
        i = len(data) // 2
        data = data[:i] + bytes([data[i] ^ 0x20]) + data[i + 1:]
    elif kind == "zero":
        data = b""
    elif kind == "version":
        data = data[:8] + struct.pack("<I", struct.unpack("<I", data[8:12])[0] + 7) + data[12:]
    elif kind == "directory":
        os.remove(path)
        os.mkdir(path)
        open(os.path.join(path, "inside"), "w").write("a file inside\n")
        return
    elif kind == "fifo":
        os.remove(path)
        os.mkfifo(path)
        return
    elif kind == "fifo-link":
        target = os.path.join(os.path.dirname(os.path.abspath(os.path.dirname(path))),
                              "fifo-" + os.path.basename(path))
        if not os.path.exists(target):
            os.mkfifo(target)
        os.remove(path)
        os.symlink(target, path)
        return
    elif kind == "foreign":
        data = b"#!/bin/sh\necho not a gridjit cache entry\n"
    else:
        raise SystemExit("unknown kind " + kind)
    open(path, "wb").write(data)


def main():
    directory, kind = sys.argv[1], sys.argv[2]
    n = 0
    for name in sorted(os.listdir(directory)):
        if re.fullmatch(r"gridjit-[0-9a-f]{64}\.gjc", name):
            damage(os.path.join(directory, name), kind)
            n += 1
    print("damaged %d" % n)
    return 0


if __name__ == "__main__":
    sys.exit(main())
