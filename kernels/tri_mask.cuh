// tril / triu of the last two dims of x [*, rows, cols] (torch.tril / torch.triu with a
// diagonal offset): element (i, j) is kept where j - i <= diagonal (LOWER) or j - i >= diagonal,
// `fill` elsewhere (0; a masked_fill with a structured mask: its value). V-element vectors
// along a row (V divides cols, so a vector never spans two rows), a grid-stride loop over the
// whole tensor.
#pragma once

#include "kernels/common.cuh"

namespace kforge {

template <bool LOWER, int V, typename T>
__device__ __forceinline__ void tri_mask(const T* __restrict__ x, T* __restrict__ y,
                                         int64_t total, int64_t rows, int64_t cols,
                                         int64_t diagonal, float fill = 0.f) {
    for (int64_t e = (int64_t(blockIdx.x) * blockDim.x + threadIdx.x) * V; e < total;
         e += int64_t(gridDim.x) * blockDim.x * V) {
        float v[V];
        load_vec<V>(v, x + e);
        const int64_t i = (e / cols) % rows, j0 = e % cols;
#pragma unroll
        for (int k = 0; k < V; ++k) {
            const int64_t d = j0 + k - i;
            if (!(LOWER ? d <= diagonal : d >= diagonal)) v[k] = fill;
        }
        store_vec<V>(y + e, v);
    }
}

}  // namespace kforge
