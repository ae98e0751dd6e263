// One convolution op's geometry, every form seen as 3-D: conv1d/2d/3d and conv_transpose1d/2d/3d
// with their spatial axes right-aligned in three (missing leading axes have size 1, kernel 1,
// stride 1, padding 0, dilation 1), so the interpreter, the GPU reference, the work counts and
// the lowerings index one shape. PyTorch's definitions (docs/problem-spec.md):
//   conv:           y[n, k, o] = b[k] + sum_{c < C/g, t} x[n, g*C/g + c, o*s - p + t*d] * w[k, c, t]
//                   with g = k / (K/g);
//   conv_transpose: y[n, g*K/g + k, o] = b[.] + sum_{c < C/g, t, i: i*s - p + t*d = o}
//                   x[n, g*C/g + c, i] * w[g*C/g + c, k, t].
#pragma once

#include <array>
#include <cstdint>

#include "problem/problem.h"

namespace kforge {

struct ConvGeometry {
    bool transpose = false;
    int rank = 2;                        // spatial axes of the op (1, 2 or 3)
    int64_t n = 1, c = 1, k = 1, groups = 1;
    std::array<int64_t, 3> in{1, 1, 1};  // x's spatial sizes (D, H, W)
    std::array<int64_t, 3> kernel{1, 1, 1};
    std::array<int64_t, 3> out{1, 1, 1};
    std::array<int64_t, 3> stride{1, 1, 1}, padding{0, 0, 0}, dilation{1, 1, 1};
    std::array<int64_t, 3> output_padding{0, 0, 0};
    int64_t c_per_group() const { return c / groups; }
    int64_t k_per_group() const { return k / groups; }
    int64_t kernel_volume() const { return kernel[0] * kernel[1] * kernel[2]; }
    int64_t in_volume() const { return in[0] * in[1] * in[2]; }
    int64_t out_volume() const { return out[0] * out[1] * out[2]; }
};

// The geometry of conv op `op` reading x and w and writing y (shapes as shape inference made
// them; op_class(op.kind) == OpClass::kConv).
ConvGeometry conv_geometry(const Op& op, const Tensor& x, const Tensor& w, const Tensor& y);

// Multiply-adds of the op that touch x inside its bounds: for a convolution, every tap of every
// output element over C/g channels (the padding taps included, as an implicit GEMM computes
// them); for a transposed convolution, the (input, tap) pairs that land inside y, times K/g.
double conv_macs(const ConvGeometry& g);

}  // namespace kforge
