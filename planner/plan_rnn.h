// Recurrent ops in the fusion planner (planner/partition.h): one rnn kernel per lstm / gru op.
#pragma once

#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "dsl/check.h"
#include "problem/problem.h"

namespace kforge::planner::detail {

struct Planner;

// One rnn kernel reading the op's x, h0 (c0) as the program stores them and storing its result
// (its chain is the store alone: the element-wise ops that follow plan as their own kernels).
Status add_rnn(Planner& pl, const Op& op);

// The rnn knobs to try, best first: the fewest hidden units per CTA whose grid (directions x
// ceil(H / units) CTAs) fits one CTA per SM and whose W_hh rows fit shared memory, then coarser;
// threads cover one step's gate sums (batch x gates x units) in one pass where they can.
std::vector<dsl::RnnConfig> rnn_candidates(bool lstm, int64_t batch, int64_t hidden, int64_t dirs,
                                           const dsl::DeviceLimits& limits);

}  // namespace kforge::planner::detail
