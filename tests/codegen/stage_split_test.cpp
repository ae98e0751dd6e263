// The tf32 hi/lo split of kernels/stage_operand.cuh, run on the host through the same
// __host__ __device__ functions the staging pre-kernel calls: hi and lo have their low 13
// mantissa bits zero (the tensor core reads them exactly), hi is x rounded to nearest (ties to
// even), hi + lo reproduces x to ~2^-22 relative, and the three products of 3xTF32 reproduce
// x * y to ~2^-21. Special values pass through.
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>

#include <gtest/gtest.h>

#include "kernels/stage_operand.cuh"

namespace kforge {
namespace {

constexpr uint32_t kLow13 = 0x1fffu;

TEST(StageSplit, HiAndLoAreTf32AndReproduceX) {
    std::mt19937 rng(12345);
    std::uniform_real_distribution<float> mant(1.0f, 2.0f);
    std::uniform_int_distribution<int> expo(-100, 100);
    std::bernoulli_distribution neg(0.5);
    double worst = 0;
    for (int i = 0; i < 200000; ++i) {
        const float x = std::ldexp(mant(rng), expo(rng)) * (neg(rng) ? -1.0f : 1.0f);
        const Tf32Split s = tf32_split(x);
        ASSERT_EQ(f32_bits(s.hi) & kLow13, 0u) << x;
        ASSERT_EQ(f32_bits(s.lo) & kLow13, 0u) << x;
        // hi is the nearest tf32 value: |x - hi| at most half a tf32 ulp (2^-11 relative).
        ASSERT_LE(std::fabs(double(x) - s.hi), std::ldexp(std::fabs(double(x)), -11)) << x;
        const double rel = std::fabs((double(s.hi) + double(s.lo) - x) / x);
        worst = std::max(worst, rel);
        ASSERT_LE(rel, std::ldexp(1.0, -22)) << x;
    }
    // Not vacuous: lo carries bits (the residual is not always zero).
    EXPECT_GT(worst, std::ldexp(1.0, -30));
}

TEST(StageSplit, ThreeTf32ProductsReproduceTheF32Product) {
    std::mt19937 rng(777);
    std::normal_distribution<float> dist(0.0f, 1.0f);
    for (int i = 0; i < 100000; ++i) {
        const float x = dist(rng), y = dist(rng);
        const Tf32Split a = tf32_split(x), b = tf32_split(y);
        // Each product of two tf32 values is exact in double (11 x 11 significand bits).
        const double three = double(a.hi) * b.hi + double(a.hi) * b.lo + double(a.lo) * b.hi;
        const double exact = double(x) * double(y);
        ASSERT_LE(std::fabs(three - exact), std::ldexp(std::fabs(exact), -21)) << x << " " << y;
        // One tf32 product alone is far worse: the split is what buys the accuracy.
        if (std::fabs(exact) > 1e-3 && i < 10)
            EXPECT_GT(std::fabs(double(a.hi) * b.hi - exact), std::fabs(three - exact));
    }
}

TEST(StageSplit, RoundsToNearestTiesToEven) {
    // 1 + 2^-11 is halfway between tf32 neighbours 1 and 1 + 2^-10: ties to even -> 1.
    EXPECT_EQ(tf32_round(1.0f + std::ldexp(1.0f, -11)), 1.0f);
    // 1 + 3 * 2^-11 is halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even) -> 1 + 2^-9.
    EXPECT_EQ(tf32_round(1.0f + 3 * std::ldexp(1.0f, -11)), 1.0f + std::ldexp(1.0f, -9));
    // Just above a half rounds up, just below rounds down.
    EXPECT_EQ(tf32_round(1.0f + std::ldexp(1.0f, -11) + std::ldexp(1.0f, -20)),
              1.0f + std::ldexp(1.0f, -10));
    EXPECT_EQ(tf32_round(1.0f + std::ldexp(1.0f, -12)), 1.0f);
    EXPECT_EQ(tf32_round(-1.0f - 3 * std::ldexp(1.0f, -11)), -1.0f - std::ldexp(1.0f, -9));
    // Rounding up carries into the exponent.
    EXPECT_EQ(tf32_round(std::nextafter(2.0f, 0.0f)), 2.0f);
}

TEST(StageSplit, SpecialValues) {
    const float inf = std::numeric_limits<float>::infinity();
    EXPECT_EQ(tf32_split(0.0f).hi, 0.0f);
    EXPECT_EQ(tf32_split(0.0f).lo, 0.0f);
    EXPECT_EQ(tf32_split(inf).hi, inf);
    EXPECT_EQ(tf32_split(inf).lo, 0.0f);
    EXPECT_EQ(tf32_split(-inf).hi, -inf);
    // A NaN whose payload sits in the low 13 bits stays a NaN.
    const float nan_low = f32_from_bits(0x7f800001u);
    ASSERT_TRUE(std::isnan(nan_low));
    EXPECT_TRUE(std::isnan(tf32_split(nan_low).hi));
    // The largest float would round up to infinity: truncated instead, and hi + lo is exact.
    const float big = std::numeric_limits<float>::max();
    const Tf32Split s = tf32_split(big);
    EXPECT_TRUE(std::isfinite(s.hi));
    EXPECT_EQ(f32_bits(s.hi) & kLow13, 0u);
    EXPECT_LE(std::fabs((double(s.hi) + s.lo - big) / big), std::ldexp(1.0, -22));
}

}  // namespace
}  // namespace kforge
