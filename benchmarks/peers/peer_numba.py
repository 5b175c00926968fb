"""Numba-CUDA: @cuda.jit(cache=True) functions, launched as kernel[grid,
block](...) on Numba device arrays."""

import numpy as np

# Workaround: numba-cuda 0.30.4 registers an overload of np.row_stack,
# which NumPy 2.5 removed (NVIDIA/numba-cuda#907; numba 0.67 has the fix,
# numba-cuda, in maintenance, does not), so `from numba import cuda` fails
# with NumPy 2.5. The alias it names is np.vstack. Remove this when the
# numba-cuda in use imports under the NumPy in use.
if not hasattr(np, "row_stack"):
    np.row_stack = np.vstack

from numba import cuda, float32  # noqa: E402

from kernels import A, BLOCK, grid


def version():
    import numba

    try:
        import numba_cuda

        return "numba %s, numba-cuda %s" % (numba.__version__, numba_cuda.__version__)
    except ImportError:
        return "numba %s" % numba.__version__


@cuda.jit(cache=True)
def saxpy(n, a, x, y):
    i = cuda.blockIdx.x * cuda.blockDim.x + cuda.threadIdx.x
    if i < n:
        y[i] = a * x[i] + y[i]


@cuda.jit(cache=True)
def reduce(n, x, result):
    partial = cuda.shared.array(256, float32)
    tid = cuda.threadIdx.x
    i = cuda.blockIdx.x * cuda.blockDim.x + tid
    v = float32(0.0)
    if i < n:
        v = x[i]
    partial[tid] = v
    cuda.syncthreads()
    stride = 128
    while stride > 0:
        if tid < stride:
            partial[tid] += partial[tid + stride]
        cuda.syncthreads()
        stride >>= 1
    if tid == 0:
        cuda.atomic.add(result, 0, partial[0])


@cuda.jit(cache=True)
def empty(n, a, x, y):
    pass


class Peer:
    def __init__(self, x, y):
        self.n = np.int32(len(x))
        self.a = np.float32(A)
        self.x = cuda.to_device(x)
        self.y = cuda.to_device(y)
        self.result = cuda.to_device(np.zeros(1, np.float32))

    def saxpy(self):
        saxpy[grid(self.n), BLOCK](self.n, self.a, self.x, self.y)

    def reduce(self):
        reduce[grid(self.n), BLOCK](self.n, self.x, self.result)

    def empty(self):
        empty[1, 1](self.n, self.a, self.x, self.y)

    def empty_launcher(self):
        launch = empty[1, 1]
        return lambda: launch(self.n, self.a, self.x, self.y)

    def synchronize(self):
        cuda.synchronize()

    def get(self, what):
        return getattr(self, what).copy_to_host()
