"""Writes every C example of a Markdown page into a directory.

Usage: extract_examples.py PAGE.md OUTDIR

An example is a ```c block (with or without words after `c` in its info
string, such as `fake-cuda`) whose first line is `/* example: NAME.c */`; it
is written to OUTDIR/NAME.c and its name printed (test/CAPI/doc-examples.test).
"""

import os
import re
import sys

page, outdir = sys.argv[1], sys.argv[2]
text = open(page, encoding="utf-8").read()
count = 0
for block in re.findall(r"^```c(?:[ \t][^\n]*)?\n(.*?)^```", text, flags=re.S | re.M):
    m = re.match(r"/\* example: ([A-Za-z0-9_-]+\.c) \*/\n", block)
    if not m:
        continue
    with open(os.path.join(outdir, m.group(1)), "w", encoding="utf-8") as f:
        f.write(block)
    print(m.group(1))
    count += 1
if count == 0:
    sys.exit("no examples in " + page)
