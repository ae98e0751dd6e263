// `kforge suite DIR [the options of optimize]`: one search per problem spec in DIR (from the
// start program beside it, or from one the fusion planner synthesizes), one shared budget; every
// round goes to the problem with the largest expected gain (SOL headroom x recent improvement),
// problems near SOL are deprioritized with the reason printed (driver/suite.h). --llm adds the
// LLM proposer, one for the whole suite (its run budget is the suite's). Exit 0 when every
// problem has a passing candidate, 1 otherwise.
#include <cstdio>

#include "cli/cmd_optimize.h"
#include "cli/commands.h"
#include "cli/console.h"
#include "common/stop_request.h"
#include "driver/suite.h"

namespace kforge::cli {
namespace {

int run_suite(const OptimizeArgs& a) {
    const char* cmd = "suite";
    install_stop_handlers();  // Ctrl-C: stop after the evaluation in flight (a second: now)
    auto session = session_options(a);
    if (!session) return exit_code_of(driver::fail(driver::Exit::kUserError,
                                                   session.error().to_string()), cmd);
    driver::SuiteRequest r;
    r.dir = a.spec;
    r.out = a.out;
    r.session = std::move(*session);
    r.search = search_options(a);
    r.profile = profile_settings(a);
    // each line as it comes (the start phase's, each round's), also into a pipe or a log file
    driver::Console console = console_for(cmd);
    console.print = [print = console.print](const std::string& text) {
        print(text);
        std::fflush(stdout);
    };
    const int rc = exit_code_of(driver::run_suite(std::move(r), console), cmd);
    // a stop request (Ctrl-C, SIGTERM) ended it early: 128 + the signal, as a shell expects
    return stop_requested() ? interrupted_exit_code() : rc;
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
