"""The install tests' checkout (test_install.py, test_wheel.py): a copy of
python/ and a build/ that is the build under test, where docs/Python.md's
install commands run as written, offline.

The commands are run by bash from the copy's root, with HOME in the test's
scratch directory (so that ~/... is there), pip kept off the network and
away from the machine's pip configuration (PIP_NO_INDEX, PIP_CONFIG_FILE),
and nothing that would point the package at the build tree
(GRIDJIT_LIBRARY, GRIDJIT_BUILD_DIR, PYTHONPATH unset).
"""

import os
import re
import shutil
import subprocess

import gjtest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", ".."))
DOC = os.path.join(ROOT, "docs", "Python.md")
# test/lit.cfg.py points GRIDJIT_LIBRARY at the build's library.
BUILD = os.path.dirname(os.path.dirname(os.path.abspath(os.environ["GRIDJIT_LIBRARY"])))


def python_blocks(path):
    """The bodies of \\p path's fenced blocks whose info string is python."""
    text = open(path, encoding="utf-8").read()
    return [body for info, body in re.findall(r"^```([^\n]*)\n(.*?)^```", text, re.M | re.S)
            if info.split()[:1] == ["python"]]


class Checkout:
    """A checkout in \\p name under the scratch directory, holding
    example.py (docs/Python.md's first example) and readme_example.py
    (README.md's first Python example)."""

    def __init__(self, name):
        scratch = gjtest.scratch_dir()
        self.root = os.path.join(scratch, name)
        self.home = os.path.join(scratch, name + "-home")
        for d in (self.root, self.home):
            shutil.rmtree(d, ignore_errors=True)
        os.makedirs(self.home)
        shutil.copytree(os.path.join(ROOT, "python"), os.path.join(self.root, "python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        os.symlink(BUILD, os.path.join(self.root, "build"))
        for name, doc in (("example.py", DOC), ("readme_example.py", os.path.join(ROOT, "README.md"))):
            with open(os.path.join(self.root, name), "w") as f:
                f.write(python_blocks(doc)[0])
        self.env = {k: v for k, v in os.environ.items()
                    if not k.startswith("PIP_") and k not in ("GRIDJIT_LIBRARY", "GRIDJIT_BUILD_DIR", "PYTHONPATH")}
        self.env.update(HOME=self.home, PIP_NO_INDEX="1", PIP_CONFIG_FILE=os.devnull,
                        PIP_DISABLE_PIP_VERSION_CHECK="1", PIP_NO_CACHE_DIR="1")

    def run(self, commands):
        """Runs \\p commands (lines of bash) from the checkout's root;
        returns stdout, failing with the output when one fails."""
        p = subprocess.run(["bash", "-e", "-c", commands], cwd=self.root, env=self.env,
                           capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError("failed (%d):\n%s\n%s\n%s" % (p.returncode, commands, p.stdout, p.stderr))
        return p.stdout

    def library_path(self, python, pythonpath=None):
        """gridjit.library_path as \\p python (a path under the checkout or
        ~) sees it, from outside the checkout."""
        env = dict(self.env)
        if pythonpath:
            env["PYTHONPATH"] = pythonpath
        p = subprocess.run([python.replace("~", self.home, 1), "-c",
                            "import gridjit; print(gridjit.library_path)"],
                           cwd=self.home, env=env, capture_output=True, text=True)
        if p.returncode != 0:
            raise AssertionError(p.stderr)
        return p.stdout.strip()


def shown_in_docs(testcase, commands, test_file):
    """Fails \\p testcase unless docs/Python.md shows \\p commands as one
    block, verbatim, marked as run by test/Python/\\p test_file."""
    block = "```sh tested-by=test/Python/%s\n%s\n```" % (test_file, commands)
    testcase.assertIn(block, open(DOC, encoding="utf-8").read(), "docs/Python.md does not show this block")
