// Helpers shared by the report model's sources (not part of the API).
#pragma once

#include "report/baseline.h"
#include "report/model.h"
#include "sol/bounds.h"

namespace kforge::report {

inline constexpr std::string_view kEagerName = kBaselineEager;

// SOL figures of a problem whose best and baselines are already filled in.
SolFigures sol_figures(const Bounds& bounds, const ProblemReport& problem);

}  // namespace kforge::report
