// The GPU fp64 reference's kernel for the pooling ops (max_pool, avg_pool, adaptive_avg_pool,
// adaptive_max_pool), transcribed from problem/interpret_pool.cpp with problem/pool.h's windows.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {

// One extern "C" kernel named `symbol` computing pool `op` (is_pool(op.kind)) of in[0] into
// `out`, its launch shape set in `launch`.
Expected<std::string> pool_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                            const Tensor& out, const std::string& symbol,
                                            ReferenceLaunch& launch);

}  // namespace kforge::eval
