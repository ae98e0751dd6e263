// Helpers shared by the report model's sources (not part of the API).
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "report/baseline.h"
#include "report/model.h"
#include "sol/bounds.h"
#include "store/records.h"

namespace kforge::report {

inline constexpr std::string_view kEagerName = kBaselineEager;

// SOL figures of a problem whose best and baselines are already filled in.
SolFigures sol_figures(const Bounds& bounds, const ProblemReport& problem);

// 2 for full/profile, 1 for quick, 0 for an untimed tier.
int tier_rank(EvalTier t);
// The sample times of `e` with `label` ("candidate").
std::vector<double> times_of(const EvaluationRecord& e, std::string_view label);
// The compile gate's time_compile_ns in an evaluation's evidence, 0 when not recorded.
double compile_ns(const nlohmann::ordered_json& evidence);
// A device of the simulated backend (uuid "simulated-...").
bool is_simulated(const DeviceRecord& d);

// One evaluation on a best-so-far curve (the report's progress, the comparison's steps).
struct CurveSample {
    double gpu_ns = 0;  // cumulative, after this evaluation
    std::optional<double> best_ns;  // best median so far
    bool improved = false;          // this evaluation set the best so far
    std::optional<double> median_ns;  // its own median, when it is a timing of the best's tier
};

// The best-so-far walk over `evals`, the evaluations of qualified candidates in evaluation order
// (report/model.h "progress"): GPU time summed over every sample and the compile gate's
// time_compile_ns (a cache copy costs 0); the best so far among passed evaluations with
// "candidate" samples at the highest timed tier among them (the best's tier). One per evaluation.
std::vector<CurveSample> best_so_far_curve(const std::vector<const EvaluationRecord*>& evals);

}  // namespace kforge::report
