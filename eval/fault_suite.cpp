#include "eval/fault_suite.h"

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "problem/spec.h"

namespace kforge::eval {
namespace {

namespace fs = std::filesystem;

Expected<std::string> read_text(const fs::path& path) {
    std::ifstream in(path);
    if (!in) return make_error(path.string(), "cannot read");
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
}

}  // namespace

Expected<FaultSuiteResult> run_fault_suite(Evaluator& evaluator, const std::string& manifest_path,
                                           bool simulated, const std::string& cubin_dir) {
    auto text = read_text(manifest_path);
    if (!text) return text.error();
    auto m = nlohmann::json::parse(*text, nullptr, false);
    if (!m.is_object() || !m.contains("scenarios") || !m["scenarios"].is_array())
        return make_error(manifest_path, "not a fault-suite manifest (no scenarios array)");
    fs::path dir = fs::path(manifest_path).parent_path();
    auto problem = load_problem((dir / m.value("problem", "problem.json")).string());
    if (!problem) return problem.error();
    auto program = read_text(dir / m.value("program", "program.kf"));
    if (!program) return program.error();
    auto plan_text = read_text(dir / m.value("plan", "plan.json"));
    if (!plan_text) return plan_text.error();
    auto plan = codegen::launch_plan_from_json(nlohmann::json::parse(*plan_text, nullptr, false));
    if (!plan) return make_error(manifest_path, "plan: " + plan.error().to_string());
    auto tier = eval_tier_from_string(m.value("tier", "full"));
    if (!tier) return make_error(manifest_path, "unknown tier");
    FaultSuiteResult result;
    double correct_ns = 0;
    for (const auto& s : m["scenarios"]) {
        FaultScenarioResult row;
        row.name = s.value("name", "?");
        row.expected = s.value("expected", "?");
        EvalRequest req;
        req.problem = *problem;
        req.program_text = *program;
        req.program_file = (dir / m.value("program", "program.kf")).string();
        req.tier = *tier;
        req.run_timeout_s = m.value("run_timeout_s", 5.0);
        if (simulated) {
            auto fault = sim_fault_from_string(s.value("sim_fault", "none"));
            if (!fault) return make_error(manifest_path, row.name + ": unknown sim_fault");
            req.sim_fault = *fault;
        } else {
            std::string cubin = (fs::path(cubin_dir) / (s.value("source", "") + ".cubin")).string();
            if (access(cubin.c_str(), R_OK) != 0)
                return make_error(cubin, "missing: compile tests/faults/" +
                                             s.value("source", "") + " with nvcc -cubin first");
            req.prebuilt = PrebuiltCandidate{cubin, *plan};
        }
        EvalReport r = evaluate(evaluator, req);
        row.got = std::string(to_string(r.status));
        row.wall_ms = r.wall_ms;
        row.median_ns = r.stats.median_ns;
        row.worker_restarted = !r.worker_notes.empty();
        for (const GateOutcome& g : r.gates)
            if (!g.passed) row.failed_gates += g.gate + ": " + g.message.substr(0, 90) + "; ";
        // the first correct scenario sets the pace the slow one is compared with
        if (correct_ns == 0 && row.got == "passed" && !s.value("slow", false))
            correct_ns = row.median_ns;
        std::string caught_by = s.value("caught_by", "");
        if (row.got != row.expected)
            row.why = "expected " + row.expected + ", got " + row.got + " (" + r.message + ")";
        else if (!caught_by.empty() && to_json(r).dump().find(caught_by) == std::string::npos)
            row.why = "no gate says '" + caught_by + "'";
        else if (s.value("slow", false) && !(correct_ns > 0 && row.median_ns > 10 * correct_ns))
            row.why = "not recorded slow: median " + std::to_string(row.median_ns) +
                      " ns vs correct " + std::to_string(correct_ns) + " ns";
        row.matched = row.why.empty();
        if (!row.matched) ++result.mismatches;
        result.scenarios.push_back(std::move(row));
    }
    return result;
}

std::string fault_suite_table(const FaultSuiteResult& result) {
    std::string out;
    char line[512];
    std::snprintf(line, sizeof line, "%-16s %-15s %-15s %11s %10s  %s\n", "scenario", "expected",
                  "got", "median_us", "wall_ms", "notes");
    out += line;
    for (const FaultScenarioResult& s : result.scenarios) {
        std::string notes = s.matched ? "" : "MISMATCH: " + s.why + "; ";
        notes += s.failed_gates;
        if (s.worker_restarted) notes += "worker restarted";
        std::snprintf(line, sizeof line, "%-16s %-15s %-15s %11.1f %10.1f  %s\n", s.name.c_str(),
                      s.expected.c_str(), s.got.c_str(), s.median_ns / 1e3, s.wall_ms,
                      notes.c_str());
        out += line;
    }
    std::snprintf(line, sizeof line, "fault suite: %zu scenario(s), %d mismatch(es)\n",
                  result.scenarios.size(), result.mismatches);
    return out + line;
}

}  // namespace kforge::eval
