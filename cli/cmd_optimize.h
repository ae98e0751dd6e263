// Shared by `kforge optimize` (cmd_optimize.cpp) and `kforge suite` (cmd_suite.cpp): their
// flags, and the driver's options made from them (driver/optimize.h, driver/suite.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "driver/export.h"
#include "driver/search_session.h"
#include "search/loop.h"

namespace kforge::cli {

struct OptimizeArgs {
    std::string spec;
    std::string program;
    std::optional<double> budget_wall_s, budget_gpu_s;
    std::optional<int64_t> budget_compiles;
    std::optional<int> max_rounds, patience;
    std::optional<double> within_sol_percent;
    std::string device = "auto";
    std::string sim_model = "h200";
    std::string db = ".kforge/kforge.db";
    std::optional<int64_t> resume;
    uint64_t seed = 1;
    std::string out;
    std::vector<std::string> proposers = {"diagnosis", "parameter"};
    double promote_ratio = 1.0 / 3.0;
    int per_round = 12;
    std::string llm;                      // LLM config file; empty: no LLM proposer
    std::optional<int64_t> budget_tokens;  // LLM tokens (in + out) for the run
    std::optional<double> budget_cost;     // LLM cost (USD) for the run
    int profile_top = 2;                  // best candidates diagnosed per round; 0: none
    std::string ncu = "ncu";
    std::string progress = "auto";        // auto, tty, plain, json, none (cli/progress.h)
    bool json = false;                    // one JSON object with the result on stdout
    std::string export_dir;               // --export DIR: the best program(s) exported there
    std::string export_kernelbench;       // --export-kernelbench FILE|DIR: model_new.py too
    std::string allocation = "sol";       // suite --allocation: sol or uniform (search/budget.h)
};

// The wall-clock budget of `optimize` when no budget or round limit is given (seconds).
inline constexpr double kDefaultWallBudgetS = 600;

// Adds the options both commands share.
void add_optimize_options(CLI::App* cmd, OptimizeArgs& a);
// Budgets, stops, proposers, the compile cache ($KFORGE_CACHE_DIR...) and the progress log
// (one line per round; overwritten in place on a terminal).
search::SearchOptions search_options(const OptimizeArgs& a);
// --device, --sim-model, --db and --llm (its key from the environment); a user error for a
// --device other than cuda, sim or auto.
Expected<driver::SearchSessionOptions> session_options(const OptimizeArgs& a);
// --profile-top and --ncu (the hook is driver/profile_hook.h).
driver::ProfileSettings profile_settings(const OptimizeArgs& a);
// --export DIR (and --export-kernelbench): the export of the best program(s) once the search
// ends, built for the device the run used; none without --export.
std::optional<driver::ExportRequest> export_request(const OptimizeArgs& a);

}  // namespace kforge::cli
