"""gridjit's Python package on CUDA: gridjit.compile(..., target="cuda"),
kernel[grid, block](...) on gridjit DeviceArrays."""

import numpy as np

import gridjit
from kernels import A, BLOCK, KIR_EMPTY, KIR_REDUCE, KIR_SAXPY, grid


def version():
    return "gridjit (%s)" % gridjit.library_path


class Peer:
    def __init__(self, x, y):
        self.rt = gridjit.runtime("cuda")
        self.n = np.int32(len(x))
        self.a = np.float32(A)
        self.x = gridjit.to_device(x, runtime=self.rt)
        self.y = gridjit.to_device(y, runtime=self.rt)
        self.result = gridjit.to_device(np.zeros(1, np.float32), runtime=self.rt)
        self.kernels = {}

    def _kernel(self, name, source):
        k = self.kernels.get(name)
        if k is None:
            k = self.kernels[name] = gridjit.compile(source, target="cuda")[name]
        return k

    def saxpy(self):
        self._kernel("saxpy", KIR_SAXPY)[grid(self.n), BLOCK](self.n, self.a, self.x, self.y)

    def reduce(self):
        self._kernel("reduce", KIR_REDUCE)[grid(self.n), BLOCK](self.n, self.x, self.result)

    def empty(self):
        self._kernel("empty", KIR_EMPTY)[1, 1](self.n, self.a, self.x, self.y)

    def empty_launcher(self):
        k = self._kernel("empty", KIR_EMPTY)
        return lambda: k[1, 1](self.n, self.a, self.x, self.y)

    def synchronize(self):
        self.rt.synchronize()

    def get(self, what):
        return getattr(self, what).copy_to_host()
