// Reference pooling (max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool) over the trailing
// spatial axes of x [N, C, *], exactly as PyTorch's CPU kernels: max propagates NaN (a NaN tap
// wins), an avg_pool window divides by divisor_override, else by its size with the padding
// (count_include_pad) or without, and a window with no input position gives 0 (avg) or -inf
// (max). The windows are problem/pool.h's.
#include <algorithm>
#include <cmath>
#include <limits>

#include "problem/interpret_ops.h"
#include "problem/pool.h"

namespace kforge::interp {

std::vector<double> eval_pool(const OpArgs& a) {
    const Tensor& x = *a.inputs[0];
    const std::vector<double>& xd = *a.data[0];
    const OpKind kind = a.op.kind;
    const std::vector<PoolAxis> axes = pool_axes(a.op, x.shape, a.out.shape);
    const size_t rank = axes.size();
    int64_t in_plane = 1, out_plane = 1;
    for (const PoolAxis& ax : axes) {
        in_plane *= ax.in;
        out_plane *= ax.out;
    }
    const int64_t planes = x.shape[0] * x.shape[1];
    std::vector<double> out(static_cast<size_t>(planes * out_plane));
    std::vector<int64_t> o(rank), j(rank);
    std::vector<PoolTaps> taps(rank);
    for (int64_t p = 0; p < planes; ++p) {
        const double* xp = xd.data() + p * in_plane;
        std::fill(o.begin(), o.end(), 0);
        for (int64_t e = 0; e < out_plane; ++e) {
            bool empty = false;
            int64_t extent = 1, count = 1;
            for (size_t i = 0; i < rank; ++i) {
                taps[i] = pool_taps(kind, axes[i], o[i]);
                empty = empty || taps[i].count == 0;
                extent *= taps[i].extent;
                count *= taps[i].count;
            }
            double acc = is_max_pool(kind) ? -std::numeric_limits<double>::infinity() : 0.0;
            std::fill(j.begin(), j.end(), 0);
            for (int64_t t = 0; !empty && t < count; ++t) {
                int64_t at = 0;
                for (size_t i = 0; i < rank; ++i) {
                    at = at * axes[i].in + taps[i].first + j[i] * taps[i].step;
                }
                const double v = xp[at];
                if (is_max_pool(kind)) {
                    if (v > acc || std::isnan(v)) acc = v;
                } else {
                    acc += v;
                }
                for (size_t i = rank; i-- > 0;) {  // next tap, row-major
                    if (++j[i] < taps[i].count) break;
                    j[i] = 0;
                }
            }
            if (!is_max_pool(kind)) {
                if (empty) {
                    acc = 0.0;
                } else {
                    const int64_t divisor =
                        kind == OpKind::kAdaptiveAvgPool  ? count
                        : a.op.attrs.divisor_override > 0 ? a.op.attrs.divisor_override
                        : a.op.attrs.count_include_pad    ? extent
                                                          : count;
                    acc /= static_cast<double>(divisor);
                }
            }
            out[static_cast<size_t>(p * out_plane + e)] = acc;
            for (size_t i = rank; i-- > 0;) {  // next output position, row-major
                if (++o[i] < axes[i].out) break;
                o[i] = 0;
            }
        }
    }
    return out;
}

}  // namespace kforge::interp
