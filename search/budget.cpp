#include "search/budget.h"

#include <algorithm>
#include <cstdio>

#include "sol/sol_share.h"

namespace kforge::search {

namespace {
std::string fmt(double v) {
    char b[32];
    std::snprintf(b, sizeof b, "%.1f", v);
    return b;
}
}  // namespace

void start_wall_clock(Spent& spent) {
    spent.wall_origin = std::chrono::steady_clock::now();
    spent.wall_at_origin = spent.wall_s;
}

void tick(Spent& spent) {
    if (spent.wall_origin)
        spent.wall_s = spent.wall_at_origin +
                       std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                                     *spent.wall_origin)
                           .count();
}

std::optional<std::string> budget_exhausted(const Budget& b, const Spent& s, double wall_grace_s) {
    if (b.wall_s && s.wall_s >= *b.wall_s + wall_grace_s)
        return "wall-clock budget spent (" + fmt(s.wall_s) + " of " + fmt(*b.wall_s) + " s)";
    if (b.gpu_s && s.gpu_s >= *b.gpu_s)
        return "GPU-time budget spent (" + fmt(s.gpu_s) + " of " + fmt(*b.gpu_s) + " s)";
    if (b.llm_tokens && s.llm_tokens >= *b.llm_tokens)
        return "LLM token budget spent (" + std::to_string(s.llm_tokens) + " of " +
               std::to_string(*b.llm_tokens) + ")";
    if (b.llm_cost_usd && s.llm_cost_usd >= *b.llm_cost_usd)
        return "LLM cost budget spent ($" + fmt(s.llm_cost_usd) + " of $" + fmt(*b.llm_cost_usd) +
               ")";
    return std::nullopt;
}

std::optional<std::string> compile_budget_spent(const Budget& b, const Spent& s) {
    if (b.compiles && s.compiles >= *b.compiles)
        return "compile budget spent (" + std::to_string(s.compiles) + " of " +
               std::to_string(*b.compiles) + ")";
    return std::nullopt;
}

std::string budget_left_text(const Budget& b, const Spent& s) {
    std::string t;
    auto add = [&](const std::string& part) { t += (t.empty() ? "" : ", ") + part; };
    if (b.wall_s) add("wall " + fmt(s.wall_s) + "/" + fmt(*b.wall_s) + " s");
    if (b.gpu_s) add("gpu " + fmt(s.gpu_s) + "/" + fmt(*b.gpu_s) + " s");
    if (b.compiles) add("compiles " + std::to_string(s.compiles) + "/" + std::to_string(*b.compiles));
    if (b.llm_tokens) add("tokens " + std::to_string(s.llm_tokens) + "/" + std::to_string(*b.llm_tokens));
    if (b.llm_cost_usd) add("$" + fmt(s.llm_cost_usd) + "/" + fmt(*b.llm_cost_usd));
    return t.empty() ? "unlimited" : t;
}

std::optional<std::string> stop_within_sol(const StopConditions& c, const Progress& p) {
    if (!c.within_sol_percent || !p.fraction_of_sol || *p.fraction_of_sol <= 0) return std::nullopt;
    double t_over_sol = 1.0 / *p.fraction_of_sol;
    if (t_over_sol <= 1.0 + *c.within_sol_percent / 100.0)
        return "within " + fmt(*c.within_sol_percent) + "% of SOL (" +
               format_sol_share(sol_share_of_fraction(*p.fraction_of_sol)) + " reached)";
    return std::nullopt;
}

std::optional<std::string> stop_no_improvement(const StopConditions& c, const Progress& p) {
    if (!c.patience_rounds || *c.patience_rounds <= 0) return std::nullopt;
    const auto& h = p.best_ns_by_round;
    int n = *c.patience_rounds;
    if (static_cast<int>(h.size()) <= n) return std::nullopt;
    double before = h[h.size() - 1 - n];
    double now = h.back();
    if (before > 0 && now >= before)
        return "no improvement for " + std::to_string(n) + " rounds";
    return std::nullopt;
}

std::optional<std::string> stop_max_rounds(const StopConditions& c, const Progress& p) {
    if (c.max_rounds && p.rounds >= *c.max_rounds)
        return "round limit reached (" + std::to_string(*c.max_rounds) + ")";
    return std::nullopt;
}

std::optional<std::string> should_stop(const StopConditions& c, const Progress& p,
                                       const Budget& budget, const Spent& spent) {
    if (auto r = budget_exhausted(budget, spent)) return r;
    if (auto r = stop_within_sol(c, p)) return r;
    if (auto r = stop_no_improvement(c, p)) return r;
    return stop_max_rounds(c, p);
}

double improvement_rate(const Progress& p, int window, double prior) {
    const auto& h = p.best_ns_by_round;
    if (h.size() < 2) return prior;  // no search round yet (at most the start's evaluation)
    size_t from = h.size() > static_cast<size_t>(window) ? h.size() - 1 - window : 0;
    while (from < h.size() && h[from] <= 0) ++from;
    if (from >= h.size() || h.back() <= 0) return prior;
    return std::max(0.0, (h[from] - h.back()) / h[from]);
}

double expected_gain(const Progress& p) {
    double headroom = p.fraction_of_sol ? std::clamp(1.0 - *p.fraction_of_sol, 0.0, 1.0) : 1.0;
    return headroom * std::max(improvement_rate(p), 0.01);
}

SuiteChoice choose_next_problem(const std::vector<Progress>& progress,
                                const std::vector<bool>& done,
                                const std::vector<std::string>& names, double near_sol_fraction,
                                const std::vector<bool>& waiting) {
    auto waits = [&](size_t i) { return i < waiting.size() && waiting[i]; };
    SuiteChoice choice;
    std::optional<size_t> best, best_near, untried;
    for (size_t i = 0; i < progress.size(); ++i) {
        if (i < done.size() && done[i]) continue;
        const Progress& p = progress[i];
        bool near = p.fraction_of_sol && *p.fraction_of_sol >= near_sol_fraction;
        std::string name = i < names.size() ? names[i] : "#" + std::to_string(i);
        if (near) {
            choice.reasons.push_back(name + ": deprioritized, at " +
                                     format_sol_share(sol_share_of_fraction(*p.fraction_of_sol)) +
                                     " (little to win)");
            if (!best_near || expected_gain(p) > expected_gain(progress[*best_near])) best_near = i;
            continue;
        }
        if (never_searched(p)) {  // explored before any repeat
            // fewest rounds first: every start gets its first round (its full-tier result)
            // before any problem a second one (KernelBench imports on the H200, 2026-12-01: one
            // problem's start with no full-tier result took round 2 while five starts waited,
            // and the suite's budget ended with no result for them)
            const size_t r = p.best_ns_by_round.size();
            const size_t ru = untried ? progress[*untried].best_ns_by_round.size() : 0;
            const bool w = waits(i), wu = untried && waits(*untried);
            if (!untried || r < ru ||
                (r == ru && (w < wu || (w == wu && expected_gain(p) >
                                                       expected_gain(progress[*untried])))))
                untried = i;
            continue;
        }
        if (!best || expected_gain(p) > expected_gain(progress[*best])) best = i;
    }
    choice.next = untried ? untried : best ? best : best_near;
    return choice;
}

}  // namespace kforge::search

namespace kforge::search {

std::string_view to_string(SuiteAllocation a) {
    return a == SuiteAllocation::kUniform ? "uniform" : "sol";
}

std::optional<SuiteAllocation> suite_allocation_from_string(std::string_view s) {
    if (s == "sol") return SuiteAllocation::kSolHeadroom;
    if (s == "uniform") return SuiteAllocation::kUniform;
    return std::nullopt;
}

SuiteChoice choose_uniform(const std::vector<Progress>& progress, const std::vector<bool>& done,
                           const std::vector<bool>& waiting) {
    auto waits = [&](size_t i) { return i < waiting.size() && waiting[i]; };
    SuiteChoice choice;
    for (size_t i = 0; i < progress.size(); ++i) {
        if (i < done.size() && done[i]) continue;
        if (!choice.next) {
            choice.next = i;
            continue;
        }
        const size_t j = *choice.next;
        const int r = progress[i].rounds, rj = progress[j].rounds;
        if (r < rj || (r == rj && !waits(i) && waits(j))) choice.next = i;
    }
    return choice;
}

}  // namespace kforge::search
