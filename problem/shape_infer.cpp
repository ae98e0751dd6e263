// Shape and dtype inference for every op (PyTorch rules), with the checks that make an op
// well-formed: operand ranks and sizes, broadcasting, axes and normalized shapes, dtypes.
#include <algorithm>
#include <array>
#include <limits>

#include "problem/spec.h"

#include "problem/spec_internal.h"
#include "problem/shape_ops.h"

namespace kforge::spec {
namespace {

bool is_float(DType d) { return d != DType::kI32 && d != DType::kI64 && d != DType::kBool; }

int float_rank(DType d) {
    switch (d) {
        case DType::kF64: return 3;
        case DType::kF32: return 2;
        default: return 1;
    }
}

// f16 with bf16 (neither holds the other) promotes to f32, as in PyTorch.
DType wider(DType a, DType b) {
    if (a == b) return a;
    if (!is_float(a)) return (a == DType::kI64 || b == DType::kI64) ? DType::kI64 : DType::kI32;
    if (float_rank(a) == 1 && float_rank(b) == 1) return DType::kF32;
    return float_rank(a) >= float_rank(b) ? a : b;
}

bool int_allowed(OpKind k) {
    switch (k) {
        case OpKind::kAdd: case OpKind::kSub: case OpKind::kMul: case OpKind::kNeg:
        case OpKind::kAbs: case OpKind::kRelu: case OpKind::kSquare: case OpKind::kSum:
        case OpKind::kMax: case OpKind::kMin: case OpKind::kDropout:
            return true;
        default:
            return false;
    }
}

std::string shape_text(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

std::string operand_path(const Op& op, size_t i) {
    return op.json_path + ".inputs[" + std::to_string(i) + "]";
}

Error mismatch(const Op& op, size_t i, const std::string& what) {
    return make_error(operand_path(op, i), "shape mismatch: " + what);
}

// Broadcasts `a` and `b` (right-aligned); dims of size 1 stretch. Names come from a side
// whose size equals the result's.
Expected<Tensor> broadcast(const Op& op, const Tensor& a, const Tensor& b,
                           std::vector<int64_t> sa, std::vector<std::string> na,
                           std::vector<int64_t> sb, std::vector<std::string> nb) {
    size_t rank = std::max(sa.size(), sb.size());
    sa.insert(sa.begin(), rank - sa.size(), 1);
    na.insert(na.begin(), rank - na.size(), "");
    sb.insert(sb.begin(), rank - sb.size(), 1);
    nb.insert(nb.begin(), rank - nb.size(), "");
    Tensor out;
    for (size_t i = 0; i < rank; ++i) {
        if (sa[i] != sb[i] && sa[i] != 1 && sb[i] != 1) {
            return mismatch(op, 1, shape_text(b) + " does not broadcast with " + shape_text(a) +
                                       " (NumPy rules: equal sizes or 1, aligned from the right)");
        }
        int64_t size = std::max(sa[i], sb[i]);
        out.shape.push_back(size);
        out.dim_names.push_back(!na[i].empty() && sa[i] == size ? na[i]
                                : sb[i] == size                 ? nb[i]
                                                                : "");
    }
    return out;
}

Expected<Tensor> infer_matmul(const Op& op, const Tensor& a, const Tensor& b) {
    if (a.shape.size() < 2) return mismatch(op, 0, shape_text(a) + " must have rank >= 2");
    if (b.shape.size() < 2) return mismatch(op, 1, shape_text(b) + " must have rank >= 2");
    size_t ra = a.shape.size(), rb = b.shape.size();
    size_t am = op.attrs.transpose_a ? ra - 1 : ra - 2, ak = op.attrs.transpose_a ? ra - 2 : ra - 1;
    size_t bk = op.attrs.transpose_b ? rb - 1 : rb - 2, bn = op.attrs.transpose_b ? rb - 2 : rb - 1;
    if (a.shape[ak] != b.shape[bk]) {
        return mismatch(op, 1, "inner dims differ: " + shape_text(a) + " has K = " +
                                   std::to_string(a.shape[ak]) + ", " + shape_text(b) +
                                   " has K = " + std::to_string(b.shape[bk]) +
                                   " (transpose_a " + (op.attrs.transpose_a ? "true" : "false") +
                                   ", transpose_b " + (op.attrs.transpose_b ? "true" : "false") +
                                   ")");
    }
    auto batch = broadcast(op, a, b, {a.shape.begin(), a.shape.end() - 2},
                           {a.dim_names.begin(), a.dim_names.end() - 2},
                           {b.shape.begin(), b.shape.end() - 2},
                           {b.dim_names.begin(), b.dim_names.end() - 2});
    if (!batch) return batch.error();
    Tensor out = std::move(*batch);
    out.shape.push_back(a.shape[am]);
    out.dim_names.push_back(a.dim_names[am]);
    out.shape.push_back(b.shape[bn]);
    out.dim_names.push_back(b.dim_names[bn]);
    return out;
}

Expected<Tensor> infer_linear(const Op& op, const std::vector<const Tensor*>& in) {
    const Tensor &x = *in[0], &w = *in[1];
    if (x.shape.empty()) return mismatch(op, 0, shape_text(x) + " must have rank >= 1");
    if (w.shape.size() != 2) return mismatch(op, 1, shape_text(w) + " must be [N, K]");
    if (w.shape[1] != x.shape.back()) {
        return mismatch(op, 1, shape_text(w) + " must be [N, K] with K = " +
                                   std::to_string(x.shape.back()) + " (last dim of " +
                                   shape_text(x) + ")");
    }
    if (in.size() == 3 && (in[2]->shape.size() != 1 || in[2]->shape[0] != w.shape[0])) {
        return mismatch(op, 2, shape_text(*in[2]) + " must be [" + std::to_string(w.shape[0]) +
                                   "] (N of the weight)");
    }
    Tensor out;
    out.shape.assign(x.shape.begin(), x.shape.end() - 1);
    out.dim_names.assign(x.dim_names.begin(), x.dim_names.end() - 1);
    out.shape.push_back(w.shape[0]);
    out.dim_names.push_back(w.dim_names[0]);
    return out;
}

Status normalize_axis(Op& op, const Tensor& x) {
    int64_t rank = static_cast<int64_t>(x.shape.size());
    int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
    if (axis < 0 || axis >= rank) {
        return make_error(op.json_path + ".axis", "shape mismatch: axis " +
                                                      std::to_string(op.attrs.axis) +
                                                      " is out of range for " + shape_text(x) +
                                                      " of rank " + std::to_string(rank));
    }
    op.attrs.axis = axis;
    return Ok{};
}

Status check_affine(const Op& op, const std::vector<const Tensor*>& in,
                    const std::vector<int64_t>& expected, const std::string& what) {
    for (size_t i = 1; i < in.size(); ++i) {
        if (in[i]->shape != expected) {
            std::string dims;
            for (int64_t d : expected) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
            return mismatch(op, i, shape_text(*in[i]) + " must be [" + dims + "] (" + what + ")");
        }
    }
    return Ok{};
}

Expected<Tensor> infer_norm(Op& op, const std::vector<const Tensor*>& in,
                            const std::map<std::string, int64_t>& dim_values) {
    const Tensor& x = *in[0];
    for (size_t i = 0; i < op.attrs.normalized_dims.size(); ++i) {
        const std::string& name = op.attrs.normalized_dims[i];
        if (name.empty()) continue;
        auto d = read_dim_entry(Json(name), op.json_path + ".normalized_shape[" +
                                                std::to_string(i) + "]", dim_values);
        if (!d) return d.error();
        op.attrs.normalized_shape[i] = d->value;
    }
    size_t rank = x.shape.size();
    if (op.kind == OpKind::kGroupNorm) {
        if (rank < 2) return mismatch(op, 0, shape_text(x) + " must be [N, C, *]");
        if (x.shape[1] % op.attrs.num_groups != 0) {
            return mismatch(op, 0, "channels C = " + std::to_string(x.shape[1]) + " of " +
                                       shape_text(x) + " are not divisible by num_groups = " +
                                       std::to_string(op.attrs.num_groups));
        }
        op.attrs.axis = 1;
        if (auto s = check_affine(op, in, {x.shape[1]}, "the channels C"); !s) return s.error();
        return x;
    }
    auto& ns = op.attrs.normalized_shape;
    if (rank == 0) return mismatch(op, 0, shape_text(x) + " must have rank >= 1");
    if (ns.empty()) ns.push_back(x.shape.back());
    if (ns.size() > rank || !std::equal(ns.begin(), ns.end(), x.shape.end() - ns.size())) {
        std::string dims;
        for (int64_t d : ns) dims += (dims.empty() ? "" : ", ") + std::to_string(d);
        return mismatch(op, 0, "normalized_shape [" + dims + "] is not the trailing dims of " +
                                   shape_text(x));
    }
    op.attrs.axis = static_cast<int64_t>(rank - ns.size());
    if (auto s = check_affine(op, in, ns, "normalized_shape"); !s) return s.error();
    return x;
}

}  // namespace

Expected<Tensor> infer_op(Op& op, const std::vector<const Tensor*>& in,
                          std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    if (infers_index_op(op, in)) return infer_index_op(op, in);  // shape_infer_index.cpp
    if (op_class(op.kind) == OpClass::kShape) return infer_shape_op(op, in, dims, derived);
    DType dtype = in[0]->dtype;
    for (size_t i = 0; i < in.size(); ++i) {
        if (in[i]->dtype == DType::kBool) {
            return make_error(operand_path(op, i), "bad dtype: op " + quote(to_string(op.kind)) +
                                                       " does not take bool operands; " +
                                                       quote(in[i]->name) + " is bool (bool " +
                                                       "masks go to masked_fill, where, or " +
                                                       "mul / add / sub with a float tensor)");
        }
        if (!is_float(in[i]->dtype) && !int_allowed(op.kind)) {
            return make_error(operand_path(op, i), "bad dtype: op " + quote(to_string(op.kind)) +
                                                       " needs floating-point operands; " +
                                                       quote(in[i]->name) + " is " +
                                                       std::string(to_string(in[i]->dtype)));
        }
        if (is_float(in[i]->dtype) != is_float(dtype)) {
            return make_error(operand_path(op, i), "bad dtype: " + quote(in[i]->name) + " is " +
                                                       std::string(to_string(in[i]->dtype)) +
                                                       " but " + quote(in[0]->name) + " is " +
                                                       std::string(to_string(dtype)) +
                                                       " (no mixing of integer and float)");
        }
    }
    Expected<Tensor> out = Error{};
    switch (op_class(op.kind)) {
        case OpClass::kMatrix:
            out = op.kind == OpKind::kMatmul ? infer_matmul(op, *in[0], *in[1])
                                             : infer_linear(op, in);
            break;
        case OpClass::kElementwise:
            if (in.size() == 2) {
                dtype = wider(in[0]->dtype, in[1]->dtype);
                out = broadcast(op, *in[0], *in[1], in[0]->shape, in[0]->dim_names,
                                in[1]->shape, in[1]->dim_names);
            } else {
                out = *in[0];
            }
            break;
        case OpClass::kReduction:
        case OpClass::kRowwise:
            if (op.kind == OpKind::kLayerNorm || op.kind == OpKind::kRmsNorm ||
                op.kind == OpKind::kGroupNorm) {
                out = infer_norm(op, in, dims);
                break;
            }
            if (auto s = normalize_axis(op, *in[0]); !s) return s.error();
            out = *in[0];
            if (op.kind == OpKind::kSoftmax || op.kind == OpKind::kLogSoftmax ||
                op.kind == OpKind::kL1Normalize || op.kind == OpKind::kL2Normalize ||
                op.kind == OpKind::kCumsum || op.kind == OpKind::kCumprod) {
                break;
            }
            if (op.attrs.keepdim) {
                out->shape[op.attrs.axis] = 1;
                out->dim_names[op.attrs.axis] = "";
            } else {
                out->shape.erase(out->shape.begin() + op.attrs.axis);
                out->dim_names.erase(out->dim_names.begin() + op.attrs.axis);
            }
            break;
        case OpClass::kConv:
            out = infer_conv(op, in, dims, derived);
            break;
        case OpClass::kShape:  // shape_ops.cpp, above
            break;
        case OpClass::kPool:
            out = infer_pool(op, in, dims, derived);
            break;
        case OpClass::kRecurrent:  // spec_rnn.cpp
            out = infer_rnn(op, in, dims, derived);
            break;
    }
    if (!out) return out;
    out->name = op.output;
    out->dtype = dtype;
    out->role = TensorRole::kIntermediate;
    return out;
}

}  // namespace kforge::spec
