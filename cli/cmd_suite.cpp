// `kforge suite DIR [the options of optimize]`: one search per problem spec in DIR (from the
// start program beside it, or from one the fusion planner synthesizes), one shared budget; every
// round goes to the problem with the largest expected gain (SOL headroom x recent improvement),
// problems near SOL are deprioritized with the reason printed (driver/suite.h). --llm adds the
// LLM proposer, one for the whole suite (its run budget is the suite's). Exit 0 when every
// problem has a passing candidate, 1 otherwise.
#include "cli/cmd_optimize.h"
#include "cli/commands.h"
#include "cli/console.h"
#include "driver/suite.h"

namespace kforge::cli {
namespace {

int run_suite(const OptimizeArgs& a) {
    const char* cmd = "suite";
    auto session = session_options(a);
    if (!session) return exit_code_of(driver::fail(driver::Exit::kUserError,
                                                   session.error().to_string()), cmd);
    driver::SuiteRequest r;
    r.dir = a.spec;
    r.out = a.out;
    r.session = std::move(*session);
    r.search = search_options(a);
    r.profile = profile_settings(a);
    return exit_code_of(driver::run_suite(std::move(r), console_for(cmd)), cmd);
}

}  // namespace

void register_suite(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("suite", "optimize every problem of a folder under one budget");
    cmd->add_option("dir", args->spec, "folder of problem specs (start programs beside them "
                                       "optional)")->required();
    add_optimize_options(cmd, *args);
    cmd->callback([args] { exit_code() = run_suite(*args); });
}

}  // namespace kforge::cli
