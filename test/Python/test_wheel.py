# The wheel of docs/Python.md ("A wheel"), built as written, offline, in a
# copy of the checkout (Inputs/gjinstall.py): it holds libgridjit.so, is
# tagged for any Python 3 on this platform (py3-none-PLATFORM, not this
# interpreter's cp3XY), and installed into a fresh venv that sees Debian's
# packages it runs README.md's Python example and docs/Python.md's first,
# loading the library it brought.
#
# REQUIRES: python-numpy, debian-python
# Packaging does not change under the sanitizers; the sanitized runs skip
# it (about a minute each of zipping the larger sanitized library).
# UNSUPPORTED: sanitizer
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import glob
import os
import sys
import unittest
import zipfile

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjinstall  # noqa: E402

WHEEL = """/usr/bin/python3 -m pip wheel --no-build-isolation --no-deps -w ~/gridjit-dist ./python
/usr/bin/python3 -m venv --system-site-packages ~/.venvs/gridjit-wheel
~/.venvs/gridjit-wheel/bin/pip install ~/gridjit-dist/gridjit-*.whl
~/.venvs/gridjit-wheel/bin/python example.py"""


class WheelTest(unittest.TestCase):
    def test_the_wheel(self):
        gjinstall.shown_in_docs(self, WHEEL, "test_wheel.py")
        co = gjinstall.Checkout("checkout")
        co.run(WHEEL)
        wheels = glob.glob(os.path.join(co.home, "gridjit-dist", "*.whl"))
        self.assertEqual(len(wheels), 1, wheels)
        name = os.path.basename(wheels[0])
        self.assertRegex(name, r"^gridjit-\d+\.\d+\.\d+-py3-none-linux_[a-z0-9_]+\.whl$")
        with zipfile.ZipFile(wheels[0]) as z:
            self.assertIn("gridjit/libgridjit.so", z.namelist())
            self.assertEqual(z.getinfo("gridjit/libgridjit.so").file_size,
                             os.path.getsize(os.environ["GRIDJIT_LIBRARY"]))
        # README.md's example too, and from outside the checkout the
        # package loads the library the wheel brought.
        out = co.run("~/.venvs/gridjit-wheel/bin/python readme_example.py")
        self.assertTrue(out.strip(), "the README's example prints its result")
        site = glob.glob(os.path.join(co.home, ".venvs/gridjit-wheel/lib/python3*/site-packages"))
        self.assertEqual(len(site), 1, site)
        self.assertEqual(co.library_path("~/.venvs/gridjit-wheel/bin/python"),
                         os.path.join(site[0], "gridjit", "libgridjit.so"))


if __name__ == "__main__":
    unittest.main()
