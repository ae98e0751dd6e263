// Layout kernels around the CUTLASS implicit-GEMM conv2d (codegen/lower_conv.cpp). CUTLASS's
// sm80 fprop reads NHWC activations and KRSC filters whose channel rows are 16-byte aligned;
// PyTorch's tensors are NCHW and KCRS with any C (3 for images). So a conv2d kernel runs as
//   1. x  [N, C, H, W] -> xs [N, H, W, Cp]    channels last, channels Cp - C.. zero
//   2. w  [K, C, R, S] -> ws [Kp, R, S, Cp]   the same transform; filters K..Kp-1 all zero
//   3. CUTLASS fprop  xs, ws -> ys [N, P, Q, Kp] (f32 accumulators)
//   4. ys -> y [N, K, P, Q] through a shared-memory tile, applying the kernel's chain
// Both transforms are a per-image transpose [C, HW] -> [HW, Cp] (the weight's "image" is one
// filter k, its HW is R*S). Each block moves a 32 (channels) x 32 (positions) tile through
// shared memory: the reads are coalesced along HW (NCHW rows), the writes along the output's
// contiguous run, which for Cp <= 32 is the whole tile (HW positions x Cp channels, one span).
// The output kernel is the transpose back: reads along Kp, writes along P*Q.
//
// The index math lives in __host__ __device__ phase functions (gather into the tile, then
// scatter out of it) that the device kernels call around one __syncthreads; the host tests
// (tests/codegen/conv_layout_test.cpp) run the same functions block by block and thread by
// thread to check them against direct loops.
#pragma once

#if defined(__CUDACC__)
#define KFORGE_CONV_HD __host__ __device__ __forceinline__
#else
#define KFORGE_CONV_HD inline
#endif

#include "kernels/cstdint.cuh"

namespace kforge {

inline constexpr int kConvTile = 32;      // a 32 x 32 element tile per block
inline constexpr int kConvTileRows = 8;   // of 32 x 8 threads
inline constexpr int kConvThreads = kConvTile * kConvTileRows;

// c rounded up to a multiple of `multiple`.
KFORGE_CONV_HD int64_t conv_round_up(int64_t c, int64_t multiple) {
    return (c + multiple - 1) / multiple * multiple;
}

// Block coordinates of the channels-last transform: bx over tiles of positions (HW), by over
// tiles of padded channels (Cp), bz the image (n for x, the filter k for w).
struct ConvBlock {
    int64_t bx, by, bz;
};

// Phase 1 of channels-last: thread (tx, ty) loads source rows c = 32 by + ty + 8j of image bz
// (source [images_valid, C, HW]) at positions 32 bx + tx into tile[c - 32 by][hw - 32 bx]. What
// lies outside the source (channels >= C, images >= images_valid, positions >= HW) is zero.
// load(offset) -> float reads the source element at that offset.
template <class Load>
KFORGE_CONV_HD void channels_last_gather(Load load, float (*tile)[kConvTile + 1], int64_t C,
                                         int64_t HW, int64_t images_valid, ConvBlock b, int tx,
                                         int ty) {
    const int64_t hw = b.bx * kConvTile + tx;
    for (int j = 0; j < kConvTile; j += kConvTileRows) {
        const int64_t c = b.by * kConvTile + ty + j;
        const bool inside = b.bz < images_valid && c < C && hw < HW;
        tile[ty + j][tx] = inside ? load((b.bz * C + c) * HW + hw) : 0.0f;
    }
}

// Zero insertion (a transposed convolution of stride s and dilation > 1, which CUTLASS's strided
// dgrad does not take, runs as a unit-stride dgrad of x with s - 1 zeros between neighbours):
// the source image is [C, D, H, W], the destination's positions the (D-1) sd + 1, (H-1) sh + 1,
// (W-1) sw + 1 grid; a destination position holds x where each coordinate is a multiple of its
// stride, zero elsewhere.
struct ConvUpsample {
    int64_t d, h, w;     // the source's spatial sizes
    int64_t sd, sh, sw;  // the strides (zeros between neighbours: s - 1)
};

// The source position of destination position `pos` (flat over the upsampled grid), or -1.
KFORGE_CONV_HD int64_t conv_upsample_source(const ConvUpsample& u, int64_t pos) {
    const int64_t wu = (u.w - 1) * u.sw + 1, hu = (u.h - 1) * u.sh + 1;
    const int64_t x = pos % wu, y = pos / wu % hu, z = pos / wu / hu;
    if (x % u.sw != 0 || y % u.sh != 0 || z % u.sd != 0) return -1;
    return (z / u.sd * u.h + y / u.sh) * u.w + x / u.sw;
}

// Phase 1 of channels-last with zero insertion: as channels_last_gather over the upsampled
// positions (HW = their count), reading source [images_valid, C, d*h*w].
template <class Load>
KFORGE_CONV_HD void channels_last_gather_upsampled(Load load, float (*tile)[kConvTile + 1],
                                                   int64_t C, const ConvUpsample& u,
                                                   int64_t images_valid, ConvBlock b, int tx,
                                                   int ty) {
    const int64_t HW = ((u.d - 1) * u.sd + 1) * ((u.h - 1) * u.sh + 1) * ((u.w - 1) * u.sw + 1);
    const int64_t hw = b.bx * kConvTile + tx;
    const int64_t src = hw < HW ? conv_upsample_source(u, hw) : -1;
    for (int j = 0; j < kConvTile; j += kConvTileRows) {
        const int64_t c = b.by * kConvTile + ty + j;
        const bool inside = b.bz < images_valid && c < C && src >= 0;
        tile[ty + j][tx] = inside ? load((b.bz * C + c) * (u.d * u.h * u.w) + src) : 0.0f;
    }
}

// Phase 1 of channels-last for a grouped transposed convolution's weight as one dense,
// block-diagonal KRSC filter: source [images_valid = C, Kg, HW] (w [C, K/groups, R, S]), image
// (input channel) bz of group bz / Cg holds source channel c - group * Kg at destination channel
// c for c in its group's Kg filters, zero elsewhere (the other groups' filters never see it).
template <class Load>
KFORGE_CONV_HD void channels_last_gather_block_diagonal(Load load, float (*tile)[kConvTile + 1],
                                                        int64_t Kg, int64_t Cg, int64_t HW,
                                                        int64_t images_valid, ConvBlock b,
                                                        int tx, int ty) {
    const int64_t hw = b.bx * kConvTile + tx;
    const int64_t first = b.bz / Cg * Kg;  // the image's group's first filter
    for (int j = 0; j < kConvTile; j += kConvTileRows) {
        const int64_t local = b.by * kConvTile + ty + j - first;
        const bool inside = b.bz < images_valid && local >= 0 && local < Kg && hw < HW;
        tile[ty + j][tx] = inside ? load((b.bz * Kg + local) * HW + hw) : 0.0f;
    }
}

// Phase 2 of channels-last: the block writes its tile to dst [images, HW, Cp]: the tile's
// cw = min(32, Cp - 32 by) channels of each of its hn = min(32, HW - 32 bx) positions, thread
// `tid` (0..255) taking elements tid, tid + 256, ... of that cw-fastest order, so consecutive
// threads write consecutive addresses (one contiguous span of hn * Cp elements when Cp <= 32).
// store(offset, value) writes one destination element.
template <class Store>
KFORGE_CONV_HD void channels_last_scatter(Store store, float (*tile)[kConvTile + 1],
                                          int64_t HW, int64_t Cp, ConvBlock b, int tid) {
    const int64_t hw0 = b.bx * kConvTile, c0 = b.by * kConvTile;
    const int64_t cw = Cp - c0 < kConvTile ? Cp - c0 : kConvTile;
    const int64_t hn = HW - hw0 < kConvTile ? HW - hw0 : kConvTile;
    if (cw <= 0 || hn <= 0) return;
    for (int64_t e = tid; e < cw * hn; e += kConvThreads) {
        const int64_t h = e / cw, c = e - h * cw;
        store((b.bz * HW + hw0 + h) * Cp + c0 + c, tile[c][h]);
    }
}

// The staged operands of the sm90 convolution (codegen/lower_conv_sm90.cpp): channel c of the
// Cc = chunks * cc padded channels lands in chunk j = c / cc at channel l = c % cc of
// dst [chunks, images, HW, parts * cc], once per part p at l + p * cc (3xTF32: the hi and lo
// parts whose products the tf32 convolution sums). Where a chunk's rows are its own packed
// tensor, the convolution over them is chunk j's share of the channel sum.
struct ConvSplit {
    int64_t cc;      // channels per chunk
    int64_t chunks;  // chunks * cc >= C
    int parts;       // copies of each channel per chunk (3: hi / lo parts, 1: one)
    int64_t images;  // the destination's images (gridDim.z)
};

// The chunking of a staged channel count C for a convolution of `taps` filter positions whose
// operands hold `parts` copies of each channel (3 for 3xTF32), padded to `multiple` channels
// (16 bytes): one chunk where parts * C * taps <= max_k (the tensor core's accumulation before
// an exact f32 add: lower_conv_sm90.cpp), else chunks of cc channels, a multiple of 32 (whole
// tile-K steps of f32) where 32 fit, each at most max_k / (parts * taps) and as even as the
// granularity allows. cc 0: not even `multiple` channels fit. The lowering (its buffers and
// launch grids) and the host param builder (its parts) call this one function.
KFORGE_CONV_HD ConvSplit conv_split_of(int64_t C, int64_t taps, int parts, int64_t multiple,
                                       int64_t max_k) {
    ConvSplit sp{0, 1, parts, 0};
    const int64_t cap = max_k / (parts * (taps > 0 ? taps : 1));
    const int64_t whole = conv_round_up(C, multiple);
    if (parts == 1 || whole <= cap) {
        sp.cc = whole;
        return sp;
    }
    const int64_t step = cap >= 32 ? 32 : multiple;
    const int64_t most = cap / step * step;
    if (most < multiple) return sp;  // cc 0
    sp.chunks = (C + most - 1) / most;
    sp.cc = conv_round_up((C + sp.chunks - 1) / sp.chunks, step);
    return sp;
}

// Phase 2 of the split staging: as channels_last_scatter over the tile's channels of
// [0, chunks * cc), calling store(offset, part, value) for each part of each element.
template <class Store>
KFORGE_CONV_HD void channels_last_scatter_split(Store store, float (*tile)[kConvTile + 1],
                                                int64_t HW, const ConvSplit& sp, ConvBlock b,
                                                int tid) {
    const int64_t cpad = sp.chunks * sp.cc;
    const int64_t hw0 = b.bx * kConvTile, c0 = b.by * kConvTile;
    const int64_t cw = cpad - c0 < kConvTile ? cpad - c0 : kConvTile;
    const int64_t hn = HW - hw0 < kConvTile ? HW - hw0 : kConvTile;
    if (cw <= 0 || hn <= 0) return;
    const int64_t row = sp.parts * sp.cc;
    for (int64_t e = tid; e < cw * hn; e += kConvThreads) {
        const int64_t h = e / cw, c = c0 + e - h * cw;
        const int64_t j = c / sp.cc, l = c - j * sp.cc;
        const int64_t base = ((j * sp.images + b.bz) * HW + hw0 + h) * row + l;
        for (int p = 0; p < sp.parts; ++p) store(base + p * sp.cc, p, tile[c - c0][h]);
    }
}

// Block coordinates of the output transform: bx over tiles of P*Q, by over tiles of K, bz = n.
// Phase 1: thread (tx, ty) loads ys[n, pq, k] (ys [N, PQ, Kp]) for k = 32 by + tx and
// pq = 32 bx + ty + 8j into tile[pq - 32 bx][k - 32 by] (zero outside K x PQ).
template <class Load>
KFORGE_CONV_HD void output_gather(Load load, float (*tile)[kConvTile + 1], int64_t K, int64_t PQ,
                                  int64_t Kp, ConvBlock b, int tx, int ty) {
    const int64_t k = b.by * kConvTile + tx;
    for (int j = 0; j < kConvTile; j += kConvTileRows) {
        const int64_t pq = b.bx * kConvTile + ty + j;
        tile[ty + j][tx] = (k < K && pq < PQ) ? load((b.bz * PQ + pq) * Kp + k) : 0.0f;
    }
}

// Phase 2: thread (tx, ty) emits y[n, k, pq] (NCHW linear index (n K + k) PQ + pq) for
// pq = 32 bx + tx and k = 32 by + ty + 8j: emit(index, value). Consecutive lanes emit
// consecutive indices.
template <class Emit>
KFORGE_CONV_HD void output_scatter(Emit emit, float (*tile)[kConvTile + 1], int64_t K,
                                   int64_t PQ, ConvBlock b, int tx, int ty) {
    const int64_t pq = b.bx * kConvTile + tx;
    if (pq >= PQ) return;
    for (int j = 0; j < kConvTile; j += kConvTileRows) {
        const int64_t k = b.by * kConvTile + ty + j;
        if (k < K) emit((b.bz * K + k) * PQ + pq, tile[tx][ty + j]);
    }
}

}  // namespace kforge

#if defined(__CUDACC__)

#include "kernels/common.cuh"
#include "kernels/stage_operand.cuh"

namespace kforge {

// Steps 1 and 2: src [images_valid, C, HW] (any float dtype) -> dst [gridDim.z, HW, Cp] of
// TOut. Launch: grid (ceil(HW / 32), ceil(Cp / 32), images), block 32 x 8.
template <class TIn, class TOut>
__device__ __forceinline__ void conv_channels_last(const TIn* __restrict__ src,
                                                   TOut* __restrict__ dst, int64_t C, int64_t HW,
                                                   int64_t Cp, int64_t images_valid) {
    __shared__ float tile[kConvTile][kConvTile + 1];
    const ConvBlock b{int64_t(blockIdx.x), int64_t(blockIdx.y), int64_t(blockIdx.z)};
    channels_last_gather([&](int64_t o) { return to_f32(src[o]); }, tile, C, HW, images_valid, b,
                         threadIdx.x, threadIdx.y);
    __syncthreads();
    channels_last_scatter([&](int64_t o, float v) { dst[o] = from_f32<TOut>(v); }, tile, HW, Cp,
                          b, threadIdx.y * kConvTile + threadIdx.x);
}

// Steps 1 with zero insertion: src [images_valid, C, d, h, w] -> dst [gridDim.z, HWu, Cp], HWu
// the upsampled positions (ConvUpsample). Launch: grid (ceil(HWu / 32), ceil(Cp / 32), images).
template <class TIn, class TOut>
__device__ __forceinline__ void conv_channels_last_upsampled(
    const TIn* __restrict__ src, TOut* __restrict__ dst, int64_t C, ConvUpsample u, int64_t Cp,
    int64_t images_valid) {
    __shared__ float tile[kConvTile][kConvTile + 1];
    const ConvBlock b{int64_t(blockIdx.x), int64_t(blockIdx.y), int64_t(blockIdx.z)};
    channels_last_gather_upsampled([&](int64_t o) { return to_f32(src[o]); }, tile, C, u,
                                   images_valid, b, threadIdx.x, threadIdx.y);
    __syncthreads();
    const int64_t HW = ((u.d - 1) * u.sd + 1) * ((u.h - 1) * u.sh + 1) * ((u.w - 1) * u.sw + 1);
    channels_last_scatter([&](int64_t o, float v) { dst[o] = from_f32<TOut>(v); }, tile, HW, Cp,
                          b, threadIdx.y * kConvTile + threadIdx.x);
}

// Step 2 of a grouped transposed convolution: w [images_valid, Kg, HW] -> the block-diagonal
// dst [gridDim.z, HW, Kp] (channels_last_gather_block_diagonal). Launch: grid (ceil(HW / 32),
// ceil(Kp / 32), images).
template <class TIn, class TOut>
__device__ __forceinline__ void conv_channels_last_block_diagonal(
    const TIn* __restrict__ src, TOut* __restrict__ dst, int64_t Kg, int64_t Cg, int64_t HW,
    int64_t Kp, int64_t images_valid) {
    __shared__ float tile[kConvTile][kConvTile + 1];
    const ConvBlock b{int64_t(blockIdx.x), int64_t(blockIdx.y), int64_t(blockIdx.z)};
    channels_last_gather_block_diagonal([&](int64_t o) { return to_f32(src[o]); }, tile, Kg, Cg,
                                        HW, images_valid, b, threadIdx.x, threadIdx.y);
    __syncthreads();
    channels_last_scatter([&](int64_t o, float v) { dst[o] = from_f32<TOut>(v); }, tile, HW, Kp,
                          b, threadIdx.y * kConvTile + threadIdx.x);
}

// Steps 1 and 2 of the sm90 convolution: src [images_valid, C, HW] -> dst [chunks, images, HW,
// parts * cc] (ConvSplit). TOut float: each part tf32-rounded, part p holding lo(v) where bit p
// of LO_MASK is set (stage_operand.cuh's tf32_split), else hi(v); ROUND false (16-bit
// operands): the value converted as it is. Launch: grid (ceil(HW / 32), ceil(chunks * cc / 32),
// images), block 32 x 8.
template <bool ROUND, unsigned LO_MASK, class TIn, class TOut>
__device__ __forceinline__ void conv_channels_last_split(const TIn* __restrict__ src,
                                                         TOut* __restrict__ dst, int64_t C,
                                                         int64_t HW, ConvSplit sp,
                                                         int64_t images_valid) {
    __shared__ float tile[kConvTile][kConvTile + 1];
    const ConvBlock b{int64_t(blockIdx.x), int64_t(blockIdx.y), int64_t(blockIdx.z)};
    channels_last_gather([&](int64_t o) { return to_f32(src[o]); }, tile, C, HW, images_valid, b,
                         threadIdx.x, threadIdx.y);
    __syncthreads();
    channels_last_scatter_split(
        [&](int64_t o, int p, float v) {
            if constexpr (ROUND) {
                const Tf32Split s = tf32_split(v);
                dst[o] = from_f32<TOut>((LO_MASK >> p) & 1u ? s.lo : s.hi);
            } else {
                dst[o] = from_f32<TOut>(v);
            }
        },
        tile, HW, sp, b, threadIdx.y * kConvTile + threadIdx.x);
}

// Step 4: ys [N, PQ, Kp] f32 -> the chain at every y [N, K, P, Q] element (its stores write y).
// Launch: grid (ceil(PQ / 32), ceil(K / 32), N), block 32 x 8.
template <class Chain>
__device__ __forceinline__ void conv_output_nchw(const float* __restrict__ ys, int64_t K,
                                                 int64_t PQ, int64_t Kp, const Chain& chain) {
    __shared__ float tile[kConvTile][kConvTile + 1];
    const ConvBlock b{int64_t(blockIdx.x), int64_t(blockIdx.y), int64_t(blockIdx.z)};
    output_gather([&](int64_t o) { return ys[o]; }, tile, K, PQ, Kp, b, threadIdx.x,
                  threadIdx.y);
    __syncthreads();
    output_scatter(
        [&](int64_t i, float v) {
            const float in[1] = {v};
            chain.template run<1>(in, i);
        },
        tile, K, PQ, b, threadIdx.x, threadIdx.y);
}

}  // namespace kforge

#endif  // __CUDACC__
