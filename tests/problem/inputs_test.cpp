// Deterministic input generation and rounding to dtypes.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>
#include <limits>

#include "problem/inputs.h"
#include "problem/interpret.h"
#include "problem/spec.h"
#include "tests/reference/rnn_specs.h"

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
    auto s = generate(x, Distribution::kUniformPm1, 1);  // 2u - 1 of the same stream
    mean = 0, lo = 1, hi = -1;
    for (size_t i = 0; i < s.size(); ++i) {
        ASSERT_EQ(s[i], 2.0 * u[i] - 1.0) << i;
        mean += s[i] / s.size();
        lo = std::min(lo, s[i]);
        hi = std::max(hi, s[i]);
    }
    EXPECT_NEAR(mean, 0.0, 0.03);
    EXPECT_GE(lo, -1.0);
    EXPECT_LT(lo, -0.99);
    EXPECT_LT(hi, 1.0);
    EXPECT_GT(hi, 0.99);
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

// Large tensors are generated in parallel chunks; the values must be exactly those of one
// sequential SplitMix64 stream (an independent re-implementation here), across chunk borders.
TEST(Inputs, ParallelChunksEqualOneSequentialStream) {
    struct Rng {
        uint64_t s;
        uint64_t next() {
            uint64_t z = (s += 0x9E3779B97F4A7C15ull);
            z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
            z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
            return z ^ (z >> 31);
        }
        double uniform() { return static_cast<double>(next() >> 11) * 0x1.0p-53; }
        double normal() {
            double u1 = 1.0 - uniform();
            double u2 = uniform();
            return std::sqrt(-2.0 * std::log(u1)) * std::cos(2.0 * M_PI * u2);
        }
    };
    const Tensor x = tensor("X", {3, 1000001}, DType::kF32);  // > 1 chunk of 2^20 values
    for (Distribution d : {Distribution::kUniform01, Distribution::kUniformPm1,
                           Distribution::kNormal, Distribution::kHeavyTailed}) {
        uint64_t h = 0xCBF29CE484222325ull;
        for (char c : std::string("X")) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001B3ull;
        Rng r{42 ^ h};
        r.next();
        std::vector<double> got = generate(x, d, 42);
        ASSERT_EQ(got.size(), 3000003u);
        size_t mismatches = 0;
        for (size_t i = 0; i < got.size(); ++i) {
            double v = 0;
            if (d == Distribution::kUniform01) {
                v = r.uniform();
            } else if (d == Distribution::kUniformPm1) {
                v = 2.0 * r.uniform() - 1.0;
            } else if (d == Distribution::kNormal) {
                v = r.normal();
            } else {
                double z = r.normal(), chi2 = 0;
                for (int k = 0; k < 3; ++k) {
                    double g = r.normal();
                    chi2 += g * g;
                }
                v = std::clamp(z / std::sqrt(std::max(chi2, 1e-300) / 3.0), -1e4, 1e4);
            }
            if (got[i] != round_to_dtype(v, DType::kF32)) ++mismatches;
        }
        EXPECT_EQ(mismatches, 0u) << to_string(d);
    }
}

TEST(Inputs, RnnWeightsAreDrawnAtOneOverSqrtHidden) {
    // N(0, 1) weights make an lstm / gru chaotic: no fp32 kernel could match the fp64 reference
    auto p = parse_problem(eval::testing::rnn_spec_json("g", "gru", 2, false, false, true, "h_n", 5, 3, 4, 16),
                           "rnn.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    for (const char* name : {"weight_ih_l0", "weight_hh_l1", "bias_hh_l1"}) {
        const Tensor& t = *p->find_tensor(name);
        ASSERT_EQ(rnn_weight_scale(*p, name), 0.25) << name;
        std::vector<double> raw = generate(t, Distribution::kNormal, 7);
        std::vector<double> drawn = generate_input(*p, t, Distribution::kNormal, 7);
        ASSERT_EQ(raw.size(), drawn.size());
        for (size_t i = 0; i < raw.size(); ++i)
            ASSERT_EQ(drawn[i], round_to_dtype(raw[i] * 0.25, t.dtype)) << name << "[" << i << "]";
    }
    for (const char* name : {"x", "h0"}) {  // the states and the input as drawn
        EXPECT_FALSE(rnn_weight_scale(*p, name).has_value()) << name;
        const Tensor& t = *p->find_tensor(name);
        EXPECT_EQ(generate_input(*p, t, Distribution::kNormal, 7), generate(t, Distribution::kNormal, 7));
    }
}

TEST(Inputs, SpecifiedDrawsEachTensorAsItsSpecSays) {
    // the timing inputs: A uniform on [0, 1) as the spec says, B normal (the default)
    auto p = parse_problem(R"({"name": "g", "dims": {"M": 64, "K": 32, "N": 16},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f16", "distribution": "uniform01"},
                   "B": {"shape": ["K", "N"], "dtype": "f16"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp16"}})", "g.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const Tensor& a = *p->find_tensor("A");
    const Tensor& b = *p->find_tensor("B");
    EXPECT_EQ(a.distribution, Distribution::kUniform01);
    EXPECT_EQ(b.distribution, Distribution::kNormal);
    EXPECT_EQ(generate(a, Distribution::kSpecified, 9), generate(a, Distribution::kUniform01, 9));
    EXPECT_EQ(generate(b, Distribution::kSpecified, 9), generate(b, Distribution::kNormal, 9));
    EXPECT_EQ(describe_distributions(*p), "A uniform01, B normal");
    // written back only where not the default, and read back the same
    nlohmann::ordered_json j = problem_to_json(*p);
    EXPECT_EQ(j["inputs"]["A"]["distribution"], "uniform01");
    EXPECT_FALSE(j["inputs"]["B"].contains("distribution"));
    auto again = parse_problem(j.dump(), "again.json");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(describe_distributions(*again), "A uniform01, B normal");
}

// A param at PyTorch's default init: "uniform_pm1" times scale / sqrt(fan_in), fan_in by dim
// names (valued at each binding: a correctness shape's smaller channels draw at their own
// fan-in), in the timing draw and in every correctness round's distribution alike (the uniform
// round's on [-1, 1): TheUniformRoundDrawsAScaledParamZeroMean).
TEST(Inputs, DeclaredScaleAndFanInScaleEveryDraw) {
    auto p = parse_problem(R"({"name": "g", "dims": {"N": 4, "C": 16, "K": 8},
        "inputs": {"X": {"shape": ["N", "C"], "dtype": "f32"},
                   "W": {"shape": ["K", "C"], "dtype": "f32", "param": true,
                         "distribution": "uniform_pm1", "fan_in": "C"},
                   "b": {"shape": ["K"], "dtype": "f32", "param": true,
                         "distribution": "uniform_pm1", "fan_in": "C*1"},
                   "g": {"shape": ["K"], "dtype": "f16", "param": true, "fan_in": 100,
                         "scale": 3},
                   "s": {"shape": ["K"], "dtype": "f32", "param": true, "scale": 0.5}},
        "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "Y"},
                  {"op": "mul", "inputs": ["Y", "g"], "output": "Z"},
                  {"op": "mul", "inputs": ["Z", "s"], "output": "O"}],
        "outputs": ["O"], "precision": {"policy": "fp32_strict"}})", "g.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const Tensor& w = *p->find_tensor("W");
    EXPECT_EQ(w.distribution, Distribution::kUniformPm1);
    EXPECT_EQ(w.fan_in, "C");
    EXPECT_EQ(w.fan_in_value, 16);
    EXPECT_FALSE(w.scale.has_value());
    EXPECT_EQ(draw_scale(*p, w), 0.25);
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("b")), 0.25);
    EXPECT_DOUBLE_EQ(draw_scale(*p, *p->find_tensor("g")), 0.3);
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("s")), 0.5);
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("X")), 1.0);
    for (Distribution d : {Distribution::kSpecified, Distribution::kUniform01,
                           Distribution::kNormal, Distribution::kHeavyTailed}) {
        for (const char* name : {"W", "b", "g", "s", "X"}) {
            const Tensor& t = *p->find_tensor(name);
            const double scale = draw_scale(*p, t);
            const bool signed_uniform = d == Distribution::kUniform01 && t.name != "X";
            std::vector<double> raw = generate(t, signed_uniform ? Distribution::kUniformPm1 : d, 7);
            std::vector<double> drawn = generate_input(*p, t, d, 7);
            ASSERT_EQ(raw.size(), drawn.size());
            for (size_t i = 0; i < raw.size(); ++i)
                ASSERT_EQ(drawn[i], round_to_dtype(raw[i] * scale, t.dtype))
                    << name << "[" << i << "] " << to_string(d);
            EXPECT_EQ(drawn, generate_input(*p, t, d, 7)) << "seeded";
        }
    }
    std::vector<double> wv = generate_input(*p, w, Distribution::kSpecified, 3);
    EXPECT_LT(*std::min_element(wv.begin(), wv.end()), -0.15) << "U[-1, 1) / 4, both signs";
    EXPECT_LT(*std::max_element(wv.begin(), wv.end()), 0.25);
    EXPECT_GT(*std::max_element(wv.begin(), wv.end()), 0.15);
    // what a timing was measured on names the scale
    EXPECT_EQ(describe_distributions(*p),
              "X normal, W uniform_pm1 x0.25, b uniform_pm1 x0.25, g normal x0.3, s normal x0.5; "
              "the uniform01 round draws the scaled ones on [-1, 1)");
    // written back as given (a number stays a number, dims stay by name) and read back the same
    nlohmann::ordered_json j = problem_to_json(*p);
    EXPECT_EQ(j["inputs"]["W"]["distribution"], "uniform_pm1");
    EXPECT_EQ(j["inputs"]["W"]["fan_in"], "C");
    EXPECT_FALSE(j["inputs"]["W"].contains("scale"));
    EXPECT_EQ(j["inputs"]["b"]["fan_in"], "C*1");
    EXPECT_EQ(j["inputs"]["g"]["fan_in"], 100);
    EXPECT_EQ(j["inputs"]["g"]["scale"], 3.0);
    EXPECT_FALSE(j["inputs"]["s"].contains("fan_in"));
    EXPECT_FALSE(j["inputs"]["X"].contains("fan_in") || j["inputs"]["X"].contains("scale"));
    auto again = parse_problem(j.dump(), "again.json");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(describe_distributions(*again), describe_distributions(*p));
    // a smaller binding (a correctness shape) draws at its own fan-in
    auto small = rebind_dims(*p, {{"C", 4}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(draw_scale(*small, *small->find_tensor("W")), 0.5);
    EXPECT_EQ(draw_scale(*small, *small->find_tensor("b")), 0.5);
    EXPECT_DOUBLE_EQ(draw_scale(*small, *small->find_tensor("g")), 0.3) << "a number stays";
}

// The uniform correctness round (and the full-shape run) draws on [0, 1) to stay inside every
// op's domain; a param at its init bound drawn so would be all positive, and a deep network's
// activations would grow each layer until fp32 overflows (a GoogleNet's reached 1.7e15 at the
// small shape). So a scaled tensor's uniform draw is on [-1, 1) times its bound, zero-mean like
// its module's init; unscaled inputs keep [0, 1), and the other rounds and the timing draw are
// as they were.
TEST(Inputs, TheUniformRoundDrawsAScaledParamZeroMean) {
    auto p = parse_problem(R"({"name": "g", "dims": {"N": 4, "C": 16, "K": 64},
        "inputs": {"X": {"shape": ["N", "C"], "dtype": "f32"},
                   "W": {"shape": ["K", "C"], "dtype": "f32", "param": true,
                         "distribution": "uniform_pm1", "fan_in": "C"},
                   "s": {"shape": ["K"], "dtype": "f32", "param": true,
                         "distribution": "uniform01", "scale": 0.5},
                   "m": {"shape": ["N", "K"], "dtype": "f32"}},
        "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "Y"},
                  {"op": "mul", "inputs": ["Y", "s"], "output": "Z"},
                  {"op": "add", "inputs": ["Z", "m"], "output": "O"}],
        "outputs": ["O"], "precision": {"policy": "fp32_strict"}})", "g.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const Tensor& w = *p->find_tensor("W");
    const Tensor& s = *p->find_tensor("s");
    EXPECT_TRUE(has_draw_scale(*p, w) && has_draw_scale(*p, s));
    EXPECT_FALSE(has_draw_scale(*p, *p->find_tensor("X")) || has_draw_scale(*p, *p->find_tensor("m")));
    auto signs_within = [](const std::vector<double>& v, double bound, const std::string& what) {
        double lo = 0, hi = 0, mean = 0;
        for (double x : v) {
            lo = std::min(lo, x);
            hi = std::max(hi, x);
            mean += x / static_cast<double>(v.size());
        }
        EXPECT_LT(lo, -0.5 * bound) << what;
        EXPECT_GE(lo, -bound) << what;
        EXPECT_GT(hi, 0.5 * bound) << what;
        EXPECT_LT(hi, bound) << what;
        // within 4 standard errors of 0 (U[-b, b): sd b / sqrt(3))
        EXPECT_NEAR(mean, 0.0, 4.0 * bound / std::sqrt(3.0 * static_cast<double>(v.size()))) << what;
    };
    for (uint64_t seed : {1, 2, 3}) {
        const std::vector<double> wu = generate_input(*p, w, Distribution::kUniform01, seed);
        signs_within(wu, 0.25, "W");
        const std::vector<double> pm1 = generate(w, Distribution::kUniformPm1, seed);
        for (size_t i = 0; i < wu.size(); ++i)  // 2u - 1 of the uniform round's own stream
            ASSERT_EQ(wu[i], round_to_dtype(pm1[i] * 0.25, w.dtype)) << i;
        signs_within(generate_input(*p, s, Distribution::kUniform01, seed), 0.5, "s");
        for (const char* name : {"X", "m"}) {  // unscaled inputs: [0, 1) as before
            const Tensor& t = *p->find_tensor(name);
            EXPECT_EQ(generate_input(*p, t, Distribution::kUniform01, seed),
                      generate(t, Distribution::kUniform01, seed)) << name;
        }
        // the other rounds and the timing draw as before: s as its spec says, on [0, 0.5)
        const std::vector<double> sn = generate_input(*p, s, Distribution::kNormal, seed);
        const std::vector<double> sr = generate(s, Distribution::kNormal, seed);
        for (size_t i = 0; i < sn.size(); ++i) ASSERT_EQ(sn[i], round_to_dtype(sr[i] * 0.5, s.dtype));
        for (double x : generate_input(*p, s, Distribution::kSpecified, seed)) {
            EXPECT_GE(x, 0.0);
            EXPECT_LT(x, 0.5);
        }
    }
    // an lstm / gru weight at its implied 1 / sqrt(H) bound too; its input x as before
    auto r = parse_problem(eval::testing::rnn_spec_json("g", "gru", 1, false, false, true, "h_n", 5, 3, 4, 16),
                           "rnn.json");
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    const Tensor& wh = *r->find_tensor("weight_hh_l0");
    EXPECT_TRUE(has_draw_scale(*r, wh));
    signs_within(generate_input(*r, wh, Distribution::kUniform01, 7), 0.25, "weight_hh_l0");
    const Tensor& x = *r->find_tensor("x");
    EXPECT_EQ(generate_input(*r, x, Distribution::kUniform01, 7), generate(x, Distribution::kUniform01, 7));
    // the evaluation cache's key says so where a tensor is scaled, and only there
    EXPECT_EQ(describe_distributions(*p),
              "X normal, W uniform_pm1 x0.25, s uniform01 x0.5, m normal; "
              "the uniform01 round draws the scaled ones on [-1, 1)");
}

TEST(Inputs, AnRnnWeightsOwnScaleReplacesTheImpliedOne) {
    // an imported lstm / gru writes "fan_in": "H" itself; a hand-written one without it keeps
    // 1 / sqrt(H); an explicit scale wins over the implied one
    auto text = eval::testing::rnn_spec_json("g", "gru", 1, false, false, true, "h_n", 5, 3, 4, 16);
    auto j = nlohmann::json::parse(text);
    j["inputs"]["weight_hh_l0"]["scale"] = 1.0;
    j["inputs"]["bias_hh_l0"]["fan_in"] = 4;
    auto p = parse_problem(j.dump(), "rnn.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("weight_ih_l0")), 0.25) << "1 / sqrt(H = 16)";
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("weight_hh_l0")), 1.0);
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("bias_hh_l0")), 0.5);
    EXPECT_EQ(draw_scale(*p, *p->find_tensor("x")), 1.0);
}

TEST(Inputs, DistributionNames) {
    EXPECT_EQ(distribution_from_string("uniform_pm1"), Distribution::kUniformPm1);
    for (auto d : {Distribution::kUniform01, Distribution::kUniformPm1, Distribution::kNormal,
                   Distribution::kHeavyTailed}) {
        EXPECT_EQ(distribution_from_string(to_string(d)), d);
    }
    EXPECT_FALSE(distribution_from_string("cauchy").has_value());
    EXPECT_EQ(to_string(Distribution::kSpecified), "specified");
    EXPECT_FALSE(distribution_from_string("specified").has_value()) << "no tensor's own";
}

}  // namespace
}  // namespace kforge
