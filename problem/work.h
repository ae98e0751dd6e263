// Work counting: FLOPs and DRAM bytes of a problem, per op and in total. The speed-of-light
// bounds (sol/bounds.h) and every measurement's derived rates read these counts.
//
// FLOP conventions (one multiply-add = 2 FLOPs):
//   matmul, linear    2 * M * N * K per batch entry (= 2 * K * numel(output)): flops_matrix.
//                     linear's bias add: 1 per output element, in flops_other.
//   conv2d            2 * N * K * P * Q * (C / groups) * R * S (= 2 * (C/groups) * R * S *
//                     numel(y)): flops_matrix; its bias add: 1 per output element, flops_other.
//   element-wise      per output element, elementwise_flops_per_element() below:
//                     1 for simple arithmetic (add, sub, mul, div, scale, add_scalar, relu,
//                     leaky_relu, hardtanh, clamp, min/max_scalar, neg, abs, square);
//                     0 for dropout (eval mode: identity);
//                     4 for one special function (exp, log, sqrt, rsqrt, tanh);
//                     4 sigmoid, 5 silu, 6 softplus, 8 gelu (erf or tanh form), 10 mish.
//   reductions        1 per input element (sum, mean, max, min, argmax, argmin).
//   masks             1 per output element (masked_fill, where, tril, triu: a select).
//   cross_entropy     5 per logit (the row's max, exp, sum; the target's logit; the mean).
//   softmax family    5 per input element (softmax, log_softmax, logsumexp: max, sub, exp,
//                     sum, scale).
//   norms             8 per input element (layer_norm, rms_norm, group_norm: moments,
//                     normalize, affine).
//   l1/l2_normalize   3 per input element (|x| or x*x, sum, scale by 1 / max(norm, eps)).
//   cumsum, cumprod   1 per input element (the scan's add or multiply).
//   shape ops         0 (reshape, expand, permute, slice, cat, pad move data only).
// Everything that is not a matrix product (matmul, linear, conv2d) counts as flops_other (run at the fp32 SIMT rate).
//
// Byte conventions (each tensor at its dtype size, dtype_bytes(): bool 1, i64 8):
//   bytes_fused    compulsory traffic: every graph input and param read once and every graph
//                  output written once, as if the whole graph ran in one kernel.
//   bytes_unfused  every op reads all its inputs and writes its output through DRAM, i.e. the
//                  sum over ops of OpWork::bytes(); intermediates count twice (write + read).
//                  A view (reshape, expand) moves 0 bytes; a slice reads only what it keeps.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge {

struct OpWork {
    std::string output;  // the tensor the op writes (names the op)
    OpKind kind = OpKind::kAdd;
    double flops_matrix = 0.0;
    double flops_other = 0.0;
    double bytes_read = 0.0;  // all inputs, each at its own size (no broadcast expansion)
    double bytes_written = 0.0;

    double flops() const { return flops_matrix + flops_other; }
    double bytes() const { return bytes_read + bytes_written; }
};

struct WorkCount {
    double flops_matrix = 0.0;
    double flops_other = 0.0;
    double bytes_fused = 0.0;
    double bytes_unfused = 0.0;
    std::vector<OpWork> per_op;  // in the problem's op order

    double flops() const { return flops_matrix + flops_other; }
};

// FLOPs per output element of an element-wise op (table above); -1 for a non-element-wise op.
double elementwise_flops_per_element(OpKind kind);

// Counts the work of a validated problem (parse_problem() output). A tensor name that the
// problem does not define gives an Error naming the op's json_path.
Expected<WorkCount> count_work(const Problem& problem);

}  // namespace kforge
