// Rounds of different problems of a suite overlapping: while the GPU times one problem's round,
// the compile waves of the next problems' rounds run on the CPU, and while problems still wait
// for their first round, each round plans for its fair share of the wall budget left.
//
// Measured (H100, 31 imported problems, --budget-wall 600, 2026-12-06): rounds ran one problem
// at a time, each 17-64 s (an nvcc compile wave for a GEMM, 20-40 quick timings for a row-wise
// problem, each with its NVRTC compile), so 16 problems got a round and 15 none.
#pragma once

#include <functional>
#include <future>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "search/loop.h"
#include "search/loop_internal.h"

namespace kforge::search {

// The fair share of one round: the wall budget left split evenly among the `waiting_first`
// problems that have had no search round yet (itself included); nullopt when none waits or
// there is no wall budget.
std::optional<double> first_round_share_s(const Budget& budget, const Spent& spent,
                                          size_t waiting_first);

// What the next full-tier evaluation of `state` will cost: its own measured mean when it has
// one; else, on a GPU, the suite's measured seconds per byte (the median over problems with a
// full tier measured, times the problem's compulsory bytes: the full tier's correctness rounds
// generate, copy and compare every tensor at the real shape), at least the suite's mean (the
// mean only on the simulated device, which checks at a CPU-feasible shape); `fallback` when
// nothing was measured. Full tiers on the H100 ranged 0.1-40 s across one suite.
double full_tier_estimate_s(const SearchState& state, const std::vector<SearchState>& states,
                            double fallback);

// The programs a first round's wave made ahead holds at least (more when the prefetcher's
// waves have more workers): its `k` best by the cost model's estimate, the start first, those
// without an estimate last, in `next`'s order among equals.
constexpr size_t kFirstRoundPrograms = 4;
std::vector<std::string> first_round_pick(const SearchState& st, const std::vector<std::string>& next,
                                          size_t k);

// What problem i's next compile wave is taken to cost before the prefetcher starts it: its
// own measured wave, else the longest measured wave of a problem of its kind (nvcc or NVRTC:
// `needs_nvcc` by problem), else a default for its kind (nvcc 60 s, NVRTC 10 s).
double prefetch_wave_estimate_s(size_t i, const std::vector<SearchState>& states,
                                const std::vector<bool>& needs_nvcc);

// The compile waves of problems' first rounds, made ahead: the problem's next round is proposed
// (its proposals wait in `pending`, as search_round's own prefetch leaves them), screened as
// its round would screen them, and compiled on a thread with `jobs` workers, at most
// `max_in_flight` waves at once. Every problem's, NVRTC ones too: on the H100 (b600,
// 2026-12-06) the NVRTC problems' rounds compiled their waves in the foreground, 5-20 s each
// with the GPU idle, 19 problems of 31; only where a compile cache exists (not the simulated
// device). A wave is started only while the wall budget left holds twice its estimate, so
// that none runs past the budget.
class RoundPrefetcher {
public:
    RoundPrefetcher(std::vector<SearchState>& states, eval::Evaluator& evaluator, Store& store,
                    const std::vector<Proposer*>& proposers, Spent& spent,
                    std::function<void(SearchState&)> before_round, int max_in_flight, int jobs);
    ~RoundPrefetcher();  // waits for the waves in flight
    RoundPrefetcher(const RoundPrefetcher&) = delete;
    RoundPrefetcher& operator=(const RoundPrefetcher&) = delete;

    // Joins the waves that have ended and starts new ones for problems not `done`, never
    // searched, whose rounds need nvcc, with `options` (the rounds' options: their share).
    Status pump(const std::vector<bool>& done, const SearchOptions& options);
    // Waits for problem `i`'s wave, if one runs: the wait counts as GPU-seconds (the GPU idles).
    void join(size_t i);
    // By problem: whether its first round would wait for a compile wave (one in flight, or one
    // it will get), for choose_next_problem.
    std::vector<bool> waiting(const std::vector<bool>& done) const;
    size_t in_flight() const { return in_flight_.size(); }

private:
    bool eligible(size_t i, const std::vector<bool>& done) const;

    std::vector<SearchState>& states_;
    eval::Evaluator& evaluator_;
    Store& store_;
    const std::vector<Proposer*>& proposers_;
    Spent& spent_;
    std::function<void(SearchState&)> before_round_;
    int max_in_flight_, jobs_;
    std::vector<bool> needs_compile_, needs_nvcc_;
    std::set<size_t> started_;
    std::map<size_t, std::future<detail::PrefetchResult>> in_flight_;
};

}  // namespace kforge::search
