// The GEMM epilogue activations of kernels/act_approx.cuh, on the host (where ex2 and rcp are
// exact, so this checks the formulas and their f32 arithmetic; the SFU's own error, ~2 ulp, is
// on top): against fp64 definitions over a dense grid, and at the special values.
#include <cmath>
#include <limits>

#include <gtest/gtest.h>

#include "kernels/act_approx.cuh"

namespace kforge {
namespace {

double gelu_erf_ref(double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }
double sigmoid_ref(double x) { return 1.0 / (1.0 + std::exp(-x)); }

// |f(x) - ref(x)| / max(1, |ref(x)|) over [-lo, hi] in `steps` steps (x rounded to f32 first).
template <class F, class R>
double worst_error(F f, R ref, double lo, double hi, int steps) {
    double worst = 0;
    for (int i = 0; i <= steps; ++i) {
        const float x = static_cast<float>(lo + (hi - lo) * i / steps);
        const double r = ref(static_cast<double>(x));
        worst = std::max(worst, std::abs(f(x) - r) / std::max(1.0, std::abs(r)));
    }
    return worst;
}

TEST(ActApprox, GeluErfWithinOneMicroOfTheDefinition) {
    // A&S 7.1.28 is 3e-7 in erf; f32 rounding of x and of the squarings adds a few ulp. The
    // tightest policy (fp32_strict) allows 1e-4.
    double e = worst_error(act_gelu_erf_as28, gelu_erf_ref, -12.0, 12.0, 400000);
    EXPECT_LT(e, 1e-6);
    EXPECT_GT(e, 0.0);  // it is an approximation: the check sees the function, not the reference
    EXPECT_LT(worst_error(act_gelu_erf_as28, gelu_erf_ref, -200.0, 200.0, 40000), 1e-6);
}

TEST(ActApprox, SigmoidAndSiluWithinOneMicro) {
    EXPECT_LT(worst_error(act_sigmoid_ex2_rcp, sigmoid_ref, -90.0, 90.0, 400000), 1e-6);
    auto silu_ref = [](double x) { return x * sigmoid_ref(x); };
    EXPECT_LT(worst_error(act_silu_ex2_rcp, silu_ref, -90.0, 90.0, 400000), 1e-6);
    // Relative error where sigmoid is small (negative x): the result is not just "near 0".
    for (float x : {-5.0f, -10.0f, -20.0f, -40.0f}) {
        const double r = sigmoid_ref(x);
        EXPECT_LT(std::abs(act_sigmoid_ex2_rcp(x) - r) / r, 1e-5) << x;
    }
}

TEST(ActApprox, SpecialValuesFollowPyTorch) {
    const float inf = std::numeric_limits<float>::infinity();
    const float nan = std::numeric_limits<float>::quiet_NaN();
    EXPECT_TRUE(std::isnan(act_gelu_erf_as28(nan)));
    EXPECT_TRUE(std::isnan(act_sigmoid_ex2_rcp(nan)));
    EXPECT_TRUE(std::isnan(act_silu_ex2_rcp(nan)));
    EXPECT_EQ(act_gelu_erf_as28(inf), inf);
    EXPECT_EQ(act_gelu_erf_as28(0.0f), 0.0f);
    EXPECT_EQ(act_gelu_erf_as28(-30.0f), 0.0f);  // erfc underflows: x * 0, not NaN
    EXPECT_EQ(act_gelu_erf_as28(30.0f), 30.0f);
    EXPECT_EQ(act_sigmoid_ex2_rcp(inf), 1.0f);
    EXPECT_EQ(act_sigmoid_ex2_rcp(-inf), 0.0f);
    EXPECT_EQ(act_sigmoid_ex2_rcp(0.0f), 0.5f);
    EXPECT_EQ(act_silu_ex2_rcp(inf), inf);
}

}  // namespace
}  // namespace kforge
