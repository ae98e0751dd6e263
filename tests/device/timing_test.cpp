// Unit tests of the timing statistics (device/timing.h).
#include <gtest/gtest.h>

#include "device/timing.h"

namespace kforge::eval {
namespace {

TEST(Timing, QuantilesInterpolateLinearly) {
    EXPECT_DOUBLE_EQ(quantile({4, 1, 3, 2}, 0.5), 2.5);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 0.25), 2.0);
    EXPECT_DOUBLE_EQ(quantile({1, 2, 3, 4, 5}, 1.0), 5.0);
    EXPECT_DOUBLE_EQ(quantile({}, 0.5), 0.0);
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
