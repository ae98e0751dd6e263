// Starting and resuming a search (search/loop.h).
#include <nlohmann/json.hpp>

#include "compile/compile.h"
#include "dsl/parser.h"
#include "problem/spec.h"
#include "search/group_budget.h"
#include "search/loop_internal.h"
#include "sol/device.h"
#include "sol/target.h"

namespace kforge::search {
namespace {

// Device row, SOL bounds and the cost model of `problem` on the evaluator's device.
Status prepare(SearchState& st, eval::Evaluator& evaluator, Store& store) {
    auto device_info = evaluator.device_info();
    if (!device_info) return device_info.error();
    const eval::DeviceInfo& info = *device_info;
    st.simulated = info.simulated;
    st.device_name = info.name;
    auto id = store.upsert_device(
        DeviceRecord{0, info.name, info.uuid, "", info.driver, info.datasheet_key});
    if (!id) return id.error();
    st.device_id = *id;
    auto spec = find_device(info.datasheet_key);
    if (!spec) return spec.error();
    std::optional<Calibration> cal;
    if (!info.simulated) {
        auto rec = store.load_latest_calibration(st.device_id);
        if (rec.ok() && *rec) {
            auto parsed = calibration_from_json((*rec)->calibration_json, "store calibration");
            if (parsed) cal = *parsed;
        }
    }
    Ceilings ceilings = effective_ceilings(*spec, cal);
    auto bounds = compute_bounds(st.problem, ceilings);
    if (!bounds) return bounds.error();
    st.bounds = *bounds;
    st.cost.emplace(st.problem, ceilings, info.sm_count > 0 ? info.sm_count : spec->sm_count);
    return Ok{};
}

// The compiler that builds the run's programs ("simulated" on the simulated device), as the
// evaluations record it: nvcc's "release X.Y, VX.Y.Z" line.
std::string toolchain_of(const SearchState& st, const std::string& datasheet_key) {
    if (st.simulated) return "simulated";
    const Target target = target_for_device(datasheet_key);
    auto v = compile::nvcc_version(compile::default_compile_options(target.arch).nvcc);
    std::string text = v.ok() ? *v : "nvcc unavailable";
    auto pos = text.rfind("release");
    if (pos != std::string::npos) text = text.substr(pos);
    if (auto nl = text.find('\n'); nl != std::string::npos) text.resize(nl);
    return text;
}

}  // namespace

Expected<SearchState> start_search(eval::Device& device, Store& store, const Problem& problem,
                                   const std::string& start_text, const SearchOptions& options) {
    eval::InProcessEvaluator evaluator(device);
    return start_search(evaluator, store, problem, start_text, options);
}

Expected<SearchState> resume_search(eval::Device& device, Store& store, int64_t run_id) {
    eval::InProcessEvaluator evaluator(device);
    return resume_search(evaluator, store, run_id);
}

Expected<SearchState> start_search(eval::Evaluator& evaluator, Store& store,
                                   const Problem& problem, const std::string& start_text,
                                   const SearchOptions& options) {
    SearchState st;
    st.problem = problem;
    if (auto s = prepare(st, evaluator, store); !s) return s.error();
    auto start = make_candidate(start_text, "<start program>");
    if (!start) return start.error();
    auto problem_id = store.upsert_problem(problem.name, problem_to_json(problem).dump());
    if (!problem_id) return problem_id.error();
    NewRun run;
    run.problem_id = *problem_id;
    if (!options.suite.empty()) run.suite = options.suite;
    run.device_id = st.device_id;
    run.options_json = nlohmann::json{{"command", options.suite.empty() ? "optimize" : "suite"},
                                      {"seed", options.seed},
                                      {"promote_ratio", options.promote_ratio},
                                      {"proposers", options.proposers},
                                      {"simulated", st.simulated}}
                           .dump();
    run.kforge_version = options.kforge_version;
    run.git_commit = options.git_commit;
    if (run.toolchain = options.toolchain; run.toolchain.empty()) {
        auto info = evaluator.device_info();
        run.toolchain = toolchain_of(st, info ? info->datasheet_key : "h200");
    }
    auto run_id = store.create_run(run);
    if (!run_id) return run_id.error();
    st.run_id = *run_id;
    const std::string& hash = start->hash;
    auto cand = store.add_candidate(
        NewCandidate{st.run_id, *problem_id, start->text, hash, {}, "start", "starting program"});
    if (!cand) return cand.error();
    st.start_hash = hash;
    CandidateState& c = st.candidates[hash] =
        CandidateState{cand->id, start->text, "start", "starting program"};
    c.program = start->program;
    st.pending.push_back(hash);
    return st;
}

Expected<SearchState> resume_search(eval::Evaluator& evaluator, Store& store, int64_t run_id) {
    auto run = store.get_run(run_id);
    if (!run) return run.error();
    if (!run->problem_id)
        return make_error("run " + std::to_string(run_id), "is not a single-problem run");
    auto prec = store.get_problem(*run->problem_id);
    if (!prec) return prec.error();
    auto problem = parse_problem(prec->spec_json, "store problem " + prec->name);
    if (!problem) return problem.error();
    SearchState st;
    st.problem = *problem;
    st.run_id = run_id;
    if (auto s = prepare(st, evaluator, store); !s) return s.error();
    // an interrupted (or killed) run is running again until it finishes
    if (auto s = store.resume_run(run_id); !s) return s.error();
    auto cands = store.list_candidates(run_id);
    if (!cands) return cands.error();
    std::map<int64_t, std::string> hash_of;  // candidate id -> hash
    for (const CandidateRecord& c : *cands) hash_of[c.id] = c.content_hash;
    std::map<std::string, std::string> parent_of;  // hash -> its first parent's hash
    for (const CandidateRecord& c : *cands)
        if (!c.parent_ids.empty() && hash_of.count(c.parent_ids[0]))
            parent_of[c.content_hash] = hash_of[c.parent_ids[0]];
    for (const CandidateRecord& c : *cands) {
        CandidateState cs{c.id, c.program_text, c.proposer, c.move};
        // parsed once for the run (the stored text is canonical; an invalid proposal's may not
        // parse)
        if (auto p = dsl::parse_program(cs.text, "<stored>"))
            cs.program = std::make_shared<const dsl::Program>(std::move(*p));
        if (c.proposer == "start") st.start_hash = c.content_hash;
        auto evals = store.list_evaluations(c.id);
        if (!evals) return evals.error();
        for (const EvaluationRecord& e : *evals) {
            cs.evaluated = true;
            cs.status = e.status;
            cs.message = e.error_text;
            if (e.status != EvalStatus::kPassed) continue;
            if (e.tier == EvalTier::kQuick) cs.quick = detail::stats_of(e);
            if (e.tier == EvalTier::kFull) cs.full = detail::stats_of(e);
            // the device's per-kernel times (the kernel groups' shares, search/group_budget.h)
            if (!e.kernel_times_ns.empty()) cs.kernel_ns = e.kernel_times_ns;
        }
        if (!cs.evaluated) st.pending.push_back(c.content_hash);
        // compiled before the resume (the compile cache has it): its variants cost no compile
        else if (cs.status != EvalStatus::kInvalidProgram)
            st.charged_configurations.insert(detail::configuration_of(cs));
        if (cs.quick && cs.program) (void)st.cost->observe(*cs.program, cs.quick->median_ns);
        ++st.counts.proposed;
        st.candidates[c.content_hash] = std::move(cs);
    }
    if (st.start_hash.empty()) return make_error("run " + std::to_string(run_id), "has no start program");
    if (auto b = best_time_ns(st)) st.progress.best_ns_by_round.push_back(*b);
    restore_groups(st, parent_of);
    return st;
}

}  // namespace kforge::search
