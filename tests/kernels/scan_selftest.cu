// GPU self-test of the prefix scans (kernels/scan.cuh: cumsum, cumprod; forward / reverse,
// inclusive / exclusive) against an fp64 CPU scan, for whole-block rows of one and many tiles,
// warp and sub-warp row groups, rows past the grid's last full block, f32 / bf16 / f16 inputs.
// Outputs are poisoned with NaN first, so an element left unwritten fails.
// Build and run (repo root; exits 0 when all pass, 1 on a failure, 3 without a GPU):
//   nvcc -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -I. \
//        tests/kernels/scan_selftest.cu -o build/scan_selftest && build/scan_selftest
#include "kernels/scan.cuh"
#include "tests/kernels/selftest_common.cuh"

using namespace kforge;

template <class C, ScanMode M, bool REV, bool EXCL, typename T>
__global__ void k_scan(const T* x, float* y, int64_t rows, int64_t n) {
    scan_rows<C, M, REV, EXCL>(x, rows, n, StoreChain<float>{y});
}

std::vector<double> ref_scan(const std::vector<double>& x, int64_t rows, int64_t n, bool prod,
                             bool rev, bool excl) {
    std::vector<double> y(rows * n);
    for (int64_t r = 0; r < rows; ++r) {
        double acc = prod ? 1.0 : 0.0;
        for (int64_t s = 0; s < n; ++s) {
            const int64_t c = rev ? n - 1 - s : s;
            const double before = acc;
            acc = prod ? acc * x[r * n + c] : acc + x[r * n + c];
            y[r * n + c] = excl ? before : acc;
        }
    }
    return y;
}

// cumsum's error grows with the partial sums' magnitude (f32 accumulation): the band is
// relative to the row's largest partial sum; cumprod runs over inputs near 1 (no under- or
// overflow) with a relative band that grows with the row: n roundings of 2^-24 each add up like
// a random walk, sqrt(n) * 2^-24 (1.1e-5 at n = 32768, where the H200 measured 1.8e-5 relative
// on 2026-12-02 against a fixed 1e-5 band), so the band is 8 of those, at least 1e-5.
template <class C, ScanMode M, bool REV, bool EXCL, typename T>
void scan_case(const char* tname, int64_t rows, int64_t n, std::mt19937& rng) {
    const bool prod = M == ScanMode::kProd;
    Buf<T> x(rows * n);
    Buf<float> y(rows * n);
    if (prod) {
        std::vector<T> h(rows * n);
        std::uniform_real_distribution<float> u(0.999f, 1.001f);
        for (size_t i = 0; i < h.size(); ++i) h[i] = host_from<T>(u(rng)), x.host[i] = host_f32(h[i]);
        CHECK(cudaMemcpy(x.dev, h.data(), h.size() * sizeof(T), cudaMemcpyHostToDevice));
    } else {
        x.fill(rng, 0);
    }
    y.poison();
    launch(k_scan<C, M, REV, EXCL, T>, unsigned((rows + C::RPB - 1) / C::RPB), C::THREADS, 1u,
           (const T*)x.dev, y.dev, rows, n);
    const auto ref = ref_scan(x.host, rows, n, prod, REV, EXCL);
    double big = 0;
    for (double v : ref) big = std::max(big, std::fabs(v));
    char name[160];
    std::snprintf(name, sizeof name, "%s %s %lldx%lld t%d rpb%d v%d%s%s", prod ? "cumprod" : "cumsum",
                  tname, (long long)rows, (long long)n, C::THREADS, C::RPB, C::VEC,
                  REV ? " reverse" : "", EXCL ? " exclusive" : "");
    const double prod_rtol = std::max(1e-5, 8.0 * std::sqrt(double(n)) * std::ldexp(1.0, -24));
    compare(name, y.read(), ref, prod ? 0.0 : 1e-5 * big + 1e-6, prod ? prod_rtol : 0.0);
}

template <typename T> void run_all(const char* t, std::mt19937& rng) {
    using S = ScanMode;
    scan_case<ScanCfg<256, 1, 4>, S::kSum, false, false, T>(t, 128, 4000, rng);
    scan_case<ScanCfg<1024, 1, 4>, S::kSum, false, false, T>(t, 128, 4000, rng);
    scan_case<ScanCfg<1024, 1, 4>, S::kSum, true, false, T>(t, 64, 32768, rng);
    scan_case<ScanCfg<512, 1, 8>, S::kSum, false, true, T>(t, 33, 32768, rng);
    scan_case<ScanCfg<256, 1, 2>, S::kSum, true, true, T>(t, 17, 4002, rng);
    scan_case<ScanCfg<128, 1, 1>, S::kSum, false, false, T>(t, 5, 1001, rng);
    scan_case<ScanCfg<256, 8, 4>, S::kSum, false, false, T>(t, 1001, 100, rng);
    scan_case<ScanCfg<256, 16, 2>, S::kSum, true, true, T>(t, 999, 62, rng);
    scan_case<ScanCfg<64, 64, 1>, S::kSum, true, false, T>(t, 300, 7, rng);
    scan_case<ScanCfg<256, 1, 4>, S::kProd, false, false, T>(t, 64, 4000, rng);
    scan_case<ScanCfg<1024, 1, 4>, S::kProd, true, false, T>(t, 16, 32768, rng);
    scan_case<ScanCfg<256, 8, 2>, S::kProd, true, true, T>(t, 257, 98, rng);
    scan_case<ScanCfg<128, 1, 4>, S::kProd, false, true, T>(t, 9, 4000, rng);
}

int main() {
    int devices = 0;
    if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
        std::printf("SKIP: no CUDA device\n");
        return 3;
    }
    std::mt19937 rng(1234);
    run_all<float>("f32", rng);
    run_all<__nv_bfloat16>("bf16", rng);
    run_all<__half>("f16", rng);
    std::printf("%d of %d cases failed\n", g_failures, g_cases);
    return g_failures ? 1 : 0;
}
