// The GPU fp64 reference's kernels for the index and mask ops (argmax / argmin, masked_fill,
// where, tril / triu, cross_entropy), transcribed from problem/interpret_index.cpp. Bool and
// integer tensors live in fp64 buffers like every other tensor (0 / 1, exact indices).
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {

// One extern "C" kernel named `symbol` computing `op` (interp::is_index_op(op.kind)) from
// operands `in` into `out`, its launch shape set in `launch`.
Expected<std::string> index_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                             const Tensor& out, const std::string& symbol,
                                             ReferenceLaunch& launch);

}  // namespace kforge::eval
