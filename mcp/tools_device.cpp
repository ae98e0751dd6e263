// The tools that build or run a candidate: compile, evaluate, profile. Each asks the operator's
// limits first (in flight, GPU seconds, compiles) and charges what it spent after; evaluate and
// profile take turns on the device.
#include <chrono>
#include <filesystem>

#include "builder/build.h"
#include "common/atomic_file.h"
#include "driver/profile_hook.h"
#include "driver/search_session.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "mcp/tool.h"
#include "sol/bounds.h"
#include "sol/calibration.h"
#include "sol/device.h"
#include "sol/sol_share.h"
#include "sol/target.h"

namespace kforge::mcp {
namespace {

namespace fs = std::filesystem;

json str() { return json{{"type", "string"}}; }
json path_arg(const std::string& what) {
    return json{{"type", "string"}, {"minLength", 1},
                {"description", what + ", a path inside the working folder"}};
}
json object(json properties, std::vector<std::string> required = {}) {
    json j{{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) j["required"] = required;
    return j;
}
// problem + program | program_text, and `more`.
json candidate_args(json more) {
    json p{{"problem", path_arg("the problem spec (JSON)")},
           {"program", path_arg("the program (.kf, kernel language)")},
           {"program_text", {{"type", "string"}, {"minLength", 1},
                             {"description", "the program's text (instead of program)"}}}};
    p.update(more);
    return object(p, {"problem"});
}
double seconds_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

ToolResult compile(Services& s, const json& args, CallContext&) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto program = load_program_arg(s, args);
    if (!program) return tool_error(program.error());
    std::optional<fs::path> out;
    if (args.contains("out")) {
        auto p = s.root().resolve("arguments.out", args["out"].get<std::string>(),
                                  Root::Access::kWrite);
        if (!p) return tool_error(p.error());
        if (Status st = s.root().check_tree("arguments.out", *p); !st) return tool_error(st.error());
        out = *p;
    }
    const bool no_build = args.value("no_build", false);
    auto target = find_target(args.value("gpu_model", s.config().gpu_model));
    if (!target) return tool_error("arguments.gpu_model", target.error().message);
    if (!no_build)
        if (Status st = s.ledger().check_compiles("compile"); !st) return tool_error(st.error());

    builder::BuildOptions o;
    o.file_name = program->file;
    o.no_build = true;
    o.compile_cache_dir = s.config().compile_cache_dir;
    builder::BuiltCandidate built = builder::build(program->text, *problem, *target, o);
    json errors = json::array();
    for (const Error& e : built.errors) errors.push_back(error_json(e));
    ToolResult r;
    r.structured = json{{"status", std::string(builder::to_string(built.status))},
                        {"message", built.message},
                        {"program_hash", built.program_hash},
                        {"arch", target->arch},
                        {"errors", errors},
                        {"files", json::array()},
                        {"compiled", false},
                        {"kernels", json::array()}};
    if (!built.ok()) {
        r.text = "not lowered: " + built.message;
        return r;  // a program that does not check is the answer, not a tool failure
    }
    if (out) {
        std::error_code ec;
        fs::create_directories(*out, ec);
        const codegen::Lowered& l = built.lowered;
        for (auto [name, text] : {std::pair{fs::path(l.plan.source_file), l.cuda_source},
                                  {fs::path("plan.json"), codegen::to_json(l.plan).dump(2) + "\n"}}) {
            if (auto st = write_file_atomic(*out / name, text); !st) return tool_error(st.error());
            r.structured["files"].push_back(s.root().relative(*out / name));
        }
    }
    if (!no_build) {
        builder::compile_lowered(built);
        s.ledger().charge(0, 1);
        r.structured["status"] = std::string(builder::to_string(built.status));
        r.structured["message"] = built.message;
        if (built.compiled) {
            const compile::CompileResult& c = *built.compiled;
            r.structured["compiled"] = built.status == builder::BuildStatus::kBuilt;
            r.structured["compile_status"] = std::string(compile::to_string(c.status));
            r.structured["cache_hit"] = c.cache_hit;
            r.structured["time_compile_s"] = c.time_compile_ns / 1e9;
            if (c.status != compile::CompileStatus::kOk) r.structured["log"] = c.log;
            for (const auto& k : c.kernels)
                r.structured["kernels"].push_back(
                    {{"name", k.name}, {"registers", k.registers}, {"smem_bytes", k.smem_bytes},
                     {"spill_stores_bytes", k.spill_stores_bytes},
                     {"spill_loads_bytes", k.spill_loads_bytes}});
        }
    }
    r.text = "compile: " + r.structured["status"].get<std::string>() +
             (built.message.empty() ? "" : " - " + built.message);
    return r;
}

ToolResult evaluate(Services& s, const json& args, CallContext& ctx) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto program = load_program_arg(s, args);
    if (!program) return tool_error(program.error());
    auto tier = eval_tier_from_string(args.value("tier", "quick"));
    if (!tier) return tool_error("arguments.tier", "expected static, compile, quick or full");
    Status started = s.ledger().begin("evaluate", false);
    if (!started) return tool_error(started.error());
    InFlight in_flight(s.ledger(), started);
    std::lock_guard device_lock(s.device_mutex());
    if (ctx.cancelled->load()) return tool_error("evaluate", "cancelled before it started");
    auto backend = s.backend(ctx.log);
    if (!backend) return tool_error(backend.error());
    const eval::DeviceInfo& info = (*backend)->info();

    eval::EvalRequest request;
    request.problem = *problem;
    request.program_text = program->text;
    request.program_file = program->file;
    request.tier = *tier;
    request.seed = args.value("seed", uint64_t{1});
    request.compile_cache_dir = s.config().compile_cache_dir;
    request.proposer = "agent:" + (ctx.client.empty() ? std::string("unknown") : ctx.client);
    std::lock_guard store_lock(s.store_mutex());
    auto store = s.store();
    if (!store) return tool_error("store", store.error().to_string());
    auto run = s.agent_run(**store, *problem, info, request.proposer.substr(6));
    if (!run) return tool_error("store", run.error().to_string());
    request.store = *store;
    request.run_id = *run;
    const auto t0 = std::chrono::steady_clock::now();
    eval::EvalReport report = eval::evaluate((*backend)->evaluator(), request);
    // GPU seconds: the evaluation's wall time on a GPU (compile included); none on the simulated
    // device, where nothing runs on a GPU.
    if (!report.cached)
        s.ledger().charge(info.simulated ? 0 : seconds_since(t0), info.simulated ? 0 : 1);
    if (report.environment_error) return tool_error("device", report.message);

    ToolResult r;
    r.structured = json::parse(eval::to_json(report).dump());
    r.structured["run_id"] = *run;
    r.structured["proposer"] = request.proposer;
    r.structured["candidate_id"] = nullptr;
    if (auto list = (*store)->list_candidates(*run))
        for (const auto& c : *list)
            if (c.content_hash == report.program_hash) r.structured["candidate_id"] = c.id;
    json not_checked = json::object();
    for (const eval::GateOutcome& g : report.gates)
        if (g.evidence.is_object() && g.evidence.contains("not_checked"))
            not_checked[g.gate] = json::parse(g.evidence["not_checked"].dump());
    r.structured["not_checked"] = not_checked;
    r.structured["sol_percent"] = nullptr;
    if (report.stats.count > 0) {
        auto spec = find_device(info.datasheet_key);
        if (spec) {
            auto b = compute_bounds(*problem, effective_ceilings(*spec, std::nullopt));
            if (b)
                r.structured["sol_percent"] =
                    sol_percent(sol_share(report.stats.median_ns * 1e-9, b->time_fused_s));
        }
    }
    r.text = problem->name + (report.simulated ? " (simulated)" : "") + ": " +
             std::string(to_string(report.status));
    if (report.stats.count > 0)
        r.text += ", median " + std::to_string(report.stats.median_ns / 1e3) + " us" +
                  (report.simulated ? " (model estimate)" : "");
    if (!report.message.empty()) r.text += " - " + report.message;
    return r;
}

ToolResult profile(Services& s, const json& args, CallContext& ctx) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto program = load_program_arg(s, args);
    if (!program) return tool_error(program.error());
    auto parsed = dsl::parse_program(program->text, program->file);
    if (!parsed) return tool_error(parsed.error());
    if (parsed->problem != problem->name)
        return tool_error("arguments.program", "the program is for problem \"" + parsed->problem +
                                                   "\", the spec defines \"" + problem->name + "\"");
    Status started = s.ledger().begin("profile", true);
    if (!started) return tool_error(started.error());
    InFlight in_flight(s.ledger(), started);
    std::lock_guard device_lock(s.device_mutex());
    auto backend = s.backend(ctx.log);
    if (!backend) return tool_error(backend.error());
    const eval::DeviceInfo& info = (*backend)->info();
    auto spec = find_device(info.datasheet_key);
    if (!spec) return tool_error("device", spec.error().message);
    auto bounds = compute_bounds(*problem, effective_ceilings(*spec, std::nullopt));
    if (!bounds) return tool_error(bounds.error());

    search::SearchState state;
    state.problem = *problem;
    state.bounds = *bounds;
    state.simulated = info.simulated;
    state.device_name = info.name;
    if (args.contains("time_us")) {  // the candidate's measured time: its SOL fraction
        search::CandidateState c;
        eval::TimingStats t;
        t.count = 1;
        t.median_ns = args["time_us"].get<double>() * 1e3;
        c.quick = t;
        state.candidates[dsl::program_hash(*parsed)] = c;
    }
    driver::ProfileHookOptions o;
    o.use_ncu = !info.simulated;
    o.ncu = s.config().ncu;
    o.kforge_executable = s.config().kforge_executable;
    o.gpu = s.config().gpu;
    o.compile_cache_dir = s.config().compile_cache_dir;
    o.work_dir = driver::work_dir_for("mcp-profile");
    std::string note;
    o.log = [&note](const std::string& line) { note = line; };
    auto hook = driver::make_profile_hook(
        [&state](const std::string& name) { return name == state.problem.name ? &state : nullptr; },
        o);
    const auto t0 = std::chrono::steady_clock::now();
    Diagnosis d = hook(dsl::print_canonical(*parsed));
    s.ledger().charge(info.simulated ? 0 : seconds_since(t0), 1);
    std::error_code ec;
    if (!o.work_dir.empty()) fs::remove_all(o.work_dir, ec);
    if (d.kernels.empty()) return tool_error("profile", "no diagnosis: " + note);
    ToolResult r;
    json kernels = json::array();
    for (const auto& k : d.kernels) kernels.push_back(json::parse(to_json(k).dump()));
    const bool from_ncu = d.kernels.front().from_profile;
    r.structured = json{{"problem", problem->name},
                        {"program_hash", dsl::program_hash(*parsed)},
                        {"device", info.name},
                        {"simulated", info.simulated},
                        {"source", from_ncu ? "ncu" : "ptxas+sol fallback"},
                        {"note", note},
                        {"kernels", kernels},
                        {"ptxas_summary", d.ptxas_summary}};
    r.text = note;
    return r;
}

}  // namespace

std::vector<Tool> device_tools() {
    std::vector<Tool> t;
    json gpu_model{{"type", "string"}, {"description", "GPU of kforge's device table to build for"}};
    t.push_back({"compile", "Lower and compile a program",
                 "Lowers a checked program to CUDA (one .cu and a launch plan) and, unless "
                 "no_build, compiles it (nvcc/NVRTC through the compile cache) and returns the "
                 "ptxas report per kernel. With `out` the source and plan are written there. Counts "
                 "against the operator's compile limit.",
                 candidate_args({{"out", path_arg("folder for kernels.cu and plan.json")},
                                 {"no_build", {{"type", "boolean"}}},
                                 {"gpu_model", gpu_model}}),
                 object({{"status", str()}, {"program_hash", str()}, {"arch", str()},
                         {"errors", {{"type", "array"}}}, {"files", {{"type", "array"}}},
                         {"compiled", {{"type", "boolean"}}}, {"kernels", {{"type", "array"}}}},
                        {"status", "errors", "files", "compiled", "kernels"}),
                 compile});
    t.push_back({"evaluate", "Evaluate a program through every gate",
                 "Runs a program through kforge's gated pipeline on the server's device: static "
                 "check, build, correctness (small, hidden and full shapes against fp64 "
                 "references), anti-gaming, timing. Returns the verdict with every gate's evidence, "
                 "the timing statistics and the SOL share. The candidate is recorded in the store "
                 "with you (the client) as its proposer. A candidate that fails is a result, not "
                 "an error.",
                 candidate_args({{"tier", {{"type", "string"},
                                           {"enum", {"static", "compile", "quick", "full"}},
                                           {"description", "default quick"}}},
                                 {"seed", {{"type", "integer"}, {"minimum", 0}}}}),
                 object({{"status", str()}, {"simulated", {{"type", "boolean"}}},
                         {"tier", str()}, {"gates", {{"type", "array"}}},
                         {"run_id", {{"type", "integer"}}},
                         {"candidate_id", {{"type", {"integer", "null"}}}},
                         {"proposer", str()},
                         {"sol_percent", {{"type", {"number", "null"}}}}},
                        {"status", "simulated", "tier", "gates", "run_id", "proposer"}),
                 evaluate});
    t.push_back({"profile", "Bottleneck diagnosis",
                 "Profiles a program (Nsight Compute on the GPU; on the simulated device, or "
                 "without ncu, the ptxas report plus the roofline) and returns per kernel the "
                 "bottleneck class, its evidence and the knob moves that address it.",
                 candidate_args({{"time_us", {{"type", "number"}, {"exclusiveMinimum", 0},
                                              {"description", "the program's measured time"}}}}),
                 object({{"source", str()}, {"simulated", {{"type", "boolean"}}},
                         {"kernels", {{"type", "array"}}}, {"ptxas_summary", str()}},
                        {"source", "simulated", "kernels"}),
                 profile});
    return t;
}

}  // namespace kforge::mcp
