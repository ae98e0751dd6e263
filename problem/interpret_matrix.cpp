// Reference matmul (batch broadcasting, transposes of the last two dims), linear and conv2d.
#include "problem/interpret_ops.h"

namespace kforge::interp {
namespace {

std::vector<double> matmul(const OpArgs& a) {
    const Tensor &ta = *a.inputs[0], &tb = *a.inputs[1];
    const std::vector<double> &da = *a.data[0], &db = *a.data[1];
    size_t ra = ta.shape.size(), ro = a.out.shape.size();
    bool trans_a = a.op.attrs.transpose_a, trans_b = a.op.attrs.transpose_b;
    int64_t m = a.out.shape[ro - 2], n = a.out.shape[ro - 1];
    int64_t k = trans_a ? ta.shape[ra - 2] : ta.shape[ra - 1];
    std::vector<int64_t> batch_out(a.out.shape.begin(), a.out.shape.end() - 2);
    std::vector<int64_t> sa = broadcast_strides({ta.shape.begin(), ta.shape.end() - 2}, batch_out);
    std::vector<int64_t> sb = broadcast_strides({tb.shape.begin(), tb.shape.end() - 2}, batch_out);
    int64_t batches = 1;
    for (int64_t d : batch_out) batches *= d;
    std::vector<double> out(static_cast<size_t>(batches * m * n));
    std::vector<int64_t> index(batch_out.size(), 0);
    for (int64_t b = 0; b < batches; ++b) {
        int64_t base_a = 0, base_b = 0;
        for (size_t i = 0; i < index.size(); ++i) {
            base_a += index[i] * sa[i];
            base_b += index[i] * sb[i];
        }
        const double* pa = da.data() + base_a * m * k;
        const double* pb = db.data() + base_b * k * n;
        double* po = out.data() + b * m * n;
        for (int64_t i = 0; i < m; ++i) {
            for (int64_t j = 0; j < n; ++j) {
                double acc = 0.0;
                for (int64_t p = 0; p < k; ++p) {
                    double x = trans_a ? pa[p * m + i] : pa[i * k + p];
                    double y = trans_b ? pb[j * k + p] : pb[p * n + j];
                    acc += x * y;
                }
                po[i * n + j] = acc;
            }
        }
        for (size_t i = index.size(); i-- > 0;) {  // next batch index, row-major
            if (++index[i] < batch_out[i]) break;
            index[i] = 0;
        }
    }
    return out;
}

std::vector<double> linear(const OpArgs& a) {
    const std::vector<double> &x = *a.data[0], &w = *a.data[1];
    int64_t n = a.inputs[1]->shape[0], k = a.inputs[1]->shape[1];
    int64_t rows = a.inputs[0]->numel() / k;
    std::vector<double> out(static_cast<size_t>(rows * n));
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t j = 0; j < n; ++j) {
            double acc = 0.0;
            for (int64_t p = 0; p < k; ++p) acc += x[r * k + p] * w[j * k + p];
            out[r * n + j] = a.data.size() > 2 ? acc + (*a.data[2])[j] : acc;
        }
    }
    return out;
}

}  // namespace

// Direct loops, PyTorch's definition: y[n, k, p, q] = b[k] + sum over c in k's group, r, s of
// x[n, g*Cg + c, p*sh - ph + r*dh, q*sw - pw + s*dw] * w[k, c, r, s] (zero outside x).
std::vector<double> eval_conv(const OpArgs& a) {
    const OpAttrs& at = a.op.attrs;
    const std::vector<double> &x = *a.data[0], &w = *a.data[1];
    const std::vector<int64_t> &xs = a.inputs[0]->shape, &ws = a.inputs[1]->shape;
    const int64_t n_batch = xs[0], c_in = xs[1], h = xs[2], wd = xs[3];
    const int64_t k_out = ws[0], cg = ws[1], r_len = ws[2], s_len = ws[3];
    const int64_t p_len = a.out.shape[2], q_len = a.out.shape[3];
    const int64_t kg = k_out / at.groups;  // output channels per group
    std::vector<double> out(static_cast<size_t>(a.out.numel()));
    for (int64_t n = 0; n < n_batch; ++n) {
        for (int64_t k = 0; k < k_out; ++k) {
            const int64_t c0 = (k / kg) * cg;
            const double bias = a.data.size() > 2 ? (*a.data[2])[k] : 0.0;
            for (int64_t p = 0; p < p_len; ++p) {
                for (int64_t q = 0; q < q_len; ++q) {
                    double acc = 0.0;
                    for (int64_t c = 0; c < cg; ++c) {
                        const double* xc = x.data() + (n * c_in + c0 + c) * h * wd;
                        const double* wc = w.data() + (k * cg + c) * r_len * s_len;
                        for (int64_t r = 0; r < r_len; ++r) {
                            const int64_t hi = p * at.stride[0] - at.padding[0] + r * at.dilation[0];
                            if (hi < 0 || hi >= h) continue;
                            for (int64_t s = 0; s < s_len; ++s) {
                                const int64_t wi =
                                    q * at.stride[1] - at.padding[1] + s * at.dilation[1];
                                if (wi < 0 || wi >= wd) continue;
                                acc += xc[hi * wd + wi] * wc[r * s_len + s];
                            }
                        }
                    }
                    out[static_cast<size_t>(((n * k_out + k) * p_len + p) * q_len + q)] = acc + bias;
                }
            }
        }
    }
    return out;
}

std::vector<double> eval_matrix(const OpArgs& a) {
    return a.op.kind == OpKind::kMatmul ? matmul(a) : linear(a);
}

}  // namespace kforge::interp
