// The CUDA C++ equivalent of examples/grid_sync.kir (two_phase), with
// cooperative groups' grid.sync(), for benchmarks/CudaBench.cpp. Compiled
// there with `nvcc -ptx -arch=sm_XY` when nvcc is installed.
#include <cooperative_groups.h>

namespace cg = cooperative_groups;

extern "C" __global__ void two_phase(int n, const float *x, float *tmp, float *y) {
  int first = blockIdx.x * blockDim.x + threadIdx.x;
  int stride = gridDim.x * blockDim.x;
  for (int i = first; i < n; i += stride)
    tmp[i] = x[i] * x[i];
  cg::this_grid().sync();
  for (int i = first; i < n; i += stride)
    y[i] = tmp[i] + tmp[(i + 1) % n];
}
