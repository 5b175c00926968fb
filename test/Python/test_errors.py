# Errors in their right class (docs/Python.md, "Errors"): the package's
# exception classes against the table of error kinds
# (include/gridjit/Support/ErrorKinds.def: each row's class, its bases, its
# C status and that status's value), then one error of every kind raised
# through the package, each of its class and status: on the host, and the
# CUDA driver's kinds on the test suite's fake driver. Also: a compiler's
# warnings, and Runtime(catch_faults=False) leaving SIGSEGV's handler as it
# was (read with libc's sigaction, in a fresh process).
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && mkdir -p %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache \
# RUN:   GRIDJIT_FAKE_CUDA=%fake_cuda %gridjit_python %s

import ctypes
import os
import pathlib
import re
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402
from gridjit import _capi, _errors  # noqa: E402

ROOT = pathlib.Path(__file__).resolve().parents[2]
TABLE = ROOT / "include" / "gridjit" / "Support" / "ErrorKinds.def"
HEADER = ROOT / "include" / "gridjit-c" / "gridjit.h"

# Kernels that fail in each way a host runtime can (shared with the C and
# C++ tests of the same).
KINDS = ROOT / "test" / "CAPI" / "Inputs" / "kinds.kir"


def table():
    """The rows of ErrorKinds.def: (name, C status, Python class, bases)."""
    text = TABLE.read_text()
    rows = re.findall(r'^GRIDJIT_ERROR_KIND\((\w+), (\w+), "(\w+)", "([\w, ]+)", (\d+),', text, re.M)
    assert len(rows) >= 12, rows
    return rows


class TableTest(unittest.TestCase):
    def test_every_kind_has_its_class_and_status(self):
        header = HEADER.read_text()
        seen = set()
        for name, status, cls_name, bases, _ in table():
            with self.subTest(kind=name):
                cls = getattr(gridjit, cls_name)
                self.assertIs(cls, getattr(_errors, cls_name))
                self.assertEqual([b.__name__ for b in cls.__bases__], [b.strip() for b in bases.split(",")])
                self.assertIs(_errors._BY_STATUS_NAME[status], cls)
                value = getattr(_capi, status)
                self.assertEqual(_capi.gj_status_name(value).decode(), status)
                self.assertIn("  %s = %d," % (status, value), header)
                seen.add(status)
        # The two statuses that are no kind of error.
        self.assertEqual(set(_errors._BY_STATUS_NAME) - seen, {"GJ_ERROR_LAUNCH", "GJ_ERROR_NOT_READY"})
        self.assertEqual(_capi.gj_status_name(_capi.GJ_ERROR_CHECK + 1), b"GJ_STATUS_UNKNOWN")

    def test_every_class_is_exported(self):
        for cls in _errors.ALL:
            self.assertIs(getattr(gridjit, cls.__name__), cls)
            self.assertIn(cls.__name__, gridjit.__all__)
            self.assertEqual(cls.__module__, "gridjit")


class KindsTest(unittest.TestCase):
    def check(self, cls, status, pattern, fn, *args, **kwargs):
        with self.assertRaisesRegex(cls, pattern) as cm:
            fn(*args, **kwargs)
        self.assertIs(type(cm.exception), cls)
        self.assertEqual(cm.exception.status, status)
        return cm.exception

    def test_on_the_host(self):
        mod = gridjit.compile(KINDS.read_text(), name="kinds.kir")
        out = np.zeros(8, np.int32)
        self.check(gridjit.InvalidArgumentError, None, "opt_level", gridjit.Compiler, "host", opt_level=9)
        self.check(gridjit.InvalidArgumentError, "GJ_ERROR_INVALID_ARGUMENT", "threads 5000 is more than",
                   gridjit.Runtime, "host", threads=5000)
        self.check(gridjit.CompileError, "GJ_ERROR_COMPILE", r"^bad.kir:1:11: error:", gridjit.compile,
                   "kernel k( {", "host", name="bad.kir")
        self.check(gridjit.NotFoundError, "GJ_ERROR_NOT_FOUND", "the compiler has no target 'nvptx'",
                   gridjit.Compiler("host").compile, gjtest.SAXPY, "cuda")
        self.check(gridjit.ArgumentError, "GJ_ERROR_ARGUMENT",
                   r"^kernel 'halfif': argument 1 \('out: ptr<i32>'\) must point to i32", mod.halfif[1, 8],
                   np.zeros(8, np.float32))
        self.check(gridjit.ConfigurationError, "GJ_ERROR_CONFIGURATION",
                   r"^kernel 'halfif' launched with grid \(1, 1, 1\) and block \(2048, 1, 1\)", mod.halfif[1, 2048],
                   out)
        e = self.check(gridjit.DivergenceError, "GJ_ERROR_DIVERGENCE",
                       r"^kinds.kir:9:5: error: divergent sync_threads\(\) in kernel 'halfif'", mod.halfif[1, 8], out)
        self.assertIn("    sync_threads();\n    ^", str(e))
        self.check(gridjit.KernelFaultError, "GJ_ERROR_FAULT", r"^kernel 'far' accessed memory outside its buffers",
                   mod.far[1, 1], 1000000000, np.zeros(4, np.float32))
        # And the module goes on.
        mod.halfif[1, 3](out)
        self.assertEqual(list(out[:3]), [0, 1, 2])

    def test_memory_that_cannot_be_had(self):
        # In a process of its own, where a sanitizer (if the build has one)
        # lets an allocation too large fail instead of reporting it.
        asan = os.environ.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1"
        out = gjtest.run_python(
            "import gridjit\ntry:\n    gridjit.device_array(1 << 60, 'f32')\nexcept gridjit.Error as e:\n"
            "    print(type(e).__name__, e.status, e)\n",
            env={"ASAN_OPTIONS": asan},
        ).stdout
        self.assertEqual(
            out.strip(), "Error GJ_ERROR_FAILED gridjit: cannot allocate a device buffer of %d bytes" % (4 << 60)
        )

    def test_files(self):
        scratch = gjtest.scratch_dir()
        os.environ["GRIDJIT_REMOTE_CACHE"] = "redis://127.0.0.1:1"
        os.environ["GRIDJIT_REMOTE_CACHE_SECRET_FILE"] = os.path.join(scratch, "none", "secret")
        try:
            self.check(gridjit.FileSystemError, "GJ_ERROR_IO", "cannot read the remote cache secret file",
                       gridjit.Compiler, "host")
        finally:
            del os.environ["GRIDJIT_REMOTE_CACHE"], os.environ["GRIDJIT_REMOTE_CACHE_SECRET_FILE"]

    def test_the_cuda_drivers_kinds(self):
        # Each in a process of its own, where the fake driver is made to
        # fail a call (it reads its configuration when it starts).
        fake = os.environ["GRIDJIT_FAKE_CUDA"]
        code = (
            "import gridjit, sys\nsys.path.insert(0, %r)\nimport gjtest\n"
            "rt = gridjit.Runtime('cuda')\n"
            "try:\n"
            "    x = gridjit.device_array(4, 'f32', runtime=rt)\n"
            "    gridjit.compile(gjtest.SAXPY, target='cuda', runtime=rt).saxpy[1, 4](4, 1.0, x, x)\n"
            "    rt.synchronize()\n"
            "except gridjit.Error as e:\n"
            "    print(type(e).__name__, e.status)\n" % os.path.join(os.path.dirname(__file__), "Inputs")
        )
        for fail, want in [
            ("cuMemAlloc:2", "DriverError GJ_ERROR_DRIVER"),
            ("cuLaunchKernel:700", "KernelFaultError GJ_ERROR_FAULT"),
            ("cuLaunchKernel:702", "KernelTimeoutError GJ_ERROR_TIMEOUT"),
            ("cuLaunchKernel:701", "ConfigurationError GJ_ERROR_CONFIGURATION"),
            ("cuCtxSynchronize:719", "KernelFaultError GJ_ERROR_FAULT"),
        ]:
            with self.subTest(fail=fail):
                out = gjtest.run_python(
                    code, env={"GRIDJIT_CUDA_DRIVER": fake, "GRIDJIT_FAKE_CUDA_DEVICES": "1",
                               "GRIDJIT_FAKE_CUDA_FAIL": fail},
                ).stdout
                self.assertEqual(out.strip(), want)
        out = gjtest.run_python(
            "import gridjit\ntry:\n    gridjit.Runtime('cuda')\nexcept gridjit.Error as e:\n"
            "    print(type(e).__name__, e.status)\n",
            env={"GRIDJIT_CUDA_DRIVER": fake, "GRIDJIT_FAKE_CUDA_DEVICES": "0"},
        ).stdout
        self.assertEqual(out.strip(), "NoDeviceError GJ_ERROR_NO_DEVICE")


class NoDeviceTest(unittest.TestCase):
    def test_no_device_speaks_of_gridjit(self):
        # Every way of starting the CUDA runtime says the same, in gridjit's
        # words (no C function's name: it was "gj_runtime_create: no CUDA
        # device: ..."), and what works without a GPU.
        code = (
            "import gridjit\n"
            "for start in (lambda: gridjit.Runtime('cuda'), lambda: gridjit.runtime('cuda'),\n"
            "              lambda: gridjit.device_array(4, 'f32', target='cuda')):\n"
            "    try:\n"
            "        start()\n"
            "    except gridjit.NoDeviceError as e:\n"
            "        print(e.status, e)\n"
        )
        for env, why in [
            ({"GRIDJIT_CUDA_DRIVER": os.environ["GRIDJIT_FAKE_CUDA"], "GRIDJIT_FAKE_CUDA_DEVICES": "0"}, "the driver reports none"),
            ({"GRIDJIT_CUDA_DRIVER": "/nonexistent/libcuda.so.1"}, "/nonexistent/libcuda.so.1 not found"),
        ]:
            with self.subTest(why=why):
                out = gjtest.run_python(code, env=env).stdout
                self.assertEqual(
                    out.splitlines(),
                    ["GJ_ERROR_NO_DEVICE gridjit: no CUDA device: %s. %s" % (why, gjtest.NO_DEVICE_HINT)] * 3,
                )


class WarningsTest(unittest.TestCase):
    def test_a_compiler_keeps_its_warnings(self):
        scratch = gjtest.scratch_dir()
        blocker = os.path.join(scratch, "a-file")
        open(blocker, "w").close()
        good = gridjit.Compiler("host", cache_dir=os.path.join(scratch, "cache-ok"))
        good.compile(gjtest.SAXPY)
        self.assertEqual(good.warnings, ())
        bad = gridjit.Compiler("host", cache_dir=os.path.join(blocker, "cache"))
        bad.compile(gjtest.SAXPY)  # works, caching in memory only
        self.assertEqual(len(bad.warnings), 1)
        self.assertRegex(bad.warnings[0], r"^cache directory '.*a-file/cache' is not usable .*cached in memory only$")


SIGACTION = """
import ctypes, sys
sys.path.insert(0, %r)
import gjtest, gridjit, numpy as np

def segv_handler():
    # libc's sigaction sees handlers installed by C code too (Python's
    # signal.getsignal does not): the first field of struct sigaction.
    libc = ctypes.CDLL(None)
    buf = ctypes.create_string_buffer(512)
    assert libc.sigaction(11, None, buf) == 0
    return ctypes.c_void_p.from_buffer(buf).value

mod = gridjit.compile(gjtest.SAXPY)
for catch in (False, True):
    before = segv_handler()
    rt = gridjit.Runtime("host", catch_faults=catch)
    x = np.ones(4, np.float32)
    mod.load(rt).saxpy[1, 4](4, 2.0, x, x)
    assert list(x) == [3.0] * 4
    print("catch_faults=%%s: SIGSEGV handler %%s" %% (catch, "unchanged" if segv_handler() == before else "changed"))
""" % os.path.join(os.path.dirname(__file__), "Inputs")


class CatchFaultsTest(unittest.TestCase):
    def test_a_runtime_without_catch_faults_installs_no_handler(self):
        out = gjtest.run_python(SIGACTION).stdout
        self.assertEqual(
            out.splitlines(), ["catch_faults=False: SIGSEGV handler unchanged", "catch_faults=True: SIGSEGV handler changed"]
        )
        self.assertTrue(gridjit.Runtime("host").catch_faults)
        self.assertFalse(gridjit.Runtime("host", catch_faults=False).catch_faults)


if __name__ == "__main__":
    unittest.main()
