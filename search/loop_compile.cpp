// The compile side of a round (search/loop_internal.h): precompile requests for the screened
// programs, compile waves on their own threads beside the timings, the measured compile costs,
// and what fits the wall budget left.
#include <algorithm>
#include <chrono>
#include <thread>

#include "compile/compile_history.h"
#include "dsl/parser.h"
#include "search/ladder.h"
#include "search/loop_internal.h"
#include "search/suite_start.h"

namespace kforge::search {
namespace detail {

// The precompile request of `st`'s problem (no programs yet), where precompiling helps: a
// compile cache and a real device (the simulated one compiles nothing).
std::optional<eval::PrecompileRequest> precompile_request(const SearchState& st,
                                                          eval::Evaluator& evaluator,
                                                          const SearchOptions& options) {
    auto device_info = evaluator.device_info();
    if (options.compile_cache_dir.empty() || !device_info.ok() || device_info->simulated)
        return std::nullopt;
    eval::PrecompileRequest pre;
    pre.problem = st.problem;
    pre.device = *device_info;
    pre.tier = EvalTier::kQuick;
    pre.compile_cache_dir = options.compile_cache_dir;
    return pre;
}

void add_sample(double& mean, int& samples, double value) {
    mean = (mean * samples + value) / (samples + 1);
    ++samples;
}

// Marks `hashes[i]` precompiled where program `i` of the precompile report compiled.
void mark_precompiled(SearchState& st, const std::vector<std::string>& hashes,
                      const Expected<eval::PrecompileReport>& report) {
    if (!report) return;
    for (size_t i = 0; i < hashes.size() && i < report->programs.size(); ++i)
        if (report->programs[i].ok()) st.precompiled.insert(hashes[i]);
}

// The programs of `screened` a precompile may build, within the compile budget.
void fill_precompile(eval::PrecompileRequest& pre, const SearchState& st,
                     const std::vector<std::string>& screened, const SearchOptions& options,
                     const Spent& spent) {
    int64_t room = options.budget.compiles ? *options.budget.compiles - spent.compiles
                                           : static_cast<int64_t>(screened.size());
    for (size_t i = 0; i < screened.size() && static_cast<int64_t>(i) < room; ++i)
        pre.program_texts.push_back(st.candidates.at(screened[i]).text);
}

// The compile-wave cost sample of one precompile that took `secs`.
void record_compile_cost(SearchState& st, const eval::PrecompileRequest& pre,
                         const Expected<eval::PrecompileReport>& report, double secs) {
    const int jobs = pre.jobs > 0 ? pre.jobs
                                  : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (report && report->sources > report->cache_hits) {
        const int compiled = report->sources - report->cache_hits;
        int programs = 0, units = 0;  // programs that compiled something, and their units
        for (const eval::PrecompiledProgram& p : report->programs)
            if (p.sources > p.cache_hits) ++programs, units += p.sources - p.cache_hits;
        ScreenCosts& sc = st.screen_costs;
        sc.compile_jobs = jobs;
        if (programs > 0) {
            // the sample count advances once, with the wave's
            int n = sc.compile_samples;
            add_sample(sc.compile_units, n, static_cast<double>(units) / programs);
        }
        add_sample(sc.compile_wave_s, sc.compile_samples, secs / ((compiled + jobs - 1) / jobs));
    }
    // each program's compile time into the cache's history, by kernel kind and configuration
    // (what the next suite's start phase plans its waves by)
    if (!report || pre.compile_cache_dir.empty()) return;
    for (size_t i = 0; i < report->programs.size() && i < pre.program_texts.size(); ++i) {
        const eval::PrecompiledProgram& p = report->programs[i];
        if (!p.ok() || p.sources <= p.cache_hits || p.time_compile_ns <= 0) continue;
        auto program = dsl::parse_program(pre.program_texts[i], "<compile history>");
        if (!program) continue;
        const CompileClass c = compile_class(*program);
        (void)compile::append_compile_history(pre.compile_cache_dir,
                                              {c.kind, c.config, p.time_compile_ns / 1e9});
    }
}

// The start program's correctness cases (inputs and references: 16-80 s per problem at the
// full shape on the H200, 2026-12-01), built by the evaluator's worker one case at a time while
// `compile` (the start's precompile, ~10-50 s) runs, until it is done: the start's tiers then
// find them cached. It stops once the compile is done, so it delays the round by at most the
// case in flight; the rest are built by the start's full tier as before (beside the prefetch
// below). A failure only ends the warm-up: the gates then run as they would without it.
void warm_start_cases(const SearchState& st, eval::Evaluator& evaluator,
                      const SearchOptions& options,
                      const std::future<Expected<eval::PrecompileReport>>& compile) {
    auto it = st.candidates.find(st.start_hash);
    if (it == st.candidates.end() || it->second.evaluated) return;
    eval::WarmRequest request;
    request.problem = st.problem;
    request.program_text = it->second.text;
    request.seed = options.seed;  // evaluate_at's
    request.tier = EvalTier::kFull;
    request.max_cases = 1;
    for (uint64_t i = 0;; ++i) {
        if (compile.wait_for(std::chrono::seconds(0)) == std::future_status::ready) return;
        request.first_case = i;
        eval::WarmReport r = evaluator.warm(request);
        if (!r.error.empty() || i + 1 >= r.cases_total) return;
    }
}

// `req` (programs `hashes`) compiling on its own thread, timed.
std::future<PrefetchResult> compile_async(eval::PrecompileRequest req, std::vector<std::string> hashes) {
    return std::async(std::launch::async, [req = std::move(req), hashes = std::move(hashes)] {
        auto t0 = std::chrono::steady_clock::now();
        PrefetchResult r{req, hashes, eval::precompile(req), 0.0};
        r.secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        return r;
    });
}

// The programs of `screened` that fit their compile waves and quick timings in the wall budget
// left at the measured costs, in their order: all of them without a wall budget or before a
// compile wave was measured. A compile wave that cannot finish in the budget is not started:
// waiting for one took runs with a 120 s budget to 137-262 s on the H200 (2026-12-01). Programs
// a prefetch already compiled cost a quick timing only: they go first and need no wave (GEMM
// runs otherwise stopped with a compiled wave of proposals never timed, 2026-12-01 s7).
std::vector<std::string> fitting(const SearchState& st, const std::vector<std::string>& screened,
                                 const SearchOptions& options, const Spent& spent) {
    const ScreenCosts& sc = st.screen_costs;
    if (!options.budget.wall_s || sc.compile_samples == 0) return screened;
    std::vector<std::string> ready, rest;
    for (const std::string& h : screened) (st.precompiled.count(h) ? ready : rest).push_back(h);
    const double wall_left = std::max(0.0, *options.budget.wall_s - spent.wall_s);
    const double quick = std::max(1e-3, sc.quick_s);
    ready.resize(std::min(ready.size(), static_cast<size_t>(wall_left / quick)));
    const double left = wall_left - static_cast<double>(ready.size()) * quick;
    const size_t n = std::min(rest.size(), screen_capacity(sc, left).value_or(rest.size()));
    ready.insert(ready.end(), rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(n));
    return ready;
}

}  // namespace detail
}  // namespace kforge::search
