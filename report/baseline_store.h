// Storing PyTorch baseline measurements (python/kforge_py/baseline.py output) in the store,
// following report/baseline.h's convention, which the report stage reads back.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>

#include "common/expected.h"
#include "problem/problem.h"
#include "store/store.h"

namespace kforge::report {

struct StoredBaseline {
    int64_t run_id = 0;
    int64_t candidate_id = 0;
    int64_t evaluation_id = 0;
};

// Records one problem's result: the device (by uuid), the problem, the run (`run_id`, which
// must be on the same device, or a new run over the problem), a carrier candidate with
// proposer "baseline:pytorch", and one full-tier evaluation at `shapes_key` (the problem's full
// shapes, eval::shapes_key, where candidate times are stored) whose
// measurements are labelled "baseline:<mode>" (modes whose status is "ok" only). Evidence:
// precision settings, statistics, compile times, torch/triton versions.
Expected<StoredBaseline> store_baseline(Store& store, const Problem& problem,
                                        const std::string& shapes_key,
                                        const nlohmann::json& device, const nlohmann::json& doc,
                                        const nlohmann::json& result,
                                        std::optional<int64_t> run_id);

// Fills each mode of `result` that has "samples_ns" with "stats" (n, median, quartiles, IQR,
// min, max, the bootstrap 95% CI of the median) from kforge's one statistics implementation
// (common/stats.h), as the evaluator's own timings get them; the Python side sends samples only.
void add_baseline_stats(nlohmann::json& result);

}  // namespace kforge::report
