// Markdown summary of a report model (report/model.h): suite figures, one table row per
// problem, then per problem its best candidate, baselines, SOL, gates and lineage. A simulated
// run says "simulated" in the title and in every problem heading.
#pragma once

#include <string>

#include "report/model.h"

namespace kforge::report {

std::string render_markdown(const Report& report);

}  // namespace kforge::report
