// Internals of the search loop shared by its files: loop.cpp (the round and the run),
// loop_evaluate.cpp (one candidate evaluated and recorded), loop_propose.cpp (the proposers
// asked and their programs admitted), loop_compile.cpp (compile waves and their costs),
// loop_state.cpp (start and resume) and loop_output.cpp.
#pragma once

#include <future>
#include <optional>
#include <string>
#include <vector>

#include "eval/evaluate.h"
#include "eval/evaluator.h"
#include "eval/precompile.h"
#include "search/loop.h"

namespace kforge::search::detail {

// --- loop_evaluate.cpp

// Evaluates `hash` at `tier` through evaluate() with the store (cache and recording), updates
// the candidate, the counters, the cost model and `spent` (a compile charged once per compile
// configuration). Past the compile budget a program that needs a compile is not evaluated: the
// report says so (kNotSupported, `cached`: no cost) and the candidate stays unevaluated. An Error when the store could not
// record the evaluation (a failed write, a full disk, a damaged database): the run must stop
// there, as a result the store lacks is lost to resume, reports and the cache; what was
// committed before stays.
Expected<eval::EvalReport> evaluate_at(SearchState& state, eval::Evaluator& evaluator, Store& store,
                             const std::string& hash, EvalTier tier, const SearchOptions& options,
                             Spent& spent);

// The compile configuration of a candidate (search/knob_space.h compile_configuration_key; its
// text when it does not parse).
std::string configuration_of(const CandidateState& candidate);

// Whether evaluating `hash` would charge a compile: its configuration was not charged in the
// run and no precompile built it.
bool needs_compile(const SearchState& state, const std::string& hash);

// Records a candidate that failed parsing or the checker as invalid_program (never compiled).
Status record_invalid(SearchState& state, Store& store, const std::string& hash,
                      const std::string& message);

// Statistics of the candidate samples of an evaluation record.
eval::TimingStats stats_of(const EvaluationRecord& record);

// --- loop_propose.cpp

// Whether any candidate is timed (the proposers have a best to start from).
bool any_timed(const SearchState& state);

// Programs asked of each built-in proposer: options.proposals_per_round, more (up to 4x) when
// the round can screen more than that at the measured costs.
int proposals_wanted(const SearchState& state, const SearchOptions& options, size_t proposers,
                     double round_s);

// Asks every proposer (not exhausted) for `wanted` programs and admits them; the hashes that
// passed the checker are appended to `fresh`. Past the compile budget `fresh` keeps only
// programs that need no compile; when none is left, state.budget_stop says so (the run stops).
Status propose(SearchState& state, Store& store, const std::vector<Proposer*>& proposers,
               const SearchOptions& options, Spent& spent, int wanted,
               std::vector<std::string>& fresh);

// The next round's proposals, made now: they join the pending programs, and their hashes are
// returned for the precompile.
Expected<std::vector<std::string>> propose_ahead(SearchState& state, Store& store,
                                                 const std::vector<Proposer*>& proposers,
                                                 const SearchOptions& options, Spent& spent,
                                                 double round_s);

// --- loop.cpp

// The seconds a round plans for: a quarter of the budget left, at most options.round_share_s.
double round_plan_s(const SearchOptions& options, const Spent& spent);


// --- loop_compile.cpp

// How far past the wall budget a program compiled for the round may still be quick-timed.
constexpr double kCompiledTimingGraceS = 10.0;

// The running mean `mean` of `samples` values, with `value` added.
void add_sample(double& mean, int& samples, double value);

// The precompile request of the state's problem (no programs yet), where precompiling helps.
std::optional<eval::PrecompileRequest> precompile_request(const SearchState& state,
                                                          eval::Evaluator& evaluator,
                                                          const SearchOptions& options);

// Marks `hashes[i]` precompiled where program `i` of the precompile report compiled.
void mark_precompiled(SearchState& state, const std::vector<std::string>& hashes,
                      const Expected<eval::PrecompileReport>& report);

// The programs of `screened` a precompile may build, within the compile budget.
void fill_precompile(eval::PrecompileRequest& pre, const SearchState& state,
                     const std::vector<std::string>& screened, const SearchOptions& options,
                     const Spent& spent);

// Marks the candidates of `hashes` that share the compile configuration of a candidate the run
// compiled (search/knob_space.h: launch-knob variants) as precompiled: their compile is a cache
// hit, so the round screens them whatever the cut and they cost a quick timing only. Nothing
// without a compile cache or on the simulated device. Returns how many it marked.
int mark_free_candidates(SearchState& state, const std::vector<std::string>& hashes,
                         const SearchOptions& options);

// The compile-wave cost sample of one precompile that took `secs`.
void record_compile_cost(SearchState& state, const eval::PrecompileRequest& pre,
                         const Expected<eval::PrecompileReport>& report, double secs);

// The start program's correctness cases, built one at a time while `compile` runs.
void warm_start_cases(const SearchState& state, eval::Evaluator& evaluator,
                      const SearchOptions& options,
                      const std::future<Expected<eval::PrecompileReport>>& compile);

// A precompile run on its own thread: its request, the hashes of its programs, its report.
struct PrefetchResult {
    eval::PrecompileRequest request;
    std::vector<std::string> hashes;  // of request.program_texts, in order
    Expected<eval::PrecompileReport> report;
    double secs = 0;
};

// `req` (programs `hashes`) compiling on its own thread, timed.
std::future<PrefetchResult> compile_async(eval::PrecompileRequest req,
                                          std::vector<std::string> hashes);

// The next round's proposals `next` compiling ahead: what a round planned for `round_s` would
// screen of them and fit in the wall budget (its share), built by `pre` (its jobs as the caller
// set them) on its own thread; an invalid future when nothing is to compile. Defined in loop.cpp.
std::future<PrefetchResult> compile_ahead(const SearchState& state, eval::PrecompileRequest pre,
                                          const std::vector<std::string>& next,
                                          const SearchOptions& options, const Spent& spent,
                                          double round_s);

// Waits for a compile made ahead (`prefetch` valid): the wait counts as GPU-seconds (the GPU
// idles), the compile's cost is recorded and its programs marked precompiled.
void join_prefetch(SearchState& state, std::future<PrefetchResult>& prefetch, Spent& spent);

// The programs of `screened` that fit their compile waves and quick timings in the wall budget
// left at the measured costs, in their order.
std::vector<std::string> fitting(const SearchState& state, const std::vector<std::string>& screened,
                                 const SearchOptions& options, const Spent& spent);

}  // namespace kforge::search::detail
