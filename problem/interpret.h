// The fp64 CPU reference interpreter: evaluates a problem's graph exactly as PyTorch defines each
// op, in double precision, on row-major contiguous tensors. It is the ground truth for the
// simulated device and for small-shape correctness checks; problems are interpreted at small
// shapes (rebind_dims) since the cost is O(FLOPs) on one core.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"

namespace kforge {

using TensorValues = std::map<std::string, std::vector<double>>;

inline constexpr int64_t kInterpretMaxElements = int64_t{64} << 20;  // 64M doubles = 512 MiB

// Evaluates `problem` (parse_problem() output) on `inputs`, one row-major vector per graph input
// and param (exactly those names, each of its tensor's numel). Returns the graph outputs by
// name. Intermediates are not rounded to their dtype: every op runs in fp64. A problem whose
// tensors hold more than `max_elements` elements in total, a missing, unknown or mis-sized
// input gives an Error (where: "inputs.<name>" or "").
Expected<TensorValues> interpret(const Problem& problem, const TensorValues& inputs,
                                 int64_t max_elements = kInterpretMaxElements);

// The same problem with some dims bound to new values (the others keep theirs), re-validated
// from its spec (problem_to_json), so shapes, normalized shapes and divisibility are checked
// again. An unknown dim name or a non-positive value gives an Error at "dims.<name>".
Expected<Problem> rebind_dims(const Problem& problem, const std::map<std::string, int64_t>& new_dims);

}  // namespace kforge
