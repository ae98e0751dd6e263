// Prefix scans over the last dim: cumsum and cumprod, inclusive or exclusive, forward or
// reverse (PyTorch's torch.cumsum(x, -1), x.flip(-1).cumsum(-1).flip(-1)); f32 accumulation
// whatever the input dtype.
//
// One row group (TPR threads) scans one row in tiles of TPR * VEC elements, first to last
// (reverse: last to first). Each thread holds one aligned vector of VEC consecutive elements per
// tile and scans it sequentially; the vectors' totals are scanned across the row group
// (cub::BlockScan for a whole-block row, cub::WarpScan for a row group of at most a warp), and
// a running carry, the combination of all earlier tiles, is folded in. The next tile's vector is
// loaded before the current one is scanned so one load per thread is always in flight.
// Elements past the row's end read as the identity (0 or 1) and are not stored. The row length
// must be a multiple of VEC (the lowering picks VEC so) so every vector is whole.
#pragma once

#include <cub/block/block_scan.cuh>
#include <cub/warp/warp_scan.cuh>

#include "kernels/common.cuh"

namespace kforge {

enum class ScanMode { kSum, kProd };

// THREADS per block, RPB rows per block (RPB > 1 needs THREADS / RPB <= 32: a row group is a
// logical warp), VEC elements per thread per tile.
template <int THREADS_, int RPB_, int VEC_> struct ScanCfg {
    static constexpr int THREADS = THREADS_, RPB = RPB_, VEC = VEC_;
    static constexpr int TPR = THREADS / RPB;
    static constexpr int64_t TILE = int64_t(TPR) * VEC;
    static_assert(THREADS % RPB == 0, "rows_per_block divides threads");
    static_assert(RPB == 1 || (TPR <= 32 && 32 % TPR == 0),
                  "several rows per block need a row group of at most a warp");
};

template <ScanMode M> struct ScanOp {
    __device__ __forceinline__ float operator()(float a, float b) const {
        return M == ScanMode::kSum ? a + b : a * b;
    }
};

// The exclusive scan of `v` across the row group with `initial` first; `total` gets the
// combination of every thread's v (without `initial`).
template <class C, ScanMode M> struct RowGroupScan {
    static constexpr bool kBlock = C::TPR > 32;
    using Block = cub::BlockScan<float, (kBlock ? C::THREADS : 32)>;
    using Warp = cub::WarpScan<float, (kBlock ? 32 : (C::TPR > 1 ? C::TPR : 2))>;
    using Storage = typename ::cuda::std::conditional<kBlock, typename Block::TempStorage,
                                                      typename Warp::TempStorage>::type;

    __device__ __forceinline__ static void exclusive(Storage& s, float v, float initial,
                                                     float& prefix, float& total) {
        if constexpr (C::TPR == 1) {
            prefix = initial;
            total = v;
        } else if constexpr (kBlock) {
            Block(s).ExclusiveScan(v, prefix, initial, ScanOp<M>{}, total);
            __syncthreads();  // the storage is reused by the next tile
        } else {
            // Shuffles within the row group's lanes only (a power-of-two logical warp): no
            // shared storage to guard, and no full-warp barrier, which the lanes of row groups
            // past the last row (returned early) could not join.
            Warp(s).ExclusiveScan(v, prefix, initial, ScanOp<M>{}, total);
        }
    }
};

// One entry point. x: [rows, n] row-major. chain.run(y, i) applies the generated chain to the
// values for output elements i .. i+VEC-1 and stores them (i = row * n + col). Launch: block
// C::THREADS, grid ceil(rows / RPB).
template <class C, ScanMode M, bool REVERSE, bool EXCLUSIVE, typename T, class Chain>
__device__ __forceinline__ void scan_rows(const T* __restrict__ x, int64_t rows, int64_t n,
                                          const Chain& chain) {
    constexpr int V = C::VEC;
    constexpr float kIdentity = M == ScanMode::kSum ? 0.f : 1.f;
    using Group = RowGroupScan<C, M>;
    __shared__ typename Group::Storage storage[Group::kBlock ? 1 : C::RPB];

    const int group = threadIdx.x / C::TPR, lane = threadIdx.x % C::TPR;
    const int64_t row = int64_t(blockIdx.x) * C::RPB + group;
    // A whole-block row always exists (grid = ceil(rows / RPB)); a row group past the end is a
    // whole logical warp, so it may leave.
    if (row >= rows) return;
    const T* xr = x + row * n;
    typename Group::Storage& s = storage[Group::kBlock ? 0 : group];

    // This thread's vector of tile t: logical (scan-order) position and its column.
    const auto column = [&](int64_t t) {
        const int64_t pos = t * C::TILE + int64_t(lane) * V;
        return REVERSE ? n - pos - V : pos;
    };
    const auto present = [&](int64_t t) { return t * C::TILE + int64_t(lane) * V < n; };
    const auto load = [&](float (&v)[V], int64_t t) {
        if (present(t)) {
            load_vec<V>(v, xr + column(t));
        } else {
#pragma unroll
            for (int j = 0; j < V; ++j) v[j] = kIdentity;
        }
    };

    const int64_t tiles = (n + C::TILE - 1) / C::TILE;
    float carry = kIdentity;
    float next[V];
    load(next, 0);
    for (int64_t t = 0; t < tiles; ++t) {
        float v[V];
#pragma unroll
        for (int j = 0; j < V; ++j) v[j] = next[j];
        if (t + 1 < tiles) load(next, t + 1);
        // The vector's own scan in scan order (reverse: its last element first).
        float y[V], run = kIdentity;
#pragma unroll
        for (int j = 0; j < V; ++j) {
            const int e = REVERSE ? V - 1 - j : j;
            const float before = run;
            run = ScanOp<M>{}(run, v[e]);
            y[e] = EXCLUSIVE ? before : run;
        }
        float prefix, total;
        Group::exclusive(s, run, carry, prefix, total);
#pragma unroll
        for (int j = 0; j < V; ++j) y[j] = ScanOp<M>{}(prefix, y[j]);
        if (present(t)) chain.run(y, row * n + column(t));
        carry = ScanOp<M>{}(carry, total);
    }
}

}  // namespace kforge
