// Pooling (max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool) over x [planes, d, h, w]
// (1-3 spatial axes; the lowering pads a lower rank with leading size-1 axes), driven by a
// generated geometry struct G and a chain functor (codegen/chain.h) applied to each pooled value.
// Two entry points:
// - pool_tiles (max_pool, avg_pool; the lowering's choice where a plane and the tile count fit
//   in int): a thread computes a tile of ROWS x ITEMS outputs (consecutive along the last two
//   axes), neighbouring threads neighbouring tiles along the last axis. The geometry is
//   compile-time, so the tap loops unroll and every div/mod is by a constant, in 32 bits (64
//   only for the plane's base). Per input row of the tile (the rows of the ROWS windows along h,
//   each loaded once) the span of the ITEMS windows along w is loaded once, in VEC-element
//   vectors (aligned: the lowering checks w % VEC == 0 and ITEMS * stride_w % VEC == 0, so a
//   vector is wholly inside the row or wholly in the padding), reduced per output along w, then
//   folded into the outputs whose window along h holds the row: overlapping windows (stride <
//   kernel) share their loads in registers. A warp's outputs of a row are stored through shared
//   memory, neighbouring lanes writing neighbouring outputs.
// - pool_outputs (every kind; adaptive windows, large windows split over LANES threads): a group
//   of LANES threads computes ITEMS consecutive outputs along the last axis; a grid-stride loop
//   covers the rest.
// Windows are problem/pool.h's pool_taps, computed in f32 from inputs loaded as f32: max keeps a
// NaN tap (PyTorch's max_pool), avg divides by G::kDivisor if set, else by the window's extent
// with the padding (G::kIncludePad) or by the taps inside the input; a window without taps gives
// 0 (avg) or -inf (max).
//
// G provides: static constexpr int kKind (kPoolMax, kPoolAvg, kPoolAdaptiveAvg,
// kPoolAdaptiveMax), bool kIncludePad, int64_t kDivisor, and `static constexpr __device__
// PoolAxis axis(int i)` for i = 0, 1, 2 (d, h, w).
#pragma once

#include "kernels/common.cuh"

namespace kforge {

enum PoolKind { kPoolMax = 0, kPoolAvg = 1, kPoolAdaptiveAvg = 2, kPoolAdaptiveMax = 3 };

struct PoolAxis {
    int64_t in, out, kernel, stride, padding, dilation;
};

struct PoolTaps {
    int64_t first, count, step, extent;
};

template <int KIND>
__device__ __forceinline__ PoolTaps pool_taps(const PoolAxis& a, int64_t o) {
    PoolTaps t;
    t.step = 1;
    if (KIND == kPoolAdaptiveAvg || KIND == kPoolAdaptiveMax) {
        t.first = (o * a.in) / a.out;
        t.count = ((o + 1) * a.in + a.out - 1) / a.out - t.first;
        t.extent = t.count;
        return t;
    }
    const int64_t start = o * a.stride - a.padding;
    if (KIND == kPoolAvg) {
        int64_t end = start + a.kernel;
        if (end > a.in + a.padding) end = a.in + a.padding;
        t.extent = end - start;
        t.first = start < 0 ? 0 : start;
        const int64_t last = end < a.in ? end : a.in;
        t.count = last > t.first ? last - t.first : 0;
        return t;
    }
    const int64_t d = a.dilation;
    const int64_t j0 = start < 0 ? (-start + d - 1) / d : 0;
    const int64_t num = a.in - 1 - start;
    int64_t j1 = num >= 0 ? num / d : -1;
    if (j1 > a.kernel - 1) j1 = a.kernel - 1;
    t.first = start + j0 * d;
    t.step = d;
    t.count = j1 >= j0 ? j1 - j0 + 1 : 0;
    t.extent = t.count;
    return t;
}

// The pooled value of one output from its three axes' taps: LANES == 1, this thread reads every
// tap (nested loops); else the LANES threads of a group split the flattened taps (the last axis
// fastest: neighbouring lanes read neighbouring elements) and combine by shuffles. Every lane of
// the group must call it (the shuffles); `valid` false contributes nothing.
template <int KIND, int LANES, typename TX>
__device__ __forceinline__ float pool_window(const TX* __restrict__ xp, const PoolAxis& a1,
                                             const PoolAxis& a2, const PoolTaps& t0,
                                             const PoolTaps& t1, const PoolTaps& t2, bool valid,
                                             int lane) {
    constexpr bool kMax = KIND == kPoolMax || KIND == kPoolAdaptiveMax;
    float acc = kMax ? -INFINITY : 0.f;
    if (LANES == 1) {
        if (!valid) return acc;
        for (int64_t j0 = 0; j0 < t0.count; ++j0) {
            const TX* p0 = xp + (t0.first + j0 * t0.step) * a1.in * a2.in;
            for (int64_t j1 = 0; j1 < t1.count; ++j1) {
                const TX* p1 = p0 + (t1.first + j1 * t1.step) * a2.in + t2.first;
                for (int64_t j2 = 0; j2 < t2.count; ++j2) {
                    const float v = to_f32(p1[j2 * t2.step]);
                    acc = kMax ? max_nan(v, acc) : acc + v;
                }
            }
        }
        return acc;
    }
    if (valid) {
        const int c2 = int(t2.count), c12 = int(t1.count) * c2, n = int(t0.count) * c12;
        for (int t = lane; t < n; t += LANES) {
            const int j0 = t / c12, r = t - j0 * c12, j1 = r / c2, j2 = r - j1 * c2;
            const float v = to_f32(xp[((t0.first + j0 * t0.step) * a1.in + t1.first +
                                       j1 * t1.step) * a2.in + t2.first + j2 * t2.step]);
            acc = kMax ? max_nan(v, acc) : acc + v;
        }
    }
#pragma unroll
    for (int off = LANES / 2; off > 0; off /= 2) {
        const float o = __shfl_xor_sync(0xffffffffu, acc, off, LANES);
        acc = kMax ? max_nan(o, acc) : acc + o;
    }
    return acc;
}

// Tap count and padded extent of avg_pool's window o on one axis (dilation 1), in 32 bits.
__device__ __forceinline__ void pool_avg_count(const PoolAxis& a, int o, int& count, int& extent) {
    const int start = o * int(a.stride) - int(a.padding);
    int end = start + int(a.kernel);
    if (end > int(a.in + a.padding)) end = int(a.in + a.padding);
    extent = end - start;
    const int first = start < 0 ? 0 : start, last = end < int(a.in) ? end : int(a.in);
    count = last > first ? last - first : 0;
}

// max_nan (a NaN tap wins) in one instruction where the GPU has it (sm_80+: max.NaN).
__device__ __forceinline__ float pool_max(float a, float b) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
    float r;
    asm("max.NaN.f32 %0, %1, %2;" : "=f"(r) : "f"(a), "f"(b));
    return r;
#else
    return max_nan(a, b);
#endif
}

// A thread's ITEMS outputs of one row, staged in shared memory (one 8/16-byte access).
template <int ITEMS>
struct alignas(ITEMS == 1 ? 4 : ITEMS == 2 ? 8 : 16) PoolStage {
    float v[ITEMS];
};

// The compile-time geometry pool_tiles reads from G.
template <class G, int ITEMS, int ROWS, int VEC>
struct PoolTileShape {
    // scalars only: a static constexpr PoolAxis would be odr-used (undefined) in device code
    static constexpr int kIn0 = int(G::axis(0).in), kOut0 = int(G::axis(0).out);
    static constexpr int kK0 = int(G::axis(0).kernel), kS0 = int(G::axis(0).stride);
    static constexpr int kP0 = int(G::axis(0).padding), kD0 = int(G::axis(0).dilation);
    static constexpr int kIn1 = int(G::axis(1).in), kOut1 = int(G::axis(1).out);
    static constexpr int kK1 = int(G::axis(1).kernel), kS1 = int(G::axis(1).stride);
    static constexpr int kP1 = int(G::axis(1).padding), kD1 = int(G::axis(1).dilation);
    static constexpr int kIn2 = int(G::axis(2).in), kOut2 = int(G::axis(2).out);
    static constexpr int kK2 = int(G::axis(2).kernel), kS2 = int(G::axis(2).stride);
    static constexpr int kP2 = int(G::axis(2).padding), kD2 = int(G::axis(2).dilation);
    static constexpr int kGroups1 = (kOut1 + ROWS - 1) / ROWS;
    static constexpr int kGroups2 = (kOut2 + ITEMS - 1) / ITEMS;
    static constexpr int kRowsIn = (ROWS - 1) * kS1 + (kK1 - 1) * kD1 + 1;  // input rows of a tile
    static constexpr int kSpan = (ITEMS - 1) * kS2 + (kK2 - 1) * kD2 + 1;   // its input columns
    static constexpr int kOff = ((-kP2) % VEC + VEC) % VEC;  // first column's place in its vector
    static constexpr int kVecs = (kOff + kSpan + VEC - 1) / VEC;
    static constexpr int64_t kPlaneIn = int64_t(kIn0) * kIn1 * kIn2;
    // input row j of a tile lies in output row r's window along axis 1
    static __device__ __forceinline__ constexpr bool in_window(int j, int r) {
        return j - r * kS1 >= 0 && (j - r * kS1) % kD1 == 0 && (j - r * kS1) / kD1 < kK1;
    }
};

// Folds a tile's input (depth taps from o0, rows from h0, columns from c0, VEC-aligned) into
// acc; CHECKED: rows and vectors outside the input give the neutral value (else all are inside).
template <class G, class T, bool CHECKED, int ITEMS, int ROWS, int VEC, typename TX>
__device__ __forceinline__ void pool_tile_fold(float (&acc)[ROWS][ITEMS],
                                               const TX* __restrict__ xp, int o0, int h0, int c0) {
    constexpr bool kMax = G::kKind == kPoolMax;
    const float neutral = kMax ? -INFINITY : 0.f;
#pragma unroll
    for (int k0 = 0; k0 < T::kK0; ++k0) {
        const int d = o0 * T::kS0 - T::kP0 + k0 * T::kD0;
        if (unsigned(d) >= unsigned(T::kIn0)) continue;
        const TX* dp = xp + (d * T::kIn1 + h0) * T::kIn2 + c0;  // may point before x: not read
#pragma unroll
        for (int j = 0; j < T::kRowsIn; ++j) {
            bool used = false;  // constant per j once unrolled
#pragma unroll
            for (int r = 0; r < ROWS; ++r) used = used || T::in_window(j, r);
            if (!used) continue;
            const bool row_in = !CHECKED || unsigned(h0 + j) < unsigned(T::kIn1);
            float v[T::kVecs * VEC];
#pragma unroll
            for (int q = 0; q < T::kVecs; ++q) {
                float e[VEC];
                if (!CHECKED || (row_in && unsigned(c0 + q * VEC) < unsigned(T::kIn2))) {
                    load_vec<VEC>(e, dp + j * T::kIn2 + q * VEC);
                } else {
#pragma unroll
                    for (int k = 0; k < VEC; ++k) e[k] = neutral;
                }
#pragma unroll
                for (int k = 0; k < VEC; ++k) v[q * VEC + k] = e[k];
            }
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                float rr = v[T::kOff + i * T::kS2];
#pragma unroll
                for (int kw = 1; kw < T::kK2; ++kw) {
                    const float a = v[T::kOff + i * T::kS2 + kw * T::kD2];
                    rr = kMax ? pool_max(a, rr) : rr + a;
                }
#pragma unroll
                for (int r = 0; r < ROWS; ++r)
                    if (T::in_window(j, r))
                        acc[r][i] = kMax ? pool_max(rr, acc[r][i]) : acc[r][i] + rr;
            }
        }
    }
}

template <class G, int THREADS, int ITEMS, int ROWS, int VEC, typename TX, class Chain>
__device__ __forceinline__ void pool_tiles(const TX* __restrict__ x, int planes,
                                           const Chain& chain) {
    static_assert(G::kKind == kPoolMax || G::kKind == kPoolAvg, "pool_tiles: max or avg");
    static_assert(VEC == 1 || VEC == 2 || VEC == 4, "VEC: 1, 2 or 4");
    using T = PoolTileShape<G, ITEMS, ROWS, VEC>;
    static_assert(VEC == 1 || (T::kIn2 % VEC == 0 && (ITEMS * T::kS2) % VEC == 0),
                  "VEC must divide the row and the tile's step along it");
    constexpr bool kMax = G::kKind == kPoolMax;
    const int tiles = planes * T::kOut0 * T::kGroups1 * T::kGroups2;  // < 2^30 (the lowering)
    const int lane = int(threadIdx.x) & 31;
    // ITEMS > 1: a warp's outputs of one row pass through shared memory so that neighbouring
    // lanes store neighbouring outputs (lane l's ITEMS outputs are ITEMS apart from lane l+1's:
    // direct stores would write each 32-byte sector ITEMS times, a quarter full each time)
    constexpr int kStage = ITEMS > 1 ? THREADS : 1;
    __shared__ PoolStage<ITEMS> stage_vals[kStage];
    __shared__ int64_t stage_first[kStage];
    __shared__ int stage_count[kStage];
    const int warp0 = int(threadIdx.x) & ~31;
    // warp-uniform loop: every lane of a warp takes the same trips (the staging's __syncwarp)
    for (int base = int(blockIdx.x) * THREADS + warp0; base < tiles;
         base += int(gridDim.x) * THREADS) {
        const int t = base + lane;
        const bool active = t < tiles;
        const int g2 = t % T::kGroups2;
        int rest = t / T::kGroups2;
        const int g1 = rest % T::kGroups1;
        rest /= T::kGroups1;
        const int o0 = rest % T::kOut0, plane = rest / T::kOut0;
        const TX* xp = x + int64_t(plane) * T::kPlaneIn;
        const int c0 = g2 * (ITEMS * T::kS2) - T::kP2 - T::kOff;  // first loaded column
        const int h0 = g1 * (ROWS * T::kS1) - T::kP1;            // first input row
        float acc[ROWS][ITEMS];
#pragma unroll
        for (int r = 0; r < ROWS; ++r)
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) acc[r][i] = kMax ? -INFINITY : 0.f;
        if (active) {
            if (h0 >= 0 && h0 + T::kRowsIn <= T::kIn1 && c0 >= 0 &&
                c0 + T::kVecs * VEC <= T::kIn2)
                pool_tile_fold<G, T, false, ITEMS, ROWS, VEC>(acc, xp, o0, h0, c0);
            else
                pool_tile_fold<G, T, true, ITEMS, ROWS, VEC>(acc, xp, o0, h0, c0);
        }
        int count0 = 1, extent0 = 1;
        if (!kMax) pool_avg_count(G::axis(0), o0, count0, extent0);
#pragma unroll
        for (int r = 0; r < ROWS; ++r) {
            const int o1 = g1 * ROWS + r;
            int count1 = 1, extent1 = 1;
            if (!kMax) pool_avg_count(G::axis(1), o1, count1, extent1);
            PoolStage<ITEMS> out;
#pragma unroll
            for (int i = 0; i < ITEMS; ++i) {
                float val = acc[r][i];
                if (!kMax) {
                    int count2, extent2;
                    pool_avg_count(G::axis(2), g2 * ITEMS + i, count2, extent2);
                    const int count = count0 * count1 * count2;
                    const int divisor = G::kDivisor > 0 ? int(G::kDivisor)
                                        : G::kIncludePad ? extent0 * extent1 * extent2
                                                         : count;
                    val = count == 0 ? 0.f : val / float(divisor);
                }
                out.v[i] = val;
            }
            // outputs of this row the tile holds: the row's first ITEMS, fewer at its end
            const int left = T::kOut2 - g2 * ITEMS;
            const int count = !active || o1 >= T::kOut1 ? 0 : left < ITEMS ? left : ITEMS;
            const int64_t first =
                ((int64_t(plane) * T::kOut0 + o0) * T::kOut1 + o1) * T::kOut2 + g2 * ITEMS;
            if constexpr (ITEMS == 1) {
                if (count > 0) {
                    const float one[1] = {out.v[0]};
                    chain.template run<1>(one, first);
                }
                continue;
            }
            stage_vals[warp0 + lane] = out;
            stage_first[warp0 + lane] = first;
            stage_count[warp0 + lane] = count;
            __syncwarp();
#pragma unroll
            for (int k = 0; k < ITEMS; ++k) {
                const int slot = k * 32 + lane;  // lane `slot / ITEMS`'s output `slot % ITEMS`
                const int src = warp0 + slot / ITEMS, item = slot % ITEMS;
                if (item < stage_count[src]) {
                    const float one[1] = {stage_vals[src].v[item]};
                    chain.template run<1>(one, stage_first[src] + item);
                }
            }
            __syncwarp();
        }
    }
}

template <class G, int THREADS, int ITEMS, int LANES, typename TX, class Chain>
__device__ __forceinline__ void pool_outputs(const TX* __restrict__ x, int64_t planes,
                                             const Chain& chain) {
    static_assert(LANES >= 1 && LANES <= 32 && (LANES & (LANES - 1)) == 0 && THREADS % 32 == 0,
                  "LANES: a power of two up to a warp");
    constexpr bool kMax = G::kKind == kPoolMax || G::kKind == kPoolAdaptiveMax;
    const PoolAxis a0 = G::axis(0), a1 = G::axis(1), a2 = G::axis(2);
    const int64_t groups_per_row = (a2.out + ITEMS - 1) / ITEMS;
    const int64_t total = planes * a0.out * a1.out * groups_per_row;
    const int64_t in_plane = a0.in * a1.in * a2.in;
    const int lane = int(threadIdx.x) % LANES;
    constexpr int64_t kGroupsPerBlock = THREADS / LANES;
    // the loop runs while any group of the warp has work, so the shuffles see every lane
    const int64_t warp_first = (int64_t(blockIdx.x) * THREADS + (threadIdx.x & ~31u)) / LANES;
    for (int64_t base = warp_first; base < total; base += int64_t(gridDim.x) * kGroupsPerBlock) {
        const int64_t g = base + int64_t(threadIdx.x & 31u) / LANES;
        const bool active = g < total;
        const int64_t gg = active ? g : 0;
        const int64_t row = gg / groups_per_row;  // (plane, o0, o1)
        const int64_t ow0 = (gg - row * groups_per_row) * ITEMS;
        const int64_t o1 = row % a1.out, o0 = (row / G::axis(1).out) % a0.out;
        const int64_t plane = row / (a1.out * G::axis(0).out);
        const TX* xp = x + plane * in_plane;
        const PoolTaps t0 = pool_taps<G::kKind>(a0, o0), t1 = pool_taps<G::kKind>(a1, o1);
#pragma unroll
        for (int it = 0; it < ITEMS; ++it) {
            const int64_t ow = ow0 + it;
            const bool valid = active && ow < a2.out;
            if (LANES == 1 && !valid) break;
            const PoolTaps t2 = pool_taps<G::kKind>(a2, valid ? ow : 0);
            float acc = pool_window<G::kKind, LANES>(xp, a1, a2, t0, t1, t2, valid, lane);
            if (!valid || lane != 0) continue;
            if (!kMax) {
                const int64_t count = t0.count * t1.count * t2.count;
                const int64_t divisor = G::kKind == kPoolAdaptiveAvg ? count
                                        : G::kDivisor > 0           ? G::kDivisor
                                        : G::kIncludePad            ? t0.extent * t1.extent * t2.extent
                                                                    : count;
                acc = count == 0 ? 0.f : acc / float(divisor);
            }
            const float v[1] = {acc};
            chain.template run<1>(v, row * a2.out + ow);
        }
    }
}

}  // namespace kforge
