// Host-only model of the staged 3xTF32 accumulation (no GPU): predicts what the H200 run of
// main.cu should show if wgmma accumulates like this model, and checks the staging arithmetic
// (kforge::tf32_split from kernels/stage_operand.cuh, the same code the GPU runs).
//
// Model of one tf32 wgmma step (k = 8) per output element, as published for NVIDIA tensor cores
// (products exact; the addends, including the accumulator C, aligned to the largest exponent
// and truncated to F fraction bits below it; exact sum; the result truncated to fp32): F = 23
// to 25 are tried. "promo N" adds a fresh accumulator into an fp32 register sum (round to
// nearest) every N k-blocks of 32 (4 MMAs), as CUTLASS's FP8 mainloop does. "exact" sums the
// three staged products in double: the floor that the split itself leaves.
//
// Build and run (about 10 s on 2 cores):
//   g++ -std=c++17 -O2 -I. bench/kernels/tf32x3_accum/emulate.cpp -o build/tf32x3_emulate &&
//   build/tf32x3_emulate
// Exit 1 if the split floor is not fp32-level (median > 1e-6): the staging itself would be wrong.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "kernels/stage_operand.cuh"

namespace {

float to_f32_rz(double x) {
    float f = float(x);
    if (std::fabs(double(f)) > std::fabs(x)) f = std::nextafter(f, 0.0f);
    return f;
}

// One MMA step: c + sum(p[0..7]) with alignment to the largest exponent and truncation to F bits.
float mma_step(float c, const double* p, int n, int F) {
    int emax = -100000;
    auto upd = [&](double x) {
        if (x != 0) {
            int e;
            std::frexp(x, &e);
            emax = std::max(emax, e);
        }
    };
    upd(c);
    for (int i = 0; i < n; ++i) upd(p[i]);
    if (emax == -100000) return 0.0f;
    const double ulp = std::ldexp(1.0, emax - F);
    double s = std::trunc(double(c) / ulp) * ulp;
    for (int i = 0; i < n; ++i) s += std::trunc(p[i] / ulp) * ulp;
    return to_f32_rz(s);
}

enum class Order { kHiFirst, kLoFirst };

struct Result {
    double median, max;
};

// Staged operands for one output element: a' and b' along K' = 3K.
void stage_row(const std::vector<float>& x, Order o, bool is_a, std::vector<float>& out) {
    const size_t k = x.size();
    out.resize(3 * k);
    // A: hi-first [hi|hi|lo] (LO_MASK 4), lo-first [lo|hi|hi] (LO_MASK 1); B: [hi;lo;hi] (2).
    const int mask = is_a ? (o == Order::kHiFirst ? 4 : 1) : 2;
    for (size_t i = 0; i < k; ++i) {
        const kforge::Tf32Split s = kforge::tf32_split(x[i]);
        for (int p = 0; p < 3; ++p) out[p * k + i] = ((mask >> p) & 1) ? s.lo : s.hi;
    }
}

// F = 0: exact (double) accumulation. promo = 0: one accumulator chain over all of K'.
Result run(int M, int N, int K, Order o, int F, int promo_kblocks, unsigned seed) {
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<float> u(-1.0f, 1.0f);
    std::vector<std::vector<float>> A(M, std::vector<float>(K)), B(N, std::vector<float>(K));
    for (auto& r : A)
        for (auto& x : r) x = u(rng);
    for (auto& r : B)
        for (auto& x : r) x = u(rng);  // B stored N x K (column n of B)
    std::vector<double> ref(size_t(M) * N), got(size_t(M) * N);
    std::vector<std::vector<float>> As(M), Bs(N);
    for (int m = 0; m < M; ++m) stage_row(A[m], o, true, As[m]);
    for (int n = 0; n < N; ++n) stage_row(B[n], o, false, Bs[n]);
    const int K3 = 3 * K;
    for (int m = 0; m < M; ++m)
        for (int n = 0; n < N; ++n) {
            double r = 0;
            for (int k = 0; k < K; ++k) r += double(A[m][k]) * double(B[n][k]);
            ref[size_t(m) * N + n] = r;
            const float* a = As[m].data();
            const float* b = Bs[n].data();
            if (F == 0) {
                double s = 0;
                for (int k = 0; k < K3; ++k) s += double(a[k]) * double(b[k]);
                got[size_t(m) * N + n] = float(s);
                continue;
            }
            float acc = 0, chain = 0;
            int mmas = 0;
            double p[8];
            for (int k0 = 0; k0 < K3; k0 += 8) {
                const int len = std::min(8, K3 - k0);
                for (int i = 0; i < len; ++i) p[i] = double(a[k0 + i]) * double(b[k0 + i]);
                chain = mma_step(chain, p, len, F);
                if (promo_kblocks > 0 && ++mmas == 4 * promo_kblocks) {
                    acc += chain;  // fp32 register add, round to nearest
                    chain = 0;
                    mmas = 0;
                }
            }
            got[size_t(m) * N + n] = promo_kblocks > 0 ? double(acc + chain) : double(chain);
        }
    double ss = 0;
    for (double x : ref) ss += x * x;
    const double rms = std::sqrt(ss / ref.size());
    std::vector<double> rel;
    for (size_t i = 0; i < ref.size(); ++i)
        if (std::fabs(ref[i]) >= 0.1 * rms) rel.push_back(std::fabs(got[i] - ref[i]) / std::fabs(ref[i]));
    Result res{0, 0};
    if (rel.empty()) return res;
    res.max = *std::max_element(rel.begin(), rel.end());
    std::nth_element(rel.begin(), rel.begin() + rel.size() / 2, rel.end());
    res.median = rel[rel.size() / 2];
    return res;
}

}  // namespace

int main() {
    const int M = 48, N = 48;
    const int ks[] = {128, 1024, 4096};
    struct Case {
        const char* name;
        Order o;
        int F, promo;
    };
    std::vector<Case> cases = {{"exact (split floor)", Order::kHiFirst, 0, 0}};
    const char* names[3][5] = {
        {"F=23 hi plain", "F=23 hi promo1", "F=23 hi promo4", "F=23 lo plain", "F=23 lo promo4"},
        {"F=24 hi plain", "F=24 hi promo1", "F=24 hi promo4", "F=24 lo plain", "F=24 lo promo4"},
        {"F=25 hi plain", "F=25 hi promo1", "F=25 hi promo4", "F=25 lo plain", "F=25 lo promo4"}};
    for (int f = 0; f < 3; ++f) {
        const int F = 23 + f;
        cases.push_back({names[f][0], Order::kHiFirst, F, 0});
        cases.push_back({names[f][1], Order::kHiFirst, F, 1});
        cases.push_back({names[f][2], Order::kHiFirst, F, 4});
        cases.push_back({names[f][3], Order::kLoFirst, F, 0});
        cases.push_back({names[f][4], Order::kLoFirst, F, 4});
    }
    std::printf("median (max) relative error, %dx%d outputs, uniform [-1,1], |ref| >= 0.1 rms\n", M, N);
    std::printf("%-22s", "model");
    for (int k : ks) std::printf("  %21s", ("K=" + std::to_string(k)).c_str());
    std::printf("\n");
    int rc = 0;
    for (const Case& c : cases) {
        std::printf("%-22s", c.name);
        for (int k : ks) {
            const Result r = run(M, N, k, c.o, c.F, c.promo, 12345u + k);
            std::printf("  %9.2e (%9.2e)", r.median, r.max);
            if (c.F == 0 && r.median > 1e-6) rc = 1;
        }
        std::printf("\n");
        std::fflush(stdout);
    }
    if (rc) std::printf("split floor above 1e-6: the staging arithmetic is wrong\n");
    return rc;
}
