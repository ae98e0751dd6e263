// search/suite.h on the simulated device with two tiny problems: every problem gets rounds under
// the shared budget, a problem never searched comes first, each ends with a stop reason, and a
// suite whose proposers have nothing to propose stops each problem once a round adds nothing.
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <sstream>

#include <nlohmann/json.hpp>

#include "device/device.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "search/proposers.h"
#include "search/suite.h"

namespace kforge::search {
namespace {

struct Case {
    std::string problem;
    std::string start;
};

const Case kCases[] = {
    {"bias_gelu_mul_f32",
     "program p for \"bias_gelu_mul_f32\"\nkernel k0 = map(X[R,C]) block 64 vec 1 items 1\n"
     "    { add b[C]; gelu erf; mul G[R,C]; store Y[R,C] }\n"},
    {"layer_norm_f32",
     "program p for \"layer_norm_f32\"\nkernel k0 = rowwise layer_norm(X[R,C], w[C], b[C]) "
     "rows_per_block 1 threads 512 vec 1 passes 2 split 1\n    { store Y[R,C] }\n"},
};

// The suite problem at a small shape (R=256, C=1024), so the fp64 reference stays cheap.
Problem load(const std::string& name) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["dims"] = {{"R", 256}, {"C", 1024}};
    auto p = parse_problem(j.dump(), name);
    EXPECT_TRUE(p) << p.error().to_string();
    return *p;
}

class SuiteLoop : public ::testing::Test {
protected:
    void SetUp() override {
        auto device = eval::make_sim_device("h200");
        ASSERT_TRUE(device) << device.error().to_string();
        device_ = std::move(*device);
        evaluator_ = std::make_unique<eval::InProcessEvaluator>(*device_);
        auto store = open_store(":memory:");
        ASSERT_TRUE(store);
        store_.emplace(std::move(*store));
    }
    std::vector<SearchState> start(const SearchOptions& o) {
        std::vector<SearchState> states;
        for (const Case& c : kCases) {
            auto st = start_search(*evaluator_, *store_, load(c.problem), c.start, o);
            EXPECT_TRUE(st) << st.error().to_string();
            if (st) states.push_back(std::move(*st));
        }
        return states;
    }
    std::unique_ptr<eval::Device> device_;
    std::unique_ptr<eval::Evaluator> evaluator_;
    std::optional<Store> store_;
};

TEST_F(SuiteLoop, EveryProblemGetsRoundsUnderTheSharedBudget) {
    SearchOptions o;
    o.stop.max_rounds = 3;
    o.proposals_per_round = 4;
    o.suite = "tiny";
    auto states = start(o);
    ASSERT_EQ(states.size(), 2u);
    auto param = make_parameter_proposer();
    std::vector<std::string> order;
    int before = 0;
    SuiteHooks hooks;
    hooks.before_round = [&before](SearchState&) { ++before; };
    hooks.after_round = [&order](const SearchState& s, const Spent& spent) {
        order.push_back(s.problem.name);
        EXPECT_GT(spent.wall_s, 0.0);
    };
    Spent spent;
    auto ran = run_suite(states, *evaluator_, *store_, {param.get()}, o, spent, hooks);
    ASSERT_TRUE(ran) << ran.error().to_string();
    ASSERT_GE(order.size(), 2u);
    EXPECT_EQ(before, static_cast<int>(order.size()));
    // neither problem had a search round: the first two rounds go one to each
    EXPECT_NE(order[0], order[1]);
    std::map<std::string, int> rounds;
    for (const std::string& n : order) ++rounds[n];
    for (const SearchState& s : states) {
        EXPECT_FALSE(s.stop_reason.empty()) << s.problem.name;
        EXPECT_GE(rounds[s.problem.name], 1) << s.problem.name;
        EXPECT_LE(s.progress.rounds, 3) << s.problem.name;
        EXPECT_TRUE(best_hash(s).has_value()) << s.problem.name;
    }
}

TEST_F(SuiteLoop, NothingToProposeEndsEachProblem) {
    SearchOptions o;
    o.stop.max_rounds = 5;
    o.proposers = {};
    auto states = start(o);
    ASSERT_EQ(states.size(), 2u);
    int rounds = 0;
    std::vector<std::string> passed_over;
    SuiteHooks hooks;
    hooks.after_round = [&rounds](const SearchState&, const Spent&) { ++rounds; };
    hooks.passed_over = [&passed_over](const std::string& r) { passed_over.push_back(r); };
    Spent spent;
    auto ran = run_suite(states, *evaluator_, *store_, {}, o, spent, hooks);
    ASSERT_TRUE(ran) << ran.error().to_string();
    // each problem: at most the round that finishes timing its start, then one empty round
    EXPECT_GE(rounds, 2);
    EXPECT_LE(rounds, 4);
    for (const SearchState& s : states)
        EXPECT_EQ(s.stop_reason, "the proposers have nothing new to propose") << s.problem.name;
}

}  // namespace
}  // namespace kforge::search
