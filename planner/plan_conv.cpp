// Convolutions in the fusion planner (planner/partition.h).
#include "planner/knobs.h"
#include "planner/partition.h"

namespace kforge::planner::detail {

using dsl::ChainOp;
using dsl::ChainOpKind;

// conv2d(x, w [, b]) and conv1d (run as a conv2d with H = 1): one conv2d kernel (the implicit
// GEMM of M = N*P*Q, N = K, K = C*R*S) whose chain adds the bias and absorbs the element-wise
// ops that follow as a gemm's epilogue does (operands [], [K] or the output's [N,K,P,Q]; one
// store, at the end). The other convolution forms are refused by name.
Status Planner::add_conv2d(const Op& op) {
    const Tensor& x = tensor(op.inputs[0]);
    const Tensor& w = tensor(op.inputs[1]);
    const Tensor& y = tensor(op.output);
    const bool one_d = op.kind == OpKind::kConv1d;  // a conv2d kernel with H = 1
    const bool three_d = op.kind == OpKind::kConv3d;  // a conv2d kernel on CUTLASS's 3-D fprop
    if (op.kind != OpKind::kConv2d && !one_d && !three_d) {
        return not_expressible(op, "not supported yet: " + std::string(to_string(op.kind)) +
                                       " (kforge lowers conv1d, conv2d and conv3d with groups 1 "
                                       "only; the problem imports and its reference runs)");
    }
    if (op.attrs.groups != 1) {
        return not_expressible(op, "not supported: grouped convolution (groups " +
                                       std::to_string(op.attrs.groups) + ")");
    }
    const size_t rank = one_d ? 3 : three_d ? 5 : 4;
    if (x.shape.size() != rank || w.shape.size() != rank || y.shape.size() != rank)
        return not_expressible(op, "a conv2d kernel of a " + std::string(to_string(op.kind)) +
                                       " takes x and w of rank " + std::to_string(rank));
    const DType dt = dtype_of(x.name);
    if (dt != dtype_of(w.name) || !is_float_storage(dt)) {
        return not_expressible(op, "conv2d input " + x.name + " and weight " + w.name +
                                       " must share one dtype of f32, f16 or bf16");
    }
    dsl::Kernel kn;
    kn.kind = dsl::KernelKind::kConv2d;
    kn.args = {ref(x.name), ref(w.name)};
    if (op.inputs.size() > 2) {
        ChainOp c = stmt(ChainOpKind::kAdd);
        c.tensor = ref(op.inputs[2]);
        kn.chain.push_back(c);
    }
    DType value = DType::kF32;
    if (auto st = absorb(kn, op.output, value, op); !st) return st;
    GemmShape s;
    s.dtype = dt;
    s.m = y.shape[0];
    s.n = y.shape[1];
    s.k = w.shape[1];
    for (size_t i = 2; i < rank; ++i) {
        s.m *= y.shape[i];
        s.k *= w.shape[i];
    }
    PlannedKernel pk{{}, op.json_path + " " + std::string(to_string(op.kind))};
    for (const auto& c : conv2d_candidates(s, p.policy, limits)) {
        kn.gemm = c;
        pk.candidates.push_back(kn);
    }
    kernels.push_back(std::move(pk));
    return Ok{};
}

}  // namespace kforge::planner::detail
