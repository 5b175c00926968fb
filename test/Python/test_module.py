# A Module's own attributes and its kernels (docs/Python.md, "Modules and
# kernels"): `mod.ptx` of a host module says why there is none instead of
# "no kernel 'ptx'", as does every attribute of the class that fails; a
# kernel named like an attribute is `mod["name"]`; and inspect_llvm() and
# inspect_asm() give the module's LLVM IR and assembly, compiled as the
# module was (its compiler's target, architecture and optimisation level).
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import platform
import sys
import unittest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402

import gridjit  # noqa: E402

# Kernels named as the module's attributes.
CLASHING = """
kernel ptx(out: ptr<i32>) { out[0] = 1; }
kernel target(out: ptr<i32>) { out[0] = 2; }
kernel load(out: ptr<i32>) { out[0] = 3; }
kernel saxpy(out: ptr<i32>) { out[0] = 4; }
"""


class AttributeTest(unittest.TestCase):
    def test_ptx_of_a_host_module(self):
        mod = gridjit.compile(gjtest.SAXPY, target="host")
        with self.assertRaises(AttributeError) as cm:
            mod.ptx
        self.assertEqual(
            str(cm.exception),
            "gridjit: Module.ptx: this module was compiled for host (%s), which has no PTX: compile with "
            'target="cuda" for PTX (mod.payload is the host\'s object file, mod.inspect_asm() its assembly)'
            % mod.arch,
        )
        self.assertFalse(hasattr(mod, "ptx"))
        self.assertEqual(getattr(mod, "ptx", None), None)
        # A name that is neither an attribute nor a kernel is still that.
        no_kernel = r"^gridjit: the module has no kernel 'sxpy' \(its kernels: saxpy\)$"
        with self.assertRaisesRegex(AttributeError, no_kernel):
            mod.sxpy

    def test_every_failing_attribute_raises_its_own_error(self):
        # Python hands an AttributeError raised inside a property to
        # __getattr__, which must not make it "no kernel".
        def broken(self):
            raise AttributeError("the property's own reason")

        gridjit.Module.broken = property(broken)
        try:
            mod = gridjit.compile(gjtest.SAXPY)
            with self.assertRaisesRegex(AttributeError, r"^the property's own reason$"):
                mod.broken
        finally:
            del gridjit.Module.broken

    def test_kernels_named_as_attributes(self):
        import numpy as np

        mod = gridjit.compile(CLASHING, target="host")
        self.assertEqual(mod.target, "host")
        with self.assertRaisesRegex(AttributeError, r"^gridjit: Module\.ptx: this module was compiled for host"):
            mod.ptx
        out = np.zeros(1, np.int32)
        mod["ptx"][1, 1](out)
        self.assertEqual(out[0], 1)
        mod["target"][1, 1](out)
        self.assertEqual(out[0], 2)
        # A method stays the method; a free name is the kernel, an attribute.
        self.assertEqual(mod.load.__name__, "load")
        mod["load"][1, 1](out)
        self.assertEqual(out[0], 3)
        self.assertIs(mod.saxpy, mod["saxpy"])
        self.assertEqual(sorted(n for n in dir(mod) if n in mod), ["load", "ptx", "saxpy", "target"])
        self.assertEqual(len(dir(mod)), len(set(dir(mod))))

    def test_ptx_of_a_cuda_module(self):
        mod = gridjit.compile(gjtest.SAXPY, target="cuda:sm_75")
        self.assertTrue(hasattr(mod, "ptx"))
        self.assertIn(".target sm_75", mod.ptx)


class InspectTest(unittest.TestCase):
    def test_host(self):
        mod = gridjit.compile(gjtest.SAXPY, target="host", name="saxpy.kir")
        ir = mod.inspect_llvm()
        self.assertIsInstance(ir, str)
        self.assertIn('source_filename = "saxpy.kir"', ir)
        self.assertIn("define ", ir)
        self.assertIn("@__gridjit_entry_saxpy(", ir)
        asm = mod.inspect_asm()
        self.assertIsInstance(asm, str)
        self.assertIn("__gridjit_entry_saxpy:", asm)
        # Kept: the same text, not compiled again.
        self.assertIs(mod.inspect_llvm(), ir)
        self.assertIs(mod.inspect_asm(), asm)
        # A module loaded for another runtime, and one of compile_async,
        # have the same texts.
        other = mod.load(gridjit.Runtime("host", threads=1))
        self.assertEqual(other.inspect_llvm(), ir)
        self.assertEqual(gridjit.compile_async(gjtest.SAXPY, name="saxpy.kir").result().inspect_asm(), asm)

    def test_as_the_module_was_compiled(self):
        # The compiler's optimisation level: at 0 the IR keeps its stack
        # slots, at 3 they are gone.
        o0 = gridjit.Compiler("host", opt_level=0, use_disk_cache=False).compile(gjtest.SAXPY)
        o3 = gridjit.Compiler("host", opt_level=3, use_disk_cache=False).compile(gjtest.SAXPY)
        self.assertIn("alloca", o0.inspect_llvm())
        self.assertNotIn("alloca", o3.inspect_llvm())
        if platform.machine() != "x86_64":
            return  # the CPUs below are x86-64's
        # The compiler's architecture: the baseline x86-64 has SSE (vectors
        # of 4 floats in xmm registers), skylake AVX2 (8 floats, ymm).
        for cpu, width, register in (("x86-64", 4, "%xmm"), ("skylake", 8, "%ymm")):
            with self.subTest(cpu=cpu):
                mod = gridjit.Compiler("host:" + cpu, use_disk_cache=False).compile(gjtest.SAXPY)
                self.assertEqual(mod.arch, cpu)
                self.assertIn("<%d x float>" % width, mod.inspect_llvm())
                self.assertNotIn("<%d x float>" % (12 - width), mod.inspect_llvm())
                self.assertIn(register, mod.inspect_asm())
        baseline = gridjit.Compiler("host:x86-64", use_disk_cache=False).compile(gjtest.SAXPY)
        self.assertNotIn("%ymm", baseline.inspect_asm())

    def test_cuda(self):
        mod = gridjit.compile(gjtest.SAXPY, target="cuda:sm_90")
        ir = mod.inspect_llvm()
        self.assertIn('target triple = "nvptx64-nvidia-cuda"', ir)
        self.assertIn("saxpy", ir)
        # The assembly of a CUDA module is its PTX, the payload itself.
        self.assertEqual(mod.inspect_asm(), mod.ptx)
        self.assertIn(".target sm_90", mod.inspect_asm())


if __name__ == "__main__":
    unittest.main()
