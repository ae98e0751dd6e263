// Reference reductions over one axis (sum, mean, max, min, prod) and the softmax family (softmax,
// log_softmax, logsumexp), all shifted by the row maximum as PyTorch does; prefix scans
// (cumsum, cumprod) over one axis.
#include <cmath>
#include <limits>

#include "problem/interpret_ops.h"

namespace kforge::interp {

std::vector<double> eval_reduction(const OpArgs& a) {
    const std::vector<double>& x = *a.data[0];
    const auto [outer, len, inner] = axis_split(a);
    OpKind kind = a.op.kind;
    bool same_shape = kind == OpKind::kSoftmax || kind == OpKind::kLogSoftmax;
    std::vector<double> out(static_cast<size_t>(same_shape ? outer * len * inner : outer * inner));
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            auto at = [&](int64_t l) { return x[(o * len + l) * inner + i]; };
            double& result = out[o * inner + i];  // unused by softmax / log_softmax
            if (kind == OpKind::kSum || kind == OpKind::kMean) {
                double s = 0.0;
                for (int64_t l = 0; l < len; ++l) s += at(l);
                result = kind == OpKind::kMean ? s / static_cast<double>(len) : s;
                continue;
            }
            if (kind == OpKind::kProd) {  // sequential fp64 product; 0 * inf gives NaN as in C
                double p = 1.0;
                for (int64_t l = 0; l < len; ++l) p *= at(l);
                result = p;
                continue;
            }
            double mx = at(0), mn = at(0);
            bool nan = std::isnan(at(0));
            for (int64_t l = 1; l < len; ++l) {
                nan = nan || std::isnan(at(l));
                mx = std::fmax(mx, at(l));
                mn = std::fmin(mn, at(l));
            }
            if (kind == OpKind::kMax || kind == OpKind::kMin) {
                result = nan ? std::nan("") : (kind == OpKind::kMax ? mx : mn);
                continue;
            }
            // logsumexp masks an infinite maximum to 0 (as PyTorch); softmax shifts by it.
            double shift = kind == OpKind::kLogsumexp && std::isinf(mx) ? 0.0 : mx;
            if (nan) shift = std::nan("");
            double s = 0.0;
            for (int64_t l = 0; l < len; ++l) s += std::exp(at(l) - shift);
            if (kind == OpKind::kLogsumexp) {
                result = std::log(s) + shift;
                continue;
            }
            for (int64_t l = 0; l < len; ++l) {
                double& y = out[(o * len + l) * inner + i];
                y = kind == OpKind::kSoftmax ? std::exp(at(l) - shift) / s
                                             : at(l) - shift - std::log(s);
            }
        }
    }
    return out;
}

// cumsum / cumprod over one axis, sequentially in fp64: element l is x[0] op ... op x[l]
// (exclusive: up to x[l-1], the identity at l = 0); reverse runs from the end of the axis
// (PyTorch's x.flip(d).cumsum(d).flip(d)).
std::vector<double> eval_scan(const OpArgs& a) {
    const std::vector<double>& x = *a.data[0];
    const auto [outer, len, inner] = axis_split(a);
    const bool prod = a.op.kind == OpKind::kCumprod;
    std::vector<double> out(x.size());
    for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
            double acc = prod ? 1.0 : 0.0;
            for (int64_t step = 0; step < len; ++step) {
                const int64_t l = a.op.attrs.reverse ? len - 1 - step : step;
                const int64_t at = (o * len + l) * inner + i;
                const double before = acc;
                acc = prod ? acc * x[at] : acc + x[at];
                out[at] = a.op.attrs.exclusive ? before : acc;
            }
        }
    }
    return out;
}

}  // namespace kforge::interp
