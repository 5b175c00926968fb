"""setup.py of the gridjit package: everything is in pyproject.toml except
bundling libgridjit.so, which needs code.

When a built library is found at build time -- $GRIDJIT_LIBRARY, else
$GRIDJIT_BUILD_DIR/lib, else the checkout's build/lib next to this file --
it is copied into the package (gridjit/libgridjit.so), where the installed
package finds it; the wheel is then tagged for this platform and any
Python 3 (py3-none-linux_x86_64: the package is Python code that loads the
library with ctypes, no extension module built for one interpreter).
Without one the package is pure Python and finds the library at run time
($GRIDJIT_LIBRARY, or the dynamic loader's search path).
"""

import os
import shutil

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

try:  # setuptools 70.1 and later have their own; before, the wheel package's
    from setuptools.command.bdist_wheel import bdist_wheel
except ImportError:
    try:
        from wheel.bdist_wheel import bdist_wheel
    except ImportError:  # no wheel to build: setuptools says so when asked for one
        bdist_wheel = None

HERE = os.path.dirname(os.path.abspath(__file__))


def built_library():
    env = os.environ.get("GRIDJIT_LIBRARY")
    if env:
        if not os.path.isfile(env):
            raise SystemExit("setup.py: GRIDJIT_LIBRARY=%s is not a file" % env)
        return env
    dirs = [os.environ.get("GRIDJIT_BUILD_DIR"), os.path.join(os.path.dirname(HERE), "build")]
    for d in dirs:
        if d and os.path.isfile(os.path.join(d, "lib", "libgridjit.so")):
            return os.path.join(d, "lib", "libgridjit.so")
    return None


LIBRARY = built_library()


class BuildPyWithLibrary(build_py):
    def run(self):
        super().run()
        if LIBRARY:
            target = os.path.join(self.build_lib, "gridjit", "libgridjit.so")
            self.announce("bundling %s" % LIBRARY, level=2)
            shutil.copyfile(LIBRARY, target)
            shutil.copymode(LIBRARY, target)


class BinaryDistribution(Distribution):
    """A wheel with the library in it is for this platform only."""

    def has_ext_modules(self):
        return LIBRARY is not None


commands = {"build_py": BuildPyWithLibrary}

if bdist_wheel is not None:

    class BdistWheelForAnyPython(bdist_wheel):
        """With the library inside, the wheel is for this platform (the
        library's) but for any Python 3: setuptools would tag it for this
        interpreter only (cp311-cp311), as if it held an extension module."""

        def get_tag(self):
            python, abi, platform = super().get_tag()
            if LIBRARY:
                return "py3", "none", platform
            return python, abi, platform

    commands["bdist_wheel"] = BdistWheelForAnyPython


setup(cmdclass=commands, distclass=BinaryDistribution)
