#!/usr/bin/env python3
"""Writes and reads NumPy .npy files with the standard library only, for the
jit-run tests (so that the format is checked against an independent
implementation of the specification, not against jit-run itself).

  npy.py write FILE DESCR SHAPE V0 V1 ...   e.g. write x.npy '<f4' 4 1 2 3 4
        SHAPE is 'N' or 'A,B' (C order); --version 2 writes format 2.0;
        --drop K removes K bytes from the end (a truncated file).
  npy.py read FILE       prints `descr shape: v0, v1, ...`
  npy.py raw FILE HEADER NBYTES   a format 1.0 file with the header text
        HEADER as given (padded with spaces and a newline) and NBYTES zero
        bytes of data: for headers a correct writer never makes.
"""
import ast
import struct
import sys

CODES = {"b1": "?", "i1": "b", "u1": "B", "i2": "h", "u2": "H", "i4": "i", "u4": "I",
         "i8": "q", "u8": "Q", "f2": "e", "f4": "f", "f8": "d"}


def write(args):
    version, drop = 1, 0
    if "--version" in args:
        i = args.index("--version")
        version = int(args[i + 1])
        del args[i:i + 2]
    if "--drop" in args:
        i = args.index("--drop")
        drop = int(args[i + 1])
        del args[i:i + 2]
    path, descr, shape = args[0], args[1], tuple(int(s) for s in args[2].split(","))
    values = args[3:]
    code = CODES[descr[1:]]
    conv = float if code in "efd" else int
    data = b"".join(struct.pack("<" + code, conv(v)) for v in values)
    header = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, repr(shape))
    size_len = 2 if version == 1 else 4
    pad = (64 - (6 + 2 + size_len + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    out = b"\x93NUMPY" + bytes([version, 0])
    out += struct.pack("<H" if version == 1 else "<I", len(header)) + header.encode("latin1")
    out += data
    with open(path, "wb") as f:
        f.write(out[:len(out) - drop] if drop else out)


def read(args):
    data = open(args[0], "rb").read()
    assert data[:6] == b"\x93NUMPY", "bad magic"
    major = data[6]
    if major == 1:
        (hlen,) = struct.unpack("<H", data[8:10])
        start = 10
    else:
        (hlen,) = struct.unpack("<I", data[8:12])
        start = 12
    assert (start + hlen) % 64 == 0, "header not padded to 64 bytes"
    header = ast.literal_eval(data[start:start + hlen].decode("latin1"))
    code = CODES[header["descr"][1:]]
    count = 1
    for d in header["shape"]:
        count *= d
    body = data[start + hlen:]
    size = struct.calcsize(code)
    assert len(body) == count * size, "size mismatch"
    values = [struct.unpack("<" + code, body[i * size:(i + 1) * size])[0] for i in range(count)]
    print("%s %s: %s" % (header["descr"], header["shape"], ", ".join(repr(v) for v in values)))


def raw(args):
    path, header, nbytes = args[0], args[1], int(args[2])
    pad = (64 - (6 + 2 + 2 + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    out = b"\x93NUMPY" + bytes([1, 0]) + struct.pack("<H", len(header)) + header.encode("latin1")
    with open(path, "wb") as f:
        f.write(out + bytes(nbytes))


if __name__ == "__main__":
    {"write": write, "read": read, "raw": raw}[sys.argv[1]](sys.argv[2:])
