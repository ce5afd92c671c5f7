// servewise test fixture: a tiny saxpy kernel with a C entry point.
// Built by scripts/build_cuda_fixtures.sh; do not edit without rebuilding.
#include <cuda_runtime.h>

__global__ void sw_saxpy(int n, float a, const float *x, float *y) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}

extern "C" int sw_saxpy_launch(int n, float a, const float *x, float *y) {
    sw_saxpy<<<(n + 255) / 256, 256>>>(n, a, x, y);
    return (int)cudaGetLastError();
}
