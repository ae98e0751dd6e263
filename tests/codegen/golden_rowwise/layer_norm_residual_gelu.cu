#include "kernels/norm.cuh"
#include "kernels/chain_ops.cuh"
// kernel ln: rowwise norm_rows kforge::NormMode::kLayerNorm, configured for rows of 768
struct kforge_ln_chain {
    static constexpr int kSlots = 2;
    const float* __restrict__ t_R;
    __nv_bfloat16* __restrict__ t_Y;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_R) && kforge::is_aligned<V>(t_Y);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
        kforge::load_bcast<V, (V == 1 || 768 % V == 0)>(s[1], t_R, i, [](int64_t e) -> int64_t { return e; });
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        for (int j = 0; j < V; ++j) v[j] = v[j] + s[1][j];
        for (int j = 0; j < V; ++j) v[j] = kforge::act_gelu_tanh(v[j]);
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
extern "C" __global__ void __launch_bounds__(128) kforge_ln(const float* __restrict__ t_X, const float* __restrict__ t_w, const float* __restrict__ t_b, const float* __restrict__ t_R, __nv_bfloat16* __restrict__ t_Y, int64_t rows, int64_t n) {
    const kforge_ln_chain chain{t_R, t_Y};
    if (kforge::is_aligned<4>(t_X) && kforge::is_aligned<4>(t_w) && kforge::is_aligned<4>(t_b) && chain.aligned<4>()) {
        kforge::norm_rows<kforge::RowCfg<32, 4, 4, 6, 1>, kforge::NormMode::kLayerNorm, true, true>(t_X, t_w, t_b, rows, n, kforge::NormShape{1e-06f, 1, 1, 1}, chain);
    } else {
        kforge::norm_rows<kforge::RowCfg<32, 4, 1, 0, 1, 0, 4>, kforge::NormMode::kLayerNorm, true, true>(t_X, t_w, t_b, rows, n, kforge::NormShape{1e-06f, 1, 1, 1}, chain);
    }
}
