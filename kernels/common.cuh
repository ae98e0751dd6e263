// Shared device helpers for kforge's own CUDA templates: dtype conversion, vector loads and
// stores (up to 16 bytes per access), broadcast loads for generated chains, NaN-propagating
// min/max, and the row-group all-reduce (warp shuffle, then shared memory across the warps of a
// row, then DSMEM across the CTAs of a cluster when a row is split).
//
// Every template computes in f32; tensors are f32, bf16 or f16 in memory.
#pragma once

#include <cooperative_groups.h>
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include "kernels/cstdint.cuh"

namespace kforge {

// ---- dtype conversion -------------------------------------------------------------------

__device__ __forceinline__ float to_f32(float v) { return v; }
__device__ __forceinline__ float to_f32(__nv_bfloat16 v) { return __bfloat162float(v); }
__device__ __forceinline__ float to_f32(__half v) { return __half2float(v); }
__device__ __forceinline__ float to_f32(bool v) { return v ? 1.f : 0.f; }  // a mask operand

template <typename T> __device__ __forceinline__ T from_f32(float v);
template <> __device__ __forceinline__ float from_f32<float>(float v) { return v; }
template <> __device__ __forceinline__ __nv_bfloat16 from_f32<__nv_bfloat16>(float v) {
    return __float2bfloat16_rn(v);
}
template <> __device__ __forceinline__ __half from_f32<__half>(float v) {
    return __float2half_rn(v);
}

// Round a value through a narrower dtype (`cast bf16` in a chain).
template <typename T> __device__ __forceinline__ float round_to(float v) {
    return to_f32(from_f32<T>(v));
}

// ---- vector memory access -----------------------------------------------------------------

template <int BYTES> struct RawVec;
template <> struct RawVec<2> { using Type = unsigned short; };
template <> struct RawVec<4> { using Type = unsigned int; };
template <> struct RawVec<8> { using Type = uint2; };
template <> struct RawVec<16> { using Type = uint4; };

// True when p can be accessed with V-element vectors.
template <int V, typename T> __device__ __forceinline__ bool is_aligned(const T* p) {
    return (reinterpret_cast<uintptr_t>(p) % (V * sizeof(T) > 16 ? 16 : V * sizeof(T))) == 0;
}

// Load V consecutive elements at p (aligned to V elements, or to 16 bytes when larger) as f32.
// Accesses are 16 bytes wide where V * sizeof(T) allows it.
template <int V, typename T> __device__ __forceinline__ void load_vec(float (&o)[V], const T* p) {
    constexpr int kBytes = V * int(sizeof(T));
    if constexpr (kBytes == 1 || (kBytes & (kBytes - 1)) != 0 || sizeof(T) == 1) {
#pragma unroll
        for (int j = 0; j < V; ++j) o[j] = to_f32(p[j]);
    } else {
        constexpr int kChunk = kBytes > 16 ? 16 : kBytes;
        constexpr int kPer = kChunk / int(sizeof(T));
        using Raw = typename RawVec<kChunk>::Type;
#pragma unroll
        for (int c = 0; c < V / kPer; ++c) {
            Raw r = *reinterpret_cast<const Raw*>(p + c * kPer);
            const T* e = reinterpret_cast<const T*>(&r);
#pragma unroll
            for (int j = 0; j < kPer; ++j) o[c * kPer + j] = to_f32(e[j]);
        }
    }
}

template <int V, typename T> __device__ __forceinline__ void store_vec(T* p, const float (&v)[V]) {
    constexpr int kBytes = V * int(sizeof(T));
    if constexpr ((kBytes & (kBytes - 1)) != 0 || kBytes < 2) {
#pragma unroll
        for (int j = 0; j < V; ++j) p[j] = from_f32<T>(v[j]);
    } else {
        constexpr int kChunk = kBytes > 16 ? 16 : kBytes;
        constexpr int kPer = kChunk / int(sizeof(T));
        using Raw = typename RawVec<kChunk>::Type;
#pragma unroll
        for (int c = 0; c < V / kPer; ++c) {
            Raw r;
            T* e = reinterpret_cast<T*>(&r);
#pragma unroll
            for (int j = 0; j < kPer; ++j) e[j] = from_f32<T>(v[c * kPer + j]);
            *reinterpret_cast<Raw*>(p + c * kPer) = r;
        }
    }
}

// Load the V elements of a broadcast operand that line up with output elements i .. i+V-1.
// `off` maps an output linear index to the operand's element offset. CONTIG: the operand is
// contiguous along the output's innermost dim and the V elements are one aligned vector.
template <int V, bool CONTIG, typename T, class Off>
__device__ __forceinline__ void load_bcast(float (&o)[V], const T* p, int64_t i, Off off) {
    if constexpr (CONTIG) {
        load_vec<V>(o, p + off(i));
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) o[j] = to_f32(p[off(i + j)]);
    }
}

// ---- arithmetic helpers ---------------------------------------------------------------------

// PyTorch's max/min propagate NaN (fmaxf/fminf would drop it).
__device__ __forceinline__ float max_nan(float a, float b) { return (a > b || a != a) ? a : b; }
__device__ __forceinline__ float min_nan(float a, float b) { return (a < b || a != a) ? a : b; }

struct OpSum {
    __device__ __forceinline__ float operator()(float a, float b) const { return a + b; }
};
struct OpMax {
    __device__ __forceinline__ float operator()(float a, float b) const { return max_nan(a, b); }
};
struct OpMin {
    __device__ __forceinline__ float operator()(float a, float b) const { return min_nan(a, b); }
};
// Component-wise sum of a pair (two moments reduced at once).
struct OpSum2 {
    __device__ __forceinline__ float2 operator()(float2 a, float2 b) const {
        return make_float2(a.x + b.x, a.y + b.y);
    }
};
// (running max, sum of exp(x - max)) pairs of online softmax. Symmetric, so every lane of a
// butterfly ends with bitwise the same result. A -inf max keeps a zero sum (no inf - inf).
struct OpMaxSumExp {
    __device__ __forceinline__ float2 operator()(float2 a, float2 b) const {
        float m = fmaxf(a.x, b.x);
        if (m == -INFINITY) return make_float2(m, 0.f);
        return make_float2(m, a.y * __expf(a.x - m) + b.y * __expf(b.x - m));
    }
};

__device__ __forceinline__ float shfl_xor(float v, int o) {
    return __shfl_xor_sync(0xffffffffu, v, o);
}
__device__ __forceinline__ float2 shfl_xor(float2 v, int o) {
    return make_float2(__shfl_xor_sync(0xffffffffu, v.x, o), __shfl_xor_sync(0xffffffffu, v.y, o));
}

// ---- row configuration and all-reduce -----------------------------------------------------

// A row group: TPR threads (a power of two <= 32, or a multiple of 32) own one row; a block
// holds RPB row groups. ITEMS > 0: each thread caches its first ITEMS vectors of VEC elements of
// its row in registers (the first ITEMS * TPR * VEC elements of the CTA's part). STAGED > 0:
// the next STAGED vectors of each thread are copied into dynamic shared memory with cp.async
// before the first sweep. Every sweep reads those on chip and streams only the rest from
// memory; with ITEMS > 0 and STAGED == 0 the part is all in registers. Dynamic shared memory:
// RPB * STAGED * TPR * VEC elements.
// SPLIT > 1: SPLIT CTAs of a cluster share one row (RPB must be 1), combining via DSMEM
// (SPLIT > 8 is a non-portable cluster size: the launch must allow it).
// SWEEP_ALTERNATE (streamed rows only): the sweeps over memory alternate direction, the second
// (fourth, ...) running from the part's last vector to its first, so a re-read starts with the
// data read most recently (still in L2 when the CTAs' parts together exceed it). Off: every
// sweep runs first to last.
template <int TPR_, int RPB_, int VEC_, int ITEMS_, int SPLIT_, int STAGED_ = 0, int UNROLL_ = 0,
          bool SWEEP_ALTERNATE_ = false>
struct RowCfg {
    static constexpr int TPR = TPR_, RPB = RPB_, VEC = VEC_, ITEMS = ITEMS_, SPLIT = SPLIT_;
    static constexpr int STAGED = STAGED_;
    static constexpr bool SWEEP_ALTERNATE = SWEEP_ALTERNATE_;
    static constexpr int THREADS = TPR * RPB;
    static constexpr int WARPS_PER_ROW = TPR > 32 ? TPR / 32 : 1;
    // vectors in flight per thread when streaming: UNROLL_ when given, else 16 values (4 x 16 B
    // for f32 VEC 4)
    static constexpr int UNROLL = UNROLL_ > 0 ? UNROLL_ : (VEC >= 16 ? 1 : 16 / VEC);
    // elements of one row group's shared-memory stage
    static constexpr int STAGE_ELEMS = STAGED * TPR * VEC;
    static_assert(TPR % 32 == 0 || (TPR <= 32 && (32 % TPR) == 0), "threads per row");
    static_assert(SPLIT == 1 || RPB == 1, "a split row needs one row per block");
    static_assert(!SWEEP_ALTERNATE || ITEMS == 0, "sweep direction applies to streamed rows only");
};

// ---- asynchronous global -> shared copies (cp.async, sm_80+) --------------------------------

__device__ __forceinline__ void cp_async_commit() {
    asm volatile("cp.async.commit_group;\n" ::: "memory");
}
// Wait until at most N of this thread's committed groups are still in flight.
template <int N> __device__ __forceinline__ void cp_async_wait() {
    asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}
// The same with N known only after unrolling (0..3; larger N waits as for 3).
__device__ __forceinline__ void cp_async_wait_upto(int n) {
    switch (n) {
        case 0: cp_async_wait<0>(); break;
        case 1: cp_async_wait<1>(); break;
        case 2: cp_async_wait<2>(); break;
        default: cp_async_wait<3>(); break;
    }
}

// Copy V elements at g (aligned like load_vec's) to s in shared memory. Widths cp.async takes
// (4, 8, 16 bytes, or 16-byte pieces) are asynchronous: the calling thread sees them after
// cp_async_wait. Other widths (2-byte scalars) are copied at once.
template <int V, typename T> __device__ __forceinline__ void copy_async(T* s, const T* g) {
    constexpr int kBytes = V * int(sizeof(T));
    if constexpr (kBytes == 4 || kBytes == 8 || kBytes % 16 == 0) {
        constexpr int kChunk = kBytes > 16 ? 16 : kBytes;
        const unsigned sa = static_cast<unsigned>(__cvta_generic_to_shared(s));
        const char* ga = reinterpret_cast<const char*>(g);
#pragma unroll
        for (int c = 0; c < kBytes / kChunk; ++c) {
            if constexpr (kChunk == 16) {
                asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(sa + 16 * c),
                             "l"(ga + 16 * c)
                             : "memory");
            } else {
                asm volatile("cp.async.ca.shared.global [%0], [%1], %2;\n" ::"r"(sa), "l"(ga),
                             "n"(kChunk)
                             : "memory");
            }
        }
    } else {
#pragma unroll
        for (int j = 0; j < V; ++j) s[j] = g[j];
    }
}

// Scratch for one all-reduce: per row group, one slot per warp; plus one slot read by the
// other CTAs of the cluster.
template <class C, typename V> struct ReduceSmem {
    V warp[C::RPB][C::WARPS_PER_ROW];
    V cta;
};

// All-reduce v over the threads of a row group (and over the cluster when C::SPLIT > 1). Every
// thread of the block must call it (row groups past the last row included). Returns the same
// bits to every thread of the row (reductions combine in a fixed order).
template <class C, typename V, class Op>
__device__ __forceinline__ V row_allreduce(V v, Op op, ReduceSmem<C, V>& s) {
    constexpr int kWidth = C::TPR < 32 ? C::TPR : 32;
#pragma unroll
    for (int o = kWidth / 2; o > 0; o /= 2) v = op(v, shfl_xor(v, o));
    if constexpr (C::WARPS_PER_ROW > 1) {
        const int group = threadIdx.x / C::TPR;
        const int warp = (threadIdx.x % C::TPR) / 32;
        if (threadIdx.x % 32 == 0) s.warp[group][warp] = v;
        __syncthreads();
        v = s.warp[group][0];
#pragma unroll
        for (int w = 1; w < C::WARPS_PER_ROW; ++w) v = op(v, s.warp[group][w]);
        __syncthreads();
    }
    if constexpr (C::SPLIT > 1) {
        namespace cg = cooperative_groups;
        cg::cluster_group cluster = cg::this_cluster();
        if (threadIdx.x == 0) s.cta = v;
        cluster.sync();
        v = *cluster.map_shared_rank(&s.cta, 0);
#pragma unroll
        for (int r = 1; r < C::SPLIT; ++r) v = op(v, *cluster.map_shared_rank(&s.cta, r));
        cluster.sync();
    }
    return v;
}

}  // namespace kforge
