// GPU self-test of kforge's templates (kernels/*.cuh) against fp64 CPU references, for several
// knob settings, two input distributions (uniform [-1, 1]; normal mean 5 sd 10), f32 and bf16.
// Outputs are poisoned with NaN before each run, so an element left unwritten fails.
// Build and run (repo root; exits 0 when all pass, 1 on a failure, 3 without a GPU):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        tests/kernels/gpu_selftest.cu -o build/gpu_selftest && build/gpu_selftest   # mkdir -p build first
#include "kernels/map.cuh"
#include "kernels/chain_ops.cuh"
#include "kernels/norm.cuh"
#include "kernels/reduce_col.cuh"
#include "kernels/softmax.cuh"
#include "tests/kernels/selftest_common.cuh"

using namespace kforge;

template <class C, SoftmaxMode M, bool ON, typename T>
__global__ void k_softmax(const T* x, T* y, int64_t rows, int64_t n) {
    softmax_rows<C, M, ON>(x, rows, n, StoreChain<T>{y});
}
template <class C, NormMode M, typename T>
__global__ void k_norm(const T* x, const T* w, const T* b, T* y, int64_t rows, int64_t n,
                       NormShape s) {
    norm_rows<C, M, true, M != NormMode::kRmsNorm>(x, w, b, rows, n, s, StoreChain<T>{y});
}
template <class C, NormMode M, typename T>
__global__ void k_normalize(const T* x, T* y, int64_t rows, int64_t n, NormShape s) {
    norm_rows<C, M, false, false>(x, (const float*)nullptr, (const float*)nullptr, rows, n, s,
                                  StoreChain<T>{y});
}
template <class C, ReduceMode M, typename T>
__global__ void k_reduce(const T* x, float* y, int64_t rows, int64_t n) {
    reduce_rows<C, M>(x, rows, n, StoreChain<float>{y});
}
template <int TX, int TY, int V, ReduceMode M, typename T>
__global__ void k_cols(const T* x, float* ws, float* y, int64_t o, int64_t r, int64_t in, int64_t c) {
    reduce_cols<TX, TY, V, M>(x, ws, o, r, in, c, StoreChain<float>{y});
}
template <int V, ReduceMode M>
__global__ void k_cols_finish(const float* ws, float* y, int64_t s, int64_t t, int64_t r) {
    reduce_col_finish<V, M>(ws, s, t, r, StoreChain<float>{y});
}
// map chain: y = gelu_tanh(x + b[col]) * 2, through the functor interface map.cuh expects.
template <typename T> struct BiasGelu {
    static constexpr int kSlots = 2;
    const T* x; const T* b; T* y; int64_t cols;
    template <int V> __device__ void load(float (&s)[2][V], int64_t i) const {
        load_vec<V>(s[0], x + i);
        load_vec<V>(s[1], b + i % cols);
    }
    template <int V> __device__ void apply(float (&s)[2][V], int64_t i) const {
        for (int j = 0; j < V; ++j) s[0][j] = act_gelu_tanh(s[0][j] + s[1][j]) * 2.f;
        store_vec<V>(y + i, s[0]);
    }
};
template <int B, int V, int I, bool GS, typename T> __global__ void k_map(BiasGelu<T> c, int64_t n) {
    map_elements<B, V, I, GS>(n, c);
}

// Three sweeps of a RowView, each recording per column how often it was visited
// (visits[sweep][row][col]) and, per sweep, the visits out of the expected order (streamed
// columns rising, or falling on the second sweep with SWEEP_ALTERNATE) or with a value that is
// not x at that column (errors[sweep]).
template <class C, int SWEEP>
__device__ void record_sweep(RowView<C, float>& rv, const RowPlace& p, const float* x, int64_t rows,
                             int64_t n, float* visits, float* errors) {
    constexpr bool kBackward = C::SWEEP_ALTERNATE && SWEEP == 1;
    const int64_t streamed = p.begin + int64_t(C::STAGED) * C::TPR * C::VEC;
    int64_t last = kBackward ? INT64_MAX : -1;
    rv.each([&](const float (&v)[C::VEC], int64_t col) {
        for (int j = 0; j < C::VEC; ++j) {
            atomicAdd(&visits[(SWEEP * rows + p.row) * n + col + j], 1.f);
            if (v[j] != x[p.row * n + col + j]) atomicAdd(&errors[SWEEP], 1.f);
        }
        if (col < streamed) return;
        if (kBackward ? col >= last : col <= last) atomicAdd(&errors[SWEEP], 1.f);
        last = col;
    });
}
template <class C>
__global__ void k_sweep_order(const float* x, int64_t rows, int64_t n, float* visits, float* errors) {
    const RowPlace p = row_place<C>(rows, n);
    RowView<C, float> rv(x, n, p);
    rv.load();
    record_sweep<C, 0>(rv, p, x, rows, n, visits, errors);
    record_sweep<C, 1>(rv, p, x, rows, n, visits, errors);
    record_sweep<C, 2>(rv, p, x, rows, n, visits, errors);
}
template <class C> void sweep_order_case(const char* knobs, int64_t rows, int64_t n, std::mt19937& rng) {
    Buf<float> x(rows * n), visits(3 * rows * n), errors(3);
    x.fill(rng, 0);
    CHECK(cudaMemset(visits.dev, 0, visits.n * sizeof(float)));
    CHECK(cudaMemset(errors.dev, 0, errors.n * sizeof(float)));
    launch_smem(k_sweep_order<C>, unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT), C::THREADS,
                C::SPLIT, stage_bytes<C, float>(), (const float*)x.dev, rows, n, visits.dev, errors.dev);
    char name[160];
    std::snprintf(name, sizeof name, "sweep order %lldx%lld %s: visits", (long long)rows, (long long)n, knobs);
    compare(name, visits.read(), std::vector<double>(visits.n, 1.0), 0, 0);
    std::snprintf(name, sizeof name, "sweep order %lldx%lld %s: order, values", (long long)rows, (long long)n, knobs);
    compare(name, errors.read(), std::vector<double>(3, 0.0), 0, 0);
}

// ---- fp64 references -----------------------------------------------------------------------
std::vector<double> ref_softmax(const std::vector<double>& x, int64_t rows, int64_t n, int mode) {
    std::vector<double> y(mode == 2 ? rows : rows * n);
    for (int64_t r = 0; r < rows; ++r) {
        const double* xr = &x[r * n];
        double m = -INFINITY, s = 0;
        for (int64_t c = 0; c < n; ++c) m = std::max(m, xr[c]);
        const double sh = std::isinf(m) ? 0.0 : m;
        for (int64_t c = 0; c < n; ++c) s += std::exp(xr[c] - sh);
        if (mode == 2) { y[r] = sh + std::log(s); continue; }
        for (int64_t c = 0; c < n; ++c) {
            y[r * n + c] = mode == 0 ? std::exp(xr[c] - sh) / s : xr[c] - sh - std::log(s);
        }
    }
    return y;
}
std::vector<double> ref_norm(const std::vector<double>& x, const std::vector<double>& w,
                             const std::vector<double>& b, int64_t rows, int64_t n, NormMode m,
                             NormShape s) {
    std::vector<double> y(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
        const double* xr = &x[r * n];
        double mean = 0, var = 0;
        for (int64_t c = 0; c < n; ++c) mean += xr[c];
        mean /= n;
        for (int64_t c = 0; c < n; ++c) {
            var += m == NormMode::kRmsNorm ? xr[c] * xr[c] : (xr[c] - mean) * (xr[c] - mean);
        }
        const double rstd = 1.0 / std::sqrt(var / n + s.eps);
        for (int64_t c = 0; c < n; ++c) {
            const int64_t p = m == NormMode::kGroupNorm
                                  ? (r % s.groups) * s.group_channels + c / s.spatial : c;
            y[r * n + c] = m == NormMode::kRmsNorm ? xr[c] * rstd * w[p]
                                                   : (xr[c] - mean) * rstd * w[p] + b[p];
        }
    }
    return y;
}
// x / max(sum |x| or sqrt(sum x^2), eps) per row.
std::vector<double> ref_normalize(const std::vector<double>& x, int64_t rows, int64_t n, bool l2,
                                  double eps) {
    std::vector<double> y(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
        double s = 0;
        for (int64_t c = 0; c < n; ++c) s += l2 ? x[r * n + c] * x[r * n + c] : std::fabs(x[r * n + c]);
        const double norm = std::max(l2 ? std::sqrt(s) : s, eps);
        for (int64_t c = 0; c < n; ++c) y[r * n + c] = x[r * n + c] / norm;
    }
    return y;
}
std::vector<double> ref_reduce(const std::vector<double>& x, int64_t outer, int64_t len,
                               int64_t inner, ReduceMode m) {
    std::vector<double> y(outer * inner);
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            double a = m == ReduceMode::kMax ? -INFINITY : m == ReduceMode::kMin ? INFINITY : 0.0;
            for (int64_t r = 0; r < len; ++r) {
                const double v = x[(o * len + r) * inner + i];
                a = m == ReduceMode::kMax ? std::max(a, v) : m == ReduceMode::kMin ? std::min(a, v) : a + v;
            }
            y[o * inner + i] = m == ReduceMode::kMean ? a / len : a;
        }
    }
    return y;
}

template <typename T> double tol() { return sizeof(T) == 4 ? 2e-5 : 1.6e-2; }
template <typename T> const char* tname() { return sizeof(T) == 4 ? "f32" : "bf16"; }

// ---- cases ----------------------------------------------------------------------------------
template <class C, SoftmaxMode M, bool ON, typename T>
void softmax_case(const char* knobs, int64_t rows, int64_t n, std::mt19937& rng) {
    for (int dist = 0; dist < 2; ++dist) {
        Buf<T> x(rows * n), y(M == SoftmaxMode::kLogsumexp ? rows : rows * n);
        x.fill(rng, dist);
        y.poison();
        const unsigned grid = unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT);
        launch_smem(k_softmax<C, M, ON, T>, grid, C::THREADS, C::SPLIT, stage_bytes<C, T>(),
                    (const T*)x.dev, y.dev, rows, n);
        const int mode = M == SoftmaxMode::kSoftmax ? 0 : M == SoftmaxMode::kLogSoftmax ? 1 : 2;
        const char* names[] = {"softmax", "log_softmax", "logsumexp"};
        char name[160];
        std::snprintf(name, sizeof name, "%s %s %lldx%lld %s%s dist%d", names[mode], tname<T>(),
                      (long long)rows, (long long)n, knobs, ON ? " online" : "", dist);
        compare(name, y.read(), ref_softmax(x.host, rows, n, mode), tol<T>() * (mode ? 4 : 0.05),
                tol<T>());
    }
}

template <class C, NormMode M, typename T>
void norm_case(const char* knobs, int64_t rows, int64_t n, NormShape s, int64_t params,
               std::mt19937& rng) {
    for (int dist = 0; dist < 2; ++dist) {
        Buf<T> x(rows * n), w(params), b(params), y(rows * n);
        x.fill(rng, dist), w.fill(rng, 0), b.fill(rng, 0);
        y.poison();
        launch_smem(k_norm<C, M, T>, unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT),
                    C::THREADS, C::SPLIT, stage_bytes<C, T>(), (const T*)x.dev, (const T*)w.dev,
                    (const T*)b.dev, y.dev, rows, n, s);
        const char* names[] = {"layer_norm", "rms_norm", "group_norm"};
        char name[160];
        std::snprintf(name, sizeof name, "%s %s %lldx%lld %s dist%d", names[int(M)], tname<T>(),
                      (long long)rows, (long long)n, knobs, dist);
        compare(name, y.read(), ref_norm(x.host, w.host, b.host, rows, n, M, s), tol<T>() * 5,
                tol<T>());
    }
}

// Outputs are about 1/n (l1) or 1/sqrt(n) (l2): relative tolerance only.
template <class C, NormMode M, typename T>
void normalize_case(const char* knobs, int64_t rows, int64_t n, float eps, std::mt19937& rng) {
    for (int dist = 0; dist < 2; ++dist) {
        Buf<T> x(rows * n), y(rows * n);
        x.fill(rng, dist);
        y.poison();
        launch_smem(k_normalize<C, M, T>, unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT),
                    C::THREADS, C::SPLIT, stage_bytes<C, T>(), (const T*)x.dev, y.dev, rows, n,
                    NormShape{eps, 1, 1, 1});
        const bool l2 = M == NormMode::kL2Normalize;
        char name[160];
        std::snprintf(name, sizeof name, "%s %s %lldx%lld %s dist%d",
                      l2 ? "l2_normalize" : "l1_normalize", tname<T>(), (long long)rows,
                      (long long)n, knobs, dist);
        compare(name, y.read(), ref_normalize(x.host, rows, n, l2, eps), 0.0, tol<T>());
    }
}

template <class C, ReduceMode M, typename T>
void reduce_case(const char* knobs, int64_t rows, int64_t n, std::mt19937& rng) {
    Buf<T> x(rows * n);
    Buf<float> y(rows);
    x.fill(rng, 1);
    y.poison();
    launch(k_reduce<C, M, T>, unsigned((rows + C::RPB - 1) / C::RPB * C::SPLIT), C::THREADS,
           C::SPLIT, (const T*)x.dev, y.dev, rows, n);
    char name[160];
    std::snprintf(name, sizeof name, "reduce_row%d %s %lldx%lld %s", int(M), tname<T>(),
                  (long long)rows, (long long)n, knobs);
    compare(name, y.read(), ref_reduce(x.host, rows, n, 1, M), 1e-5 * n, 1e-5);
}

template <int TX, int TY, int V, ReduceMode M, typename T>
void cols_case(int64_t outer, int64_t len, int64_t inner, int64_t slices, std::mt19937& rng) {
    Buf<T> x(outer * len * inner);
    Buf<float> y(outer * inner), ws(slices * outer * inner);
    x.fill(rng, 1);
    y.poison();
    const int64_t chunk = (len + slices - 1) / slices;
    slices = (len + chunk - 1) / chunk;
    const unsigned gx = unsigned((inner + TX * V - 1) / (TX * V) * outer);
    cudaLaunchConfig_t cfg = {};
    cfg.gridDim = dim3(gx, unsigned(slices));
    cfg.blockDim = dim3(TX * TY);
    CHECK(cudaLaunchKernelEx(&cfg, k_cols<TX, TY, V, M, T>, (const T*)x.dev, ws.dev, y.dev, outer,
                             len, inner, chunk));
    if (slices > 1) {
        const int64_t total = outer * inner;
        launch(k_cols_finish<V, M>, unsigned((total + 31) / 32), 256u, 1u, (const float*)ws.dev,
               y.dev, slices, total, len);
    }
    CHECK(cudaDeviceSynchronize());
    char name[160];
    std::snprintf(name, sizeof name, "reduce_col%d %s [%lld,%lld,%lld] %dx%d vec%d slices %lld",
                  int(M), tname<T>(), (long long)outer, (long long)len, (long long)inner, TX, TY,
                  V, (long long)slices);
    compare(name, y.read(), ref_reduce(x.host, outer, len, inner, M), 1e-5 * len, 1e-5);
}

template <int B, int V, int I, bool GS, typename T>
void map_case(int64_t rows, int64_t cols, std::mt19937& rng) {
    Buf<T> x(rows * cols), b(cols), y(rows * cols);
    x.fill(rng, 0), b.fill(rng, 0);
    y.poison();
    const int64_t n = rows * cols, tile = int64_t(B) * V * I;
    const unsigned grid = unsigned(GS ? std::min<int64_t>((n + tile - 1) / tile, 264) : (n + tile - 1) / tile);
    launch(k_map<B, V, I, GS, T>, grid, unsigned(B), 1u, BiasGelu<T>{x.dev, b.dev, y.dev, cols}, n);
    std::vector<double> ref(n);
    for (int64_t i = 0; i < n; ++i) {
        const double v = x.host[i] + b.host[i % cols];
        ref[i] = 2.0 * 0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v)));
    }
    char name[160];
    std::snprintf(name, sizeof name, "map bias+gelu_tanh %s %lldx%lld block %d vec %d items %d%s",
                  tname<T>(), (long long)rows, (long long)cols, B, V, I, GS ? " grid_stride" : "");
    compare(name, y.read(), ref, tol<T>(), tol<T>());
}

template <typename T> void run_all(std::mt19937& rng) {
    using S = SoftmaxMode;
    softmax_case<RowCfg<256, 1, 4, 1, 1>, S::kSoftmax, false, T>("cached t256", 300, 1024, rng);
    softmax_case<RowCfg<256, 1, 8, 2, 1>, S::kSoftmax, true, T>("cached t256 v8", 77, 4096, rng);
    softmax_case<RowCfg<1024, 1, 4, 0, 1>, S::kSoftmax, true, T>("stream t1024", 40, 20000, rng);
    softmax_case<RowCfg<512, 1, 4, 0, 1>, S::kLogSoftmax, false, T>("stream t512", 40, 5000, rng);
    softmax_case<RowCfg<8, 32, 4, 4, 1>, S::kSoftmax, false, T>("8 thr/row rpb32", 1000, 128, rng);
    softmax_case<RowCfg<32, 8, 1, 7, 1>, S::kLogSoftmax, false, T>("warp/row v1", 999, 199, rng);
    softmax_case<RowCfg<256, 1, 4, 8, 8>, S::kSoftmax, false, T>("split8 cached", 20, 65536, rng);
    softmax_case<RowCfg<1024, 1, 4, 0, 4>, S::kLogsumexp, true, T>("split4 stream", 9, 100000, rng);
    softmax_case<RowCfg<256, 1, 4, 4, 1>, S::kLogsumexp, false, T>("cached", 100, 4096, rng);
    softmax_case<RowCfg<32, 8, 4, 0, 1>, S::kLogsumexp, true, T>("warp/row stream", 100, 640, rng);
    using N = NormMode;
    norm_case<RowCfg<256, 1, 4, 3, 1>, N::kLayerNorm, T>("cached", 200, 3072, {1e-5f, 1, 1, 1}, 3072, rng);
    norm_case<RowCfg<1024, 1, 8, 0, 1>, N::kLayerNorm, T>("stream v8", 20, 40000, {1e-5f, 1, 1, 1}, 40000, rng);
    norm_case<RowCfg<32, 8, 4, 6, 1>, N::kLayerNorm, T>("warp/row", 333, 768, {1e-6f, 1, 1, 1}, 768, rng);
    norm_case<RowCfg<256, 1, 4, 4, 4>, N::kLayerNorm, T>("split4", 10, 16384, {1e-5f, 1, 1, 1}, 16384, rng);
    norm_case<RowCfg<256, 1, 4, 4, 1>, N::kRmsNorm, T>("cached", 100, 4096, {1e-6f, 1, 1, 1}, 4096, rng);
    norm_case<RowCfg<512, 1, 4, 0, 2>, N::kRmsNorm, T>("stream split2", 10, 50000, {1e-6f, 1, 1, 1}, 50000, rng);
    // group_norm: N=8, C=64, G=8, spatial 14x14=196 (not a multiple of 8) and 256.
    norm_case<RowCfg<256, 1, 4, 2, 1>, N::kGroupNorm, T>("spatial196", 8 * 8, 8 * 196, {1e-5f, 8, 8, 196}, 64, rng);
    norm_case<RowCfg<256, 1, 8, 0, 1>, N::kGroupNorm, T>("stream spatial256", 8 * 8, 8 * 256, {1e-5f, 8, 8, 256}, 64, rng);
    // Rows staged in shared memory (RowCfg STAGED): all of the CTA's part (passes 1), or its
    // first part with the rest streamed (passes 2 smem_stage), including a part that ends inside
    // the stage, several row groups per block, cluster splits up to 16 CTAs, and the cp.async
    // widths (16 B, 2 x 16 B, 8 B, 4 B) and the synchronous 2-byte copy.
    softmax_case<RowCfg<256, 1, 8, 0, 1, 16>, S::kLogSoftmax, true, T>("staged whole t256 v8", 24, 32000, rng);
    softmax_case<RowCfg<512, 1, 4, 0, 2, 3>, S::kSoftmax, false, T>("staged part split2", 6, 100000, rng);
    softmax_case<RowCfg<1024, 1, 4, 0, 16, 14>, S::kSoftmax, true, T>("staged part split16", 3, 1048576, rng);
    softmax_case<RowCfg<1024, 1, 4, 0, 16, 0>, S::kLogSoftmax, true, T>("stream split16", 3, 1048576, rng);
    softmax_case<RowCfg<256, 1, 4, 0, 1, 5>, S::kLogsumexp, false, T>("staged part", 50, 7000, rng);
    softmax_case<RowCfg<128, 1, 2, 0, 1, 7>, S::kLogSoftmax, false, T>("staged v2", 30, 2002, rng);
    softmax_case<RowCfg<64, 1, 1, 0, 1, 9>, S::kSoftmax, true, T>("staged v1", 30, 999, rng);
    softmax_case<RowCfg<32, 8, 8, 0, 1, 2>, S::kSoftmax, false, T>("staged warp/row rpb8 v8", 100, 1000, rng);
    norm_case<RowCfg<128, 2, 4, 0, 1, 4>, N::kLayerNorm, T>("staged part rpb2", 41, 3000, {1e-5f, 1, 1, 1}, 3000, rng);
    norm_case<RowCfg<512, 1, 8, 0, 1, 2>, N::kLayerNorm, T>("staged whole v8", 64, 8192, {1e-5f, 1, 1, 1}, 8192, rng);
    norm_case<RowCfg<256, 1, 8, 0, 16, 2>, N::kRmsNorm, T>("staged part split16", 5, 100000, {1e-6f, 1, 1, 1}, 100000, rng);
    norm_case<RowCfg<256, 1, 4, 0, 1, 3>, N::kGroupNorm, T>("staged spatial196", 8 * 8, 8 * 196, {1e-5f, 8, 8, 196}, 64, rng);
    // The generated kernels' scalar fallback (codegen/lower_rowwise_emit.cpp): the row streamed
    // one scalar at a time, 4 in flight (RowCfg UNROLL 4), rows that end mid-unroll, split rows.
    softmax_case<RowCfg<256, 1, 1, 0, 1, 0, 4>, S::kSoftmax, false, T>("fallback v1 u4", 50, 1001, rng);
    softmax_case<RowCfg<512, 1, 1, 0, 16, 0, 4>, S::kLogSoftmax, true, T>("fallback v1 u4 split16", 3, 100003, rng);
    softmax_case<RowCfg<32, 8, 1, 0, 1, 0, 4>, S::kLogsumexp, true, T>("fallback warp/row u4", 99, 130, rng);
    norm_case<RowCfg<256, 1, 1, 0, 1, 0, 4>, N::kLayerNorm, T>("fallback v1 u4", 40, 8191, {1e-5f, 1, 1, 1}, 8191, rng);
    norm_case<RowCfg<128, 1, 1, 0, 8, 0, 4>, N::kRmsNorm, T>("fallback v1 u4 split8", 5, 70001, {1e-6f, 1, 1, 1}, 70001, rng);
    // Alternating sweep directions (RowCfg SWEEP_ALTERNATE): the second sweep runs last vector
    // first. Three-sweep softmax (not online: max, sum backward, output forward), online and
    // norms (output backward), parts that end mid-step and mid-unroll, split rows whose last
    // part is short, the scalar fallback, staged parts, several row groups per block.
    softmax_case<RowCfg<1024, 1, 4, 0, 1, 0, 0, true>, S::kSoftmax, true, T>("alt stream t1024", 40, 20000, rng);
    softmax_case<RowCfg<512, 1, 4, 0, 1, 0, 0, true>, S::kLogSoftmax, false, T>("alt stream t512", 40, 5004, rng);
    softmax_case<RowCfg<512, 1, 4, 0, 16, 0, 0, true>, S::kSoftmax, false, T>("alt split16", 3, 1000004, rng);
    softmax_case<RowCfg<256, 1, 4, 0, 16, 0, 0, true>, S::kSoftmax, true, T>("alt split16 t256", 3, 1048576, rng);
    softmax_case<RowCfg<512, 1, 4, 0, 2, 3, 0, true>, S::kSoftmax, false, T>("alt staged part split2", 6, 100000, rng);
    softmax_case<RowCfg<256, 1, 1, 0, 1, 0, 4, true>, S::kSoftmax, false, T>("alt fallback v1 u4", 50, 1001, rng);
    softmax_case<RowCfg<512, 1, 1, 0, 16, 0, 4, true>, S::kLogSoftmax, true, T>("alt fallback v1 u4 split16", 3, 100003, rng);
    softmax_case<RowCfg<32, 8, 1, 0, 1, 0, 4, true>, S::kSoftmax, false, T>("alt fallback warp/row u4", 99, 131, rng);
    softmax_case<RowCfg<32, 8, 4, 0, 1, 0, 3, true>, S::kLogSoftmax, false, T>("alt warp/row u3", 100, 644, rng);
    norm_case<RowCfg<1024, 1, 8, 0, 1, 0, 0, true>, N::kLayerNorm, T>("alt stream v8", 20, 40000, {1e-5f, 1, 1, 1}, 40000, rng);
    norm_case<RowCfg<256, 1, 4, 0, 16, 0, 0, true>, N::kLayerNorm, T>("alt split16", 7, 100000, {1e-5f, 1, 1, 1}, 100000, rng);
    norm_case<RowCfg<128, 1, 1, 0, 8, 0, 4, true>, N::kRmsNorm, T>("alt fallback v1 u4 split8", 5, 70001, {1e-6f, 1, 1, 1}, 70001, rng);
    norm_case<RowCfg<128, 2, 4, 0, 1, 4, 0, true>, N::kLayerNorm, T>("alt staged part rpb2", 41, 3000, {1e-5f, 1, 1, 1}, 3000, rng);
    norm_case<RowCfg<128, 1, 4, 0, 2, 0, 0, true>, N::kGroupNorm, T>("alt split2 spatial196", 8 * 8, 8 * 196, {1e-5f, 8, 8, 196}, 64, rng);
    norm_case<RowCfg<64, 1, 2, 0, 4, 0, 0, true>, N::kGroupNorm, T>("alt split4 spatial25", 4 * 8, 2 * 25, {1e-5f, 8, 2, 25}, 16, rng);
    // l1 / l2 normalize on rms_norm's path: cached, streamed split, staged split16, the scalar
    // fallback, warp per row, alternating sweeps; eps 0 (plain division) and 1e-12.
    normalize_case<RowCfg<256, 1, 4, 4, 1>, N::kL2Normalize, T>("cached", 100, 4096, 1e-12f, rng);
    normalize_case<RowCfg<256, 1, 4, 4, 1>, N::kL1Normalize, T>("cached", 100, 4096, 0.f, rng);
    normalize_case<RowCfg<512, 1, 4, 0, 2>, N::kL1Normalize, T>("stream split2", 10, 50000, 0.f, rng);
    normalize_case<RowCfg<256, 1, 8, 0, 16, 2>, N::kL2Normalize, T>("staged part split16", 5, 100000, 0.f, rng);
    normalize_case<RowCfg<128, 1, 1, 0, 8, 0, 4>, N::kL2Normalize, T>("fallback v1 u4 split8", 5, 70001, 1e-12f, rng);
    normalize_case<RowCfg<32, 8, 4, 6, 1>, N::kL1Normalize, T>("warp/row", 333, 768, 1e-6f, rng);
    normalize_case<RowCfg<512, 1, 8, 0, 1, 2>, N::kL2Normalize, T>("staged whole v8", 64, 8192, 0.f, rng);
    normalize_case<RowCfg<128, 1, 4, 0, 2, 0, 0, true>, N::kL1Normalize, T>("alt split2", 7, 100000, 0.f, rng);
    using R = ReduceMode;
    reduce_case<RowCfg<256, 1, 4, 0, 1>, R::kSum, T>("stream", 100, 10000, rng);
    reduce_case<RowCfg<32, 8, 4, 2, 1>, R::kMean, T>("warp/row", 1000, 256, rng);
    reduce_case<RowCfg<256, 1, 4, 0, 8>, R::kMax, T>("split8", 10, 300000, rng);
    reduce_case<RowCfg<16, 16, 1, 3, 1>, R::kMin, T>("16 thr/row v1", 1000, 37, rng);
    cols_case<32, 8, 4, R::kSum, T>(1, 20000, 128, 64, rng);
    cols_case<32, 8, 4, R::kMean, T>(1, 300, 128, 1, rng);
    cols_case<256, 1, 4, R::kMax, T>(3, 1000, 4096, 8, rng);
    cols_case<8, 32, 1, R::kMin, T>(5, 777, 7, 3, rng);
    map_case<256, 4, 1, false, T>(1000, 1024, rng);
    map_case<128, 8, 4, true, T>(333, 4096, rng);
    map_case<64, 1, 3, false, T>(100, 999, rng);
}

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 3;
    }
    std::mt19937 rng(1234);
    sweep_order_case<RowCfg<64, 1, 4, 0, 4, 0, 2, true>>("alt split4 u2", 3, 10004, rng);
    sweep_order_case<RowCfg<64, 1, 4, 0, 4, 0, 2, false>>("forward split4 u2", 3, 10004, rng);
    sweep_order_case<RowCfg<32, 2, 4, 0, 1, 3, 0, true>>("alt staged rpb2", 5, 1004, rng);
    sweep_order_case<RowCfg<32, 1, 1, 0, 2, 0, 4, true>>("alt v1 u4 split2", 4, 777, rng);
    sweep_order_case<RowCfg<128, 1, 4, 0, 1, 0, 0, true>>("alt t128", 2, 4096, rng);
    run_all<float>(rng);
    run_all<__nv_bfloat16>(rng);
    std::printf("%d/%d cases passed\n", g_cases - g_failures, g_cases);
    return g_failures ? 1 : 0;
}
