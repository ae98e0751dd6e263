// build_report: the report model from the store (report/model.h says what each number means).
#include <algorithm>
#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "problem/spec.h"
#include "report/kernel_breakdown.h"
#include "report/model_internal.h"
#include "store/store.h"

namespace kforge::report {

int tier_rank(EvalTier t) {
    return t == EvalTier::kFull || t == EvalTier::kProfile ? 2 : t == EvalTier::kQuick ? 1 : 0;
}

std::vector<double> times_of(const EvaluationRecord& e, std::string_view label) {
    std::vector<double> t;
    for (const auto& m : e.measurements)
        if (m.label == label) t.push_back(m.time_ns);
    return t;
}

bool is_simulated(const DeviceRecord& d) { return d.uuid.starts_with("simulated"); }

double compile_ns(const nlohmann::ordered_json& evidence) {
    if (!evidence.is_object() || !evidence.contains("gates")) return 0;
    for (const auto& g : evidence["gates"]) {
        if (g.value("gate", "") != "compile" || !g.contains("evidence")) continue;
        const auto& ev = g["evidence"];
        if (ev.is_object() && ev.contains("time_compile_ns") && ev["time_compile_ns"].is_number())
            return ev["time_compile_ns"].get<double>();
    }
    return 0;
}

std::vector<CurveSample> best_so_far_curve(const std::vector<const EvaluationRecord*>& evals) {
    auto timed = [](const EvaluationRecord& e) {
        return e.status == EvalStatus::kPassed && !times_of(e, "candidate").empty();
    };
    int top = 0;
    for (const EvaluationRecord* e : evals)
        if (timed(*e)) top = std::max(top, tier_rank(e->tier));
    std::vector<CurveSample> curve;
    CurveSample at;
    for (const EvaluationRecord* e : evals) {
        if (!e->cached_from_id) {
            for (const auto& m : e->measurements) at.gpu_ns += m.time_ns;
            auto evidence = nlohmann::ordered_json::parse(e->evidence_json, nullptr, false);
            at.gpu_ns += compile_ns(evidence);
        }
        at.improved = false;
        at.median_ns.reset();
        if (timed(*e) && tier_rank(e->tier) == top) {  // the best's tier only
            at.median_ns = sample_stats(times_of(*e, "candidate")).median_ns;
            at.improved = !at.best_ns || *at.median_ns < *at.best_ns;
            if (at.improved) at.best_ns = at.median_ns;
        }
        curve.push_back(at);
    }
    return curve;
}

namespace {

using json = nlohmann::ordered_json;

struct Eval {
    EvaluationRecord rec;
    const CandidateRecord* cand = nullptr;
    json evidence;
};

void fill_best_details(Store& store, BestCandidate& b, const Eval& e) {
    if (e.evidence.is_object() && e.evidence.contains("gates")) {
        for (const auto& g : e.evidence["gates"]) {
            GateRow row;
            row.gate = g.value("gate", "");
            bool skipped = g.value("skipped", false);
            row.result = skipped ? "skipped"
                                 : g.value("passed", false) ? "passed" : g.value("status", "failed");
            row.message = g.value("message", "");
            row.evidence_json = g.contains("evidence") ? g["evidence"].dump() : "{}";
            b.gates.push_back(std::move(row));
        }
    }
    if (e.evidence.is_object() && e.evidence.contains("diagnosis")) {
        const json& d = e.evidence["diagnosis"];
        b.diagnosis = d.is_string() ? d.get<std::string>() : d.dump();
    }
    auto lineage = store.lineage(b.candidate_id);
    if (lineage) {
        for (const LineageEntry& l : *lineage)
            b.lineage.push_back(LineageRow{l.candidate.id, l.depth, l.candidate.proposer,
                                           l.candidate.move, l.candidate.content_hash});
    }
}

struct Context {
    Store& store;
    const ReportOptions& options;
    std::optional<Ceilings> ceilings;
    std::string ceilings_note;
};

Expected<ProblemReport> build_problem(Context& ctx, const RunRecord& run, int64_t problem_id,
                                      const std::vector<CandidateRecord>& cands, bool simulated) {
    ProblemReport p;
    p.run_id = run.id;
    p.problem_id = problem_id;
    p.simulated = simulated;
    auto rec = ctx.store.get_problem(problem_id);
    if (!rec) return rec.error();
    p.name = rec->name;
    auto problem = parse_problem(rec->spec_json, "stored problem " + rec->name);
    if (problem) {
        p.description = problem->description;
        p.policy = std::string(to_string(problem->policy));
    }
    std::vector<Eval> evals;
    std::set<int64_t> disqualified;
    for (const CandidateRecord& c : cands) {
        if (c.problem_id != problem_id) continue;
        if (!is_baseline_carrier(c.proposer)) ++p.candidates;
        auto list = ctx.store.list_evaluations(c.id);
        if (!list) return list.error();
        for (EvaluationRecord& e : *list) {
            if (e.device_id != run.device_id) continue;
            if (e.status == EvalStatus::kIncorrect || e.status == EvalStatus::kFlaggedGaming)
                disqualified.insert(c.id);
            json ev = json::parse(e.evidence_json, nullptr, false);
            evals.push_back(Eval{std::move(e), &c, ev.is_discarded() ? json::object() : ev});
        }
    }
    std::sort(evals.begin(), evals.end(),
              [](const Eval& a, const Eval& b) { return a.rec.id < b.rec.id; });
    auto ranked = [&](const Eval& e) {
        return !is_baseline_carrier(e.cand->proposer) && !disqualified.count(e.cand->id) &&
               e.rec.status == EvalStatus::kPassed && !times_of(e.rec, "candidate").empty();
    };
    // Best: highest timed tier present, newest evaluation per candidate, smallest median.
    int top = 0;
    for (const Eval& e : evals) {
        if (!is_baseline_carrier(e.cand->proposer)) {
            ++p.evaluations;
            if (e.rec.status == EvalStatus::kPassed) ++p.passed_evaluations;
        }
        if (ranked(e)) top = std::max(top, tier_rank(e.rec.tier));
    }
    std::map<int64_t, const Eval*> newest;
    for (const Eval& e : evals)
        if (ranked(e) && tier_rank(e.rec.tier) == top) newest[e.cand->id] = &e;
    const Eval* best = nullptr;
    double best_median = 0;
    for (const auto& [id, e] : newest) {
        double m = sample_stats(times_of(e->rec, "candidate")).median_ns;
        if (!best || m < best_median) best = e, best_median = m;
    }
    if (best) {
        BestCandidate b;
        b.candidate_id = best->cand->id;
        b.evaluation_id = best->rec.id;
        b.content_hash = best->cand->content_hash;
        b.proposer = best->cand->proposer;
        b.move = best->cand->move;
        b.tier = std::string(to_string(best->rec.tier));
        b.shapes_key = best->rec.shapes_key;
        b.toolchain = best->rec.toolchain;
        b.stats = sample_stats(times_of(best->rec, "candidate"));
        b.flops = static_cast<double>(best->rec.flops);
        b.bytes = static_cast<double>(best->rec.bytes);
        if (b.stats.median_ns > 0) {
            b.tflops_per_s = b.flops / b.stats.median_ns * 1e-3;
            b.gbytes_per_s = b.bytes / b.stats.median_ns;
        }
        fill_best_details(ctx.store, b, *best);
        KernelBreakdown kb = kernel_breakdown(best->rec.kernel_times_ns, best->evidence,
                                              problem ? &*problem : nullptr, ctx.ceilings);
        b.kernels = std::move(kb.rows);
        b.kernels_note = std::move(kb.note);
        p.best = std::move(b);
    }
    // Baselines at the best's shapes (or the most recent baseline shapes without a best).
    std::string shapes = p.best ? p.best->shapes_key : std::string();
    std::map<std::string, std::vector<double>> base;
    if (!p.best) {
        for (const Eval& e : evals)
            for (const auto& m : e.rec.measurements)
                if (baseline_name(m.label)) shapes = e.rec.shapes_key;
    }
    for (const Eval& e : evals) {
        if (e.rec.shapes_key != shapes) continue;
        for (const auto& m : e.rec.measurements)
            if (auto name = baseline_name(m.label)) base[*name].push_back(m.time_ns);
    }
    std::vector<std::string> names;
    for (const auto& [name, t] : base) names.push_back(name);
    sort_baseline_names(names);
    for (const std::string& name : names) {
        BaselineTime bt{name, name == kBaselineProgram ? "baseline" : baseline_label(name),
                        sample_stats(base[name]), std::nullopt};
        if (p.best && p.best->stats.median_ns > 0)
            bt.speedup = bt.stats.median_ns / p.best->stats.median_ns;
        p.baselines.push_back(std::move(bt));
    }
    if (!names.empty()) p.reference_baseline = names.front();
    // Progress curve.
    std::vector<const EvaluationRecord*> qualified;
    for (const Eval& e : evals)
        if (!is_baseline_carrier(e.cand->proposer) && !disqualified.count(e.cand->id))
            qualified.push_back(&e.rec);
    std::vector<CurveSample> curve = best_so_far_curve(qualified);
    for (size_t i = 0; i < curve.size(); ++i) {
        ProgressPoint pt{qualified[i]->id, curve[i].gpu_ns * 1e-9, curve[i].best_ns, std::nullopt};
        if (pt.best_time_ns && !p.baselines.empty() && *pt.best_time_ns > 0)
            pt.best_speedup = p.baselines.front().stats.median_ns / *pt.best_time_ns;
        p.progress.push_back(pt);
    }
    // SOL.
    if (!problem) {
        p.sol.note = "stored spec does not parse: " + problem.error().to_string();
    } else if (!ctx.ceilings) {
        p.sol.note = ctx.ceilings_note;
    } else if (auto bounds = compute_bounds(*problem, *ctx.ceilings); !bounds) {
        p.sol.note = "no SOL bounds: " + bounds.error().to_string();
    } else {
        p.sol = sol_figures(*bounds, p);
    }
    return p;
}

}  // namespace

Expected<Report> build_report(Store& store, const ReportOptions& options) {
    if (options.run_ids.empty()) return make_error("report", "no run given");
    if (!(options.sol_within_percent >= 0))
        return make_error("report", "the SOL margin must be a percentage >= 0");
    Report report;
    for (int64_t run_id : options.run_ids) {
        auto run = store.get_run(run_id);
        if (!run) return make_error("run " + std::to_string(run_id), "no such run in " +
                                                                          store.path());
        auto device = store.get_device(run->device_id);
        if (!device) return device.error();
        Context ctx{store, options, std::nullopt, ""};
        std::string key = options.device.value_or(device->datasheet_key);
        auto spec = find_device(key);
        if (!spec && options.device) return spec.error();
        if (!spec) {
            ctx.ceilings_note = "device '" + device->datasheet_key +
                                "' is not in the device table: pass --device";
        } else {
            std::optional<Calibration> cal = options.calibration;
            if (cal) {
                if (auto st = check_calibration(*spec, *cal); !st) return st.error();
            } else if (!options.device) {
                auto stored = store.load_latest_calibration(device->id);
                if (stored && *stored) {
                    auto parsed = calibration_from_json((*stored)->calibration_json,
                                                        "stored calibration");
                    if (parsed && check_calibration(*spec, *parsed).ok()) cal = *parsed;
                }
            }
            ctx.ceilings = effective_ceilings(*spec, cal);
        }
        bool simulated = is_simulated(*device);
        auto cands = store.list_candidates(run_id);
        if (!cands) return cands.error();
        std::vector<int64_t> problem_ids;
        if (run->problem_id) problem_ids.push_back(*run->problem_id);
        for (const CandidateRecord& c : *cands)
            if (std::find(problem_ids.begin(), problem_ids.end(), c.problem_id) ==
                problem_ids.end())
                problem_ids.push_back(c.problem_id);
        RunInfo info{run->id, "", device->name, device->uuid, device->datasheet_key,
                     std::string(to_string(run->status)), run->started_at, simulated};
        for (int64_t pid : problem_ids) {
            auto p = build_problem(ctx, *run, pid, *cands, simulated);
            if (!p) return p.error();
            if (pid == run->problem_id) info.subject = p->name;
            report.problems.push_back(std::move(*p));
        }
        if (info.subject.empty()) info.subject = "suite:" + run->suite.value_or("");
        report.simulated = report.simulated || simulated;
        report.runs.push_back(std::move(info));
    }
    report.suite = summarize_suite(report.problems, options);
    return report;
}

}  // namespace kforge::report
