// Copy kernels (the copy kernel kind: reshape, expand, permute, slice, cat, pad as one gather;
// problem/copy_op.h states the indexing): every thread writes VEC consecutive outputs along the
// output's last axis (VEC divides its extent, so the VEC elements share every other index),
// coalesced on the output, through the chain functor (codegen/chain.h) that casts and stores
// them. A generated struct G computes the sources: `template <int V> void gather(float (&v)[V],
// int64_t i) const` fills v with outputs i .. i+V-1 (the pad value where no source is valid).
// A grid-stride loop covers the outputs.
#pragma once

#include "kernels/common.cuh"

namespace kforge {

// Outputs l .. l+V-1 of one output row read from t[off + l' * STRIDE] where lo <= l' < hi (the
// row's other indices are in `off`); V contiguous elements load as one vector where the source
// is contiguous (STRIDE 1), the whole span is valid and aligned.
template <int V, long long STRIDE, typename T>
__device__ __forceinline__ void gather_row(float (&v)[V], const T* __restrict__ t, int64_t off,
                                           int64_t l, int64_t lo, int64_t hi) {
    if (STRIDE == 1 && l >= lo && l + V <= hi && is_aligned<V>(t + off + l)) {
        load_vec<V>(v, t + off + l);
        return;
    }
#pragma unroll
    for (int j = 0; j < V; ++j)
        if (l + j >= lo && l + j < hi) v[j] = to_f32(t[off + (l + j) * STRIDE]);
}

template <int THREADS, int VEC, class G, class Chain>
__device__ __forceinline__ void copy_elements(const G& g, int64_t numel, const Chain& chain) {
    const int64_t step = int64_t(gridDim.x) * THREADS * VEC;
    for (int64_t i = (int64_t(blockIdx.x) * THREADS + threadIdx.x) * VEC; i < numel; i += step) {
        float v[VEC];
        g.template gather<VEC>(v, i);
        chain.template run<VEC>(v, i);
    }
}

}  // namespace kforge
