// The start phase of a suite: every problem's start program compiled and timed once (its quick
// tier) under the suite's wall budget, from the budget's first second.
//
// The plan (plan_starts): each start program gets a compile-time estimate from the compile
// cache's history by kernel kind and configuration (compile/compile_history.h; a default table
// without history) and a priority, its SOL headroom (1 - the cost model's estimated fraction of
// SOL) per compile-second, as the suite's budget allocator would spend. Programs that need nvcc
// (CUTLASS GEMMs and convolutions) are compiled in that order by a pool of `jobs` workers; those
// that need none (NVRTC row-wise and map kernels, compiled inside their evaluation in about a
// second; every program on the simulated device) are ready to time at once.
//
// The schedule (run_start_phase): the GPU times a ready program whenever one is waiting, highest
// priority first, while the compiles run; it waits for a compile only when nothing compiled is
// left to time. A compile is started only when its estimate and a timing fit the wall budget
// left, a timing only when it fits; every start not compiled and timed so is "not reached". One
// line per start as it goes: problem, compile seconds, time, % SOL (or the compiler's message).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "search/loop.h"

namespace kforge::search {

// What a program costs to compile, by its costliest kernel: CUTLASS kernels need nvcc (a wave of
// them takes about a minute), kforge's own row-wise and map kernels compile with NVRTC in about a
// second. The compile history (compile/compile_history.h) is kept by kind and config.
struct CompileClass {
    std::string kind = "map";  // "conv2d", "gemm_sm90", "gemm_multistage", "rowwise", "map"
    std::string config;        // a GEMM's or conv's tile, schedule, math (and cluster)
    bool needs_nvcc = false;
    int rank = 0;              // costliest first: conv2d 4, sm90 GEMM 3, multistage 2, ...
};
CompileClass compile_class(const dsl::Program& program);

// What compiling one start program did.
struct StartCompileResult {
    bool ok = true;          // compiled, or nothing to compile
    bool compiled = false;   // something was compiled (not cache hits only, not the sim device)
    double seconds = 0;      // wall time of the compile
    std::string message;     // the compiler's own message when !ok
};

// Compiles one start program, blocking; called on a worker thread of the start phase.
using StartCompiler =
    std::function<StartCompileResult(const Problem& problem, const std::string& program_text)>;

struct StartPlanItem {
    size_t state = 0;            // index of the suite's state
    std::string kind, config;    // the program's compile class: its costliest kernel
    bool needs_nvcc = false;     // compiled by the pool (else timed at once)
    double compile_est_s = 0;    // 0 when nothing is compiled
    std::string estimate_basis;  // "2 samples of gemm_sm90 ...", "default for ...", ...
    double headroom = 1;         // 1 - the estimated fraction of SOL
    double priority = 0;         // headroom per compile-second
    int wave = 0;                // compile wave of the plan (1..), 0: no compile
    double planned_ready_s = 0;  // when the plan has it compiled, from the phase's start
};

struct StartPlan {
    std::vector<StartPlanItem> items;  // compiled ones by priority, then the ready ones
    int jobs = 1;
    double time_est_s = 0;             // one start's quick tier, as planned
};

struct StartPhaseOptions {
    StartCompiler compile;  // unset: eval::precompile into options.compile_cache_dir (nothing
                            // to compile on the simulated device or without a cache)
    int jobs = 0;           // parallel compiles; 0: one per core
    double time_est_s = 2;  // one start's quick tier before any was measured
    // The plan and one line per start as it goes; unset: silent.
    std::function<void(const std::string& line)> print;
    // The schedule's events, for tests: "compile P", "compiled P", "time P", "timed P",
    // "wait" (the GPU idle until a compile ends), "not reached P".
    std::function<void(const std::string& event)> event;
};

// The plan of the starts of `states` not evaluated yet. `compiles`: whether anything will be
// compiled (a compiler hook, or a real device with a compile cache); `history_dir`: the compile
// cache whose history gives the estimates ("" for none).
StartPlan plan_starts(const std::vector<SearchState>& states, bool compiles,
                      const std::string& history_dir, int jobs, double time_est_s);

// The plan as printed: a head line, then one line per start (wave, estimate, its basis).
std::string describe_start_plan(const StartPlan& plan, const std::vector<SearchState>& states,
                                const Budget& budget);

struct StartPhaseResult {
    std::vector<size_t> timed;        // states whose start was evaluated at the quick tier
    std::vector<size_t> failed;       // states whose start failed to compile (recorded)
    std::vector<size_t> not_reached;  // not compiled and timed within the wall budget
    bool interrupted = false;         // stopped by stop_requested() (common/stop_request.h)
};

// Runs the start phase on `states` (their wall clock started). Each not reached state gets its
// stop_reason ("not reached: ..."); a start that failed to compile is recorded in the store as a
// compile_failed evaluation with the compiler's message, and its state's stop_reason says so.
// An Error only when the store fails.
Expected<StartPhaseResult> run_start_phase(std::vector<SearchState>& states,
                                           eval::Evaluator& evaluator, Store& store,
                                           const SearchOptions& options, Spent& spent,
                                           const StartPhaseOptions& start);

}  // namespace kforge::search
