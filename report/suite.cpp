// Suite summary, sample statistics and SOL figures of the report model (report/model.h).
#include <cmath>

#include "device/timing.h"
#include "report/model.h"
#include "report/model_internal.h"

namespace kforge::report {

SampleStats sample_stats(const std::vector<double>& times_ns) {
    eval::TimingStats t = eval::timing_stats(times_ns);
    SampleStats s;
    s.count = t.count;
    s.median_ns = t.median_ns;
    s.q1_ns = t.q1_ns;
    s.q3_ns = t.q3_ns;
    s.iqr_ns = t.iqr_ns;
    s.ci95_low_ns = t.ci95_low_ns;
    s.ci95_high_ns = t.ci95_high_ns;
    s.min_ns = t.min_ns;
    s.max_ns = t.max_ns;
    return s;
}

std::string sol_text(const SolFigures& sol) {
    return sol.percent_sol ? format_sol_share(sol.share, 1, false) : "-";
}

SolFigures sol_figures(const Bounds& bounds, const ProblemReport& p) {
    SolFigures f;
    f.available = true;
    f.ceilings_source = bounds.ceilings_source;
    f.bound_kind = std::string(to_string(bounds.kind));
    f.time_sol_s = bounds.time_fused_s;
    f.time_unfused_s = bounds.time_unfused_s;
    if (!p.best) {
        f.note = "no passed candidate: no time to compare with the bound";
        return f;
    }
    double t = p.best->stats.median_ns * 1e-9;
    if (!(t > 0) || !(bounds.time_fused_s > 0)) {
        f.note = "zero time or zero bound: %SOL undefined";
        return f;
    }
    f.share = sol_share(t, bounds.time_fused_s);
    f.percent_sol = sol_percent(f.share);
    f.under_sol_bound = f.share.under_bound;
    f.headroom = headroom(t, bounds);
    f.below_gaming_threshold = below_gaming_threshold(t, bounds);
    f.t_base_source = "unfused_bound";
    f.time_base_s = bounds.time_unfused_s;
    for (const BaselineTime& b : p.baselines) {
        double tb = b.stats.median_ns * 1e-9;
        if (b.name == kEagerName && tb > bounds.time_fused_s) {
            f.t_base_source = b.label;
            f.time_base_s = tb;
        }
    }
    auto score = sol_score(t, bounds.time_fused_s, f.time_base_s);
    if (score) f.sol_score = *score;
    else f.sol_score_note = "SOL score undefined: " + score.error().message;
    return f;
}

SuiteSummary summarize_suite(const std::vector<ProblemReport>& problems,
                             const ReportOptions& options) {
    SuiteSummary s;
    s.sol_within_percent = options.sol_within_percent;
    s.problems = static_cast<int>(problems.size());
    std::vector<std::string> names;
    double log_sol_sum = 0;
    int sol_count = 0;
    for (const ProblemReport& p : problems) {
        if (p.best) ++s.problems_solved;
        for (const BaselineTime& b : p.baselines) names.push_back(b.name);
        if (p.sol.available) {
            ++s.problems_with_sol;
            if (p.sol.headroom && *p.sol.headroom <= 1.0 + options.sol_within_percent / 100.0)
                ++s.within_sol;
            if (p.sol.percent_sol && *p.sol.percent_sol > 0) {
                log_sol_sum += std::log(*p.sol.percent_sol);
                ++sol_count;
            }
        }
    }
    if (s.problems_with_sol > 0)
        s.fraction_within_sol = static_cast<double>(s.within_sol) / s.problems_with_sol;
    if (sol_count > 0) s.geomean_percent_sol = std::exp(log_sol_sum / sol_count);
    sort_baseline_names(names);
    for (const std::string& name : names) {
        BaselineSummary b;
        b.name = name;
        double log_sum = 0;
        for (double p : options.fast_p) b.fast_p.push_back(FastP{p, 0, 0.0});
        for (const ProblemReport& p : problems) {
            for (const BaselineTime& bt : p.baselines) {
                if (bt.name != name) continue;
                ++b.problems_measured;
                if (!bt.speedup) continue;  // no correct candidate: counts as not fast
                ++b.geomean_count;
                log_sum += std::log(*bt.speedup);
                for (FastP& f : b.fast_p)
                    if (*bt.speedup > f.p) ++f.fast;
            }
        }
        if (b.geomean_count > 0) b.geomean_speedup = std::exp(log_sum / b.geomean_count);
        for (FastP& f : b.fast_p)
            f.fraction = b.problems_measured > 0
                             ? static_cast<double>(f.fast) / b.problems_measured : 0.0;
        s.baselines.push_back(std::move(b));
    }
    return s;
}

}  // namespace kforge::report
