"""CuPy: RawKernel (CUDA C++ compiled by NVRTC), launched as
kernel((grid,), (block,), args) on CuPy arrays."""

import cupy as cp
import numpy as np

from kernels import A, BLOCK, CU_EMPTY, CU_REDUCE, CU_SAXPY, grid


def version():
    return "cupy %s" % cp.__version__


class Peer:
    def __init__(self, x, y):
        self.n = np.int32(len(x))
        self.a = np.float32(A)
        self.x = cp.asarray(x)
        self.y = cp.asarray(y)
        self.result = cp.zeros(1, cp.float32)
        # RawKernel compiles at its first call (and looks in CuPy's disk
        # cache, $CUPY_CACHE_DIR, first).
        self.k_saxpy = cp.RawKernel(CU_SAXPY, "saxpy")
        self.k_reduce = cp.RawKernel(CU_REDUCE, "reduce")
        self.k_empty = cp.RawKernel(CU_EMPTY, "empty")

    def saxpy(self):
        self.k_saxpy((int(grid(self.n)),), (BLOCK,), (self.n, self.a, self.x, self.y))

    def reduce(self):
        self.k_reduce((int(grid(self.n)),), (BLOCK,), (self.n, self.x, self.result))

    def empty(self):
        self.k_empty((1,), (1,), (self.n, self.a, self.x, self.y))

    def empty_launcher(self):
        k, args = self.k_empty, (self.n, self.a, self.x, self.y)
        return lambda: k((1,), (1,), args)

    def synchronize(self):
        cp.cuda.Device().synchronize()

    def get(self, what):
        return cp.asnumpy(getattr(self, what))
