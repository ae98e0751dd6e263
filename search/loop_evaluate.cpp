// Evaluating one candidate of the run and recording what it measured (search/loop_internal.h).
#include <chrono>

#include "search/loop_internal.h"

namespace kforge::search::detail {

eval::TimingStats stats_of(const EvaluationRecord& record) {
    std::vector<double> t;
    for (const MeasurementRecord& m : record.measurements)
        if (m.label == "candidate") t.push_back(m.time_ns);
    return eval::timing_stats(t);
}

Expected<eval::EvalReport> evaluate_at(SearchState& st, eval::Evaluator& evaluator, Store& store,
                             const std::string& hash, EvalTier tier, const SearchOptions& options,
                             Spent& spent) {
    CandidateState& c = st.candidates.at(hash);
    eval::EvalRequest req;
    req.problem = st.problem;
    req.program_text = c.text;
    req.tier = tier;
    req.seed = options.seed;
    req.compile_cache_dir = options.compile_cache_dir;
    req.store = &store;
    req.run_id = st.run_id;
    req.proposer = c.proposer;
    auto t0 = std::chrono::steady_clock::now();
    eval::EvalReport r = eval::evaluate(evaluator, req);
    double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (!r.store_error.empty())
        return make_error(store.path(), "the store failed to record the " +
                                            std::string(to_string(tier)) + " evaluation of " +
                                            "candidate " + hash.substr(0, 12) + ": " +
                                            r.store_error + "; the run stops here (what was "
                                            "recorded before is kept)");
    c.evaluated = true;
    c.status = r.status;
    c.message = r.message;
    if (r.cached) {
        ++st.counts.cached;
    } else {
        spent.gpu_s += secs;
        ++spent.compiles;
    }
    for (const eval::GateOutcome& g : r.gates)
        if (g.gate == "compile" && g.passed) ++st.counts.compiled;
    if (r.status == EvalStatus::kPassed && r.stats.count > 0) {
        if (tier == EvalTier::kQuick) {
            c.quick = r.stats;
            ++st.counts.quick;
            if (c.program) (void)st.cost->observe(*c.program, r.stats.median_ns);
        } else {
            c.full = r.stats;
            ++st.counts.full;
        }
    }
    if (options.on_event) {
        ProgressEvent e;
        e.kind = ProgressEvent::Kind::kEvaluation;
        e.state = &st;
        e.spent = &spent;
        e.hash = hash;
        e.tier = tier;
        e.status = r.status;
        if (r.status == EvalStatus::kPassed && r.stats.count > 0) e.median_ns = r.stats.median_ns;
        e.cached = r.cached;
        options.on_event(e);
    }
    return r;
}

Status record_invalid(SearchState& st, Store& store, const std::string& hash,
                      const std::string& message) {
    CandidateState& c = st.candidates.at(hash);
    NewEvaluation e;
    e.candidate_id = c.id;
    e.device_id = st.device_id;
    e.toolchain = "checker";
    e.shapes_key = eval::shapes_key(st.problem);
    e.tier = EvalTier::kStatic;
    e.status = EvalStatus::kInvalidProgram;
    e.error_text = message;
    auto id = store.add_evaluation(e);
    if (!id) return id.error();
    c.evaluated = true;
    c.status = EvalStatus::kInvalidProgram;
    c.message = message;
    ++st.counts.invalid;
    return Ok{};
}


}  // namespace kforge::search::detail
