# Device arrays of the host runtime lie between guard regions
# (docs/Runtime.md, "Device buffers between guard pages"): a kernel that
# writes just past one raises the kernel-fault error, and the interpreter,
# the runtime, the array's neighbours and the heap go on as before. The
# padding to the next 64 bytes is the array's own and does not fault.
#
# REQUIRES: python-numpy
# RUN: rm -rf %t && env GJ_TEST_TMP=%t GRIDJIT_CACHE_DIR=%t/cache %gridjit_python %s

import os
import sys
import unittest

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "Inputs"))
import gjtest  # noqa: E402,F401

import gridjit  # noqa: E402

POKE = "kernel poke(n: i32, buf: ptr<f32>) { buf[n] = 7.0; }"


class BufferGuards(unittest.TestCase):
    def test_write_past_a_device_array_is_an_error_and_the_process_goes_on(self):
        rt = gridjit.Runtime("host", threads=2)
        mod = gridjit.compile(POKE, "host", name="poke.kir", runtime=rt)
        ones = np.ones(100, np.float32)
        twos = np.full(100, 2.0, np.float32)
        a, b, c = rt.to_device(ones), rt.to_device(twos), rt.to_device(ones)
        # 100 floats are 400 bytes, 448 with the padding: elements 100 to
        # 111 are the array's own; element 112 is the guard's first.
        mod.poke[1, 1](111, b)
        for n in (112, 112 + 1000, -1200):
            with self.assertRaisesRegex(
                gridjit.Error, r"kernel 'poke' accessed memory outside its buffers \(SIGSEGV at address 0x[0-9a-f]+, in block \(0, 0, 0\)\)"
            ):
                mod.poke[1, 1](n, b)
        np.testing.assert_array_equal(a.copy_to_host(), ones)
        np.testing.assert_array_equal(b.copy_to_host(), twos)
        np.testing.assert_array_equal(c.copy_to_host(), ones)
        # The heap and the runtime are intact: allocate, free, launch.
        junk = [bytearray(i * 37 + 1) for i in range(2000)]
        del junk
        d = rt.to_device(np.zeros(16, np.float32))
        mod.poke[1, 1](15, d)
        self.assertEqual(d.copy_to_host()[15], 7.0)


if __name__ == "__main__":
    unittest.main()
