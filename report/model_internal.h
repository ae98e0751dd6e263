// Helpers shared by the report model's sources (not part of the API).
#pragma once

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

}  // namespace kforge::report
