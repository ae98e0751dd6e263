// cross_entropy over logits x [rows, n] with class-index targets t [rows] (i32 or i64): one pass
// over each row (a block per row: running max and sum of exp(x - max) per thread, combined with
// OpMaxSumExp's pairs), the row's loss logsumexp - x[t] written to an f32 workspace [rows]; then
// one block sums the losses in a fixed order (fp64 partial sums, a shared-memory tree) and
// writes their mean. A target outside [0, n) gives a NaN loss (PyTorch raises; the correctness
// gate then fails the candidate instead of reading out of bounds).
#pragma once

#include "kernels/common.cuh"

namespace kforge {

template <int THREADS, int V, typename T, typename TI>
__device__ __forceinline__ void cross_entropy_rows(const T* __restrict__ x,
                                                   const TI* __restrict__ target,
                                                   float* __restrict__ loss, int64_t rows,
                                                   int64_t n) {
    __shared__ float2 s_part[THREADS / 32];
    const OpMaxSumExp op;
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* row = x + r * n;
        float2 acc = make_float2(-INFINITY, 0.f);
        for (int64_t j = int64_t(threadIdx.x) * V; j < n; j += int64_t(THREADS) * V) {
            float v[V];
            if (j + V <= n) {
                load_vec<V>(v, row + j);
#pragma unroll
                for (int k = 0; k < V; ++k) acc = op(acc, make_float2(v[k], 1.f));
            } else {
                for (int64_t k = j; k < n; ++k) acc = op(acc, make_float2(to_f32(row[k]), 1.f));
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o /= 2) {
            float2 other;
            other.x = __shfl_xor_sync(0xffffffffu, acc.x, o);
            other.y = __shfl_xor_sync(0xffffffffu, acc.y, o);
            acc = op(acc, other);
        }
        if constexpr (THREADS > 32) {
            if (threadIdx.x % 32 == 0) s_part[threadIdx.x / 32] = acc;
            __syncthreads();
            if (threadIdx.x == 0)
                for (int w = 1; w < THREADS / 32; ++w) acc = op(acc, s_part[w]);
            __syncthreads();
        }
        if (threadIdx.x == 0) {
            const int64_t t = static_cast<int64_t>(target[r]);
            const float m = acc.x == -INFINITY ? 0.f : acc.x;
            loss[r] = (t >= 0 && t < n) ? logf(acc.y) + m - to_f32(row[t]) : NAN;
        }
    }
}

template <int THREADS, typename T>
__device__ __forceinline__ void mean_of_losses(const float* __restrict__ loss, T* __restrict__ y,
                                               int64_t rows) {
    __shared__ double s_sum[THREADS];
    double sum = 0.0;
    for (int64_t r = threadIdx.x; r < rows; r += THREADS) sum += loss[r];
    s_sum[threadIdx.x] = sum;
    __syncthreads();
    for (int w = THREADS / 2; w > 0; w /= 2) {
        if (threadIdx.x < w) s_sum[threadIdx.x] += s_sum[threadIdx.x + w];
        __syncthreads();
    }
    if (threadIdx.x == 0) y[0] = from_f32<T>(static_cast<float>(s_sum[0] / double(rows)));
}

}  // namespace kforge
