// Each call of the typed store API on a real database file.
#include <gtest/gtest.h>

#include <cmath>
#include <set>

#include <nlohmann/json.hpp>

#include "store/export.h"

#include "store_fixture.h"

namespace kforge {
namespace {

using test::StoreTest;

TEST(StoreEnums, EveryEnumRoundTripsThroughItsString) {
    for (int i = 0; i <= static_cast<int>(EvalTier::kProfile); ++i) {
        auto t = static_cast<EvalTier>(i);
        EXPECT_EQ(eval_tier_from_string(to_string(t)), t);
    }
    for (int i = 0; i <= static_cast<int>(EvalStatus::kNotSupported); ++i) {
        auto s = static_cast<EvalStatus>(i);
        EXPECT_EQ(eval_status_from_string(to_string(s)), s);
    }
    for (int i = 0; i <= static_cast<int>(RunStatus::kInterrupted); ++i) {
        auto s = static_cast<RunStatus>(i);
        EXPECT_EQ(run_status_from_string(to_string(s)), s);
    }
    for (int i = 0; i <= static_cast<int>(ArtefactKind::kPtxasReport); ++i) {
        auto k = static_cast<ArtefactKind>(i);
        EXPECT_EQ(artefact_kind_from_string(to_string(k)), k);
    }
    EXPECT_FALSE(eval_status_from_string("ok").has_value());
    EXPECT_FALSE(eval_tier_from_string("").has_value());
    EXPECT_TRUE(is_cacheable(EvalStatus::kCompileFailed));
    EXPECT_FALSE(is_cacheable(EvalStatus::kTimedOut));
    EXPECT_FALSE(is_cacheable(EvalStatus::kCrashed));
}

TEST_F(StoreTest, UpsertProblemIsIdempotentByContentAndIgnoresFormatting) {
    auto again = store_->upsert_problem(
        "gemm_small", R"({"graph":[],"dims":{"K":64,"N":64,"M":64},"name":"gemm_small"})");
    ASSERT_TRUE(again.ok());
    EXPECT_EQ(*again, problem_);
    auto changed = store_->upsert_problem("gemm_small", R"({"name": "gemm_small", "dims": {}})");
    ASSERT_TRUE(changed.ok());
    EXPECT_NE(*changed, problem_);  // a changed spec is a new version of the problem
    auto p = store_->get_problem(problem_);
    ASSERT_TRUE(p.ok());
    EXPECT_EQ(p->name, "gemm_small");
    EXPECT_EQ(p->spec_json, test::kSpecJson);
    EXPECT_EQ(p->content_hash.rfind("fnv1a64:", 0), 0u);
    EXPECT_FALSE(store_->upsert_problem("bad", "{not json").ok());
    EXPECT_FALSE(store_->upsert_problem("", "{}").ok());
    EXPECT_FALSE(store_->get_problem(999).ok());
}

TEST_F(StoreTest, UpsertDeviceUpdatesByUuid) {
    DeviceRecord d = test::test_device();
    d.driver = "590.10";
    auto id = store_->upsert_device(d);
    ASSERT_TRUE(id.ok());
    EXPECT_EQ(*id, device_);
    EXPECT_EQ(store_->get_device(device_)->driver, "590.10");
    auto other = store_->upsert_device(test::test_device("GPU-other"));
    ASSERT_TRUE(other.ok());
    EXPECT_NE(*other, device_);
    EXPECT_FALSE(store_->upsert_device(test::test_device("")).ok());
}

TEST_F(StoreTest, CalibrationsLatestWins) {
    auto none = store_->load_latest_calibration(device_);
    ASSERT_TRUE(none.ok());
    EXPECT_FALSE(none->has_value());
    ASSERT_TRUE(store_->save_calibration(device_, R"({"dram_gbps": 4000})").ok());
    ASSERT_TRUE(store_->save_calibration(device_, R"({"dram_gbps": 4200})").ok());
    auto latest = store_->load_latest_calibration(device_);
    ASSERT_TRUE(latest.ok() && latest->has_value());
    EXPECT_EQ((*latest)->calibration_json, R"({"dram_gbps": 4200})");
    EXPECT_FALSE((*latest)->measured_at.empty());
    EXPECT_FALSE(store_->save_calibration(device_, "[1,").ok());
    EXPECT_FALSE(store_->save_calibration(12345, "{}").ok());  // unknown device
}

TEST_F(StoreTest, RunsAreCreatedAndFinished) {
    auto r = store_->get_run(run_);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(r->status, RunStatus::kRunning);
    EXPECT_FALSE(r->finished_at.has_value());
    EXPECT_EQ(r->options_json, R"({"budget_s": 60})");
    ASSERT_TRUE(store_->finish_run(run_, RunStatus::kFinished).ok());
    r = store_->get_run(run_);
    EXPECT_EQ(r->status, RunStatus::kFinished);
    EXPECT_TRUE(r->finished_at.has_value());
    EXPECT_FALSE(store_->finish_run(999, RunStatus::kFinished).ok());
    EXPECT_FALSE(store_->finish_run(run_, RunStatus::kRunning).ok());

    NewRun suite;
    suite.suite = "kernelbench_l1";
    suite.device_id = device_;
    EXPECT_TRUE(store_->create_run(suite).ok());
    NewRun neither;
    neither.device_id = device_;
    EXPECT_FALSE(store_->create_run(neither).ok());
    NewRun bad_device;
    bad_device.problem_id = problem_;
    bad_device.device_id = 77;
    EXPECT_FALSE(store_->create_run(bad_device).ok());
}

TEST_F(StoreTest, AddCandidateIsIdempotentPerRun) {
    auto a = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    EXPECT_TRUE(a->created);
    auto again = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(again.ok());
    EXPECT_FALSE(again->created);
    EXPECT_EQ(again->id, a->id);
    // The same program in another run is another candidate row.
    NewRun r2;
    r2.problem_id = problem_;
    r2.device_id = device_;
    auto run2 = store_->create_run(r2);
    ASSERT_TRUE(run2.ok());
    auto other = store_->add_candidate(test::test_candidate(*run2, problem_, "program a"));
    ASSERT_TRUE(other.ok());
    EXPECT_TRUE(other->created);
    EXPECT_NE(other->id, a->id);

    auto c = store_->get_candidate(a->id);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->program_text, "program a");
    EXPECT_EQ(c->proposer, "human");
    EXPECT_EQ(store_->list_candidates(run_)->size(), 1u);

    auto orphan = test::test_candidate(run_, problem_, "program b");
    orphan.parent_ids = {a->id, 4242};
    auto bad = store_->add_candidate(orphan);
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().where, "candidate parent 1");
    EXPECT_EQ(store_->list_candidates(run_)->size(), 1u);  // rolled back as a whole
    EXPECT_FALSE(store_->add_candidate(test::test_candidate(999, problem_, "x")).ok());
}

TEST_F(StoreTest, LineageFollowsParentsNearestFirstOncePerAncestor) {
    auto add = [&](const std::string& text, std::vector<int64_t> parents) {
        auto c = test::test_candidate(run_, problem_, text);
        c.parent_ids = std::move(parents);
        auto r = store_->add_candidate(c);
        EXPECT_TRUE(r.ok());
        return r->id;
    };
    int64_t seed = add("seed", {});
    int64_t m1 = add("mutant 1", {seed});
    int64_t m2 = add("mutant 2", {seed});
    int64_t cross = add("crossover", {m2, m1});
    int64_t child = add("child", {cross});

    auto lin = store_->lineage(child);
    ASSERT_TRUE(lin.ok()) << lin.error().to_string();
    std::vector<std::pair<int64_t, int>> got;
    for (const auto& e : *lin) got.emplace_back(e.candidate.id, e.depth);
    std::vector<std::pair<int64_t, int>> want{{child, 0}, {cross, 1}, {m1, 2}, {m2, 2}, {seed, 3}};
    EXPECT_EQ(got, want);
    EXPECT_EQ((*lin)[1].candidate.parent_ids, (std::vector<int64_t>{m2, m1}));  // order kept
    EXPECT_EQ(store_->lineage(seed)->size(), 1u);
    EXPECT_FALSE(store_->lineage(999).ok());
}

TEST_F(StoreTest, ArtefactsAreDeduplicatedPerCandidateAndKind) {
    auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(c.ok());
    auto src = store_->add_artefact(c->id, ArtefactKind::kCudaSource, "__global__ void k() {}");
    auto same = store_->add_artefact(c->id, ArtefactKind::kCudaSource, "__global__ void k() {}");
    auto plan = store_->add_artefact(c->id, ArtefactKind::kLaunchPlan, R"({"grid": [1,1,1]})");
    ASSERT_TRUE(src.ok() && same.ok() && plan.ok());
    EXPECT_EQ(*src, *same);
    EXPECT_NE(*src, *plan);
    auto all = store_->list_artefacts(c->id);
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), 2u);
    EXPECT_EQ((*all)[0].kind, ArtefactKind::kCudaSource);
    EXPECT_EQ((*all)[0].hash, content_hash("__global__ void k() {}"));
    EXPECT_FALSE(store_->add_artefact(999, ArtefactKind::kPtxasReport, "x").ok());
}

TEST_F(StoreTest, EvaluationsKeepEveryTierStatusAndMeasurement) {
    auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(c.ok());
    std::set<int64_t> ids;
    for (int t = 0; t <= static_cast<int>(EvalTier::kProfile); ++t) {
        for (int s = 0; s <= static_cast<int>(EvalStatus::kNotSupported); ++s) {
            auto e = test::test_evaluation(c->id, device_, 3);
            e.tier = static_cast<EvalTier>(t);
            e.status = static_cast<EvalStatus>(s);
            auto id = store_->add_evaluation(e);
            ASSERT_TRUE(id.ok()) << id.error().to_string();  // the SQL CHECK accepts every name
            ids.insert(*id);
        }
    }
    auto all = store_->list_evaluations(c->id);
    ASSERT_TRUE(all.ok());
    ASSERT_EQ(all->size(), ids.size());
    const auto& last = all->back();
    EXPECT_EQ(last.tier, EvalTier::kProfile);
    EXPECT_EQ(last.status, EvalStatus::kNotSupported);
    ASSERT_EQ(last.measurements.size(), 3u);
    EXPECT_EQ(last.measurements[2].sample_index, 2);
    EXPECT_DOUBLE_EQ(last.measurements[2].time_ns, 1002.0);
    EXPECT_EQ(last.measurements[2].sm_clock_mhz, 1980);
    EXPECT_EQ(last.flops, 2 * 64 * 64 * 64);
    EXPECT_EQ(last.evidence_json, R"({"max_abs_error": 1e-6})");
}

TEST_F(StoreTest, AddEvaluationIsAllOrNothing) {
    auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(c.ok());
    auto e = test::test_evaluation(c->id, device_, 4);
    e.measurements[3].sample_index = 1;  // repeats (candidate, 1): the insert fails midway
    auto bad = store_->add_evaluation(e);
    ASSERT_FALSE(bad.ok());
    EXPECT_NE(bad.error().message.find("UNIQUE"), std::string::npos) << bad.error().to_string();
    EXPECT_EQ(*store_->db().query_text("SELECT count(*) FROM evaluations"), "0");
    EXPECT_EQ(*store_->db().query_text("SELECT count(*) FROM measurements"), "0");

    auto bad_json = test::test_evaluation(c->id, device_, 1);
    bad_json.evidence_json = "{";
    EXPECT_FALSE(store_->add_evaluation(bad_json).ok());
    auto negative = test::test_evaluation(c->id, device_, 1);
    negative.measurements[0].time_ns = -1.0;
    EXPECT_FALSE(store_->add_evaluation(negative).ok());
    EXPECT_FALSE(store_->add_evaluation(test::test_evaluation(999, device_, 1)).ok());
    EXPECT_FALSE(store_->get_evaluation(999).ok());
}

// Per-kernel times (schema version 4's kernel_times_json): kept in order, empty by default,
// exported; a negative or non-finite time is refused, a corrupt column is an error on read.
TEST_F(StoreTest, KernelTimesRoundTripInTheProgramsOrder) {
    auto c = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    ASSERT_TRUE(c.ok());
    auto e = test::test_evaluation(c->id, device_, 2);
    e.kernel_times_ns = {1250.5, 40.25, 9000.0};
    auto id = store_->add_evaluation(e);
    ASSERT_TRUE(id.ok()) << id.error().to_string();
    auto back = store_->get_evaluation(*id);
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->kernel_times_ns, (std::vector<double>{1250.5, 40.25, 9000.0}));
    auto plain = store_->add_evaluation(test::test_evaluation(c->id, device_, 1));
    ASSERT_TRUE(plain.ok());
    EXPECT_TRUE(store_->get_evaluation(*plain)->kernel_times_ns.empty());
    auto exported = export_run_json(*store_, run_);
    ASSERT_TRUE(exported.ok()) << exported.error().to_string();
    EXPECT_EQ((*exported)["candidates"][0]["evaluations"][0]["kernel_times_ns"],
              nlohmann::ordered_json({1250.5, 40.25, 9000.0}));
    for (double bad : {-1.0, std::nan("")}) {
        auto neg = test::test_evaluation(c->id, device_, 1);
        neg.kernel_times_ns = {5.0, bad};
        EXPECT_FALSE(store_->add_evaluation(neg).ok());
    }
    ASSERT_TRUE(store_->db().exec("UPDATE evaluations SET kernel_times_json = '[1, \"x\"]' "
                                  "WHERE id = " + std::to_string(*id)).ok());
    auto corrupt = store_->get_evaluation(*id);
    ASSERT_FALSE(corrupt.ok());
    EXPECT_NE(corrupt.error().message.find("kernel_times_json"), std::string::npos);
}

// "Best" is the fastest full-tier median that passed, as optimize and report say it (a quick-tier
// sample, taken under a looser protocol, never is).
TEST_F(StoreTest, ListRunsCountsCandidatesAndPicksTheBestPassedMedian) {
    auto a = store_->add_candidate(test::test_candidate(run_, problem_, "program a"));
    auto b = store_->add_candidate(test::test_candidate(run_, problem_, "program b"));
    ASSERT_TRUE(a.ok() && b.ok());
    auto full = [&](int64_t candidate, double base_ns) {
        auto e = test::test_evaluation(candidate, device_, 5, base_ns);
        e.tier = EvalTier::kFull;
        return e;
    };
    ASSERT_TRUE(store_->add_evaluation(full(a->id, 2000.0)).ok());
    ASSERT_TRUE(store_->add_evaluation(full(b->id, 1500.0)).ok());
    auto wrong = full(b->id, 10.0);  // fast but incorrect
    wrong.status = EvalStatus::kIncorrect;
    ASSERT_TRUE(store_->add_evaluation(wrong).ok());
    // faster, passed, but quick tier only
    ASSERT_TRUE(store_->add_evaluation(test::test_evaluation(a->id, device_, 5, 900.0)).ok());
    auto runs = store_->list_runs();
    ASSERT_TRUE(runs.ok()) << runs.error().to_string();
    ASSERT_EQ(runs->size(), 1u);
    EXPECT_EQ((*runs)[0].problem, "gemm_small");
    EXPECT_EQ((*runs)[0].device, "NVIDIA H200");
    EXPECT_EQ((*runs)[0].candidates, 2);
    ASSERT_TRUE((*runs)[0].best_time_ns.has_value());
    EXPECT_DOUBLE_EQ(*(*runs)[0].best_time_ns, 1502.0);  // median of 1500..1504
}

TEST_F(StoreTest, LlmRequestsAreLogged) {
    NewLlmRequest r;
    r.run_id = run_;
    r.provider = "anthropic";
    r.model = "claude";
    r.request_hash = "abc";
    r.prompt = "write a kernel";
    r.reply = "kernel k0 = ...";
    r.tokens_in = 1200;
    r.tokens_out = 300;
    r.cost_usd = 0.01;
    r.latency_ms = 850;
    ASSERT_TRUE(store_->add_llm_request(r).ok());
    EXPECT_EQ(*store_->db().query_text("SELECT tokens_out FROM llm_requests"), "300");
    r.tokens_in = -1;
    EXPECT_FALSE(store_->add_llm_request(r).ok());
}

TEST(StoreMedian, OddEvenAndLabels) {
    std::vector<MeasurementRecord> m(4);
    double times[] = {4, 1, 3, 100};
    for (int i = 0; i < 4; ++i) m[i].time_ns = times[i];
    m[3].label = "baseline";
    EXPECT_DOUBLE_EQ(*median_time_ns(m), 3.0);
    m[3].label = "candidate";
    EXPECT_DOUBLE_EQ(*median_time_ns(m), 3.5);
    EXPECT_FALSE(median_time_ns(m, "baseline").has_value());
}

}  // namespace
}  // namespace kforge
