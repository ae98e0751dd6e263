// `kforge suite DIR [the options of optimize]`: one search per problem spec in DIR (from the
// start program beside it, or from one the fusion planner synthesizes), one shared budget; every
// round goes to the problem with the largest expected gain (SOL headroom x recent improvement),
// problems near SOL are deprioritized with the reason printed (driver/suite.h). --llm adds the
// LLM proposer, one for the whole suite (its run budget is the suite's). --json: one object with
// each problem's run (id, status, best full-tier time) read back from the store. --progress as
// optimize's (cli/progress.h): on a terminal the suite's status line (the problem in progress,
// problems done, the best speedup so far, the suite's budget used and left) under the lines of
// the start phase and the rounds; piped, whole lines; json, one object per event and a "result".
// Exit 0 when every problem has a passing candidate, 1 otherwise, 128 + signal when stopped.
#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/cmd_optimize.h"
#include "cli/commands.h"
#include "cli/console.h"
#include "cli/progress.h"
#include "common/stop_request.h"
#include "driver/suite.h"
#include "store/store.h"

namespace kforge::cli {
namespace {

// The newest run id in the store (0: none, or no store yet).
int64_t newest_run(const std::string& db) {
    std::error_code ec;
    if (!std::filesystem::exists(db, ec)) return 0;
    auto store = open_store(db);
    if (!store) return 0;
    auto n = store->db().query_text("SELECT coalesce(max(id), 0) FROM runs");
    return n ? std::stoll(*n) : 0;
}

// The suite's runs from the store: those made since `before`, and those of this suite's label
// (resumed ones), the newest per problem.
nlohmann::ordered_json suite_json(const OptimizeArgs& a, int64_t before, int rc) {
    nlohmann::ordered_json j{{"suite", a.spec}, {"exit", rc}};
    const std::string label = std::filesystem::path(a.spec).filename().string();
    std::map<std::string, nlohmann::ordered_json> by_problem;
    if (auto store = open_store(a.db); store) {
        if (auto runs = store->list_runs(); runs) {
            for (const RunSummary& s : *runs) {
                auto run = store->get_run(s.id);
                const bool ours = s.id > before ||
                                  (run && !label.empty() && run->suite && *run->suite == label);
                if (!ours) continue;
                by_problem[s.problem] = {
                    {"run", s.id},
                    {"problem", s.problem},
                    {"status", std::string(to_string(s.status))},
                    {"candidates", s.candidates},
                    {"best_time_ns",
                     s.best_time_ns ? nlohmann::ordered_json(*s.best_time_ns) : nullptr}};
            }
        }
    }
    j["runs"] = nlohmann::ordered_json::array();
    for (auto& [name, run] : by_problem) j["runs"].push_back(std::move(run));
    j["out"] = a.out.empty() ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(a.out);
    return j;
}

int run_suite(const OptimizeArgs& a) {
    const char* cmd = "suite";
    install_stop_handlers();  // Ctrl-C: stop after the evaluation in flight (a second: now)
    std::FILE* progress_out = a.json ? stderr : stdout;
    auto mode = progress_mode_flag("suite", a.progress, progress_out);
    if (!mode) return kExitUserError;
    auto session = session_options(a);
    if (!session) return exit_code_of(driver::fail(driver::Exit::kUserError,
                                                   session.error().to_string()), cmd);
    auto printer = std::make_shared<ProgressPrinter>(*mode, progress_out);
    driver::SuiteRequest r;
    r.dir = a.spec;
    r.out = a.out;
    r.session = std::move(*session);
    r.search = search_options(a);
    r.search.allocation = search::suite_allocation_from_string(a.allocation)
                              .value_or(search::SuiteAllocation::kSolHeadroom);
    auto limits = std::make_shared<search::SearchOptions>(r.search);  // what the display reads
    r.search.log = [printer](const std::string& line) { printer->line(line); };
    r.search.on_event = [printer, limits](const search::ProgressEvent& e) {
        printer->event(e, *limits);
    };
    r.on_progress = [printer, limits](const search::SuiteProgress& p) {
        printer->suite(p, *limits);
    };
    r.profile = profile_settings(a);
    r.export_to = export_request(a);
    // each line as it comes (the start phase's, each round's): above the status line on a
    // terminal, else as is, also into a pipe or a log file (stderr under --json / json progress)
    driver::Console console = console_for(cmd);
    std::FILE* text_out = !a.json && *mode != ProgressMode::kJson ? stdout : stderr;
    console.print = [printer, text_out](const std::string& text) {
        if (text.empty()) return;
        if (printer->mode() == ProgressMode::kTty) {
            printer->line(text.back() == '\n' ? text.substr(0, text.size() - 1) : text);
            return;
        }
        std::fputs(text.c_str(), text_out);
        std::fflush(text_out);
    };
    console.note = [printer](const std::string& line) {
        printer->line("kforge suite: " + line, stderr);
    };
    const bool json_result = a.json || *mode == ProgressMode::kJson;
    const int64_t before = json_result ? newest_run(a.db) : 0;
    const driver::Outcome outcome = driver::run_suite(std::move(r), console);
    printer->finish();
    int rc = exit_code_of(outcome, cmd);
    // a stop request (Ctrl-C, SIGTERM) ended it early: 128 + the signal, as a shell expects
    if (stop_requested()) rc = interrupted_exit_code();
    if (json_result &&
        (outcome.exit == driver::Exit::kOk || outcome.exit == driver::Exit::kFailure)) {
        nlohmann::ordered_json j = suite_json(a, before, rc);
        if (stop_requested())
            j["error"] = "interrupted: the same command resumes the suite's unfinished runs";
        else if (rc != kExitOk && !outcome.message.empty()) j["error"] = outcome.message;
        else if (rc != kExitOk) j["error"] = "not every problem has a passing candidate";
        if (a.json) {
            print_json(j);
        } else {
            nlohmann::ordered_json e{{"event", "result"}};
            e.update(j);
            printer->json(e);
        }
    } else if (*mode == ProgressMode::kJson && !a.json) {
        printer->json({{"event", "error"}, {"error", outcome.message}, {"exit", rc}});
    }
    return rc;
}

}  // namespace

void register_suite(CLI::App& app) {
    auto args = std::make_shared<OptimizeArgs>();
    auto* cmd = app.add_subcommand("suite", "optimize every problem of a folder under one budget");
    cmd->add_option("dir", args->spec, "folder of problem specs (start programs beside them "
                                       "optional)")->required();
    add_optimize_options(cmd, *args);
    cmd->add_option("--allocation", args->allocation,
                    "how rounds are given: sol (SOL headroom x recent gain, the default) or "
                    "uniform (fewest rounds first: the benchmark's baseline)")
        ->check(CLI::IsMember({"sol", "uniform"}));
    cmd->add_option("--progress", args->progress,
                    "auto (the suite's status line on a terminal, plain lines otherwise), tty, "
                    "plain, json (one JSON object per event) or none");
    cmd->callback([args] { exit_code() = run_suite(*args); });
}

}  // namespace kforge::cli
