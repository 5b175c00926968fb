#!/usr/bin/env python3
"""Checks that `jit-run --help` and docs/jit-run.md name the same options.

Usage: check-help-doc.py JIT_RUN DOC.md
Exit 0 when both sets agree; otherwise prints the differences and exits 1.
"""
import re
import subprocess
import sys


def help_options(jit_run):
    out = subprocess.run([jit_run, "--help"], capture_output=True, text=True, check=True).stdout
    names = set()
    for line in out.splitlines():
        m = re.match(r"\s+(--?[A-Za-z][\w-]*)", line)
        if m:
            names.add(m.group(1))
    return names


def doc_options(doc):
    names = set()
    in_options = False
    for line in open(doc, encoding="utf-8"):
        if line.startswith("## "):
            in_options = line.strip() == "## OPTIONS"
            continue
        m = re.match(r"\|\s*`(--?[A-Za-z][\w-]*)", line)
        if in_options and m:
            names.add(m.group(1))
    return names


def main():
    jit_run, doc = sys.argv[1], sys.argv[2]
    in_help, in_doc = help_options(jit_run), doc_options(doc)
    if not in_help or not in_doc:
        print("no options found (help: %d, doc: %d)" % (len(in_help), len(in_doc)))
        return 1
    ok = True
    for name in sorted(in_help - in_doc):
        print("in --help but not documented: " + name)
        ok = False
    for name in sorted(in_doc - in_help):
        print("documented but not in --help: " + name)
        ok = False
    if ok:
        print("options agree: " + " ".join(sorted(in_help)))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
