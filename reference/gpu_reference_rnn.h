// The GPU fp64 reference's kernel for the recurrent ops (lstm, gru), transcribed from
// problem/interpret_rnn.cpp with problem/rnn.h's operand layout.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"
#include "problem/problem.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {

// One extern "C" kernel named `symbol` computing rnn `op` (is_rnn(op.kind)) of its operands `in`
// into `out`, its launch shape set in `launch`: one block per batch element walking the layers,
// directions and steps in the interpreter's order; the layer sequences and gate values of each
// batch element live in a static fp64 __device__ scratch array of the source (sized here).
Expected<std::string> rnn_reference_kernel(const Op& op, const std::vector<const Tensor*>& in,
                                           const Tensor& out, const std::string& symbol,
                                           ReferenceLaunch& launch);

}  // namespace kforge::eval
