# The Python examples of README.md and docs/Python.md run as written (the
# host ones here; the CUDA DeviceArray one through the fake driver), and the
# compile error they show is the one gridjit gives.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache GRIDJIT_CUDA_DRIVER=%fake_cuda %gridjit_python %s

import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def python_blocks(doc, section):
    """The ```python blocks of the \\p section (a heading's text; None: the
    text before the first heading below the title) of \\p doc."""
    with open(os.path.join(ROOT, doc)) as f:
        lines = f.read().splitlines()
    blocks, current, fence, inside = [], None, None, section is None
    for line in lines:
        if fence is None and line.startswith("#"):
            title = line.lstrip("#").strip()
            if line.startswith("# "):  # the document's title
                continue
            inside = title == section
            continue
        if line.startswith("```"):
            if fence is None:
                fence = line[3:].strip()
                current = []
            else:
                if inside and fence == "python":
                    blocks.append("\n".join(current) + "\n")
                fence = None
            continue
        if fence is not None:
            current.append(line)
    return blocks


def run(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    return subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True)


class DocsTest(unittest.TestCase):
    def check_runs(self, code):
        p = run(code)
        self.assertEqual(p.returncode, 0, "this example failed:\n%s\n%s" % (code, p.stderr))
        return p.stdout

    def test_readme(self):
        (code,) = python_blocks("README.md", "From Python")
        out = self.check_runs(code)
        self.assertEqual(out.strip(), "[1. 3. 5. 7.]")

    def test_python_md_introduction(self):
        (code,) = python_blocks("docs/Python.md", None)
        self.check_runs(code)

    def test_compile_error_example(self):
        (code,) = python_blocks("docs/Python.md", "Compile errors")
        out = self.check_runs("import gridjit\n" + code)
        shown = [line[2:] for line in code.splitlines() if line.startswith("# ")]
        self.assertEqual(out.rstrip("\n").splitlines(), shown)

    def test_cuda_device_array_example(self):
        # The first example of the CUDA section, on the fake driver: it
        # compiles, copies and launches (the fake runs no kernel code).
        code = python_blocks("docs/Python.md", "CUDA")[0]
        self.check_runs("import numpy as np, gridjit\n" + code)


if __name__ == "__main__":
    unittest.main()
