// Hand-built gemm programs and their problems for the gemm codegen tests (no parser needed).
#pragma once

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "dsl/ast.h"
#include "problem/problem.h"
#include "problem/spec.h"

namespace kforge::codegen::gemm_testing {

inline dsl::TensorRef tref(std::string name, std::vector<std::string> dims) {
    return dsl::TensorRef{std::move(name), std::move(dims), {}};
}

inline dsl::ChainOp chain_op(dsl::ChainOpKind kind, std::vector<double> numbers = {}) {
    dsl::ChainOp o;
    o.kind = kind;
    o.numbers = std::move(numbers);
    return o;
}

inline dsl::ChainOp chain_tensor(dsl::ChainOpKind kind, std::string name,
                                 std::vector<std::string> dims) {
    dsl::ChainOp o;
    o.kind = kind;
    o.tensor = tref(std::move(name), std::move(dims));
    return o;
}

inline dsl::ChainOp chain_cast(DType d) {
    dsl::ChainOp o = chain_op(dsl::ChainOpKind::kCast);
    o.cast_to = d;
    return o;
}

inline dsl::Kernel gemm_kernel(std::string name, dsl::TensorRef a, dsl::TensorRef b,
                               dsl::GemmConfig config, std::vector<dsl::ChainOp> chain) {
    dsl::Kernel k;
    k.name = std::move(name);
    k.kind = dsl::KernelKind::kGemm;
    k.args = {std::move(a), std::move(b)};
    k.gemm = config;
    k.chain = std::move(chain);
    return k;
}

inline dsl::Program program_of(std::string name, std::string problem,
                               std::vector<dsl::Kernel> kernels) {
    dsl::Program p;
    p.name = std::move(name);
    p.problem = std::move(problem);
    p.kernels = std::move(kernels);
    return p;
}

inline Problem problem_from(const std::string& json) {
    auto p = parse_problem(json, "<test>");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// Y = relu(X @ W^T + b), bf16, 4096^3.
inline Problem problem_gemm_bias_relu_bf16() {
    return problem_from(R"({"name": "gemm_bias_relu_bf16", "dims": {"M": 4096, "N": 4096, "K": 4096},
      "inputs": {"X": {"shape": ["M", "K"], "dtype": "bf16"},
                 "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
                 "b": {"shape": ["N"], "dtype": "bf16", "param": true}},
      "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
                {"op": "relu", "inputs": ["H"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "bf16"}})");
}

// The bf16 gemm + bias + relu program of docs/language.md.
inline dsl::Program program_gemm_bias_relu_bf16() {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 256; c.tile_k = 64;
    c.cluster_m = 2; c.cluster_n = 1;
    c.schedule = dsl::Schedule::kCooperative;
    c.math = dsl::MathMode::kBf16;
    c.raster = dsl::Raster::kAlongN;
    c.swizzle = 8;
    return program_of("gemm_bias_relu", "gemm_bias_relu_bf16",
                      {gemm_kernel("k0", tref("X", {"M", "K"}), tref("W", {"N", "K"}), c,
                                   {chain_tensor(dsl::ChainOpKind::kAdd, "b", {"N"}),
                                    chain_op(dsl::ChainOpKind::kRelu),
                                    chain_cast(DType::kBF16),
                                    chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"})})});
}

// Y = gelu_tanh(A @ B + R) * 0.5 with B [K,N] row-major, f16, residual R [M,N].
inline Problem problem_residual_gelu_f16() {
    return problem_from(R"({"name": "residual_gelu_f16", "dims": {"M": 2048, "N": 1024, "K": 512},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f16"},
                 "B": {"shape": ["K", "N"], "dtype": "f16", "param": true},
                 "R": {"shape": ["M", "N"], "dtype": "f16"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
                {"op": "add", "inputs": ["H", "R"], "output": "S"},
                {"op": "gelu", "inputs": ["S"], "output": "G", "approximate": "tanh"},
                {"op": "scale", "inputs": ["G"], "output": "Y", "value": 0.5}],
      "outputs": ["Y"], "precision": {"policy": "fp16"}})");
}

inline dsl::Program program_residual_gelu_f16() {
    dsl::GemmConfig c;
    c.tile_m = 64; c.tile_n = 128; c.tile_k = 64;
    c.stages = 4;
    c.schedule = dsl::Schedule::kPingpong;
    dsl::ChainOp gelu = chain_op(dsl::ChainOpKind::kGelu);
    gelu.gelu = GeluApprox::kTanh;
    return program_of("residual_gelu", "residual_gelu_f16",
                      {gemm_kernel("k0", tref("A", {"M", "K"}), tref("B", {"K", "N"}), c,
                                   {chain_tensor(dsl::ChainOpKind::kAdd, "R", {"M", "N"}), gelu,
                                    chain_op(dsl::ChainOpKind::kMul, {0.5}),
                                    chain_cast(DType::kF16),
                                    chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"})})});
}

// T = X @ W^T + b (f32, fp32_strict), then a second kernel would reduce T; here one kernel.
inline Problem problem_linear_f32() {
    return problem_from(R"({"name": "linear_f32", "dims": {"M": 1024, "N": 512, "K": 256},
      "inputs": {"X": {"shape": ["M", "K"], "dtype": "f32"},
                 "W": {"shape": ["N", "K"], "dtype": "f32", "param": true},
                 "b": {"shape": ["N"], "dtype": "f32", "param": true},
                 "c": {"shape": ["M", 1], "dtype": "f32"}},
      "graph": [{"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
                {"op": "sub", "inputs": ["H", "c"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "fp32_strict"}})");
}

inline dsl::Program program_linear_f32(dsl::Schedule schedule, dsl::MathMode math) {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 32;
    c.schedule = schedule;
    c.math = math;
    return program_of("linear_f32", "linear_f32",
                      {gemm_kernel("k0", tref("X", {"M", "K"}), tref("W", {"N", "K"}), c,
                                   {chain_tensor(dsl::ChainOpKind::kAdd, "b", {"N"}),
                                    chain_tensor(dsl::ChainOpKind::kSub, "c", {"M", "1"}),
                                    chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"})})});
}

// f32 2048^3 matmul, fp32_strict, as bench/kernels/fp32acc/square_f32_2048.json;
// multistage 128x128x16, 3 stages, a plain store (bench/kernels/fp32acc/ms_*.kf).
inline Problem problem_square_f32() {
    return problem_from(R"({"name": "square_f32", "dims": {"N": 2048, "N_1": 2048, "N_2": 2048},
      "inputs": {"A": {"shape": ["N", "N_1"], "dtype": "f32"},
                 "B": {"shape": ["N_1", "N_2"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "matmul"}],
      "outputs": ["matmul"], "precision": {"policy": "fp32_strict"}})");
}

inline dsl::Program program_square_f32(dsl::MathMode math) {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 16;
    c.stages = 3;
    c.schedule = dsl::Schedule::kMultistage;
    c.math = math;
    return program_of("square_f32", "square_f32",
                      {gemm_kernel("k0", tref("A", {"N", "N_1"}), tref("B", {"N_1", "N_2"}), c,
                                   {chain_tensor(dsl::ChainOpKind::kStore, "matmul",
                                                 {"N", "N_2"})})});
}

// Y = A @ B + b[N] - c[M,1] with f32 data under the tf32 policy; B [K,N] is N-major, so the sm90
// lowering stages it K-major (codegen/gemm_stage.h).
inline Problem problem_tf32_nn_bias() {
    return problem_from(R"({"name": "tf32_nn_bias", "dims": {"M": 1024, "N": 2048, "K": 512},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
                 "B": {"shape": ["K", "N"], "dtype": "f32", "param": true},
                 "b": {"shape": ["N"], "dtype": "f32", "param": true},
                 "c": {"shape": ["M", 1], "dtype": "f32"},
                 "R": {"shape": ["M", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "H"},
                {"op": "add", "inputs": ["H", "b"], "output": "S"},
                {"op": "sub", "inputs": ["S", "c"], "output": "T"},
                {"op": "add", "inputs": ["T", "R"], "output": "Y"}],
      "outputs": ["Y"], "precision": {"policy": "tf32"}})");
}

// gemm(A[M,K], B[K,N]) math tf32, tile 128x256x32, cluster 2x1, cooperative, raster along_n,
// with the given chain before `store Y[M,N]`.
inline dsl::Program program_tf32_nn(std::vector<dsl::ChainOp> chain) {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 256; c.tile_k = 32;
    c.cluster_m = 2; c.cluster_n = 1;
    c.schedule = dsl::Schedule::kCooperative;
    c.math = dsl::MathMode::kTf32;
    c.raster = dsl::Raster::kAlongN;
    chain.push_back(chain_tensor(dsl::ChainOpKind::kStore, "Y", {"M", "N"}));
    return program_of("tf32_nn", "tf32_nn_bias",
                      {gemm_kernel("k0", tref("A", {"M", "K"}), tref("B", {"K", "N"}), c,
                                   std::move(chain))});
}

// Gives operand `arg` (0: A, 1: B) of the program's first gemm the layout `dims` with `shape`,
// in the problem's tensor and in the kernel's argument alike (e.g. B as [N,K]: K-major).
inline void relayout_operand(Problem& problem, dsl::Program& program, int arg,
                             std::vector<std::string> dims, std::vector<int64_t> shape) {
    dsl::TensorRef& ref = program.kernels.at(0).args.at(arg);
    for (auto& t : problem.tensors)
        if (t.name == ref.name) {
            t.dim_names = dims;
            t.shape = std::move(shape);
        }
    ref = tref(ref.name, std::move(dims));
}

}  // namespace kforge::codegen::gemm_testing
