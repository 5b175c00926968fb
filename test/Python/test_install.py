# The ways docs/Python.md ("Installing") gives to use the package on a
# fresh Debian 12, each run as written, offline, in a copy of the checkout
# (Inputs/gjinstall.py), with Debian's Python named explicitly
# (/usr/bin/python3: another python3 first on PATH lacks Debian's NumPy):
# from the checkout with PYTHONPATH; into a venv that sees Debian's
# packages (--system-site-packages; pip install into Debian's own Python
# is refused, PEP 668); into a directory (--target). Each runs
# docs/Python.md's first example, and the installed package loads the
# library bundled with it, not the build tree's. The wheel: test_wheel.py.
#
# REQUIRES: python-numpy, debian-python
# Packaging does not change under the sanitizers; the sanitized runs skip
# it (about a minute each of zipping the larger sanitized library).
# UNSUPPORTED: sanitizer
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import glob
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjinstall  # noqa: E402

FROM_CHECKOUT = "PYTHONPATH=python /usr/bin/python3 example.py"

VENV = """/usr/bin/python3 -m venv --system-site-packages ~/.venvs/gridjit
~/.venvs/gridjit/bin/pip install --no-build-isolation ./python
~/.venvs/gridjit/bin/python example.py"""

TARGET = """/usr/bin/python3 -m pip install --no-build-isolation --target ~/gridjit-pylib ./python
PYTHONPATH=~/gridjit-pylib /usr/bin/python3 example.py"""

# What Debian 12's pip says to an install into its own Python.
REFUSED = "/usr/bin/python3 -m pip install --no-build-isolation ./python"


class InstallTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.co = gjinstall.Checkout("checkout")

    def test_from_the_checkout(self):
        gjinstall.shown_in_docs(self, FROM_CHECKOUT, "test_install.py")
        self.co.run(FROM_CHECKOUT)
        path = self.co.run('PYTHONPATH=python /usr/bin/python3 -c "import gridjit; print(gridjit.library_path)"')
        self.assertEqual(path.strip(), os.path.join(self.co.root, "build", "lib", "libgridjit.so"))

    def test_a_venv_with_the_system_site_packages(self):
        gjinstall.shown_in_docs(self, VENV, "test_install.py")
        self.co.run(VENV)
        # Installed with the library: from elsewhere, the venv's package
        # loads its own copy.
        path = self.co.library_path("~/.venvs/gridjit/bin/python")
        site = glob.glob(os.path.join(self.co.home, ".venvs/gridjit/lib/python3*/site-packages"))
        self.assertEqual(len(site), 1, site)
        self.assertEqual(path, os.path.join(site[0], "gridjit", "libgridjit.so"))
        # pyproject.toml's version is the library's.
        versions = self.co.run(
            '~/.venvs/gridjit/bin/python -c "import gridjit, importlib.metadata; '
            'print(importlib.metadata.version(\'gridjit\'), gridjit.__version__)"'
        ).split()
        self.assertEqual(versions[0], versions[1])

    def test_a_target_directory(self):
        gjinstall.shown_in_docs(self, TARGET, "test_install.py")
        self.co.run(TARGET)
        # Its own library, although ~/gridjit-pylib is no checkout and a
        # build tree may be anywhere.
        pylib = os.path.join(self.co.home, "gridjit-pylib")
        self.assertEqual(self.co.library_path("/usr/bin/python3", pythonpath=pylib),
                         os.path.join(pylib, "gridjit", "libgridjit.so"))

    def test_debian_refuses_its_own_python(self):
        # Why the venv: Debian 12 marks its Python externally managed (PEP
        # 668), and pip refuses to install into it. Only tried where the
        # marker is, which makes pip refuse: never an install into the
        # machine's Python.
        stdlib = subprocess.run(["/usr/bin/python3", "-c", "import sysconfig; print(sysconfig.get_path('stdlib'))"],
                                capture_output=True, text=True, check=True).stdout.strip()
        if not os.path.exists(os.path.join(stdlib, "EXTERNALLY-MANAGED")):
            self.skipTest("/usr/bin/python3 is not marked externally managed (PEP 668)")
        p = subprocess.run(["bash", "-c", REFUSED], cwd=self.co.root, env=self.co.env, capture_output=True, text=True)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("externally-managed-environment", p.stdout + p.stderr)

if __name__ == "__main__":
    unittest.main()
