# Where the package finds libgridjit.so (docs/Python.md, "Where the library
# comes from"): $GRIDJIT_LIBRARY is the only candidate when set, and one
# that does not load is an ImportError naming it and why, never a reason
# to load another library (the dynamic loader's, a build tree's); a
# relative name is the file in the current directory, not one on the
# loader's path. Without it: $GRIDJIT_BUILD_DIR, the checkout's build
# trees (only for the package of a checkout, python/gridjit), the library
# bundled next to an installed package, the loader's path.
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
LIBRARY = os.path.abspath(os.environ["GRIDJIT_LIBRARY"])  # the build's (test/lit.cfg.py)
SHOW = "import gridjit; print(gridjit.library_path)"
HINT = ("(unset GRIDJIT_LIBRARY to search the usual places, or set it to a built libgridjit.so, e.g. "
        "build/lib/libgridjit.so)")


def run(package_dir, env, cwd=None):
    """`python -c SHOW` with the package of \\p package_dir, and of the
    environment only what \\p env sets of the library's variables."""
    full = dict(os.environ, PYTHONPATH=package_dir)
    for name in ("GRIDJIT_LIBRARY", "GRIDJIT_BUILD_DIR", "LD_LIBRARY_PATH"):
        full.pop(name, None)
    full.update(env)
    return subprocess.run([sys.executable, "-c", SHOW], env=full, cwd=cwd, capture_output=True, text=True)


class NamedLibraryTest(unittest.TestCase):
    """GRIDJIT_LIBRARY: that library, or an error."""

    def setUp(self):
        self.scratch = gjtest.scratch_dir()
        # Another libgridjit.so where the dynamic loader looks, and a build
        # tree: what the package fell back to before.
        self.others = {"LD_LIBRARY_PATH": os.path.dirname(LIBRARY),
                       "GRIDJIT_BUILD_DIR": os.path.dirname(os.path.dirname(LIBRARY))}

    def assertRefused(self, p, named, why):
        self.assertNotEqual(p.returncode, 0, p.stdout)
        last = p.stderr.strip().splitlines()[-1]
        self.assertEqual(last, "ImportError: gridjit: cannot load GRIDJIT_LIBRARY=%s: %s %s" % (named, why, HINT))

    def test_the_named_library(self):
        p = run(SOURCE, {"GRIDJIT_LIBRARY": LIBRARY})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), LIBRARY)

    def test_a_missing_file_loads_nothing_else(self):
        p = run(SOURCE, dict(self.others, GRIDJIT_LIBRARY="/nonexistent/libgridjit.so"))
        self.assertRefused(p, "/nonexistent/libgridjit.so", "no such file")

    def test_a_directory(self):
        p = run(SOURCE, dict(self.others, GRIDJIT_LIBRARY=self.scratch))
        self.assertRefused(p, self.scratch, "not a file")

    def test_a_file_that_is_no_library(self):
        bogus = os.path.join(self.scratch, "bogus", "libgridjit.so")
        os.makedirs(os.path.dirname(bogus), exist_ok=True)
        with open(bogus, "w") as f:
            f.write("not a shared library\n")
        p = run(SOURCE, dict(self.others, GRIDJIT_LIBRARY=bogus))
        self.assertNotEqual(p.returncode, 0, p.stdout)
        # Then dlopen's own reason (glibc: "PATH: invalid ELF header").
        last = p.stderr.strip().splitlines()[-1]
        self.assertTrue(last.startswith("ImportError: gridjit: cannot load GRIDJIT_LIBRARY=%s: %s: " % (bogus, bogus)),
                        last)
        self.assertTrue(last.endswith(HINT), last)

    def test_a_relative_name_is_the_file_here(self):
        # dlopen("libgridjit.so") would search the loader's path and find
        # the other library; the package loads ./libgridjit.so.
        here = os.path.join(self.scratch, "here")
        os.makedirs(here, exist_ok=True)
        with open(os.path.join(here, "libgridjit.so"), "w") as f:
            f.write("not a shared library\n")
        p = run(SOURCE, dict(self.others, GRIDJIT_LIBRARY="libgridjit.so"), cwd=here)
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("ImportError: gridjit: cannot load GRIDJIT_LIBRARY=libgridjit.so: %s/libgridjit.so: " % here,
                      p.stderr)
        # And a good one there is loaded from there.
        p = run(SOURCE, {"GRIDJIT_LIBRARY": os.path.basename(LIBRARY)}, cwd=os.path.dirname(LIBRARY))
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), LIBRARY)

    def test_empty_is_unset(self):
        p = run(SOURCE, {"GRIDJIT_LIBRARY": "", "GRIDJIT_BUILD_DIR": self.others["GRIDJIT_BUILD_DIR"]})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), LIBRARY)


class SearchTest(unittest.TestCase):
    """Without GRIDJIT_LIBRARY."""

    def setUp(self):
        # A checkout: python/ (the package and its pyproject.toml) and a
        # build tree, build/lib/libgridjit.so.
        self.root = os.path.join(gjtest.scratch_dir(), "checkout")
        shutil.rmtree(self.root, ignore_errors=True)
        shutil.copytree(SOURCE, os.path.join(self.root, "python"),
                        ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info"))
        self.built = os.path.join(self.root, "build", "lib", "libgridjit.so")
        os.makedirs(os.path.dirname(self.built))
        os.symlink(LIBRARY, self.built)

    def installed_copy(self, bundled):
        """The package installed into the checkout's site/ (pip install
        --target site), with the library bundled or not."""
        site = os.path.join(self.root, "site")
        shutil.copytree(os.path.join(self.root, "python", "gridjit"), os.path.join(site, "gridjit"))
        if bundled:
            shutil.copyfile(LIBRARY, os.path.join(site, "gridjit", "libgridjit.so"))
        return site

    def test_the_build_dir(self):
        build = os.path.dirname(os.path.dirname(LIBRARY))
        p = run(SOURCE, {"GRIDJIT_BUILD_DIR": build})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(os.path.samefile(p.stdout.strip(), LIBRARY))

    def test_the_checkouts_build_tree(self):
        p = run(os.path.join(self.root, "python"), {})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), self.built)

    def test_an_installed_package_loads_its_own_library(self):
        # Not the build tree next to its directory: that is no checkout of
        # the installed package (before, site/../build/lib was taken).
        site = self.installed_copy(bundled=True)
        p = run(site, {})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), os.path.join(site, "gridjit", "libgridjit.so"))

    def test_an_installed_package_without_a_library(self):
        site = self.installed_copy(bundled=False)
        p = run(site, {})
        self.assertNotEqual(p.returncode, 0, p.stdout)
        self.assertIn("ImportError: gridjit: cannot find libgridjit.so; looked for:\n  %s (next to the package)\n"
                      "  libgridjit.so (the dynamic loader's search path)\n"
                      % os.path.join(site, "gridjit", "libgridjit.so"), p.stderr)


if __name__ == "__main__":
    unittest.main()
