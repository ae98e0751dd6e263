// kforge's one statistics implementation for measured samples: quantiles with linear
// interpolation, and timing statistics (median, quartiles and IQR, a 95% bootstrap confidence
// interval of the median). Pure functions; the bootstrap resamples with kforge's own
// deterministic generator (SplitMix64), so the same samples and seed give the same interval.
// Used by the timing protocol (device/timing.h), the gates, the store's medians and the
// calibration.
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

namespace kforge {

struct TimingStats {
    int count = 0;
    double median_ns = 0;
    double q1_ns = 0;   // 25th percentile (linear interpolation between order statistics)
    double q3_ns = 0;   // 75th percentile
    double iqr_ns = 0;  // q3 - q1
    double mean_ns = 0;
    double min_ns = 0;
    double max_ns = 0;
    double ci95_low_ns = 0;   // 2.5th percentile of the bootstrap medians
    double ci95_high_ns = 0;  // 97.5th percentile
};

// The q-quantile (q in [0, 1]) of `values` with linear interpolation (numpy's default);
// 0 for an empty vector.
double quantile(std::vector<double> values, double q);

// Statistics of `times_ns` (empty: all zero, count 0). `bootstrap_resamples` resamples of the
// median (at least 1; 1000 by default) with `seed`.
TimingStats timing_stats(const std::vector<double>& times_ns, int bootstrap_resamples = 1000,
                         uint64_t seed = 0x6b666f726765ULL);

// The median (0.5-quantile) of `values`; 0 for an empty vector.
inline double median(std::vector<double> values) { return quantile(std::move(values), 0.5); }

}  // namespace kforge
