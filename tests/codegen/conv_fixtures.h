// Shared problems, programs and helpers of the convolution lowering tests (codegen/lower_conv.cpp,
// lower_conv_forms.cpp).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge::codegen::conv_testing {

inline dsl::DeviceLimits h200() { return dsl::device_limits(find_device("h200").value()); }

// The problem of a JSON spec (a failed test and an empty problem when it does not parse).
inline Problem parsed(const std::string& json) {
    auto p = parse_problem(json, "<test>");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

inline void expect_has(const std::string& source, const std::string& text) {
    EXPECT_NE(source.find(text), std::string::npos) << "missing: " << text;
}

// y = relu(conv2d(x, w, b)): x [N,C,H,W] = [2,3,17,19], w [K,C,R,S] = [10,3,3,3], stride 2,
// padding 1, dilation 1 -> y [2,10,9,10] (P = (17 + 2 - 2 - 1) / 2 + 1 = 9, Q = 10).
// KernelBench's usual shape in miniature: C = 3, K not a multiple of 4.
inline std::string conv_problem_json(const std::string& dtype, const std::string& policy,
                                     int n = 2, int h = 17, int w = 19) {
    return R"({"name": "conv_bias_relu", "dims": {"N": )" + std::to_string(n) +
           R"(, "C": 3, "H": )" + std::to_string(h) + R"(, "W": )" + std::to_string(w) +
           R"(, "K": 10, "R": 3, "S": 3},
      "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": ")" + dtype + R"("},
                 "w": {"shape": ["K", "C", "R", "S"], "dtype": ")" + dtype + R"(", "param": true},
                 "b": {"shape": ["K"], "dtype": ")" + dtype + R"(", "param": true}},
      "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h",
                 "stride": 2, "padding": [1, 1], "out_dims": ["P", "Q"]},
                {"op": "relu", "inputs": ["h"], "output": "y"}],
      "outputs": ["y"], "precision": {"policy": ")" + policy + R"("}})";
}

inline Problem conv_problem(const std::string& dtype = "f32",
                            const std::string& policy = "fp32_strict") {
    auto p = parse_problem(conv_problem_json(dtype, policy), "<test>");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// `cast`: a statement before the store ("cast f16; " where the problem's output is f16).
inline std::string conv_program_text(const std::string& knobs, const std::string& cast = "") {
    return "program conv for \"conv_bias_relu\"\n"
           "kernel k0 = conv2d(x[N,C,H,W], w[K,C,R,S]) " + knobs +
           "\n    { add b[K]; relu; " + cast + "store y[N,K,P,Q] }\n";
}

inline dsl::Program conv_program(const std::string& knobs) {
    auto p = dsl::parse_program(conv_program_text(knobs), "conv.kf");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : dsl::Program{};
}

}  // namespace kforge::codegen::conv_testing
