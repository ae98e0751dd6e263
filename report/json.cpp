// JSON rendering of the report model (report/json.h).
#include "report/json.h"

#include "report/kernel_breakdown.h"

namespace kforge::report {
namespace {

using json = nlohmann::ordered_json;

template <typename T>
json opt(const std::optional<T>& v) {
    return v ? json(*v) : json(nullptr);
}

json stats_json(const SampleStats& s) {
    return json{{"count", s.count},          {"median_ns", s.median_ns},
                {"q1_ns", s.q1_ns},          {"q3_ns", s.q3_ns},
                {"iqr_ns", s.iqr_ns},        {"ci95_low_ns", s.ci95_low_ns},
                {"ci95_high_ns", s.ci95_high_ns}, {"min_ns", s.min_ns},
                {"max_ns", s.max_ns}};
}

// The per-kernel breakdown (report/kernel_breakdown.h), numbers unformatted.
json kernels_json(const std::vector<KernelRow>& rows) {
    json a = json::array();
    for (const KernelRow& r : rows)
        a.push_back({{"kernel", r.name},
                     {"kind", r.kind},
                     {"ops", r.ops},
                     {"time_ns", r.time_ns},
                     {"share", r.share},
                     {"time_sol_ns", opt(r.time_sol_ns)},
                     {"percent_sol", r.time_sol_ns ? json(sol_percent(r.sol)) : json(nullptr)},
                     {"under_sol_bound", r.sol.under_bound},
                     {"bottleneck", r.bottleneck}});
    return a;
}

json best_json(const BestCandidate& b) {
    json gates = json::array();
    for (const GateRow& g : b.gates) {
        json ev = json::parse(g.evidence_json, nullptr, false);
        gates.push_back({{"gate", g.gate}, {"result", g.result}, {"message", g.message},
                         {"evidence", ev.is_discarded() ? json(g.evidence_json) : ev}});
    }
    json lineage = json::array();
    for (const LineageRow& l : b.lineage)
        lineage.push_back({{"candidate_id", l.candidate_id}, {"depth", l.depth},
                           {"proposer", l.proposer}, {"move", l.move},
                           {"content_hash", l.content_hash}});
    return json{{"candidate_id", b.candidate_id},
                {"evaluation_id", b.evaluation_id},
                {"content_hash", b.content_hash},
                {"proposer", b.proposer},
                {"move", b.move},
                {"tier", b.tier},
                {"shapes_key", b.shapes_key},
                {"toolchain", b.toolchain},
                {"time", stats_json(b.stats)},
                {"flops", b.flops},
                {"bytes", b.bytes},
                {"tflops_per_s", b.tflops_per_s},
                {"gbytes_per_s", b.gbytes_per_s},
                {"gates", std::move(gates)},
                {"diagnosis", b.diagnosis.empty() ? json(nullptr) : json(b.diagnosis)},
                {"lineage", std::move(lineage)},
                {"kernels", kernels_json(b.kernels)},
                {"kernels_note", b.kernels_note},
                {"kernel_chart_svg", svg_kernel_chart(b.kernels)}};
}

json sol_json(const SolFigures& s) {
    return json{{"available", s.available},
                {"note", s.note},
                {"ceilings_source", s.ceilings_source},
                {"bound_kind", s.bound_kind},
                {"time_sol_s", s.available ? json(s.time_sol_s) : json(nullptr)},
                {"time_unfused_s", s.available ? json(s.time_unfused_s) : json(nullptr)},
                {"percent_sol", opt(s.percent_sol)},  // at most 100 (sol/sol_share.h)
                {"under_sol_bound", s.under_sol_bound},
                {"headroom", opt(s.headroom)},
                {"sol_score", opt(s.sol_score)},
                {"t_base_source", s.t_base_source},
                {"time_base_s", s.t_base_source.empty() ? json(nullptr) : json(s.time_base_s)},
                {"sol_score_note", s.sol_score_note},
                {"below_gaming_threshold", s.below_gaming_threshold}};
}

json problem_json(const ProblemReport& p) {
    json baselines = json::array();
    for (const BaselineTime& b : p.baselines)
        baselines.push_back({{"name", b.name}, {"label", b.label}, {"time", stats_json(b.stats)},
                             {"speedup", opt(b.speedup)}});
    json progress = json::array();
    for (const ProgressPoint& pt : p.progress)
        progress.push_back({{"evaluation_id", pt.evaluation_id}, {"gpu_s", pt.gpu_s},
                            {"best_time_ns", opt(pt.best_time_ns)},
                            {"best_speedup", opt(pt.best_speedup)}});
    return json{{"run_id", p.run_id},
                {"problem_id", p.problem_id},
                {"name", p.name},
                {"description", p.description},
                {"policy", p.policy},
                {"simulated", p.simulated},
                {"candidates", p.candidates},
                {"evaluations", p.evaluations},
                {"passed_evaluations", p.passed_evaluations},
                {"best", p.best ? best_json(*p.best) : json(nullptr)},
                {"baselines", std::move(baselines)},
                {"baseline_note", p.baselines.empty() ? json("no baseline measured")
                                                      : json(nullptr)},
                {"reference_baseline", p.reference_baseline},
                {"sol", sol_json(p.sol)},
                {"progress", std::move(progress)}};
}

}  // namespace

json report_to_json(const Report& r) {
    json runs = json::array();
    for (const RunInfo& run : r.runs)
        runs.push_back({{"id", run.id}, {"subject", run.subject},
                        {"device_name", run.device_name}, {"device_uuid", run.device_uuid},
                        {"datasheet_key", run.datasheet_key}, {"status", run.status},
                        {"started_at", run.started_at}, {"simulated", run.simulated}});
    json baselines = json::array();
    for (const BaselineSummary& b : r.suite.baselines) {
        json fast = json::array();
        for (const FastP& f : b.fast_p)
            fast.push_back({{"p", f.p}, {"fast", f.fast}, {"fraction", f.fraction}});
        baselines.push_back({{"name", b.name}, {"problems_measured", b.problems_measured},
                             {"geomean_count", b.geomean_count},
                             {"geomean_speedup", opt(b.geomean_speedup)},
                             {"fast_p", std::move(fast)}});
    }
    const SuiteSummary& s = r.suite;
    json suite{{"simulated", r.simulated},
               {"problems", s.problems},
               {"problems_solved", s.problems_solved},
               {"baselines", std::move(baselines)},
               {"baseline_note", s.baselines.empty() ? json("no baseline measured")
                                                     : json(nullptr)},
               {"sol_within_percent", s.sol_within_percent},
               {"problems_with_sol", s.problems_with_sol},
               {"within_sol", s.within_sol},
               {"fraction_within_sol", opt(s.fraction_within_sol)},
               {"geomean_percent_sol", opt(s.geomean_percent_sol)}};
    json problems = json::array();
    for (const ProblemReport& p : r.problems) problems.push_back(problem_json(p));
    return json{{"kforge_report", kReportJsonVersion},
                {"simulated", r.simulated},
                {"runs", std::move(runs)},
                {"suite", std::move(suite)},
                {"problems", std::move(problems)}};
}

}  // namespace kforge::report
