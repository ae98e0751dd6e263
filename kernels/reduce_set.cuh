// A reduction over a set of dims (sum / mean / max / min; BatchNorm's batch statistics: N, H, W
// of [N, C, H, W]) in one launch, where a chain of single-dim reductions took one launch per dim
// (codegen/lower_rowwise_col.cpp emit_set_reduce).
//
// x is contiguous. The lowering collapses its dims into groups of kept dims (the outputs,
// row-major) and reduced dims. The reduced dims after the last kept dim are one run of `run`
// contiguous elements, read in vectors (VEC divides the innermost dim, so a prologue's operands
// broadcast within a vector); it repeats at every position ("segment") of the other reduced
// groups, NR of them, with extents / strides rext / rstr (outermost first); kext / kstr likewise
// for the NK kept groups. Block (o, s): output o, slice s of its reduced elements, flattened
// segment-major, [s * chunk, min((s + 1) * chunk, total)) (chunk a multiple of VEC: a vector
// never crosses a segment). With one slice the block applies the chain at o; else it writes its
// partial to ws[s * outputs + o] and reduce_col_finish (kernels/reduce_col.cuh) combines the
// slices in a fixed order: deterministic, no atomics.
#pragma once

#include "kernels/reduce_ops.cuh"

namespace kforge {

// One thread's part of output o's slice s: its vectors (THREADS apart, four loads in flight)
// reduced with the mode's functor after the prologue. Each thread keeps a running (segment,
// offset in the run), so it divides only where it enters a new segment. No shared memory or
// warp built-ins: the set reduction's host-run test runs it for every thread of every block.
template <int THREADS, int VEC, int NK, int NR, ReduceMode M, typename T, class Pre>
__device__ __forceinline__ float reduce_set_thread(
    const T* __restrict__ x, const int64_t (&kext)[NK], const int64_t (&kstr)[NK],
    const int64_t (&rext)[NR], const int64_t (&rstr)[NR], int64_t run, int64_t total,
    int64_t chunk, int64_t o, int64_t s, int tid, const Pre& pre) {
    using Op = typename ReduceTraits<M>::Op;
    int64_t base = 0, rem = o;
#pragma unroll
    for (int d = NK - 1; d >= 0; --d) {
        base += (rem % kext[d]) * kstr[d];
        rem /= kext[d];
    }
    const int64_t e1 = total < (s + 1) * chunk ? total : (s + 1) * chunk;
    constexpr int64_t kStep = int64_t(THREADS) * VEC;
    constexpr int kUnroll = 4;  // loads in flight per thread
    int64_t e = s * chunk + int64_t(tid) * VEC;
    int64_t seg = e / run, r = e - seg * run;
    int64_t seg_base = 0, seg_at = -1;
    // the linear index of the thread's current vector; then a step of THREADS vectors on
    const auto next = [&]() {
        if (seg != seg_at) {
            int64_t off = 0, srem = seg;
#pragma unroll
            for (int d = NR - 1; d >= 0; --d) {
                off += (srem % rext[d]) * rstr[d];
                srem /= rext[d];
            }
            seg_base = base + off;
            seg_at = seg;
        }
        const int64_t i = seg_base + r;
        r += kStep;
        if (r >= run) {
            const int64_t q = r / run;
            seg += q;
            r -= q * run;
        }
        return i;
    };
    float acc[2] = {ReduceTraits<M>::kInit, ReduceTraits<M>::kInit};
    for (; e < e1; e += kUnroll * kStep) {
        int64_t idx[kUnroll];
        float v[kUnroll][VEC];
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (e + u * kStep < e1) idx[u] = next();
#pragma unroll
        for (int u = 0; u < kUnroll; ++u)
            if (e + u * kStep < e1) load_vec<VEC>(v[u], x + idx[u]);
#pragma unroll
        for (int u = 0; u < kUnroll; ++u) {
            if (e + u * kStep >= e1) continue;
            if constexpr (RowPrologueActive<Pre>::value) {
                float sl[Pre::kSlots][VEC];
#pragma unroll
                for (int j = 0; j < VEC; ++j) sl[0][j] = v[u][j];
                pre.template load_operands<VEC>(sl, idx[u]);
                pre.template apply<VEC>(sl, idx[u]);
#pragma unroll
                for (int j = 0; j < VEC; ++j) v[u][j] = sl[0][j];
            }
#pragma unroll
            for (int j = 0; j < VEC; ++j) acc[j & 1] = Op{}(acc[j & 1], v[u][j]);
        }
    }
    return Op{}(acc[0], acc[1]);
}

// The launch: grid (outputs, slices), THREADS threads (a multiple of 32).
template <int THREADS, int VEC, int NK, int NR, ReduceMode M, typename T, class Chain,
          class Pre = RowNoPrologue>
__device__ __forceinline__ void reduce_set(const T* __restrict__ x, float* __restrict__ ws,
                                           const int64_t (&kext)[NK], const int64_t (&kstr)[NK],
                                           const int64_t (&rext)[NR], const int64_t (&rstr)[NR],
                                           int64_t run, int64_t total, int64_t chunk,
                                           int64_t outputs, const Chain& chain,
                                           const Pre& pre = Pre{}) {
    using Op = typename ReduceTraits<M>::Op;
    constexpr int kWarps = THREADS / 32;
    __shared__ float part[kWarps];
    const int64_t o = blockIdx.x;
    float a = reduce_set_thread<THREADS, VEC, NK, NR, M>(x, kext, kstr, rext, rstr, run, total,
                                                          chunk, o, int64_t(blockIdx.y),
                                                          int(threadIdx.x), pre);
#pragma unroll
    for (int m = 16; m > 0; m >>= 1) a = Op{}(a, __shfl_xor_sync(0xffffffffu, a, m));
    if (threadIdx.x % 32 == 0) part[threadIdx.x / 32] = a;
    __syncthreads();
    if (threadIdx.x != 0) return;
    a = part[0];
#pragma unroll
    for (int w = 1; w < kWarps; ++w) a = Op{}(a, part[w]);
    if (gridDim.y == 1) {
        if constexpr (M == ReduceMode::kMean) a /= float(total);
        float y[1] = {a};
        chain.run(y, o);
    } else {
        ws[int64_t(blockIdx.y) * outputs + o] = a;
    }
}

}  // namespace kforge
