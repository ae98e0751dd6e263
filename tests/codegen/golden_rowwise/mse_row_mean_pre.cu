#include "kernels/reduce_col.cuh"
#include "kernels/chain_ops.cuh"
// kernel k0: rowwise reduce_rows kforge::ReduceMode::kMean, configured for rows of 4096
struct kforge_k0_chain {
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
        for (int j = 0; j < V; ++j) v[j] = v[j] * 0.5f;
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
struct kforge_k0_pre {
    static constexpr int kSlots = 4;
    const __nv_bfloat16* __restrict__ t_T;
    const float* __restrict__ t_w;
    const float* __restrict__ t_s;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_T) && kforge::is_aligned<V>(t_w) && kforge::is_aligned<V>(t_s);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
        kforge::load_bcast<V, (V == 1 || 4096 % V == 0)>(s[1], t_T, i, [](int64_t e) -> int64_t { return e; });
        kforge::load_bcast<V, (V == 1 || 4096 % V == 0)>(s[2], t_w, i, [](int64_t e) -> int64_t { return (e % 4096); });
        kforge::load_bcast<V, (V == 1)>(s[3], t_s, i, [](int64_t e) -> int64_t { return (e / 4096); });
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        for (int j = 0; j < V; ++j) v[j] = v[j] - s[1][j];
        float n_d[V];
        for (int j = 0; j < V; ++j) n_d[j] = v[j];
        for (int j = 0; j < V; ++j) v[j] = v[j] * n_d[j];
        for (int j = 0; j < V; ++j) v[j] = v[j] * s[2][j];
        for (int j = 0; j < V; ++j) v[j] = v[j] / s[3][j];
        for (int j = 0; j < V; ++j) v[j] = v[j] + 1.0f;
    }
    template <int V>
    __device__ __forceinline__ void run(const float (&in)[V], int64_t i) const {
        float s[kSlots][V];
        for (int j = 0; j < V; ++j) s[0][j] = in[j];
        load_operands<V>(s, i);
        apply<V>(s, i);
    }
};
extern "C" __global__ void __launch_bounds__(256) kforge_k0(const __nv_bfloat16* __restrict__ t_P, float* __restrict__ t_Y, const __nv_bfloat16* __restrict__ t_T, const float* __restrict__ t_w, const float* __restrict__ t_s, int64_t rows, int64_t n) {
    const kforge_k0_chain chain{t_Y};
    const kforge_k0_pre pre{t_T, t_w, t_s};
    if (kforge::is_aligned<8>(t_P) && pre.aligned<8>()) {
        kforge::reduce_rows<kforge::RowCfg<256, 1, 8, 2, 1>, kforge::ReduceMode::kMean>(t_P, rows, n, chain, pre);
    } else {
        kforge::reduce_rows<kforge::RowCfg<256, 1, 1, 0, 1, 0, 4>, kforge::ReduceMode::kMean>(t_P, rows, n, chain, pre);
    }
}
