// The fp64 interpreter's index and mask ops: argmax / argmin (the first index of the max / min,
// as PyTorch; a NaN counts as the max and as the min), masked_fill, where, tril / triu and
// cross_entropy (mean of logsumexp(row) - row[target]). Bool values are 0 or 1, indices exact
// integers held as doubles.
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "common/expected.h"
#include "problem/interpret_ops.h"

namespace kforge::interp {
namespace {

// Every flat index of `out` mapped into each operand (NumPy broadcasting).
template <typename F>
void for_each_broadcast(const OpArgs& a, F&& f) {
    const std::vector<int64_t>& shape = a.out.shape;
    std::vector<std::vector<int64_t>> strides;
    for (const Tensor* t : a.inputs) strides.push_back(broadcast_strides(t->shape, shape));
    std::vector<int64_t> idx(shape.size(), 0);
    std::vector<int64_t> off(a.inputs.size(), 0);
    const int64_t n = a.out.numel();
    for (int64_t i = 0; i < n; ++i) {
        f(i, off);
        for (size_t d = shape.size(); d-- > 0;) {
            ++idx[d];
            for (size_t k = 0; k < off.size(); ++k) off[k] += strides[k][d];
            if (idx[d] < shape[d]) break;
            for (size_t k = 0; k < off.size(); ++k) off[k] -= strides[k][d] * shape[d];
            idx[d] = 0;
        }
    }
}

std::vector<double> arg_reduce(const OpArgs& a, bool is_max) {
    const AxisSplit s = axis_split(a);
    const std::vector<double>& x = *a.data[0];
    std::vector<double> out(static_cast<size_t>(s.outer * s.inner));
    for (int64_t o = 0; o < s.outer; ++o) {
        for (int64_t i = 0; i < s.inner; ++i) {
            int64_t best = 0;
            double v = x[s.at(o, 0, i)];
            for (int64_t l = 1; l < s.len && !std::isnan(v); ++l) {
                const double y = x[s.at(o, l, i)];
                if (std::isnan(y) || (is_max ? y > v : y < v)) {  // strict: the first one wins
                    v = y;
                    best = l;
                }
            }
            out[o * s.inner + i] = static_cast<double>(best);
        }
    }
    return out;
}

// Element (i, j) of the last two dims takes `inside` where j - i <= diagonal (lower) or
// j - i >= diagonal, `outside` elsewhere; nullopt stands for x's own element. tril / triu keep x
// inside and write 0 outside; masked_fill with a structured mask writes its value inside.
std::vector<double> triangle(const OpArgs& a, bool lower, std::optional<double> inside,
                             std::optional<double> outside) {
    const std::vector<int64_t>& shape = a.out.shape;
    const int64_t rows = shape[shape.size() - 2], cols = shape.back();
    const std::vector<double>& x = *a.data[0];
    const int64_t d = a.op.attrs.diagonal;
    std::vector<double> out(x.size());
    for (size_t k = 0; k < x.size(); ++k) {
        const int64_t j = static_cast<int64_t>(k) % cols;
        const int64_t i = (static_cast<int64_t>(k) / cols) % rows;
        const std::optional<double>& v = (lower ? j - i <= d : j - i >= d) ? inside : outside;
        out[k] = v ? *v : x[k];
    }
    return out;
}

Expected<std::vector<double>> cross_entropy(const OpArgs& a) {
    const Tensor& x = *a.inputs[0];
    const std::vector<double>& logits = *a.data[0];
    const std::vector<double>& target = *a.data[1];
    const int64_t c = x.shape.back();
    const int64_t n = x.shape.size() == 2 ? x.shape[0] : 1;
    double total = 0.0;
    for (int64_t r = 0; r < n; ++r) {
        const double t = target[static_cast<size_t>(r)];
        if (!(t >= 0 && t < static_cast<double>(c))) {
            return make_error("inputs." + a.inputs[1]->name,
                              "target " + std::to_string(static_cast<int64_t>(t)) + " at index " +
                                  std::to_string(r) + " is out of range: cross_entropy's targets " +
                                  "are class indices in [0, " + std::to_string(c) + ") (C of " +
                                  x.name + ")");
        }
        const double* row = logits.data() + r * c;
        double m = -std::numeric_limits<double>::infinity();
        for (int64_t k = 0; k < c; ++k) m = std::max(m, row[k]);
        const double shift = std::isinf(m) ? 0.0 : m;
        double sum = 0.0;
        for (int64_t k = 0; k < c; ++k) sum += std::exp(row[k] - shift);
        total += std::log(sum) + shift - row[static_cast<int64_t>(t)];
    }
    return std::vector<double>{total / static_cast<double>(n)};
}

}  // namespace

Expected<std::vector<double>> eval_index(const OpArgs& a) {
    switch (a.op.kind) {
        case OpKind::kArgmax: return arg_reduce(a, true);
        case OpKind::kArgmin: return arg_reduce(a, false);
        case OpKind::kTril: return triangle(a, true, std::nullopt, 0.0);
        case OpKind::kTriu: return triangle(a, false, std::nullopt, 0.0);
        case OpKind::kCrossEntropy: return cross_entropy(a);
        case OpKind::kMaskedFill: {
            if (a.op.attrs.tri_mask != TriMask::kNone)  // structured: from the indices
                return triangle(a, a.op.attrs.tri_mask == TriMask::kTril, a.op.attrs.scalar,
                                std::nullopt);
            std::vector<double> out(static_cast<size_t>(a.out.numel()));
            const std::vector<double>&x = *a.data[0], &m = *a.data[1];
            for_each_broadcast(a, [&](int64_t i, const std::vector<int64_t>& off) {
                out[i] = m[off[1]] != 0 ? a.op.attrs.scalar : x[off[0]];
            });
            return out;
        }
        case OpKind::kWhere: {
            std::vector<double> out(static_cast<size_t>(a.out.numel()));
            const std::vector<double>&c = *a.data[0], &x = *a.data[1], &y = *a.data[2];
            for_each_broadcast(a, [&](int64_t i, const std::vector<int64_t>& off) {
                out[i] = c[off[0]] != 0 ? x[off[1]] : y[off[2]];
            });
            return out;
        }
        default:
            return make_error(a.op.json_path, "internal: " + std::string(to_string(a.op.kind)) +
                                                  " is not an index op");
    }
}

bool is_index_op(OpKind k) {
    return k == OpKind::kArgmax || k == OpKind::kArgmin || k == OpKind::kMaskedFill ||
           k == OpKind::kWhere || k == OpKind::kTril || k == OpKind::kTriu ||
           k == OpKind::kCrossEntropy;
}

}  // namespace kforge::interp
