// Pure search logic on synthetic data: successive halving, budgets, stop conditions, the suite
// allocator and the cost model's fit.
#include <gtest/gtest.h>

#include <cmath>

#include "dsl/parser.h"
#include "problem/spec.h"
#include "search/budget.h"
#include "sol/calibration.h"
#include "sol/device.h"
#include "search/cost_model.h"
#include "search/ladder.h"
#include "search/suite_rounds.h"

namespace kforge::search {
namespace {

TimedEntry entry(const std::string& id, double median, double half_ci) {
    return TimedEntry{id, median, median - half_ci, median + half_ci};
}

TEST(Ladder, PromoteCountIsCeilAndAtLeastOne) {
    EXPECT_EQ(promote_count(0, 1.0 / 3), 0u);
    EXPECT_EQ(promote_count(1, 1.0 / 3), 1u);
    EXPECT_EQ(promote_count(3, 1.0 / 3), 1u);
    EXPECT_EQ(promote_count(4, 1.0 / 3), 2u);
    EXPECT_EQ(promote_count(9, 1.0 / 3), 3u);
    EXPECT_EQ(promote_count(5, 1.0), 5u);
}

TEST(Ladder, ScreenCountGrowsWhenCandidatesAreCheap) {
    // nothing measured yet: the cost-model cut
    EXPECT_FALSE(screen_capacity(ScreenCosts{}, 30).has_value());
    EXPECT_EQ(screen_count(24, 1.0 / 3, ScreenCosts{}, 30), 8u);
    // row-wise kernels on the H200 (issue 6): a 12 s wave of 16 parallel compiles, 0.12 s
    // quick timings; a 22 s round screens a whole wave, not 8 of 24
    ScreenCosts rows{12.0, 1, 16, 0.12, 4};
    EXPECT_EQ(screen_capacity(rows, 22).value(), 16u);
    EXPECT_EQ(screen_count(24, 1.0 / 3, rows, 22), 16u);
    EXPECT_EQ(screen_count(10, 1.0 / 3, rows, 22), 10u);  // never more than there are
    EXPECT_EQ(screen_capacity(rows, 30).value(), 32u);   // two waves
    // CUTLASS GEMMs: a 90 s wave does not fit a 30 s round; the cut (8) is compiled in one
    // wave of 16 anyway, which takes 8 more whose 1 s quick timings fit in the round
    ScreenCosts gemm{90.0, 1, 16, 1.0, 2};
    EXPECT_EQ(screen_capacity(gemm, 30).value(), 0u);
    EXPECT_EQ(screen_count(24, 1.0 / 3, gemm, 30), 16u);
    EXPECT_EQ(screen_count(9, 1.0 / 3, gemm, 30), 9u);  // never more than there are
    // a round already spent (5 s left): a quarter of the 90 s wave buys 16 s of quick timings,
    // 8 more (to fill the wave)
    EXPECT_EQ(screen_count(24, 1.0 / 3, gemm, 5), 16u);
    // 4 s quick timings: a quarter of a 40 s wave buys 2 more
    ScreenCosts slow{40.0, 1, 16, 4.0, 2};
    EXPECT_EQ(screen_count(24, 1.0 / 3, slow, 5), 10u);
    // the simulated device: nothing to compile, timings in microseconds
    ScreenCosts sim{0.0, 0, 1, 1e-7, 9};
    EXPECT_EQ(screen_count(40, 1.0 / 3, sim, 1), 40u);
    // serial compiles of 2 s and 0.5 s timings: 2.5 s a candidate
    ScreenCosts serial{2.0, 3, 1, 0.5, 3};
    EXPECT_EQ(screen_capacity(serial, 10).value(), 4u);
}

// Programs whose shapes need separate sources take that many compile slots each.
TEST(Ladder, AWaveHoldsFewerProgramsThatNeedSeveralCompiles) {
    ScreenCosts one{60.0, 1, 16, 1.0, 2};
    EXPECT_EQ(programs_per_wave(one), 16u);
    EXPECT_EQ(screen_capacity(one, 80).value(), 16u);
    ScreenCosts three = one;
    three.compile_units = 3;
    EXPECT_EQ(programs_per_wave(three), 5u);
    EXPECT_EQ(screen_capacity(three, 80).value(), 5u);
    // the wave is filled up to its 5 programs, not 16
    EXPECT_EQ(screen_count(24, 1.0 / 6, three, 80), 5u);
    three.compile_units = 40;  // more than the slots: one program a wave
    EXPECT_EQ(programs_per_wave(three), 1u);
}

TEST(Ladder, FullTimingsStayThoseOfTheCutWithinTheRound) {
    // nothing measured: what the cut would have timed (8 of 24) and promoted (3)
    EXPECT_EQ(full_count(20, 8, 1.0 / 3, ScreenCosts{}, 22), 3u);
    EXPECT_EQ(full_count(2, 8, 1.0 / 3, ScreenCosts{}, 22), 1u);
    // the H200 run of issue 6: full timings of 11-25 s in a 22 s round: one
    ScreenCosts h200{12.0, 1, 16, 0.12, 4, 18.0, 2};
    EXPECT_EQ(full_count(16, 7, 1.0 / 3, h200, 22), 1u);
    // cheap full timings (the simulated device): the cut's count
    ScreenCosts sim{0.0, 0, 1, 1e-4, 9, 1e-2, 3};
    EXPECT_EQ(full_count(40, 14, 1.0 / 3, sim, 60), 5u);
    EXPECT_EQ(full_count(0, 0, 1.0 / 3, sim, 60), 0u);
}

TEST(Ladder, CutPromotesFastestAndDropsClearlySlower) {
    std::vector<TimedEntry> e = {entry("c", 30, 0.1), entry("a", 10, 0.1), entry("b", 20, 0.1),
                                 entry("d", 40, 0.1), entry("e", 50, 0.1), entry("f", 60, 0.1)};
    HalvingCut cut = halving_cut(e, 1.0 / 3);
    ASSERT_EQ(cut.promote.size(), 2u);
    EXPECT_EQ(e[cut.promote[0]].id, "a");
    EXPECT_EQ(e[cut.promote[1]].id, "b");
    EXPECT_TRUE(cut.retime.empty());
    EXPECT_EQ(cut.drop.size(), 4u);
    EXPECT_DOUBLE_EQ(cut.cut_ns, 20);
}

TEST(Ladder, OverlappingConfidenceIntervalsAreRetimedNotDropped) {
    std::vector<TimedEntry> e = {entry("a", 10, 0.1), entry("b", 20, 0.5), entry("c", 20.3, 1.0),
                                 entry("d", 40, 0.1), entry("e", 50, 0.1), entry("f", 60, 0.1)};
    HalvingCut cut = halving_cut(e, 1.0 / 3);
    ASSERT_EQ(cut.retime.size(), 1u);
    EXPECT_EQ(e[cut.retime[0]].id, "c");
    // after re-timing c turns out faster than b: it is promoted, b dropped, nothing left to retime
    e[2] = entry("c", 19.0, 0.2);
    HalvingCut after = decide_after_retime(e, 1.0 / 3);
    EXPECT_TRUE(after.retime.empty());
    EXPECT_EQ(e[after.promote[1]].id, "c");
    EXPECT_EQ(e[after.drop[0]].id, "b");
}

TEST(Ladder, ScreenKeepsLowestEstimatesAndUnknownLast) {
    std::vector<std::optional<double>> est = {5.0, std::nullopt, 1.0, 3.0};
    auto keep = screen_by_estimate(est, 2);
    EXPECT_EQ(keep, (std::vector<size_t>{2, 3}));
    EXPECT_EQ(screen_by_estimate(est, 10).back(), 1u);
}

TEST(Ladder, TierNamesRoundTrip) {
    for (int i = 0; i <= static_cast<int>(LadderTier::kProfile); ++i) {
        auto t = static_cast<LadderTier>(i);
        EXPECT_EQ(ladder_tier_from_string(to_string(t)), t);
    }
    EXPECT_FALSE(ladder_tier_from_string("warp"));
}

TEST(Budget, EachLimitFires) {
    Budget b;
    Spent s{100, 100, 100, 100, 100};
    EXPECT_FALSE(budget_exhausted(b, s));
    EXPECT_NE(budget_exhausted(Budget{50.0, {}, {}, {}, {}}, s)->find("wall"), std::string::npos);
    EXPECT_NE(budget_exhausted(Budget{{}, 50.0, {}, {}, {}}, s)->find("GPU"), std::string::npos);
    // the compile limit stops compiles, not the run (free evaluations go on): its own check
    EXPECT_FALSE(budget_exhausted(Budget{{}, {}, 100, {}, {}}, s));
    EXPECT_NE(compile_budget_spent(Budget{{}, {}, 100, {}, {}}, s)->find("compile"), std::string::npos);
    EXPECT_FALSE(compile_budget_spent(Budget{{}, {}, 101, {}, {}}, s));
    EXPECT_NE(budget_exhausted(Budget{{}, {}, {}, 99, {}}, s)->find("token"), std::string::npos);
    EXPECT_NE(budget_exhausted(Budget{{}, {}, {}, {}, 1.0}, s)->find("cost"), std::string::npos);
    EXPECT_FALSE(budget_exhausted(Budget{1000.0, 1000.0, 1000, 1000, 1000.0}, s));
    // a grace on the wall clock only: 100 s spent of 95 within a 10 s grace, not of 85
    EXPECT_FALSE(budget_exhausted(Budget{95.0, {}, {}, {}, {}}, s, 10.0));
    EXPECT_TRUE(budget_exhausted(Budget{85.0, {}, {}, {}, {}}, s, 10.0));
    EXPECT_NE(budget_exhausted(Budget{95.0, 50.0, {}, {}, {}}, s, 10.0)->find("GPU"), std::string::npos);
}

TEST(Stop, WithinSol) {
    StopConditions c;
    c.within_sol_percent = 10;
    Progress p;
    p.fraction_of_sol = 0.8;  // T = 1.25 T_sol
    EXPECT_FALSE(stop_within_sol(c, p));
    p.fraction_of_sol = 0.95;  // T = 1.053 T_sol
    EXPECT_TRUE(stop_within_sol(c, p));
    EXPECT_FALSE(stop_within_sol(StopConditions{}, p));
}

TEST(Stop, NoImprovementForNRounds) {
    StopConditions c;
    c.patience_rounds = 2;
    Progress p;
    p.best_ns_by_round = {100, 90, 90};
    EXPECT_FALSE(stop_no_improvement(c, p));  // 100 -> 90 within the window
    p.best_ns_by_round.push_back(90);
    EXPECT_TRUE(stop_no_improvement(c, p));
    p.best_ns_by_round = {0, 0, 0, 0};  // nothing passed yet: not "no improvement"
    EXPECT_FALSE(stop_no_improvement(c, p));
}

TEST(Stop, MaxRoundsAndComposition) {
    StopConditions c;
    c.max_rounds = 3;
    Progress p;
    p.rounds = 2;
    EXPECT_FALSE(should_stop(c, p, {}, {}));
    p.rounds = 3;
    EXPECT_NE(should_stop(c, p, {}, {})->find("round"), std::string::npos);
    // budget first
    EXPECT_NE(should_stop(c, p, Budget{1.0, {}, {}, {}, {}}, Spent{1, 0, 0, 0, 0})->find("wall"),
              std::string::npos);
}

TEST(Allocator, LargestExpectedGainNearSolDeprioritized) {
    Progress far_fast, far_stalled, near;
    far_fast.fraction_of_sol = 0.3, far_fast.best_ns_by_round = {100, 60};
    far_stalled.fraction_of_sol = 0.3, far_stalled.best_ns_by_round = {100, 100};
    near.fraction_of_sol = 0.95, near.best_ns_by_round = {100, 50};
    std::vector<std::string> names = {"far_fast", "far_stalled", "near"};
    SuiteChoice c = choose_next_problem({far_fast, far_stalled, near}, {false, false, false}, names);
    EXPECT_EQ(c.next, 0u);
    ASSERT_EQ(c.reasons.size(), 1u);
    EXPECT_NE(c.reasons[0].find("near: deprioritized"), std::string::npos);
    c = choose_next_problem({far_fast, far_stalled, near}, {true, false, false}, names);
    EXPECT_EQ(c.next, 1u);
    c = choose_next_problem({far_fast, far_stalled, near}, {true, true, false}, names);
    EXPECT_EQ(c.next, 2u);  // only the near one left
    c = choose_next_problem({far_fast}, {true}, names);
    EXPECT_FALSE(c.next);
    // A problem whose start was timed but never searched comes before one improving by less
    // than the prior (on the H200 one problem improving 18% a round took every round of a
    // ten-problem suite while nine were never searched).
    Progress untried;
    untried.fraction_of_sol = 0.3, untried.best_ns_by_round = {100};
    Progress improving;
    improving.fraction_of_sol = 0.01, improving.best_ns_by_round = {100, 82};
    c = choose_next_problem({improving, untried}, {false, false}, {"improving", "untried"});
    EXPECT_EQ(c.next, 1u);
    // a start not yet evaluated comes before a problem with one round, whatever their gains
    Progress fresh, one_round;
    fresh.fraction_of_sol = 0.5;
    one_round.best_ns_by_round = {0};  // its round gave no full-tier result
    c = choose_next_problem({one_round, fresh}, {false, false}, {"one_round", "fresh"});
    EXPECT_EQ(c.next, 1u);
    c = choose_next_problem({one_round, fresh}, {false, true}, {"one_round", "fresh"});
    EXPECT_EQ(c.next, 0u);
}

// Among problems never searched, one whose round would wait for a compile wave goes after those
// ready to time (the GPU times them while the wave compiles), whatever their gains; once every
// untried one waits, the largest gain goes first; problems already searched still come after.
TEST(Allocator, NeverSearchedReadyBeforeWaitingForAWave) {
    Progress gemm, rowwise, searched;
    gemm.fraction_of_sol = 0.1, gemm.best_ns_by_round = {100};     // gain 0.9 x prior
    rowwise.fraction_of_sol = 0.8, rowwise.best_ns_by_round = {100};  // gain 0.2 x prior
    searched.fraction_of_sol = 0.05, searched.best_ns_by_round = {100, 50};
    const std::vector<std::string> names = {"gemm", "rowwise", "searched"};
    const std::vector<bool> none = {false, false, false};
    EXPECT_EQ(choose_next_problem({gemm, rowwise, searched}, none, names).next, 0u);
    EXPECT_EQ(choose_next_problem({gemm, rowwise, searched}, none, names, 0.9,
                                  {true, false, false}).next, 1u);
    // the ready one done: the waiting one, before the one already searched
    EXPECT_EQ(choose_next_problem({gemm, rowwise, searched}, {false, true, false}, names, 0.9,
                                  {true, false, false}).next, 0u);
    // every untried one waiting: gain decides again
    EXPECT_EQ(choose_next_problem({gemm, rowwise, searched}, none, names, 0.9,
                                  {true, true, false}).next, 0u);
}

// The uniform baseline of issue 27's allocation benchmark: fewest rounds first, whatever the
// SOL headroom or the gain (a problem near SOL is not passed over), a waiting one after a ready
// one of as many rounds; and the compile limit ends no run (it stops compiles only).
TEST(Allocator, UniformGivesTheFewestRoundsFirst) {
    Progress far, near, ahead;
    far.fraction_of_sol = 0.1, far.rounds = 2, far.best_ns_by_round = {100, 50, 40};
    near.fraction_of_sol = 0.97, near.rounds = 1, near.best_ns_by_round = {100, 100};
    ahead.fraction_of_sol = 0.5, ahead.rounds = 1, ahead.best_ns_by_round = {100, 90};
    const std::vector<bool> none = {false, false, false};
    EXPECT_EQ(choose_uniform({far, near, ahead}, none).next, 1u);  // near SOL: not passed over
    EXPECT_EQ(choose_uniform({far, near, ahead}, none, {false, true, false}).next, 2u);
    EXPECT_EQ(choose_uniform({far, near, ahead}, {false, true, true}).next, 0u);
    EXPECT_FALSE(choose_uniform({far}, {true}).next);
    EXPECT_EQ(choose_next_problem({far, near, ahead}, none, {"far", "near", "ahead"}).next, 0u);
    EXPECT_EQ(suite_allocation_from_string("uniform"), SuiteAllocation::kUniform);
    EXPECT_EQ(to_string(SuiteAllocation::kSolHeadroom), "sol");
    EXPECT_FALSE(suite_allocation_from_string("fair"));
    Budget b;
    b.compiles = 2;
    Spent s;
    s.compiles = 2;
    EXPECT_FALSE(budget_exhausted(b, s));
    ASSERT_TRUE(compile_budget_spent(b, s));
    EXPECT_EQ(*compile_budget_spent(b, s), "compile budget spent (2 of 2)");
}

TEST(Allocator, FirstRoundShareSplitsTheWallLeft) {
    Budget b;
    b.wall_s = 600;
    Spent s;
    s.wall_s = 100;
    ASSERT_TRUE(first_round_share_s(b, s, 25));
    EXPECT_DOUBLE_EQ(*first_round_share_s(b, s, 25), 20.0);
    EXPECT_FALSE(first_round_share_s(b, s, 0));   // nobody waits for a first round
    EXPECT_FALSE(first_round_share_s({}, s, 10));  // no wall budget
    s.wall_s = 700;
    EXPECT_DOUBLE_EQ(*first_round_share_s(b, s, 3), 0.0);  // past the budget: nothing
}

// A prefetched wave's estimate is the problem's own kind's: an NVRTC problem is not held to a
// CUTLASS wave's minute (b600 on the H100, session 18: seven NVRTC waves compiled in the
// foreground because the suite-wide estimate said 60 s).
TEST(Allocator, PrefetchWaveEstimateIsByTheProblemsKind) {
    std::vector<SearchState> states(4);
    const std::vector<bool> nvcc = {true, true, false, false};
    EXPECT_DOUBLE_EQ(prefetch_wave_estimate_s(0, states, nvcc), 60.0);  // nothing measured
    EXPECT_DOUBLE_EQ(prefetch_wave_estimate_s(2, states, nvcc), 10.0);
    states[1].screen_costs.compile_wave_s = 45, states[1].screen_costs.compile_samples = 1;
    states[3].screen_costs.compile_wave_s = 4, states[3].screen_costs.compile_samples = 2;
    EXPECT_DOUBLE_EQ(prefetch_wave_estimate_s(0, states, nvcc), 45.0);  // its kind's measured
    EXPECT_DOUBLE_EQ(prefetch_wave_estimate_s(2, states, nvcc), 4.0);   // not the nvcc one
    states[2].screen_costs.compile_wave_s = 7, states[2].screen_costs.compile_samples = 1;
    EXPECT_DOUBLE_EQ(prefetch_wave_estimate_s(2, states, nvcc), 7.0);   // its own
}

// A first round's wave made ahead holds the k best by the cost model, the start first.
TEST(Allocator, FirstRoundPickKeepsTheBestEstimates) {
    auto problem = parse_problem(R"({"name": "g", "dims": {"M": 4096, "N": 4096, "K": 4096},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f16"}, "B": {"shape": ["K", "N"], "dtype": "f16"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}], "outputs": ["C"],
        "precision": {"policy": "fp16"}})", "g.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    auto spec = find_device("h100-sxm");
    ASSERT_TRUE(spec.ok());
    SearchState st;
    st.problem = *problem;
    st.cost.emplace(*problem, effective_ceilings(*spec, std::nullopt), spec->sm_count);
    auto add = [&](const std::string& h, const std::string& tile) {
        auto prog = dsl::parse_program("program p for \"g\"\nkernel k0 = gemm(A[M,K], B[K,N]) tile " + tile +
                                       " stages auto schedule cooperative math f16 acc f32\n    { cast f16; store C[M,N] }\n", "p.kf");
        ASSERT_TRUE(prog.ok()) << prog.error().to_string();
        st.candidates[h].program = std::make_shared<const dsl::Program>(*prog);
    };
    add("start", "64x64x64");
    add("small", "64x64x64");
    add("big", "128x256x64");
    st.candidates["unparsed"];  // no program: no estimate, last
    st.start_hash = "start";
    const std::vector<std::string> next = {"unparsed", "small", "big", "start"};
    EXPECT_EQ(first_round_pick(st, next, 2), (std::vector<std::string>{"start", "big"}));
    EXPECT_EQ(first_round_pick(st, next, 9), (std::vector<std::string>{"start", "big", "small", "unparsed"}));
    st.cost.reset();  // without a model: the start, then next's order
    EXPECT_EQ(first_round_pick(st, next, 3), (std::vector<std::string>{"start", "unparsed", "small"}));
}

// The next full tier of a problem: its own mean once measured, else the suite's median seconds
// per compulsory byte times its bytes (at least the suite's mean), else the fallback.
TEST(Allocator, FullTierEstimateScalesWithTheProblemsBytes) {
    auto state = [](double bytes, double full_s, int samples) {
        SearchState s;
        s.bounds.work.bytes_fused = bytes;
        s.screen_costs.full_s = full_s;
        s.screen_costs.full_samples = samples;
        return s;
    };
    std::vector<SearchState> suite = {state(1e6, 0.5, 1), state(1e8, 4.0, 2), state(1e7, 0.3, 1)};
    EXPECT_DOUBLE_EQ(full_tier_estimate_s(suite[1], suite, 30), 4.0);  // its own
    // per byte: 5e-7, 4e-8, 3e-8 -> median 4e-8; a 1 GB problem: 40 s, not the mean 1.6 s
    EXPECT_NEAR(full_tier_estimate_s(state(1e9, 0, 0), suite, 30), 40.0, 1e-9);
    // a small one: the suite's mean
    EXPECT_NEAR(full_tier_estimate_s(state(1e3, 0, 0), suite, 30), 1.6, 1e-9);
    // nothing measured: the fallback
    EXPECT_DOUBLE_EQ(full_tier_estimate_s(state(1e9, 0, 0), {state(1e6, 0, 0)}, 30), 30.0);
    // the simulated device checks at a CPU-feasible shape: the mean, whatever the bytes
    SearchState sim = state(1e9, 0, 0);
    sim.simulated = true;
    EXPECT_NEAR(full_tier_estimate_s(sim, suite, 30), 1.6, 1e-9);
}

TEST(CostModel, FitIsGeometricMeanRatioPerKind) {
    std::vector<CostObservation> obs = {{dsl::KernelKind::kMap, 100, 200},
                                        {dsl::KernelKind::kMap, 100, 800},
                                        {dsl::KernelKind::kGemm, 50, 25}};
    auto s = fit_scales(obs);
    EXPECT_NEAR(s[dsl::KernelKind::kMap], 4.0, 1e-9);
    EXPECT_NEAR(s[dsl::KernelKind::kGemm], 0.5, 1e-9);
    EXPECT_EQ(s.count(dsl::KernelKind::kRowwise), 0u);
}

}  // namespace
}  // namespace kforge::search
