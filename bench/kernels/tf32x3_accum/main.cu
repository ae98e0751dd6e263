// Issue 4 decision benchmark: can staged 3xTF32 on Hopper wgmma (kernels/stage_operand.cuh +
// one CUTLASS sm90 tf32 GEMM over K' = 3K) reach fp32-level accuracy at >= 2x fp32 speed?
//
// For A [M,K] and B [K,N] row-major f32, C [M,N] f32, every variant is timed (CUDA events, L2
// flushed before each iteration, median after warm-up; staging and GEMM also separately) and
// checked against an fp64 GEMM computed on the GPU, on uniform [-1,1] and normal inputs:
// median and max of |out - ref| / |ref| over the elements with |ref| >= 0.1 * rms(ref) (the
// elements kforge's precision profile looks at, eval/gates.h).
//
// Variants (see README.md next to this file):
//   hi-first  A' = [hi|hi|lo], B' = [hi;lo;hi]: pairs hi*hi, hi*lo, lo*hi along K' (kforge's
//             staging today), plain mainloop, 128x256 and 128x128 tiles
//   promo     same operands, FP8-style promotion mainloop, interval 1, 2, 4 k-blocks (128x128
//             tiles; 128x192 at 1 and 4: 128x256 would spill the doubled accumulator)
//   lo-first  A' = [lo|hi|hi], B' = [hi;lo;hi]: pairs lo*hi, hi*lo, hi*hi (small terms first)
//   cuBLAS    SGEMM (CUBLAS_COMPUTE_32F, default math: no TF32) and TF32 (COMPUTE_32F_FAST_TF32)
//
// Usage: tf32x3_accum [--dry] [--m M --n N --k K] [--iters 30] [--warmup 5] [--out FILE]
//   --dry: no GPU; builds each CUTLASS configuration's arguments and runs can_implement for
//   every variant (and checks that a promotion interval that is not a whole number of k-blocks
//   is refused), then exits.
#include <cublas_v2.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "gemm_api.h"
#include "kernels/stage_operand.cuh"

namespace {

#define CK(x)                                                                           \
    do {                                                                                \
        cudaError_t e_ = (x);                                                           \
        if (e_ != cudaSuccess) {                                                        \
            std::fprintf(stderr, "%s:%d: %s: %s\n", __FILE__, __LINE__, #x,             \
                         cudaGetErrorString(e_));                                       \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)
#define CB(x)                                                                           \
    do {                                                                                \
        cublasStatus_t s_ = (x);                                                        \
        if (s_ != CUBLAS_STATUS_SUCCESS) {                                              \
            std::fprintf(stderr, "%s:%d: %s: cublas status %d\n", __FILE__, __LINE__, #x, \
                         int(s_));                                                      \
            std::exit(1);                                                               \
        }                                                                               \
    } while (0)

// ---- inputs: counter-based random numbers (splitmix64), uniform [-1,1] or standard normal ----
__device__ __forceinline__ uint64_t splitmix(uint64_t z) {
    z += 0x9e3779b97f4a7c15ull;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}
__global__ void fill_kernel(float* x, size_t n, uint64_t seed, int normal) {
    for (size_t i = blockIdx.x * size_t(blockDim.x) + threadIdx.x; i < n;
         i += size_t(gridDim.x) * blockDim.x) {
        const uint64_t r = splitmix(seed ^ (i * 0x2545f4914f6cdd1dull));
        const double u1 = (double(r >> 40) + 0.5) * (1.0 / 16777216.0);          // (0,1)
        const double u2 = (double((r >> 16) & 0xffffffull) + 0.5) * (1.0 / 16777216.0);
        x[i] = normal ? float(sqrt(-2.0 * log(u1)) * cospi(2.0 * u2)) : float(2.0 * u1 - 1.0);
    }
}

// ---- fp64 reference GEMM (test oracle): C = A B, 64x64 tile per block, 4x4 per thread ----
constexpr int RT = 64, RK = 16;
__global__ void __launch_bounds__(256) ref_gemm_f64(const float* __restrict__ A,
                                                    const float* __restrict__ B,
                                                    double* __restrict__ C, int M, int N, int K) {
    __shared__ double As[RK][RT + 1];
    __shared__ double Bs[RK][RT];
    const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
    const int m0 = blockIdx.y * RT, n0 = blockIdx.x * RT;
    double acc[4][4] = {};
    for (int k0 = 0; k0 < K; k0 += RK) {
        for (int i = threadIdx.x; i < RT * RK; i += 256) {
            const int r = i / RK, c = i % RK, m = m0 + r, k = k0 + c;
            As[c][r] = (m < M && k < K) ? double(A[size_t(m) * K + k]) : 0.0;
        }
        for (int i = threadIdx.x; i < RT * RK; i += 256) {
            const int r = i / RT, c = i % RT, k = k0 + r, n = n0 + c;
            Bs[r][c] = (k < K && n < N) ? double(B[size_t(k) * N + n]) : 0.0;
        }
        __syncthreads();
#pragma unroll
        for (int kk = 0; kk < RK; ++kk) {
            double a[4], b[4];
#pragma unroll
            for (int i = 0; i < 4; ++i) a[i] = As[kk][ty + 16 * i];
#pragma unroll
            for (int j = 0; j < 4; ++j) b[j] = Bs[kk][tx + 16 * j];
#pragma unroll
            for (int i = 0; i < 4; ++i)
#pragma unroll
                for (int j = 0; j < 4; ++j) acc[i][j] = fma(a[i], b[j], acc[i][j]);
        }
        __syncthreads();
    }
#pragma unroll
    for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) {
            const int m = m0 + ty + 16 * i, n = n0 + tx + 16 * j;
            if (m < M && n < N) C[size_t(m) * N + n] = acc[i][j];
        }
}

// ---- staging: kforge's kernel, two part orders ----
template <bool TRANSPOSE, int LO_MASK>
__global__ void stage_kernel(const float* __restrict__ src, float* __restrict__ dst,
                             int64_t rows, int64_t cols) {
    kforge::stage_operand<TRANSPOSE, 3, LO_MASK>(src, dst, rows, cols);
}
enum class Order { kHiFirst, kLoFirst };
// A [M,K] row-major -> A' [M, 3K]; B [K,N] row-major (N-major) -> B' [N, 3K] (K-major).
// hi-first: A' = [hi|hi|lo] (LO_MASK 4), B' = [hi;lo;hi] (LO_MASK 2) -> hi*hi, hi*lo, lo*hi.
// lo-first: A' = [lo|hi|hi] (LO_MASK 1), B' = [hi;lo;hi] (LO_MASK 2) -> lo*hi, hi*lo, hi*hi.
void stage(Order o, const float* A, const float* B, float* As, float* Bs, int M, int N, int K,
           cudaStream_t s) {
    const dim3 block(kforge::kStageTile, kforge::kStageTileRows);
    const dim3 ga((K + 31) / 32, (M + 31) / 32), gb((N + 31) / 32, (K + 31) / 32);
    if (o == Order::kHiFirst)
        stage_kernel<false, 4><<<ga, block, 0, s>>>(A, As, M, K);
    else
        stage_kernel<false, 1><<<ga, block, 0, s>>>(A, As, M, K);
    stage_kernel<true, 2><<<gb, block, 0, s>>>(B, Bs, K, N);
}

struct Err {
    double median = 0, max = 0;
    size_t counted = 0, nonfinite = 0;
};
Err rel_error(const std::vector<float>& out, const std::vector<double>& ref, double rms) {
    std::vector<double> rel;
    rel.reserve(ref.size());
    Err e;
    for (size_t i = 0; i < ref.size(); ++i) {
        if (!std::isfinite(out[i])) ++e.nonfinite;
        if (std::fabs(ref[i]) < 0.1 * rms) continue;
        const double r = std::isfinite(out[i]) ? std::fabs(double(out[i]) - ref[i]) / std::fabs(ref[i])
                                               : INFINITY;
        rel.push_back(r);
    }
    e.counted = rel.size();
    if (rel.empty()) return e;
    e.max = *std::max_element(rel.begin(), rel.end());
    auto mid = rel.begin() + rel.size() / 2;
    std::nth_element(rel.begin(), mid, rel.end());
    e.median = *mid;
    return e;
}

struct Variant {
    std::string name, what;
    // non-null for staged CUTLASS variants
    tf32x3::GemmOp* op = nullptr;
    Order order = Order::kHiFirst;
    int interval_kblocks = 0;  // promotion interval in k-blocks (0: plain mainloop)
    int cublas = 0;            // 1: SGEMM fp32, 2: TF32
    Err err[2];
    float stage_ms = 0, gemm_ms = 0, total_ms = 0;
    std::string fail;
};

float median(std::vector<float> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
}

int usage(const char* msg) {
    std::fprintf(stderr,
                 "error: %s\nusage: tf32x3_accum [--dry] [--m M --n N --k K] [--iters N] "
                 "[--warmup N] [--out FILE]\n",
                 msg);
    return 2;
}

}  // namespace

int main(int argc, char** argv) {
    int M = 4096, N = 4096, K = 4096, iters = 30, warmup = 5;
    bool dry = false;
    std::string out_path;
    for (int i = 1; i < argc; ++i) {
        std::string a = argv[i];
        auto next = [&](int& v) {
            if (i + 1 >= argc) return false;
            char* end = nullptr;
            long x = std::strtol(argv[++i], &end, 10);
            if (*end || x <= 0 || x > (1 << 20)) return false;
            v = int(x);
            return true;
        };
        if (a == "--dry") dry = true;
        else if (a == "--m") { if (!next(M)) return usage("--m needs a positive integer"); }
        else if (a == "--n") { if (!next(N)) return usage("--n needs a positive integer"); }
        else if (a == "--k") { if (!next(K)) return usage("--k needs a positive integer"); }
        else if (a == "--iters") { if (!next(iters)) return usage("--iters needs a positive integer"); }
        else if (a == "--warmup") { if (!next(warmup)) return usage("--warmup needs a positive integer"); }
        else if (a == "--out") { if (i + 1 >= argc) return usage("--out needs a path"); out_path = argv[++i]; }
        else return usage(("unknown argument " + a).c_str());
    }
    if (M % 4 || N % 4 || K % 4) return usage("M, N, K must be multiples of 4 (16-byte TMA rows)");
    const int K3 = 3 * K;

    auto p256 = tf32x3::make_plain_128x256_c2x1();
    auto p128 = tf32x3::make_plain_128x128_c2x1();
    auto pr128 = tf32x3::make_promo_128x128_c2x1();
    auto pr192 = tf32x3::make_promo_128x192_c2x1();
    const int mk = pr128->mmas_per_kblock();  // MMAs per k-block: the promotion grain

    std::vector<Variant> vs;
    auto add = [&](std::string name, std::string what, tf32x3::GemmOp* op, Order o, int iv, int cb) {
        Variant v;
        v.name = std::move(name);
        v.what = std::move(what);
        v.op = op;
        v.order = o;
        v.interval_kblocks = iv;
        v.cublas = cb;
        vs.push_back(std::move(v));
    };
    add("cublas_sgemm", "cuBLAS fp32 (COMPUTE_32F, no TF32)", nullptr, Order::kHiFirst, 0, 1);
    add("cublas_tf32", "cuBLAS 1xTF32 (COMPUTE_32F_FAST_TF32)", nullptr, Order::kHiFirst, 0, 2);
    add("hi_plain_256", "hi-first, plain, " + p256->desc(), p256.get(), Order::kHiFirst, 0, 0);
    add("hi_plain_128", "hi-first, plain, " + p128->desc(), p128.get(), Order::kHiFirst, 0, 0);
    for (int iv : {1, 2, 4})
        add("hi_promo" + std::to_string(iv) + "_128",
            "hi-first, promote every " + std::to_string(iv) + " k-block(s) = " +
                std::to_string(iv * mk) + " MMAs, " + pr128->desc(),
            pr128.get(), Order::kHiFirst, iv, 0);
    for (int iv : {1, 4})
        add("hi_promo" + std::to_string(iv) + "_192",
            "hi-first, promote every " + std::to_string(iv) + " k-block(s) = " +
                std::to_string(iv * mk) + " MMAs, " + pr192->desc(),
            pr192.get(), Order::kHiFirst, iv, 0);
    add("lo_plain_256", "lo-first, plain, " + p256->desc(), p256.get(), Order::kLoFirst, 0, 0);
    add("lo_plain_128", "lo-first, plain, " + p128->desc(), p128.get(), Order::kLoFirst, 0, 0);
    add("lo_promo4_128",
        "lo-first, promote every 4 k-blocks = " + std::to_string(4 * mk) + " MMAs, " + pr128->desc(),
        pr128.get(), Order::kLoFirst, 4, 0);

    if (dry) {
        int bad = 0;
        for (auto& v : vs) {
            if (!v.op) continue;
            std::string m = v.op->init(nullptr, nullptr, nullptr, M, N, K3,
                                       v.interval_kblocks * mk, true);
            std::printf("%-14s %-75s %s\n", v.name.c_str(), v.what.c_str(),
                        m.empty() ? "can_implement ok" : m.c_str());
            bad += !m.empty();
        }
        // The promotion interval counts MMAs and must be a whole number of k-blocks.
        if (mk > 1) {
            std::string m = pr128->init(nullptr, nullptr, nullptr, M, N, K3, mk + 1, true);
            std::printf("promotion interval %d MMAs (not a k-block multiple): %s\n", mk + 1,
                        m.empty() ? "ACCEPTED (unexpected)" : m.c_str());
            bad += m.empty();
        }
        std::printf("dry check: %s\n", bad ? "FAILED" : "ok");
        return bad ? 1 : 0;
    }

    cudaDeviceProp prop{};
    CK(cudaGetDeviceProperties(&prop, 0));
    if (prop.major != 9) {
        std::fprintf(stderr, "needs an sm_90 GPU (found %s, sm_%d%d)\n", prop.name, prop.major,
                     prop.minor);
        return 1;
    }
    if (const char* o = std::getenv("NVIDIA_TF32_OVERRIDE"))
        std::fprintf(stderr, "warning: NVIDIA_TF32_OVERRIDE=%s is set\n", o);
    cudaStream_t s;
    CK(cudaStreamCreate(&s));
    cublasHandle_t h;
    CB(cublasCreate(&h));
    CB(cublasSetStream(h, s));
    CB(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));

    const size_t nA = size_t(M) * K, nB = size_t(K) * N, nC = size_t(M) * N;
    float *A, *B, *As, *Bs, *C;
    double* R;
    CK(cudaMalloc(&A, nA * 4));
    CK(cudaMalloc(&B, nB * 4));
    CK(cudaMalloc(&As, nA * 3 * 4));
    CK(cudaMalloc(&Bs, nB * 3 * 4));
    CK(cudaMalloc(&C, nC * 4));
    CK(cudaMalloc(&R, nC * 8));
    const size_t flush_bytes = std::max<size_t>(size_t(prop.l2CacheSize) * 4, size_t(256) << 20);
    void* flush;
    CK(cudaMalloc(&flush, flush_bytes));

    auto run_variant = [&](Variant& v, cudaEvent_t e0, cudaEvent_t e1, cudaEvent_t e2, int k) {
        CK(cudaEventRecord(e0, s));
        if (v.cublas) {
            CK(cudaEventRecord(e1, s));
            const float one = 1.0f, zero = 0.0f;
            // Row-major C = A B is column-major C^T = B^T A^T.
            CB(cublasGemmEx(h, CUBLAS_OP_N, CUBLAS_OP_N, N, M, k, &one, B, CUDA_R_32F, N, A,
                            CUDA_R_32F, k, &zero, C, CUDA_R_32F, N,
                            v.cublas == 1 ? CUBLAS_COMPUTE_32F : CUBLAS_COMPUTE_32F_FAST_TF32,
                            CUBLAS_GEMM_DEFAULT));
        } else {
            stage(v.order, A, B, As, Bs, M, N, k, s);
            CK(cudaEventRecord(e1, s));
            CK(v.op->run(s));
        }
        CK(cudaEventRecord(e2, s));
    };

    cudaEvent_t e0, e1, e2;
    CK(cudaEventCreate(&e0));
    CK(cudaEventCreate(&e1));
    CK(cudaEventCreate(&e2));
    const char* dist_name[2] = {"uniform", "normal"};
    std::vector<float> out(nC);
    std::vector<double> ref(nC);
    // One pass: inputs of distribution d with inner dimension k, every variant run once and
    // compared with the fp64 reference (sink gets the error); timing: also time each variant.
    auto pass = [&](int k, int d, bool timing, const std::function<void(Variant&, const Err&)>& sink) {
        const size_t na = size_t(M) * k, nb = size_t(k) * N;
        fill_kernel<<<1024, 256, 0, s>>>(A, na, 0x1234567ull + 17 * d + 1000003ull * k, d);
        fill_kernel<<<1024, 256, 0, s>>>(B, nb, 0x7654321ull + 31 * d + 999983ull * k, d);
        CK(cudaGetLastError());
        ref_gemm_f64<<<dim3((N + RT - 1) / RT, (M + RT - 1) / RT), 256, 0, s>>>(A, B, R, M, N, k);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(ref.data(), R, nC * 8, cudaMemcpyDeviceToHost, s));
        CK(cudaStreamSynchronize(s));
        double ss = 0;
        for (double x : ref) ss += x * x;
        const double rms = std::sqrt(ss / double(nC));
        for (auto& v : vs) {
            if (!v.fail.empty()) continue;
            if (v.op) {
                std::string m = v.op->init(As, Bs, C, M, N, 3 * k, v.interval_kblocks * mk, false);
                if (!m.empty()) {
                    if (timing || k == K) {
                        v.fail = "K=" + std::to_string(k) + ": " + m;
                    } else {  // a K-scan point only: leave the main row alone
                        std::fprintf(stderr, "%s at K=%d: %s\n", v.name.c_str(), k, m.c_str());
                        Err bad;
                        bad.nonfinite = 1;
                        sink(v, bad);
                    }
                    continue;
                }
            }
            CK(cudaMemsetAsync(C, 0xff, nC * 4, s));  // NaN: an unwritten output fails
            run_variant(v, e0, e1, e2, k);
            CK(cudaMemcpyAsync(out.data(), C, nC * 4, cudaMemcpyDeviceToHost, s));
            CK(cudaStreamSynchronize(s));
            const Err e = rel_error(out, ref, rms);
            sink(v, e);
            // Progress on stderr (run.sh keeps it): a hang or crash later still leaves data.
            std::fprintf(stderr, "  %-14s K=%d %s: median %.3e max %.3e nonfinite %zu\n",
                         v.name.c_str(), k, dist_name[d], e.median, e.max, e.nonfinite);
            if (!timing) continue;
            std::vector<float> ts, tg, tt;
            for (int it = 0; it < warmup + iters; ++it) {
                CK(cudaMemsetAsync(flush, it & 0xff, flush_bytes, s));
                run_variant(v, e0, e1, e2, k);
                CK(cudaEventSynchronize(e2));
                float a, b, c;
                CK(cudaEventElapsedTime(&a, e0, e1));
                CK(cudaEventElapsedTime(&b, e1, e2));
                CK(cudaEventElapsedTime(&c, e0, e2));
                if (it < warmup) continue;
                ts.push_back(a);
                tg.push_back(b);
                tt.push_back(c);
            }
            v.stage_ms = median(ts);
            v.gemm_ms = median(tg);
            v.total_ms = median(tt);
            std::fprintf(stderr, "  %-14s stage %.3f ms gemm %.3f ms total %.3f ms\n",
                         v.name.c_str(), v.stage_ms, v.gemm_ms, v.total_ms);
        }
        std::fprintf(stderr, "K=%d %s inputs done (rms(ref) %.4g)\n", k, dist_name[d], rms);
    };
    for (int d = 0; d < 2; ++d)
        pass(K, d, d == 0, [d](Variant& v, const Err& e) { v.err[d] = e; });
    // Error growth with K (uniform inputs, same M and N): accumulation error grows with the
    // number of K' steps; input rounding does not.
    std::vector<int> kscan;
    for (int k = K / 8; k < K; k *= 2)
        if (k >= 64 && k % 4 == 0) kscan.push_back(k);
    std::vector<std::vector<double>> scan_med(vs.size());
    for (int k : kscan)
        pass(k, 0, false, [&](Variant& v, const Err& e) {
            scan_med[&v - vs.data()].push_back(e.nonfinite ? INFINITY : e.median);
        });

    // The table.
    const float sgemm_ms = vs[0].total_ms;
    std::string t;
    char line[512];
    std::snprintf(line, sizeof line,
                  "tf32x3_accum on %s: M=%d N=%d K=%d, K'=3K=%d; median of %d (warm-up %d), L2 "
                  "flushed (%zu MiB) before each; error vs fp64 over |ref| >= 0.1 rms(ref)\n",
                  prop.name, M, N, K, K3, iters, warmup, flush_bytes >> 20);
    t += line;
    std::snprintf(line, sizeof line,
                  "%-14s %8s %8s %8s %7s %7s | %9s %9s | %9s %9s | %s\n", "variant", "stage_ms",
                  "gemm_ms", "total_ms", "xSGEMM", "xTorch", "unif_med", "unif_max", "norm_med",
                  "norm_max", "verdict");
    t += line;
    for (auto& v : vs) {
        if (!v.fail.empty()) {
            std::snprintf(line, sizeof line, "%-14s FAILED: %s\n", v.name.c_str(), v.fail.c_str());
            t += line;
            continue;
        }
        const double worst_med = std::max(v.err[0].median, v.err[1].median);
        const bool nonfinite = v.err[0].nonfinite + v.err[1].nonfinite > 0;
        const char* acc = nonfinite ? "NONFINITE"
                          : worst_med <= 1e-6 ? "fp32-level"
                          : worst_med < 4e-5  ? "between"
                                              : "FLAGGED(>=4e-5)";
        const double speed = v.total_ms > 0 ? sgemm_ms / v.total_ms : 0;
        std::snprintf(line, sizeof line,
                      "%-14s %8.3f %8.3f %8.3f %7.2f %7.2f | %9.2e %9.2e | %9.2e %9.2e | %s%s\n",
                      v.name.c_str(), v.stage_ms, v.gemm_ms, v.total_ms, speed,
                      v.total_ms > 0 ? 2.67 / v.total_ms : 0.0, v.err[0].median, v.err[0].max,
                      v.err[1].median, v.err[1].max, acc,
                      (v.cublas || speed < 2.0 || worst_med > 1e-6) ? "" : " + >=2x: WIRE IT");
        t += line;
    }
    t += "xSGEMM = cuBLAS SGEMM total_ms / total_ms (in this run); xTorch = 2.67 ms (PyTorch fp32 "
         "4096^3 on the H200, issue 4) / total_ms; verdict: fp32-level = worst median <= 1e-6 "
         "(multistage 3xTF32: 5.1e-7), FLAGGED = kProfileHalf 4e-5\n";
    for (auto& v : vs) {
        std::snprintf(line, sizeof line, "  %-14s %s\n", v.name.c_str(), v.what.c_str());
        t += line;
    }
    if (!kscan.empty()) {
        t += "median relative error vs K (uniform inputs, M=" + std::to_string(M) +
             ", N=" + std::to_string(N) + "):\n";
        std::snprintf(line, sizeof line, "%-14s", "variant");
        t += line;
        for (int k : kscan) {
            std::snprintf(line, sizeof line, " %9s", ("K=" + std::to_string(k)).c_str());
            t += line;
        }
        std::snprintf(line, sizeof line, " %9s\n", ("K=" + std::to_string(K)).c_str());
        t += line;
        for (size_t i = 0; i < vs.size(); ++i) {
            if (!vs[i].fail.empty()) continue;
            std::snprintf(line, sizeof line, "%-14s", vs[i].name.c_str());
            t += line;
            for (double x : scan_med[i]) {
                std::snprintf(line, sizeof line, " %9.2e", x);
                t += line;
            }
            std::snprintf(line, sizeof line, " %9.2e\n", vs[i].err[0].median);
            t += line;
        }
    }
    std::fputs(t.c_str(), stdout);
    if (!out_path.empty()) {
        FILE* f = std::fopen(out_path.c_str(), "w");
        if (!f) {
            std::fprintf(stderr, "cannot write %s\n", out_path.c_str());
            return 1;
        }
        std::fputs(t.c_str(), f);
        std::fclose(f);
    }
    for (auto& v : vs)
        if (!v.fail.empty()) return 1;
    return 0;
}
