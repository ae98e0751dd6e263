#include "kernels/reduce_col.cuh"
#include "kernels/chain_ops.cuh"
// kernel cs: column reduction kforge::ReduceMode::kSum over [1, 262144, 128] dim 1, 528 slice(s)
struct kforge_cs_chain {
    static constexpr int kSlots = 1;
    float* __restrict__ t_Y;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_Y);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        kforge::store_vec<V>(t_Y + i, v);
    }
    template <int V>
    __device__ __forceinline__ void run(const float (&in)[V], int64_t i) const {
        float s[kSlots][V];
        for (int j = 0; j < V; ++j) s[0][j] = in[j];
        load_operands<V>(s, i);
        apply<V>(s, i);
    }
};
extern "C" __global__ void __launch_bounds__(256) kforge_cs(const float* __restrict__ t_X, float* __restrict__ w_cs_partials, int64_t outer, int64_t r_len, int64_t inner, int64_t r_chunk) {
    if (kforge::is_aligned<4>(t_X)) {
        kforge::reduce_cols<32, 8, 4, kforge::ReduceMode::kSum>(t_X, w_cs_partials, outer, r_len, inner, r_chunk, kforge_cs_chain{});
    } else {
        kforge::reduce_cols<32, 8, 1, kforge::ReduceMode::kSum>(t_X, w_cs_partials, outer, r_len, inner, r_chunk, kforge_cs_chain{});
    }
}
extern "C" __global__ void __launch_bounds__(256) kforge_cs_finish(float* __restrict__ w_cs_partials, float* __restrict__ t_Y, int64_t slices, int64_t total, int64_t r_len) {
    const kforge_cs_chain chain{t_Y};
    if (chain.aligned<4>()) {
        kforge::reduce_col_finish<4, kforge::ReduceMode::kSum>(w_cs_partials, slices, total, r_len, chain);
    } else {
        kforge::reduce_col_finish<1, kforge::ReduceMode::kSum>(w_cs_partials, slices, total, r_len, chain);
    }
}
