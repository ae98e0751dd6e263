#include "search/ladder.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <numeric>

namespace kforge::search {

namespace {
constexpr std::string_view kTierNames[] = {"proposed", "static", "cost_model", "compile",
                                           "quick",    "full",   "profile"};

std::vector<size_t> by_median(const std::vector<TimedEntry>& e) {
    std::vector<size_t> order(e.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return e[a].median_ns < e[b].median_ns; });
    return order;
}
}  // namespace

std::string_view to_string(LadderTier t) { return kTierNames[static_cast<int>(t)]; }

std::optional<LadderTier> ladder_tier_from_string(std::string_view s) {
    for (size_t i = 0; i < std::size(kTierNames); ++i)
        if (kTierNames[i] == s) return static_cast<LadderTier>(i);
    return std::nullopt;
}

size_t promote_count(size_t n, double ratio) {
    if (n == 0) return 0;
    double r = std::clamp(ratio, 0.0, 1.0);
    size_t k = static_cast<size_t>(std::ceil(static_cast<double>(n) * r - 1e-9));
    return std::clamp<size_t>(k, 1, n);
}

size_t programs_per_wave(const ScreenCosts& costs) {
    const double units = std::max(1.0, costs.compile_units);
    return std::max<size_t>(1, static_cast<size_t>(std::max(1, costs.compile_jobs) / units + 1e-9));
}

std::optional<size_t> screen_capacity(const ScreenCosts& costs, double round_s) {
    if (costs.quick_samples == 0) return std::nullopt;
    const double wave = std::max(0.0, costs.compile_wave_s), quick = std::max(0.0, costs.quick_s);
    const size_t jobs = programs_per_wave(costs);
    if (wave <= 0 && quick <= 1e-6) return SIZE_MAX;
    // whole waves first: n = waves * jobs fits while waves * (wave + jobs * quick) <= round_s
    const double per_wave = wave + static_cast<double>(jobs) * quick;
    size_t n = static_cast<size_t>(std::max(0.0, std::floor(round_s / per_wave))) * jobs;
    // then a partial wave: one more compile wave and as many quick timings as still fit
    double left = round_s - static_cast<double>(n / jobs) * per_wave - wave;
    if (left > 0 && quick > 1e-6) n += std::min(jobs - 1, static_cast<size_t>(left / quick));
    else if (left > 0) n += jobs - 1;
    return n;
}

size_t screen_count(size_t fresh, double ratio, const ScreenCosts& costs, double round_s) {
    size_t n = promote_count(fresh, ratio);
    if (auto cap = screen_capacity(costs, round_s)) n = std::max(n, std::min(*cap, fresh));
    // The last compile wave is paid for whatever it holds: fill it with more candidates while
    // their quick timings fit in what is left of the round, or in a quarter of the wave's own
    // time when the round is already spent (a CUTLASS wave of ~50 s on the H200 holds 16
    // compiles; the cut alone put 4-6 in it and left the search two rounds of few candidates).
    const size_t jobs = programs_per_wave(costs);
    if (costs.compile_samples > 0 && costs.compile_wave_s > 0 && jobs > 1 && n > 0 &&
        n % jobs != 0) {
        const size_t room = jobs - n % jobs;
        const double quick = std::max(0.0, costs.quick_s);
        const double spare = std::max(round_s - static_cast<double>(n) * quick,
                                      costs.compile_wave_s / 4);
        const size_t afford = quick > 1e-6 ? static_cast<size_t>(std::max(0.0, spare / quick))
                                           : room;
        n = std::min(fresh, n + std::min(room, afford));
    }
    return n;
}

size_t full_count(size_t timed, size_t cut_size, double ratio, const ScreenCosts& costs,
                  double round_s) {
    size_t k = promote_count(std::min(timed, cut_size), ratio);
    if (k > 0 && costs.full_samples > 0 && costs.full_s > 0) {
        const double fit = std::floor(std::max(0.0, round_s) / 2 / costs.full_s);
        k = std::clamp<size_t>(static_cast<size_t>(std::min(fit, 1e6)), 1, k);
    }
    return k;
}

HalvingCut halving_cut(const std::vector<TimedEntry>& entries, double ratio) {
    HalvingCut cut;
    if (entries.empty()) return cut;
    std::vector<size_t> order = by_median(entries);
    size_t k = promote_count(entries.size(), ratio);
    cut.promote.assign(order.begin(), order.begin() + k);
    cut.cut_ns = entries[order[k - 1]].median_ns;
    for (size_t i = k; i < order.size(); ++i) {
        const TimedEntry& e = entries[order[i]];
        if (e.ci95_low_ns <= cut.cut_ns) cut.retime.push_back(order[i]);
        else cut.drop.push_back(order[i]);
    }
    return cut;
}

HalvingCut decide_after_retime(const std::vector<TimedEntry>& entries, double ratio) {
    HalvingCut cut = halving_cut(entries, ratio);
    // a clear ambiguity left after re-timing: the CI overlaps, but the medians decide
    cut.drop.insert(cut.drop.end(), cut.retime.begin(), cut.retime.end());
    cut.retime.clear();
    std::stable_sort(cut.drop.begin(), cut.drop.end(), [&](size_t a, size_t b) {
        return entries[a].median_ns < entries[b].median_ns;
    });
    return cut;
}

std::vector<size_t> screen_by_estimate(const std::vector<std::optional<double>>& estimates_ns,
                                       size_t keep) {
    std::vector<size_t> order(estimates_ns.size());
    std::iota(order.begin(), order.end(), 0);
    std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        const auto &x = estimates_ns[a], &y = estimates_ns[b];
        if (x && y) return *x < *y;
        return x.has_value() && !y.has_value();
    });
    order.resize(std::min(keep, order.size()));
    return order;
}

}  // namespace kforge::search
