// common/stats.h: quantiles and the bootstrap of the median.
#include "common/stats.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kforge {
namespace {

uint64_t splitmix64(uint64_t& state) {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double sorted_quantile(const std::vector<double>& sorted, double q) {
    if (sorted.empty()) return 0;
    q = std::clamp(q, 0.0, 1.0);
    double pos = q * static_cast<double>(sorted.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    size_t hi = std::min(lo + 1, sorted.size() - 1);
    double frac = pos - static_cast<double>(lo);
    return sorted[lo] + (sorted[hi] - sorted[lo]) * frac;
}

}  // namespace

// A selection, not a sort: the correctness gates take the median of up to 4M relative errors per
// output and round, and a sort of them cost ~0.35 s each on the H100 machine's host (2026-12-06:
// 10 sorts in a 5-round full tier of a two-output problem). Same interpolation as
// sorted_quantile: the element at floor(pos) and the least one above it.
double quantile(std::vector<double> values, double q) {
    if (values.empty()) return 0;
    q = std::clamp(q, 0.0, 1.0);
    double pos = q * static_cast<double>(values.size() - 1);
    size_t lo = static_cast<size_t>(std::floor(pos));
    auto nth = values.begin() + static_cast<std::ptrdiff_t>(lo);
    std::nth_element(values.begin(), nth, values.end());
    double frac = pos - static_cast<double>(lo);
    if (frac == 0 || lo + 1 >= values.size()) return *nth;
    double above = *std::min_element(nth + 1, values.end());
    return *nth + (above - *nth) * frac;
}

TimingStats timing_stats(const std::vector<double>& times_ns, int bootstrap_resamples,
                         uint64_t seed) {
    TimingStats s;
    if (times_ns.empty()) return s;
    std::vector<double> sorted = times_ns;
    std::sort(sorted.begin(), sorted.end());
    s.count = static_cast<int>(sorted.size());
    s.median_ns = sorted_quantile(sorted, 0.5);
    s.q1_ns = sorted_quantile(sorted, 0.25);
    s.q3_ns = sorted_quantile(sorted, 0.75);
    s.iqr_ns = s.q3_ns - s.q1_ns;
    s.mean_ns = std::accumulate(sorted.begin(), sorted.end(), 0.0) / s.count;
    s.min_ns = sorted.front();
    s.max_ns = sorted.back();

    int resamples = std::max(1, bootstrap_resamples);
    std::vector<double> medians;
    medians.reserve(resamples);
    std::vector<double> draw(sorted.size());
    uint64_t state = seed;
    for (int r = 0; r < resamples; ++r) {
        for (double& d : draw) d = sorted[splitmix64(state) % sorted.size()];
        std::sort(draw.begin(), draw.end());
        medians.push_back(sorted_quantile(draw, 0.5));
    }
    std::sort(medians.begin(), medians.end());
    s.ci95_low_ns = sorted_quantile(medians, 0.025);
    s.ci95_high_ns = sorted_quantile(medians, 0.975);
    return s;
}

}  // namespace kforge
