// The GPU fp64 reference's kernels for the shape ops (reshape, expand, permute, slice, cat, pad),
// transcribed from problem/interpret_shape.cpp: a thread per output element, its multi-index
// decomposed with the output's extents baked in, the input element (or pad's value) gathered.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {

// One extern "C" kernel named `symbol` computing shape op `op` (OpClass::kShape) from operands
// `in` into `out`, its launch shape set in `launch`.
Expected<std::string> shape_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                             const Tensor& out, const std::string& symbol,
                                             ReferenceLaunch& launch);

}  // namespace kforge::eval
