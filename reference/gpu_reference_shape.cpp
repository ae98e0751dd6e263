// shape_reference_kernel (reference/gpu_reference_shape.h): a grid-stride loop over the output;
// each element's input offset is a sum over the output's axes of (its coordinate, mapped by the
// op) times the input's row-major stride, exactly as problem/interpret_shape.cpp computes it.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <sstream>

#include "problem/interpret_ops.h"
#include "problem/shape_ops.h"
#include "reference/gpu_reference_shape.h"

namespace kforge::eval {
namespace {

constexpr int kThreads = 256;
constexpr int64_t kMaxGrid = 1 << 20;

std::string lit(int64_t x) { return "(" + std::to_string(x) + "LL)"; }

std::string lit(double x) {
    char buf[64];
    if (std::isfinite(x)) {
        std::snprintf(buf, sizeof buf, "(%a)", x);
    } else {
        unsigned long long bits = 0;
        std::memcpy(&bits, &x, sizeof bits);
        std::snprintf(buf, sizeof buf, "__longlong_as_double(0x%016llxLL)", bits);
    }
    return buf;
}

std::vector<int64_t> strides_of(const std::vector<int64_t>& shape) {
    std::vector<int64_t> s(shape.size(), 1);
    for (size_t i = shape.size(); i-- > 1;) s[i - 1] = s[i] * shape[i];
    return s;
}

}  // namespace

Expected<std::string> shape_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                             const Tensor& out, const std::string& symbol,
                                             ReferenceLaunch& launch) {
    const int64_t n = out.numel();
    launch.block[0] = kThreads;
    launch.grid[0] = static_cast<unsigned>(
        std::clamp<int64_t>((n + kThreads - 1) / kThreads, 1, kMaxGrid));
    std::ostringstream s;
    s << "extern \"C\" __global__ void __launch_bounds__(256) " << symbol << "(";
    for (size_t i = 0; i < in.size(); ++i) s << "const double* __restrict__ p" << i << ", ";
    s << "double* __restrict__ y) {\n"
      << "    for (i64 e = (i64)blockIdx.x * blockDim.x + threadIdx.x; e < " << lit(n)
      << "; e += (i64)gridDim.x * blockDim.x) {\n";
    if (op.kind == OpKind::kReshape) {
        s << "        y[e] = p0[e];\n    }\n}\n";
        return s.str();
    }
    if (op.kind == OpKind::kCat) {  // [outer, along, inner] around the axis; the piece by along
        const size_t axis = static_cast<size_t>(op.attrs.axis);
        int64_t inner_n = 1;
        for (size_t d = axis + 1; d < out.shape.size(); ++d) inner_n *= out.shape[d];
        s << "        const i64 inner = e % " << lit(inner_n) << ", r = e / " << lit(inner_n)
          << ";\n        const i64 along = r % " << lit(out.shape[axis]) << ", outer = r / "
          << lit(out.shape[axis]) << ";\n";
        int64_t offset = 0;
        for (size_t k = 0; k < in.size(); ++k) {
            const int64_t len = in[k]->shape[axis];
            s << "        " << (k ? "else " : "") << "if (along < " << lit(offset + len)
              << ") y[e] = p" << k << "[(outer * " << lit(len) << " + (along - " << lit(offset)
              << ")) * " << lit(inner_n) << " + inner];\n";
            offset += len;
        }
        s << "    }\n}\n";
        return s.str();
    }
    const Tensor& x = *in[0];
    const std::vector<int64_t>& shape = out.shape;
    const std::vector<int64_t> xs = strides_of(x.shape);
    const OpAttrs& a = op.attrs;
    // c: the output coordinate of axis d, from the last axis to the first
    s << "        i64 r = e, src = 0;\n";
    if (op.kind == OpKind::kPad) s << "        bool inside = true;\n";
    for (size_t d = shape.size(); d-- > 0;) {
        s << "        { i64 c = r % " << lit(shape[d]) << "; r /= " << lit(shape[d]) << ";";
        switch (op.kind) {
            case OpKind::kExpand: {
                const auto bs = interp::broadcast_strides(x.shape, shape);
                s << " src += c * " << lit(bs[d]) << ";";
                break;
            }
            case OpKind::kPermute:
                s << " src += c * " << lit(xs[static_cast<size_t>(a.perm[d])]) << ";";
                break;
            case OpKind::kSlice:
                if (d == static_cast<size_t>(a.axis)) {
                    const SliceRange sr = slice_range(a, x.shape[d]);
                    s << " src += (" << lit(sr.start) << " + c * " << lit(sr.step) << ") * "
                      << lit(xs[d]) << ";";
                } else {
                    s << " src += c * " << lit(xs[d]) << ";";
                }
                break;
            case OpKind::kPad:
                s << " c -= " << lit(a.pads[d][0]) << "; inside = inside && c >= 0 && c < "
                  << lit(x.shape[d]) << "; src += c * " << lit(xs[d]) << ";";
                break;
            default:
                return make_error(op.json_path, "no GPU reference for this op");
        }
        s << " }\n";
    }
    switch (op.kind) {
        case OpKind::kPad:
            s << "        y[e] = inside ? p0[src] : " << lit(a.scalar) << ";\n";
            break;
        default:
            s << "        y[e] = p0[src];\n";
            break;
    }
    s << "        (void)r;\n    }\n}\n";
    return s.str();
}

}  // namespace kforge::eval
