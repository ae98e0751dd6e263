// Hand-built programs for the row-wise / map / chain codegen tests: tensors, kernels and chain
// statements, with a LowerContext over them (no parser needed).
#pragma once

#include <string>
#include <vector>

#include "codegen/kernel_lowering.h"
#include "dsl/ast.h"

namespace kforge::codegen::testing {

inline dsl::TensorRef ref(std::string name, std::vector<std::string> dims) {
    return dsl::TensorRef{std::move(name), std::move(dims), {}};
}

inline dsl::ChainOp op(dsl::ChainOpKind kind, std::vector<double> numbers = {}) {
    dsl::ChainOp o;
    o.kind = kind;
    o.numbers = std::move(numbers);
    return o;
}

inline dsl::ChainOp with(dsl::ChainOpKind kind, std::string name, std::vector<std::string> dims) {
    dsl::ChainOp o;
    o.kind = kind;
    o.tensor = ref(std::move(name), std::move(dims));
    return o;
}

inline dsl::ChainOp store(std::string name, std::vector<std::string> dims) {
    return with(dsl::ChainOpKind::kStore, std::move(name), std::move(dims));
}

inline dsl::ChainOp gelu(GeluApprox a) {
    dsl::ChainOp o = op(dsl::ChainOpKind::kGelu);
    o.gelu = a;
    return o;
}

inline dsl::ChainOp cast(DType d) {
    dsl::ChainOp o = op(dsl::ChainOpKind::kCast);
    o.cast_to = d;
    return o;
}

inline dsl::Kernel rowwise(std::string name, dsl::RowOp row_op, std::vector<dsl::TensorRef> args,
                           std::vector<dsl::ChainOp> chain) {
    dsl::Kernel k;
    k.name = std::move(name);
    k.kind = dsl::KernelKind::kRowwise;
    k.row_op = row_op;
    k.args = std::move(args);
    k.chain = std::move(chain);
    return k;
}

inline dsl::Kernel map(std::string name, dsl::TensorRef input, std::vector<dsl::ChainOp> chain) {
    dsl::Kernel k;
    k.name = std::move(name);
    k.kind = dsl::KernelKind::kMap;
    k.args = {std::move(input)};
    k.chain = std::move(chain);
    return k;
}

// A context that knows tensors by name; dims named as in `dims`.
struct Tensors {
    LowerContext ctx;
    Tensors& add(std::string name, std::vector<std::string> dims, std::vector<int64_t> shape,
                 DType dtype = DType::kF32) {
        ctx.tensors[name] = TensorInfo{name, std::move(dims), std::move(shape), dtype, false};
        return *this;
    }
};

}  // namespace kforge::codegen::testing
