// Pooling geometry (max_pool, avg_pool, adaptive_avg_pool, adaptive_max_pool over the trailing
// 1-3 spatial axes of an [N, C, *] input), stated once: PyTorch's output-size rule (ceil_mode
// included) and, per output position, the window of input positions it reads. Shape inference,
// the fp64 interpreter, the GPU reference, the work counts and the pool kernel's lowering all read
// it; docs/problem-spec.md documents it.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "problem/problem.h"

namespace kforge {

bool is_pool(OpKind k);           // the four pooling ops (OpClass::kPool)
bool is_max_pool(OpKind k);       // max_pool, adaptive_max_pool
bool is_adaptive_pool(OpKind k);  // adaptive_avg_pool, adaptive_max_pool

// PyTorch's pooling_output_shape: floor (or ceil) of (in + 2p - d(k-1) - 1) / s, + 1; with
// ceil_mode the last window must start inside the input or the left padding (else one fewer).
// May be < 1 (shape inference refuses that).
int64_t pool_output_size(int64_t in, int64_t kernel, int64_t stride, int64_t padding,
                         int64_t dilation, bool ceil_mode);

// One spatial axis of a pooling op, after shape inference.
struct PoolAxis {
    int64_t in = 1, out = 1;
    int64_t kernel = 1, stride = 1, padding = 0, dilation = 1;  // max_pool / avg_pool
};

// The input positions output index `o` reads on one axis: first + j*step for j < count, all
// inside [0, in); `extent` is the window's size with the padding counted (avg_pool's divisor
// under count_include_pad; for the other ops equal to count). count may be 0 (an avg_pool
// window entirely in the padding: its output is 0, as PyTorch's).
struct PoolTaps {
    int64_t first = 0, count = 0, step = 1, extent = 0;
};
PoolTaps pool_taps(OpKind kind, const PoolAxis& axis, int64_t o);

// The op's spatial axes: x [N, C, s1..sk] -> y [N, C, o1..ok], with the attributes per axis.
std::vector<PoolAxis> pool_axes(const Op& op, const std::vector<int64_t>& x_shape,
                                const std::vector<int64_t>& y_shape);

// Input elements one output element reads at most (the product of the kernel sizes; adaptive:
// of the largest windows).
int64_t pool_window_size(OpKind kind, const std::vector<PoolAxis>& axes);

}  // namespace kforge
