#include "kernels/softmax.cuh"
#include "kernels/chain_ops.cuh"
// kernel k1: rowwise softmax_rows kforge::SoftmaxMode::kLogsumexp, configured for rows of 65536
struct kforge_k1_chain {
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
extern "C" __global__ void __launch_bounds__(1024) kforge_k1(const float* __restrict__ t_T, float* __restrict__ t_Y, int64_t rows, int64_t n) {
    const kforge_k1_chain chain{t_Y};
    if (kforge::is_aligned<4>(t_T)) {
        kforge::softmax_rows<kforge::RowCfg<1024, 1, 4, 2, 8>, kforge::SoftmaxMode::kLogsumexp, true>(t_T, rows, n, chain);
    } else {
        kforge::softmax_rows<kforge::RowCfg<1024, 1, 1, 0, 8, 0, 4>, kforge::SoftmaxMode::kLogsumexp, true>(t_T, rows, n, chain);
    }
}
