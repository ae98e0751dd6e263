// Shape and dtype inference for every op (PyTorch rules), with the checks that make an op
// well-formed: operand ranks and sizes, broadcasting, axes and normalized shapes, dtypes.
#include <algorithm>
#include <array>
#include <limits>

#include "problem/spec.h"

#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

bool is_float(DType d) { return d != DType::kI32 && d != DType::kI64; }

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

// One spatial axis of a conv2d: the output size floor((in + 2*pad - dil*(k-1) - 1) / stride) + 1,
// or an error when the dilated kernel does not fit the padded input.
Expected<int64_t> conv_out_size(const Op& op, int axis, int64_t in, int64_t k,
                                const std::string& in_text, const std::string& k_text) {
    const OpAttrs& a = op.attrs;
    __int128 span = static_cast<__int128>(a.dilation[axis]) * (k - 1) + 1;
    __int128 padded = static_cast<__int128>(in) + 2 * static_cast<__int128>(a.padding[axis]);
    if (span > padded) {
        const char* names = axis == 0 ? "H + 2*padding[0] = " : "W + 2*padding[1] = ";
        return mismatch(op, 1, "conv2d output size would be < 1: the dilated kernel (" + k_text +
                                   ", dilation " + std::to_string(a.dilation[axis]) + ") spans " +
                                   std::to_string(static_cast<int64_t>(std::min<__int128>(
                                       span, std::numeric_limits<int64_t>::max()))) +
                                   " but " + names + std::to_string(static_cast<int64_t>(padded)) +
                                   " (" + in_text + ")");
    }
    return static_cast<int64_t>((padded - span) / a.stride[axis] + 1);
}

// Names y's spatial dims (the spec's out_dims or the defaults of docs/problem-spec.md) and enters
// the new ones into `dims` and `derived`; op.attrs.out_dims gets the two names ("" where y's dim
// is an anonymous literal, as x's is).
Status name_conv_dims(Op& op, const Tensor& x, const Tensor& w, const std::array<int64_t, 2>& size,
                      std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const OpAttrs& a = op.attrs;
    const bool explicit_names = a.out_dims.size() == 2;
    std::array<std::string, 2> names;
    auto same_size = [&](int i) {  // y's dim equals x's at every binding of x's dim
        return a.stride[i] == 1 && 2 * a.padding[i] == a.dilation[i] * (w.shape[2 + i] - 1) &&
               w.dim_names[2 + i].empty();
    };
    const bool axes_alike = !x.dim_names[2].empty() && x.dim_names[2] == x.dim_names[3] &&
                            w.dim_names[2] == w.dim_names[3] && w.shape[2] == w.shape[3] &&
                            a.stride[0] == a.stride[1] && a.padding[0] == a.padding[1] &&
                            a.dilation[0] == a.dilation[1];
    for (int i = 0; i < 2; ++i) {
        const std::string& xname = x.dim_names[2 + i];
        std::string& name = names[i];
        if (explicit_names) {
            name = a.out_dims[i];
        } else if (same_size(i)) {
            name = xname;
        } else if (i == 1 && axes_alike) {
            name = names[0];
        } else {
            std::string base = xname.empty() ? (i == 0 ? "P" : "Q") : xname + "o";
            name = base;
            for (int n = 2; dims.count(name) != 0 || (i == 1 && name == names[0]); ++n) {
                name = base + std::to_string(n);
            }
        }
        if (name.empty()) continue;
        const std::string where = op.json_path + ".out_dims[" + std::to_string(i) + "]";
        const std::string what = std::string(i == 0 ? "P" : "Q") + " = " + std::to_string(size[i]);
        auto it = dims.find(name);
        if (it == dims.end()) {
            dims[name] = size[i];
            derived.insert(name);
            continue;
        }
        const bool own = name == xname || (i == 1 && name == names[0]);
        if (it->second != size[i]) {
            return make_error(where, "shape mismatch: out_dims names y's " + what + " " +
                                         quote(name) + ", but dim " + quote(name) + " = " +
                                         std::to_string(it->second));
        }
        if (!own) {
            return make_error(where, "out_dims " + quote(name) + " is already a dim; name y's " +
                                         "spatial dims with new names (or x's own dim name " +
                                         "where the output keeps x's size)");
        }
    }
    op.attrs.out_dims = {names[0], names[1]};
    return Ok{};
}

Expected<Tensor> infer_conv(Op& op, const std::vector<const Tensor*>& in,
                            std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const Tensor &x = *in[0], &w = *in[1];
    const int64_t groups = op.attrs.groups;
    if (x.shape.size() != 4) return mismatch(op, 0, shape_text(x) + " must be [N, C, H, W]");
    if (w.shape.size() != 4) {
        return mismatch(op, 1, shape_text(w) + " must be [K, C/groups, R, S]");
    }
    const int64_t c = x.shape[1], k = w.shape[0];
    if (c % groups != 0) {
        return make_error(op.json_path + ".groups",
                          "shape mismatch: groups = " + std::to_string(groups) +
                              " does not divide the channels C = " + std::to_string(c) + " of " +
                              shape_text(x));
    }
    if (k % groups != 0) {
        return make_error(op.json_path + ".groups",
                          "shape mismatch: groups = " + std::to_string(groups) +
                              " does not divide the output channels K = " + std::to_string(k) +
                              " of " + shape_text(w));
    }
    if (w.shape[1] != c / groups) {
        return mismatch(op, 1, shape_text(w) + " must be [K, C/groups, R, S] with C/groups = " +
                                   std::to_string(c / groups) + " (C of " + shape_text(x) +
                                   ", groups " + std::to_string(groups) + ")");
    }
    if (in.size() == 3 && (in[2]->shape.size() != 1 || in[2]->shape[0] != k)) {
        return mismatch(op, 2, shape_text(*in[2]) + " must be [" + std::to_string(k) +
                                   "] (K of the weight)");
    }
    std::array<int64_t, 2> size{};
    for (int i = 0; i < 2; ++i) {
        auto s = conv_out_size(op, i, x.shape[2 + i], w.shape[2 + i], shape_text(x),
                               (i == 0 ? "R = " : "S = ") + std::to_string(w.shape[2 + i]));
        if (!s) return s.error();
        size[i] = *s;
    }
    if (auto s = name_conv_dims(op, x, w, size, dims, derived); !s) return s.error();
    Tensor out;
    out.shape = {x.shape[0], k, size[0], size[1]};
    out.dim_names = {x.dim_names[0], w.dim_names[0], op.attrs.out_dims[0], op.attrs.out_dims[1]};
    return out;
}

}  // namespace

Expected<Tensor> infer_op(Op& op, const std::vector<const Tensor*>& in,
                          std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    DType dtype = in[0]->dtype;
    for (size_t i = 0; i < in.size(); ++i) {
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
    }
    if (!out) return out;
    out->name = op.output;
    out->dtype = dtype;
    out->role = TensorRole::kIntermediate;
    return out;
}

}  // namespace kforge::spec
