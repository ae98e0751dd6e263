// The compile side of a round (search/loop_internal.h): precompile requests for the screened
// programs, compile waves on their own threads beside the timings, the measured compile costs,
// and what fits the wall budget left.
#include <algorithm>
#include <chrono>
#include <map>
#include <set>
#include <thread>

#include "compile/compile_history.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "search/group_budget.h"
#include "search/knob_space.h"
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

// The compile configurations (search/knob_space.h compile_configuration_key) the run has
// compiled: of candidates a precompile built and of candidates timed (their compile passed).
std::set<std::string> compiled_configurations(const SearchState& st) {
    std::set<std::string> out;
    for (const auto& [h, c] : st.candidates)
        if (c.program && (st.precompiled.count(h) || c.quick || c.full))
            out.insert(compile_configuration_key(*c.program));
    return out;
}

// Whether candidate `h` needs no compile of its own: precompiled, or a launch-knob variant of a
// configuration in `compiled`.
bool compiled_already(const SearchState& st, const std::set<std::string>& compiled,
                      const std::string& h) {
    if (st.precompiled.count(h)) return true;
    const CandidateState& c = st.candidates.at(h);
    return c.program && compiled.count(compile_configuration_key(*c.program));
}

// The programs of `screened` a precompile may build, within the compile budget: a prefix of
// `screened` (callers map the report back by position), in which programs that need no compile
// of their own (compiled_already: their units are cache hits) take no room.
void fill_precompile(eval::PrecompileRequest& pre, const SearchState& st,
                     const std::vector<std::string>& screened, const SearchOptions& options,
                     const Spent& spent) {
    int64_t room = options.budget.compiles ? *options.budget.compiles - spent.compiles
                                           : static_cast<int64_t>(screened.size());
    const std::set<std::string> compiled =
        options.compile_cache_dir.empty() ? std::set<std::string>{} : compiled_configurations(st);
    for (const std::string& h : screened) {
        const bool free = compiled_already(st, compiled, h);
        if (!free && room <= 0) break;
        pre.program_texts.push_back(st.candidates.at(h).text);
        if (!free) --room;
    }
}

int mark_free_candidates(SearchState& st, const std::vector<std::string>& hashes,
                         const SearchOptions& options) {
    if (options.compile_cache_dir.empty() || st.simulated) return 0;
    const std::set<std::string> compiled = compiled_configurations(st);
    int marked = 0;
    for (const std::string& h : hashes) {
        if (!st.candidates.count(h) || st.precompiled.count(h)) continue;
        if (!compiled_already(st, compiled, h)) continue;
        st.precompiled.insert(h);
        ++marked;
    }
    return marked;
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
    // each compile's time into the cache's history, by kernel kind and configuration (what the
    // next suite's start phase plans its waves by), charged to the first program of the batch
    // that needed it: the precompile compiles a source once and reports its time for every
    // program that shares it (launch-knob variants of one configuration), which compiled nothing
    if (!report || pre.compile_cache_dir.empty()) return;
    struct Charge {
        size_t program;
        int shared_by = 0;
    };
    std::map<std::string, Charge> charges;  // by compile configuration, in batch order
    std::vector<std::string> order;
    std::vector<std::optional<dsl::Program>> programs(pre.program_texts.size());
    for (size_t i = 0; i < report->programs.size() && i < pre.program_texts.size(); ++i) {
        const eval::PrecompiledProgram& p = report->programs[i];
        if (!p.ok() || p.sources <= p.cache_hits || p.time_compile_ns <= 0) continue;
        auto program = dsl::parse_program(pre.program_texts[i], "<compile history>");
        if (!program) continue;
        const std::string key = compile_configuration_key(*program);
        programs[i] = std::move(*program);
        auto [it, fresh] = charges.emplace(key, Charge{i});
        if (fresh) order.push_back(key);
        else ++it->second.shared_by;
    }
    for (const std::string& key : order) {
        const Charge& ch = charges.at(key);
        const CompileClass c = compile_class(*programs[ch.program]);
        compile::CompileTimeSample sample{c.kind, c.config,
                                          report->programs[ch.program].time_compile_ns / 1e9};
        sample.charged_to = dsl::program_hash(*programs[ch.program]);
        sample.shared_by = ch.shared_by;
        (void)compile::append_compile_history(pre.compile_cache_dir, sample);
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

void join_prefetch(SearchState& st, std::future<PrefetchResult>& prefetch, Spent& spent) {
    const auto t0 = std::chrono::steady_clock::now();
    PrefetchResult r = prefetch.get();
    const double wait_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    spent.gpu_s += wait_s;
    charge_wave(st, r.hashes, wait_s);
    record_compile_cost(st, r.request, r.report, r.secs);
    mark_precompiled(st, r.hashes, r.report);
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
