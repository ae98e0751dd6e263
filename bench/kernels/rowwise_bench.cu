// Bandwidth benchmark of kforge's row-wise and element-wise templates at large sizes.
// Build and run from the repo root (one command):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        bench/kernels/rowwise_bench.cu -o build/rowwise_bench && build/rowwise_bench   # mkdir -p build first
// Protocol: 5 warm-up runs, then 50 timed runs, each after flushing L2 (a memset of a buffer
// of 2x the L2 size), timed alone with CUDA events; the median is reported, with min and max.
// GB/s = (bytes read + bytes written, each tensor once) / median time. "copy" is the map
// template with an identity chain: the practical ceiling the others are compared with.
#include <algorithm>
#include <cstdio>
#include <vector>

#include "kernels/map.cuh"
#include "kernels/norm.cuh"
#include "kernels/reduce_col.cuh"
#include "kernels/softmax.cuh"
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

struct Timer {
    void* flush = nullptr;
    size_t flush_bytes = 0;
    Timer() {
        int l2 = 0;
        CHECK(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0));
        flush_bytes = size_t(l2) * 2;
        CHECK(cudaMalloc(&flush, flush_bytes));
    }
    template <class F> void run(const char* name, const char* shape, double bytes, F launch) {
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
        std::printf("%-34s %-16s %9.1f us  (min %7.1f max %7.1f)  %7.0f GB/s\n", name, shape,
                    med * 1e3, ms.front() * 1e3, ms.back() * 1e3, bytes / (med * 1e-3) / 1e9);
        cudaEventDestroy(a);
        cudaEventDestroy(b);
    }
};

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
        using C = decltype(cfg);
        cudaLaunchConfig_t lc = {};
        lc.gridDim = dim3(unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT));
        lc.blockDim = dim3(C::THREADS);
        cudaLaunchAttribute attr[1];
        attr[0].id = cudaLaunchAttributeClusterDimension;
        attr[0].val.clusterDim.x = C::SPLIT;
        attr[0].val.clusterDim.y = attr[0].val.clusterDim.z = 1;
        lc.attrs = attr;
        lc.numAttrs = C::SPLIT > 1 ? 1 : 0;
        CHECK(cudaLaunchKernelEx(&lc, kernel, args...));
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
    row_suite<float, 16384, 4096, 1>(tm, "f32");
    row_suite<__nv_bfloat16, 16384, 4096, 1>(tm, "bf16");
    row_suite<float, 128, 262144, 8>(tm, "f32");
    row_suite<__nv_bfloat16, 128, 262144, 8>(tm, "bf16");
    row_suite<float, 262144, 128, 1>(tm, "f32");
    row_suite<__nv_bfloat16, 262144, 128, 1>(tm, "bf16");
    return 0;
}
