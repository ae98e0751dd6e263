// Reference convolutions (conv1d/2d/3d, conv_transpose1d/2d/3d): direct loops in fp64 over the
// 3-D view of problem/conv_geometry.h, PyTorch's definitions.
#include "problem/conv_geometry.h"
#include "problem/interpret_ops.h"

namespace kforge {

ConvGeometry conv_geometry(const Op& op, const Tensor& x, const Tensor& w, const Tensor& y) {
    ConvGeometry g;
    g.transpose = is_conv_transpose(op.kind);
    g.rank = spatial_rank(op.kind);
    g.n = x.shape[0];
    g.c = x.shape[1];
    g.k = y.shape[1];
    g.groups = op.attrs.groups;
    const int lead = 3 - g.rank;
    for (int i = 0; i < g.rank; ++i) {
        const size_t s = static_cast<size_t>(i);
        g.in[lead + i] = x.shape[2 + s];
        g.kernel[lead + i] = w.shape[2 + s];
        g.out[lead + i] = y.shape[2 + s];
        g.stride[lead + i] = op.attrs.stride.at(s);
        g.padding[lead + i] = op.attrs.padding.at(s);
        g.dilation[lead + i] = op.attrs.dilation.at(s);
        if (s < op.attrs.output_padding.size()) g.output_padding[lead + i] = op.attrs.output_padding[s];
    }
    return g;
}

double conv_macs(const ConvGeometry& g) {
    const double channels = static_cast<double>(g.c_per_group()) * static_cast<double>(g.k);
    if (!g.transpose) {
        return channels * static_cast<double>(g.n) * static_cast<double>(g.out_volume()) *
               static_cast<double>(g.kernel_volume());
    }
    double pairs = 1.0;  // per axis, the (input, tap) pairs whose output lies in [0, out)
    for (int a = 0; a < 3; ++a) {
        int64_t count = 0;
        for (int64_t i = 0; i < g.in[a]; ++i)
            for (int64_t t = 0; t < g.kernel[a]; ++t) {
                const int64_t o = i * g.stride[a] - g.padding[a] + t * g.dilation[a];
                count += o >= 0 && o < g.out[a];
            }
        pairs *= static_cast<double>(count);
    }
    return channels * static_cast<double>(g.n) * pairs;
}

namespace interp {
namespace {

// x's flat index of (n, channel, spatial index z, y, x) and w's of (row, col, taps).
struct Index3 {
    std::array<int64_t, 3> dims;
    int64_t at(int64_t outer, int64_t d, int64_t h, int64_t w) const {
        return ((outer * dims[0] + d) * dims[1] + h) * dims[2] + w;
    }
};

// The input coordinate tap t reads for output o on axis a, or -1 where there is none (outside x,
// or, transposed, an output that no input position reaches through this tap).
int64_t source(const ConvGeometry& g, int a, int64_t o, int64_t t) {
    if (!g.transpose) {
        const int64_t i = o * g.stride[a] - g.padding[a] + t * g.dilation[a];
        return i >= 0 && i < g.in[a] ? i : -1;
    }
    const int64_t num = o + g.padding[a] - t * g.dilation[a];
    if (num < 0 || num % g.stride[a] != 0) return -1;
    const int64_t i = num / g.stride[a];
    return i < g.in[a] ? i : -1;
}

}  // namespace

std::vector<double> eval_conv(const OpArgs& a) {
    const ConvGeometry g = conv_geometry(a.op, *a.inputs[0], *a.inputs[1], a.out);
    const std::vector<double> &x = *a.data[0], &w = *a.data[1];
    const Index3 xi{g.in}, wi{g.kernel}, yi{g.out};
    const int64_t cg = g.c_per_group(), kg = g.k_per_group();
    std::vector<double> out(static_cast<size_t>(a.out.numel()));
    for (int64_t n = 0; n < g.n; ++n)
        for (int64_t k = 0; k < g.k; ++k) {
            const int64_t grp = k / kg;
            const double bias = a.data.size() > 2 ? (*a.data[2])[static_cast<size_t>(k)] : 0.0;
            for (int64_t od = 0; od < g.out[0]; ++od)
                for (int64_t oh = 0; oh < g.out[1]; ++oh)
                    for (int64_t ow = 0; ow < g.out[2]; ++ow) {
                        double acc = 0.0;
                        for (int64_t c = 0; c < cg; ++c) {
                            const int64_t xc = n * g.c + grp * cg + c;
                            // w's leading pair: [k, c] for a convolution, [C, K/g] transposed
                            const int64_t wrow = g.transpose ? (grp * cg + c) * kg + k % kg
                                                             : k * cg + c;
                            for (int64_t td = 0; td < g.kernel[0]; ++td) {
                                const int64_t id = source(g, 0, od, td);
                                if (id < 0) continue;
                                for (int64_t th = 0; th < g.kernel[1]; ++th) {
                                    const int64_t ih = source(g, 1, oh, th);
                                    if (ih < 0) continue;
                                    for (int64_t tw = 0; tw < g.kernel[2]; ++tw) {
                                        const int64_t iw = source(g, 2, ow, tw);
                                        if (iw < 0) continue;
                                        acc += x[static_cast<size_t>(xi.at(xc, id, ih, iw))] *
                                               w[static_cast<size_t>(wi.at(wrow, td, th, tw))];
                                    }
                                }
                            }
                        }
                        out[static_cast<size_t>(yi.at(n * g.k + k, od, oh, ow))] = acc + bias;
                    }
        }
    return out;
}

}  // namespace interp
}  // namespace kforge
