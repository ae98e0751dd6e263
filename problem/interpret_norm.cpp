// Reference normalizations: layer_norm and rms_norm over the trailing normalized_shape dims,
// group_norm over [N, C, *] with C split into num_groups; biased variance, as PyTorch; l1 / l2
// normalize over one axis.
#include <cmath>

#include "problem/interpret_ops.h"

namespace kforge::interp {
namespace {

// Normalizes `count` elements of x starting at `begin` with stride 1: returns mean and
// 1 / sqrt(var + eps) (rms: mean 0 and 1 / sqrt(mean(x^2) + eps)).
std::pair<double, double> moments(const double* x, int64_t count, double eps, bool rms) {
    double mean = 0.0;
    if (!rms) {
        for (int64_t i = 0; i < count; ++i) mean += x[i];
        mean /= static_cast<double>(count);
    }
    double var = 0.0;
    for (int64_t i = 0; i < count; ++i) var += (x[i] - mean) * (x[i] - mean);
    var /= static_cast<double>(count);
    return {mean, 1.0 / std::sqrt(var + eps)};
}

}  // namespace

std::vector<double> eval_norm(const OpArgs& a) {
    const std::vector<double>& x = *a.data[0];
    const std::vector<double>* weight = a.data.size() > 1 ? a.data[1] : nullptr;
    const std::vector<double>* bias = a.data.size() > 2 ? a.data[2] : nullptr;
    const std::vector<int64_t>& shape = a.inputs[0]->shape;
    double eps = a.op.attrs.eps;
    std::vector<double> out(x.size());
    if (a.op.kind == OpKind::kGroupNorm) {
        int64_t n = shape[0], c = shape[1], spatial = 1;
        for (size_t i = 2; i < shape.size(); ++i) spatial *= shape[i];
        int64_t groups = a.op.attrs.num_groups, per_group = c / groups;
        for (int64_t b = 0; b < n; ++b) {
            for (int64_t g = 0; g < groups; ++g) {
                int64_t begin = (b * c + g * per_group) * spatial;  // a group is contiguous
                auto [mean, inv_std] = moments(x.data() + begin, per_group * spatial, eps, false);
                for (int64_t ch = 0; ch < per_group; ++ch) {
                    int64_t channel = g * per_group + ch;
                    double w = weight ? (*weight)[channel] : 1.0;
                    double bb = bias ? (*bias)[channel] : 0.0;
                    for (int64_t s = 0; s < spatial; ++s) {
                        int64_t i = begin + ch * spatial + s;
                        out[i] = (x[i] - mean) * inv_std * w + bb;
                    }
                }
            }
        }
        return out;
    }
    bool rms = a.op.kind == OpKind::kRmsNorm;
    int64_t cols = 1;
    for (size_t i = static_cast<size_t>(a.op.attrs.axis); i < shape.size(); ++i) cols *= shape[i];
    int64_t rows = static_cast<int64_t>(x.size()) / cols;
    for (int64_t r = 0; r < rows; ++r) {
        const double* row = x.data() + r * cols;
        auto [mean, inv_std] = moments(row, cols, eps, rms);
        for (int64_t j = 0; j < cols; ++j) {
            double y = (row[j] - mean) * inv_std;
            if (weight) y *= (*weight)[j];
            if (bias) y += (*bias)[j];
            out[r * cols + j] = y;
        }
    }
    return out;
}

// x / max(||x||_p, eps) over one axis (PyTorch's F.normalize; eps 0: plain division, so a zero
// row gives 0 / 0 = NaN as `x / x.norm(...)` does).
std::vector<double> eval_normalize(const OpArgs& a) {
    const std::vector<double>& x = *a.data[0];
    const auto [outer, len, inner] = axis_split(a);
    const bool l2 = a.op.kind == OpKind::kL2Normalize;
    std::vector<double> out(x.size());
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            auto at = [&](int64_t l) { return (o * len + l) * inner + i; };
            double s = 0.0;
            for (int64_t l = 0; l < len; ++l) s += l2 ? x[at(l)] * x[at(l)] : std::fabs(x[at(l)]);
            double norm = l2 ? std::sqrt(s) : s;
            if (norm < a.op.attrs.eps) norm = a.op.attrs.eps;  // clamp_min; keeps a NaN norm
            for (int64_t l = 0; l < len; ++l) out[at(l)] = x[at(l)] / norm;
        }
    }
    return out;
}

}  // namespace kforge::interp
