// `kforge suite` as a library call: one search per problem spec of a folder (from the start
// program beside it, or one the fusion planner synthesizes), one shared budget, every round to
// the problem with the largest expected gain (search/suite.h); then each problem's outputs.
#pragma once

#include <string>

#include "driver/outcome.h"
#include "driver/search_session.h"
#include "search/loop.h"

namespace kforge::driver {

struct SuiteRequest {
    std::string dir;   // the folder of problem specs (*.json)
    std::string out;   // one folder per problem under it ("": none)
    SearchSessionOptions session;
    search::SearchOptions search;  // as OptimizeRequest::search; `suite` is set to dir's name
    ProfileSettings profile;
};

// Runs it. Printed on `console`: a skipped problem and why, the suite line, the problems passed
// over each round, each round's progress line, each problem's evidence summary, the LLM's usage.
// kOk when every problem has a passing candidate, kFailure otherwise; kUserError when the folder
// is not one, no problem could be started or a round failed (the store).
Outcome run_suite(SuiteRequest request, const Console& console);

}  // namespace kforge::driver
