#include "kernels/map.cuh"
#include "kernels/chain_ops.cuh"
// kernel k0: map over 16777216 elements
struct kforge_k0_chain {
    static constexpr int kSlots = 4;
    const float* __restrict__ t_X;
    const float* __restrict__ t_b;
    const float* __restrict__ t_G;
    const float* __restrict__ t_c;
    float* __restrict__ t_Y;
    template <int V> __device__ __forceinline__ bool aligned() const {
        return true && kforge::is_aligned<V>(t_X) && kforge::is_aligned<V>(t_b) && kforge::is_aligned<V>(t_G) && kforge::is_aligned<V>(t_c) && kforge::is_aligned<V>(t_Y);
    }
    template <int V>
    __device__ __forceinline__ void load_operands(float (&s)[kSlots][V], int64_t i) const {
        kforge::load_bcast<V, (V == 1 || 4096 % V == 0)>(s[1], t_b, i, [](int64_t e) -> int64_t { return (e % 4096); });
        kforge::load_bcast<V, (V == 1 || 4096 % V == 0)>(s[2], t_G, i, [](int64_t e) -> int64_t { return e; });
        kforge::load_bcast<V, (V == 1)>(s[3], t_c, i, [](int64_t e) -> int64_t { return (e / 4096); });
    }
    template <int V>
    __device__ __forceinline__ void load(float (&s)[kSlots][V], int64_t i) const {
        kforge::load_bcast<V, (V == 1 || 4096 % V == 0)>(s[0], t_X, i, [](int64_t e) -> int64_t { return e; });
        load_operands<V>(s, i);
    }
    template <int V>
    __device__ __forceinline__ void apply(float (&s)[kSlots][V], int64_t i) const {
        float (&v)[V] = s[0];
        for (int j = 0; j < V; ++j) v[j] = v[j] + s[1][j];
        for (int j = 0; j < V; ++j) v[j] = kforge::act_gelu_erf(v[j]);
        for (int j = 0; j < V; ++j) v[j] = v[j] * s[2][j];
        for (int j = 0; j < V; ++j) v[j] = v[j] - s[3][j];
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
extern "C" __global__ void __launch_bounds__(256) kforge_k0(const float* __restrict__ t_X, const float* __restrict__ t_b, const float* __restrict__ t_G, const float* __restrict__ t_c, float* __restrict__ t_Y, int64_t numel) {
    const kforge_k0_chain chain{t_X, t_b, t_G, t_c, t_Y};
    if (chain.aligned<4>()) {
        kforge::map_elements<256, 4, 2, false>(numel, chain);
    } else {
        kforge::map_elements<256, 1, 2, false>(numel, chain);
    }
}
