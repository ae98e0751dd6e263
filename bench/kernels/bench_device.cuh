// Device-side inputs and fp64 reduction helpers shared by the row-wise benchmarks
// (rowwise_bench.cu, rowgroup/rowgroup_bench.cu): inputs generated on the device (the suite
// shapes are too large for host mirrors) and the block reductions of their fp64 reference checks.
#pragma once

#include <cstdint>

#include "kernels/common.cuh"
#include "tests/kernels/selftest_common.cuh"  // CHECK

namespace kforge {

__device__ __forceinline__ float hash_unit(uint64_t i, uint32_t seed) {  // [0, 1)
    uint64_t z = i * 0x9e3779b97f4a7c15ULL + seed;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return float((z ^ (z >> 31)) >> 40) * (1.f / 16777216.f);
}
// dist 0: uniform [-1, 1]; dist 1: mean 5, sd ~10 (sum of four uniforms), as the self-test's.
template <typename T> __global__ void k_fill(T* x, int64_t n, uint32_t seed, int dist) {
    for (int64_t i = blockIdx.x * int64_t(blockDim.x) + threadIdx.x; i < n; i += int64_t(gridDim.x) * blockDim.x) {
        float v;
        if (dist == 0) {
            v = 2.f * hash_unit(i, seed) - 1.f;
        } else {
            float u = 0.f;
            for (int k = 0; k < 4; ++k) u += hash_unit(4 * i + k, seed);
            v = 5.f + 10.f * (u - 2.f) * 1.7320508f;
        }
        x[i] = from_f32<T>(v);
    }
}
template <typename T> void fill_dev(T* x, int64_t n, uint32_t seed, int dist) {
    k_fill<T><<<132 * 8, 256>>>(x, n, seed, dist);
    CHECK(cudaGetLastError());
}

// fp64 block sum over 256 threads.
__device__ double block_sum(double v, double* sh) {
    for (int o = 16; o > 0; o /= 2) v += __shfl_xor_sync(0xffffffffu, v, o);
    __syncthreads();
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    double t = 0;
    for (int w = 0; w < 8; ++w) t += sh[w];
    return t;
}
__device__ double block_max(double v, double* sh) {
    for (int o = 16; o > 0; o /= 2) v = fmax(v, __shfl_xor_sync(0xffffffffu, v, o));
    __syncthreads();
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = v;
    __syncthreads();
    double t = sh[0];
    for (int w = 1; w < 8; ++w) t = fmax(t, sh[w]);
    return t;
}
struct CheckOut {
    unsigned long long bad;
    unsigned int max_err_bits;  // max |y - ref| as float bits (non-negative floats order as ints)
};

}  // namespace kforge
