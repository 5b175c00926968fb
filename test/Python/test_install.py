# The package installs with the system's pip, offline (no build isolation:
# the system's setuptools and wheel), bundling the library, and the
# installed copy works on its own: no source tree, no GRIDJIT_LIBRARY.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import shutil
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

SOURCE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "python")

USE = r"""
import numpy as np, gridjit, importlib.metadata, os
mod = gridjit.compile("kernel twice(n: i32, x: ptr<i32>) { let i: i32 = thread_idx.x; if i < n { x[i] *= 2; } }")
x = np.arange(10, dtype=np.int32)
mod.twice[1, 10](10, x)
assert (x == 2 * np.arange(10)).all(), x
print(gridjit.library_path)
print(importlib.metadata.version("gridjit"), gridjit.__version__)
"""


def have_pip():
    return subprocess.run([sys.executable, "-m", "pip", "--version"], capture_output=True).returncode == 0


@unittest.skipUnless(have_pip(), "no pip for %s (Debian: python3-pip)" % sys.executable)
class InstallTest(unittest.TestCase):
    def test_pip_install_bundles_the_library(self):
        work = gjtest.scratch_dir()
        # A copy of the package directory, so that the build (which
        # setuptools does in place) writes nothing into the source tree.
        src = os.path.join(work, "src")
        shutil.copytree(SOURCE, src, ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        target = os.path.join(work, "site")
        env = dict(os.environ, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
        p = subprocess.run(
            [sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps", "--target", target, src],
            env=env,
            capture_output=True,
            text=True,
        )
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        bundled = os.path.join(target, "gridjit", "libgridjit.so")
        self.assertTrue(os.path.isfile(bundled))
        # The installed package alone: nothing points at the build tree.
        p = subprocess.run(
            [sys.executable, "-c", USE],
            env=dict(os.environ, PYTHONPATH=target, GRIDJIT_LIBRARY="", GRIDJIT_BUILD_DIR=""),
            cwd=work,
            capture_output=True,
            text=True,
        )
        self.assertEqual(p.returncode, 0, p.stderr)
        path, versions = p.stdout.strip().splitlines()
        self.assertTrue(os.path.samefile(path, bundled))
        # pyproject.toml's version is the library's.
        dist_version, lib_version = versions.split()
        self.assertEqual(dist_version, lib_version)


if __name__ == "__main__":
    unittest.main()
