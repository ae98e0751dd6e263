// The evaluator abstraction: the supervised evaluator (a `kforge worker --device sim` process)
// gives the in-process evaluator's reports, survives candidates that abort or stall the worker
// (SimFault kProcessCrash / kProcessHang), and carries a whole search with such candidates in
// it to the end; interleaved and repeated timing through the worker.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "eval/evaluator.h"
#include "eval/session.h"
#include "problem/spec.h"
#include "search/loop.h"
#include "search/proposers.h"
#include "tests/eval/eval_fixture.h"
#include "worker/supervised_evaluator.h"

namespace kforge::eval {
namespace {

using testing::find_gate;
using testing::request_for;
using testing::sim_worker;

TEST(SupervisedEvaluator, GivesTheInProcessReport) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator local(**device);
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 120);
    EvalRequest req = request_for("row_sum_f32");
    EvalReport a = evaluate(local, req);
    EvalReport b = evaluate(remote, req);
    ASSERT_EQ(b.status, EvalStatus::kPassed) << b.message;
    EXPECT_EQ(a.program_hash, b.program_hash);
    ASSERT_EQ(a.gates.size(), b.gates.size());
    for (size_t i = 0; i < a.gates.size(); ++i) EXPECT_EQ(a.gates[i].gate, b.gates[i].gate);
    EXPECT_EQ(a.samples.size(), b.samples.size());
    EXPECT_DOUBLE_EQ(a.stats.median_ns, b.stats.median_ns);  // the model is deterministic
    EXPECT_FALSE(b.plan_json.empty());                        // artefacts come back too
    EXPECT_GT(b.wall_ms, 0);
    ASSERT_TRUE(remote.device_info().ok());
    EXPECT_TRUE(remote.device_info()->simulated);
}

// The per-kernel times and what each kernel computes cross the worker protocol (the result's
// report JSON) as the in-process evaluator makes them: a two-kernel suite program.
TEST(SupervisedEvaluator, CarriesPerKernelTimesAndKernels) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    InProcessEvaluator local(**device);
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 120);
    // the suite's own two-kernel program (gemm + row-wise softmax)
    EvalRequest req = testing::request_for_suite_program("linear_softmax_bf16");
    EvalReport a = evaluate(local, req);
    EvalReport b = evaluate(remote, req);
    ASSERT_EQ(b.status, EvalStatus::kPassed) << b.message;
    ASSERT_EQ(b.kernel_times_ns.size(), 2u);
    EXPECT_EQ(b.kernel_times_ns, a.kernel_times_ns);
    ASSERT_EQ(b.kernels.size(), 2u);
    for (size_t k = 0; k < 2; ++k) {
        EXPECT_EQ(b.kernels[k].name, a.kernels[k].name);
        EXPECT_EQ(b.kernels[k].kind, a.kernels[k].kind);
        EXPECT_EQ(b.kernels[k].ops, a.kernels[k].ops);
        EXPECT_EQ(b.kernels[k].stores, a.kernels[k].stores);
    }
}

TEST(SupervisedEvaluator, AWorkerThatDiesOrStallsIsAResultAndTheNextCandidatePasses) {
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 5);
    EvalRequest req = request_for("row_sum_f32");
    req.sim_fault = SimFault::kProcessCrash;
    EvalReport crashed = evaluate(remote, req);
    EXPECT_EQ(crashed.status, EvalStatus::kCrashed) << crashed.message;
    ASSERT_NE(find_gate(crashed, "worker"), nullptr);
    EXPECT_NE(crashed.message.find("died"), std::string::npos) << crashed.message;
    EXPECT_FALSE(crashed.environment_error);
    req.sim_fault = SimFault::kNone;
    EXPECT_EQ(evaluate(remote, req).status, EvalStatus::kPassed);
    req.sim_fault = SimFault::kProcessHang;
    auto t0 = std::chrono::steady_clock::now();
    EvalReport hung = evaluate(remote, req);
    EXPECT_EQ(hung.status, EvalStatus::kTimedOut) << hung.message;
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(30));
    req.sim_fault = SimFault::kNone;
    EXPECT_EQ(evaluate(remote, req).status, EvalStatus::kPassed);
    EXPECT_EQ(s.stats().crashes, 1);
    EXPECT_EQ(s.stats().timeouts, 1);
    EXPECT_EQ(s.stats().workers_started, 3);
}

TEST(SupervisedEvaluator, AWorkerThatCannotStartIsAnEnvironmentError) {
    SupervisorOptions o;
    o.worker_argv = {"/nonexistent/kforge", "worker"};
    o.start_timeout_s = 5;
    Supervisor s(o);
    SupervisedEvaluator remote(s, 5);
    EvalReport r = evaluate(remote, request_for("row_sum_f32"));
    EXPECT_TRUE(r.environment_error);
    EXPECT_NE(r.status, EvalStatus::kPassed);
}

TEST(SupervisedEvaluator, RepeatedAndInterleavedTimingInOneSession) {
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 120);
    EvalRequest req = request_for("row_sum_f32");
    SessionCandidate a{"a.kf", req.program_text, req.program_file};
    SessionCandidate b = a;
    b.label = "b.kf";
    SessionOptions o;
    o.interleave = true;
    o.repeat = 3;
    SessionResult r = run_session(remote, req.problem, {a, b}, o);
    ASSERT_EQ(r.reports.size(), 2u);
    for (const EvalReport& e : r.reports) EXPECT_EQ(e.status, EvalStatus::kPassed) << e.message;
    ASSERT_TRUE(r.timing);
    EXPECT_EQ(r.timing->status, EvalStatus::kPassed) << r.timing->message;
    ASSERT_EQ(r.timing->programs.size(), 2u);
    for (const TimedProgram& p : r.timing->programs) {
        ASSERT_EQ(p.repetitions.size(), 3u);
        for (const TimedRepetition& rep : p.repetitions) EXPECT_EQ(rep.samples.size(), 100u);
        EXPECT_EQ(repeat_summary(p).medians_ns.size(), 3u);
    }
    EXPECT_EQ(r.timing->protocol.iterations, 100);  // the full tier's protocol
    EXPECT_EQ(r.timing->inputs, "X normal") << "the timing inputs, back across the protocol";
    EXPECT_EQ(s.stats().workers_started, 1);
    auto j = to_json(r);
    EXPECT_TRUE(j["timing"]["programs"][0].contains("spread"));
}

// Forwards to another evaluator, injecting process faults into the first quick evaluations of
// proposed candidates (not the start program), one fault per candidate, in order.
class FaultInjecting final : public Evaluator {
public:
    FaultInjecting(Evaluator& inner, std::string start, std::vector<SimFault> faults)
        : inner_(inner), start_(std::move(start)), faults_(std::move(faults)) {}
    Expected<DeviceInfo> device_info() override { return inner_.device_info(); }
    EvalReport run_pipeline(const EvalRequest& request) override {
        EvalRequest r = request;
        if (r.tier == EvalTier::kQuick && r.program_text != start_ && next_ < faults_.size())
            r.sim_fault = faults_[next_++];
        return inner_.run_pipeline(r);
    }
    TimeReport time(const TimeRequest& request) override { return inner_.time(request); }

private:
    Evaluator& inner_;
    std::string start_;
    std::vector<SimFault> faults_;
    size_t next_ = 0;
};

TEST(SupervisedEvaluator, ASearchSurvivesCandidatesThatKillOrHangTheWorker) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json");
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["dims"] = {{"R", 256}, {"C", 1024}};
    auto problem = parse_problem(j.dump(), "bias_gelu_mul_f32");
    ASSERT_TRUE(problem.ok());
    std::string start =
        "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
        "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n";
    auto store = open_store(":memory:");
    ASSERT_TRUE(store.ok());
    Supervisor s(sim_worker());
    SupervisedEvaluator remote(s, 5);
    search::SearchOptions o;
    o.stop.max_rounds = 4;
    o.proposals_per_round = 8;
    o.promote_ratio = 0.5;
    auto st = search::start_search(remote, *store, *problem, start, o);
    ASSERT_TRUE(st.ok()) << st.error().to_string();
    FaultInjecting evaluator(remote, st->candidates.at(st->start_hash).text,
                             {SimFault::kProcessCrash, SimFault::kProcessHang});
    auto param = search::make_parameter_proposer();
    search::Spent spent;
    ASSERT_TRUE(search::run_search(*st, evaluator, *store, {param.get()}, o, spent));
    std::map<EvalStatus, int> statuses;
    for (const auto& [hash, c] : st->candidates)
        if (c.evaluated) ++statuses[c.status];
    for (const auto& [status, n] : statuses) std::printf("%s: %d\n", to_string(status).data(), n);
    EXPECT_EQ(statuses[EvalStatus::kCrashed], 1);
    EXPECT_EQ(statuses[EvalStatus::kTimedOut], 1);
    EXPECT_GE(statuses[EvalStatus::kPassed], 2);  // candidates after the faults still ran
    EXPECT_TRUE(search::best_time_ns(*st));
    EXPECT_EQ(s.stats().workers_started, 3);  // the first, after the crash, after the hang
    EXPECT_EQ(st->progress.rounds, 4);
    EXPECT_EQ(s.stats().crashes, 1);
    EXPECT_EQ(s.stats().timeouts, 1);
}

}  // namespace
}  // namespace kforge::eval
