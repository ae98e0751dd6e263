// Shape inference for the convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d): operand ranks,
// groups, the output's spatial sizes and the names of the dims they derive
// (docs/problem-spec.md, "Convolutions and their derived dims").
#include <algorithm>
#include <limits>
#include <string>
#include <vector>

#include "problem/spec.h"
#include "problem/spec_internal.h"

namespace kforge::spec {
namespace {

std::string shape_text(const Tensor& t) {
    std::string s = quote(t.name) + " [";
    for (size_t i = 0; i < t.shape.size(); ++i) {
        s += (i ? ", " : "") + (t.dim_names[i].empty() ? "" : t.dim_names[i] + "=") +
             std::to_string(t.shape[i]);
    }
    return s + "]";
}

Error mismatch(const Op& op, size_t i, const std::string& what) {
    return make_error(op.json_path + ".inputs[" + std::to_string(i) + "]",
                      "shape mismatch: " + what);
}

// Letters of the trailing `rank` of three spatial axes: y's default names (Z, P, Q, as CUTLASS
// names a 3-D convolution's output), W's kernel axes (T, R, S) and X's axes (D, H, W).
std::string letter(const char* three, int rank, int i) {
    return std::string(1, three[3 - rank + i]);
}

std::string axes_text(int rank, const char* three) {
    std::string s;
    for (int i = 0; i < rank; ++i) s += ", " + letter(three, rank, i);
    return s;
}

// y's size on spatial axis i (docs/problem-spec.md), or an error when it would be < 1.
Expected<int64_t> conv_out_size(const Op& op, int rank, int i, const Tensor& x, const Tensor& w) {
    const OpAttrs& a = op.attrs;
    const int64_t in = x.shape[2 + i], k = w.shape[2 + i];
    const std::string ax = "[" + std::to_string(i) + "]";
    const std::string k_text = letter("TRS", rank, i) + " = " + std::to_string(k);
    const __int128 span = static_cast<__int128>(a.dilation[i]) * (k - 1) + 1;
    if (!is_conv_transpose(op.kind)) {
        const __int128 padded = static_cast<__int128>(in) + 2 * static_cast<__int128>(a.padding[i]);
        if (span > padded) {
            return mismatch(op, 1, std::string(to_string(op.kind)) +
                                       " output size would be < 1: the dilated kernel (" + k_text +
                                       ", dilation " + std::to_string(a.dilation[i]) + ") spans " +
                                       std::to_string(static_cast<int64_t>(std::min<__int128>(
                                           span, std::numeric_limits<int64_t>::max()))) +
                                       " but " + letter("DHW", rank, i) + " + 2*padding" + ax +
                                       " = " + std::to_string(static_cast<int64_t>(padded)) +
                                       " (" + shape_text(x) + ")");
        }
        return static_cast<int64_t>((padded - span) / a.stride[i] + 1);
    }
    if (a.output_padding[i] >= std::max(a.stride[i], a.dilation[i])) {
        return make_error(op.json_path + ".output_padding",
                          "output_padding" + ax + " = " + std::to_string(a.output_padding[i]) +
                              " must be smaller than stride" + ax + " or dilation" + ax + " (" +
                              std::to_string(a.stride[i]) + ", " + std::to_string(a.dilation[i]) +
                              "), as in PyTorch");
    }
    const __int128 out = (static_cast<__int128>(in) - 1) * a.stride[i] - 2 * a.padding[i] +
                         span + a.output_padding[i];
    if (out < 1) {
        return mismatch(op, 0, std::string(to_string(op.kind)) + " output size would be " +
                                   std::to_string(static_cast<int64_t>(out)) + " < 1 on axis " +
                                   letter("DHW", rank, i) + ": (" + std::to_string(in) +
                                   " - 1) * stride - 2*padding + dilation*(" + k_text +
                                   " - 1) + output_padding + 1 (" + shape_text(x) + ")");
    }
    if (out > kMaxDimValue) {
        return mismatch(op, 0, std::string(to_string(op.kind)) + " output size exceeds 2^40");
    }
    return static_cast<int64_t>(out);
}

// y's dim on axis i equals x's at every binding of x's dim.
bool keeps_size(const Op& op, int i, const Tensor& w) {
    const OpAttrs& a = op.attrs;
    if (a.stride[i] != 1 || !w.dim_names[2 + i].empty()) return false;
    const int64_t grow = a.dilation[i] * (w.shape[2 + i] - 1);
    return is_conv_transpose(op.kind) ? grow + a.output_padding[i] == 2 * a.padding[i]
                                      : grow == 2 * a.padding[i];
}

// Axes i and j of a named x dim with the same kernel and attributes: y's dims are alike too.
bool axes_alike(const Op& op, const Tensor& x, const Tensor& w, int i, int j) {
    const OpAttrs& a = op.attrs;
    auto same = [&](const std::vector<int64_t>& v) { return v[i] == v[j]; };
    return !x.dim_names[2 + i].empty() && x.dim_names[2 + i] == x.dim_names[2 + j] &&
           w.dim_names[2 + i] == w.dim_names[2 + j] && w.shape[2 + i] == w.shape[2 + j] &&
           same(a.stride) && same(a.padding) && same(a.dilation) && same(a.output_padding);
}

// Names y's spatial dims (the spec's out_dims or the defaults of docs/problem-spec.md) and enters
// the new ones into `dims` and `derived`; op.attrs.out_dims gets one name per spatial axis (""
// where y's dim is an anonymous literal, as x's is).
Status name_conv_dims(Op& op, int rank, const Tensor& x, const Tensor& w,
                      const std::vector<int64_t>& size, std::map<std::string, int64_t>& dims,
                      std::set<std::string>& derived) {
    const bool explicit_names = op.attrs.out_dims.size() == static_cast<size_t>(rank);
    std::vector<std::string> names(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) {
        const std::string& xname = x.dim_names[2 + i];
        std::string& name = names[i];
        int alike = -1;
        for (int j = 0; j < i && alike < 0; ++j)
            if (axes_alike(op, x, w, i, j)) alike = j;
        if (explicit_names) {
            name = op.attrs.out_dims[i];
        } else if (keeps_size(op, i, w)) {
            name = xname;
        } else if (alike >= 0) {
            name = names[alike];
        } else {
            std::string base = xname.empty() ? letter("ZPQ", rank, i) : xname + "o";
            name = base;
            auto taken = [&](const std::string& n) {
                return dims.count(n) != 0 ||
                       std::find(names.begin(), names.begin() + i, n) != names.begin() + i;
            };
            for (int n = 2; taken(name); ++n) name = base + std::to_string(n);
        }
        if (name.empty()) continue;
        const std::string where = op.json_path + ".out_dims[" + std::to_string(i) + "]";
        const std::string what = letter("ZPQ", rank, i) + " = " + std::to_string(size[i]);
        auto it = dims.find(name);
        if (it == dims.end()) {
            dims[name] = size[i];
            derived.insert(name);
            continue;
        }
        // a dim another op derives, or a declared dim, with this value is that axis named twice
        // (a strided conv and its strided 1x1 shortcut, added; a UNet's upsampling transposed
        // conv back to the input's height, joined by a cat): a binding where they differ fails
        if (it->second != size[i]) {
            return make_error(where, "shape mismatch: out_dims names y's " + what + " " +
                                         quote(name) + ", but dim " + quote(name) + " = " +
                                         std::to_string(it->second));
        }
    }
    op.attrs.out_dims = names;
    return Ok{};
}

Error groups_error(const Op& op, const std::string& what, int64_t n, const Tensor& t) {
    return make_error(op.json_path + ".groups",
                      "shape mismatch: groups = " + std::to_string(op.attrs.groups) +
                          " does not divide the " + what + " = " + std::to_string(n) + " of " +
                          shape_text(t));
}

}  // namespace

Expected<Tensor> infer_conv(Op& op, const std::vector<const Tensor*>& in,
                            std::map<std::string, int64_t>& dims, std::set<std::string>& derived) {
    const Tensor &x = *in[0], &w = *in[1];
    const int rank = spatial_rank(op.kind);
    const size_t full = static_cast<size_t>(rank) + 2;
    const bool transpose = is_conv_transpose(op.kind);
    if (!op.attrs.groups_expr.empty()) {  // groups as a dim expression, at this binding
        auto v = eval_dim_expr(op.attrs.groups_expr, op.json_path + ".groups", dims);
        if (!v) return v.error();
        op.attrs.groups = *v;
    }
    const int64_t groups = op.attrs.groups;
    if (x.shape.size() != full) {
        return mismatch(op, 0, shape_text(x) + " must be [N, C" + axes_text(rank, "DHW") + "] (" +
                                   std::string(to_string(op.kind)) + ")");
    }
    const std::string w_form = transpose ? "[C, K/groups" + axes_text(rank, "TRS") + "]"
                                         : "[K, C/groups" + axes_text(rank, "TRS") + "]";
    if (w.shape.size() != full) return mismatch(op, 1, shape_text(w) + " must be " + w_form);
    const int64_t c = x.shape[1];
    if (c % groups != 0) return groups_error(op, "channels C", c, x);
    int64_t k = 0;
    if (transpose) {
        if (w.shape[0] != c) {
            return mismatch(op, 1, shape_text(w) + " must be " + w_form + " with C = " +
                                       std::to_string(c) + " (C of " + shape_text(x) + ")");
        }
        k = w.shape[1] * groups;
    } else {
        k = w.shape[0];
        if (k % groups != 0) return groups_error(op, "output channels K", k, w);
        if (w.shape[1] != c / groups) {
            return mismatch(op, 1, shape_text(w) + " must be " + w_form + " with C/groups = " +
                                       std::to_string(c / groups) + " (C of " + shape_text(x) +
                                       ", groups " + std::to_string(groups) + ")");
        }
    }
    if (in.size() == 3 && (in[2]->shape.size() != 1 || in[2]->shape[0] != k)) {
        return mismatch(op, 2, shape_text(*in[2]) + " must be [" + std::to_string(k) +
                                   "] (K of the weight" +
                                   (transpose ? ": its dim 1 times groups)" : ")"));
    }
    std::vector<int64_t> size(static_cast<size_t>(rank));
    for (int i = 0; i < rank; ++i) {
        auto s = conv_out_size(op, rank, i, x, w);
        if (!s) return s.error();
        size[i] = *s;
    }
    if (auto s = name_conv_dims(op, rank, x, w, size, dims, derived); !s) return s.error();
    Tensor out;
    out.shape = {x.shape[0], k};
    // y's K: the weight's (transposed: its dim 1 is K/groups, so the bias's [K] name if any, for
    // a chain to broadcast the bias by name)
    const std::string k_name = !transpose   ? w.dim_names[0]
                               : groups == 1 ? w.dim_names[1]
                               : in.size() == 3 && !in[2]->dim_names.empty() ? in[2]->dim_names[0]
                                                                               : "";
    out.dim_names = {x.dim_names[0], k_name};
    for (int i = 0; i < rank; ++i) {
        out.shape.push_back(size[i]);
        out.dim_names.push_back(op.attrs.out_dims[i]);
    }
    return out;
}

}  // namespace kforge::spec
