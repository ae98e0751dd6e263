// Normalizations of a row: layer_norm (biased variance), rms_norm and group_norm (PyTorch
// semantics; weight and bias optional). group_norm: x is [N, C, *] and a row is one group's
// C/G * spatial contiguous elements; the affine parameters are per channel.
//
// Cached rows (ITEMS > 0): mean, then the sum of squared deviations over the registers (exact
// two-step variance), one read of memory. Streamed rows: one statistics sweep with moments
// shifted by the row's first element (sum (x-K), sum (x-K)^2; stable while K is near the
// mean), then the output sweep: two reads.
//
// l1_normalize / l2_normalize (x / max(sum|x| or sqrt(sum x^2), eps); eps 0: plain division, a
// zero row gives 0 * inf = NaN as 0 / 0 does) take rms_norm's path: one sum per row, then every
// element scaled by the row's reciprocal norm.
#pragma once

#include "kernels/row.cuh"

namespace kforge {

enum class NormMode { kLayerNorm, kRmsNorm, kGroupNorm, kL1Normalize, kL2Normalize };

struct NormShape {
    float eps;
    int64_t groups;          // group_norm: G
    int64_t group_channels;  // group_norm: C / G
    int64_t spatial;         // group_norm: prod(*) (elements per channel)
};

// One entry point. x: [rows, n]; w, b: [n] (layer/rms) or [C] (group), nullptr when absent
// (HAS_W/HAS_B false). Launch like softmax_rows.
template <class C, NormMode M, bool HAS_W, bool HAS_B, typename T, typename TW, typename TB,
          class Chain>
__device__ __forceinline__ void norm_rows(const T* __restrict__ x, const TW* __restrict__ w,
                                          const TB* __restrict__ b, int64_t rows, int64_t n,
                                          NormShape shape, const Chain& chain) {
    const RowPlace p = row_place<C>(rows, n);
    RowView<C, T> rv(x, n, p);
    rv.load();
    __shared__ ReduceSmem<C, float> s1;
    __shared__ ReduceSmem<C, float2> s2;
    const float inv_n = 1.f / float(n);

    float mean = 0.f, rstd;
    if constexpr (M == NormMode::kRmsNorm || M == NormMode::kL1Normalize ||
                  M == NormMode::kL2Normalize) {
        float sq = 0.f;
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j)
                sq += M == NormMode::kL1Normalize ? fabsf(v[j]) : v[j] * v[j];
        });
        const float total = row_allreduce<C>(sq, OpSum{}, s1);
        if constexpr (M == NormMode::kRmsNorm) {
            rstd = rsqrtf(total * inv_n + shape.eps);
        } else {
            const float norm = M == NormMode::kL2Normalize ? sqrtf(total) : total;
            rstd = 1.f / (norm < shape.eps ? shape.eps : norm);  // clamp_min; a NaN stays NaN
        }
    } else if constexpr (C::ITEMS > 0) {
        float s = 0.f;
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) s += v[j];
        });
        mean = row_allreduce<C>(s, OpSum{}, s1) * inv_n;
        float d2 = 0.f;
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) d2 += (v[j] - mean) * (v[j] - mean);
        });
        rstd = rsqrtf(row_allreduce<C>(d2, OpSum{}, s1) * inv_n + shape.eps);
    } else {
        const float k = p.valid ? to_f32(x[p.row * n]) : 0.f;
        float2 acc = make_float2(0.f, 0.f);
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) {
                const float d = v[j] - k;
                acc.x += d;
                acc.y += d * d;
            }
        });
        acc = row_allreduce<C>(acc, OpSum2{}, s2);
        const float m1 = acc.x * inv_n;
        mean = k + m1;
        rstd = rsqrtf(fmaxf(acc.y * inv_n - m1 * m1, 0.f) + shape.eps);
    }

    const int64_t base = p.row * n;
    const int64_t channel0 = (p.row % shape.groups) * shape.group_channels;
    const bool channel_per_vec = shape.spatial % C::VEC == 0;
    rv.each([&](const float (&v)[C::VEC], int64_t col) {
        float y[C::VEC], wv[C::VEC], bv[C::VEC];
#pragma unroll
        for (int j = 0; j < C::VEC; ++j) y[j] = (v[j] - mean) * rstd;
        if constexpr (M == NormMode::kGroupNorm) {
            if (channel_per_vec) {
                const int64_t c = channel0 + col / shape.spatial;
                const float wc = HAS_W ? to_f32(w[c]) : 1.f, bc = HAS_B ? to_f32(b[c]) : 0.f;
#pragma unroll
                for (int j = 0; j < C::VEC; ++j) wv[j] = wc, bv[j] = bc;
            } else {
#pragma unroll
                for (int j = 0; j < C::VEC; ++j) {
                    const int64_t c = channel0 + (col + j) / shape.spatial;
                    wv[j] = HAS_W ? to_f32(w[c]) : 1.f;
                    bv[j] = HAS_B ? to_f32(b[c]) : 0.f;
                }
            }
        } else {
            if constexpr (HAS_W) load_vec<C::VEC>(wv, w + col);
            if constexpr (HAS_B) load_vec<C::VEC>(bv, b + col);
        }
#pragma unroll
        for (int j = 0; j < C::VEC; ++j) {
            if (HAS_W || M == NormMode::kGroupNorm) y[j] *= wv[j];
            if (HAS_B || M == NormMode::kGroupNorm) y[j] += bv[j];
        }
        chain.run(y, base + col);
    });
}

}  // namespace kforge
