// The tools over runs: optimize (long-running: progress, cancellation, a budget capped by the
// operator's limits), report, export, import_kernelbench.
#include <atomic>
#include <chrono>
#include <filesystem>
#include <thread>
#include <fstream>
#include <sstream>

#include "common/stop_request.h"
#include "driver/export.h"
#include "driver/optimize.h"
#include "driver/python_tool.h"
#include "mcp/tool.h"
#include "report/model.h"
#include "report/write.h"
#include "search/loop.h"
#include "sol/sol_share.h"

namespace kforge::mcp {
namespace {

namespace fs = std::filesystem;

json str() { return json{{"type", "string"}}; }
json integer() { return json{{"type", "integer"}}; }
json path_arg(const std::string& what) {
    return json{{"type", "string"}, {"minLength", 1},
                {"description", what + ", a path inside the working folder"}};
}
json object(json properties, std::vector<std::string> required = {}) {
    json j{{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) j["required"] = required;
    return j;
}

// The driver's console as log lines on stderr (stdout carries the protocol only).
driver::Console console_to(const CallContext& ctx, const std::string& tool) {
    driver::Console c;
    c.print = [log = ctx.log, tool](const std::string& text) { log(tool + ": " + text); };
    c.note = [log = ctx.log, tool](const std::string& line) { log(tool + ": " + line); };
    return c;
}

std::optional<double> opt_number(const json& args, const char* name) {
    if (!args.contains(name)) return std::nullopt;
    return args[name].get<double>();
}

json optimize_result(const search::SearchState& st) {
    json j{{"run_id", st.run_id},
           {"problem", st.problem.name},
           {"device", st.device_name},
           {"simulated", st.simulated},
           {"stop_reason", st.stop_reason},
           {"rounds", st.progress.rounds}};
    j["best"] = nullptr;
    if (auto h = search::best_hash(st)) {
        const search::CandidateState& c = st.candidates.at(*h);
        const double t = c.full->median_ns;
        j["best"] = {{"program_hash", *h},
                     {"candidate_id", c.id},
                     {"proposer", c.proposer},
                     {"time_ns", t},
                     {"sol_percent", sol_percent(sol_share(t * 1e-9, st.bounds.time_fused_s))},
                     {"program_text", c.text}};
    }
    const search::TierCounts& n = st.counts;
    j["counts"] = {{"proposed", n.proposed}, {"compiled", n.compiled}, {"quick", n.quick},
                   {"full", n.full}, {"invalid", n.invalid}, {"profiled", n.profiled},
                   {"compiles", n.compiles}, {"free", n.free}};
    return j;
}

ToolResult optimize(Services& s, const json& args, CallContext& ctx) {
    const OperatorLimits& lim = s.ledger().limits();
    driver::OptimizeRequest r;
    auto spec = s.root().resolve("arguments.problem", args["problem"].get<std::string>(),
                                 Root::Access::kRead);
    if (!spec) return tool_error(spec.error());
    r.spec = spec->string();
    if (args.contains("program")) {
        auto p = s.root().resolve("arguments.program", args["program"].get<std::string>(),
                                  Root::Access::kRead);
        if (!p) return tool_error(p.error());
        r.program = p->string();
    }
    if (args.contains("out")) {
        auto p = s.root().resolve("arguments.out", args["out"].get<std::string>(),
                                  Root::Access::kWrite);
        if (!p) return tool_error(p.error());
        if (Status st = s.root().check_tree("arguments.out", *p); !st) return tool_error(st.error());
        r.out = p->string();
    }
    if (r.program.empty())
        if (Status st = s.root().check_beside("arguments.problem", *spec); !st)
            return tool_error(st.error());
    // The client's budget, capped by the operator's limits (what is left of them).
    const double wall = std::min(opt_number(args, "budget_wall_s").value_or(lim.optimize_wall_s),
                                 lim.optimize_wall_s);
    const double gpu = std::min(opt_number(args, "budget_gpu_s").value_or(1e300),
                                s.ledger().gpu_seconds_left());
    const int64_t compiles = std::min<int64_t>(
        args.contains("budget_compiles") ? args["budget_compiles"].get<int64_t>() : INT64_MAX,
        s.ledger().compiles_left());
    Status started = s.ledger().begin("optimize", true);
    if (!started) return tool_error(started.error());
    InFlight in_flight(s.ledger(), started);
    std::lock_guard device_lock(s.device_mutex());  // the search has the device to itself
    if (ctx.cancelled->load()) return tool_error("optimize", "cancelled before it started");

    r.session.backend.device = s.config().device;
    r.session.backend.gpu = s.config().gpu;
    r.session.backend.sim_model = s.config().sim_model;
    r.session.backend.worker_executable = s.config().kforge_executable;
    r.session.db = s.db_path();
    r.search.budget.wall_s = wall;
    r.search.budget.gpu_s = gpu;
    r.search.budget.compiles = compiles;
    if (args.contains("rounds")) r.search.stop.max_rounds = args["rounds"].get<int>();
    r.search.seed = args.value("seed", uint64_t{1});
    r.search.compile_cache_dir = s.config().compile_cache_dir;
    r.search.kforge_version = s.config().kforge_version;
    r.profile.kforge_executable = s.config().kforge_executable;
    r.profile.ncu = s.config().ncu;
    // Progress: one notification per search event, numbered (it only grows).
    auto events = std::make_shared<std::atomic<int64_t>>(0);
    auto progress = ctx.progress;
    r.search.log = [log = ctx.log](const std::string& line) { log("optimize: " + line); };
    r.search.on_event = [events, progress](const search::ProgressEvent& e) {
        std::string message;
        switch (e.kind) {
            case search::ProgressEvent::Kind::kEvaluation: {
                char b[160];
                std::snprintf(b, sizeof b, "candidate %s %s: %s", e.hash.substr(0, 12).c_str(),
                              std::string(to_string(e.tier)).c_str(),
                              std::string(to_string(e.status)).c_str());
                message = b;
                if (e.median_ns) message += ", " + std::to_string(*e.median_ns / 1e3) + " us";
                break;
            }
            case search::ProgressEvent::Kind::kRound: message = "round: " + e.text; break;
            case search::ProgressEvent::Kind::kHeartbeat: message = e.text; break;
        }
        progress(static_cast<double>(++*events), std::nullopt, message);
    };
    const search::SearchState* state = nullptr;
    std::optional<json> result;
    r.on_start = [&](const search::SearchState& st) {
        state = &st;
        progress(static_cast<double>(++*events), std::nullopt,
                 "run " + std::to_string(st.run_id) + " started on " + st.device_name);
    };
    r.log_done = [&] { if (state) result = optimize_result(*state); };
    r.resume_command = [](int64_t run) { return "optimize tool: resume of run " + std::to_string(run) +
                                                " is not offered over MCP"; };
    // Cancellation: the search's cooperative stop, asked for by a watcher of the call's flag
    // (the search has the device to itself, so the process-wide stop reaches only it).
    std::atomic<bool> done{false};
    std::thread watcher([&] {
        while (!done.load()) {
            if (ctx.cancelled->load()) {
                request_stop();
                return;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
    });
    const auto t0 = std::chrono::steady_clock::now();
    driver::Outcome outcome = driver::run_optimize(std::move(r), console_to(ctx, "optimize"));
    done = true;
    watcher.join();
    const bool cancelled = ctx.cancelled->load();
    clear_stop_request();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const bool simulated = result && (*result)["simulated"].get<bool>();
    s.ledger().charge(simulated ? 0 : elapsed,
                      // compiles paid (one per compile configuration), as --budget-compiles
                      // counts them: a launch-knob variant or a program's second tier is free
                      result ? (*result)["counts"]["compiles"].get<int64_t>() : 0);
    if (!result) return tool_error("optimize", outcome.message.empty() ? "the search did not start"
                                                                       : outcome.message);
    ToolResult tr;
    tr.structured = *result;
    tr.structured["status"] = cancelled ? "cancelled" : "finished";
    tr.structured["passed"] = outcome.exit == driver::Exit::kOk;
    tr.structured["message"] = outcome.message;
    tr.structured["budget"] = {{"wall_s", wall}, {"gpu_s", gpu}, {"compiles", compiles}};
    tr.structured["elapsed_s"] = elapsed;
    tr.text = "optimize run " + std::to_string((*result)["run_id"].get<int64_t>()) + ": " +
              tr.structured["status"].get<std::string>() + " (" +
              (*result)["stop_reason"].get<std::string>() + ")";
    return tr;
}

ToolResult report(Services& s, const json& args, CallContext&) {
    report::ReportOptions o;
    for (const json& id : args["runs"]) o.run_ids.push_back(id.get<int64_t>());
    auto out = s.root().resolve("arguments.out", args.value("out", std::string("report")),
                                Root::Access::kWrite);
    if (!out) return tool_error(out.error());
    if (Status st = s.root().check_tree("arguments.out", *out); !st) return tool_error(st.error());
    std::string list;
    for (const json& f : args.value("formats", json::array({"md", "json"})))
        list += (list.empty() ? "" : ",") + f.get<std::string>();
    auto formats = report::parse_report_formats(list);
    if (!formats) return tool_error("arguments.formats", formats.error().to_string());
    std::lock_guard lock(s.store_mutex());
    auto store = s.store();
    if (!store) return tool_error("store", store.error().to_string());
    auto model = report::build_report(**store, o);
    if (!model) return tool_error("arguments.runs", model.error().to_string());
    auto written = report::write_report(*model, out->string(), *formats);
    if (!written) return tool_error(written.error());
    ToolResult r;
    json files = json::array();
    for (const std::string& f : *written) files.push_back(s.root().relative(f));
    r.structured = json{{"runs", o.run_ids}, {"files", files}, {"simulated", model->simulated}};
    for (const std::string& f : *written)
        if (f.size() > 3 && f.substr(f.size() - 3) == ".md") {
            std::ifstream in(f);
            std::stringstream ss;
            ss << in.rdbuf();
            r.text = ss.str();
        }
    if (r.text.empty()) r.text = "report written: " + files.dump();
    return r;
}

ToolResult export_tool(Services& s, const json& args, CallContext& ctx) {
    driver::ExportRequest e;
    const bool run = args.contains("run"), source = args.contains("source");
    if (run == source) return tool_error("arguments.run", "give exactly one of run (a run id) and "
                                                          "source (a spec or an optimize out folder)");
    if (run) {
        e.source = std::to_string(args["run"].get<int64_t>());
    } else {
        auto p = s.root().resolve("arguments.source", args["source"].get<std::string>(),
                                  Root::Access::kRead);
        if (!p) return tool_error(p.error());
        e.source = p->string();
    }
    for (const char* field : {"spec", "program"}) {
        if (!args.contains(field)) continue;
        auto p = s.root().resolve(std::string("arguments.") + field,
                                  args[field].get<std::string>(), Root::Access::kRead);
        if (!p) return tool_error(p.error());
        (std::string(field) == "spec" ? e.spec : e.program) = p->string();
    }
    auto out = s.root().resolve("arguments.out", args["out"].get<std::string>(), Root::Access::kWrite);
    if (!out) return tool_error(out.error());
    if (Status st = s.root().check_tree("arguments.out", *out); !st) return tool_error(st.error());
    if (source && e.program.empty())
        if (Status st = s.root().check_beside("arguments.source", e.source); !st)
            return tool_error(st.error());
    e.out_dir = out->string();
    e.db = s.db_path();
    e.device = args.value("gpu_model", std::string());
    e.no_build = args.value("no_build", false);
    e.compile_cache_dir = s.config().compile_cache_dir;
    e.runtime_library = s.config().runtime_library;
    e.python = s.config().python;
    if (!e.no_build)
        if (Status st = s.ledger().check_compiles("export"); !st) return tool_error(st.error());
    driver::ExportResult result;
    {
        std::lock_guard lock(s.store_mutex());
        result = driver::run_export(e, console_to(ctx, "export"));
    }
    if (!e.no_build) s.ledger().charge(0, static_cast<int64_t>(result.exported.size()));
    if (result.outcome.exit != driver::Exit::kOk)
        return tool_error("export", result.outcome.message);
    ToolResult r;
    json exported = json::array();
    for (const auto& x : result.exported)
        exported.push_back({{"name", x.name}, {"folder", s.root().relative(x.folder)},
                            {"built", x.built}, {"model_new", x.model_new}});
    r.structured = json{{"out", s.root().relative(*out)}, {"exported", exported}};
    r.text = "exported " + std::to_string(exported.size()) + " program(s) to " +
             s.root().relative(*out);
    return r;
}

ToolResult import_kernelbench(Services& s, const json& args, CallContext&) {
    if (!s.config().allow_import)
        return tool_error("import_kernelbench",
                          "disabled by the operator: importing runs the KernelBench file's Python "
                          "(torch.fx tracing); start kforge mcp with --allow-import to enable it");
    auto out = s.root().resolve("arguments.out", args["out"].get<std::string>(), Root::Access::kWrite);
    if (!out) return tool_error(out.error());
    if (Status st = s.root().check_tree("arguments.out", *out); !st) return tool_error(st.error());
    std::vector<std::string> py{"--kforge", s.config().kforge_executable, "-o", out->string()};
    for (size_t i = 0; i < args["files"].size(); ++i) {
        auto p = s.root().resolve("arguments.files[" + std::to_string(i) + "]",
                                  args["files"][i].get<std::string>(), Root::Access::kRead);
        if (!p) return tool_error(p.error());
        py.push_back(p->string());
    }
    std::error_code ec;
    fs::create_directories(*out, ec);
    auto run = driver::run_python_tool(s.config().python, "kforge_py.import_kernelbench", py, true);
    if (!run) return tool_error("python", run.error().to_string());
    json specs = json::array();
    for (const auto& f : fs::directory_iterator(*out, ec))
        if (f.path().extension() == ".json") specs.push_back(s.root().relative(f.path()));
    ToolResult r;
    r.structured = json{{"exit_code", run->exit_code}, {"all_imported", run->exit_code == 0},
                        {"specs", specs}, {"log", run->stdout_text}};
    r.text = run->stdout_text;
    return r;
}

}  // namespace

std::vector<Tool> run_tools() {
    std::vector<Tool> t;
    t.push_back({"optimize", "Search for the fastest correct program",
                 "kforge's budget-aware search on one problem from a start program (given, beside "
                 "the spec, or synthesized): proposals, cost-model screening, evaluation, "
                 "profiling. Long-running: sends notifications/progress when the request has a "
                 "progressToken and stops (keeping what it found) on notifications/cancelled. The "
                 "budget you give is capped by the operator's limits.",
                 object({{"problem", path_arg("the problem spec (JSON)")},
                         {"program", path_arg("the start program (.kf)")},
                         {"out", path_arg("folder for best.kf, best.cu, plan.json, evidence.json")},
                         {"budget_wall_s", {{"type", "number"}, {"exclusiveMinimum", 0}}},
                         {"budget_gpu_s", {{"type", "number"}, {"exclusiveMinimum", 0}}},
                         {"budget_compiles", {{"type", "integer"}, {"minimum", 0}}},
                         {"rounds", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000}}},
                         {"seed", {{"type", "integer"}, {"minimum", 0}}}},
                        {"problem"}),
                 object({{"run_id", integer()}, {"status", str()}, {"stop_reason", str()},
                         {"simulated", {{"type", "boolean"}}},
                         {"best", {{"type", {"object", "null"}}}}, {"counts", {{"type", "object"}}},
                         {"budget", {{"type", "object"}}}},
                        {"run_id", "status", "stop_reason", "best", "counts", "budget"}),
                 optimize});
    t.push_back({"report", "Report runs",
                 "Writes Markdown / HTML / JSON reports of runs in the store (times, SOL shares, "
                 "gates, lineage) into a folder and returns the Markdown.",
                 object({{"runs", {{"type", "array"}, {"items", {{"type", "integer"}}},
                                   {"minItems", 1}}},
                         {"out", path_arg("the report folder (default report)")},
                         {"formats", {{"type", "array"},
                                      {"items", {{"type", "string"},
                                                 {"enum", {"md", "html", "json"}}}}}}},
                        {"runs"}),
                 object({{"runs", {{"type", "array"}}}, {"files", {{"type", "array"}}},
                         {"simulated", {{"type", "boolean"}}}},
                        {"runs", "files"}),
                 report});
    t.push_back({"export", "Export a program as a package",
                 "Exports a run's best program (or a spec with its program, or an optimize out "
                 "folder) as a folder with the runtime package, a PyTorch custom op and a "
                 "KernelBench ModelNew.",
                 object({{"run", {{"type", "integer"}, {"minimum", 1}}},
                         {"source", path_arg("a spec or an optimize out folder")},
                         {"spec", path_arg("the spec of an optimize out folder")},
                         {"program", path_arg("the program of a spec source")},
                         {"out", path_arg("the output folder")},
                         {"gpu_model", str()},
                         {"no_build", {{"type", "boolean"}}}},
                        {"out"}),
                 object({{"out", str()}, {"exported", {{"type", "array"}}}}, {"out", "exported"}),
                 export_tool});
    t.push_back({"import_kernelbench", "Import KernelBench problems",
                 "Turns KernelBench-format PyTorch modules (class Model, get_inputs, "
                 "get_init_inputs) into problem specs, each checked numerically against PyTorch. "
                 "Runs the files' Python in a limited child process, so the operator must enable "
                 "it (kforge mcp --allow-import).",
                 object({{"files", {{"type", "array"}, {"items", path_arg("a KernelBench .py file")},
                                    {"minItems", 1}, {"maxItems", 200}}},
                         {"out", path_arg("folder for the specs")}},
                        {"files", "out"}),
                 object({{"exit_code", integer()}, {"all_imported", {{"type", "boolean"}}},
                         {"specs", {{"type", "array"}}}},
                        {"exit_code", "all_imported", "specs"}),
                 import_kernelbench});
    return t;
}

}  // namespace kforge::mcp
