// Internals of the search loop shared by loop.cpp, loop_state.cpp and loop_output.cpp.
#pragma once

#include <string>

#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "search/loop.h"

namespace kforge::search::detail {

// Evaluates `hash` at `tier` through evaluate() with the store (cache and recording), updates
// the candidate, the counters, the cost model and `spent`.
eval::EvalReport evaluate_at(SearchState& state, eval::Evaluator& evaluator, Store& store,
                             const std::string& hash, EvalTier tier, const SearchOptions& options,
                             Spent& spent);

// Records a candidate that failed parsing or the checker as invalid_program (never compiled).
Status record_invalid(SearchState& state, Store& store, const std::string& hash,
                      const std::string& message);

// Statistics of the candidate samples of an evaluation record.
eval::TimingStats stats_of(const EvaluationRecord& record);

}  // namespace kforge::search::detail
