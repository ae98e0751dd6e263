// Reductions over a leading dim: x viewed as [outer, R, inner], reduced over R into
// [outer, inner] (sum, mean, max, min, prod; PyTorch semantics as in reduce_row.cuh).
//
// A block is TX x TY threads: TX threads cover TX * VEC adjacent columns (coalesced 16-byte
// loads across columns), TY threads stride over R, UNROLL loads in flight each. The TY partials
// meet in shared memory (row-major float vectors: conflict-free). With grid.y == 1 the block
// applies the chain and stores. With grid.y = S > 1 chunks of R, each block writes its partial
// to an f32 workspace [S, outer * inner] and a second launch (reduce_col_finish) combines the S
// partials in a fixed order: deterministic, no atomics, no zero-initialisation.
#pragma once

#include "kernels/reduce_row.cuh"

namespace kforge {

// One entry point for the first launch. Grid: (ceil(inner / (TX*VEC)) * outer, S). r_chunk:
// rows of R per grid.y slice. ws: nullptr when S == 1.
template <int TX, int TY, int VEC, ReduceMode M, typename T, class Chain>
__device__ __forceinline__ void reduce_cols(const T* __restrict__ x, float* __restrict__ ws,
                                            int64_t outer, int64_t r_len, int64_t inner,
                                            int64_t r_chunk, const Chain& chain) {
    using Op = typename ReduceTraits<M>::Op;
    constexpr int kUnroll = 4;
    __shared__ __align__(16) float part[TY][TX * VEC];
    const int tx = threadIdx.x % TX, ty = threadIdx.x / TX;
    const int64_t col_blocks = (inner + TX * VEC - 1) / (TX * VEC);
    const int64_t o = blockIdx.x / col_blocks;
    const int64_t col = (blockIdx.x % col_blocks) * (TX * VEC) + int64_t(tx) * VEC;
    const int64_t r0 = int64_t(blockIdx.y) * r_chunk;
    const int64_t r1 = min(r_len, r0 + r_chunk);
    const bool active = col < inner;

    float acc[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc[j] = ReduceTraits<M>::kInit;
    const T* base = x + o * r_len * inner + col;
    if (active) {
        for (int64_t r = r0 + ty; r < r1; r += TY * kUnroll) {
            float buf[kUnroll][VEC];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (r + u * TY < r1) load_vec<VEC>(buf[u], base + (r + u * TY) * inner);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (r + u * TY < r1) {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) acc[j] = Op{}(acc[j], buf[u][j]);
                }
            }
        }
    }
    if constexpr (TY > 1) {
        store_vec<VEC>(&part[ty][tx * VEC], acc);  // 16-byte rows: no bank conflicts
        __syncthreads();
        if (ty != 0) return;
#pragma unroll
        for (int t = 1; t < TY; ++t) {
            float v[VEC];
            load_vec<VEC>(v, &part[t][tx * VEC]);
#pragma unroll
            for (int j = 0; j < VEC; ++j) acc[j] = Op{}(acc[j], v[j]);
        }
    }
    if (!active) return;
    const int64_t out = o * inner + col;
    if (gridDim.y == 1) {
        if constexpr (M == ReduceMode::kMean) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) acc[j] /= float(r_len);
        }
        chain.run(acc, out);
    } else {
        store_vec<VEC>(ws + int64_t(blockIdx.y) * outer * inner + out, acc);
    }
}

// Second launch when S > 1. A block of 256 threads = 32 column vectors x 8 slice groups: each
// thread combines every 8th partial (4 loads in flight), then the 8 meet in shared memory in
// a fixed order. Grid: ceil(outer * inner / (32 * VEC)) blocks of 256 threads.
template <int VEC, ReduceMode M, class Chain>
__device__ __forceinline__ void reduce_col_finish(const float* __restrict__ ws, int64_t slices,
                                                  int64_t total, int64_t r_len,
                                                  const Chain& chain) {
    using Op = typename ReduceTraits<M>::Op;
    constexpr int kTx = 32, kTy = 8, kUnroll = 4;
    __shared__ __align__(16) float part[kTy][kTx * VEC];
    const int tx = threadIdx.x % kTx, ty = threadIdx.x / kTx;
    const int64_t i = (int64_t(blockIdx.x) * kTx + tx) * VEC;
    float acc[VEC];
#pragma unroll
    for (int j = 0; j < VEC; ++j) acc[j] = ReduceTraits<M>::kInit;
    if (i < total) {
        for (int64_t s = ty; s < slices; s += kTy * kUnroll) {
            float v[kUnroll][VEC];
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (s + u * kTy < slices) load_vec<VEC>(v[u], ws + (s + u * kTy) * total + i);
            }
#pragma unroll
            for (int u = 0; u < kUnroll; ++u) {
                if (s + u * kTy < slices) {
#pragma unroll
                    for (int j = 0; j < VEC; ++j) acc[j] = Op{}(acc[j], v[u][j]);
                }
            }
        }
    }
    store_vec<VEC>(&part[ty][tx * VEC], acc);
    __syncthreads();
    if (ty != 0 || i >= total) return;
#pragma unroll
    for (int t = 1; t < kTy; ++t) {
        float v[VEC];
        load_vec<VEC>(v, &part[t][tx * VEC]);
#pragma unroll
        for (int j = 0; j < VEC; ++j) acc[j] = Op{}(acc[j], v[j]);
    }
    if constexpr (M == ReduceMode::kMean) {
#pragma unroll
        for (int j = 0; j < VEC; ++j) acc[j] /= float(r_len);
    }
    chain.run(acc, i);
}

}  // namespace kforge
