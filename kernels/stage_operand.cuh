// Operand staging for Hopper tf32 GEMMs (codegen/gemm_stage.h): copies one f32 operand into a
// K-major workspace that the sm90 TMA/wgmma kernel reads, optionally split for 3xTF32.
//
// wgmma reads tf32 operands from shared memory only K-major, and CUTLASS 4.2 has no sm90 3xTF32
// mainloop. Both are solved by one copy before the GEMM:
//   - an MN-major operand is transposed to K-major (through a padded shared-memory tile, so the
//     reads and the writes are both coalesced and the tile has no bank conflicts);
//   - 3xTF32 (math tf32x3) is turned into one tf32 GEMM over K' = 3K: with hi(x) = x rounded to
//     tf32 and lo(x) = tf32(x - hi(x)), A B ~ hi(A)hi(B) + hi(A)lo(B) + lo(A)hi(B) = A' B' where
//     A' = [hi(A) | hi(A) | lo(A)] and B' = [hi(B) ; lo(B) ; hi(B)] along K. hi and lo have their
//     low 13 mantissa bits zero, so the tensor core (which ignores those bits) reads them exactly.
//
// Layout: per batch the source is a row-major [rows, cols] matrix. TRANSPOSE = false: K is
// `cols` and the destination is [rows, PARTS * cols]; TRANSPOSE = true: K is `rows` and the
// destination is [cols, PARTS * rows]. Part p of the destination's K axis holds lo(x) where bit
// p of LO_MASK is set, else hi(x) (PARTS = 1, LO_MASK = 0: a tf32-rounded copy).
//
// The rounding helpers are __host__ __device__ so the host tests check the same arithmetic.
#pragma once

#if !defined(__CUDACC_RTC__)
#include <cstring>
#endif
#if defined(__CUDACC__)
#define KFORGE_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define KFORGE_HOST_DEVICE inline
#endif

#include "kernels/cstdint.cuh"

namespace kforge {

KFORGE_HOST_DEVICE uint32_t f32_bits(float x) {
#if defined(__CUDA_ARCH__)
    return __float_as_uint(x);
#else
    uint32_t u;
    std::memcpy(&u, &x, sizeof u);
    return u;
#endif
}

KFORGE_HOST_DEVICE float f32_from_bits(uint32_t u) {
#if defined(__CUDA_ARCH__)
    return __uint_as_float(u);
#else
    float x;
    std::memcpy(&x, &u, sizeof x);
    return x;
#endif
}

// x rounded to tf32 (1 sign, 8 exponent, 10 mantissa bits): round to nearest, ties to even, on
// the 13 dropped mantissa bits, which are zero in the result. Inf and NaN pass through (a NaN
// keeps a nonzero mantissa bit). A finite x that would round up to infinity is truncated
// instead, so hi(x) + lo(x) stays finite.
KFORGE_HOST_DEVICE float tf32_round(float x) {
    const uint32_t u = f32_bits(x);
    if ((u & 0x7f800000u) == 0x7f800000u)  // inf or NaN
        return (u & 0x007fffffu) ? f32_from_bits(u | 0x00400000u) : x;
    const uint32_t rounded = (u + 0x00000fffu + ((u >> 13) & 1u)) & 0xffffe000u;
    if ((rounded & 0x7f800000u) == 0x7f800000u) return f32_from_bits(u & 0xffffe000u);
    return f32_from_bits(rounded);
}

struct Tf32Split {
    float hi;
    float lo;
};

// hi = tf32(x), lo = tf32(x - hi): x - hi is exact in f32, and hi + lo carries 22 of x's 24
// significand bits (relative error at most about 2^-22).
KFORGE_HOST_DEVICE Tf32Split tf32_split(float x) {
    const float hi = tf32_round(x);
    const uint32_t e = f32_bits(x) & 0x7f800000u;
    if (e == 0x7f800000u) return {hi, 0.0f};
    return {hi, tf32_round(x - hi)};
}

#if defined(__CUDACC__)

inline constexpr int kStageTile = 32;      // a 32 x 32 element tile per block
inline constexpr int kStageTileRows = 8;   // of 32 x 8 threads, 4 rows each

// One block stages one 32 x 32 tile of the source: blockIdx.x over column tiles, blockIdx.y
// over row tiles, blockIdx.z the batch. Launch with 32 x 8 threads.
template <bool TRANSPOSE, int PARTS, int LO_MASK>
__device__ __forceinline__ void stage_operand(const float* __restrict__ src,
                                              float* __restrict__ dst, int64_t rows,
                                              int64_t cols) {
    static_assert(PARTS >= 1 && PARTS <= 3, "1 (copy) or 3 (3xTF32) parts along K");
    const int64_t batch = blockIdx.z;
    src += batch * rows * cols;
    dst += batch * rows * cols * PARTS;
    const int64_t r0 = int64_t(blockIdx.y) * kStageTile;
    const int64_t c0 = int64_t(blockIdx.x) * kStageTile;
    const int tx = threadIdx.x, ty = threadIdx.y;
    if constexpr (!TRANSPOSE) {
        // K-major already: row r of the destination is PARTS copies of source row r.
        const int64_t c = c0 + tx;
        const int64_t k_out = PARTS * cols;
#pragma unroll
        for (int j = 0; j < kStageTile; j += kStageTileRows) {
            const int64_t r = r0 + ty + j;
            if (r >= rows || c >= cols) continue;
            const Tf32Split s = tf32_split(src[r * cols + c]);
#pragma unroll
            for (int p = 0; p < PARTS; ++p)
                dst[r * k_out + p * cols + c] = ((LO_MASK >> p) & 1) ? s.lo : s.hi;
        }
    } else {
        // MN-major: source rows are K. Read row-contiguous, write the transposed tile
        // row-contiguous; the +1 column of padding puts a tile column in 32 distinct banks.
        __shared__ float tile[kStageTile][kStageTile + 1];
#pragma unroll
        for (int j = 0; j < kStageTile; j += kStageTileRows) {
            const int64_t r = r0 + ty + j, c = c0 + tx;
            tile[ty + j][tx] = (r < rows && c < cols) ? src[r * cols + c] : 0.0f;
        }
        __syncthreads();
        const int64_t k_out = PARTS * rows;
#pragma unroll
        for (int j = 0; j < kStageTile; j += kStageTileRows) {
            const int64_t out_row = c0 + ty + j;  // an M (or N) index
            const int64_t k = r0 + tx;
            if (out_row >= cols || k >= rows) continue;
            const Tf32Split s = tf32_split(tile[tx][ty + j]);
#pragma unroll
            for (int p = 0; p < PARTS; ++p)
                dst[out_row * k_out + p * rows + k] = ((LO_MASK >> p) & 1) ? s.lo : s.hi;
        }
    }
}

#endif  // __CUDACC__

}  // namespace kforge
