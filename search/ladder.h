// The fidelity ladder of the search and its successive-halving cuts, as pure functions over
// synthetic-friendly entries (the loop in search/loop.cpp feeds them real evaluations):
//   static check -> cost model -> compile -> quick timing -> full timing with every gate
//   -> profiling hook for the best few.
// At each cut a fraction `promote_ratio` (default 1/3, at least one) of the entries moves up.
// Noise-aware: an entry ranked below the cut whose 95% CI reaches the cut (its CI low is at or
// below the median of the last promoted entry) is not dropped at random but re-timed, and the
// cut is taken again on the merged samples (decide_after_retime); what is still ambiguous then is
// decided by the median.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kforge::search {

enum class LadderTier { kProposed, kStatic, kCostModel, kCompile, kQuick, kFull, kProfile };
std::string_view to_string(LadderTier t);
std::optional<LadderTier> ladder_tier_from_string(std::string_view s);

// One candidate at a timed tier: its median and 95% CI of the median.
struct TimedEntry {
    std::string id;
    double median_ns = 0;
    double ci95_low_ns = 0;
    double ci95_high_ns = 0;
};

struct HalvingCut {
    std::vector<size_t> promote;  // indices into the entries, fastest first
    std::vector<size_t> retime;   // below the cut but their CI reaches it
    std::vector<size_t> drop;
    double cut_ns = 0;            // median of the slowest promoted entry
};

// How many of n entries move up at `ratio` (ceil, at least 1 when n > 0, at most n).
size_t promote_count(size_t n, double ratio);

// The successive-halving cut of `entries` at `ratio`.
HalvingCut halving_cut(const std::vector<TimedEntry>& entries, double ratio);

// The cut after the ambiguous entries were re-timed (`entries` carry the merged statistics):
// no entry is re-timed twice, so ties are broken by the median.
HalvingCut decide_after_retime(const std::vector<TimedEntry>& entries, double ratio);

// What screening one candidate costs in a run, measured as the run goes (search/loop.cpp).
struct ScreenCosts {
    double compile_wave_s = 0;  // wall time of one wave of parallel compiles (precompile)
    int compile_samples = 0;    // precompiles measured
    int compile_jobs = 1;       // compiles run at once (the precompile's parallelism)
    double quick_s = 0;         // one quick-tier evaluation after its compile
    int quick_samples = 0;      // quick evaluations measured
    double full_s = 0;          // one full-tier evaluation (every gate, the strict protocol)
    int full_samples = 0;       // full evaluations measured
    double compile_units = 1;   // compiles per program (its shapes' distinct sources), measured
};

// Programs one compile wave holds: compile_jobs / compile_units, at least 1.
size_t programs_per_wave(const ScreenCosts& costs);

// How many candidates fit in `round_s` at the measured costs: compile waves of
// programs_per_wave plus one quick timing each (nullopt before any quick evaluation was measured; SIZE_MAX when
// screening costs nothing measurable).
std::optional<size_t> screen_capacity(const ScreenCosts& costs, double round_s);

// How many of `fresh` candidates a round screens (compiles and times at the quick tier): the
// cost-model cut promote_count(fresh, ratio) at least, and as many more as screen_capacity
// allows, at most `fresh`. Cheap candidates (row-wise and map kernels: a compile wave of a few
// seconds, milliseconds of timing) are screened in bulk; expensive compiles (CUTLASS GEMMs)
// keep the cut, filled up to a whole compile wave when the extra quick timings fit in the round
// (or in a quarter of the wave's time).
size_t screen_count(size_t fresh, double ratio, const ScreenCosts& costs, double round_s);

// How many of `timed` quick-timed candidates go on to the full tier: what the cut alone would
// have timed and promoted (promote_count of min(timed, cut_size)), and no more full timings than
// fill half of `round_s` at the measured full_s (at least one): screening more is cheap, full
// timings are not.
size_t full_count(size_t timed, size_t cut_size, double ratio, const ScreenCosts& costs,
                  double round_s);

// Indices of the `keep` lowest estimates (the cost-model screen), lowest first; entries without
// an estimate (nullopt) come last in their original order.
std::vector<size_t> screen_by_estimate(const std::vector<std::optional<double>>& estimates_ns,
                                       size_t keep);

}  // namespace kforge::search
