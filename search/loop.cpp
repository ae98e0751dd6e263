// One round of the search and the loop over rounds (search/loop.h).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdio>
#include <future>
#include <mutex>
#include <optional>
#include <thread>

#include "common/stop_request.h"
#include "search/group_budget.h"
#include "search/ladder.h"
#include "search/loop_internal.h"
#include "sol/sol_share.h"

namespace kforge::search {
namespace {

using detail::add_sample;
using detail::any_timed;
using detail::compile_async;
using detail::fill_precompile;
using detail::fitting;
using detail::kCompiledTimingGraceS;
using detail::mark_precompiled;
using detail::precompile_request;
using detail::PrefetchResult;
using detail::propose;
using detail::propose_ahead;
using detail::proposals_wanted;
using detail::record_compile_cost;
using detail::warm_start_cases;

// While alive, a heartbeat event every few seconds on its own thread (a CUTLASS compile wave is
// silent for ~50 s otherwise); nothing without options.on_event.
class Heartbeat {
public:
    Heartbeat(const SearchOptions& options, std::string what) {
        if (!options.on_event) return;
        thread_ = std::thread([this, &options, what = std::move(what)] {
            const auto t0 = std::chrono::steady_clock::now();
            std::unique_lock lock(mu_);
            while (!cv_.wait_for(lock, std::chrono::seconds(kPeriodS), [this] { return done_; })) {
                ProgressEvent e;
                e.kind = ProgressEvent::Kind::kHeartbeat;
                e.text = what;
                e.elapsed_s =
                    std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
                options.on_event(e);
            }
        });
    }
    ~Heartbeat() {
        if (!thread_.joinable()) return;
        {
            std::lock_guard lock(mu_);
            done_ = true;
        }
        cv_.notify_all();
        thread_.join();
    }
    Heartbeat(const Heartbeat&) = delete;
    Heartbeat& operator=(const Heartbeat&) = delete;

private:
    static constexpr int kPeriodS = 5;
    std::mutex mu_;
    std::condition_variable cv_;
    bool done_ = false;
    std::thread thread_;
};

double time_of(const CandidateState& c) {
    if (c.status != EvalStatus::kPassed) return 0;
    if (c.full) return c.full->median_ns;
    return 0;
}

// What one profile (an ncu run of a program) is taken to cost before this problem measured one:
// on the H100 machine two ncu runs took ~31 s (b600, 2026-12-06).
constexpr double kProfileEstimateS = 15.0;

// The profiling tier: the `top` fastest timed candidates without a diagnosis, each only while
// the wall budget left holds what a profile costs (measured per problem, else
// kProfileEstimateS): a suite's last round that profiled with 24 s left ended 7 s past its
// budget (b600 on the H100, 2026-12-06). Without a diagnosis the proposers still propose.
void profile_best(SearchState& st, const SearchOptions& options, Spent& spent, int top) {
    if (!options.profile_hook) return;
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [h, c] : st.candidates)
        if (double t = time_of(c); t > 0) ranked.push_back({t, h});
    std::sort(ranked.begin(), ranked.end());
    for (size_t i = 0; i < ranked.size() && static_cast<int>(i) < top; ++i) {
        CandidateState& c = st.candidates.at(ranked[i].second);
        if (!c.diagnosis.empty()) continue;
        tick(spent);
        const double estimate_s =
            st.profiles > 0 ? st.profile_s / static_cast<double>(st.profiles) : kProfileEstimateS;
        if (options.budget.wall_s && *options.budget.wall_s - spent.wall_s < estimate_s) return;
        const auto t0 = std::chrono::steady_clock::now();
        c.diagnosis = options.profile_hook(c.text);
        st.profile_s += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        ++st.profiles;
        if (!c.diagnosis.empty()) ++st.counts.profiled;
    }
}

// The time a round may spend screening: a quarter of what is left of the wall and GPU budgets
// (a minute without either), so that a run has a few rounds to learn from.
double round_screen_s(const Budget& budget, const Spent& spent) {
    std::optional<double> left;
    if (budget.wall_s) left = *budget.wall_s - spent.wall_s;
    if (budget.gpu_s) left = std::min(left.value_or(*budget.gpu_s), *budget.gpu_s - spent.gpu_s);
    return left ? std::max(0.0, *left) / 4 : 60.0;
}

// The cost-model screen: as many of `fresh` as the round can compile and time at the measured
// costs (screen_count), best estimates first; the start program always goes through.
// `count` replaces the round's count (the start's compile wave: as many as it has room for).
std::vector<std::string> screen(const SearchState& st, const std::vector<std::string>& fresh,
                                const SearchOptions& options, double round_s,
                                std::optional<size_t> count = std::nullopt) {
    std::vector<std::optional<double>> est;
    for (const std::string& h : fresh) {
        const CandidateState& c = st.candidates.at(h);
        std::optional<double> e;
        if (c.program)
            if (auto t = st.cost->estimate_ns(*c.program)) e = *t;
        est.push_back(h == st.start_hash ? std::optional<double>(0.0) : e);
    }
    std::vector<std::string> screened;
    for (size_t i : screen_by_estimate(
             est, count ? std::min(*count, fresh.size())
                        : screen_count(fresh.size(), options.promote_ratio, st.screen_costs, round_s)))
        screened.push_back(fresh[i]);
    return screened;
}

// fitting() within the round's share of the wall budget (SearchOptions::round_share_s): what
// was precompiled or needs no compile wave fits a share; when nothing does, the round still
// pays its least, a compile wave in the budget left (a problem needing nvcc would otherwise
// never get a round while a suite's shares are small).
std::vector<std::string> fitting_share(const SearchState& st, const std::vector<std::string>& screened,
                                       const SearchOptions& options, const Spent& spent) {
    if (options.round_share_s && options.budget.wall_s) {
        SearchOptions share = options;
        share.budget.wall_s = std::min(*options.budget.wall_s, spent.wall_s + *options.round_share_s);
        std::vector<std::string> fit = fitting(st, screened, share, spent);
        if (!fit.empty()) return fit;
    }
    return fitting(st, screened, options, spent);
}

}  // namespace

double detail::round_plan_s(const SearchOptions& options, const Spent& spent) {
    const double quarter = round_screen_s(options.budget, spent);
    return options.round_share_s ? std::min(quarter, *options.round_share_s) : quarter;
}

std::future<PrefetchResult> detail::compile_ahead(const SearchState& st, eval::PrecompileRequest pre,
                                                  const std::vector<std::string>& next,
                                                  const SearchOptions& options, const Spent& spent,
                                                  double round_s) {
    std::vector<std::string> first = fitting_share(st, screen(st, next, options, round_s), options, spent);
    fill_precompile(pre, st, first, options, spent);
    first.resize(pre.program_texts.size());
    if (pre.program_texts.empty()) return {};
    return compile_async(std::move(pre), std::move(first));
}

Status search_round(SearchState& st, eval::Evaluator& evaluator, Store& store,
                    const std::vector<Proposer*>& proposers, const SearchOptions& options,
                    Spent& spent) {
    tick(spent);
    const double round_s = detail::round_plan_s(options, spent);
    const double round_start_s = spent.wall_s;
    const std::optional<std::string> best_before = best_hash(st);
    // a stop asked for (Ctrl-C) ends the round after the evaluation in flight, like a budget
    auto over_budget = [&] {
        tick(spent);
        return stop_requested() || budget_exhausted(options.budget, spent).has_value();
    };
    // 0. profile the best few not yet diagnosed, right before the proposers read the diagnoses
    //    (lazily: a problem whose next round never comes, in a suite or at the end of the
    //    budget, spends no profiler time on it)
    profile_best(st, options, spent, options.profile_top);
    // 1. propose + static check (pending candidates from a killed run go first, unchecked again)
    std::vector<std::string> fresh = std::move(st.pending);
    st.pending.clear();
    const int wanted = proposals_wanted(st, options, proposers.size(), round_s);
    // nothing timed yet (a fresh run): time the start program before anyone proposes
    const bool wait_for_start = !any_timed(st) && !fresh.empty();
    // (proposals made while the start program's full tier ran - prefetch below - are this
    // round's; the proposers are not asked again)
    if (!wait_for_start && !st.proposals_prefetched)
        if (auto s = propose(st, store, proposers, options, spent, wanted, fresh); !s) return s;
    st.proposals_prefetched = false;
    // launch-knob variants of compiled configurations cost a quick timing only
    detail::mark_free_candidates(st, fresh, options);
    // 2. cost-model screen (the start program always goes through)
    const size_t cut_size = promote_count(fresh.size(), options.promote_ratio);
    std::vector<std::string> screened = screen(st, fresh, options, round_s);
    // what a prefetch compiled is screened whatever the cut: it costs a quick timing only
    for (const std::string& h : fresh)
        if (st.precompiled.count(h) && std::find(screened.begin(), screened.end(), h) == screened.end())
            screened.push_back(h);
    if (!wait_for_start) {
        std::vector<std::string> fit = fitting_share(st, screened, options, spent);
        for (const std::string& h : screened)
            if (std::find(fit.begin(), fit.end(), h) == fit.end()) st.pending.push_back(h);
        screened = std::move(fit);
        if (screened.empty() && !st.pending.empty()) {
            char why[192];
            std::snprintf(why, sizeof why,
                          "wall-clock budget: %.1f s left, less than a compile wave and a quick "
                          "timing (%.1f s and %.1f s measured)",
                          *options.budget.wall_s - spent.wall_s, st.screen_costs.compile_wave_s,
                          st.screen_costs.quick_s);
            st.budget_stop = why;
            return Ok{};
        }
    }
    st.counts.screened += static_cast<int64_t>(screened.size());
    // 3. compile + quick timing; the screened batch is compiled in parallel first (as many as
    //    the compile budget allows), so each evaluation's compile gates are cache hits
    std::optional<eval::PrecompileRequest> pre_request;
    if (!screened.empty()) pre_request = precompile_request(st, evaluator, options);
    std::future<PrefetchResult> early;  // proposals compiling beside the start program
    if (pre_request) {
        fill_precompile(*pre_request, st, screened, options, spent);
        // The start's compile wave (a CUTLASS one ~50 s on the H200) leaves most cores idle:
        // a first batch of proposals compiles beside it, so the round after the start times
        // them without a wave of their own (a GEMM run of 120 s otherwise gets one search
        // round). Not when the start was compiled already (a suite's parallel start wave).
        // Its own batch on `extra` workers, joined at the end of the round: in one batch with
        // the start, the start's timing waited for every proposal's compile units (mish's start
        // was timed 38 s into the run instead of 6 s, H200 2026-12-01).
        const int extra = options.start_wave_extra >= 0
                              ? options.start_wave_extra
                              : static_cast<int>(std::thread::hardware_concurrency()) / 2 - 1;
        if (wait_for_start && extra > 0 && !st.precompiled.count(st.start_hash)) {
            auto next = propose_ahead(st, store, proposers, options, spent, round_s);
            if (!next) return next.error();
            st.proposals_prefetched = !next->empty();
            if (auto early_req = precompile_request(st, evaluator, options)) {
                // As many programs as compile in one wave of `extra` workers, at the start's
                // compile units each (distinct sources over the shapes a quick tier lowers at:
                // 1 for a GEMM program, 3 for mish's map): a second wave would run past the
                // start's compile and hold the round.
                eval::PrecompileRequest probe = *early_req;
                probe.program_texts = {st.candidates.at(st.start_hash).text};
                const int units = std::max(1, eval::compile_units(probe));
                std::vector<std::string> first =
                    screen(st, *next, options, round_s, static_cast<size_t>(extra / units));
                fill_precompile(*early_req, st, first, options, spent);
                first.resize(early_req->program_texts.size());
                early_req->jobs = extra;
                if (!first.empty()) early = compile_async(std::move(*early_req), std::move(first));
            }
        }
        auto t0 = std::chrono::steady_clock::now();
        // per-program failures resurface in each evaluation; while the start program compiles,
        // its worker builds the correctness cases its tiers will need (the wait counts once)
        auto compile = std::async(wait_for_start ? std::launch::async : std::launch::deferred,
                                  [&pre = *pre_request] { return eval::precompile(pre); });
        std::optional<Heartbeat> beat;
        beat.emplace(options, "compiling " + std::to_string(pre_request->program_texts.size()) +
                                  " program(s)");
        if (wait_for_start) warm_start_cases(st, evaluator, options, compile);
        auto report = compile.get();
        beat.reset();
        const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        spent.gpu_s += secs;
        record_compile_cost(st, *pre_request, report, secs);
        // fill_precompile took a prefix of `screened`
        charge_wave(st, std::vector<std::string>(screened.begin(),
                                                 screened.begin() + static_cast<std::ptrdiff_t>(std::min(
                                                     screened.size(), pre_request->program_texts.size()))),
                    secs);
    }
    // A program compiled for this round costs a quick timing only (0.1-1 s): a wave that
    // ended past the wall budget is still timed, up to kCompiledTimingGraceS past it (mish on
    // the H200, 2026-12-01: the round holding the diagnosis's combined move compiled, then
    // stopped at 123 of 120 s with none of it timed).
    auto over_budget_compiled = [&] {
        tick(spent);
        return budget_exhausted(options.budget, spent, kCompiledTimingGraceS).has_value();
    };
    std::vector<TimedEntry> timed;
    for (size_t k = 0; k < screened.size(); ++k) {
        const std::string& h = screened[k];
        // the start program is timed even past the budget: a suite's starts compile in one
        // parallel wave first, which can outlast a short budget, and a run without its start
        // timed has no result at all (every import on the H200 ended so, 2026-12-01)
        if (stop_requested() || (h != st.start_hash && over_budget_compiled())) break;
        // past its share, a round leaves the rest of its batch to a later round: the screen
        // sized it by quick timings measured earlier, which a loaded machine or a costlier
        // program outlasts (a 15 s suite on the simulated device: one round of 46 quick timings
        // took 11 s while three problems waited for their first)
        tick(spent);
        if (!timed.empty() && h != st.start_hash && options.round_share_s &&
            spent.wall_s - round_start_s > *options.round_share_s) {
            st.pending.insert(st.pending.end(), screened.begin() + static_cast<std::ptrdiff_t>(k),
                              screened.end());
            break;
        }
        auto r = detail::evaluate_at(st, evaluator, store, h, EvalTier::kQuick, options, spent);
        if (!r) return r.error();
        if (!r->cached) add_sample(st.screen_costs.quick_s, st.screen_costs.quick_samples, r->wall_ms / 1e3);
        const CandidateState& c = st.candidates.at(h);
        if (c.quick) timed.push_back({h, c.quick->median_ns, c.quick->ci95_low_ns, c.quick->ci95_high_ns});
    }
    // 4. successive-halving cut; ambiguous entries re-timed (without the store: the cache
    //    would answer) on fresh samples, merged with the first ones
    // Full timings as the cut alone would have promoted, within the round's time (full_count)
    const double full_ratio =
        timed.empty() ? options.promote_ratio
                      : static_cast<double>(full_count(timed.size(), cut_size,
                                                       options.promote_ratio, st.screen_costs,
                                                       round_s)) /
                            static_cast<double>(timed.size());
    HalvingCut cut = halving_cut(timed, full_ratio);
    if (!cut.retime.empty()) {
        for (size_t i : cut.retime) {
            if (stop_requested()) break;
            eval::EvalRequest req;
            req.problem = st.problem;
            req.program_text = st.candidates.at(timed[i].id).text;
            req.tier = EvalTier::kQuick;
            req.seed = options.seed + 7919;
            req.compile_cache_dir = options.compile_cache_dir;
            eval::EvalReport r = eval::evaluate(evaluator, req);
            if (r.status != EvalStatus::kPassed) continue;
            std::vector<double> t;
            for (const auto& s : r.samples) t.push_back(s.time_ns);
            t.push_back(timed[i].median_ns);
            eval::TimingStats merged = eval::timing_stats(t);
            timed[i] = {timed[i].id, merged.median_ns, merged.ci95_low_ns, merged.ci95_high_ns};
        }
        cut = decide_after_retime(timed, full_ratio);
    }
    // 5. full timing with every gate
    auto full_at = [&](const std::string& h) -> Status {
        auto r = detail::evaluate_at(st, evaluator, store, h, EvalTier::kFull, options, spent);
        if (!r) return r.error();
        if (!r->cached) add_sample(st.screen_costs.full_s, st.screen_costs.full_samples, r->wall_ms / 1e3);
        return Ok{};
    };
    // The start program's first full tier pays for the problem's full-shape correctness cases
    // (inputs and the GPU reference: 25-80 s on the H200, 2026-12-01) while the CPU's compile
    // slots sit idle: the next round is proposed now, from the start's quick timing, and its
    // screened batch compiled while the full tier runs (a CUTLASS compile wave is ~50 s).
    std::future<PrefetchResult> prefetch;
    if (wait_for_start && !over_budget())
        if (auto sit = st.candidates.find(st.start_hash);
            sit != st.candidates.end() && sit->second.quick && !sit->second.full) {
            auto pre = precompile_request(st, evaluator, options);
            if (pre) {
                auto next = propose_ahead(st, store, proposers, options, spent, round_s);
                if (!next) return next.error();
                st.proposals_prefetched = true;
                prefetch = detail::compile_ahead(st, std::move(*pre), *next, options, spent, round_s);
            }
        }
    // a store failure returns with a prefetch in flight: its future's destructor waits for it
    // a round past its share (a suite's, while problems wait for their first round) promotes
    // one program at most, and only one whose quick time beats the start's by 2%: a full tier
    // at a large shape costs 20-40 s (kb_21 on the H100: five full-shape correctness rounds of
    // 67M elements, 14 s), and three of them took a 17 s share to 95 s
    std::optional<double> start_quick_ns;
    if (auto sit = st.candidates.find(st.start_hash); sit != st.candidates.end() && sit->second.quick)
        start_quick_ns = sit->second.quick->median_ns;
    size_t promoted = 0;
    for (size_t i : cut.promote) {
        tick(spent);
        if (over_budget()) break;
        if (options.round_share_s && spent.wall_s - round_start_s > *options.round_share_s &&
            (promoted > 0 || (start_quick_ns && timed[i].median_ns > 0.98 * *start_quick_ns)))
            break;
        if (auto s = full_at(timed[i].id); !s) return s;
        ++promoted;
    }
    if (auto sit = st.candidates.find(st.start_hash);
        sit != st.candidates.end() && sit->second.quick && !sit->second.full && !stop_requested())
        if (auto s = full_at(st.start_hash); !s) return s;
    // only the wait beyond the start's tiers counts as GPU-seconds: the rest ran beside them
    for (std::future<PrefetchResult>* f : {&early, &prefetch}) {
        if (!f->valid()) continue;
        Heartbeat beat(options, "compiling the next round's programs");
        detail::join_prefetch(st, *f, spent);
    }
    ++st.progress.rounds;
    end_group_round(st, best_before);
    auto best = best_time_ns(st);
    st.progress.best_ns_by_round.push_back(best.value_or(0.0));
    if (best) st.progress.fraction_of_sol = st.bounds.time_fused_s * 1e9 / *best;
    return Ok{};
}

Status search_round(SearchState& st, eval::Device& device, Store& store,
                    const std::vector<Proposer*>& proposers, const SearchOptions& options,
                    Spent& spent) {
    eval::InProcessEvaluator evaluator(device);
    return search_round(st, evaluator, store, proposers, options, spent);
}

Status run_search(SearchState& st, eval::Device& device, Store& store,
                  const std::vector<Proposer*>& proposers, const SearchOptions& options,
                  Spent& spent) {
    eval::InProcessEvaluator evaluator(device);
    return run_search(st, evaluator, store, proposers, options, spent);
}

namespace {

// After a budget stopped the run: programs a prefetch compiled for the next round cost a quick
// timing each (0.1-1 s), so they are timed up to kCompiledTimingGraceS past the wall budget; then
// the fastest program with a quick timing and no full tier, when its quick time beats the best's,
// gets its full tier (the reported best needs every gate). Otherwise compiles and timings were
// spent for nothing (linear_logsumexp on the H200, 2026-12-02: a ping-pong program quick-timed
// 3% faster than the start at 122.6 of 120 s, never promoted; the run reported the start).
Status finish_within_grace(SearchState& st, eval::Evaluator& evaluator, Store& store,
                           const SearchOptions& options, Spent& spent) {
    auto past_grace = [&] {
        tick(spent);
        return budget_exhausted(options.budget, spent, kCompiledTimingGraceS).has_value();
    };
    std::vector<std::string> left;
    for (const std::string& h : st.pending) {
        if (!st.precompiled.count(h) || past_grace()) {
            left.push_back(h);
        } else if (auto r = detail::evaluate_at(st, evaluator, store, h, EvalTier::kQuick,
                                                options, spent); !r) {
            return r.error();
        }
    }
    st.pending = std::move(left);
    auto quick_ns = [&](const std::string& h) {
        const CandidateState& c = st.candidates.at(h);
        return c.quick ? c.quick->median_ns : c.full ? c.full->median_ns : 0.0;
    };
    std::optional<std::string> fastest;
    for (const auto& [h, c] : st.candidates)
        if (c.status == EvalStatus::kPassed && c.quick && !c.full &&
            (!fastest || quick_ns(h) < quick_ns(*fastest)))
            fastest = h;
    auto best = best_hash(st);
    if (fastest && (!best || quick_ns(*fastest) < quick_ns(*best)) && !past_grace())
        if (auto r = detail::evaluate_at(st, evaluator, store, *fastest, EvalTier::kFull,
                                         options, spent); !r)
            return r.error();
    return Ok{};
}

}  // namespace

Status run_search(SearchState& st, eval::Evaluator& evaluator, Store& store,
                  const std::vector<Proposer*>& proposers, const SearchOptions& options,
                  Spent& spent) {
    if (!spent.wall_origin) start_wall_clock(spent);
    auto interrupted = [&] {
        if (!stop_requested()) return false;
        st.interrupted = true;
        st.stop_reason = stop_signal() == SIGTERM  ? "interrupted (SIGTERM)"
                         : stop_signal() == SIGINT ? "interrupted (SIGINT)"
                                                   : "interrupted";
        return true;
    };
    while (true) {
        tick(spent);
        if (interrupted()) break;
        if (auto why = should_stop(options.stop, st.progress, options.budget, spent)) {
            st.stop_reason = *why;
            break;
        }
        auto work = [&] { return st.counts.proposed + st.counts.quick + st.counts.full; };
        int64_t before = work();
        if (auto s = search_round(st, evaluator, store, proposers, options, spent); !s) return s;
        tick(spent);
        const std::string line = progress_line(st, options, spent);
        if (options.log && !options.on_event) options.log(line);  // an event display has its own
        if (options.on_event) {
            ProgressEvent e;
            e.kind = ProgressEvent::Kind::kRound;
            e.state = &st;
            e.spent = &spent;
            e.text = line;
            options.on_event(e);
        }
        if (interrupted()) break;
        if (!st.budget_stop.empty()) {
            st.stop_reason = st.budget_stop;
            break;
        }
        if (work() == before && st.pending.empty()) {
            st.stop_reason = "the proposers have nothing new to propose";
            break;
        }
    }
    // an interrupted run leaves the rest to --resume
    if (st.interrupted) return Ok{};
    if (!st.budget_stop.empty() || budget_exhausted(options.budget, spent))
        if (auto s = finish_within_grace(st, evaluator, store, options, spent); !s) return s;
    // The result's evidence: the best's diagnosis, when no round profiled it (profiling is lazy).
    profile_best(st, options, spent, std::min(options.profile_top, 1));
    return Ok{};
}

std::optional<std::string> best_hash(const SearchState& st) {
    std::optional<std::string> best;
    double bt = 0;
    for (const auto& [h, c] : st.candidates) {
        double t = time_of(c);
        if (t > 0 && (!best || t < bt)) best = h, bt = t;
    }
    return best;
}

std::optional<double> best_time_ns(const SearchState& st) {
    auto h = best_hash(st);
    if (!h) return std::nullopt;
    return time_of(st.candidates.at(*h));
}

std::optional<double> start_time_ns(const SearchState& st) {
    auto it = st.candidates.find(st.start_hash);
    if (it == st.candidates.end()) return std::nullopt;
    double t = time_of(it->second);
    return t > 0 ? std::optional<double>(t) : std::nullopt;
}

std::string progress_line(const SearchState& st, const SearchOptions& options, const Spent& spent) {
    char b[512];
    auto best = best_time_ns(st);
    auto start = start_time_ns(st);
    const TierCounts& n = st.counts;
    std::string budget = budget_left_text(options.budget, spent);
    if (options.stop.max_rounds)  // a round limit is a limit too, never "unlimited"
        budget = (budget == "unlimited" ? "" : budget + ", ") + "rounds " +
                 std::to_string(st.progress.rounds) + "/" + std::to_string(*options.stop.max_rounds);
    std::snprintf(b, sizeof b,
                  "%s round %d: best %s us, %s, %.3fx vs start | %s | proposed %lld, "
                  "quick %lld, full %lld, invalid %lld, cached %lld%s",
                  st.problem.name.c_str(), st.progress.rounds,
                  best ? std::to_string(*best / 1e3).substr(0, 8).c_str() : "-",
                  format_sol_share(sol_share(best ? *best * 1e-9 : 0.0, st.bounds.time_fused_s))
                      .c_str(),
                  best && start ? *start / *best : 1.0, budget.c_str(), (long long)n.proposed,
                  (long long)n.quick, (long long)n.full, (long long)n.invalid, (long long)n.cached,
                  st.simulated ? " (simulated)" : "");
    const std::string groups = groups_line(st);
    return groups.empty() ? std::string(b) : std::string(b) + " | " + groups;
}

}  // namespace kforge::search
