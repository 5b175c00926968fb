#!/usr/bin/env python3
# ===- make-seeds.py - The fuzzers' seed corpora, made at build time ----=== #
#
# Part of gridjit (docs/Fuzzing.md). Usage: make-seeds.py SRC_ROOT OUT_DIR.
# Writes OUT_DIR/NAME/ for each fuzz target: every .kir under test/ and
# examples/ for fuzz-kir; small hand-made inputs in each target's format
# for the others; the files of fuzz/corpus/NAME/ when there are any.
# Deterministic (a fixed random seed), nothing downloaded.
#
# ===-------------------------------------------------------------------=== #

import os
import random
import shutil
import struct
import sys

src, out = sys.argv[1], sys.argv[2]
rng = random.Random(13)


def put(name, fname, data):
    d = os.path.join(out, name)
    os.makedirs(d, exist_ok=True)
    p = os.path.join(d, fname)
    if isinstance(data, str):
        data = data.encode()
    # Only rewrite what changed, so that the corpus keeps its timestamps.
    if os.path.exists(p) and open(p, "rb").read() == data:
        return
    with open(p, "wb") as f:
        f.write(data)


# fuzz-kir: every .kir of the tests and examples.
for top in ("test", "examples"):
    for dirpath, _, files in os.walk(os.path.join(src, top)):
        for f in sorted(files):
            if f.endswith(".kir"):
                rel = os.path.relpath(os.path.join(dirpath, f), src)
                put("kir", rel.replace(os.sep, "_"), open(os.path.join(dirpath, f), "rb").read())


# A cache entry's body (lib/Cache/CacheEntry.cpp), for the entry and reply
# fuzzers' "wrap with checksums" modes.
def s32(b):
    return struct.pack("<I", len(b)) + b


def body(kernels):
    out = s32(b"host") + s32(b"x86-64") + struct.pack("<Q", 4) + b"\x7fELF"
    out += struct.pack("<I", len(kernels))
    for name, params in kernels:
        out += s32(name) + struct.pack("<I", len(params))
        for pname, kind, scalar, aspace in params:
            out += s32(pname) + bytes([kind, scalar, aspace]) + struct.pack("<Q", 0)
            out += struct.pack("<II", 8, 8)
        out += bytes([0]) + struct.pack("<Q", 256) + bytes([1])
    return out


bodies = [
    body([]),
    body([(b"k", [(b"n", 1, 3, 0), (b"x", 2, 9, 0)])]),
    body([(b"a", []), (b"b", [(b"p", 2, 10, 0)])]),
]
for i, b in enumerate(bodies):
    put("cache-entry", "body-%d" % i, b"\x01" + b)
    put("cache-entry", "tagged-body-%d" % i, b"\x03" + b)
put("cache-entry", "raw-header", b"\x00GRIDJITC" + struct.pack("<II", 1, 96) + bytes(80))


# fuzz-npy: first byte = element type index (Bool I8 I16 I32 I64 U8 U16 U32
# U64 F32 F64), then a .npy file.
def npy(descr, shape, data, fortran=False, version=1):
    d = "{'descr': '%s', 'fortran_order': %s, 'shape': %s, }" % (
        descr, "True" if fortran else "False", shape)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(d) + 1) % 64) % 64
    h = (d + " " * pad + "\n").encode()
    lenb = struct.pack("<H", len(h)) if version == 1 else struct.pack("<I", len(h))
    return b"\x93NUMPY" + bytes([version, 0]) + lenb + h + data


put("npy", "f32-4", b"\x09" + npy("<f4", "(4,)", struct.pack("<4f", 1, 2, 3, 4)))
put("npy", "i32-2x2", b"\x03" + npy("<i4", "(2, 2)", struct.pack("<4i", 1, -2, 3, -4)))
put("npy", "f64-v2", b"\x0a" + npy("<f8", "(2,)", struct.pack("<2d", 0.5, -1), version=2))
put("npy", "bool-3", b"\x00" + npy("|b1", "(3,)", b"\x00\x01\x02"))
put("npy", "u8-scalar", b"\x05" + npy("|u1", "()", b"\x07"))
put("npy", "u64-empty", b"\x08" + npy("<u8", "(0,)", b""))

# fuzz-redis-reply: mode byte, then RESP bytes, a value, or a URL.
for i, r in enumerate([b"$5\r\nhello\r\n", b":123456\r\n", b"$-1\r\n", b"_\r\n",
                       b"*2\r\n$1\r\na\r\n:1\r\n", b"-ERR wrong\r\n", b"+OK\r\n",
                       b"$%d\r\n" % 8 + b"GRIDJITC\r\n"]):
    put("redis-reply", "resp-%d" % i, b"\x00" + r)
# Replies at and over the parser's bounds (FuzzRedisReply.cpp's limits).
for i, r in enumerate([b"$10000000000\r\n" + b"x" * 64, b"*200000000\r\n:1\r\n",
                       b"+" + b"A" * 100, b"*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n",
                       b"$2030\r\n" + b"y" * 2030 + b"\r\n", b"+OK\r\n:1\r\n$1\r\nz\r\n"]):
    put("redis-reply", "bounds-%d" % i, b"\x00" + r)
put("redis-reply", "value-short", b"\x01GRIDJITC")
for i, b in enumerate(bodies):
    put("redis-reply", "wrapped-%d" % i, b"\x02\x00" + b)
    put("redis-reply", "tagged-%d" % i, b"\x02\x01" + b)
for i, u in enumerate(["redis://127.0.0.1:6379/2", "redis://u:p@[::1]:7000",
                       "redis+unix://:secret@/tmp/redis.sock?db=3", "redis://host"]):
    put("redis-reply", "url-%d" % i, b"\x03" + u.encode())

# fuzz-capi and fuzz-kir-diff decode any bytes; fixed pseudo-random seeds.
for i in range(12):
    put("capi", "seed-%d" % i, bytes(rng.randrange(256) for _ in range(rng.randrange(16, 160))))
for i in range(12):
    put("kir-diff", "seed-%d" % i, bytes(rng.randrange(256) for _ in range(rng.randrange(64, 800))))

# Hand-written seeds kept in the source tree.
corpus = os.path.join(src, "fuzz", "corpus")
if os.path.isdir(corpus):
    for name in sorted(os.listdir(corpus)):
        for f in sorted(os.listdir(os.path.join(corpus, name))):
            put(name, "src-" + f, open(os.path.join(corpus, name, f), "rb").read())
