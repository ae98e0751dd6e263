// A stop request (common/stop_request.h: what SIGINT/SIGTERM set) ends the search after the
// evaluation in flight, in process on the simulated device: the evaluation that saw the request
// is the last one, state.interrupted is set with the reason, nothing else is evaluated, the
// store holds every result; resume_search takes the run up again (status back to running) and
// runs to its round limit. The progress events come in order: evaluations, then each round.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "common/stop_request.h"
#include "problem/spec.h"
#include "search/loop.h"
#include "search/proposers.h"

namespace kforge::search {
namespace {

Problem small_problem() {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/bias_gelu_mul_f32.json");
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["dims"] = {{"R", 256}, {"C", 1024}};
    auto p = parse_problem(j.dump(), "bias_gelu_mul_f32");
    EXPECT_TRUE(p) << p.error().to_string();
    return *p;
}

const char* kStart =
    "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
    "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n";

int64_t stored_evaluations(Store& store, int64_t run) {
    auto n = store.db().query_text(
        "SELECT count(*) FROM evaluations e JOIN candidates c ON c.id = e.candidate_id "
        "WHERE c.run_id = " + std::to_string(run));
    return n ? std::stoll(*n) : -1;
}

TEST(SearchStop, StopsAfterTheEvaluationInFlightAndResumes) {
    clear_stop_request();
    auto device = eval::make_sim_device("h200");
    auto store = open_store(":memory:");
    ASSERT_TRUE(device && store);
    SearchOptions o;
    o.stop.max_rounds = 3;
    o.proposals_per_round = 4;
    int evaluations = 0, rounds = 0, stop_at = -1;
    o.on_event = [&](const ProgressEvent& e) {
        if (e.kind == ProgressEvent::Kind::kRound) {
            ++rounds;
            EXPECT_EQ(e.state->progress.rounds, rounds);
            return;
        }
        if (e.kind != ProgressEvent::Kind::kEvaluation) return;
        ++evaluations;
        ASSERT_NE(e.state, nullptr);
        EXPECT_FALSE(e.hash.empty());
        // the third evaluation (in round 2, past the start's two tiers) asks for the stop
        if (evaluations == 3) {
            request_stop();
            stop_at = evaluations;
        }
    };
    auto st = start_search(**device, *store, small_problem(), kStart, o);
    ASSERT_TRUE(st) << st.error().to_string();
    auto param = make_parameter_proposer();
    std::vector<Proposer*> ps{param.get()};
    Spent spent;
    auto ran = run_search(*st, **device, *store, ps, o, spent);
    ASSERT_TRUE(ran) << ran.error().to_string();
    EXPECT_TRUE(st->interrupted);
    EXPECT_EQ(st->stop_reason, "interrupted");
    EXPECT_EQ(evaluations, stop_at) << "an evaluation ran after the stop request";
    EXPECT_EQ(stored_evaluations(*store, st->run_id), evaluations);
    EXPECT_LT(rounds, 3);
    ASSERT_TRUE(store->finish_run(st->run_id, RunStatus::kInterrupted).ok());
    clear_stop_request();

    // resume: the run is running again, pending candidates are evaluated, the limit is reached
    auto again = resume_search(**device, *store, st->run_id);
    ASSERT_TRUE(again) << again.error().to_string();
    EXPECT_EQ(store->get_run(st->run_id)->status, RunStatus::kRunning);
    SearchOptions o2;
    o2.stop.max_rounds = 2;
    o2.proposals_per_round = 4;
    Spent spent2;
    auto resumed = run_search(*again, **device, *store, ps, o2, spent2);
    ASSERT_TRUE(resumed) << resumed.error().to_string();
    EXPECT_FALSE(again->interrupted);
    EXPECT_NE(again->stop_reason.find("round limit"), std::string::npos) << again->stop_reason;
    EXPECT_GT(stored_evaluations(*store, st->run_id), evaluations);
    EXPECT_TRUE(best_hash(*again).has_value());
}

// A request that came before the search started: no round runs, nothing is evaluated.
TEST(SearchStop, ARequestBeforeTheFirstRoundEvaluatesNothing) {
    auto device = eval::make_sim_device("h200");
    auto store = open_store(":memory:");
    ASSERT_TRUE(device && store);
    SearchOptions o;
    o.stop.max_rounds = 3;
    auto st = start_search(**device, *store, small_problem(), kStart, o);
    ASSERT_TRUE(st) << st.error().to_string();
    auto param = make_parameter_proposer();
    std::vector<Proposer*> ps{param.get()};
    Spent spent;
    request_stop();
    auto ran = run_search(*st, **device, *store, ps, o, spent);
    clear_stop_request();
    ASSERT_TRUE(ran);
    EXPECT_TRUE(st->interrupted);
    EXPECT_EQ(st->progress.rounds, 0);
    EXPECT_EQ(stored_evaluations(*store, st->run_id), 0);
}

}  // namespace
}  // namespace kforge::search
