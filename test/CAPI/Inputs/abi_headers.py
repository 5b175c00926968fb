#!/usr/bin/env python3
"""Writes two copies of include/gridjit-c/gridjit.h for test/CAPI/abi.test:

  OLD  without the fields and enumerators that API versions 2 and 3 added
       (each says "(API version 2.)" or "(API version 3.)" in its comment):
       the header a caller of version 1 was built with;
  NEW  with a field appended to every struct (test_newer_field): a header
       newer than the library.

Both are made from the real header each time, so they cannot drift from it;
every change must apply, or the script fails. Prints what it did.

Usage: abi_headers.py HEADER OLD NEW
"""

import re
import sys

STRUCTS = ["gj_compiler_options", "gj_kernel_info", "gj_param_info", "gj_runtime_options", "gj_arg",
           "gj_launch_config"]


def main(header, old_path, new_path):
    text = open(header).read()
    # A struct field (`type name;`) or an enumerator (`NAME = value,`).
    added = re.compile(r"\n  /\*\*(?:(?!\*/).)*\(API version [23]\.\) \*/\n  [^\n;]*?(\w+)(?:;| = \d+,)", re.S)
    removed = added.findall(text)
    old = added.sub("", text)
    if not removed or "(API version 2.)" in old or "(API version 3.)" in old:
        sys.exit("abi_headers.py: the fields of API versions 2 and 3 are not all where expected")
    print("old: without " + ", ".join(removed))
    new = text
    for s in STRUCTS:
        end = "\n} %s;" % s
        if new.count(end) != 1:
            sys.exit("abi_headers.py: no single end of struct %s" % s)
        new = new.replace(end, "\n  uint64_t test_newer_field;" + end)
    print("new: test_newer_field in " + ", ".join(STRUCTS))
    open(old_path, "w").write(old)
    open(new_path, "w").write(new)


if __name__ == "__main__":
    main(*sys.argv[1:])
