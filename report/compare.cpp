// build_comparison: several runs of one problem side by side (report/compare.h).
#include "report/compare.h"

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <set>

#include "report/model_internal.h"
#include "store/store.h"

namespace kforge::report {
namespace {

using json = nlohmann::ordered_json;

// Seconds since the epoch of a store timestamp, "2026-12-06T13:02:03.123Z" (store/schema.cpp's
// KFORGE_NOW); nullopt when it does not read so.
std::optional<double> epoch_s(const std::string& ts) {
    std::tm tm{};
    double sec = 0;
    if (std::sscanf(ts.c_str(), "%d-%d-%dT%d:%d:%lf", &tm.tm_year, &tm.tm_mon, &tm.tm_mday,
                    &tm.tm_hour, &tm.tm_min, &sec) != 6)
        return std::nullopt;
    tm.tm_year -= 1900;
    tm.tm_mon -= 1;
    return static_cast<double>(timegm(&tm)) + sec;
}

// "diagnosis,parameter" from the run's options (search/loop_state.cpp), else its command.
std::string mode_of(const RunRecord& run) {
    json o = json::parse(run.options_json, nullptr, false);
    if (!o.is_object()) return "";
    std::string mode;
    if (o.contains("proposers") && o["proposers"].is_array())
        for (const auto& p : o["proposers"])
            if (p.is_string()) mode += (mode.empty() ? "" : ",") + p.get<std::string>();
    if (mode.empty() && o.contains("command") && o["command"].is_string())
        mode = o["command"].get<std::string>();
    return mode;
}

struct Named {
    std::string name, content_hash;
};

// The run's one problem: the run's own, else that of all its candidates.
Expected<Named> problem_of(Store& store, const RunRecord& run,
                           const std::vector<CandidateRecord>& cands) {
    std::set<int64_t> ids;
    if (run.problem_id) ids.insert(*run.problem_id);
    for (const CandidateRecord& c : cands) ids.insert(c.problem_id);
    std::string where = "run " + std::to_string(run.id) + " of " + store.path();
    if (ids.empty()) return make_error(where, "the run has no problem and no candidate");
    if (ids.size() > 1)
        return make_error(where, "the run covers " + std::to_string(ids.size()) +
                                     " problems (a suite run): --compare takes runs of one "
                                     "problem");
    auto p = store.get_problem(*ids.begin());
    if (!p) return p.error();
    return Named{p->name, p->content_hash};
}

struct Walk {
    std::vector<EvaluationRecord> evals;  // of qualified candidates, in evaluation order
    std::set<int64_t> start_candidates;
};

Expected<CompareRun> compare_run(Store& store, const RunRecord& run,
                                 const std::vector<CandidateRecord>& cands) {
    auto device = store.get_device(run.device_id);
    if (!device) return device.error();
    CompareRun r;
    r.run_id = run.id;
    r.store = store.path();
    r.mode = mode_of(run);
    r.device_name = device->name;
    r.status = std::string(to_string(run.status));
    r.simulated = is_simulated(*device);
    Walk w;
    std::set<int64_t> disqualified;
    for (const CandidateRecord& c : cands) {
        if (is_baseline_carrier(c.proposer)) continue;
        if (c.proposer == "start") w.start_candidates.insert(c.id);
        auto list = store.list_evaluations(c.id);
        if (!list) return list.error();
        for (EvaluationRecord& e : *list) {
            if (e.device_id != run.device_id) continue;
            if (e.status == EvalStatus::kIncorrect || e.status == EvalStatus::kFlaggedGaming)
                disqualified.insert(c.id);
            w.evals.push_back(std::move(e));
        }
    }
    std::erase_if(w.evals, [&](const EvaluationRecord& e) {
        return disqualified.count(e.candidate_id) > 0;
    });
    std::sort(w.evals.begin(), w.evals.end(),
              [](const EvaluationRecord& a, const EvaluationRecord& b) { return a.id < b.id; });
    r.evaluations = static_cast<int>(w.evals.size());
    std::vector<const EvaluationRecord*> order;
    for (const EvaluationRecord& e : w.evals) order.push_back(&e);
    std::vector<CurveSample> curve = best_so_far_curve(order);
    double t0 = epoch_s(run.started_at).value_or(0);
    std::optional<double> origin;
    for (size_t i = 0; i < curve.size(); ++i) {
        const EvaluationRecord& e = w.evals[i];
        const CurveSample& at = curve[i];
        if (at.median_ns && r.tier.empty())  // the tier of the curve's timings
            r.tier = tier_rank(e.tier) == 2 ? "full" : "quick";
        if (at.median_ns && !r.start_ns && w.start_candidates.count(e.candidate_id))
            r.start_ns = at.median_ns, r.start_source = "start program";
        double wall = epoch_s(e.created_at).value_or(t0) - t0;
        bool last = i + 1 == curve.size();
        if (!at.best_ns || !(at.improved || last)) continue;  // a step, or the curve's end
        if (!origin) origin = wall;
        r.best_ns = at.best_ns;
        r.steps.push_back(ComparePoint{e.id, wall, 0, at.gpu_ns * 1e-9, *at.best_ns, 0});
    }
    if (!r.start_ns && !r.steps.empty())
        r.start_ns = r.steps.front().best_ns, r.start_source = "first timing";
    for (ComparePoint& p : r.steps) {
        p.search_s = std::max(0.0, p.wall_s - origin.value_or(0));
        p.speedup = p.best_ns > 0 ? *r.start_ns / p.best_ns : 0;
    }
    return r;
}

}  // namespace

Expected<Comparison> build_comparison(const std::vector<CompareInput>& inputs) {
    if (inputs.empty()) return make_error("report --compare", "no run given");
    Comparison c;
    std::set<std::string> stores, hashes;
    for (const CompareInput& in : inputs) stores.insert(in.store->path());
    std::vector<std::string> subjects;  // "run 3 of a.db: gemm_bf16_4096"
    for (const CompareInput& in : inputs) {
        Store& store = *in.store;
        auto run = store.get_run(in.run_id);
        if (!run)
            return make_error("run " + std::to_string(in.run_id),
                              "no such run in " + store.path());
        auto cands = store.list_candidates(in.run_id);
        if (!cands) return cands.error();
        auto problem = problem_of(store, *run, *cands);
        if (!problem) return problem.error();
        subjects.push_back("run " + std::to_string(in.run_id) + " of " + store.path() + ": " +
                           problem->name);
        if (c.runs.empty()) c.problem = problem->name;
        if (problem->name != c.problem) {
            std::string list;
            for (const std::string& s : subjects) list += (list.empty() ? "" : "; ") + s;
            return make_error("report --compare",
                              "the runs are of different problems (" + list +
                                  "): a comparison takes runs of one problem");
        }
        hashes.insert(problem->content_hash);
        auto r = compare_run(store, *run, *cands);
        if (!r) return r.error();
        std::string file = std::filesystem::path(store.path()).filename().string();
        r->label = (stores.size() > 1 ? file + " " : "") + "#" + std::to_string(r->run_id) +
                   (r->mode.empty() ? "" : " " + r->mode);
        c.simulated = c.simulated || r->simulated;
        c.runs.push_back(std::move(*r));
    }
    if (hashes.size() > 1)
        c.notes.push_back("the runs' specs of " + c.problem + " differ (" +
                          std::to_string(hashes.size()) + " versions): compare with care");
    for (const CompareRun& r : c.runs)
        if (r.steps.empty())
            c.notes.push_back(r.label + ": no passed timing, no curve");
    return c;
}

}  // namespace kforge::report
