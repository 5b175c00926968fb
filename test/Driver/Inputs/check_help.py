"""Checks that what `jit-run --help` says after the options is true.

Usage: check_help.py JIT_RUN SOURCE_DIR SCRATCH_DIR

* Every buffer SPEC form --help lists (the lines under "A ptr<T> parameter
  takes") works: each, with N=3 and its other placeholders filled in, is
  given to a kernel as --arg and makes a buffer of 3 elements (`@NAME[+K]`
  as the last 3 of the kernel's other buffer parameter's 5).
* They are the forms docs/jit-run.md's ARGUMENTS table lists, in order.
* The EXAMPLE command runs as written from SOURCE_DIR (continuation lines
  joined, through the shell) and prints exactly what --help says it prints.

Prints one "ok: ..." line per check; on a failure, what differs (exit 1).
"""

import os
import re
import struct
import subprocess
import sys


def help_text(jit_run):
    return subprocess.run([jit_run, "--help"], capture_output=True, text=True, check=True).stdout


def spec_forms(text):
    lines = text.splitlines()
    start = next(i for i, l in enumerate(lines) if "A ptr<T> parameter takes" in l)
    forms = []
    for line in lines[start + 1:]:
        m = re.match(r"^    (\S+)\s{2,}\S", line)
        if not m:
            break
        forms.append(m.group(1))
    return forms


def doc_forms(doc):
    text = open(doc, encoding="utf-8").read()
    section = text.split("## ARGUMENTS", 1)[1].split("\n## ", 1)[0]
    return re.findall(r"^\| `([^`]+)` \|", section, re.M)


def write_npy(path, values):
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%d,), }" % len(values)
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    with open(path, "wb") as f:
        f.write(b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) + header.encode())
        f.write(struct.pack("<%df" % len(values), *values))


def instantiate(form, scratch):
    """The form with its placeholders filled in, for 3 elements."""
    if form.startswith("@NAME"):
        return "@other+2"
    if form.startswith("@"):
        path = os.path.join(scratch, "three.npy")
        write_npy(path, [1.0, 2.0, 3.0])
        return "@" + path
    if form.startswith("["):
        return "[1,2,3]"
    s = form.replace("[:SEED]", ":7").replace("N", "3").replace("V", "2.5")
    return s


def main():
    jit_run, src, scratch = sys.argv[1:4]
    text = help_text(jit_run)
    ok = True

    forms = spec_forms(text)
    kernel = os.path.join(scratch, "keep.kir")
    with open(kernel, "w") as f:
        f.write("kernel keep(y: ptr<f32>, other: ptr<f32>) {\n}\n")
    for form in forms:
        spec = instantiate(form, scratch)
        r = subprocess.run([jit_run, kernel, "--arg", "y=" + spec, "--arg", "other=iota:5",
                            "--print", "y:summary"],
                           capture_output=True, text=True)
        if r.returncode != 0 or not r.stdout.startswith("y: count 3,"):
            print("form %s (as %s) failed: status %d: %s%s" % (form, spec, r.returncode, r.stdout, r.stderr))
            ok = False
    if ok:
        print("ok: %d forms work: %s" % (len(forms), " ".join(forms)))

    documented = doc_forms(os.path.join(src, "docs", "jit-run.md"))
    if documented != forms:
        print("--help lists %s, docs/jit-run.md %s" % (forms, documented))
        ok = False
    else:
        print("ok: docs/jit-run.md lists the same forms")

    example = text.split("EXAMPLE (from the source tree):\n", 1)[1]
    command_part, rest = example.split("\nprints\n", 1)
    command = command_part.strip()
    shown = [l[2:] for l in rest.split("\n\n", 1)[0].splitlines()]
    path = os.path.dirname(os.path.abspath(jit_run)) + os.pathsep + os.environ.get("PATH", "")
    r = subprocess.run(["bash", "-c", command], cwd=src, capture_output=True, text=True,
                       env=dict(os.environ, PATH=path))
    if r.returncode != 0 or r.stdout.splitlines() != shown or r.stderr:
        print("the example printed (status %d):\n%s%s\ninstead of:\n%s" % (r.returncode, r.stdout, r.stderr, "\n".join(shown)))
        ok = False
    else:
        print("ok: the example prints what --help shows: " + " | ".join(shown))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
