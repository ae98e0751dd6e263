// `kforge baseline` as a library call (driver/baseline.h).
#include "driver/baseline.h"

#include <filesystem>

#include "eval/evaluate.h"
#include "problem/spec.h"
#include "report/baseline_store.h"
#include "store/store.h"

namespace kforge::driver {
namespace {

// The newest run over `problem` (a `kforge optimize` or suite run), or none.
std::optional<int64_t> latest_run_of(const std::vector<RunSummary>& runs,
                                     const std::string& problem) {
    std::optional<int64_t> best;
    for (const RunSummary& r : runs)
        if (r.problem == problem && (!best || r.id > *best)) best = r.id;
    return best;
}

BaselineResult failed(Exit exit, std::string message) {
    return {fail(exit, std::move(message)), nullptr};
}

}  // namespace

BaselineResult run_baselines(const BaselineRequest& a) {
    std::vector<Problem> problems;
    for (const std::string& path : a.specs) {
        auto p = load_problem(path);
        if (!p) return failed(Exit::kUserError, path + ": " + p.error().to_string());
        problems.push_back(std::move(*p));
    }
    std::vector<std::string> args{"--modes", a.modes, "--iters", std::to_string(a.iters),
                                  "--warmup", std::to_string(a.warmup), "--gpu",
                                  std::to_string(a.gpu)};
    if (a.fp32_strict) args.push_back("--fp32-strict");
    args.insert(args.end(), a.specs.begin(), a.specs.end());
    auto run = run_python_tool(a.python, "kforge_py.baseline", args, true);
    if (!run) return failed(Exit::kEnvironment, run.error().to_string());
    // the Python side printed why (no GPU or PyTorch: 3, bad input: 2)
    if (run->exit_code == 3) return failed(Exit::kEnvironment, "");
    if (run->exit_code == 2) return failed(Exit::kUserError, "");
    auto doc = nlohmann::json::parse(run->stdout_text, nullptr, false);
    if (doc.is_discarded() || !doc.contains("results"))
        return failed(Exit::kEnvironment, "the Python side exited with " +
                                              std::to_string(run->exit_code) + " and no result");
    std::error_code ec;
    auto parent = std::filesystem::path(a.db).parent_path();
    if (!parent.empty()) std::filesystem::create_directories(parent, ec);
    auto store = open_store(a.db);
    if (!store) return failed(Exit::kUserError, store.error().to_string());
    std::optional<int64_t> run_id = a.run_id;
    std::vector<RunSummary> runs;
    if (a.latest_run) {
        auto listed = store->list_runs();
        if (!listed) return failed(Exit::kUserError, listed.error().to_string());
        runs = std::move(*listed);
    }
    for (size_t i = 0; i < problems.size() && i < doc["results"].size(); ++i) {
        report::add_baseline_stats(doc["results"][i]);
        if (a.latest_run) run_id = latest_run_of(runs, problems[i].name);
        auto stored = report::store_baseline(*store, problems[i], eval::shapes_key(problems[i]),
                                             doc["device"], doc, doc["results"][i], run_id);
        if (!stored) return failed(Exit::kUserError, stored.error().to_string());
        doc["results"][i]["stored"] = {{"db", a.db}, {"run_id", stored->run_id},
                                       {"evaluation_id", stored->evaluation_id},
                                       {"candidate_id", stored->candidate_id}};
    }
    return {{run->exit_code == 0 ? Exit::kOk : Exit::kFailure, "", false}, std::move(doc)};
}

}  // namespace kforge::driver
