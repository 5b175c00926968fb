#!/usr/bin/env python3
"""Reads `ldd` output for the files of an unpacked GPU bundle and checks
that every library is found, and is either inside the bundle or one of the
system's C and C++ runtime libraries (glibc, libstdc++, libgcc_s).
Prints `closure ok: N bundled, N system` or each offending line and exits 1.
"""
import re
import sys

SYSTEM = re.compile(r"^(libc|libm|libdl|libpthread|librt|libstdc\+\+|libgcc_s)\.so\.\d+$")
bundled = system = 0
bad = []
for line in open(sys.argv[1]):
    line = line.strip()
    if "not found" in line:
        bad.append(line)
    m = re.match(r"^(\S+) => (\S+)", line)
    if not m:
        continue
    if "/gridjit-gpu-bundle/" in m.group(2):
        bundled += 1
    elif SYSTEM.match(m.group(1)):
        system += 1
    else:
        bad.append(line)
if bad:
    print("unexpected dependencies:\n  " + "\n  ".join(bad))
    sys.exit(1)
print("closure ok: %d bundled, %d system" % (bundled, system))
