// The op families of the reference interpreter (interpret_*.cpp); interpret.cpp dispatches.
#pragma once

#include <vector>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge::interp {

// One op's operands and result tensor; data[i] holds inputs[i]'s values, row-major.
struct OpArgs {
    const Op& op;
    std::vector<const Tensor*> inputs;
    std::vector<const std::vector<double>*> data;
    const Tensor& out;
};

// The op's first input seen as [outer, len, inner] around its axis (attrs.axis, >= 0): element
// (o, l, i) is at (o * len + l) * inner + i.
struct AxisSplit {
    int64_t outer = 1, len = 1, inner = 1;
    int64_t at(int64_t o, int64_t l, int64_t i) const { return (o * len + l) * inner + i; }
};
AxisSplit axis_split(const OpArgs& a);

// Strides that map an index of `out_shape` to a flat index of a tensor of `in_shape` that
// broadcasts to it (right-aligned; 0 where the input has size 1 or lacks the dim).
std::vector<int64_t> broadcast_strides(const std::vector<int64_t>& in_shape,
                                       const std::vector<int64_t>& out_shape);

std::vector<double> eval_matrix(const OpArgs& a);       // matmul, linear
std::vector<double> eval_elementwise(const OpArgs& a);  // unary and binary element-wise
std::vector<double> eval_reduction(const OpArgs& a);    // sum, mean, max, min, prod, softmax family
std::vector<double> eval_norm(const OpArgs& a);         // layer_norm, rms_norm, group_norm
std::vector<double> eval_normalize(const OpArgs& a);    // l1_normalize, l2_normalize
std::vector<double> eval_scan(const OpArgs& a);         // cumsum, cumprod
std::vector<double> eval_conv(const OpArgs& a);         // conv1d/2d/3d, conv_transpose1d/2d/3d
std::vector<double> eval_shape(const OpArgs& a);        // reshape, expand, permute, slice, cat, pad
std::vector<double> eval_pool(const OpArgs& a);         // max_pool, avg_pool, adaptive pools
std::vector<double> eval_rnn(const OpArgs& a);          // lstm, gru (interpret_rnn.cpp)
// argmax, argmin, masked_fill, where, tril, triu, cross_entropy (interpret_index.cpp); an
// out-of-range cross_entropy target is an Error
bool is_index_op(OpKind k);
Expected<std::vector<double>> eval_index(const OpArgs& a);

}  // namespace kforge::interp
