// Problems built directly in C++ for the sol tests (no parser involved).
#pragma once

#include <string>
#include <vector>

#include "problem/problem.h"

namespace kforge::testing {

inline Tensor tensor(std::string name, std::vector<int64_t> shape, DType dtype, TensorRole role) {
    Tensor t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.dim_names.assign(t.shape.size(), "");
    t.dtype = dtype;
    t.role = role;
    return t;
}

inline Op op(OpKind kind, std::vector<std::string> inputs, std::string output) {
    Op o;
    o.kind = kind;
    o.inputs = std::move(inputs);
    o.output = std::move(output);
    return o;
}

// C[M,N] = A[M,K] @ B[K,N]
inline Problem matmul_problem(int64_t m, int64_t n, int64_t k, DType dtype,
                              PrecisionPolicy policy) {
    Problem p;
    p.name = "matmul";
    p.tensors = {tensor("A", {m, k}, dtype, TensorRole::kInput),
                 tensor("B", {k, n}, dtype, TensorRole::kInput),
                 tensor("C", {m, n}, dtype, TensorRole::kOutput)};
    p.ops = {op(OpKind::kMatmul, {"A", "B"}, "C")};
    p.outputs = {"C"};
    p.policy = policy;
    return p;
}

inline Problem softmax_problem(int64_t rows, int64_t cols) {
    Problem p;
    p.name = "softmax";
    p.tensors = {tensor("X", {rows, cols}, DType::kF32, TensorRole::kInput),
                 tensor("Y", {rows, cols}, DType::kF32, TensorRole::kOutput)};
    p.ops = {op(OpKind::kSoftmax, {"X"}, "Y")};
    p.outputs = {"Y"};
    return p;
}

// Y = relu(X + b) * G over [r, c] f32, b broadcast [c]: three element-wise ops.
inline Problem chain_problem(int64_t r, int64_t c) {
    Problem p;
    p.name = "chain";
    const auto f = DType::kF32;
    p.tensors = {tensor("X", {r, c}, f, TensorRole::kInput),
                 tensor("b", {c}, f, TensorRole::kParam),
                 tensor("G", {r, c}, f, TensorRole::kInput),
                 tensor("H", {r, c}, f, TensorRole::kIntermediate),
                 tensor("A", {r, c}, f, TensorRole::kIntermediate),
                 tensor("Y", {r, c}, f, TensorRole::kOutput)};
    p.ops = {op(OpKind::kAdd, {"X", "b"}, "H"), op(OpKind::kRelu, {"H"}, "A"),
             op(OpKind::kMul, {"A", "G"}, "Y")};
    p.outputs = {"Y"};
    return p;
}

}  // namespace kforge::testing
