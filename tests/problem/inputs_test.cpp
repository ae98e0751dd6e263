// Deterministic input generation and rounding to dtypes.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/inputs.h"

namespace kforge {
namespace {

Tensor tensor(const char* name, std::vector<int64_t> shape, DType dtype) {
    Tensor t;
    t.name = name;
    t.shape = std::move(shape);
    t.dim_names.assign(t.shape.size(), "");
    t.dtype = dtype;
    return t;
}

TEST(Inputs, RoundToBf16NearestEven) {
    EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -9), DType::kBF16), 1.0) << "below half a step";
    EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -8), DType::kBF16), 1.0) << "tie to even";
    EXPECT_EQ(round_to_dtype(1.0 + 3 * std::ldexp(1.0, -8), DType::kBF16), 1.0 + std::ldexp(1.0, -6))
        << "tie to even (up)";
    EXPECT_EQ(round_to_dtype(1.0 + 1.5 * std::ldexp(1.0, -8), DType::kBF16), 1.0 + std::ldexp(1.0, -7));
    EXPECT_EQ(round_to_dtype(-3.14159, DType::kBF16), -3.140625);
    EXPECT_EQ(round_to_dtype(1e39, DType::kBF16), std::numeric_limits<double>::infinity());
    EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -133), DType::kBF16), std::ldexp(1.0, -133)) << "subnormal";
}

TEST(Inputs, RoundToF16AndF32) {
    EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -11), DType::kF16), 1.0) << "tie to even";
    EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -10), DType::kF16), 1.0 + std::ldexp(1.0, -10));
    EXPECT_EQ(round_to_dtype(65504.0, DType::kF16), 65504.0);
    EXPECT_EQ(round_to_dtype(65519.0, DType::kF16), 65504.0);
    EXPECT_EQ(round_to_dtype(65520.0, DType::kF16), std::numeric_limits<double>::infinity());
    EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -24), DType::kF16), std::ldexp(1.0, -24)) << "smallest subnormal";
    EXPECT_EQ(round_to_dtype(std::ldexp(1.0, -26), DType::kF16), 0.0);
    EXPECT_EQ(round_to_dtype(0.1, DType::kF32), static_cast<double>(0.1f));
    EXPECT_EQ(round_to_dtype(1.0 + std::ldexp(1.0, -24), DType::kF32), 1.0);
    EXPECT_EQ(round_to_dtype(0.1, DType::kF64), 0.1);
    EXPECT_EQ(round_to_dtype(2.5, DType::kI32), 2.0);
    EXPECT_EQ(round_to_dtype(-3.5, DType::kI64), -4.0);
    EXPECT_EQ(round_to_dtype(1e20, DType::kI32), 2147483647.0);
    EXPECT_TRUE(std::isnan(round_to_dtype(std::nan(""), DType::kF16)));
}

TEST(Inputs, GenerationIsDeterministicAndSeeded) {
    Tensor x = tensor("X", {64, 33}, DType::kBF16);
    auto a = generate(x, Distribution::kNormal, 7);
    auto b = generate(x, Distribution::kNormal, 7);
    EXPECT_EQ(a, b);
    EXPECT_EQ(a.size(), 64u * 33u);
    EXPECT_NE(a, generate(x, Distribution::kNormal, 8));
    EXPECT_NE(a, generate(tensor("W", {64, 33}, DType::kBF16), Distribution::kNormal, 7))
        << "the tensor's name enters the stream";
    for (double v : a) EXPECT_EQ(v, round_to_dtype(v, DType::kBF16));
}

TEST(Inputs, DistributionsHaveTheirShape) {
    Tensor x = tensor("X", {20000}, DType::kF64);
    auto u = generate(x, Distribution::kUniform01, 1);
    double mean = 0, lo = 1, hi = 0;
    for (double v : u) {
        mean += v / u.size();
        lo = std::min(lo, v);
        hi = std::max(hi, v);
    }
    EXPECT_NEAR(mean, 0.5, 0.02);
    EXPECT_GE(lo, 0.0);
    EXPECT_LT(hi, 1.0);
    auto n = generate(x, Distribution::kNormal, 1);
    double m = 0, var = 0;
    for (double v : n) m += v / n.size();
    for (double v : n) var += (v - m) * (v - m) / n.size();
    EXPECT_NEAR(m, 0.0, 0.05);
    EXPECT_NEAR(var, 1.0, 0.05);
    auto t = generate(x, Distribution::kHeavyTailed, 1);
    int beyond_5 = 0;
    for (double v : t) {
        beyond_5 += std::fabs(v) > 5;
        EXPECT_LE(std::fabs(v), 1e4);
    }
    // P(|t_3| > 5) ~ 1.5%; a normal has ~6e-7.
    EXPECT_GT(beyond_5, 100);
    EXPECT_LT(beyond_5, 600);
}

TEST(Inputs, DistributionNames) {
    for (auto d : {Distribution::kUniform01, Distribution::kNormal, Distribution::kHeavyTailed}) {
        EXPECT_EQ(distribution_from_string(to_string(d)), d);
    }
    EXPECT_FALSE(distribution_from_string("cauchy").has_value());
}

}  // namespace
}  // namespace kforge
