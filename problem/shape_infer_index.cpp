// Shape and dtype inference for the index and mask ops (argmax / argmin, masked_fill, where,
// tril / triu, cross_entropy) and for arithmetic that mixes a bool mask into a float tensor
// (`x * mask`, as PyTorch promotes bool to the float's dtype). infer_op() hands these here.
#include <algorithm>

#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

bool is_integer(DType d) { return d == DType::kI32 || d == DType::kI64; }
bool is_floating(DType d) { return !is_integer(d) && d != DType::kBool; }

std::string shape_of(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

std::string at(const Op& op, size_t i) {
    return op.json_path + ".inputs[" + std::to_string(i) + "]";
}

Error bad_dtype(const Op& op, size_t i, const Tensor& t, const std::string& want) {
    return make_error(at(op, i), "bad dtype: op " + quote(to_string(op.kind)) + " needs " + want +
                                     "; " + quote(t.name) + " is " +
                                     std::string(to_string(t.dtype)));
}

// Broadcasts every operand (right-aligned, NumPy rules); names come from an operand whose size
// equals the result's on that axis.
Expected<Tensor> broadcast_all(const Op& op, const std::vector<const Tensor*>& in) {
    size_t rank = 0;
    for (const Tensor* t : in) rank = std::max(rank, t->shape.size());
    Tensor out;
    out.shape.assign(rank, 1);
    out.dim_names.assign(rank, "");
    for (size_t k = 0; k < in.size(); ++k) {
        const Tensor& t = *in[k];
        const size_t off = rank - t.shape.size();
        for (size_t i = 0; i < t.shape.size(); ++i) {
            int64_t& o = out.shape[off + i];
            if (t.shape[i] == o || t.shape[i] == 1) {
                if (t.shape[i] == o && out.dim_names[off + i].empty())
                    out.dim_names[off + i] = t.dim_names[i];
                continue;
            }
            if (o != 1) {
                return make_error(at(op, k), "shape mismatch: " + shape_of(t) +
                                                 " does not broadcast with the other operands " +
                                                 "(size " + std::to_string(t.shape[i]) +
                                                 " against " + std::to_string(o) + ")");
            }
            o = t.shape[i];
            out.dim_names[off + i] = t.dim_names[i];
        }
    }
    return out;
}

Expected<Tensor> infer_arg_reduction(Op& op, const Tensor& x) {
    if (x.dtype == DType::kBool) return bad_dtype(op, 0, x, "float or integer operands");
    const int64_t rank = static_cast<int64_t>(x.shape.size());
    const int64_t axis = op.attrs.axis < 0 ? op.attrs.axis + rank : op.attrs.axis;
    if (axis < 0 || axis >= rank) {
        return make_error(op.json_path + ".axis", "shape mismatch: axis " +
                                                      std::to_string(op.attrs.axis) +
                                                      " is out of range for " + shape_of(x) +
                                                      " of rank " + std::to_string(rank));
    }
    op.attrs.axis = axis;
    Tensor out = x;
    if (op.attrs.keepdim) {
        out.shape[static_cast<size_t>(axis)] = 1;
        out.dim_names[static_cast<size_t>(axis)] = "";
    } else {
        out.shape.erase(out.shape.begin() + axis);
        out.dim_names.erase(out.dim_names.begin() + axis);
    }
    out.dtype = DType::kI64;
    return out;
}

Expected<Tensor> infer_cross_entropy(const Op& op, const Tensor& x, const Tensor& t) {
    if (!is_floating(x.dtype)) return bad_dtype(op, 0, x, "floating-point logits");
    if (!is_integer(t.dtype)) {
        return bad_dtype(op, 1, t, "integer (i32 or i64) class indices as targets");
    }
    if (x.shape.size() != 2 && x.shape.size() != 1) {
        return make_error(at(op, 0), "shape mismatch: " + shape_of(x) +
                                         " must be [N, C] (or [C]) logits");
    }
    const bool batched = x.shape.size() == 2;
    if (batched ? (t.shape.size() != 1 || t.shape[0] != x.shape[0]) : !t.shape.empty()) {
        return make_error(at(op, 1), "shape mismatch: " + shape_of(t) + " must be " +
                                         (batched ? "[" + std::to_string(x.shape[0]) + "]"
                                                  : std::string("[]")) +
                                         " (one class index per row of " + shape_of(x) + ")");
    }
    Tensor out;
    out.dtype = x.dtype;
    return out;
}

}  // namespace

bool infers_index_op(const Op& op, const std::vector<const Tensor*>& in) {
    switch (op.kind) {
        case OpKind::kArgmax: case OpKind::kArgmin: case OpKind::kMaskedFill: case OpKind::kWhere:
        case OpKind::kTril: case OpKind::kTriu: case OpKind::kCrossEntropy:
            return true;
        case OpKind::kMul: case OpKind::kAdd: case OpKind::kSub:
            return in.size() == 2 && (in[0]->dtype == DType::kBool) != (in[1]->dtype == DType::kBool);
        default:
            return false;
    }
}

Expected<Tensor> infer_index_op(Op& op, const std::vector<const Tensor*>& in) {
    Expected<Tensor> out = Error{};
    switch (op.kind) {
        case OpKind::kArgmax: case OpKind::kArgmin:
            out = infer_arg_reduction(op, *in[0]);
            break;
        case OpKind::kMaskedFill:
            if (in[0]->dtype == DType::kBool) return bad_dtype(op, 0, *in[0], "a float or integer X");
            if (in.size() == 1) {  // a structured mask over the last two dims
                if (in[0]->shape.size() < 2)
                    return make_error(at(op, 0), "shape mismatch: " + shape_of(*in[0]) +
                                                     " must have rank >= 2 (a \"tril\" / \"triu\" "
                                                     "mask covers the last two dims)");
                out = *in[0];
                break;
            }
            if (in[1]->dtype != DType::kBool) return bad_dtype(op, 1, *in[1], "a bool mask");
            out = broadcast_all(op, in);
            if (out) out->dtype = in[0]->dtype;
            break;
        case OpKind::kWhere: {
            if (in[0]->dtype != DType::kBool) return bad_dtype(op, 0, *in[0], "a bool condition");
            const DType a = in[1]->dtype, b = in[2]->dtype;
            if (a == DType::kBool || b == DType::kBool || is_integer(a) != is_integer(b)) {
                return make_error(at(op, b == DType::kBool || a != DType::kBool ? 2 : 1),
                                  "bad dtype: op \"where\" needs A and B both float or both "
                                  "integer; " + quote(in[1]->name) + " is " +
                                      std::string(to_string(a)) + ", " + quote(in[2]->name) +
                                      " is " + std::string(to_string(b)));
            }
            if (a != b && !is_integer(a) && dtype_bytes(a) == 2 && dtype_bytes(b) == 2) {
                out = broadcast_all(op, in);
                if (out) out->dtype = DType::kF32;  // f16 with bf16, as in PyTorch
                break;
            }
            out = broadcast_all(op, in);
            if (out) out->dtype = dtype_bytes(a) >= dtype_bytes(b) ? a : b;
            break;
        }
        case OpKind::kTril: case OpKind::kTriu:
            if (in[0]->shape.size() < 2) {
                return make_error(at(op, 0), "shape mismatch: " + shape_of(*in[0]) +
                                                 " must have rank >= 2 (" +
                                                 std::string(to_string(op.kind)) +
                                                 " masks the last two dims)");
            }
            out = *in[0];
            break;
        case OpKind::kCrossEntropy:
            out = infer_cross_entropy(op, *in[0], *in[1]);
            break;
        default: {  // add / sub / mul of a float and a bool mask
            const size_t f = in[0]->dtype == DType::kBool ? 1 : 0;
            if (!is_floating(in[f]->dtype)) {
                return bad_dtype(op, f, *in[f], "a floating-point operand beside a bool mask");
            }
            out = broadcast_all(op, in);
            if (out) out->dtype = in[f]->dtype;
            break;
        }
    }
    if (!out) return out;
    out->name = op.output;
    out->role = TensorRole::kIntermediate;
    return out;
}

}  // namespace kforge::spec
