// Problems and programs with a value used twice (named by `let`), for the codegen tests of
// named values: parsed from text and checked, so every program here is one the checker proves.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "codegen/gemm_spec.h"
#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "sol/device.h"

namespace kforge::codegen::let_testing {

// y = x * 0.5 + x, x = X W^T + b (bf16; KernelBench level 2's clone-scale-add).
inline constexpr const char* kSelfResidualSpec = R"({"name": "self_residual",
    "dims": {"M": 512, "N": 256, "K": 128},
    "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
               "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
               "b": {"shape": ["N"], "dtype": "bf16", "param": true}},
    "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
              {"op": "scale", "inputs": ["H"], "output": "S", "value": 0.5},
              {"op": "add", "inputs": ["S", "H"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "bf16"}})";

// softsign of a gemm's value with a residual divisor: y = R / (1 + |x|) + x, x = X W^T.
inline constexpr const char* kGemmSoftsignSpec = R"({"name": "gemm_softsign",
    "dims": {"M": 512, "N": 256, "K": 128},
    "inputs": {"X": {"shape": ["M", "K"], "dtype": "f16"},
               "W": {"shape": ["N", "K"], "dtype": "f16", "param": true},
               "R": {"shape": ["M", "N"], "dtype": "f16"}},
    "graph": [{"op": "linear", "inputs": ["X", "W"], "output": "H"},
              {"op": "abs", "inputs": ["H"], "output": "A"},
              {"op": "add_scalar", "inputs": ["A"], "output": "D", "value": 1.0},
              {"op": "div", "inputs": ["R", "D"], "output": "Q"},
              {"op": "add", "inputs": ["Q", "H"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp16"}})";

inline constexpr const char* kSoftsignSpec = R"({"name": "softsign", "dims": {"R": 64, "C": 1024},
    "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}},
    "graph": [{"op": "abs", "inputs": ["X"], "output": "A"},
              {"op": "add_scalar", "inputs": ["A"], "output": "D", "value": 1.0},
              {"op": "div", "inputs": ["X", "D"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})";

// z = s * s + s with s = softmax(x) (bf16 in and out): a rowwise chain reading its value twice.
inline constexpr const char* kSoftmaxSquareSpec = R"({"name": "softmax_square",
    "dims": {"R": 64, "C": 1024},
    "inputs": {"X": {"shape": ["R", "C"], "dtype": "bf16"}},
    "graph": [{"op": "softmax", "inputs": ["X"], "output": "S"},
              {"op": "square", "inputs": ["S"], "output": "Q"},
              {"op": "add", "inputs": ["Q", "S"], "output": "Y"}],
    "outputs": ["Y"], "precision": {"policy": "bf16"}})";

struct Checked {
    Problem problem;
    dsl::Program program;
};

// Parses and checks; a parse or check error fails the test.
inline Checked checked(const char* spec, const std::string& program) {
    Checked c;
    auto problem = parse_problem(spec, "p.json");
    EXPECT_TRUE(problem.ok()) << (problem.ok() ? "" : problem.error().to_string());
    if (!problem.ok()) return c;
    c.problem = *problem;
    auto parsed = dsl::parse_program(program, "t.kf");
    EXPECT_TRUE(parsed.ok()) << (parsed.ok() ? "" : parsed.error().to_string());
    if (!parsed.ok()) return c;
    c.program = *parsed;
    auto r = dsl::check_program(c.program, c.problem,
                                dsl::device_limits(find_device("h200").value()),
                                dsl::CheckOptions{"t.kf", program});
    for (const auto& e : r.errors) ADD_FAILURE() << e.to_string();
    return c;
}

// The GemmSpec of the program's first kernel (a gemm), as the lowering analyzes it.
inline Expected<GemmSpec> first_gemm_spec(const Checked& c) {
    auto table = build_tensor_table(c.program, c.problem);
    if (!table) return table.error();
    LowerContext ctx;
    ctx.problem = &c.problem;
    ctx.tensors = *table;
    return analyze_gemm(c.program.kernels[0], ctx);
}

inline Expected<Lowered> lower(const Checked& c) {
    return lower_program(c.program, c.problem, LowerOptions{});
}

}  // namespace kforge::codegen::let_testing
