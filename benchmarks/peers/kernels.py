"""The three kernels every peer runs, and their launch shapes.

saxpy:  y[i] = a * x[i] + y[i] for i < n, one element per thread, blocks of
        256 threads (examples/saxpy.kir).
reduce: *result += x[0] + ... + x[n-1]: each block of 256 threads loads 256
        elements, sums them in a tree (shared memory, a barrier per step),
        and thread 0 adds the block's sum atomically (examples/reduce.kir).
empty:  four parameters (n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) and no
        body, launched on one block of one thread: the cost of a launch.
"""

BLOCK = 256
A = 2.0


def grid(n):
    """Blocks of BLOCK threads that cover n elements, a Python int (Numba-CUDA
    refuses NumPy integers as launch dimensions)."""
    return (int(n) + BLOCK - 1) // BLOCK


# KIR (gridjit), as in examples/saxpy.kir and examples/reduce.kir.
KIR_SAXPY = """
kernel saxpy(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) {
  let i: i32 = block_idx.x * block_dim.x + thread_idx.x;
  if i < n { y[i] = a * x[i] + y[i]; }
}
"""

KIR_REDUCE = """
const BLOCK: i32 = 256;

kernel reduce(n: i32, x: ptr<f32>, result: ptr<f32>) {
  shared partial: [f32; BLOCK];
  let tid: i32 = thread_idx.x;
  let i: i32 = block_idx.x * block_dim.x + tid;
  var v: f32 = 0.0;
  if i < n {
    v = x[i];
  }
  partial[tid] = v;
  sync_threads();
  var stride: i32 = BLOCK / 2;
  while stride > 0 {
    if tid < stride {
      partial[tid] += partial[tid + stride];
    }
    sync_threads();
    stride >>= 1;
  }
  if tid == 0 {
    atomic_add(result, partial[0]);
  }
}
"""

KIR_EMPTY = "kernel empty(n: i32, a: f32, x: ptr<f32>, y: ptr<f32>) { }\n"

# CUDA C++ (CuPy's RawKernel, compiled with NVRTC), the same kernels.
CU_SAXPY = r"""
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n)
    y[i] = a * x[i] + y[i];
}
"""

CU_REDUCE = r"""
extern "C" __global__ void reduce(int n, const float *x, float *result) {
  __shared__ float partial[256];
  int tid = threadIdx.x;
  int i = blockIdx.x * blockDim.x + tid;
  partial[tid] = i < n ? x[i] : 0.0f;
  __syncthreads();
  for (int stride = 256 / 2; stride > 0; stride >>= 1) {
    if (tid < stride)
      partial[tid] += partial[tid + stride];
    __syncthreads();
  }
  if (tid == 0)
    atomicAdd(result, partial[0]);
}
"""

CU_EMPTY = r"""
extern "C" __global__ void empty(int n, float a, float *x, float *y) {}
"""
