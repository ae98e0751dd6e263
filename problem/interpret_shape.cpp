// Reference shape ops (problem/shape_ops.h): each output element is one input element (or pad's
// fill value), found from the output's multi-index. reshape copies row-major order unchanged.
#include "problem/interpret_ops.h"
#include "problem/shape_ops.h"

namespace kforge::interp {
namespace {

// Row-major strides of `shape`.
std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

// Calls f(flat, index) for every element of `shape` in row-major order.
template <typename F>
void for_each_index(const std::vector<int64_t>& shape, F f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::vector<int64_t> idx(shape.size(), 0);
    for (int64_t e = 0; e < n; ++e) {
        f(e, idx);
        for (size_t i = shape.size(); i-- > 0;) {
            if (++idx[i] < shape[i]) break;
            idx[i] = 0;
        }
    }
}

}  // namespace

std::vector<double> eval_shape(const OpArgs& a) {
    const Tensor& x = *a.inputs[0];
    const std::vector<double>& xd = *a.data[0];
    const std::vector<int64_t>& out_shape = a.out.shape;
    std::vector<double> y(static_cast<size_t>(a.out.numel()));
    const OpAttrs& at = a.op.attrs;
    const std::vector<int64_t> xs = strides_of(x.shape);
    switch (a.op.kind) {
        case OpKind::kReshape:
            return xd;
        case OpKind::kExpand: {
            const auto s = broadcast_strides(x.shape, out_shape);
            for_each_index(out_shape, [&](int64_t e, const std::vector<int64_t>& idx) {
                int64_t src = 0;
                for (size_t i = 0; i < idx.size(); ++i) src += idx[i] * s[i];
                y[e] = xd[src];
            });
            return y;
        }
        case OpKind::kPermute:
            for_each_index(out_shape, [&](int64_t e, const std::vector<int64_t>& idx) {
                int64_t src = 0;
                for (size_t i = 0; i < idx.size(); ++i) src += idx[i] * xs[at.perm[i]];
                y[e] = xd[src];
            });
            return y;
        case OpKind::kSlice: {
            const size_t axis = static_cast<size_t>(at.axis);
            const SliceRange r = slice_range(at, x.shape[axis]);
            for_each_index(out_shape, [&](int64_t e, const std::vector<int64_t>& idx) {
                int64_t src = 0;
                for (size_t i = 0; i < idx.size(); ++i)
                    src += (i == axis ? r.start + idx[i] * r.step : idx[i]) * xs[i];
                y[e] = xd[src];
            });
            return y;
        }
        case OpKind::kCat: {
            const size_t axis = static_cast<size_t>(at.axis);
            std::vector<std::vector<int64_t>> strides;
            for (const Tensor* t : a.inputs) strides.push_back(strides_of(t->shape));
            for_each_index(out_shape, [&](int64_t e, const std::vector<int64_t>& idx) {
                int64_t along = idx[axis];
                size_t k = 0;
                while (along >= a.inputs[k]->shape[axis]) along -= a.inputs[k++]->shape[axis];
                int64_t src = 0;
                for (size_t i = 0; i < idx.size(); ++i)
                    src += (i == axis ? along : idx[i]) * strides[k][i];
                y[e] = (*a.data[k])[src];
            });
            return y;
        }
        case OpKind::kPad:
            for_each_index(out_shape, [&](int64_t e, const std::vector<int64_t>& idx) {
                int64_t src = 0;
                for (size_t i = 0; i < idx.size(); ++i) {
                    const int64_t j = idx[i] - at.pads[i][0];
                    if (j < 0 || j >= x.shape[i]) {
                        src = -1;
                        break;
                    }
                    src += j * xs[i];
                }
                y[e] = src < 0 ? at.scalar : xd[src];
            });
            return y;
        default:
            return y;
    }
}

}  // namespace kforge::interp
