#include "kernels/reduce_col.cuh"
#include "kernels/reduce_set.cuh"
#include "kernels/chain_ops.cuh"
// kernel bn: kforge::ReduceMode::kMean over N,H,W of X: 64 output(s) x 32 segment(s) of 3136, 25 slice(s)
struct kforge_bn_chain {
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
extern "C" __global__ void __launch_bounds__(256) kforge_bn(const float* __restrict__ t_X, float* __restrict__ w_bn_partials, int64_t run, int64_t total, int64_t chunk, int64_t outputs, int64_t kext0, int64_t kstr0, int64_t rext0, int64_t rstr0) {
    const int64_t kext[1] = {kext0};
    const int64_t kstr[1] = {kstr0};
    const int64_t rext[1] = {rext0};
    const int64_t rstr[1] = {rstr0};
    if (kforge::is_aligned<4>(t_X)) {
        kforge::reduce_set<256, 4, 1, 1, kforge::ReduceMode::kMean>(t_X, w_bn_partials, kext, kstr, rext, rstr, run, total, chunk, outputs, kforge_bn_chain{});
    } else {
        kforge::reduce_set<256, 1, 1, 1, kforge::ReduceMode::kMean>(t_X, w_bn_partials, kext, kstr, rext, rstr, run, total, chunk, outputs, kforge_bn_chain{});
    }
}
extern "C" __global__ void __launch_bounds__(256) kforge_bn_finish(float* __restrict__ w_bn_partials, float* __restrict__ t_Y, int64_t slices, int64_t total, int64_t r_len) {
    const kforge_bn_chain chain{t_Y};
    kforge::reduce_col_finish<1, kforge::ReduceMode::kMean>(w_bn_partials, slices, total, r_len, chain);
}
