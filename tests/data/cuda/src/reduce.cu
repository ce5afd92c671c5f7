// servewise test fixture: a tiny block-sum reduction with a C entry point.
// Built by scripts/build_cuda_fixtures.sh; do not edit without rebuilding.
#include <cuda_runtime.h>

__global__ void sw_block_sum(int n, const float *x, float *out) {
    __shared__ float buf[256];
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    buf[threadIdx.x] = (i < n) ? x[i] : 0.0f;
    __syncthreads();
    for (int s = blockDim.x / 2; s > 0; s >>= 1) {
        if (threadIdx.x < s) buf[threadIdx.x] += buf[threadIdx.x + s];
        __syncthreads();
    }
    if (threadIdx.x == 0) atomicAdd(out, buf[0]);
}

extern "C" int sw_block_sum_launch(int n, const float *x, float *out) {
    sw_block_sum<<<(n + 255) / 256, 256>>>(n, x, out);
    return (int)cudaGetLastError();
}
