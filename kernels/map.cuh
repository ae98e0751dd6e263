// Element-wise map driven by a generated chain functor (codegen/chain.cpp). The functor loads
// the map's input and its broadcast operands (chain.load) and applies the chain and its stores
// (chain.apply) for V consecutive output elements. Each thread handles ITEMS vectors of VEC per
// tile, issuing all their loads before any use; tiles are contiguous BLOCK*VEC*ITEMS elements.
// GRID_STRIDE: a fixed grid loops over tiles; otherwise one tile per block.
// numel must be a multiple of VEC (the lowering picks VEC accordingly).
#pragma once

#include "kernels/common.cuh"

namespace kforge {

template <int BLOCK, int VEC, int ITEMS, bool GRID_STRIDE, class Chain>
__device__ __forceinline__ void map_elements(int64_t numel, const Chain& chain) {
    constexpr int64_t kTile = int64_t(BLOCK) * VEC * ITEMS;
    const int64_t stride = GRID_STRIDE ? int64_t(gridDim.x) * kTile : numel;
    // Loads in flight are batched so that a batch holds at most 64 values per thread (long
    // chains with many operands would otherwise spill).
    constexpr int kPerItem = Chain::kSlots * VEC;
    constexpr int kBatch = kPerItem >= 64 ? 1 : (64 / kPerItem < ITEMS ? 64 / kPerItem : ITEMS);
    for (int64_t tile = int64_t(blockIdx.x) * kTile; tile < numel; tile += stride) {
#pragma unroll
        for (int k0 = 0; k0 < ITEMS; k0 += kBatch) {
            float s[kBatch][Chain::kSlots][VEC];
#pragma unroll
            for (int k = 0; k < kBatch; ++k) {
                const int64_t i = tile + (int64_t(k0 + k) * BLOCK + threadIdx.x) * VEC;
                if (k0 + k < ITEMS && i < numel) chain.load(s[k], i);
            }
#pragma unroll
            for (int k = 0; k < kBatch; ++k) {
                const int64_t i = tile + (int64_t(k0 + k) * BLOCK + threadIdx.x) * VEC;
                if (k0 + k < ITEMS && i < numel) chain.apply(s[k], i);
            }
        }
    }
}

}  // namespace kforge
