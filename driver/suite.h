// `kforge suite` as a library call: one search per problem spec of a folder (from the start
// program beside it, or one the fusion planner synthesizes), one shared budget, every round to
// the problem with the largest expected gain (search/suite.h); then each problem's outputs.
#pragma once

#include <functional>
#include <string>

#include "driver/export.h"
#include "driver/outcome.h"
#include "driver/search_session.h"
#include "search/loop.h"
#include "search/suite.h"

namespace kforge::driver {

struct SuiteRequest {
    std::string dir;   // the folder of problem specs (*.json)
    std::string out;   // one folder per problem under it ("": none)
    // --export DIR: each problem's best program exported to DIR/<problem> (driver/export.h)
    std::optional<ExportRequest> export_to;
    SearchSessionOptions session;
    search::SearchOptions search;  // as OptimizeRequest::search; `suite` is set to dir's name
    ProfileSettings profile;
    // The suite as it goes (search/suite.h SuiteProgress), for a display; unset: none.
    std::function<void(const search::SuiteProgress& progress)> on_progress;
};

// Runs it. A problem of the folder whose run of this suite (same folder name, same store) a stop
// interrupted resumes that run. Printed on `console`: a skipped or resumed problem, the suite
// line, the start phase's plan (compile estimates, waves) and one line per start as it is
// compiled and timed (search/suite_start.h), the problems passed over each round, each round's
// progress line, each problem's evidence summary, the problems not reached with their fusion
// plans, the LLM's usage. A stop asked from outside (SIGTERM, SIGINT: common/stop_request.h)
// ends the suite after the evaluation in flight: the summaries are written, the unfinished runs
// marked `interrupted` (kFailure, saying so). kOk when every problem has a passing candidate,
// kFailure otherwise; kUserError when the folder is not one, no problem could be started or a
// round failed (the store).
Outcome run_suite(SuiteRequest request, const Console& console);

}  // namespace kforge::driver
