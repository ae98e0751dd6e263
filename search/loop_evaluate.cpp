// Evaluating one candidate of the run and recording what it measured (search/loop_internal.h).
#include <algorithm>
#include <chrono>

#include "search/group_budget.h"
#include "search/knob_space.h"
#include "search/loop_internal.h"

namespace kforge::search::detail {

std::string configuration_of(const CandidateState& c) {
    return c.program ? compile_configuration_key(*c.program) : c.text;
}

bool needs_compile(const SearchState& st, const std::string& hash) {
    const CandidateState& c = st.candidates.at(hash);
    return !st.charged_configurations.count(configuration_of(c)) && !st.precompiled.count(hash);
}

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
    // Past the compile budget only what needs no compile of its own is evaluated (the start
    // program always: a run without it timed has no result). The report says why; nothing ran,
    // so it carries no cost sample (`cached`), and the candidate stays unevaluated in the store.
    if (hash != st.start_hash && needs_compile(st, hash))
        if (auto why = compile_budget_spent(options.budget, spent)) {
            eval::EvalReport skipped;
            skipped.status = EvalStatus::kNotSupported;
            skipped.tier = tier;
            skipped.cached = true;
            skipped.message = "not evaluated: " + *why + " and the program needs a compile";
            return skipped;
        }
    const bool first = !c.evaluated;
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
        charge_group_time(st, c, secs, true);
        // A compile is charged once per compile configuration, to the first evaluation that
        // reached the compile gate with it (passed or failed); its launch-knob variants and its
        // later tiers are free. A program the precompile built is charged here too (its compile
        // ran), unless its configuration was charged already.
        const bool compiled = std::any_of(r.gates.begin(), r.gates.end(),
                                          [](const eval::GateOutcome& g) { return g.gate == "compile"; });
        if (compiled && st.charged_configurations.insert(configuration_of(c)).second) {
            ++spent.compiles;
            ++st.counts.compiles;
        } else if (compiled && first) {
            ++st.counts.free;
        }
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
        // per-kernel times, the device's where it measured them: the kernel groups' shares
        // (search/group_budget.h)
        if (c.program) c.kernel_ns = kernel_times(st, *c.program, r.stats.median_ns, r.kernel_times_ns);
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
