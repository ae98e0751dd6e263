// JSON rendering of a report model (report/model.h). Top-level keys, in order:
//   kforge_report (layout version), simulated, runs, suite, problems.
// Times are in ns (stats) or s (SOL bounds, progress GPU-seconds) as the key names say; a
// figure that is undefined is null. Simulated runs carry "simulated": true at every level.
#pragma once

#include <nlohmann/json.hpp>

#include "report/model.h"

namespace kforge::report {

inline constexpr int kReportJsonVersion = 1;

nlohmann::ordered_json report_to_json(const Report& report);

}  // namespace kforge::report
