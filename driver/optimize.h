// `kforge optimize` as a library call: the budget-aware search of search/loop.h on one problem,
// from its start program (driver/start_program.h) or a run in the store, with the built-in
// proposers, the LLM proposer when given, and the profiling hook; then the outputs.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "driver/export.h"
#include "driver/outcome.h"
#include "driver/search_session.h"
#include "search/loop.h"

namespace kforge::driver {

struct OptimizeRequest {
    std::string spec;                // problem spec (JSON); not read with `resume`
    std::string program;             // start program ("": beside the spec, else synthesized)
    std::optional<int64_t> resume;   // continue this run of the store
    std::string out;                 // best.kf, best.cu, plan.json, evidence.json ("": none)
    // --export DIR: the run's best program exported there (driver/export.h) once the search
    // ends with one; its out_dir set, its source filled in here.
    std::optional<ExportRequest> export_to;
    SearchSessionOptions session;
    // Budgets, stop conditions, seed, built-in proposer names (the seed proposer joins a
    // synthesized start; "llm" is put first when there is one), compile cache, the progress log.
    search::SearchOptions search;
    ProfileSettings profile;
    std::function<void()> log_done;  // after the last progress line (a terminal ends its line)
    // The command that continues run N (printed when a stop request - SIGINT/SIGTERM - ended
    // the search early); unset: "--resume N".
    std::function<std::string(int64_t run_id)> resume_command;
    // Called once the run exists (its id), before the search starts.
    std::function<void(const search::SearchState& state)> on_start;
};

// Runs it: "run N on DEVICE" and the evidence summary (with the LLM's usage) are printed on
// `console`, notes (a synthesized start, the LLM's state, the GPU fallback) noted. kOk when a
// candidate passed, kFailure when none did, kUserError / kEnvironment with the message.
// A stop request (common/stop_request.h) ends the search after the evaluation in flight: the
// run is marked interrupted, the outputs written, and the resume command printed; the caller
// tells it by stop_requested().
Outcome run_optimize(OptimizeRequest request, const Console& console);

}  // namespace kforge::driver
