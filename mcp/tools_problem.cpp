// The device-free tools: check_problem, sol, language_reference, check_program.
#include "builder/build.h"
#include "mcp/tool.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "sol/bounds.h"
#include "sol/calibration.h"
#include "sol/device.h"
#include "sol/sol_share.h"
#include "sol/target.h"

namespace kforge::mcp {
namespace {

json str() { return json{{"type", "string"}}; }
json num() { return json{{"type", "number"}}; }
json path_arg(const std::string& what) {
    return json{{"type", "string"}, {"minLength", 1},
                {"description", what + ", a path inside the working folder"}};
}
json gpu_model_arg() {
    return json{{"type", "string"},
                {"description", "GPU of kforge's device table (" + known_device_names() +
                                    "); default: the server's"}};
}
json object(json properties, std::vector<std::string> required = {}) {
    json j{{"type", "object"}, {"properties", std::move(properties)}};
    if (!required.empty()) j["required"] = required;
    return j;
}
json work_json(const WorkCount& w) {
    return json{{"flops_matrix", w.flops_matrix}, {"flops_other", w.flops_other},
                {"bytes_fused", w.bytes_fused}, {"bytes_unfused", w.bytes_unfused}};
}
json program_args() {
    return json{{"program", path_arg("the program (.kf, kernel language)")},
                {"program_text", {{"type", "string"}, {"minLength", 1},
                                  {"description", "the program's text (instead of program)"}}}};
}

std::string gpu_model_of(const Services& s, const json& args) {
    return args.contains("gpu_model") ? args["gpu_model"].get<std::string>() : s.config().gpu_model;
}

ToolResult check_problem(Services& s, const json& args, CallContext&) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto work = count_work(*problem);
    if (!work) return tool_error(work.error());
    ToolResult r;
    r.structured = json{{"name", problem->name},
                        {"policy", std::string(to_string(problem->policy))},
                        {"spec", json::parse(problem_to_json(*problem).dump())},
                        {"work", work_json(*work)}};
    r.text = problem->name + ": ok, policy " + std::string(to_string(problem->policy));
    return r;
}

ToolResult sol(Services& s, const json& args, CallContext&) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto spec = find_device(gpu_model_of(s, args));
    if (!spec) return tool_error("arguments.gpu_model", spec.error().message);
    BoundsOptions options;
    if (args.contains("policy")) options.policy = policy_from_string(args["policy"].get<std::string>());
    const Ceilings ceilings = effective_ceilings(*spec, std::nullopt);
    auto b = compute_bounds(*problem, ceilings, options);
    if (!b) return tool_error(b.error());
    ToolResult r;
    r.structured = json{{"problem", problem->name},
                        {"gpu_model", b->device},
                        {"policy", std::string(to_string(b->policy))},
                        {"bound_kind", std::string(to_string(b->kind))},
                        {"compute_unit", b->compute_unit},
                        {"time_sol_s", b->time_fused_s},
                        {"time_unfused_s", b->time_unfused_s},
                        {"time_compute_s", b->time_compute_s},
                        {"time_memory_fused_s", b->time_memory_fused_s},
                        {"gaming_threshold_s", b->gaming_threshold_s},
                        {"arithmetic_intensity", b->arithmetic_intensity},
                        {"ridge_intensity", matrix_peak(*b, ceilings) / ceilings.dram_bytes_per_s},
                        {"work", work_json(b->work)},
                        {"headroom", nullptr}};
    if (args.contains("time_us")) {
        const double t = args["time_us"].get<double>() * 1e-6;
        const SolShare share = sol_share(t, b->time_fused_s);
        r.structured["headroom"] = json{{"time_s", t},
                                        {"time_over_sol", headroom(t, *b)},
                                        {"sol_percent", sol_percent(share)},
                                        {"under_sol_bound", share.under_bound},
                                        {"below_gaming_threshold", below_gaming_threshold(t, *b)}};
    }
    char line[256];
    std::snprintf(line, sizeof line, "%s on %s: SOL %.4g us (%s-bound)", problem->name.c_str(),
                  b->device.c_str(), b->time_fused_s * 1e6, std::string(to_string(b->kind)).c_str());
    r.text = line;
    return r;
}

ToolResult language_reference(Services&, const json&, CallContext&) {
    ToolResult r;
    r.text = language_reference_text();
    r.structured = json{{"uri", kReferenceUri}, {"text", r.text}};
    return r;
}

ToolResult check_program(Services& s, const json& args, CallContext&) {
    auto problem = load_problem_arg(s, args);
    if (!problem) return tool_error(problem.error());
    auto program = load_program_arg(s, args);
    if (!program) return tool_error(program.error());
    auto target = find_target(gpu_model_of(s, args));
    if (!target) return tool_error("arguments.gpu_model", target.error().message);
    builder::BuildOptions o;
    o.check_only = true;
    o.file_name = program->file;
    builder::BuiltCandidate built = builder::build(program->text, *problem, *target, o);
    json errors = json::array();
    for (const Error& e : built.errors) errors.push_back(error_json(e));
    if (errors.empty() && !built.ok()) errors.push_back(error_json(make_error("", built.message)));
    json kernels = json::array();
    if (built.parsed)
        for (const auto& k : built.program.kernels)
            kernels.push_back({{"name", k.name}, {"kind", std::string(dsl::to_string(k.kind))}});
    ToolResult r;
    r.structured = json{{"ok", built.ok()},
                        {"parsed", built.parsed},
                        {"program_hash", built.ok() ? json(built.program_hash) : json(nullptr)},
                        {"canonical_text", built.ok() ? json(built.canonical_text) : json(nullptr)},
                        {"kernels", kernels},
                        {"errors", errors},
                        {"warnings", built.warnings}};
    r.text = built.ok() ? "program checks against " + problem->name + " on " + target->device_key
                        : "program does not check: " + built.message;
    return r;
}

}  // namespace

std::vector<Tool> problem_tools() {
    std::vector<Tool> t;
    t.push_back({"check_problem", "Check a problem spec",
                 "Validates a problem spec (JSON: dims, tensors, ops, precision policy) and returns "
                 "it normalized with its FLOP and byte counts.",
                 object({{"problem", path_arg("the problem spec (JSON)")}}, {"problem"}),
                 object({{"name", str()}, {"policy", str()}, {"spec", {{"type", "object"}}},
                         {"work", {{"type", "object"}}}},
                        {"name", "policy", "spec", "work"}),
                 check_problem});
    t.push_back({"sol", "Speed-of-light bounds",
                 "The speed-of-light time of a problem on a GPU model (busiest of tensor, SIMT and "
                 "SFU units vs DRAM), what bounds it, the gaming threshold, and - given a time - "
                 "the headroom left (time / SOL and the SOL share).",
                 object({{"problem", path_arg("the problem spec (JSON)")},
                         {"gpu_model", gpu_model_arg()},
                         {"policy", {{"type", "string"},
                                     {"enum", {"fp32_strict", "tf32", "bf16", "fp16"}}}},
                         {"time_us", {{"type", "number"}, {"exclusiveMinimum", 0},
                                      {"description", "a measured time to place against SOL"}}}},
                        {"problem"}),
                 object({{"problem", str()}, {"gpu_model", str()}, {"bound_kind", str()},
                         {"time_sol_s", num()}, {"time_unfused_s", num()},
                         {"gaming_threshold_s", num()}, {"work", {{"type", "object"}}},
                         {"headroom", {{"type", {"object", "null"}}}}},
                        {"problem", "gpu_model", "bound_kind", "time_sol_s", "headroom"}),
                 sol});
    t.push_back({"language_reference", "Kernel-language reference card",
                 "The reference card of kforge's kernel language (also the resource " +
                     std::string(kReferenceUri) + "): read it before writing a program.",
                 object(json::object()), object({{"uri", str()}, {"text", str()}}, {"uri", "text"}),
                 language_reference});
    json check_args = program_args();
    check_args["problem"] = path_arg("the problem spec (JSON)");
    check_args["gpu_model"] = gpu_model_arg();
    t.push_back({"check_program", "Parse and check a program",
                 "Parses a kernel-language program and checks it against the problem and the GPU "
                 "model's limits; every error names file:line:col with the checker's message and, "
                 "where it gives one, the suggested fix. Nothing is compiled.",
                 object(check_args, {"problem"}),
                 object({{"ok", {{"type", "boolean"}}}, {"parsed", {{"type", "boolean"}}},
                         {"program_hash", {{"type", {"string", "null"}}}},
                         {"errors", {{"type", "array"}}}, {"warnings", {{"type", "array"}}}},
                        {"ok", "parsed", "errors", "warnings"}),
                 check_program});
    return t;
}

}  // namespace kforge::mcp
