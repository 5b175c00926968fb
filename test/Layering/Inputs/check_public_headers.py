#!/usr/bin/env python3
"""Every header under include/gridjit/ is either public, and then included
by lib/LayerCheck/PublicHeaders.cpp (so that the check that the public API
names no LLVM IR type covers it), or one of the internal headers
docs/Architecture.md names ("Public and internal headers").

Usage: check_public_headers.py SRC_ROOT
Prints one line per header that is neither, and exits 1 if there is one.
"""

import os
import re
import sys

# The internal headers of include/gridjit/ (docs/Architecture.md): they
# expose LLVM IR types, for targets and their tests.
INTERNAL = {
    "gridjit/Lower/LoweringContext.h",
    "gridjit/Lower/LoweringRegistry.h",
    "gridjit/Lower/LoweringTarget.h",
    "gridjit/Target/CodegenTarget.h",
}


def main():
    src = sys.argv[1]
    inc = os.path.join(src, "include")
    with open(os.path.join(src, "lib", "LayerCheck", "PublicHeaders.cpp")) as f:
        included = set(re.findall(r'^#include "(gridjit/[^"]+)"', f.read(), re.M))
    problems = []
    headers = 0
    for d, _, files in os.walk(os.path.join(inc, "gridjit")):
        for name in files:
            if not name.endswith(".h"):
                continue
            h = os.path.relpath(os.path.join(d, name), inc)
            headers += 1
            if h in INTERNAL:
                if h in included:
                    problems.append("%s is internal but PublicHeaders.cpp includes it" % h)
            elif h not in included:
                problems.append("%s is public but PublicHeaders.cpp does not include it" % h)
    for h in sorted(INTERNAL):
        if not os.path.exists(os.path.join(inc, h)):
            problems.append("%s is listed as internal but does not exist" % h)
    for p in sorted(problems):
        print(p)
    print("%d headers checked, %d problems" % (headers, len(problems)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
