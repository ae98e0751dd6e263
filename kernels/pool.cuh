// Pooling (max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool) over x [planes, d, h, w]
// (1-3 spatial axes; the lowering pads a lower rank with leading size-1 axes), driven by a
// generated geometry struct G and a chain functor (codegen/chain.h) applied to each pooled value.
// A group of LANES threads (1: one thread; up to a warp: large windows, global pooling) computes
// ITEMS consecutive outputs along the last axis (neighbouring windows share input rows, so their
// loads hit the same cache lines); a grid-stride loop covers the rest.
// Windows are problem/pool.h's pool_taps, computed in f32 from inputs loaded as f32: max keeps a
// NaN tap (PyTorch's max_pool), avg divides by G::kDivisor if set, else by the window's extent
// with the padding (G::kIncludePad) or by the taps inside the input; a window without taps gives
// 0 (avg) or -inf (max).
//
// G provides: static constexpr int kKind (kPoolMax, kPoolAvg, kPoolAdaptiveAvg,
// kPoolAdaptiveMax), bool kIncludePad, int64_t kDivisor, and `static __device__ PoolAxis
// axis(int i)` for i = 0, 1, 2 (d, h, w).
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
        const int64_t o1 = row % a1.out, o0 = (row / a1.out) % a0.out;
        const int64_t plane = row / (a1.out * a0.out);
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
