// The start phase's schedule: compiles on a worker pool, timings on the GPU between them
// (search/suite_start.h).
#include "search/suite_start.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <deque>
#include <map>
#include <mutex>
#include <thread>

#include "common/stop_request.h"
#include "compile/compile_history.h"
#include "eval/precompile.h"
#include "search/loop_internal.h"
#include "sol/sol_share.h"

namespace kforge::search {
namespace {

std::string fmt(double v, const char* f = "%.1f") {
    char b[48];
    std::snprintf(b, sizeof b, f, v);
    return b;
}

std::string first_line(const std::string& s) { return s.substr(0, s.find('\n')); }

// "12.345 us, 87.3% SOL": the share through sol/sol_share (at most 100%, a time under the
// bound marked), as every other SOL share kforge prints.
std::string time_and_sol(double median_ns, double time_sol_s) {
    const SolShare share = sol_share(median_ns * 1e-9, time_sol_s);
    return fmt(median_ns / 1e3, "%.3f") + " us, " + fmt(sol_percent(share)) + "% SOL" +
           (share.under_bound ? " (flagged: under the SOL bound)" : "");
}

// The start of `st` evaluated at `tier` (quick or full) and timed: its wall seconds, also a
// sample of the state's cost of that tier unless the evaluation cache served it.
Expected<double> evaluate_start(SearchState& st, eval::Evaluator& evaluator, Store& store,
                                EvalTier tier, const SearchOptions& options, Spent& spent) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = detail::evaluate_at(st, evaluator, store, st.start_hash, tier, options, spent);
    if (!r) return r.error();
    const double secs =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ScreenCosts& c = st.screen_costs;
    if (!r->cached && tier == EvalTier::kFull) detail::add_sample(c.full_s, c.full_samples, secs);
    if (!r->cached && tier != EvalTier::kFull) detail::add_sample(c.quick_s, c.quick_samples, secs);
    return secs;
}

// What a tier of the start gave: its time and SOL share, else its status and message.
std::string start_result(const SearchState& st, const std::optional<eval::TimingStats>& timing) {
    if (timing && timing->median_ns > 0)
        return time_and_sol(timing->median_ns, st.bounds.time_fused_s);
    const CandidateState& c = st.candidates.at(st.start_hash);
    return std::string(to_string(c.status)) + ": " + first_line(c.message);
}

// The default compiler: the start program precompiled into the compile cache (what its
// evaluation then finds there), one job; nothing without a cache or on the simulated device.
StartCompiler default_compiler(eval::Evaluator& evaluator, const SearchOptions& options) {
    auto info = evaluator.device_info();
    if (options.compile_cache_dir.empty() || !info || info->simulated) return {};
    eval::DeviceInfo device = *info;
    std::string cache = options.compile_cache_dir;
    return [device, cache](const Problem& problem, const std::string& text) {
        eval::PrecompileRequest req;
        req.problem = problem;
        req.device = device;
        req.tier = EvalTier::kQuick;
        req.compile_cache_dir = cache;
        req.program_texts = {text};
        req.jobs = 1;
        auto t0 = std::chrono::steady_clock::now();
        auto report = eval::precompile(req);
        StartCompileResult r;
        r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (!report) return StartCompileResult{false, false, r.seconds, report.error().to_string()};
        if (report->programs.empty()) return r;
        const eval::PrecompiledProgram& p = report->programs[0];
        r.compiled = p.sources > p.cache_hits;
        r.ok = p.ok() || p.status == eval::PrecompileStatus::kSkipped;
        r.message = p.message;
        return r;
    };
}

// A start that failed to compile, in the store as its compile tier with the compiler's message
// (what a report and a resumed run read), and in its state.
Status record_compile_failure(SearchState& st, Store& store, const std::string& message) {
    CandidateState& c = st.candidates.at(st.start_hash);
    NewEvaluation e;
    e.candidate_id = c.id;
    e.device_id = st.device_id;
    e.toolchain = "start compile";
    e.shapes_key = eval::shapes_key(st.problem);
    e.tier = EvalTier::kCompile;
    e.status = EvalStatus::kCompileFailed;
    e.error_text = message;
    auto id = store.add_evaluation(e);
    if (!id) return id.error();
    c.evaluated = true;
    c.status = EvalStatus::kCompileFailed;
    c.message = message;
    st.stop_reason = "its start program failed to compile: " + first_line(message);
    return Ok{};
}

struct Finished {
    size_t item;  // index into the plan
    StartCompileResult result;
};

}  // namespace

Expected<StartPhaseResult> run_start_phase(std::vector<SearchState>& states,
                                           eval::Evaluator& evaluator, Store& store,
                                           const SearchOptions& options, Spent& spent,
                                           const StartPhaseOptions& start) {
    StartPhaseResult result;
    const StartCompiler compile = start.compile ? start.compile : default_compiler(evaluator, options);
    const int jobs = start.jobs > 0 ? start.jobs
                                    : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    double time_est_s = start.time_est_s;
    StartPlan plan = plan_starts(states, static_cast<bool>(compile), options.compile_cache_dir,
                                 jobs, time_est_s);
    auto print = [&](const std::string& s) {
        if (start.print) start.print(s);
    };
    auto event = [&](const std::string& s) {
        if (start.event) start.event(s);
    };
    if (plan.items.empty()) return result;
    print(describe_start_plan(plan, states, options.budget));
    const std::optional<double> wall = options.budget.wall_s;
    auto left_s = [&] {
        tick(spent);
        return wall ? *wall - spent.wall_s : 1e18;
    };
    auto name = [&](size_t item) { return states[plan.items[item].state].problem.name; };
    auto not_reached = [&](size_t item, const std::string& why) {
        SearchState& st = states[plan.items[item].state];
        st.stop_reason = "not reached: " + why;
        result.not_reached.push_back(plan.items[item].state);
        event("not reached " + st.problem.name);
        print("start " + st.problem.name + ": not reached (" + why + ")\n");
    };

    std::deque<size_t> to_compile;        // plan items, by priority
    std::vector<size_t> ready;            // compiled or nothing to compile, by priority
    std::map<size_t, double> compiled_s;  // item -> measured compile seconds
    for (size_t i = 0; i < plan.items.size(); ++i)
        (plan.items[i].needs_nvcc ? to_compile.push_back(i) : ready.push_back(i));

    std::mutex mu;
    std::condition_variable cv;
    std::vector<Finished> finished;  // guarded by mu
    std::vector<std::thread> workers;
    int in_flight = 0;
    auto launch = [&](size_t item) {
        const SearchState& st = states[plan.items[item].state];
        Problem problem = st.problem;
        std::string text = st.candidates.at(st.start_hash).text;
        event("compile " + st.problem.name);
        ++in_flight;
        workers.emplace_back([&, item, problem = std::move(problem), text = std::move(text)] {
            StartCompileResult r;
            try {
                r = compile(problem, text);
            } catch (const std::exception& e) {
                r = {false, false, 0, std::string("compile: ") + e.what()};
            }
            std::lock_guard<std::mutex> lock(mu);
            finished.push_back({item, std::move(r)});
            cv.notify_all();
        });
    };
    auto collect = [&]() -> Status {  // compiles that ended: ready to time, or failed
        std::vector<Finished> done;
        {
            std::lock_guard<std::mutex> lock(mu);
            done.swap(finished);
        }
        for (Finished& f : done) {
            --in_flight;
            const StartPlanItem& it = plan.items[f.item];
            event("compiled " + name(f.item));
            if (f.result.compiled && f.result.ok && !options.compile_cache_dir.empty())
                (void)compile::append_compile_history(options.compile_cache_dir,
                                                      {it.kind, it.config, f.result.seconds});
            if (f.result.ok) {
                compiled_s[f.item] = f.result.seconds;
                if (f.result.compiled) {  // the problem's first measured compile wave: its
                    // rounds size their waves to the wall budget left by it (detail::fitting)
                    ScreenCosts& sc = states[it.state].screen_costs;
                    sc.compile_jobs = jobs;
                    detail::add_sample(sc.compile_wave_s, sc.compile_samples, f.result.seconds);
                }
                ready.push_back(f.item);
                std::stable_sort(ready.begin(), ready.end(), [&](size_t a, size_t b) {
                    return plan.items[a].priority > plan.items[b].priority;
                });
                continue;
            }
            // a compile killed by the stop (common/process.h) says nothing about the program:
            // its problem stays unfinished, to resume
            if (stop_requested()) continue;
            SearchState& st = states[it.state];
            const std::string message = f.result.message.empty()
                                            ? "the compiler failed and said nothing"
                                            : f.result.message;
            print("start " + st.problem.name + ": compile failed after " + fmt(f.result.seconds) +
                  " s: " + message + "\n");
            if (auto s = record_compile_failure(st, store, message); !s) return s;
            result.failed.push_back(it.state);
        }
        return Ok{};
    };
    auto join_all = [&] {
        for (std::thread& t : workers)
            if (t.joinable()) t.join();
    };

    // while the GPU waits for compiles, a heartbeat event every kHeartbeatS (a CUTLASS compile
    // is silent for ~50 s), as a search round's compile wave has
    constexpr int kHeartbeatS = 5;
    const auto phase_t0 = std::chrono::steady_clock::now();
    auto last_beat = phase_t0;
    auto heartbeat = [&] {
        const auto now = std::chrono::steady_clock::now();
        if (!options.on_event || now - last_beat < std::chrono::seconds(kHeartbeatS)) return;
        last_beat = now;
        ProgressEvent e;
        e.kind = ProgressEvent::Kind::kHeartbeat;
        e.text = "compiling " + std::to_string(in_flight) + " start program(s)";
        e.elapsed_s = std::chrono::duration<double>(now - phase_t0).count();
        options.on_event(e);
    };
    int timings = 0;
    double timing_sum_s = 0;
    std::vector<size_t> full_queue;  // timed starts (states), best first, for the full tier
    int full_n = 0;
    double full_sum_s = 0;
    Status status = Ok{};
    while (true) {
        if (stop_requested()) {
            result.interrupted = true;
            break;
        }
        if (status = collect(); !status) break;
        // keep the compile pool full with what still fits the budget (cheaper ones may fit
        // where a costlier one does not)
        while (in_flight < jobs && !to_compile.empty()) {
            const size_t item = to_compile.front();
            to_compile.pop_front();
            const double need = plan.items[item].compile_est_s + time_est_s;
            if (need > left_s())
                not_reached(item, "compile est " + fmt(plan.items[item].compile_est_s) +
                                      " s and a timing of " + fmt(time_est_s) + " s, " +
                                      fmt(std::max(0.0, left_s())) + " s of the wall budget left");
            else
                launch(item);
        }
        if (!ready.empty()) {  // the GPU times whatever is compiled, best first
            const size_t item = ready.front();
            ready.erase(ready.begin());
            // the first timing goes whenever budget is left (it measures what the rest cost)
            if (left_s() <= 0 || (timings > 0 && time_est_s > left_s())) {
                not_reached(item, "a timing of " + fmt(time_est_s) + " s, " +
                                      fmt(std::max(0.0, left_s())) + " s of the wall budget left");
                continue;
            }
            SearchState& st = states[plan.items[item].state];
            event("time " + st.problem.name);
            auto secs = evaluate_start(st, evaluator, store, EvalTier::kQuick, options, spent);
            if (!secs) {
                status = secs.error();
                break;
            }
            timing_sum_s += *secs;
            time_est_s = timing_sum_s / ++timings;
            event("timed " + st.problem.name);
            result.timed.push_back(plan.items[item].state);
            if (st.candidates.at(st.start_hash).quick) full_queue.push_back(plan.items[item].state);
            const StartPlanItem& it = plan.items[item];
            std::string line = "start " + st.problem.name + ": ";
            line += it.needs_nvcc ? "compiled in " + fmt(compiled_s[item]) + " s (est " +
                                        fmt(it.compile_est_s) + " s)"
                                  : it.estimate_basis;
            const auto& quick = st.candidates.at(st.start_hash).quick;
            line += (quick && quick->median_ns > 0 ? ", " : ", quick tier ") +
                    start_result(st, quick);
            print(line + (st.simulated ? " (simulated)\n" : "\n"));
            continue;
        }
        if (in_flight == 0) break;
        // Nothing compiled to time while compiles run: the GPU gives a timed start its full tier
        // (every gate, the full-shape correctness cases: 16-80 s on the H200), which its first
        // round would otherwise spend, when one fits the budget left.
        if (!full_queue.empty()) {
            const size_t i = full_queue.front();
            full_queue.erase(full_queue.begin());
            SearchState& st = states[i];
            const double full_est = full_n > 0 ? full_sum_s / full_n
                                               : std::max(4 * time_est_s, st.simulated ? 2.0 : 30.0);
            if (full_est > left_s()) continue;
            event("full " + st.problem.name);
            auto secs = evaluate_start(st, evaluator, store, EvalTier::kFull, options, spent);
            if (!secs) {
                status = secs.error();
                break;
            }
            full_sum_s += *secs;
            ++full_n;
            print("start " + st.problem.name + ": full tier while compiles run, " +
                  start_result(st, st.candidates.at(st.start_hash).full) + " (" + fmt(*secs) +
                  " s)" + (st.simulated ? " (simulated)\n" : "\n"));
            continue;
        }
        event("wait");  // nothing compiled to time: the GPU waits for the next compile
        heartbeat();
        std::unique_lock<std::mutex> lock(mu);
        cv.wait_for(lock, std::chrono::milliseconds(200), [&] { return !finished.empty(); });
    }
    if (result.interrupted && in_flight > 0)
        print("stop requested: " + std::to_string(in_flight) +
              " start compiles in flight are stopped\n");
    join_all();
    if (!status) return status.error();
    (void)collect();
    // what was never compiled or timed: not reached (an interrupted phase leaves them to resume)
    if (!result.interrupted) {
        for (size_t item : to_compile) not_reached(item, "the wall budget ended first");
        for (size_t item : ready) not_reached(item, "the wall budget ended first");
    }
    return result;
}

}  // namespace kforge::search
