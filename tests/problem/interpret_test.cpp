// The reference interpreter against hand-computed results, op by op; rebinding; limits.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/interpret.h"
#include "problem/work.h"
#include "test_specs.h"
#include "tests/doubling_inputs.h"

namespace kforge {
namespace {

using test::one_op;
using Values = std::vector<double>;

// Evaluates a one-op problem "Y = op(...)" and returns Y.
Values run(const Expected<Problem>& p, const TensorValues& inputs) {
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    if (!p.ok()) return {};
    auto out = interpret(*p, inputs);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->at("Y") : Values{};
}

void expect_near(const Values& got, const Values& want, double tol = 1e-12) {
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) {
        if (std::isnan(want[i])) {
            EXPECT_TRUE(std::isnan(got[i])) << "at " << i;
        } else if (std::isinf(want[i])) {
            EXPECT_EQ(got[i], want[i]) << "at " << i;
        } else {
            EXPECT_NEAR(got[i], want[i], tol) << "at " << i;
        }
    }
}

const char* kVec4 = R"({"X": {"shape": [4], "dtype": "f64"}})";

// Y = op(X) on X = xs, with attributes.
Values unary(const char* op, const Values& xs, const std::string& attrs = "") {
    std::string inputs = R"({"X": {"shape": [)" + std::to_string(xs.size()) +
                         R"(], "dtype": "f64"}})";
    return run(one_op("{}", inputs, op, R"(["X"])", attrs), {{"X", xs}});
}

TEST(Interpret, Matmul) {
    const char* in = R"({"A": {"shape": [2, 2], "dtype": "f32"}, "B": {"shape": [2, 2], "dtype": "f32"}})";
    expect_near(run(one_op("{}", in, "matmul", R"(["A", "B"])"), {{"A", {1, 2, 3, 4}}, {"B", {5, 6, 7, 8}}}),
                {19, 22, 43, 50});
    // A stored transposed, B stored transposed: same product.
    expect_near(run(one_op("{}", in, "matmul", R"(["A", "B"])", R"("transpose_a": true, "transpose_b": true)"),
                    {{"A", {1, 3, 2, 4}}, {"B", {5, 7, 6, 8}}}),
                {19, 22, 43, 50});
}

TEST(Interpret, MatmulBatchBroadcast) {
    // A [2, 1, 2] (two batches of one row), B [2, 1] shared: out [2, 1, 1].
    auto p = one_op("{}", R"({"A": {"shape": [2, 1, 2], "dtype": "f32"}, "B": {"shape": [2, 1], "dtype": "f32"}})",
                    "matmul", R"(["A", "B"])");
    expect_near(run(p, {{"A", {1, 2, 3, 4}}, {"B", {10, 100}}}), {210, 430});
    // A [1, 2] shared, B [2, 2, 1]: out [2, 1, 1].
    auto q = one_op("{}", R"({"A": {"shape": [1, 2], "dtype": "f32"}, "B": {"shape": [2, 2, 1], "dtype": "f32"}})",
                    "matmul", R"(["A", "B"])");
    expect_near(run(q, {{"A", {1, 2}}, {"B", {3, 4, 5, 6}}}), {11, 17});
}

TEST(Interpret, Linear) {
    auto p = one_op("{}", R"({"X": {"shape": [1, 2], "dtype": "f32"}, "W": {"shape": [3, 2], "dtype": "f32"},
                              "b": {"shape": [3], "dtype": "f32"}})",
                    "linear", R"(["X", "W", "b"])");
    expect_near(run(p, {{"X", {1, 2}}, {"W", {1, 0, 0, 1, 1, 1}}, {"b", {10, 20, 30}}}), {11, 22, 33});
}

TEST(Interpret, BinaryBroadcast) {
    const char* in = R"({"A": {"shape": [2, 1], "dtype": "f64"}, "B": {"shape": [2], "dtype": "f64"}})";
    TensorValues v{{"A", {1, 2}}, {"B", {10, 20}}};
    expect_near(run(one_op("{}", in, "add", R"(["A", "B"])"), v), {11, 21, 12, 22});
    expect_near(run(one_op("{}", in, "sub", R"(["A", "B"])"), v), {-9, -19, -8, -18});
    expect_near(run(one_op("{}", in, "mul", R"(["A", "B"])"), v), {10, 20, 20, 40});
    expect_near(run(one_op("{}", in, "div", R"(["A", "B"])"), v), {0.1, 0.05, 0.2, 0.1});
    // maximum / minimum of two tensors broadcast like add; NaN from either side propagates
    TensorValues w{{"A", {15, std::nan("")}}, {"B", {10, 20}}};
    Values max_w = run(one_op("{}", in, "maximum", R"(["A", "B"])"), w);
    expect_near(max_w, {15, 20, std::nan(""), std::nan("")});
    expect_near(run(one_op("{}", in, "minimum", R"(["A", "B"])"), w), {10, 15, std::nan(""), std::nan("")});
    TensorValues nan_b{{"A", {1, 2}}, {"B", {std::nan(""), 0}}};
    expect_near(run(one_op("{}", in, "maximum", R"(["A", "B"])"), nan_b), {std::nan(""), 1, std::nan(""), 2});
    expect_near(run(one_op("{}", in, "minimum", R"(["A", "B"])"), nan_b), {std::nan(""), 0, std::nan(""), 0});
}

TEST(Interpret, SimpleElementwise) {
    const double nan = std::nan("");
    expect_near(unary("relu", {-1, 0, 2, nan}), {0, 0, 2, nan});
    expect_near(unary("leaky_relu", {-2, 3, 0, -1}), {-0.02, 3, 0, -0.01});
    expect_near(unary("leaky_relu", {-2, 3, 0, -1}, R"("negative_slope": 0.5)"), {-1, 3, 0, -0.5});
    expect_near(unary("scale", {1, -2, 0.5, 4}, R"("value": 3)"), {3, -6, 1.5, 12});
    expect_near(unary("add_scalar", {1, -2, 0.5, 4}, R"("value": 3)"), {4, 1, 3.5, 7});
    expect_near(unary("min_scalar", {1, -2, 0.5, nan}, R"("value": 0.75)"), {0.75, -2, 0.5, nan});
    expect_near(unary("max_scalar", {1, -2, 0.5, nan}, R"("value": 0.75)"), {1, 0.75, 0.75, nan});
    expect_near(unary("hardtanh", {-3, -0.5, 0.5, 3}), {-1, -0.5, 0.5, 1});
    expect_near(unary("clamp", {-3, -0.5, 0.5, 3}, R"("min": 0)"), {0, 0, 0.5, 3});
    expect_near(unary("clamp", {-3, -0.5, 0.5, 3}, R"("max": 0)"), {-3, -0.5, 0, 0});
    expect_near(unary("dropout", {1, 2, 3, 4}, R"("p": 0.5)"), {1, 2, 3, 4});
    expect_near(unary("neg", {1, -2, 0, 4}), {-1, 2, 0, -4});
    expect_near(unary("abs", {1, -2, 0, -4}), {1, 2, 0, 4});
    expect_near(unary("sqrt", {4, 9, 0, -1}), {2, 3, 0, nan});
    expect_near(unary("rsqrt", {4, 16, 0.25, 0}), {0.5, 0.25, 2, std::numeric_limits<double>::infinity()});
    expect_near(unary("square", {1, -2, 0.5, 3}), {1, 4, 0.25, 9});
}

TEST(Interpret, TranscendentalElementwise) {
    const double e = std::exp(1.0);
    expect_near(unary("exp", {0, 1, -1, 2}), {1, e, 1 / e, e * e});
    expect_near(unary("log", {1, e, 0, -1}), {0, 1, -std::numeric_limits<double>::infinity(), std::nan("")});
    expect_near(unary("sigmoid", {0, 1, -1, -800}), {0.5, e / (e + 1), 1 / (e + 1), 0});
    expect_near(unary("tanh", {0, 1, -1, 20}), {0, (e * e - 1) / (e * e + 1), -(e * e - 1) / (e * e + 1), 1}, 1e-15);
    expect_near(unary("silu", {0, 1, -1, 2}), {0, e / (e + 1), -1 / (e + 1), 2 / (1 + std::exp(-2.0))});
    // gelu(1) = 0.5 * (1 + erf(1/sqrt 2)) = Phi(1); tanh form with sqrt(2/pi) * (1 + 0.044715).
    double tanh_form = 0.5 * (1 + std::tanh(std::sqrt(2 / M_PI) * 1.044715));
    expect_near(unary("gelu", {0, 1, -1, 2}), {0, 0.8413447460685429, -0.15865525393145707, 1.9544997361036416});
    expect_near(unary("gelu", {0, 1, 0, 0}, R"("approximate": "tanh")"), {0, tanh_form, 0, 0});
    // mish(x) = x * tanh(ln(1 + e^x)); mish(1) = tanh(ln(1 + e)).
    double t = std::log(1 + e);
    expect_near(unary("mish", {0, 1, 0, 0}), {0, (std::exp(2 * t) - 1) / (std::exp(2 * t) + 1), 0, 0});
    // softplus(x) = ln(1 + e^(beta x)) / beta, x where beta x > threshold.
    expect_near(unary("softplus", {0, 1, 30, -1}), {std::log(2.0), std::log(1 + e), 30, std::log(1 + 1 / e)});
    expect_near(unary("softplus", {0.25, 1, 0.5, 0.6}, R"("beta": 2, "threshold": 1)"),
                {std::log(1 + std::sqrt(e)) / 2, 1, std::log(1 + e) / 2, 0.6});
}

// erf, log1p, expm1, sin, cos, sign, reciprocal (KernelBench modules use each as torch.*).
TEST(Interpret, MoreElementwiseFunctions) {
    const double nan = std::nan(""), inf = std::numeric_limits<double>::infinity();
    expect_near(unary("erf", {0, 1, -1, 10}), {0, 0.8427007929497149, -0.8427007929497149, 1});
    expect_near(unary("log1p", {0, 1e-20, -1, 1}), {0, 1e-20, -inf, std::log(2.0)}, 1e-30);
    expect_near(unary("expm1", {0, 1e-20, -50, 1}), {0, 1e-20, -1, std::exp(1.0) - 1}, 1e-30);
    expect_near(unary("sin", {0, M_PI / 2, -M_PI / 6, M_PI}), {0, 1, -0.5, 0}, 1e-15);
    expect_near(unary("cos", {0, M_PI / 2, M_PI / 3, M_PI}), {1, 0, 0.5, -1}, 1e-15);
    expect_near(unary("sign", {-2.5, 0, 3, nan}), {-1, 0, 1, nan});
    expect_near(unary("reciprocal", {2, -4, 0, 0.5}), {0.5, -0.25, inf, 2});
}

TEST(Interpret, Reductions) {
    const char* x = R"({"X": {"shape": [2, 3], "dtype": "f64"}})";
    TensorValues v{{"X", {1, 2, 3, 4, 5, 6}}};
    expect_near(run(one_op("{}", x, "sum", R"(["X"])", R"("axis": 0)"), v), {5, 7, 9});
    expect_near(run(one_op("{}", x, "sum", R"(["X"])"), v), {6, 15});
    expect_near(run(one_op("{}", x, "mean", R"(["X"])"), v), {2, 5});
    expect_near(run(one_op("{}", x, "max", R"(["X"])", R"("axis": 0)"), v), {4, 5, 6});
    expect_near(run(one_op("{}", x, "min", R"(["X"])", R"("keepdim": true)"), v), {1, 4});
    TensorValues with_nan{{"X", {1, std::nan(""), 3, 4, 5, 6}}};
    expect_near(run(one_op("{}", x, "max", R"(["X"])"), with_nan), {std::nan(""), 6});
    // prod from 1: KernelBench level 1, 50 (torch.prod(x, dim)); 0 * inf is NaN as in PyTorch
    expect_near(run(one_op("{}", x, "prod", R"(["X"])", R"("axis": 0)"), v), {4, 10, 18});
    expect_near(run(one_op("{}", x, "prod", R"(["X"])", R"("keepdim": true)"), v), {6, 120});
    TensorValues zero_inf{{"X", {0, INFINITY, 3, -2, 0.5, 4}}};
    expect_near(run(one_op("{}", x, "prod", R"(["X"])"), zero_inf), {std::nan(""), -4});
}

TEST(Interpret, SoftmaxFamily) {
    const char* x = R"({"X": {"shape": [2, 3], "dtype": "f64"}})";
    TensorValues v{{"X", {1, 2, 3, 1000, 1000, 1000}}};
    double e = std::exp(1.0), s = e + e * e + e * e * e;
    expect_near(run(one_op("{}", x, "softmax", R"(["X"])"), v),
                {e / s, e * e / s, e * e * e / s, 1.0 / 3, 1.0 / 3, 1.0 / 3});
    expect_near(run(one_op("{}", x, "log_softmax", R"(["X"])"), v),
                {1 - std::log(s), 2 - std::log(s), 3 - std::log(s), -std::log(3.0), -std::log(3.0), -std::log(3.0)});
    expect_near(run(one_op("{}", x, "logsumexp", R"(["X"])"), v), {std::log(s), 1000 + std::log(3.0)});
    expect_near(run(one_op("{}", x, "softmax", R"(["X"])", R"("axis": 0)"), {{"X", {0, 0, 0, 0, 0, 0}}}),
                {0.5, 0.5, 0.5, 0.5, 0.5, 0.5});
    const double inf = std::numeric_limits<double>::infinity();
    expect_near(run(one_op("{}", x, "logsumexp", R"(["X"])"), {{"X", {-inf, -inf, -inf, inf, 0, 0}}}),
                {-inf, inf});
}

TEST(Interpret, LayerAndRmsNorm) {
    // x = [1, 2, 3, 4]: mean 2.5, biased var 1.25.
    double r = 1 / std::sqrt(1.25);
    expect_near(run(one_op("{}", kVec4, "layer_norm", R"(["X"])", R"("eps": 0)"), {{"X", {1, 2, 3, 4}}}),
                {-1.5 * r, -0.5 * r, 0.5 * r, 1.5 * r});
    auto affine = one_op("{}", R"({"X": {"shape": [1, 4], "dtype": "f64"}, "w": {"shape": [4], "dtype": "f64"},
                                   "b": {"shape": [4], "dtype": "f64"}})",
                         "layer_norm", R"(["X", "w", "b"])", R"("eps": 0)");
    expect_near(run(affine, {{"X", {1, 2, 3, 4}}, {"w", {1, 2, 1, 2}}, {"b", {0, 1, 0, 1}}}),
                {-1.5 * r, -1 * r + 1, 0.5 * r, 3 * r + 1});
    // Over both dims of [2, 2] with eps 1: var 1.25 + 1.
    auto two = one_op("{}", R"({"X": {"shape": [2, 2], "dtype": "f64"}})", "layer_norm", R"(["X"])",
                      R"("normalized_shape": [2, 2], "eps": 1)");
    double r2 = 1 / std::sqrt(2.25);
    expect_near(run(two, {{"X", {1, 2, 3, 4}}}), {-1.5 * r2, -0.5 * r2, 0.5 * r2, 1.5 * r2});
    // rms_norm([3, 4]) = x / sqrt((9 + 16) / 2) * w.
    auto rms = one_op("{}", R"({"X": {"shape": [2], "dtype": "f64"}, "w": {"shape": [2], "dtype": "f64"}})",
                      "rms_norm", R"(["X", "w"])", R"("eps": 0)");
    double q = std::sqrt(12.5);
    expect_near(run(rms, {{"X", {3, 4}}, {"w", {1, 2}}}), {3 / q, 8 / q});
}

TEST(Interpret, L1AndL2Normalize) {
    // [[3, -4], [0, 0]] over the last dim: l1 7, l2 5; a zero row is 0 / 0 without eps.
    const char* x = R"({"X": {"shape": [2, 2], "dtype": "f64"}})";
    auto l1 = run(one_op("{}", x, "l1_normalize", R"(["X"])"), {{"X", {3, -4, 0, 0}}});
    ASSERT_EQ(l1.size(), 4u);
    EXPECT_NEAR(l1[0], 3.0 / 7, 1e-15);
    EXPECT_NEAR(l1[1], -4.0 / 7, 1e-15);
    EXPECT_TRUE(std::isnan(l1[2]) && std::isnan(l1[3]));
    // eps clamps the norm from below (F.normalize): the zero row stays 0, a small row is / eps
    expect_near(run(one_op("{}", x, "l2_normalize", R"(["X"])", R"("eps": 0.5)"),
                    {{"X", {3, -4, 0.3, 0}}}),
                {0.6, -0.8, 0.6, 0});
    // over axis 0: columns [3, 1] and [-4, 2]
    expect_near(run(one_op("{}", x, "l2_normalize", R"(["X"])", R"("axis": 0)"),
                    {{"X", {3, -4, 1, 2}}}),
                {3 / std::sqrt(10.0), -4 / std::sqrt(20.0), 1 / std::sqrt(10.0), 2 / std::sqrt(20.0)});
}

TEST(Interpret, CumsumAndCumprod) {
    // [[1, 2, 3], [4, -5, 6]] over the last dim, then the flags; over axis 0 down the columns.
    const char* x = R"({"X": {"shape": [2, 3], "dtype": "f64"}})";
    const TensorValues in{{"X", {1, 2, 3, 4, -5, 6}}};
    expect_near(run(one_op("{}", x, "cumsum", R"(["X"])"), in), {1, 3, 6, 4, -1, 5});
    expect_near(run(one_op("{}", x, "cumsum", R"(["X"])", R"("reverse": true)"), in),
                {6, 5, 3, 5, 1, 6});
    expect_near(run(one_op("{}", x, "cumsum", R"(["X"])", R"("exclusive": true)"), in),
                {0, 1, 3, 0, 4, -1});
    expect_near(run(one_op("{}", x, "cumsum", R"(["X"])",
                           R"("reverse": true, "exclusive": true)"), in),
                {5, 3, 0, 1, 6, 0});
    expect_near(run(one_op("{}", x, "cumsum", R"(["X"])", R"("axis": 0)"), in),
                {1, 2, 3, 5, -3, 9});
    expect_near(run(one_op("{}", x, "cumprod", R"(["X"])"), in), {1, 2, 6, 4, -20, -120});
    expect_near(run(one_op("{}", x, "cumprod", R"(["X"])", R"("reverse": true)"), in),
                {6, 6, 3, -120, -30, 6});
    expect_near(run(one_op("{}", x, "cumprod", R"(["X"])", R"("exclusive": true)"), in),
                {1, 1, 2, 1, 4, -20});
}

TEST(Interpret, GroupNorm) {
    // X [1, 4, 1], 2 groups: [1, 2] -> mean 1.5, var 0.25 -> [-1, 1]; [3, 5] -> [-1, 1].
    auto p = one_op("{}", R"({"X": {"shape": [1, 4, 1], "dtype": "f64"}, "w": {"shape": [4], "dtype": "f64"},
                              "b": {"shape": [4], "dtype": "f64"}})",
                    "group_norm", R"(["X", "w", "b"])", R"("num_groups": 2, "eps": 0)");
    expect_near(run(p, {{"X", {1, 2, 3, 5}}, {"w", {1, 1, 2, 2}}, {"b", {0, 0, 0, 1}}}), {-1, 1, -2, 3});
    // X [2, 2, 2] with one group per channel: each channel's two values normalize to [-1, 1].
    auto q = one_op("{}", R"({"X": {"shape": [2, 2, 2], "dtype": "f64"}})", "group_norm", R"(["X"])",
                    R"("num_groups": 2, "eps": 0)");
    expect_near(run(q, {{"X", {0, 2, 5, 7, -1, 1, 10, 30}}}), {-1, 1, -1, 1, -1, 1, -1, 1});
}

TEST(Interpret, ChainOfOps) {
    std::string spec = test::make_spec(
        R"({"N": 3})", R"({"X": {"shape": ["N"], "dtype": "f32"}})",
        R"([{"op": "relu", "inputs": ["X"], "output": "H"},
            {"op": "mul", "inputs": ["H", "X"], "output": "Y"}])");
    auto p = parse_problem(spec, "test");
    expect_near(run(p, {{"X", {-2, 3, 4}}}), {0, 9, 16});
}

TEST(Interpret, RefusesBadInputsAndLargeProblems) {
    auto p = one_op(R"({"N": 1000})", R"({"X": {"shape": ["N", "N"], "dtype": "f32"}})", "relu", R"(["X"])");
    ASSERT_TRUE(p.ok());
    auto missing = interpret(*p, {});
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.error().where, "inputs.X");
    auto short_input = interpret(*p, {{"X", Values(10)}});
    ASSERT_FALSE(short_input.ok());
    EXPECT_NE(short_input.error().message.find("expected 1000000 values, got 10"), std::string::npos);
    auto extra = interpret(*p, {{"X", Values(1000000)}, {"Z", {}}});
    ASSERT_FALSE(extra.ok());
    EXPECT_EQ(extra.error().where, "inputs.Z");
    auto big = interpret(*p, {{"X", Values(1000000)}}, 1999999);
    ASSERT_FALSE(big.ok());
    EXPECT_NE(big.error().message.find("2000000 elements"), std::string::npos);
    EXPECT_TRUE(interpret(*p, {{"X", Values(1000000)}}, 2000000).ok());
}

TEST(Interpret, RebindDimsRevalidates) {
    std::string spec = test::make_spec(
        R"({"M": 4096, "C": 64, "D": 128})",
        R"({"X": {"shape": ["M", "C", "D"], "dtype": "bf16"}, "w": {"shape": ["C", "D"], "dtype": "bf16"}})",
        R"([{"op": "layer_norm", "inputs": ["X", "w"], "output": "H", "normalized_shape": ["C", "D"]},
            {"op": "group_norm", "inputs": ["H"], "output": "Y", "num_groups": 16}])");
    auto p = parse_problem(spec, "test");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto small = rebind_dims(*p, {{"M", 2}, {"C", 32}, {"D", 3}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->find_tensor("Y")->shape, (std::vector<int64_t>{2, 32, 3}));
    EXPECT_EQ(small->ops[0].attrs.normalized_shape, (std::vector<int64_t>{32, 3}));
    EXPECT_EQ(small->dims.at("C"), 32);
    EXPECT_EQ(p->dims.at("C"), 64) << "the original is unchanged";
    auto out = interpret(*small, {{"X", Values(2 * 32 * 3, 1.0)}, {"w", Values(32 * 3, 1.0)}});
    EXPECT_TRUE(out.ok());

    auto indivisible = rebind_dims(*p, {{"C", 24}});
    ASSERT_FALSE(indivisible.ok());
    EXPECT_EQ(indivisible.error().where, "graph[1].inputs[0]");
    EXPECT_NE(indivisible.error().message.find("not divisible by num_groups = 16"), std::string::npos);
    auto unknown = rebind_dims(*p, {{"Q", 2}});
    ASSERT_FALSE(unknown.ok());
    EXPECT_EQ(unknown.error().where, "dims.Q");
    auto zero = rebind_dims(*p, {{"M", 0}});
    ASSERT_FALSE(zero.ok());
    EXPECT_EQ(zero.error().where, "dims.M");
}

// A graph whose every op reads its input twice (issue 31: 2^n work where a stage copies what
// a value is made of): the spec stages walk it op by op, so 200 levels cost 200 ops.
TEST(Interpret, ValuesReadTwicePerOpStayLinear) {
    auto p = parse_problem(test::doubling_spec(200), "doubling.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->ops.size(), 200u);
    auto work = count_work(*p);
    ASSERT_TRUE(work.ok()) << work.error().to_string();
    EXPECT_EQ(work->flops(), 200.0 * 64 * 64);
    auto small = rebind_dims(*p, {{"M", 2}, {"N", 3}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    auto out = interpret(*small, {{"X", Values{1, -1, 0.5, 0, 2, 3}}});
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    const double scale = std::ldexp(1.0, 200);
    expect_near(out->at("Y"), Values{scale, -scale, scale / 2, 0, 2 * scale, 3 * scale}, 0);
}

}  // namespace
}  // namespace kforge
