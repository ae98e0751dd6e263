// Rounds of a suite overlapping (search/suite_rounds.h).
#include "search/suite_rounds.h"

#include <algorithm>
#include <chrono>

#include "search/ladder.h"
#include "search/suite_start.h"

namespace kforge::search {
namespace {

// A wave's estimate before one of its class was measured: a CUTLASS (nvcc) wave on the
// H200/H100 takes 35-60 s, an NVRTC one 2-10 s.
constexpr double kDefaultNvccWaveS = 60.0;
constexpr double kDefaultNvrtcWaveS = 10.0;

}  // namespace

std::vector<std::string> first_round_pick(const SearchState& st, const std::vector<std::string>& next,
                                          size_t k) {
    // as the round's own cost-model screen ranks them (the start first, at 0)
    std::vector<std::optional<double>> est;
    for (const std::string& h : next) {
        std::optional<double> e;
        if (h == st.start_hash) e = 0.0;
        else if (auto it = st.candidates.find(h); it != st.candidates.end() && it->second.program && st.cost)
            if (auto t = st.cost->estimate_ns(*it->second.program)) e = *t;
        est.push_back(e);
    }
    std::vector<std::string> picked;
    for (size_t i : screen_by_estimate(est, k)) picked.push_back(next[i]);
    return picked;
}

double prefetch_wave_estimate_s(size_t i, const std::vector<SearchState>& states,
                                const std::vector<bool>& needs_nvcc) {
    const ScreenCosts& own = states[i].screen_costs;
    if (own.compile_samples > 0) return own.compile_wave_s;
    double most = 0;
    for (size_t j = 0; j < states.size(); ++j)
        if (j < needs_nvcc.size() && i < needs_nvcc.size() && needs_nvcc[j] == needs_nvcc[i] &&
            states[j].screen_costs.compile_samples > 0)
            most = std::max(most, states[j].screen_costs.compile_wave_s);
    if (most > 0) return most;
    return i < needs_nvcc.size() && needs_nvcc[i] ? kDefaultNvccWaveS : kDefaultNvrtcWaveS;
}

std::optional<double> first_round_share_s(const Budget& budget, const Spent& spent,
                                          size_t waiting_first) {
    if (!budget.wall_s || waiting_first == 0) return std::nullopt;
    return std::max(0.0, *budget.wall_s - spent.wall_s) / static_cast<double>(waiting_first);
}

double full_tier_estimate_s(const SearchState& st, const std::vector<SearchState>& states,
                            double fallback) {
    if (st.screen_costs.full_samples > 0) return st.screen_costs.full_s;
    std::vector<double> per_byte;
    double mean = 0;
    int measured = 0;
    for (const SearchState& s : states) {
        if (s.screen_costs.full_samples == 0) continue;
        mean += s.screen_costs.full_s;
        ++measured;
        if (s.bounds.work.bytes_fused > 0) per_byte.push_back(s.screen_costs.full_s / s.bounds.work.bytes_fused);
    }
    if (per_byte.empty() && mean == 0) return fallback;
    mean /= std::max(1, measured);
    // by bytes on a GPU only: there the full tier checks at the real shape; the simulated
    // device checks at a CPU-feasible shape whatever the problem's size
    if (per_byte.empty() || st.bounds.work.bytes_fused <= 0 || st.simulated) return mean;
    std::nth_element(per_byte.begin(), per_byte.begin() + per_byte.size() / 2, per_byte.end());
    return std::max(mean, per_byte[per_byte.size() / 2] * st.bounds.work.bytes_fused);
}

RoundPrefetcher::RoundPrefetcher(std::vector<SearchState>& states, eval::Evaluator& evaluator,
                                 Store& store, const std::vector<Proposer*>& proposers,
                                 Spent& spent, std::function<void(SearchState&)> before_round,
                                 int max_in_flight, int jobs)
    : states_(states), evaluator_(evaluator), store_(store), proposers_(proposers), spent_(spent),
      before_round_(std::move(before_round)), max_in_flight_(std::max(1, max_in_flight)),
      jobs_(std::max(1, jobs)) {
    for (const SearchState& s : states_) {
        auto it = s.candidates.find(s.start_hash);
        // every program a real device runs is compiled (nvcc for CUTLASS, NVRTC for the
        // row-wise and map kernels, both through the compile cache a precompile fills)
        const bool compiled = !s.simulated && it != s.candidates.end() && it->second.program;
        needs_compile_.push_back(compiled);
        needs_nvcc_.push_back(compiled && compile_class(*it->second.program).needs_nvcc);
    }
}

RoundPrefetcher::~RoundPrefetcher() {
    for (auto& [i, f] : in_flight_)
        if (f.valid()) f.wait();
}

bool RoundPrefetcher::eligible(size_t i, const std::vector<bool>& done) const {
    return needs_compile_[i] && !(i < done.size() && done[i]) && never_searched(states_[i].progress) &&
           !states_[i].proposals_prefetched && states_[i].precompiled.empty();
}

Status RoundPrefetcher::pump(const std::vector<bool>& done, const SearchOptions& options) {
    for (auto it = in_flight_.begin(); it != in_flight_.end();) {
        const size_t i = it->first;
        ++it;  // join() erases
        if (in_flight_.at(i).wait_for(std::chrono::seconds(0)) == std::future_status::ready) join(i);
    }
    // nvcc waves (20-50 s on the H100) before NVRTC ones (5-20 s), so the longest compiles
    // overlap the most timing: in the b600 suite the last GEMM problem in line never had its
    // wave made and found too little budget left for one; then by expected gain, as
    // choose_next_problem orders those never searched
    std::vector<size_t> order;
    for (size_t i = 0; i < states_.size(); ++i)
        if (!started_.count(i) && eligible(i, done)) order.push_back(i);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        if (needs_nvcc_[a] != needs_nvcc_[b]) return needs_nvcc_[a] > needs_nvcc_[b];
        return expected_gain(states_[a].progress) > expected_gain(states_[b].progress);
    });
    for (size_t i : order) {
        if (in_flight_.size() >= static_cast<size_t>(max_in_flight_)) break;
        tick(spent_);
        // by the problem's own kind of wave: with the suite-wide (CUTLASS) figure, no NVRTC
        // wave was made ahead in the last two minutes of the b600 suite (H100, session 18), and
        // seven problems compiled theirs in the foreground with the GPU idle
        if (options.budget.wall_s &&
            *options.budget.wall_s - spent_.wall_s < 2 * prefetch_wave_estimate_s(i, states_, needs_nvcc_))
            continue;
        started_.insert(i);
        SearchState& st = states_[i];
        auto pre = detail::precompile_request(st, evaluator_, options);
        if (!pre) continue;
        if (before_round_) before_round_(st);  // the LLM proposer pointed at this problem's run
        auto next = detail::propose_ahead(st, store_, proposers_, options, spent_,
                                          detail::round_plan_s(options, spent_));
        if (!next) return next.error();
        st.proposals_prefetched = !next->empty();
        // while problems wait for their first round, a wave made ahead holds one row of its
        // workers, the best estimates first (the rest stay pending for later rounds): in the
        // b600 suite on the H100 (session 18) each GEMM problem's first wave held 15-16 CUTLASS
        // programs, two waves compiled at once on 8 cores each, and the rounds waited 30-50 s
        // apiece for them: 4 of 31 problems got no round
        if (options.round_share_s)
            *next = first_round_pick(st, *next, std::max<size_t>(kFirstRoundPrograms, jobs_));
        pre->jobs = jobs_;
        auto wave = detail::compile_ahead(st, std::move(*pre), *next, options, spent_,
                                          detail::round_plan_s(options, spent_));
        if (wave.valid()) in_flight_[i] = std::move(wave);
    }
    return Ok{};
}

void RoundPrefetcher::join(size_t i) {
    auto it = in_flight_.find(i);
    if (it == in_flight_.end()) return;
    detail::join_prefetch(states_[i], it->second, spent_);
    in_flight_.erase(it);
}

std::vector<bool> RoundPrefetcher::waiting(const std::vector<bool>& done) const {
    std::vector<bool> w(states_.size(), false);
    for (size_t i = 0; i < states_.size(); ++i)
        w[i] = in_flight_.count(i) > 0 || (!started_.count(i) && eligible(i, done));
    return w;
}

}  // namespace kforge::search
