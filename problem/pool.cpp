// Pooling geometry: PyTorch's output sizes and the window each output position reads.
#include "problem/pool.h"

#include <algorithm>

namespace kforge {
namespace {

// floor(a / b) for b > 0 and any sign of a.
int64_t floor_div(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }

int64_t at(const std::vector<int64_t>& v, size_t i, int64_t dflt) {
    if (v.empty()) return dflt;
    return v.size() == 1 ? v[0] : v[i];
}

}  // namespace

bool is_pool(OpKind k) { return op_class(k) == OpClass::kPool; }

bool is_max_pool(OpKind k) { return k == OpKind::kMaxPool || k == OpKind::kAdaptiveMaxPool; }

bool is_adaptive_pool(OpKind k) {
    return k == OpKind::kAdaptiveAvgPool || k == OpKind::kAdaptiveMaxPool;
}

int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t dilation, bool ceil_mode) {
    const int64_t span = in + 2 * padding - dilation * (kernel - 1) - 1;
    int64_t out = (ceil_mode ? floor_div(span + stride - 1, stride) : floor_div(span, stride)) + 1;
    // the last window must start inside the input or the left padding
    if (ceil_mode && (out - 1) * stride >= in + padding) --out;
    return out;
}

PoolTaps pool_taps(OpKind kind, const PoolAxis& a, int64_t o) {
    PoolTaps t;
    if (is_adaptive_pool(kind)) {  // PyTorch's start_index / end_index
        t.first = floor_div(o * a.in, a.out);
        const int64_t end = floor_div((o + 1) * a.in + a.out - 1, a.out);
        t.count = t.extent = end - t.first;
        return t;
    }
    const int64_t start = o * a.stride - a.padding;
    if (kind == OpKind::kAvgPool) {  // no dilation; the divisor counts the padding it covers
        const int64_t end = std::min(start + a.kernel, a.in + a.padding);
        t.extent = end - start;
        t.first = std::max<int64_t>(start, 0);
        t.count = std::max<int64_t>(0, std::min(end, a.in) - t.first);
        return t;
    }
    // max_pool: taps start + j*dilation, j < kernel, those inside [0, in)
    const int64_t d = a.dilation;
    const int64_t j0 = start < 0 ? (-start + d - 1) / d : 0;
    const int64_t j1 = std::min(a.kernel - 1, floor_div(a.in - 1 - start, d));
    t.first = start + j0 * d;
    t.step = d;
    t.count = std::max<int64_t>(0, j1 - j0 + 1);
    t.extent = t.count;
    return t;
}

std::vector<PoolAxis> pool_axes(const Op& op, const std::vector<int64_t>& x_shape,
                                const std::vector<int64_t>& y_shape) {
    const OpAttrs& a = op.attrs;
    std::vector<PoolAxis> axes;
    for (size_t i = 2; i < x_shape.size() && i < y_shape.size(); ++i) {
        const size_t s = i - 2;
        PoolAxis ax;
        ax.in = x_shape[i];
        ax.out = y_shape[i];
        if (!is_adaptive_pool(op.kind)) {
            ax.kernel = at(a.kernel_size, s, 1);
            ax.stride = at(a.stride, s, ax.kernel);
            ax.padding = at(a.padding, s, 0);
            ax.dilation = at(a.dilation, s, 1);
        }
        axes.push_back(ax);
    }
    return axes;
}

int64_t pool_window_size(OpKind kind, const std::vector<PoolAxis>& axes) {
    int64_t n = 1;
    for (const PoolAxis& a : axes) {
        // adaptive: the largest window is at most ceil(in/out) + 1 positions
        n *= is_adaptive_pool(kind) ? std::min(a.in, (a.in + a.out - 1) / a.out + 1) : a.kernel;
    }
    return n;
}

}  // namespace kforge
