// Softmax family over the last dim: softmax, log_softmax, logsumexp (PyTorch semantics:
// the row max is subtracted; logsumexp treats an infinite max as 0, so a row of -inf gives -inf
// and softmax of such a row gives NaN, as in PyTorch).
//
// Sweeps over memory: cached rows (ITEMS > 0) read the row once whatever ONLINE says.
// Streamed rows (ITEMS == 0, `passes 2`): ONLINE keeps a running (max, sum of exp) pair per
// thread and reads the row twice (statistics, output); otherwise max, sum and output are three
// sweeps. logsumexp writes one value per row, so it needs no output sweep.
#pragma once

#include "kernels/row.cuh"

namespace kforge {

enum class SoftmaxMode { kSoftmax, kLogSoftmax, kLogsumexp };

// One entry point. x: [rows, n] row-major. chain.run(v, i) applies the generated chain to the
// values for output elements i .. i+V-1 and stores them (i = row * n + col, or row for
// logsumexp). Launch: block C::THREADS, grid ceil(rows / RPB) * SPLIT, cluster (SPLIT, 1, 1).
template <class C, SoftmaxMode M, bool ONLINE, typename T, class Chain>
__device__ __forceinline__ void softmax_rows(const T* __restrict__ x, int64_t rows, int64_t n,
                                             const Chain& chain) {
    const RowPlace p = row_place<C>(rows, n);
    RowView<C, T> rv(x, n, p);
    rv.load();
    __shared__ ReduceSmem<C, float> s1;
    __shared__ ReduceSmem<C, float2> s2;

    float m, sum;
    if constexpr (ONLINE) {
        float2 acc = make_float2(-INFINITY, 0.f);
        rv.each([&](const float (&v)[C::VEC], int64_t) {
            float vm = v[0];
#pragma unroll
            for (int j = 1; j < C::VEC; ++j) vm = fmaxf(vm, v[j]);
            const float mn = fmaxf(acc.x, vm);
            if (mn == -INFINITY) return;
            float s = acc.y * __expf(acc.x - mn);
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) s += __expf(v[j] - mn);
            acc = make_float2(mn, s);
        });
        acc = row_allreduce<C>(acc, OpMaxSumExp{}, s2);
        m = acc.x;
        sum = acc.y;
    } else {
        float mm = -INFINITY;
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) mm = fmaxf(mm, v[j]);
        });
        m = row_allreduce<C>(mm, OpMax{}, s1);
        // logsumexp shifts by 0 where the max is infinite (PyTorch), avoiding inf - inf.
        const float shift = (M == SoftmaxMode::kLogsumexp && isinf(m)) ? 0.f : m;
        float ss = 0.f;
        rv.each([&](const float (&v)[C::VEC], int64_t) {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) ss += __expf(v[j] - shift);
        });
        sum = row_allreduce<C>(ss, OpSum{}, s1);
        if constexpr (M == SoftmaxMode::kLogsumexp) m = shift;
    }

    if constexpr (M == SoftmaxMode::kLogsumexp) {
        if (p.valid && p.lane == 0 && p.rank == 0) {
            float y[1] = {m + logf(sum)};
            if (ONLINE && isinf(m)) y[0] = m;  // all -inf: -inf; any +inf: +inf
            chain.run(y, p.row);
        }
    } else {
        const float inv = 1.f / sum;
        const float log_sum = logf(sum);
        const int64_t base = p.row * n;
        rv.each([&](const float (&v)[C::VEC], int64_t col) {
            float y[C::VEC];
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) {
                y[j] = M == SoftmaxMode::kSoftmax ? __expf(v[j] - m) * inv : v[j] - m - log_sum;
            }
            chain.run(y, base + col);
        });
    }
}

}  // namespace kforge
