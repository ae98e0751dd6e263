// The warm-up of a program's correctness cases (eval/evaluate.h warm_cases, Evaluator::warm):
// it builds exactly the cases the quick and full tiers' correctness gates request (they share
// correctness_gates), in process and through a supervised `kforge worker --device sim`, and a
// failed warm-up is reported while the evaluations after it run as they would without it.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "device/sim_device.h"
#include "eval/evaluator.h"
#include "eval_fixture.h"
#include "worker/supervised_evaluator.h"

namespace kforge::eval {
namespace {

using testing::request_for;
using testing::sim_worker;

WarmRequest warm_request_for(const EvalRequest& r) {
    WarmRequest w;
    w.problem = r.problem;
    w.program_text = r.program_text;
    w.seed = r.seed;
    w.tier = r.tier;
    return w;
}

// "reference" of every round of every correctness gate ("computed" or "cached"), by gate.
std::vector<std::string> references_of(const EvalReport& r) {
    std::vector<std::string> out;
    for (const GateOutcome& g : r.gates) {
        if (g.gate.rfind("correctness_", 0) != 0 || !g.evidence.contains("rounds")) continue;
        for (const auto& round : g.evidence["rounds"])
            out.push_back(g.gate + ":" + round.value("reference", "?"));
    }
    return out;
}

// The results of a report without its wall times and cache provenance.
void expect_same_results(const EvalReport& a, const EvalReport& b) {
    EXPECT_EQ(a.status, b.status) << a.message << " | " << b.message;
    ASSERT_EQ(a.gates.size(), b.gates.size());
    for (size_t i = 0; i < a.gates.size(); ++i) {
        EXPECT_EQ(a.gates[i].gate, b.gates[i].gate);
        EXPECT_EQ(a.gates[i].passed, b.gates[i].passed) << a.gates[i].gate;
        EXPECT_EQ(a.gates[i].message, b.gates[i].message) << a.gates[i].gate;
        if (!a.gates[i].evidence.contains("rounds")) continue;
        const auto& ra = a.gates[i].evidence["rounds"];
        const auto& rb = b.gates[i].evidence["rounds"];
        ASSERT_EQ(ra.size(), rb.size()) << a.gates[i].gate;
        for (size_t k = 0; k < ra.size(); ++k) {
            EXPECT_EQ(ra[k]["seed"], rb[k]["seed"]);
            EXPECT_EQ(ra[k]["distribution"], rb[k]["distribution"]);
            // (key order aside: a worker's report comes back through plain JSON)
            EXPECT_EQ(nlohmann::json::parse(ra[k]["comparison"].dump()),
                      nlohmann::json::parse(rb[k]["comparison"].dump()))
                << a.gates[i].gate << " " << k;
        }
    }
    EXPECT_DOUBLE_EQ(a.stats.median_ns, b.stats.median_ns);  // the model is deterministic
}

// The case list is the gates' own: after a warm-up every correctness round of the full tier
// finds its reference cached, with the results of a run without the warm-up.
TEST(EvalWarmUp, TheFullTierFindsEveryCorrectnessCaseCached) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    for (const char* name : {"row_sum_f32", "gemm_bf16_4096"}) {
        SCOPED_TRACE(name);
        EvalRequest req = request_for(name, EvalTier::kFull);
        req.seed = 3;
        InProcessEvaluator cold(**device);
        EvalReport plain = cold.run_pipeline(req);
        ASSERT_EQ(plain.status, EvalStatus::kPassed) << plain.message;
        std::vector<std::string> plain_refs = references_of(plain);
        ASSERT_EQ(plain_refs.size(), 7u);  // small 2 + full 5 (at the check shape on the sim)
        for (const std::string& r : plain_refs) EXPECT_NE(r.find(":computed"), std::string::npos);

        InProcessEvaluator warmed(**device);
        WarmReport w = warmed.warm(warm_request_for(req));
        EXPECT_TRUE(w.error.empty()) << w.error;
        EXPECT_EQ(w.cases_total, 7u);
        EXPECT_EQ(w.computed, 7);
        EXPECT_EQ(w.cached, 0);
        EvalReport after = warmed.run_pipeline(req);
        for (const std::string& r : references_of(after))
            EXPECT_NE(r.find(":cached"), std::string::npos) << r;
        EXPECT_EQ(references_of(after).size(), plain_refs.size());
        expect_same_results(plain, after);
        // a second warm-up finds them all
        WarmReport again = warmed.warm(warm_request_for(req));
        EXPECT_EQ(again.computed, 0);
        EXPECT_EQ(again.cached, 7);
    }
}

// A warm-up of another seed builds other cases: the gates compute theirs.
TEST(EvalWarmUp, AnotherSeedWarmsOtherCases) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator ev(**device);
    EvalRequest req = request_for("row_sum_f32", EvalTier::kFull);
    WarmRequest w = warm_request_for(req);
    w.seed = req.seed + 1;
    EXPECT_EQ(ev.warm(w).computed, 7);
    for (const std::string& r : references_of(ev.run_pipeline(req)))
        EXPECT_NE(r.find(":computed"), std::string::npos) << r;
}

// Case ranges: the quick tier lists only correctness_small's two cases; a range warms its part.
TEST(EvalWarmUp, RangesAndTheQuickTier) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator ev(**device);
    EvalRequest req = request_for("row_sum_f32", EvalTier::kQuick);
    WarmRequest w = warm_request_for(req);
    w.max_cases = 1;
    WarmReport first = ev.warm(w);
    EXPECT_EQ(first.cases_total, 2u);
    EXPECT_EQ(first.computed, 1);
    EvalReport r = ev.run_pipeline(req);
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_EQ(references_of(r), (std::vector<std::string>{"correctness_small:cached",
                                                          "correctness_small:computed"}));
    w.first_case = 5;  // past the end: nothing
    WarmReport none = ev.warm(w);
    EXPECT_EQ(none.computed + none.cached, 0);
    EXPECT_TRUE(none.error.empty()) << none.error;
}

// A warm-up that fails is reported; the evaluation after it runs as without it.
TEST(EvalWarmUp, AFailedWarmUpIsReportedAndTheEvaluationRuns) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator ev(**device);
    EvalRequest req = request_for("row_sum_f32", EvalTier::kFull);
    WarmRequest w = warm_request_for(req);
    w.program_text = "program nonsense";  // no small shape can be chosen for it
    WarmReport failed = ev.warm(w);
    EXPECT_NE(failed.error.find("correctness_small"), std::string::npos) << failed.error;
    EXPECT_EQ(failed.computed, 0);
    InProcessEvaluator cold(**device);
    expect_same_results(cold.run_pipeline(req), ev.run_pipeline(req));
}

// Through the worker: the warm task fills the worker's cache, which its evaluate tasks share.
TEST(SupervisedEvaluatorWarmUp, TheWorkersFullTierFindsTheWarmedCases) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator local(**device);
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 120);
    EvalRequest req = request_for("row_sum_f32", EvalTier::kFull);
    WarmRequest w = warm_request_for(req);
    w.max_cases = 4;
    WarmReport part = remote.warm(w);
    EXPECT_TRUE(part.error.empty()) << part.error;
    EXPECT_EQ(part.cases_total, 7u);
    EXPECT_EQ(part.computed, 4);
    w.first_case = 4;
    w.max_cases = UINT64_MAX;
    WarmReport rest = remote.warm(w);
    EXPECT_EQ(rest.computed, 3) << rest.error;
    EXPECT_GT(rest.wall_ms, 0);
    EvalReport r = remote.run_pipeline(req);
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    std::vector<std::string> refs = references_of(r);
    EXPECT_EQ(refs.size(), 7u);
    for (const std::string& x : refs) EXPECT_NE(x.find(":cached"), std::string::npos) << x;
    expect_same_results(local.run_pipeline(req), r);
    EXPECT_EQ(s.stats().workers_started, 1);
    EXPECT_EQ(s.stats().crashes, 0);
}

// A warm task that fails in the worker, or that the worker rejects as malformed, is an error
// in the report; the worker stays and the next evaluation passes.
TEST(SupervisedEvaluatorWarmUp, AWarmUpErrorIsReportedAndTheWorkerServesOn) {
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 120);
    EvalRequest req = request_for("row_sum_f32", EvalTier::kFull);
    WarmRequest w = warm_request_for(req);
    w.program_text = "program nonsense";
    WarmReport failed = remote.warm(w);
    EXPECT_NE(failed.error.find("correctness_small"), std::string::npos) << failed.error;
    auto malformed = s.warm(nlohmann::json{{"problem", 3}});
    ASSERT_FALSE(malformed.ok());
    EXPECT_NE(malformed.error().to_string().find("payload.problem"), std::string::npos)
        << malformed.error().to_string();
    EvalReport r = remote.run_pipeline(req);
    EXPECT_EQ(r.status, EvalStatus::kPassed) << r.message;
    for (const std::string& x : references_of(r))
        EXPECT_NE(x.find(":computed"), std::string::npos) << x;
    EXPECT_EQ(s.stats().workers_started, 1);
}

// An evaluator that keeps no cases says so; a worker that cannot start is an error too.
TEST(SupervisedEvaluatorWarmUp, NoWorkerNoWarmUp) {
    SupervisorOptions o;
    o.worker_argv = {"/nonexistent/kforge", "worker"};
    o.start_timeout_s = 5;
    Supervisor s(o);
    SupervisedEvaluator remote(s, 5);
    WarmReport r = remote.warm(warm_request_for(request_for("row_sum_f32", EvalTier::kFull)));
    EXPECT_NE(r.error.find("worker"), std::string::npos) << r.error;
}

TEST(EvalWarmUp, RequestAndReportRoundTripThroughJson) {
    WarmRequest w = warm_request_for(request_for("row_sum_f32", EvalTier::kQuick));
    w.seed = 9;
    w.first_case = 2;
    w.max_cases = 3;
    auto back = warm_request_from_json(nlohmann::json::parse(to_json(w).dump()));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->program_text, w.program_text);
    EXPECT_EQ(back->problem.dims, w.problem.dims);
    EXPECT_EQ(back->seed, 9u);
    EXPECT_EQ(back->tier, EvalTier::kQuick);
    EXPECT_EQ(back->first_case, 2u);
    EXPECT_EQ(back->max_cases, 3u);
    nlohmann::json bad = to_json(w);
    bad["first_case"] = -1;
    auto rejected = warm_request_from_json(bad);
    ASSERT_FALSE(rejected.ok());
    EXPECT_NE(rejected.error().to_string().find("payload.first_case"), std::string::npos);
    WarmReport rep;
    rep.cases_total = 7;
    rep.computed = 2;
    rep.cached = 1;
    rep.error = "x";
    auto rb = warm_report_from_json(nlohmann::json::parse(to_json(rep).dump()));
    ASSERT_TRUE(rb.ok());
    EXPECT_EQ(rb->cases_total, 7u);
    EXPECT_EQ(rb->computed, 2);
    EXPECT_EQ(rb->error, "x");
    EXPECT_FALSE(warm_report_from_json(nlohmann::json{{"cases_total", "7"}}).ok());
}

}  // namespace
}  // namespace kforge::eval
