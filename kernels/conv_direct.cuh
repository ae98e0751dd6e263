// kforge's direct convolution (`schedule direct`, codegen/lower_conv_direct.cpp): a dense
// conv1d / conv2d / conv3d forward in one launch, NCHW (NCDHW) in and out, exact f32 FMA on the
// CUDA cores, the chain applied to each output in registers. For filters of few channels
// (C * T * R * S up to a few hundred: a network's first layer, Level 2's 3- and 8-channel
// convolutions) the implicit GEMM pads C to its tile and spends four launches on layouts (the
// NHWC staging and the NHWC accumulators read back through the chain); this kernel reads the
// input once per block tile and writes the output once.
//
// Block (x, y, z): spatial tile x (tiles along Q fastest) of kTileP x kTileQ output positions,
// filters [y * kTileN, (y + 1) * kTileN), image and output depth z = n * Z + zo. The block walks
// the channels in steps of kTileC; each step stages the input patch its positions read
// ([kTileC][kPatchT][kPatchH][kPatchW], zeros outside the input) and the step's weights
// ([kTileC][T*R*S][kTileN], filters innermost) in shared memory with cp.async (zero-filled
// past C and K), kStages steps in flight. Thread tid = g * kPosThreads + t holds filters
// [g * kFK, (g + 1) * kFK) of the tile at positions t, t + kPosThreads, .. (kFP of them, in the
// tile's row-major order: a warp's lanes are consecutive positions, so its stores coalesce).
//
// The phases (load, accumulate, store) are plain functions of the thread index: the direct
// convolution's host-run test runs them for every thread of every block of the lowered launch.
#pragma once

#include "kernels/cstdint.cuh"

namespace kforge {

// Run-time sizes: input [N, C, D, H, W], output [N, K, Z, P, Q] (D = Z = 1 for 2-D, and also
// H = P = 1 for 1-D).
struct ConvDirectSizes {
    int64_t n, c, d, h, w;
    int64_t k, z, p, q;
};

// G (generated per kernel) declares, all static constexpr int: kT, kR, kS (filter taps),
// kStrideD/H/W, kPadD/H/W, kDilD/H/W, kTileP, kTileQ, kTileN, kTileC, kStages, kFK, kFP,
// kThreads, kPatchT, kPatchH, kPatchW; and kUpD/H/W, kTransposed, kGroups (a block's filters
// lie in one group: kTileN divides the filters of a group; it reads that group's channels
// [g * C / kGroups, (g + 1) * C / kGroups) only). A transposed convolution
// (kTransposed) runs as the convolution it equals (dsl/conv_direct.h): stride 1 over its input
// with kUp - 1 zeros between neighbours, the filter w [C, K, T, R, S] read flipped.
template <class G> struct ConvDirectLayout {
    static constexpr int kTaps = G::kT * G::kR * G::kS;
    static constexpr int kPosThreads = G::kTileP * G::kTileQ / G::kFP;
    static constexpr int kPatch = G::kTileC * G::kPatchT * G::kPatchH * G::kPatchW;
    static constexpr int kWeights = G::kTileC * kTaps * G::kTileN;
    // floats a stage; the weights start 16-byte aligned (read as float4 where kFK allows)
    static constexpr int kPatchPadded = (kPatch + 3) / 4 * 4;
    static constexpr int kStage = kPatchPadded + kWeights;
    static_assert(kPosThreads * (G::kTileN / G::kFK) == G::kThreads, "threads");
};

// Block coordinates: the tile's first output position, filter and the image / output depth.
struct ConvDirectBlock {
    int64_t n, z, p0, q0, k0;
};

template <class G>
__device__ __forceinline__ ConvDirectBlock conv_direct_block(const ConvDirectSizes& s, int64_t bx,
                                                             int64_t by, int64_t bz) {
    const int64_t tiles_q = (s.q + G::kTileQ - 1) / G::kTileQ;
    return ConvDirectBlock{bz / s.z, bz % s.z, (bx / tiles_q) * G::kTileP,
                           (bx % tiles_q) * G::kTileQ, by * G::kTileN};
}

// Thread tid's share of staging channel step c0 into `stage` (one stage's floats):
// copy(dst, src, valid) copies one float, or writes zero where !valid (src then points at a
// valid address of the same tensor).
template <class G, class Copy>
__device__ __forceinline__ void conv_direct_load(const float* __restrict__ x,
                                                 const float* __restrict__ w, float* stage,
                                                 const ConvDirectSizes& s,
                                                 const ConvDirectBlock& b, int64_t c0, int tid,
                                                 const Copy& copy) {
    using L = ConvDirectLayout<G>;
    const int64_t d0 = b.z * G::kStrideD - G::kPadD, h0 = b.p0 * G::kStrideH - G::kPadH,
                  w0 = b.q0 * G::kStrideW - G::kPadW;
    // the block's group: its channels [cb, cb + cg), its filters [kb, kb + kg)
    const int64_t cg = s.c / G::kGroups, kg = s.k / G::kGroups;
    const int64_t kb = b.k0 / kg * kg, cb = b.k0 / kg * cg;
    for (int e = tid; e < L::kPatch; e += G::kThreads) {
        const int iw = e % G::kPatchW;
        int rest = e / G::kPatchW;
        const int ih = rest % G::kPatchH;
        rest /= G::kPatchH;
        const int it = rest % G::kPatchT, c = rest / G::kPatchT;
        // the (zero-inserted) input's coordinates, then the input's
        const int64_t gc = cb + c0 + c, ud = d0 + it, uh = h0 + ih, uw = w0 + iw;
        const int64_t gd = ud / G::kUpD, gh = uh / G::kUpH, gw = uw / G::kUpW;
        const bool ok = c0 + c < cg && ud >= 0 && ud % G::kUpD == 0 && gd < s.d && uh >= 0 &&
                        uh % G::kUpH == 0 && gh < s.h && uw >= 0 && uw % G::kUpW == 0 &&
                        gw < s.w;
        copy(stage + e, ok ? x + (((b.n * s.c + gc) * s.d + gd) * s.h + gh) * s.w + gw : x, ok);
    }
    // weights in the source's order (taps, then channels, then filters: coalesced reads),
    // stored filters innermost
    float* ws = stage + L::kPatchPadded;
    for (int e = tid; e < L::kWeights; e += G::kThreads) {
        const int tap = e % L::kTaps;
        const int rest = e / L::kTaps;
        const int c = rest % G::kTileC, f = rest / G::kTileC;
        const int64_t gk = b.k0 + f, gc = c0 + c;  // gc: the channel within the group
        const bool ok = gk < s.k && gc < cg;
        // w [K, C / groups, taps]; transposed: w [C, K / groups, taps] flipped (the reversed
        // row-major tap flips every axis)
        const int64_t src = G::kTransposed
                                ? ((cb + gc) * kg + gk - kb) * L::kTaps + (L::kTaps - 1 - tap)
                                : (gk * cg + gc) * L::kTaps + tap;
        copy(ws + (c * L::kTaps + tap) * G::kTileN + f, ok ? w + src : w, ok);
    }
}

template <int N>
__device__ __forceinline__ void conv_direct_weights(float (&v)[N], const float* p) {
#if defined(__CUDA_ARCH__)
    if constexpr (N % 4 == 0) {
#pragma unroll
        for (int i = 0; i < N / 4; ++i) {
            const float4 q = reinterpret_cast<const float4*>(p)[i];
            v[4 * i] = q.x, v[4 * i + 1] = q.y, v[4 * i + 2] = q.z, v[4 * i + 3] = q.w;
        }
        return;
    }
#endif
#pragma unroll
    for (int i = 0; i < N; ++i) v[i] = p[i];
}

// Thread tid's products over one staged channel step.
template <class G>
__device__ __forceinline__ void conv_direct_accumulate(const float* stage, int tid,
                                                       float (&acc)[G::kFK][G::kFP]) {
    using L = ConvDirectLayout<G>;
    const int g = tid / L::kPosThreads, t = tid % L::kPosThreads;
    int off[G::kFP];  // each position's patch offset at tap (0, 0, 0)
#pragma unroll
    for (int j = 0; j < G::kFP; ++j) {
        const int lin = t + j * L::kPosThreads;
        off[j] = (lin / G::kTileQ) * G::kStrideH * G::kPatchW + (lin % G::kTileQ) * G::kStrideW;
    }
    const float* ws = stage + L::kPatchPadded + g * G::kFK;
#pragma unroll 1
    for (int c = 0; c < G::kTileC; ++c) {
#pragma unroll
        for (int it = 0; it < G::kT; ++it)
#pragma unroll
            for (int r = 0; r < G::kR; ++r)
#pragma unroll
                for (int sx = 0; sx < G::kS; ++sx) {
                    const int tap = (it * G::kR + r) * G::kS + sx;
                    float wv[G::kFK];
                    conv_direct_weights(wv, ws + (c * L::kTaps + tap) * G::kTileN);
                    const float* xp = stage + ((c * G::kPatchT + it * G::kDilD) * G::kPatchH +
                                               r * G::kDilH) * G::kPatchW + sx * G::kDilW;
#pragma unroll
                    for (int j = 0; j < G::kFP; ++j) {
                        const float xv = xp[off[j]];
#pragma unroll
                        for (int f = 0; f < G::kFK; ++f) acc[f][j] = fmaf(wv[f], xv, acc[f][j]);
                    }
                }
    }
}

// Thread tid's outputs through the chain (its run<1> at the linear NK(Z)PQ index).
template <class G, class Chain>
__device__ __forceinline__ void conv_direct_store(const float (&acc)[G::kFK][G::kFP],
                                                  const ConvDirectSizes& s,
                                                  const ConvDirectBlock& b, int tid,
                                                  const Chain& chain) {
    using L = ConvDirectLayout<G>;
    const int g = tid / L::kPosThreads, t = tid % L::kPosThreads;
#pragma unroll
    for (int f = 0; f < G::kFK; ++f) {
        const int64_t k = b.k0 + g * G::kFK + f;
        if (k >= s.k) break;
#pragma unroll
        for (int j = 0; j < G::kFP; ++j) {
            const int lin = t + j * L::kPosThreads;
            const int64_t p = b.p0 + lin / G::kTileQ, q = b.q0 + lin % G::kTileQ;
            if (p >= s.p || q >= s.q) continue;
            const float v[1] = {acc[f][j]};
            chain.template run<1>(v, (((b.n * s.k + k) * s.z + b.z) * s.p + p) * s.q + q);
        }
    }
}

#if defined(__CUDACC__)
// One float global -> shared with cp.async; src-size 0 writes the zero.
__device__ __forceinline__ void conv_direct_copy(float* dst, const float* src, bool ok) {
    const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(dst));
    asm volatile("cp.async.ca.shared.global [%0], [%1], 4, %2;\n" ::"r"(sa), "l"(src),
                 "r"(ok ? 4 : 0)
                 : "memory");
}

// The kernel body: blockDim.x == G::kThreads, dynamic shared memory of
// G::kStages * ConvDirectLayout<G>::kStage floats.
template <class G, class Chain>
__device__ __forceinline__ void conv_direct(const float* __restrict__ x,
                                            const float* __restrict__ w, const ConvDirectSizes& s,
                                            const Chain& chain) {
    using L = ConvDirectLayout<G>;
    extern __shared__ float4 conv_direct_smem4[];
    float* smem = reinterpret_cast<float*>(conv_direct_smem4);
    const int tid = int(threadIdx.x);
    const ConvDirectBlock b = conv_direct_block<G>(s, blockIdx.x, blockIdx.y, blockIdx.z);
    const auto copy = [](float* dst, const float* src, bool ok) { conv_direct_copy(dst, src, ok); };
    const int64_t steps = (s.c / G::kGroups + G::kTileC - 1) / G::kTileC;
    float acc[G::kFK][G::kFP];
#pragma unroll
    for (int f = 0; f < G::kFK; ++f)
#pragma unroll
        for (int j = 0; j < G::kFP; ++j) acc[f][j] = 0.f;
    // kStages - 1 steps in flight before the first is read
#pragma unroll
    for (int i = 0; i < G::kStages - 1; ++i) {
        if (i < steps) conv_direct_load<G>(x, w, smem + i * L::kStage, s, b, i * G::kTileC, tid, copy);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
    }
    for (int64_t i = 0; i < steps; ++i) {
        const int64_t next = i + G::kStages - 1;
        if (next < steps)  // its buffer's last reader was step i - 1, before the last barrier
            conv_direct_load<G>(x, w, smem + (next % G::kStages) * L::kStage, s, b,
                                next * G::kTileC, tid, copy);
        asm volatile("cp.async.commit_group;\n" ::: "memory");
        asm volatile("cp.async.wait_group %0;\n" ::"n"(G::kStages - 1) : "memory");
        __syncthreads();
        conv_direct_accumulate<G>(smem + (i % G::kStages) * L::kStage, tid, acc);
        __syncthreads();
    }
    conv_direct_store<G>(acc, s, b, tid, chain);
}
#endif  // __CUDACC__

}  // namespace kforge
