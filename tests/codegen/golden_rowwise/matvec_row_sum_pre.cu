#include "kernels/reduce_col.cuh"
#include "kernels/chain_ops.cuh"
// kernel k0: rowwise reduce_rows kforge::ReduceMode::kSum, configured for rows of 65536
struct kforge_k0_chain {
    static constexpr int kSlots = 1;
    float* __restrict__ t_C;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_C);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        kforge::store_vec<V>(t_C + i, v);
    }
    template <int V>
    __device__ __forceinline__ void run(const float (&in)[V], int64_t i) const {
        float s[kSlots][V];
        for (int j = 0; j < V; ++j) s[0][j] = in[j];
        load_operands<V>(s, i);
        apply<V>(s, i);
    }
};
struct kforge_k0_pre {
    static constexpr int kSlots = 2;
    const float* __restrict__ t_B;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_B);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
        kforge::load_bcast<V, (V == 1 || 65536 % V == 0)>(s[1], t_B, i, [](int64_t e) -> int64_t { return (e % 65536); });
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        for (int j = 0; j < V; ++j) v[j] = v[j] * s[1][j];
    }
    template <int V>
    __device__ __forceinline__ void run(const float (&in)[V], int64_t i) const {
        float s[kSlots][V];
        for (int j = 0; j < V; ++j) s[0][j] = in[j];
        load_operands<V>(s, i);
        apply<V>(s, i);
    }
};
extern "C" __global__ void __launch_bounds__(512) kforge_k0(const float* __restrict__ t_A, float* __restrict__ t_C, const float* __restrict__ t_B, int64_t rows, int64_t n) {
    const kforge_k0_chain chain{t_C};
    const kforge_k0_pre pre{t_B};
    if (kforge::is_aligned<4>(t_A) && pre.aligned<4>()) {
        kforge::reduce_rows<kforge::RowCfg<512, 1, 4, 16, 1, 16>, kforge::ReduceMode::kSum>(t_A, rows, n, chain, pre);
    } else {
        kforge::reduce_rows<kforge::RowCfg<512, 1, 1, 0, 1>, kforge::ReduceMode::kSum>(t_A, rows, n, chain, pre);
    }
}
