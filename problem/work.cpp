#include "problem/work.h"

#include "problem/conv_geometry.h"

#include "problem/pool.h"
#include "problem/rnn.h"
#include "problem/tri_mask.h"

#include <set>

namespace kforge {
namespace {

// The contracted extent K of a matmul's A operand [..., M, K] (or [..., K, M] transposed);
// a 1-D A is [K].
int64_t matmul_k(const Tensor& a, bool transpose_a) {
    const auto& s = a.shape;
    if (s.empty()) return 1;
    if (s.size() == 1) return s[0];
    return transpose_a ? s[s.size() - 2] : s[s.size() - 1];
}

// FLOPs per input element of the non-element-wise, non-matrix ops.
double rowwise_flops_per_element(OpKind kind) {
    switch (op_class(kind)) {
        case OpClass::kReduction:
            return 1.0;
        case OpClass::kRowwise:
            switch (kind) {
                case OpKind::kSoftmax:
                case OpKind::kLogSoftmax:
                case OpKind::kLogsumexp:
                case OpKind::kCrossEntropy:  // logsumexp of the row, minus the target's logit
                    return 5.0;
                case OpKind::kL1Normalize:
                case OpKind::kL2Normalize:
                    return 3.0;  // |x| or x*x, sum, scale
                case OpKind::kCumsum:
                case OpKind::kCumprod:
                    return 1.0;  // one add or multiply per element
                default:
                    return 8.0;  // layer_norm, rms_norm, group_norm
            }
        default:
            return 0.0;
    }
}

}  // namespace

double elementwise_flops_per_element(OpKind kind) {
    switch (kind) {
        case OpKind::kAdd:
        case OpKind::kSub:
        case OpKind::kMul:
        case OpKind::kDiv:
        case OpKind::kMaximum:
        case OpKind::kMinimum:
        case OpKind::kSign:
        case OpKind::kReciprocal:
        case OpKind::kScale:
        case OpKind::kAddScalar:
        case OpKind::kRelu:
        case OpKind::kLeakyRelu:
        case OpKind::kHardtanh:
        case OpKind::kClamp:
        case OpKind::kMinScalar:
        case OpKind::kMaxScalar:
        case OpKind::kNeg:
        case OpKind::kAbs:
        case OpKind::kSquare:
        case OpKind::kMaskedFill:  // a select per element
        case OpKind::kWhere:
        case OpKind::kTril:        // an index compare and a select per element
        case OpKind::kTriu:
            return 1.0;
        case OpKind::kDropout:
            return 0.0;
        case OpKind::kExp:
        case OpKind::kLog:
        case OpKind::kSqrt:
        case OpKind::kRsqrt:
        case OpKind::kTanh:
        case OpKind::kErf:
        case OpKind::kLog1p:
        case OpKind::kExpm1:
        case OpKind::kSin:
        case OpKind::kCos:
            return 4.0;
        case OpKind::kSigmoid:
            return 4.0;
        case OpKind::kSilu:
            return 5.0;
        case OpKind::kSoftplus:
            return 6.0;
        case OpKind::kGelu:
            return 8.0;
        case OpKind::kMish:
            return 10.0;
        default:
            return -1.0;
    }
}

Expected<WorkCount> count_work(const Problem& problem) {
    WorkCount w;
    for (size_t i = 0; i < problem.ops.size(); ++i) {
        const Op& op = problem.ops[i];
        const std::string where =
            op.json_path.empty() ? "graph[" + std::to_string(i) + "]" : op.json_path;
        const Tensor* out = problem.find_tensor(op.output);
        if (!out) return make_error(where, "unknown output tensor \"" + op.output + "\"");
        if (op.inputs.empty()) return make_error(where, "op has no inputs");
        std::vector<const Tensor*> ins;
        for (const auto& name : op.inputs) {
            const Tensor* t = problem.find_tensor(name);
            if (!t) return make_error(where, "unknown input tensor \"" + name + "\"");
            ins.push_back(t);
        }

        OpWork ow;
        ow.output = op.output;
        ow.kind = op.kind;
        for (const Tensor* t : ins) ow.bytes_read += static_cast<double>(t->bytes());
        ow.bytes_written = static_cast<double>(out->bytes());

        const double out_elems = static_cast<double>(out->numel());
        const double in_elems = static_cast<double>(ins[0]->numel());
        switch (op_class(op.kind)) {
            case OpClass::kShape:
                // no arithmetic; a view (reshape, expand) moves no bytes, a slice reads only
                // what it keeps, permute / cat / pad read their inputs and write the output
                if (op.kind == OpKind::kReshape || op.kind == OpKind::kExpand) {
                    ow.bytes_read = ow.bytes_written = 0.0;
                } else if (op.kind == OpKind::kSlice) {
                    ow.bytes_read = ow.bytes_written;
                }
                break;
            case OpClass::kMatrix: {
                const double k = static_cast<double>(matmul_k(*ins[0], op.attrs.transpose_a));
                ow.flops_matrix = 2.0 * k * out_elems;
                if (op.kind == OpKind::kLinear && ins.size() >= 3) ow.flops_other = out_elems;
                break;
            }
            case OpClass::kElementwise:
                ow.flops_other = elementwise_flops_per_element(op.kind) * out_elems;
                break;
            case OpClass::kReduction:
            case OpClass::kRowwise:
                ow.flops_other = rowwise_flops_per_element(op.kind) * in_elems;
                break;
            case OpClass::kConv: {
                // an implicit GEMM's multiply-adds (problem/conv_geometry.h: every tap of each
                // output over C/groups channels; transposed, the (input, tap) pairs inside y)
                const Tensor& w = *ins[1];
                if (w.shape.size() != ins[0]->shape.size() || w.shape.size() < 3)
                    return make_error(where, "convolution weight rank differs from the input's");
                ow.flops_matrix = 2.0 * conv_macs(conv_geometry(op, *ins[0], w, *out));
                if (ins.size() >= 3) ow.flops_other = out_elems;
                break;
            }
            case OpClass::kPool: {
                // one compare or add per window tap (the largest window), avg: one divide more
                const double taps = static_cast<double>(
                    pool_window_size(op.kind, pool_axes(op, ins[0]->shape, out->shape)));
                ow.flops_other = (taps + (is_max_pool(op.kind) ? 0.0 : 1.0)) * out_elems;
                break;
            }
            case OpClass::kRecurrent: {
                // per layer and direction, T*B rows of the gates: G*H outputs over I_l + H inputs
                // (matrix FLOPs), plus the bias adds and the cell's ~8 operations per unit
                const RnnGeometry g = rnn_geometry(op, ins[0]->shape, ins[1]->shape);
                const double rows = double(g.seq) * double(g.batch) * double(g.dirs);
                for (int64_t l = 0; l < g.layers; ++l)
                    ow.flops_matrix += 2.0 * rows * double(g.gates * g.hidden) *
                                       double(g.layer_input(l) + g.hidden);
                ow.flops_other = rows * double(g.layers) * double(g.hidden) *
                                 (8.0 + (g.bias ? 2.0 * double(g.gates) : 0.0));
                break;
            }
        }
        w.flops_matrix += ow.flops_matrix;
        w.flops_other += ow.flops_other;
        w.bytes_unfused += ow.bytes();
        w.per_op.push_back(std::move(ow));
    }

    discount_masked_attention(problem, w);  // tri_mask.h: masked scores need no products
    for (const Tensor& t : problem.tensors) {
        if (t.role == TensorRole::kInput || t.role == TensorRole::kParam) {
            w.bytes_fused += static_cast<double>(t.bytes());
        }
    }
    std::set<std::string> seen;
    for (const auto& name : problem.outputs) {
        if (!seen.insert(name).second) continue;
        const Tensor* t = problem.find_tensor(name);
        if (!t) return make_error("outputs", "unknown output tensor \"" + name + "\"");
        w.bytes_fused += static_cast<double>(t->bytes());
    }
    return w;
}

}  // namespace kforge
