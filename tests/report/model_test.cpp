// The report model's numbers, checked by hand against what the fixture stored.
#include <gtest/gtest.h>

#include <cmath>

#include "report/model.h"
#include "report_fixture.h"

namespace kforge {
namespace {

report::Report build(const test::Synthetic& s, std::vector<int64_t> runs) {
    auto store = Store::open(s.db_path);
    EXPECT_TRUE(store.ok());
    report::ReportOptions o;
    o.run_ids = std::move(runs);
    auto r = report::build_report(*store, o);
    EXPECT_TRUE(r.ok()) << (r.ok() ? "" : r.error().to_string());
    return *r;
}

TEST(ReportModel, BestMediansSpeedupsAndSol) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.run_id});
    ASSERT_EQ(r.problems.size(), 3u);
    EXPECT_FALSE(r.simulated);
    const auto& a = r.problems[0];
    ASSERT_TRUE(a.best);
    EXPECT_EQ(a.best->candidate_id, s.best_a);
    EXPECT_EQ(a.best->tier, "full");  // full tier outranks the faster quick evaluation
    EXPECT_NEAR(a.best->stats.median_ns, 1.10 * s.tsol_ns[0], 1e-6 * s.tsol_ns[0]);
    EXPECT_NEAR(a.best->stats.iqr_ns, (1.11 - 1.09) * s.tsol_ns[0], 1e-6 * s.tsol_ns[0]);
    EXPECT_EQ(a.best->diagnosis, "memory-bound: dram 91% of peak");
    ASSERT_EQ(a.best->gates.size(), 2u);
    EXPECT_EQ(a.best->gates[1].gate, "correctness_full");
    ASSERT_EQ(a.best->lineage.size(), 2u);
    EXPECT_EQ(a.best->lineage[1].depth, 1);
    ASSERT_EQ(a.baselines.size(), 2u);
    EXPECT_EQ(a.baselines[0].label, "baseline:eager");
    EXPECT_EQ(a.baselines[1].label, "baseline:compile_default");
    EXPECT_NEAR(*a.baselines[0].speedup, 3.0 / 1.10, 1e-9);
    EXPECT_NEAR(*a.baselines[1].speedup, 2.3 / 1.10, 1e-9);
    ASSERT_TRUE(a.sol.available);
    EXPECT_NEAR(*a.sol.percent_sol, 100.0 / 1.10, 1e-6);
    EXPECT_EQ(a.sol.t_base_source, "baseline:eager");
    // S = 1 / (1 + (T - Ts) / (Tb - Ts)) with T = 1.1 Ts, Tb = 3 Ts.
    EXPECT_NEAR(*a.sol.sol_score, 1.0 / (1.0 + 0.1 / 2.0), 1e-9);

    const auto& b = r.problems[1];
    ASSERT_TRUE(b.best);  // the gaming candidate's faster quick pass is disqualified
    EXPECT_EQ(b.best->candidate_id, s.best_b);
    EXPECT_NEAR(*b.baselines[0].speedup, 0.8, 1e-9);
    const auto& c = r.problems[2];
    EXPECT_FALSE(c.best);
    ASSERT_EQ(c.baselines.size(), 1u);
    EXPECT_FALSE(c.baselines[0].speedup);
}

TEST(ReportModel, SuiteGeomeanFastPAndSolFraction) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.run_id});
    const report::SuiteSummary& su = r.suite;
    EXPECT_EQ(su.problems, 3);
    EXPECT_EQ(su.problems_solved, 2);
    ASSERT_EQ(su.baselines.size(), 2u);
    const auto& eager = su.baselines[0];
    EXPECT_EQ(eager.name, "eager");
    EXPECT_EQ(eager.problems_measured, 3);
    EXPECT_EQ(eager.geomean_count, 2);
    EXPECT_NEAR(*eager.geomean_speedup, std::sqrt(3.0 / 1.10 * 0.8), 1e-9);
    ASSERT_EQ(eager.fast_p.size(), 3u);
    for (const auto& f : eager.fast_p) {  // only A is correct and faster (2.73x) at 1, 1.2, 2
        EXPECT_EQ(f.fast, 1) << f.p;
        EXPECT_NEAR(f.fraction, 1.0 / 3.0, 1e-12);
    }
    const auto& cd = su.baselines[1];
    EXPECT_EQ(cd.problems_measured, 1);
    EXPECT_EQ(cd.fast_p[2].fast, 1);  // 2.09x > 2
    EXPECT_EQ(su.problems_with_sol, 3);
    EXPECT_EQ(su.within_sol, 1);  // A at 1.10 T_sol; B at 2.0 T_sol
    EXPECT_NEAR(*su.fraction_within_sol, 1.0 / 3.0, 1e-12);
}

TEST(ReportModel, ProgressCurveCountsSamplesAndCompileTime) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.run_id});
    const auto& a = r.problems[0];
    ASSERT_EQ(a.progress.size(), 3u);  // baseline carrier excluded
    double t = s.tsol_ns[0];
    double sum = (1.4 + 1.5 + 1.6 + 1.0 + 1.05 + 1.2 + 1.08 + 1.09 + 1.10 + 1.11 + 1.12) * t +
                 3 * s.compile_ns;
    EXPECT_NEAR(a.progress.back().gpu_s, sum * 1e-9, 1e-12);
    // Only the best's tier counts (full here): the quick timings (1.5 t, then 1.05 t, faster
    // than the best) make no point of the curve, which ends at the report's best.
    EXPECT_FALSE(a.progress[0].best_time_ns);
    EXPECT_FALSE(a.progress[1].best_time_ns);
    EXPECT_NEAR(*a.progress[2].best_time_ns, 1.10 * t, 1e-6 * t);
    EXPECT_NEAR(*a.progress[2].best_time_ns, a.best->stats.median_ns, 1e-9);
    EXPECT_NEAR(*a.progress[2].best_speedup, 3.0 / 1.10, 1e-9);
}

TEST(ReportModel, SimulatedAndNoBaseline) {
    test::Synthetic s = test::build_synthetic();
    report::Report r = build(s, {s.sim_run_id});
    EXPECT_TRUE(r.simulated);
    ASSERT_EQ(r.problems.size(), 1u);
    EXPECT_TRUE(r.problems[0].simulated);
    EXPECT_TRUE(r.problems[0].baselines.empty());
    EXPECT_TRUE(r.suite.baselines.empty());
    EXPECT_EQ(r.problems[0].sol.t_base_source, "unfused_bound");
}

TEST(ReportModel, UnknownRunIsAnError) {
    test::Synthetic s = test::build_synthetic();
    auto store = Store::open(s.db_path);
    report::ReportOptions o;
    o.run_ids = {999};
    auto r = report::build_report(*store, o);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().to_string().find("999"), std::string::npos);
    o.run_ids = {s.run_id};
    o.device = "no_such_gpu";
    EXPECT_FALSE(report::build_report(*store, o).ok());
}

}  // namespace
}  // namespace kforge
