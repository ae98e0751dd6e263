// Reductions over the last dim: sum, mean, max, min, prod (PyTorch semantics: max/min propagate
// NaN; prod multiplies from 1, so 0 * inf is NaN and an underflowed product is 0; accumulation in
// f32 whatever the input dtype). One sweep over memory.
#pragma once

#include "kernels/reduce_ops.cuh"
#include "kernels/row.cuh"

namespace kforge {

// One entry point. x: [rows, n]; chain.run(v, row) stores the row's result. Launch like
// softmax_rows. pre: the kernel's `pre { .. }` prologue, a chain functor (codegen/chain.h) over
// the input's index space applied to each loaded vector before it is reduced: its operands are
// loaded at the vector's linear index row * n + col (vector loads where contiguous).
template <class C, ReduceMode M, typename T, class Chain, class Pre = RowNoPrologue>
__device__ __forceinline__ void reduce_rows(const T* __restrict__ x, int64_t rows, int64_t n,
                                            const Chain& chain, const Pre& pre = Pre{}) {
    using Op = typename ReduceTraits<M>::Op;
    const RowPlace p = row_place<C>(rows, n);
    RowView<C, T> rv(x, n, p);
    rv.load();
    __shared__ ReduceSmem<C, float> s1;
    // Two independent accumulators per thread shorten the dependency chain.
    float acc[2] = {ReduceTraits<M>::kInit, ReduceTraits<M>::kInit};
    rv.each([&](const float (&v)[C::VEC], int64_t col) {
        if constexpr (RowPrologueActive<Pre>::value) {
            float s[Pre::kSlots][C::VEC];
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) s[0][j] = v[j];
            const int64_t i = p.row * n + col;
            pre.template load_operands<C::VEC>(s, i);
            pre.template apply<C::VEC>(s, i);
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) acc[j & 1] = Op{}(acc[j & 1], s[0][j]);
        } else {
#pragma unroll
            for (int j = 0; j < C::VEC; ++j) acc[j & 1] = Op{}(acc[j & 1], v[j]);
        }
    });
    float r = row_allreduce<C>(Op{}(acc[0], acc[1]), Op{}, s1);
    if constexpr (M == ReduceMode::kMean) r /= float(n);
    if (p.valid && p.lane == 0 && p.rank == 0) {
        float y[1] = {r};
        chain.run(y, p.row);
    }
}

}  // namespace kforge
