#!/usr/bin/env python3
#===- utils/check-format.py - Check (or fix) the C++ files' format -------===#
#
# Usage: check-format.py CLANG_FORMAT ROOT [--fix]
#
# Runs CLANG_FORMAT on every .cpp, .h and .cu file under ROOT's include/,
# lib/, tools/, unittests/, benchmarks/ and fuzz/ (or under ROOT itself when it has
# none of those), with the .clang-format of the repository. Without --fix,
# lists the files that differ from clang-format's output and exits 1 if
# there is any; with --fix, rewrites them in place.
#
#===----------------------------------------------------------------------===#
import os
import subprocess
import sys

SOURCE_DIRS = ["include", "lib", "tools", "unittests", "benchmarks", "fuzz"]
SUFFIXES = (".cpp", ".h", ".cu")


def sources(root):
    dirs = [os.path.join(root, d) for d in SOURCE_DIRS if os.path.isdir(os.path.join(root, d))]
    for top in dirs or [root]:
        for base, _, files in os.walk(top):
            for name in sorted(files):
                if name.endswith(SUFFIXES):
                    yield os.path.join(base, name)


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--fix"):
        sys.exit("usage: check-format.py CLANG_FORMAT ROOT [--fix]")
    clang_format, root = argv[1], argv[2]
    fix = len(argv) == 4
    bad = []
    files = sorted(sources(root))
    if not files:
        sys.exit(f"check-format: no C++ files under {root}")
    for path in files:
        with open(path, "rb") as f:
            text = f.read()
        formatted = subprocess.run([clang_format, "--style=file", f"--assume-filename={path}"],
                                   input=text, capture_output=True, check=True).stdout
        if formatted != text:
            bad.append(os.path.relpath(path, root))
            if fix:
                with open(path, "wb") as f:
                    f.write(formatted)
    verb = "reformatted" if fix else "not formatted as .clang-format says"
    for path in bad:
        print(f"{path}: {verb}")
    print(f"check-format: {len(files)} files, {len(bad)} {verb}")
    return 1 if bad and not fix else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
