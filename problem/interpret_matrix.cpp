// Reference matmul (batch broadcasting, transposes of the last two dims) and linear
// (convolutions: interpret_conv.cpp).
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

std::vector<double> eval_matrix(const OpArgs& a) {
    return a.op.kind == OpKind::kMatmul ? matmul(a) : linear(a);
}

}  // namespace kforge::interp
