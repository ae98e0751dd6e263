// Bandwidth benchmark of kforge's row-wise and element-wise templates at large sizes.
// Build and run from the repo root (one command for both parts, with the correctness checks and
// the kforge evaluation of the candidate programs: bench/kernels/rowwise_check.sh):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. -DKFORGE_BENCH_PART=1 \
//        bench/kernels/rowwise_bench.cu -o build/rowwise_bench1 && build/rowwise_bench1
// Part 1: the suite shapes (128x1048576 f32 softmax, 16384x32000 bf16 log_softmax, 32768x8192
// bf16 layer_norm, 65536x4096 bf16 rms_norm), each as its problems/*.kf config ("old") and the
// new knob values (split 16, smem_stage, threads, rows_per_block), each checked against a
// one-block-per-row fp64 reference kernel on the same inputs. Part 2 (-DKFORGE_BENCH_PART=2):
// the first session's shapes (16384x4096, 128x262144 split, 262144x128; f32 and bf16), with
// staged variants of the split rows. Without KFORGE_BENCH_PART both parts are built.
// Protocol: 5 warm-up runs, then 50 timed runs, each after flushing L2 (a memset of a buffer
// of 2x the L2 size), timed alone with CUDA events; the median is reported, with min and max.
// GB/s = (bytes read + bytes written, each tensor once) / median time; "%cpy" = that over the
// measured copy ceiling 4.23 TB/s (bench/calibration/h200.json). "copy" is the map template with
// an identity chain: the practical ceiling of these templates.
#include <algorithm>
#include <cstdio>
#include <set>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "kernels/map.cuh"
#include "kernels/norm.cuh"
#include "kernels/reduce_col.cuh"
#include "kernels/softmax.cuh"
#include "bench/kernels/bench_device.cuh"
#include "tests/kernels/selftest_common.cuh"

using namespace kforge;

template <typename T> struct Copy {
    static constexpr int kSlots = 1;
    const T* x; T* y;
    template <int V> __device__ void load(float (&s)[1][V], int64_t i) const { load_vec<V>(s[0], x + i); }
    template <int V> __device__ void apply(float (&s)[1][V], int64_t i) const { store_vec<V>(y + i, s[0]); }
};
template <typename T, int V> __global__ void __launch_bounds__(256) k_copy(Copy<T> c, int64_t n) {
    map_elements<256, V, 4, false>(n, c);
}
template <class C, SoftmaxMode M, bool ON, typename T>
__global__ void __launch_bounds__(C::THREADS) k_softmax(const T* x, T* y, int64_t rows, int64_t n) {
    softmax_rows<C, M, ON>(x, rows, n, StoreChain<T>{y});
}
template <class C, NormMode M, typename T>
__global__ void __launch_bounds__(C::THREADS) k_norm(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t n) {
    norm_rows<C, M, true, M == NormMode::kLayerNorm>(x, w, b, rows, n, NormShape{1e-5f, 1, 1, 1}, StoreChain<T>{y});
}
template <class C, typename T>
__global__ void __launch_bounds__(C::THREADS) k_sum(const T* x, float* y, int64_t rows, int64_t n) {
    reduce_rows<C, ReduceMode::kSum>(x, rows, n, StoreChain<float>{y});
}
template <int TX, int TY, int V, typename T>
__global__ void __launch_bounds__(TX * TY) k_cols(const T* x, float* ws, float* y, int64_t r, int64_t in, int64_t c) {
    reduce_cols<TX, TY, V, ReduceMode::kSum>(x, ws, 1, r, in, c, StoreChain<float>{y});
}
template <int V> __global__ void k_fin(const float* ws, float* y, int64_t s, int64_t t, int64_t r) {
    reduce_col_finish<V, ReduceMode::kSum>(ws, s, t, r, StoreChain<float>{y});
}

// A row config for rows of N split SPLIT ways: 16-byte vectors, a row group of up to 1024
// threads holding about 4 vectors each (ITEMS = 0: streamed).
template <typename T, long long N, int SPLIT, bool CACHED> struct Auto {
    static constexpr int VEC = 16 / sizeof(T);
    static constexpr long long VECS = N / SPLIT / VEC;
    static constexpr int TPR = VECS <= 128 ? int(std::max<long long>(1, VECS / 4)) : int(std::min<long long>(1024, std::max<long long>(32, VECS / 4)));
    static constexpr int RPB = TPR >= 256 ? 1 : 256 / TPR;
    using Cfg = RowCfg<TPR, RPB, VEC, CACHED ? int((VECS + TPR - 1) / TPR) : 0, SPLIT>;
};

constexpr double kCopyCeilingGBs = 4230.0;  // H200 cudaMemcpy D2D, bench/calibration/h200.json

// Launch a row kernel of config C over `rows` rows: grid, cluster (non-portable above 8) and
// the dynamic shared memory of a staged row, without synchronising.
template <class C, typename T, typename... KArgs, typename... Args>
cudaError_t launch_row(void (*kernel)(KArgs...), int64_t rows, Args... args) {
    constexpr size_t smem = size_t(C::RPB) * C::STAGE_ELEMS * sizeof(T);
    static std::set<const void*> prepared;  // attributes set once per kernel, outside timing
    if (prepared.insert(reinterpret_cast<const void*>(kernel)).second) {
        cudaError_t e = cudaSuccess;
        if (smem > 0) e = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, int(smem));
        if (e == cudaSuccess && C::SPLIT > 8)
            e = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1);
        if (e != cudaSuccess) return e;
    }
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT));
    lc.blockDim = dim3(C::THREADS);
    lc.dynamicSmemBytes = smem;
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C::SPLIT;
    attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
    lc.attrs = attr;
    lc.numAttrs = C::SPLIT > 1 ? 1 : 0;
    return cudaLaunchKernelEx(&lc, kernel, args...);
}

// Clusters of C::SPLIT CTAs (with C's shared memory) that fit on the GPU at once, or 0.
template <class C, typename T, typename... KArgs> int active_clusters(void (*kernel)(KArgs...)) {
    if (C::SPLIT == 1) return 0;
    cudaLaunchConfig_t lc = {};
    lc.gridDim = dim3(C::SPLIT * 64);
    lc.blockDim = dim3(C::THREADS);
    lc.dynamicSmemBytes = size_t(C::RPB) * C::STAGE_ELEMS * sizeof(T);
    cudaLaunchAttribute attr[1];
    attr[0].id = cudaLaunchAttributeClusterDimension;
    attr[0].val.clusterDim.x = C::SPLIT;
    attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
    lc.attrs = attr;
    lc.numAttrs = 1;
    int n = 0;
    if (cudaOccupancyMaxActiveClusters(&n, kernel, &lc) != cudaSuccess) {
        cudaGetLastError();
        return -1;
    }
    return n;
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
    // Times launch() and prints one row; `check` is the correctness column ("" when unchecked).
    template <class F>
    double run(const char* name, const char* shape, double bytes, F launch, const char* check = "") {
        cudaEvent_t a, b;
        CHECK(cudaEventCreate(&a));
        CHECK(cudaEventCreate(&b));
        for (int i = 0; i < 5; ++i) launch();
        std::vector<float> ms;
        for (int i = 0; i < 50; ++i) {
            CHECK(cudaMemsetAsync(flush, i, flush_bytes));
            CHECK(cudaEventRecord(a));
            launch();
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
        std::printf("%-44s %-20s %9.1f us  (min %7.1f max %7.1f)  %7.0f GB/s %5.1f%%cpy  %s\n",
                    name, shape, med * 1e3, ms.front() * 1e3, ms.back() * 1e3, gbs,
                    100.0 * gbs / kCopyCeilingGBs, check);
        std::fflush(stdout);
        cudaEventDestroy(a);
        cudaEventDestroy(b);
        return med;
    }
};

// ---- inputs and references on the device (the suite shapes are too large for host mirrors) --

__device__ void check_elem(CheckOut* out, float y, double ref, double atol, double rtol) {
    const double err = fabs(double(y) - ref);
    if (!(err <= atol + rtol * fabs(ref))) atomicAdd(&out->bad, 1ULL);
    if (err == err) atomicMax(&out->max_err_bits, __float_as_uint(float(err)));
}
// One block of 256 threads per row; mode 0 softmax, 1 log_softmax, 2 layer_norm (w, b),
// 3 rms_norm (w), 4 group_norm (w, b per channel of `gs`). Compares y with the fp64 result of
// the same x.
template <typename T>
__global__ void __launch_bounds__(256) k_reference_check(const T* x, const T* w, const T* b, const T* y, int64_t n,
                                                        int mode, double eps, double atol, double rtol, CheckOut* out,
                                                        NormShape gs) {
    __shared__ double sh[8];
    const T* xr = x + blockIdx.x * n;
    const T* yr = y + blockIdx.x * n;
    double a = 0, c = 0;
    if (mode <= 1) {
        double m = -INFINITY;
        for (int64_t i = threadIdx.x; i < n; i += 256) m = fmax(m, double(to_f32(xr[i])));
        a = block_max(m, sh);
        double s = 0;
        for (int64_t i = threadIdx.x; i < n; i += 256) s += exp(double(to_f32(xr[i])) - a);
        c = block_sum(s, sh);
    } else {
        double s = 0;
        if (mode == 2 || mode == 4) {
            for (int64_t i = threadIdx.x; i < n; i += 256) s += double(to_f32(xr[i]));
            a = block_sum(s, sh) / double(n);  // mean
        }
        double q = 0;
        for (int64_t i = threadIdx.x; i < n; i += 256) {
            const double d = double(to_f32(xr[i])) - a;
            q += d * d;
        }
        c = 1.0 / sqrt(block_sum(q, sh) / double(n) + eps);  // rstd
    }
    for (int64_t i = threadIdx.x; i < n; i += 256) {
        const double v = double(to_f32(xr[i]));
        double ref;
        if (mode == 0) ref = exp(v - a) / c;
        else if (mode == 1) ref = v - a - log(c);
        else if (mode == 2) ref = (v - a) * c * double(to_f32(w[i])) + double(to_f32(b[i]));
        else if (mode == 3) ref = v * c * double(to_f32(w[i]));
        else {
            const int64_t ch = (blockIdx.x % gs.groups) * gs.group_channels + i / gs.spatial;
            ref = (v - a) * c * double(to_f32(w[ch])) + double(to_f32(b[ch]));
        }
        check_elem(out, to_f32(yr[i]), ref, atol, rtol);
    }
}
// "ok max|err| E" or "FAIL B bad, max|err| E" for y against the fp64 reference.
template <typename T>
std::string reference_check(const T* x, const T* w, const T* b, const T* y, int64_t rows, int64_t n, int mode,
                            NormShape gs = NormShape{1e-5f, 1, 1, 1}) {
    CheckOut* d = nullptr;
    CHECK(cudaMalloc(&d, sizeof(CheckOut)));
    CHECK(cudaMemset(d, 0, sizeof(CheckOut)));
    const double tol = sizeof(T) == 4 ? 2e-5 : 1.6e-2;
    const double atol = mode == 0 ? tol * 0.05 : mode == 1 ? tol * 4 : tol * 5;
    k_reference_check<T><<<unsigned(rows), 256>>>(x, w, b, y, n, mode, 1e-5, atol, tol, d, gs);  // k_norm's eps
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

// ---- part 1: the suite problems, their problems/*.kf config ("old") against new knob values --

// One variant: a checked first launch (output poisoned with NaN first), then the timing. A
// variant that cannot launch is reported and skipped (returns the median in ms, or -1).
template <class C, typename T, class L>
double variant(Timer& tm, const char* label, const char* shape, double bytes, T* y, size_t y_elems,
             L launch, std::function<std::string()> check, int clusters) {
    CHECK(cudaMemset(y, 0xff, y_elems * sizeof(T)));
    cudaError_t e = launch();
    if (e == cudaSuccess) e = cudaDeviceSynchronize();
    char name[128];
    const size_t smem = size_t(C::RPB) * C::STAGE_ELEMS * sizeof(T);
    std::snprintf(name, sizeof name, "%s%s", label,
                  C::SPLIT > 1 ? (" [" + std::to_string(clusters) + " clusters fit]").c_str() : "");
    if (e != cudaSuccess) {
        std::printf("%-44s %-20s launch failed: %s (smem %zu B)\n", name, shape, cudaGetErrorString(e), smem);
        cudaGetLastError();
        return -1;
    }
    const std::string chk = check();
    return tm.run(name, shape, bytes, [&] { CHECK(launch()); }, chk.c_str());
}

template <class C, SoftmaxMode M, typename T>
void softmax_variant(Timer& tm, const char* label, const char* shape, const T* x, T* y, int64_t rows, int64_t n) {
    auto kernel = k_softmax<C, M, true, T>;
    variant<C, T>(tm, label, shape, 2.0 * rows * n * sizeof(T), y, size_t(rows * n),
                  [=] { return launch_row<C, T>(kernel, rows, x, y, rows, n); },
                  [=] { return reference_check<T>(x, nullptr, nullptr, y, rows, n, M == SoftmaxMode::kSoftmax ? 0 : 1); },
                  active_clusters<C, T>(kernel));
}

template <class C, NormMode M, typename T>
void norm_variant(Timer& tm, const char* label, const char* shape, const T* x, const T* w, const T* b, T* y,
                  int64_t rows, int64_t n) {
    auto kernel = k_norm<C, M, T>;
    variant<C, T>(tm, label, shape, 2.0 * rows * n * sizeof(T), y, size_t(rows * n),
                  [=] { return launch_row<C, T>(kernel, rows, x, w, b, y, rows, n); },
                  [=] { return reference_check<T>(x, w, b, y, rows, n, M == NormMode::kLayerNorm ? 2 : 3); },
                  active_clusters<C, T>(kernel));
}

template <typename T> struct DevBuf {
    T* p = nullptr;
    explicit DevBuf(size_t n) { CHECK(cudaMalloc(&p, n * sizeof(T))); }
    ~DevBuf() { cudaFree(p); }
};

template <typename T> void copy_row(Timer& tm, const char* shape, const T* x, T* y, int64_t e) {
    constexpr int V = 16 / sizeof(T);
    tm.run("copy (map identity)", shape, 2.0 * e * sizeof(T), [&] {
        k_copy<T, V><<<unsigned((e + 256 * V * 4 - 1) / (256 * V * 4)), 256>>>(Copy<T>{x, y}, e);
    });
}

void suite_problems(Timer& tm) {
    using S = SoftmaxMode;
    using N = NormMode;
    std::printf("\n== part 1: suite problems (old = problems/*.kf config; knob values in brackets) ==\n");
    {  // softmax_long_rows_f32: softmax over 128 x 1M f32, online
        const int64_t rows = 128, n = 1048576;
        const char* sh = "f32 128x1048576";
        DevBuf<float> x(rows * n), y(rows * n);
        fill_dev(x.p, rows * n, 11, 1);
        copy_row(tm, sh, x.p, y.p, rows * n);
        softmax_variant<RowCfg<1024, 1, 4, 0, 8>, S::kSoftmax>(tm, "old: t1024 passes2 split8", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<1024, 1, 4, 0, 16>, S::kSoftmax>(tm, "t1024 passes2 split16", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<1024, 1, 4, 0, 8, 14>, S::kSoftmax>(tm, "t1024 passes2 split8 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<1024, 1, 4, 0, 16, 14>, S::kSoftmax>(tm, "t1024 passes2 split16 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<512, 1, 4, 0, 16, 28>, S::kSoftmax>(tm, "t512 passes2 split16 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<512, 1, 8, 0, 16, 14>, S::kSoftmax>(tm, "t512 vec8 passes2 split16 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<512, 1, 4, 0, 16>, S::kSoftmax>(tm, "t512 passes2 split16", sh, x.p, y.p, rows, n);
    }
    {  // log_softmax_vocab_bf16: 16384 x 32000 bf16, online
        const int64_t rows = 16384, n = 32000;
        const char* sh = "bf16 16384x32000";
        DevBuf<__nv_bfloat16> x(rows * n), y(rows * n);
        fill_dev(x.p, rows * n, 12, 1);
        copy_row(tm, sh, x.p, y.p, rows * n);
        softmax_variant<RowCfg<512, 1, 8, 8, 1>, S::kLogSoftmax>(tm, "old: t512 passes1 (registers)", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<256, 1, 8, 0, 1, 16>, S::kLogSoftmax>(tm, "t256 passes1 (shared memory)", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<512, 1, 8, 0, 1, 8>, S::kLogSoftmax>(tm, "t512 passes1 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<1024, 1, 8, 0, 1, 4>, S::kLogSoftmax>(tm, "t1024 passes1 smem_stage", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<1024, 1, 8, 4, 1>, S::kLogSoftmax>(tm, "t1024 passes1 (registers)", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<128, 1, 8, 0, 1, 32>, S::kLogSoftmax>(tm, "t128 passes1 (shared memory)", sh, x.p, y.p, rows, n);
        softmax_variant<RowCfg<512, 1, 8, 0, 1>, S::kLogSoftmax>(tm, "t512 passes2", sh, x.p, y.p, rows, n);
    }
    {  // layer_norm_bf16: 32768 x 8192 bf16 with w, b
        const int64_t rows = 32768, n = 8192;
        const char* sh = "bf16 32768x8192";
        DevBuf<__nv_bfloat16> x(rows * n), y(rows * n), w(n), b(n);
        fill_dev(x.p, rows * n, 13, 1), fill_dev(w.p, n, 14, 0), fill_dev(b.p, n, 15, 0);
        copy_row(tm, sh, x.p, y.p, rows * n);
        norm_variant<RowCfg<512, 1, 8, 2, 1>, N::kLayerNorm>(tm, "old: t512 passes1", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<256, 1, 8, 4, 1>, N::kLayerNorm>(tm, "t256 passes1", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<1024, 1, 8, 1, 1>, N::kLayerNorm>(tm, "t1024 passes1", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<256, 2, 8, 4, 1>, N::kLayerNorm>(tm, "t512 rows_per_block2 passes1", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<512, 1, 8, 0, 1, 2>, N::kLayerNorm>(tm, "t512 passes1 smem_stage", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<256, 1, 8, 0, 1, 4>, N::kLayerNorm>(tm, "t256 passes1 smem_stage", sh, x.p, w.p, b.p, y.p, rows, n);
        norm_variant<RowCfg<1024, 1, 8, 0, 1, 1>, N::kLayerNorm>(tm, "t1024 passes1 smem_stage", sh, x.p, w.p, b.p, y.p, rows, n);
    }
    {  // rms_norm_bf16: 65536 x 4096 bf16 with w
        const int64_t rows = 65536, n = 4096;
        const char* sh = "bf16 65536x4096";
        DevBuf<__nv_bfloat16> x(rows * n), y(rows * n), w(n);
        fill_dev(x.p, rows * n, 16, 1), fill_dev(w.p, n, 17, 0);
        copy_row(tm, sh, x.p, y.p, rows * n);
        norm_variant<RowCfg<256, 1, 8, 2, 1>, N::kRmsNorm>(tm, "old: t256 passes1", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
        norm_variant<RowCfg<512, 1, 8, 1, 1>, N::kRmsNorm>(tm, "t512 passes1", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
        norm_variant<RowCfg<128, 1, 8, 4, 1>, N::kRmsNorm>(tm, "t128 passes1", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
        norm_variant<RowCfg<128, 2, 8, 4, 1>, N::kRmsNorm>(tm, "t256 rows_per_block2 passes1", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
        norm_variant<RowCfg<256, 1, 8, 0, 1, 2>, N::kRmsNorm>(tm, "t256 passes1 smem_stage", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
        norm_variant<RowCfg<512, 1, 8, 0, 1, 1>, N::kRmsNorm>(tm, "t512 passes1 smem_stage", sh, x.p, w.p, (const __nv_bfloat16*)nullptr, y.p, rows, n);
    }
}

template <typename T, long long ROWS, long long N, int SPLIT> void row_suite(Timer& tm, const char* ty) {
    const int64_t rows = ROWS, n = N, e = rows * n;
    char shape[64];
    std::snprintf(shape, sizeof shape, "%s %lldx%lld", ty, ROWS, N);
    Buf<T> x(e), y(e), w(n), b(n);
    Buf<float> r(rows);
    std::mt19937 rng(1);
    x.fill(rng, 0), w.fill(rng, 0), b.fill(rng, 0);
    const double rw = 2.0 * e * sizeof(T);
    constexpr int V = 16 / sizeof(T);
    tm.run("copy (map identity)", shape, rw, [&] {
        k_copy<T, V><<<unsigned((e + 256 * V * 4 - 1) / (256 * V * 4)), 256>>>(Copy<T>{x.dev, y.dev}, e);
    });
    // Launch without synchronising (a sync would sit inside the timed interval).
    auto row_launch = [&](auto kernel, auto cfg, auto... args) {
        CHECK((launch_row<decltype(cfg), T>(kernel, rows, args...)));
    };
    constexpr bool kFits = N / SPLIT / V <= 64 * 1024 / V;  // <= 64 values per thread at 1024
    using S = SoftmaxMode;
    if constexpr (kFits) {
        using C = typename Auto<T, N, SPLIT, true>::Cfg;
        row_launch(k_softmax<C, S::kSoftmax, false, T>, C{}, (const T*)x.dev, y.dev, rows, n);
        tm.run(SPLIT > 1 ? "softmax cached split" : "softmax cached (1 pass)", shape, rw, [&] {
            row_launch(k_softmax<C, S::kSoftmax, false, T>, C{}, (const T*)x.dev, y.dev, rows, n);
        });
        tm.run("layer_norm cached", shape, rw, [&] {
            row_launch(k_norm<C, NormMode::kLayerNorm, T>, C{}, (const T*)x.dev, (const T*)w.dev, (const T*)b.dev, y.dev, rows, n);
        });
        tm.run("rms_norm cached", shape, rw, [&] {
            row_launch(k_norm<C, NormMode::kRmsNorm, T>, C{}, (const T*)x.dev, (const T*)w.dev, (const T*)b.dev, y.dev, rows, n);
        });
    }
    using CS = typename Auto<T, N, 1, false>::Cfg;
    tm.run("softmax online stream (2 reads)", shape, rw, [&] {
        row_launch(k_softmax<CS, S::kSoftmax, true, T>, CS{}, (const T*)x.dev, y.dev, rows, n);
    });
    if constexpr (SPLIT > 1) {
        using CP = typename Auto<T, N, SPLIT, false>::Cfg;
        tm.run("softmax online stream split", shape, rw, [&] {
            row_launch(k_softmax<CP, S::kSoftmax, true, T>, CP{}, (const T*)x.dev, y.dev, rows, n);
        });
        tm.run("layer_norm stream split", shape, rw, [&] {
            row_launch(k_norm<CP, NormMode::kLayerNorm, T>, CP{}, (const T*)x.dev, (const T*)w.dev, (const T*)b.dev, y.dev, rows, n);
        });
        // The same split rows staged in shared memory (smem_stage; the CTA's part fits whole),
        // over SPLIT and over 16 CTAs; checked against the fp64 reference kernel.
        using CG = RowCfg<CP::TPR, 1, CP::VEC, 0, SPLIT, int(N / SPLIT / CP::VEC / CP::TPR)>;
        using CG16 = RowCfg<CP::TPR, 1, CP::VEC, 0, 16, int(N / 16 / CP::VEC / CP::TPR)>;
        const T* xd = x.dev;
        softmax_variant<CG, S::kSoftmax>(tm, "softmax online split smem_stage", shape, xd, y.dev, rows, n);
        softmax_variant<CG16, S::kSoftmax>(tm, "softmax online split16 smem_stage", shape, xd, y.dev, rows, n);
        norm_variant<CG, NormMode::kLayerNorm>(tm, "layer_norm split smem_stage", shape, xd, (const T*)w.dev, (const T*)b.dev, y.dev, rows, n);
        norm_variant<CG16, NormMode::kRmsNorm>(tm, "rms_norm split16 smem_stage", shape, xd, (const T*)w.dev, (const T*)nullptr, y.dev, rows, n);
    }
    tm.run("logsumexp online stream", shape, double(e) * sizeof(T) + rows * sizeof(T), [&] {
        row_launch(k_softmax<CS, S::kLogsumexp, true, T>, CS{}, (const T*)x.dev, y.dev, rows, n);
    });
    tm.run("sum rows stream", shape, double(e) * sizeof(T) + rows * 4.0, [&] {
        row_launch(k_sum<CS, T>, CS{}, (const T*)x.dev, r.dev, rows, n);
    });
    // Column sum over dim 0 of the same tensor: [rows, n] -> [n].
    constexpr int TX = N / V >= 256 ? 256 : int(N / V), TY = 256 / TX;
    const int64_t blocks_x = (n + TX * V - 1) / (TX * V);
    const int64_t slices = std::max<int64_t>(1, std::min<int64_t>((4 * 132 + blocks_x - 1) / blocks_x, rows / TY));
    const int64_t chunk = (rows + slices - 1) / slices, s2 = (rows + chunk - 1) / chunk;
    Buf<float> ws(s2 * n), yc(n);
    tm.run("sum cols (over dim 0)", shape, double(e) * sizeof(T) + n * 4.0, [&] {
        k_cols<TX, TY, V, T><<<dim3(unsigned(blocks_x), unsigned(s2)), TX * TY>>>(x.dev, ws.dev, yc.dev, rows, n, chunk);
        if (s2 > 1) k_fin<4><<<unsigned((n + 127) / 128), 256>>>(ws.dev, yc.dev, s2, n, rows);
    });
}

#ifndef KFORGE_BENCH_NO_MAIN  // bench/kernels/rowrev includes this file for its harness
int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 3;
    }
    cudaDeviceProp p;
    CHECK(cudaGetDeviceProperties(&p, 0));
    std::printf("%s, %d SMs, L2 %d MB\n", p.name, p.multiProcessorCount, p.l2CacheSize >> 20);
    Timer tm;
#if !defined(KFORGE_BENCH_PART) || KFORGE_BENCH_PART == 1
    suite_problems(tm);
#endif
#if !defined(KFORGE_BENCH_PART) || KFORGE_BENCH_PART == 2
    std::printf("\n== part 2: first-session shapes ==\n");
    row_suite<float, 16384, 4096, 1>(tm, "f32");
    row_suite<__nv_bfloat16, 16384, 4096, 1>(tm, "bf16");
    row_suite<float, 128, 262144, 8>(tm, "f32");
    row_suite<__nv_bfloat16, 128, 262144, 8>(tm, "bf16");
    row_suite<float, 262144, 128, 1>(tm, "f32");
    row_suite<__nv_bfloat16, 262144, 128, 1>(tm, "bf16");
#endif
    return 0;
}
#endif
