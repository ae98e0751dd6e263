// Unit tests of the timing statistics (device/timing.h).
#include <gtest/gtest.h>

#include <algorithm>

#include "device/timing.h"

namespace kforge::eval {
namespace {

TEST(Timing, QuantilesInterpolateLinearly) {
    EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2.0);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 1.0), 5.0);
    EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
}

// quantile() selects instead of sorting: over shuffled data with ties, at every q, it must
// equal the interpolation between the sorted neighbours.
TEST(Timing, QuantileBySelectionMatchesTheSortedDefinition) {
    std::vector<double> v;
    uint64_t x = 12345;
    for (int i = 0; i < 1001; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        v.push_back(static_cast<double>((x >> 33) % 97));  // many ties
    }
    std::vector<double> sorted = v;
    std::sort(sorted.begin(), sorted.end());
    for (double q : {0.0, 0.013, 0.25, 0.5, 0.5003, 0.75, 0.999, 1.0}) {
        double pos = q * static_cast<double>(sorted.size() - 1);
        size_t lo = static_cast<size_t>(pos);
        size_t hi = std::min(lo + 1, sorted.size() - 1);
        double want = sorted[lo] + (sorted[hi] - sorted[lo]) * (pos - static_cast<double>(lo));
        EXPECT_DOUBLE_EQ(quantile(v, q), want) << "q=" << q;
    }
    EXPECT_DOUBLE_EQ(quantile({7}, 0.5), 7.0);
    EXPECT_DOUBLE_EQ(quantile({2, 1}, 0.5), 1.5);
}

TEST(Timing, MedianIqrAndOutliers) {
    std::vector<double> t = {10, 11, 12, 13, 14, 15, 16, 17, 18, 1000};
    TimingStats s = timing_stats(t);
    EXPECT_EQ(s.count, 10);
    EXPECT_DOUBLE_EQ(s.median_ns, 14.5);
    EXPECT_DOUBLE_EQ(s.q1_ns, 12.25);
    EXPECT_DOUBLE_EQ(s.q3_ns, 16.75);
    EXPECT_DOUBLE_EQ(s.iqr_ns, 4.5);
    EXPECT_DOUBLE_EQ(s.min_ns, 10);
    EXPECT_DOUBLE_EQ(s.max_ns, 1000);
    EXPECT_GT(s.mean_ns, s.median_ns);  // the outlier moves the mean, not the median
}

TEST(Timing, BootstrapIntervalBracketsTheMedianAndIsDeterministic) {
    std::vector<double> t;
    for (int i = 0; i < 101; ++i) t.push_back(100.0 + (i * 37 % 101) * 0.1);
    TimingStats a = timing_stats(t, 500, 42), b = timing_stats(t, 500, 42);
    EXPECT_LE(a.ci95_low_ns, a.median_ns);
    EXPECT_GE(a.ci95_high_ns, a.median_ns);
    EXPECT_LT(a.ci95_high_ns - a.ci95_low_ns, a.iqr_ns);  // the median is tighter than the data
    EXPECT_DOUBLE_EQ(a.ci95_low_ns, b.ci95_low_ns);
    EXPECT_DOUBLE_EQ(a.ci95_high_ns, b.ci95_high_ns);
}

TEST(Timing, ConstantSamplesGiveADegenerateInterval) {
    TimingStats s = timing_stats(std::vector<double>(20, 5.0));
    EXPECT_DOUBLE_EQ(s.iqr_ns, 0);
    EXPECT_DOUBLE_EQ(s.ci95_low_ns, 5.0);
    EXPECT_DOUBLE_EQ(s.ci95_high_ns, 5.0);
}

TEST(Timing, EmptyIsAllZero) {
    TimingStats s = timing_stats({});
    EXPECT_EQ(s.count, 0);
    EXPECT_EQ(s.median_ns, 0);
}

}  // namespace
}  // namespace kforge::eval
