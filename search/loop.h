// The search loop: rounds of propose -> static check -> cost-model screen -> compile + quick
// timing -> successive-halving cut (noise-aware re-timing) -> full timing with every gate ->
// profiling hook, on one Device, with everything in the Store (candidates with parents, proposer
// and move; evaluations through evaluate()'s recording and cache). A killed run resumes from the
// store (resume_search) without evaluating anything again. run_suite() shares one budget across
// problems and gives each round to the problem with the largest expected gain.
//
// Every entry point takes an eval::Evaluator (eval/evaluator.h): an InProcessEvaluator on a
// Device (the simulated device in CI), or a SupervisedEvaluator whose worker process isolates
// the search from a candidate that crashes or hangs (the CUDA device). The Device& overloads
// evaluate in this process.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "device/device.h"
#include "device/timing.h"
#include "diagnosis/diagnosis.h"
#include "eval/evaluator.h"
#include "problem/problem.h"
#include "search/budget.h"
#include "search/candidate.h"
#include "search/cost_model.h"
#include "search/ladder.h"
#include "search/proposer.h"
#include "sol/bounds.h"
#include "store/store.h"

namespace kforge::search {

struct SearchState;

// One event of a search, for a progress display (cli/progress.h): an evaluation recorded, a round
// ended, or a heartbeat while a compile wave runs (sent from another thread, `state` null).
struct ProgressEvent {
    enum class Kind { kEvaluation, kRound, kHeartbeat } kind = Kind::kEvaluation;
    const SearchState* state = nullptr;
    const Spent* spent = nullptr;
    std::string hash;                     // kEvaluation: the candidate
    EvalTier tier = EvalTier::kQuick;     // kEvaluation
    EvalStatus status = EvalStatus::kPassed;
    std::optional<double> median_ns;      // kEvaluation: when it passed and was timed
    bool cached = false;
    std::string text;                     // kHeartbeat: "compiling 12 programs"; kRound: the line
    double elapsed_s = 0;                 // kHeartbeat: seconds the wave has run
};

struct SearchOptions {
    Budget budget;
    StopConditions stop;
    double promote_ratio = 1.0 / 3.0;  // every cut: cost-model screen, quick -> full
    int proposals_per_round = 12;      // asked of each proposer (of a built-in one up to 4x
                                       // when screening is cheap: screen_count, search/ladder.h)
    int profile_top = 2;               // best few handed to the profiling hook
    // Proposals compiled in the start program's own compile wave (the parameter and seed
    // proposers need no timing to propose): -1 = half the cores less one (a GEMM + row-kernel
    // program is two compile units), 0 = none.
    int start_wave_extra = -1;
    // The most one round plans for (seconds), with what its programs compile and time: a suite's
    // fair share of the wall budget left while problems wait for their first round
    // (search/suite_rounds.h). A round whose least (a compile wave) exceeds it still runs.
    // Unset: a quarter of the budget left.
    std::optional<double> round_share_s;
    uint64_t seed = 1;
    // How a suite gives its rounds (search/budget.h): by SOL headroom, or uniformly (a baseline).
    SuiteAllocation allocation = SuiteAllocation::kSolHeadroom;
    std::vector<std::string> proposers = {"diagnosis", "parameter"};
    std::string compile_cache_dir;
    std::string suite;                 // label of the run when part of a suite
    // Profiling hook: the diagnosis of a program (bottleneck classes, evidence, moves, ptxas
    // summary); an empty one when it cannot be placed; unset = no-op.
    std::function<Diagnosis(const std::string& program_text)> profile_hook;
    // Progress lines (one per round); unset = silent.
    std::function<void(const std::string& line)> log;
    // Progress events (every evaluation, round and compile-wave heartbeat); unset = none.
    // The search also stops after the evaluation in flight once stop_requested()
    // (common/stop_request.h), leaving state.interrupted set.
    std::function<void(const ProgressEvent& event)> on_event;
    // Recorded with the run (store/records.h NewRun): kforge version, commit, toolchain.
    std::string kforge_version, git_commit, toolchain;
};

struct CandidateState {
    int64_t id = 0;
    std::string text;
    std::string proposer;
    std::string move;
    EvalStatus status = EvalStatus::kPassed;
    bool evaluated = false;
    std::string message;
    std::optional<eval::TimingStats> quick;
    std::optional<eval::TimingStats> full;
    Diagnosis diagnosis;  // empty until profiled
    // `text` parsed once (search/candidate.h: at admission, start or resume); null when the
    // text does not parse (a proposal the parser refused, recorded as invalid)
    std::shared_ptr<const dsl::Program> program;
    // The kernel groups (search/kernel_groups.h keys) whose knobs its move changed from its
    // first parent; empty: the whole program (the start, another structure, no parent).
    std::vector<std::string> group_keys;
    // Per kernel of its program, its time in its last timing (search/group_budget.h); empty
    // until timed.
    std::vector<double> kernel_ns;
};

// One kernel group of the run (search/group_budget.h): where its proposals and GPU-seconds
// went and what it gained. Kept by key for the whole run; `kernels` is its place in the best
// program (empty while the best has another structure without it).
struct GroupState {
    std::string key;
    std::string label;
    std::vector<size_t> kernels;
    double time_ns = 0;    // its members' time in the best program
    double start_ns = 0;   // ... in the start program (0: not one of the start's groups)
    double sol_ns = 0;     // its members' roofline bound (CostModel::kernel_estimates)
    double weight = 0;     // its share of this round's proposals
    int64_t proposals = 0;    // admitted proposals that moved it
    int64_t round_proposals = 0;
    int64_t evaluations = 0;  // evaluations of those proposals (every tier)
    double gpu_s = 0;         // GPU-seconds of those evaluations and their compile waves
    int improvements = 0;     // times one of its moves made a new best
    int stale_rounds = 0;     // rounds with proposals of its own since its last improvement
};

struct TierCounts {
    int64_t proposed = 0, static_ok = 0, screened = 0, compiled = 0, quick = 0, full = 0,
            profiled = 0, invalid = 0, cached = 0;
    // Candidates evaluated that paid a compile (the first of their compile configuration in the
    // run: Spent::compiles, what --budget-compiles limits) and those that paid none (a
    // launch-knob variant of a configuration compiled before: search/knob_space.h).
    int64_t compiles = 0, free = 0;
};

struct SearchState {
    Problem problem;
    Bounds bounds;
    bool simulated = false;
    std::string device_name;
    int64_t run_id = 0;
    int64_t device_id = 0;
    std::string start_hash;
    std::map<std::string, CandidateState> candidates;  // by program hash
    std::vector<std::string> pending;                  // in the store, never evaluated
    bool proposals_prefetched = false;  // pending holds the next round's proposals (made early)
    // Programs whose compile a prefetch already put in the cache (hashes): a round times them
    // without waiting for a compile wave (not stored: a resumed run compiles them again).
    std::set<std::string> precompiled;
    // The compile configurations (search/knob_space.h compile_configuration_key) the run has
    // paid a compile for: an evaluation of one of them charges no compile (loop_evaluate.cpp).
    std::set<std::string> charged_configurations;
    std::optional<CostModel> cost;
    ScreenCosts screen_costs;  // measured per-candidate costs, for round sizing (not stored)
    double profile_s = 0;      // seconds the profiling hook took, over `profiles` calls
    int profiles = 0;
    Progress progress;
    TierCounts counts;
    // Kernel groups (search/group_budget.h): every group seen, by first appearance; `whole`
    // holds what no group caused (the start program, other structures, profiling).
    std::vector<GroupState> groups;
    GroupState whole;
    std::vector<std::string> op_sigs;  // search/kernel_groups.h op_signatures of the problem
    std::string stop_reason;
    // Set by a round that found no compile wave fitting the wall budget left: the run stops.
    std::string budget_stop;
    // Set when the search stopped because stop_requested() (SIGINT/SIGTERM): the run is resumable.
    bool interrupted = false;
};

// Creates a run for `problem` starting from `start_text` and evaluates the start program.
Expected<SearchState> start_search(eval::Evaluator& evaluator, Store& store,
                                   const Problem& problem, const std::string& start_text,
                                   const SearchOptions& options);
Expected<SearchState> start_search(eval::Device& device, Store& store, const Problem& problem,
                                   const std::string& start_text, const SearchOptions& options);
// Rebuilds the state of run `run_id` from the store; candidates never evaluated are pending.
Expected<SearchState> resume_search(eval::Evaluator& evaluator, Store& store, int64_t run_id);
Expected<SearchState> resume_search(eval::Device& device, Store& store, int64_t run_id);

// One round. `spent` accumulates (shared across a suite). Error only when the store fails.
Status search_round(SearchState& state, eval::Evaluator& evaluator, Store& store,
                    const std::vector<Proposer*>& proposers, const SearchOptions& options,
                    Spent& spent);
Status search_round(SearchState& state, eval::Device& device, Store& store,
                    const std::vector<Proposer*>& proposers, const SearchOptions& options,
                    Spent& spent);

// Rounds until a stop condition fires; the reason is left in state.stop_reason.
Status run_search(SearchState& state, eval::Evaluator& evaluator, Store& store,
                  const std::vector<Proposer*>& proposers, const SearchOptions& options,
                  Spent& spent);
Status run_search(SearchState& state, eval::Device& device, Store& store,
                  const std::vector<Proposer*>& proposers, const SearchOptions& options,
                  Spent& spent);

// The hash of the fastest candidate that passed the full tier (else quick); nullopt if none.
std::optional<std::string> best_hash(const SearchState& state);
std::optional<double> best_time_ns(const SearchState& state);
std::optional<double> start_time_ns(const SearchState& state);

// The progress line: best time, %SOL, speedup vs start, budget left, candidates per tier.
std::string progress_line(const SearchState& state, const SearchOptions& options,
                          const Spent& spent);

// Writes best.kf (canonical), best.cu, plan.json and evidence.json (gates, timing, %SOL,
// lineage) into `out_dir` (created) when not empty; returns the evidence summary as text.
Expected<std::string> write_outputs(const SearchState& state, Store& store,
                                    const std::string& out_dir);

}  // namespace kforge::search
