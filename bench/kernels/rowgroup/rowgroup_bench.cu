// Prototype for kforge issue 4: a persistent "row-group" kernel for very long rows, measured
// beside the copy kernel and the current cluster-split templates (kernels/softmax.cuh,
// kernels/norm.cuh). Bench only; nothing here is wired into the language.
//
// Row-group kernel (k_rowgroup): a cooperative launch of exactly G * S CTAs, all co-resident
// (G rows per wave, each row cut into S contiguous chunks, one chunk per CTA; the launch fails
// rather than oversubscribe). Each CTA walks the waves: its chunk of row w * G + blockIdx.x / S
// is copied ONCE into shared memory with TMA bulk copies (cp.async.bulk + mbarrier), the CTA
// computes the chunk's partial statistics from shared memory (softmax: online (max, sum exp);
// layer_norm: (mean, M2) of the chunk), publishes them to a global workspace, arrives on the
// row's counter and waits (acquire loads, backoff, bounded by 1 s of spinning: then an error
// flag is set and the kernel exits) until all S chunks arrived; it then combines the S partials
// in a fixed order (every CTA of the row gets the same bits) and writes its outputs from shared
// memory. DRAM traffic: the compulsory 1 read + 1 write. NBUF = 2: the next wave's chunk is
// copied into the second buffer before this wave's barrier, so reads continue across the
// barrier and the write phase. Counters are never reset between launches: each launch adds S
// per row and waits for the host-given cumulative target (a generation count).
//
// Two-kernel baseline (k_partials + k_finish): per-chunk partials for all rows (one read),
// then combine + re-read + write (3 passes of traffic, no grid-wide barrier).
//
// Protocol as bench/kernels/rowwise_bench.cu: L2 flushed (memset of 2x L2) before each of 50
// timed runs after 5 warm-ups, CUDA events, median; GB/s of compulsory bytes (x read once, y
// written once, w and b read once) and % of the 4.23 TB/s copy ceiling; every variant's first
// output (poisoned with NaN before) is compared with an fp64 one-block-per-row reference.
//
// Build and run (repo root): OUT=<dir> bash bench/kernels/rowgroup/run.sh
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/map.cuh"
#include "kernels/norm.cuh"
#include "kernels/softmax.cuh"
#include "bench/kernels/bench_device.cuh"


using namespace kforge;
using bf16 = __nv_bfloat16;

constexpr double kCopyCeilingGBs = 4230.0;  // H200 cudaMemcpy D2D, bench/calibration/h200.json
constexpr unsigned long long kSpinLimitNs = 1000000000ull;  // 1 s

enum Mode { kSoftmax = 0, kSum = 1, kLayerNorm = 2 };  // kSum: a plain sum (layer_norm moments)

// ---- small PTX helpers ---------------------------------------------------------------------

__device__ __forceinline__ unsigned long long global_ns() {
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return t;
}
__device__ __forceinline__ unsigned ld_acquire(const unsigned* p) {
    unsigned v;
    asm volatile("ld.acquire.gpu.u32 %0, [%1];" : "=r"(v) : "l"(p) : "memory");
    return v;
}
__device__ __forceinline__ unsigned smem_addr(const void* p) {
    return static_cast<unsigned>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ void mbar_init(uint64_t* bar, unsigned count) {
    asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_addr(bar)), "r"(count) : "memory");
}
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, unsigned bytes) {
    asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(smem_addr(bar)), "r"(bytes)
                 : "memory");
}
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, unsigned parity) {
    unsigned ok;
    asm volatile(
        "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
        : "=r"(ok)
        : "r"(smem_addr(bar)), "r"(parity)
        : "memory");
    return ok != 0;
}
// Bounded wait for phase `parity` of bar; false after kSpinLimitNs.
__device__ __forceinline__ bool mbar_wait(uint64_t* bar, unsigned parity) {
    const unsigned long long t0 = global_ns();
    while (!mbar_try_wait(bar, parity)) {
        if (global_ns() - t0 > kSpinLimitNs) return false;
    }
    return true;
}
// TMA bulk copy global -> this CTA's shared memory, completing `bytes` on bar.
__device__ __forceinline__ void bulk_g2s(void* dst, const void* src, unsigned bytes, uint64_t* bar) {
    asm volatile(
        "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
            smem_addr(dst)),
        "l"(src), "r"(bytes), "r"(smem_addr(bar))
        : "memory");
}

// ---- partial statistics of a chunk and their combination -------------------------------------

// Softmax partial: (max, sum exp(x - max)); layer_norm partial: (mean, M2, count).
struct Partial {
    float a, b, cnt;
};
__device__ __forceinline__ Partial combine_sm(Partial p, Partial q) {
    const float2 r = OpMaxSumExp{}(make_float2(p.a, p.b), make_float2(q.a, q.b));
    return {r.x, r.y, p.cnt + q.cnt};
}
__device__ __forceinline__ Partial combine_ln(Partial p, Partial q) {  // Chan et al.
    if (q.cnt == 0.f) return p;
    if (p.cnt == 0.f) return q;
    const float n = p.cnt + q.cnt, d = q.a - p.a, fq = q.cnt / n;
    return {p.a + d * fq, p.b + q.b + d * d * p.cnt * fq, n};
}
template <int MODE> __device__ __forceinline__ Partial combine(Partial p, Partial q) {
    if constexpr (MODE == kSoftmax) return combine_sm(p, q);
    else if constexpr (MODE == kSum) return {p.a + q.a, 0.f, 0.f};
    else return combine_ln(p, q);
}
template <int MODE> __device__ __forceinline__ Partial identity() {
    if constexpr (MODE == kSoftmax) return {-INFINITY, 0.f, 0.f};
    else return {0.f, 0.f, 0.f};
}
__device__ __forceinline__ Partial shfl_down(Partial p, int o) {
    return {__shfl_down_sync(0xffffffffu, p.a, o), __shfl_down_sync(0xffffffffu, p.b, o),
            __shfl_down_sync(0xffffffffu, p.cnt, o)};
}
// Combine over the block in a fixed order; the result is valid in thread 0.
template <int MODE, int THREADS> __device__ __forceinline__ Partial block_combine(Partial p, Partial* sh) {
#pragma unroll
    for (int o = 16; o > 0; o /= 2) p = combine<MODE>(p, shfl_down(p, o));
    __syncthreads();  // sh may still be read from the previous call
    if (threadIdx.x % 32 == 0) sh[threadIdx.x / 32] = p;
    __syncthreads();
    if (threadIdx.x < 32) {
        p = threadIdx.x < THREADS / 32 ? sh[threadIdx.x] : identity<MODE>();
#pragma unroll
        for (int o = 16; o > 0; o /= 2) p = combine<MODE>(p, shfl_down(p, o));
    }
    return p;
}

// f(v, e) for each VEC-vector of src[0, len) owned by this thread (vectors tid, tid + THREADS,
// ...; e = element offset), U loads in flight before use. src: global or shared memory.
template <int THREADS, int VEC, int U, typename T, class F>
__device__ __forceinline__ void for_vectors(const T* src, int len, F f) {
    const int nv = len / VEC;
    for (int k0 = threadIdx.x; k0 < nv; k0 += THREADS * U) {
        float v[U][VEC];
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (k0 + u * THREADS < nv) load_vec<VEC>(v[u], src + (k0 + u * THREADS) * VEC);
#pragma unroll
        for (int u = 0; u < U; ++u)
            if (k0 + u * THREADS < nv) f(v[u], (k0 + u * THREADS) * VEC);
    }
}

// The chunk's partial (result in thread 0). Layer_norm reads the chunk twice (mean, then M2
// around it), which costs nothing extra when src is shared memory.
template <int MODE, int THREADS, int VEC, int U, typename T>
__device__ __forceinline__ Partial chunk_partial(const T* src, int len, Partial* sh) {
    if constexpr (MODE == kSoftmax) {
        float m = -INFINITY, s = 0.f;
        for_vectors<THREADS, VEC, U>(src, len, [&](const float (&v)[VEC], int) {
            float vm = v[0];
#pragma unroll
            for (int j = 1; j < VEC; ++j) vm = fmaxf(vm, v[j]);
            const float mn = fmaxf(m, vm);
            if (mn == -INFINITY) return;
            float t = s * __expf(m - mn);
#pragma unroll
            for (int j = 0; j < VEC; ++j) t += __expf(v[j] - mn);
            m = mn, s = t;
        });
        return block_combine<MODE, THREADS>({m, s, 0.f}, sh);
    } else {
        float s = 0.f;
        for_vectors<THREADS, VEC, U>(src, len, [&](const float (&v)[VEC], int) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) s += v[j];
        });
        Partial t = block_combine<kSum, THREADS>({s, 0.f, 0.f}, sh);
        __shared__ float mean_sh;
        if (threadIdx.x == 0) mean_sh = len > 0 ? t.a / float(len) : 0.f;
        __syncthreads();
        const float mean = mean_sh;
        float q = 0.f;
        for_vectors<THREADS, VEC, U>(src, len, [&](const float (&v)[VEC], int) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) q += (v[j] - mean) * (v[j] - mean);
        });
        t = block_combine<kSum, THREADS>({q, 0.f, 0.f}, sh);
        return {mean, t.a, float(len)};
    }
}
// Combine the S partials ws[0, S) in a fixed order within warp 0 (call from warp 0 only; every
// lane returns the same bits). Partials are read from L2 (__ldcg): L1 may hold stale lines.
template <int MODE> __device__ __forceinline__ Partial combine_row(const float4* ws, int S) {
    const int lane = threadIdx.x % 32;
    Partial p = identity<MODE>();
    for (int i = lane; i < S; i += 32) {
        const float4 q = __ldcg(ws + i);
        p = combine<MODE>(p, {q.x, q.y, q.z});
    }
#pragma unroll
    for (int o = 16; o > 0; o /= 2) p = combine<MODE>(p, shfl_down(p, o));
    return {__shfl_sync(0xffffffffu, p.a, 0), __shfl_sync(0xffffffffu, p.b, 0), __shfl_sync(0xffffffffu, p.cnt, 0)};
}

// Final per-row constants from the combined partial: softmax (max, 1 / sum); layer_norm
// (mean, rstd).
template <int MODE> __device__ __forceinline__ float2 finish(Partial p, int64_t n, float eps) {
    if constexpr (MODE == kSoftmax) return make_float2(p.a, 1.f / p.b);
    else return make_float2(p.a, rsqrtf(p.b / float(n) + eps));
}

template <int MODE, int THREADS, int VEC, int U, typename T>
__device__ __forceinline__ void write_chunk(const T* src, int len, float2 st, T* y, const T* w, const T* b,
                                            int64_t col0) {
    for_vectors<THREADS, VEC, U>(src, len, [&](const float (&v)[VEC], int e) {
        float o[VEC];
        if constexpr (MODE == kSoftmax) {
#pragma unroll
            for (int j = 0; j < VEC; ++j) o[j] = __expf(v[j] - st.x) * st.y;
        } else {
            float wv[VEC], bv[VEC];
            load_vec<VEC>(wv, w + col0 + e);
            load_vec<VEC>(bv, b + col0 + e);
#pragma unroll
            for (int j = 0; j < VEC; ++j) o[j] = (v[j] - st.x) * st.y * wv[j] + bv[j];
        }
        store_vec<VEC>(y + e, o);
    });
}

// Elements of the chunk starting at col0 (0 past the row's end).
__device__ __forceinline__ int chunk_len(int chunk, int64_t n, int64_t col0) {
    const int64_t left = n - col0;
    return left <= 0 ? 0 : left < chunk ? int(left) : chunk;
}

template <typename T> struct RgParams {
    const T* x;
    T* y;
    const T* w;  // layer_norm weight and bias (length n)
    const T* b;
    int64_t rows, n;
    int S;            // chunks per row
    int chunk;        // elements per chunk (a multiple of VEC; the last chunk may be shorter)
    int G;            // rows per wave; gridDim.x == G * S
    float eps;
    float4* ws;       // [rows * S] partials
    unsigned* cnt;    // [rows] arrival counters (cumulative over launches)
    unsigned target;  // the value every counter reaches in this launch
    int* err;         // set to 1 (row barrier) or 2 (copy wait) on a timeout
};

// ---- the persistent row-group kernel ---------------------------------------------------------

// Up to 1024 threads per SM (64 registers): 2 CTAs of 512 when their buffers fit.
template <int MODE, int THREADS, int NBUF, typename T>
__global__ void __launch_bounds__(THREADS, 1024 / THREADS) k_rowgroup(RgParams<T> p) {
    constexpr int VEC = 16 / sizeof(T);
    constexpr int kPiece = 16384;  // bytes per bulk copy; warp 0's lanes issue them
    extern __shared__ __align__(128) unsigned char rg_smem[];
    __shared__ __align__(8) uint64_t bar[NBUF];
    __shared__ Partial red[32];
    __shared__ float2 stats;
    __shared__ int abort_flag;

    const int lane = threadIdx.x % 32;
    const bool warp0 = threadIdx.x < 32;
    const int rig = blockIdx.x / p.S, c = blockIdx.x % p.S;  // row in wave, chunk
    const int64_t col0 = int64_t(c) * p.chunk;
    const int len = chunk_len(p.chunk, p.n, col0);
    const unsigned bytes = unsigned(len) * sizeof(T);
    const int tiles = rig < p.rows ? int((p.rows - rig + p.G - 1) / p.G) : 0;
    T* buf0 = reinterpret_cast<T*>(rg_smem);

    if (threadIdx.x == 0) {
        for (int i = 0; i < NBUF; ++i) mbar_init(&bar[i], 1);
        asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
        abort_flag = 0;
    }
    __syncthreads();

    // Warp 0: start the copy of wave w's chunk into buffer w % NBUF (free: the block passed
    // the end-of-iteration barrier of the wave that used it last).
    auto issue = [&](int w) {
        const int64_t row = int64_t(w) * p.G + rig;
        T* dst = buf0 + (w % NBUF) * p.chunk;
        const T* src = p.x + row * p.n + col0;
        if (lane == 0) {
            asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
            mbar_arrive_expect_tx(&bar[w % NBUF], bytes);
        }
        __syncwarp();
        for (unsigned off = unsigned(lane) * kPiece; off < bytes; off += 32u * kPiece)
            bulk_g2s(reinterpret_cast<char*>(dst) + off, reinterpret_cast<const char*>(src) + off,
                     min(unsigned(kPiece), bytes - off), &bar[w % NBUF]);
    };

    if (warp0)
        for (int w = 0; w < NBUF - 1 && w < tiles; ++w) issue(w);
    for (int w = 0; w < tiles; ++w) {
        if (warp0 && w + NBUF - 1 < tiles) issue(w + NBUF - 1);
        const int64_t row = int64_t(w) * p.G + rig;
        const T* sb = buf0 + (w % NBUF) * p.chunk;
        if (!mbar_wait(&bar[w % NBUF], unsigned(w / NBUF) & 1u)) {
            atomicExch(p.err, 2);
            abort_flag = 1;
        }
        __syncthreads();
        if (abort_flag) return;  // a copy that never completed: nothing more is safe

        const Partial part = chunk_partial<MODE, THREADS, VEC, 2>(sb, len, red);
        if (warp0) {
            if (lane == 0) {
                p.ws[row * p.S + c] = make_float4(part.a, part.b, part.cnt, 0.f);
                __threadfence();
                atomicAdd(p.cnt + row, 1u);
            }
            __syncwarp();
            // Every lane acquires the counter itself, then reads the row's partials.
            const unsigned long long t0 = global_ns();
            unsigned ns = 32;
            bool ok = true;
            while (int(ld_acquire(p.cnt + row) - p.target) < 0) {
                if (global_ns() - t0 > kSpinLimitNs || *reinterpret_cast<volatile int*>(p.err)) {
                    ok = false;
                    break;
                }
                __nanosleep(ns);
                ns = ns < 256 ? 2 * ns : 256;
            }
            if (__any_sync(0xffffffffu, !ok)) {
                if (lane == 0) {
                    atomicExch(p.err, 1);
                    abort_flag = 1;
                }
            } else {
                const Partial tot = combine_row<MODE>(p.ws + row * p.S, p.S);
                if (lane == 0) stats = finish<MODE>(tot, p.n, p.eps);
            }
        }
        __syncthreads();
        if (abort_flag) {
            // Let a copy already in flight land before the CTA's shared memory is released.
            if (NBUF > 1 && w + 1 < tiles) mbar_wait(&bar[(w + 1) % NBUF], unsigned((w + 1) / NBUF) & 1u);
            return;
        }
        write_chunk<MODE, THREADS, VEC, 2>(sb, len, stats, p.y + row * p.n + col0, p.w, p.b, col0);
        __syncthreads();  // buffer w % NBUF is free again
    }
}

// ---- two-kernel baseline: partials (read), then combine + re-read + write -------------------

template <int MODE, int THREADS, typename T> __global__ void __launch_bounds__(THREADS) k_partials(RgParams<T> p) {
    constexpr int VEC = 16 / sizeof(T);
    __shared__ Partial red[32];
    const int c = blockIdx.x;
    const int64_t row = blockIdx.y, col0 = int64_t(c) * p.chunk;
    const int len = chunk_len(p.chunk, p.n, col0);
    const Partial part = chunk_partial<MODE, THREADS, VEC, 4>(p.x + row * p.n + col0, len, red);
    if (threadIdx.x == 0) p.ws[row * p.S + c] = make_float4(part.a, part.b, part.cnt, 0.f);
}
template <int MODE, int THREADS, typename T> __global__ void __launch_bounds__(THREADS) k_finish(RgParams<T> p) {
    constexpr int VEC = 16 / sizeof(T);
    __shared__ float2 stats;
    const int c = blockIdx.x;
    const int64_t row = blockIdx.y, col0 = int64_t(c) * p.chunk;
    const int len = chunk_len(p.chunk, p.n, col0);
    if (threadIdx.x < 32) {
        const Partial tot = combine_row<MODE>(p.ws + row * p.S, p.S);
        if (threadIdx.x == 0) stats = finish<MODE>(tot, p.n, p.eps);
    }
    __syncthreads();
    write_chunk<MODE, THREADS, VEC, 4>(p.x + row * p.n + col0, len, stats, p.y + row * p.n + col0, p.w, p.b, col0);
}

// ---- current templates (as rowwise_bench.cu instantiates them) and the copy -----------------

// StoreChain and g_failures: tests/kernels/selftest_common.cuh (via bench_device.cuh).
template <class C, typename T>
__global__ void __launch_bounds__(C::THREADS) k_softmax(const T* x, T* y, int64_t rows, int64_t n) {
    softmax_rows<C, SoftmaxMode::kSoftmax, true>(x, rows, n, StoreChain<T>{y});
}
template <class C, typename T>
__global__ void __launch_bounds__(C::THREADS) k_norm(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t n) {
    norm_rows<C, NormMode::kLayerNorm, true, true>(x, w, b, rows, n, NormShape{1e-5f, 1, 1, 1}, StoreChain<T>{y});
}
// The copy ceiling of these templates: the map template with an identity chain, exactly as
// rowwise_bench.cu's "copy (map identity)".
template <typename T> struct Copy {
    static constexpr int kSlots = 1;
    const T* x;
    T* y;
    template <int V> __device__ void load(float (&s)[1][V], int64_t i) const { load_vec<V>(s[0], x + i); }
    template <int V> __device__ void apply(float (&s)[1][V], int64_t i) const { store_vec<V>(y + i, s[0]); }
};
template <typename T, int V> __global__ void __launch_bounds__(256) k_copy(Copy<T> c, int64_t n) {
    map_elements<256, V, 4, false>(n, c);
}

// A cluster launch of a split-row config C (SPLIT CTAs per row).
template <class C, typename... KArgs, typename... Args>
cudaError_t launch_split(void (*kernel)(KArgs...), int64_t rows, Args... args) {
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(unsigned(rows * C::SPLIT));
    lc.blockDim = dim3(C::THREADS);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C::SPLIT;
    attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
    lc.attrs = attr;
    lc.numAttrs = 1;
    return cudaLaunchKernelEx(&lc, kernel, args...);
}

// ---- inputs, fp64 reference, timing ------------------------------------------------------------

// One block of 256 threads per row, fp64: softmax (mode 0) or layer_norm with w, b (mode 2).
template <typename T>
__global__ void __launch_bounds__(256) k_reference(const T* x, const T* w, const T* b, const T* y, int64_t n, int mode,
                                                  double eps, double atol, double rtol, CheckOut* out) {
    __shared__ double sh[8];
    const T* xr = x + blockIdx.x * n;
    const T* yr = y + blockIdx.x * n;
    double a = 0, c = 0;
    if (mode == kSoftmax) {
        double m = -INFINITY;
        for (int64_t i = threadIdx.x; i < n; i += 256) m = fmax(m, double(to_f32(xr[i])));
        a = block_max(m, sh);
        double s = 0;
        for (int64_t i = threadIdx.x; i < n; i += 256) s += exp(double(to_f32(xr[i])) - a);
        c = block_sum(s, sh);
    } else {
        double s = 0;
        for (int64_t i = threadIdx.x; i < n; i += 256) s += double(to_f32(xr[i]));
        a = block_sum(s, sh) / double(n);
        double q = 0;
        for (int64_t i = threadIdx.x; i < n; i += 256) {
            const double d = double(to_f32(xr[i])) - a;
            q += d * d;
        }
        c = 1.0 / sqrt(block_sum(q, sh) / double(n) + eps);
    }
    for (int64_t i = threadIdx.x; i < n; i += 256) {
        const double v = double(to_f32(xr[i]));
        const double ref = mode == kSoftmax ? exp(v - a) / c : (v - a) * c * double(to_f32(w[i])) + double(to_f32(b[i]));
        const float yv = to_f32(yr[i]);
        const double err = fabs(double(yv) - ref);
        if (!(err <= atol + rtol * fabs(ref))) atomicAdd(&out->bad, 1ULL);
        if (err == err) atomicMax(&out->max_err_bits, __float_as_uint(float(err)));
    }
}
// "ok max|err| E" or "FAIL B bad, max|err| E" (tolerances of rowwise_bench.cu).
template <typename T> std::string reference_check(const T* x, const T* w, const T* b, const T* y, int64_t rows, int64_t n, int mode) {
    CheckOut* d = nullptr;
    CHECK(cudaMalloc(&d, sizeof(CheckOut)));
    CHECK(cudaMemset(d, 0, sizeof(CheckOut)));
    const double tol = sizeof(T) == 4 ? 2e-5 : 1.6e-2;
    const double atol = mode == kSoftmax ? tol * 0.05 : tol * 5;
    k_reference<T><<<unsigned(rows), 256>>>(x, w, b, y, n, mode, 1e-5, atol, tol, d);
    CHECK(cudaGetLastError());
    CheckOut h;
    CHECK(cudaMemcpy(&h, d, sizeof h, cudaMemcpyDeviceToHost));
    CHECK(cudaFree(d));
    float e;
    std::memcpy(&e, &h.max_err_bits, 4);
    char buf[96];
    if (h.bad) std::snprintf(buf, sizeof buf, "FAIL %llu bad, max|err| %.3g", h.bad, e);
    else std::snprintf(buf, sizeof buf, "ok max|err| %.3g", e);
    return buf;
}


struct Timer {
    void* flush = nullptr;
    size_t flush_bytes = 0;
    Timer() {
        int l2 = 0;
        CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        flush_bytes = size_t(l2) * 2;
        CHECK(cudaMalloc(&flush, flush_bytes));
    }
    // Median of 50 L2-flushed runs after 5 warm-ups; launch() returns a launch error.
    double run(const std::string& name, const char* shape, double bytes, const std::function<cudaError_t()>& launch,
               const std::string& check, const std::string& after = "") {
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        for (int i = 0; i < 5; ++i) CHECK(launch());
        std::vector<float> ms;
        for (int i = 0; i < 50; ++i) {
            CHECK(cudaMemsetAsync(flush, i, flush_bytes));
            CHECK(cudaEventRecord(a));
            CHECK(launch());
            CHECK(cudaEventRecord(b));
            CHECK(cudaEventSynchronize(b));
            float t = 0;
            CHECK(cudaEventElapsedTime(&t, a, b));
            ms.push_back(t);
        }
        CHECK(cudaGetLastError());
        std::sort(ms.begin(), ms.end());
        const double med = ms[ms.size() / 2];
        const double gbs = bytes / (med * 1e-3) / 1e9;
        std::printf("%-48s %-17s %8.1f us (min %7.1f max %7.1f) %6.0f GB/s %5.1f%%cpy  %s%s\n", name.c_str(), shape,
                    med * 1e3, ms.front() * 1e3, ms.back() * 1e3, gbs, 100.0 * gbs / kCopyCeilingGBs, check.c_str(),
                    after.c_str());
        std::fflush(stdout);
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        return med;
    }
};

template <typename T> struct DevBuf {
    T* p = nullptr;
    explicit DevBuf(size_t n) { CHECK(cudaMalloc(&p, n * sizeof(T))); }
    ~DevBuf() { cudaFree(p); }
    DevBuf(const DevBuf&) = delete;
    DevBuf& operator=(const DevBuf&) = delete;
};

// One problem instance (x, y, w, b, workspace) and its measured variants.
template <typename T> struct Problem {
    static constexpr int VEC = 16 / sizeof(T);
    int mode;
    int64_t rows, n;
    char shape[48];
    DevBuf<T> x, y, w, b;
    DevBuf<float4> ws;
    DevBuf<unsigned> cnt;
    DevBuf<int> err;
    unsigned arrived = 0;  // every counter's value (the sum of S over the launches so far)
    int sms = 0;
    Timer& tm;
    double bytes;

    Problem(Timer& t, int mode_, int64_t rows_, int64_t n_, const char* ty)
        : mode(mode_), rows(rows_), n(n_), x(size_t(rows_ * n_)), y(size_t(rows_ * n_)), w(size_t(n_)), b(size_t(n_)),
          ws(size_t(rows_) * 4096), cnt(size_t(rows_)), err(1), tm(t) {
        std::snprintf(shape, sizeof shape, "%s %lldx%lld", ty, (long long)rows, (long long)n);
        if (n % VEC != 0) {
            std::printf("bad shape %s: n must be a multiple of %d\n", shape, VEC);
            std::exit(2);
        }
        k_fill<T><<<132 * 8, 256>>>(x.p, rows * n, 11 + uint32_t(n % 97), 1);
        k_fill<T><<<132 * 8, 256>>>(w.p, n, 14, 0);
        k_fill<T><<<132 * 8, 256>>>(b.p, n, 15, 0);
        CHECK(cudaGetLastError());
        CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0));
        bytes = 2.0 * double(rows * n) * sizeof(T) + (mode == kLayerNorm ? 2.0 * n * sizeof(T) : 0.0);
        reset_counters();
    }
    void reset_counters() {
        CHECK(cudaMemset(cnt.p, 0, size_t(rows) * sizeof(unsigned)));
        CHECK(cudaMemset(err.p, 0, sizeof(int)));
        arrived = 0;
    }
    int read_err() {
        int e = 0;
        CHECK(cudaMemcpy(&e, err.p, sizeof e, cudaMemcpyDeviceToHost));
        return e;
    }
    std::string check() { return reference_check<T>(x.p, w.p, b.p, y.p, rows, n, mode); }
    // The copy's own check: y must equal x byte for byte (not the softmax/norm reference).
    std::string check_copy() {
        const size_t bytes_xy = size_t(rows * n) * sizeof(T);
        std::vector<unsigned char> hx(bytes_xy), hy(bytes_xy);
        CHECK(cudaMemcpy(hx.data(), x.p, bytes_xy, cudaMemcpyDeviceToHost));
        CHECK(cudaMemcpy(hy.data(), y.p, bytes_xy, cudaMemcpyDeviceToHost));
        return hx == hy ? std::string("ok (identical)") : std::string("FAIL y differs from x");
    }

    // The checked first launch (y poisoned with NaN), then the timing.
    void measure(const std::string& name, const std::function<cudaError_t()>& launch, const std::string& after = "",
                 bool is_copy = false) {
        CHECK(cudaMemset(y.p, 0xff, size_t(rows * n) * sizeof(T)));
        cudaError_t e = launch();
        if (e == cudaSuccess) e = cudaDeviceSynchronize();
        if (e != cudaSuccess) {
            std::printf("%-48s %-17s launch failed: %s\n", name.c_str(), shape, cudaGetErrorString(e));
            cudaGetLastError();
            ++g_failures;
            return;
        }
        int fe = read_err();
        std::string chk = fe        ? "FAIL barrier timeout (flag " + std::to_string(fe) + ")"
                          : is_copy ? check_copy()
                                    : check();
        if (chk.rfind("FAIL", 0) == 0) {
            std::printf("%-48s %-17s %s%s\n", name.c_str(), shape, chk.c_str(), after.c_str());
            ++g_failures;
            reset_counters();
            return;
        }
        tm.run(name, shape, bytes, launch, chk, after);
        if ((fe = read_err()) != 0) {
            std::printf("  ^ FAIL: barrier timeout flag %d set during the timed runs: time invalid\n", fe);
            ++g_failures;
            reset_counters();
        }
    }

    void copy() {
        measure("copy", [this] {
            const int64_t e = rows * n;
            k_copy<T, VEC><<<unsigned((e + 256 * VEC * 4 - 1) / (256 * VEC * 4)), 256>>>(Copy<T>{x.p, y.p}, e);
            return cudaGetLastError();
        }, "", true);
    }
    template <class C> void split(const char* label) {
        // Cluster sizes above 8 are non-portable: allowed once, outside the timing.
        if (C::SPLIT > 8) {
            CHECK(cudaFuncSetAttribute(k_softmax<C, T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
            CHECK(cudaFuncSetAttribute(k_norm<C, T>, cudaFuncAttributeNonPortableClusterSizeAllowed, 1));
        }
        if (mode == kSoftmax) {
            measure(label, [this] { return launch_split<C>(k_softmax<C, T>, rows, (const T*)x.p, y.p, rows, n); });
        } else {
            measure(label, [this] {
                return launch_split<C>(k_norm<C, T>, rows, (const T*)x.p, (const T*)w.p, (const T*)b.p, y.p, rows, n);
            });
        }
    }
    RgParams<T> params(int S) {
        RgParams<T> p{};
        p.x = x.p, p.y = y.p, p.w = w.p, p.b = b.p, p.rows = rows, p.n = n, p.S = S;
        p.chunk = int(((n + S - 1) / S + VEC - 1) / VEC * VEC);
        p.eps = 1e-5f;
        p.ws = ws.p, p.cnt = cnt.p, p.err = err.p;
        return p;
    }
    // Two kernels, chunks of about chunk_kb KiB, 512 threads.
    template <int MODE> void two_kernel(int chunk_kb) {
        const int S = int((n * int64_t(sizeof(T)) + chunk_kb * 1024 - 1) / (chunk_kb * 1024));
        if (S > 4096) return;
        const RgParams<T> p = params(S);
        char name[96];
        std::snprintf(name, sizeof name, "two-kernel 3 passes S%d (%d KiB chunks)", S, int(p.chunk * sizeof(T) / 1024));
        measure(name, [p, S, this] {
            k_partials<MODE, 512, T><<<dim3(unsigned(S), unsigned(rows)), 512>>>(p);
            k_finish<MODE, 512, T><<<dim3(unsigned(S), unsigned(rows)), 512>>>(p);
            return cudaGetLastError();
        });
    }
    // The row-group kernel with buffers of about buf_kb KiB each.
    template <int MODE, int THREADS, int NBUF> void rowgroup(int buf_kb) {
        const int S = int((n * int64_t(sizeof(T)) + buf_kb * 1024 - 1) / (buf_kb * 1024));
        char name[112];
        std::snprintf(name, sizeof name, "rowgroup t%d nbuf%d %dKiB S%d", THREADS, NBUF, buf_kb, S);
        if (S > 4096) {
            std::printf("%-48s %-17s skipped: more than 4096 chunks per row\n", name, shape);
            return;
        }
        RgParams<T> p = params(S);
        const size_t smem = size_t(NBUF) * p.chunk * sizeof(T);
        auto kernel = k_rowgroup<MODE, THREADS, NBUF, T>;
        if (cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem)) != cudaSuccess) {
            cudaGetLastError();
            std::printf("%-48s %-17s skipped: %zu B of shared memory do not fit a CTA\n", name, shape, smem);
            return;
        }
        int per_sm = 0;
        CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, THREADS, smem));
        const int resident = per_sm * sms;
        p.G = int(std::min<int64_t>(rows, resident / S));
        if (p.G == 0) {
            std::printf("%-48s %-17s skipped: S %d > %d co-resident CTAs (%d per SM, %zu B smem)\n", name, shape, S,
                        resident, per_sm, smem);
            return;
        }
        const int grid = p.G * S;
        char after[128];
        std::snprintf(after, sizeof after, "  [%d/SM, G %d rows/wave, grid %d, %lld waves, smem %zu B]", per_sm, p.G,
                      grid, (long long)((rows + p.G - 1) / p.G), smem);
        reset_counters();
        measure(name,
                [=]() mutable {
                    p.target = arrived + unsigned(S);
                    arrived += unsigned(S);
                    cudaLaunchConfig_t lc = {};
                    lc.gridDim = dim3(unsigned(grid));
                    lc.blockDim = dim3(THREADS);
                    lc.dynamicSmemBytes = smem;
                    cudaLaunchAttribute attr[1];
                    attr[0].id = cudaLaunchAttributeCooperative;  // refuses a grid that is not co-resident
                    attr[0].val.cooperative = 1;
                    lc.attrs = attr;
                    lc.numAttrs = 1;
                    return cudaLaunchKernelEx(&lc, kernel, p);
                },
                after);
    }
};

template <typename T> void softmax_shape(Timer& tm, int64_t rows, int64_t n, const char* ty) {
    constexpr int V = 16 / sizeof(T);
    Problem<T> pb(tm, kSoftmax, rows, n, ty);
    std::printf("\n-- softmax %s --\n", pb.shape);
    pb.copy();
    pb.template split<RowCfg<512, 1, V, 0, 16>>("split t512 passes2 split16");
    pb.template split<RowCfg<1024, 1, V, 0, 8>>("split t1024 passes2 split8");
    pb.template two_kernel<kSoftmax>(64);
    pb.template rowgroup<kSoftmax, 512, 2>(32);
    pb.template rowgroup<kSoftmax, 512, 2>(48);
    pb.template rowgroup<kSoftmax, 512, 2>(96);
    pb.template rowgroup<kSoftmax, 1024, 2>(96);
    pb.template rowgroup<kSoftmax, 512, 1>(64);
    pb.template rowgroup<kSoftmax, 512, 1>(96);
    pb.template rowgroup<kSoftmax, 1024, 1>(192);
}

void layer_norm_shape(Timer& tm, int64_t rows, int64_t n) {
    Problem<float> pb(tm, kLayerNorm, rows, n, "f32");
    std::printf("\n-- layer_norm (w, b) %s --\n", pb.shape);
    pb.copy();
    pb.split<RowCfg<512, 1, 4, 0, 16>>("split t512 passes2 split16");
    pb.split<RowCfg<1024, 1, 4, 0, 8>>("split t1024 passes2 split8");
    pb.two_kernel<kLayerNorm>(64);
    pb.rowgroup<kLayerNorm, 512, 2>(32);
    pb.rowgroup<kLayerNorm, 512, 2>(48);
    pb.rowgroup<kLayerNorm, 512, 2>(96);
    pb.rowgroup<kLayerNorm, 512, 1>(64);
}

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 3;
    }
    cudaDeviceProp prop;
    CHECK(cudaGetDeviceProperties(&prop, 0));
    std::printf("%s, %d SMs, L2 %d MB, %zu B smem/SM; %% of %.0f GB/s copy ceiling; compulsory bytes\n", prop.name,
                prop.multiProcessorCount, prop.l2CacheSize >> 20, prop.sharedMemPerMultiprocessor, kCopyCeilingGBs);
    if (!prop.cooperativeLaunch) {
        std::printf("FAIL: the device does not support cooperative launches\n");
        return 1;
    }
    Timer tm;
    softmax_shape<float>(tm, 128, 1048576, "f32");
    softmax_shape<bf16>(tm, 128, 1048576, "bf16");
    softmax_shape<float>(tm, 128, 262144, "f32");
    softmax_shape<bf16>(tm, 128, 262144, "bf16");
    softmax_shape<float>(tm, 32, 4194304, "f32");
    softmax_shape<bf16>(tm, 32, 4194304, "bf16");
    layer_norm_shape(tm, 128, 1048576);
    std::printf("\n%d variant(s) failed\n", g_failures);
    return g_failures ? 1 : 0;
}
