// argmax / argmin over one axis (x viewed as [outer, n, inner]) -> int64 indices [outer, inner],
// as PyTorch: the first index of the max (min); a NaN counts as the max (min), its first index.
// Row form (inner == 1): a block of THREADS threads per row, each thread strides the row
// (V-element vectors where the row allows), then a warp-shuffle and shared-memory tree over
// (value, index) pairs whose order is decided by the index alone (deterministic). Column form
// (inner > 1): a thread per output column walking the axis, 4 loads in flight, coalesced
// across the threads of a warp (neighbouring columns).
#pragma once

#include "kernels/common.cuh"

namespace kforge {

// Whether (v, i) beats the best so far (b, bi): a NaN beats every number, the first NaN wins;
// ties go to the smaller index.
template <bool IS_MAX>
__device__ __forceinline__ bool arg_better(float v, int64_t i, float b, int64_t bi) {
    const bool vn = v != v, bn = b != b;
    if (bn) return vn && i < bi;
    if (vn) return true;
    if (IS_MAX ? v > b : v < b) return true;
    return v == b && i < bi;
}

template <bool IS_MAX, int THREADS, int V, typename T>
__device__ __forceinline__ void arg_reduce_rows(const T* __restrict__ x, int64_t* __restrict__ y,
                                                int64_t rows, int64_t n) {
    __shared__ float s_val[THREADS / 32];
    __shared__ int64_t s_idx[THREADS / 32];
    for (int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
        const T* row = x + r * n;
        float best = IS_MAX ? -INFINITY : INFINITY;
        int64_t bi = n;  // none yet: any element beats it on the index
        for (int64_t j = int64_t(threadIdx.x) * V; j < n; j += int64_t(THREADS) * V) {
            float v[V];
            if (j + V <= n) {
                load_vec<V>(v, row + j);
            } else {
#pragma unroll
                for (int k = 0; k < V; ++k) v[k] = j + k < n ? to_f32(row[j + k]) : NAN;
            }
#pragma unroll
            for (int k = 0; k < V; ++k) {
                if (j + k < n && arg_better<IS_MAX>(v[k], j + k, best, bi)) best = v[k], bi = j + k;
            }
        }
#pragma unroll
        for (int o = 16; o > 0; o /= 2) {
            const float ov = __shfl_xor_sync(0xffffffffu, best, o);
            const int64_t oi = __shfl_xor_sync(0xffffffffu, bi, o);
            if (arg_better<IS_MAX>(ov, oi, best, bi)) best = ov, bi = oi;
        }
        if constexpr (THREADS > 32) {
            if (threadIdx.x % 32 == 0) s_val[threadIdx.x / 32] = best, s_idx[threadIdx.x / 32] = bi;
            __syncthreads();
            if (threadIdx.x == 0) {
                for (int w = 1; w < THREADS / 32; ++w)
                    if (arg_better<IS_MAX>(s_val[w], s_idx[w], best, bi)) best = s_val[w], bi = s_idx[w];
            }
            __syncthreads();
        }
        if (threadIdx.x == 0) y[r] = bi;
    }
}

template <bool IS_MAX, typename T>
__device__ __forceinline__ void arg_reduce_cols(const T* __restrict__ x, int64_t* __restrict__ y,
                                                int64_t outer, int64_t n, int64_t inner) {
    const int64_t total = outer * inner;
    for (int64_t c = int64_t(blockIdx.x) * blockDim.x + threadIdx.x; c < total;
         c += int64_t(gridDim.x) * blockDim.x) {
        const int64_t o = c / inner, i = c - o * inner;
        const T* col = x + o * n * inner + i;
        float best = IS_MAX ? -INFINITY : INFINITY;
        int64_t bi = n;
        int64_t l = 0;
        for (; l + 4 <= n; l += 4) {
            float v[4];
#pragma unroll
            for (int k = 0; k < 4; ++k) v[k] = to_f32(col[(l + k) * inner]);
#pragma unroll
            for (int k = 0; k < 4; ++k)
                if (arg_better<IS_MAX>(v[k], l + k, best, bi)) best = v[k], bi = l + k;
        }
        for (; l < n; ++l) {
            const float v = to_f32(col[l * inner]);
            if (arg_better<IS_MAX>(v, l, best, bi)) best = v, bi = l;
        }
        y[c] = bi;
    }
}

}  // namespace kforge
