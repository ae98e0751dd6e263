// --budget-compiles counts compiles, not evaluations (issue 27): a compile is charged once per
// compile configuration (search/knob_space.h), so a launch-knob variant of a compiled program and
// a program's second tier cost none; once the budget is spent, only programs that need no
// compile are evaluated, and the run stops when none is left. On the simulated device (it
// compiles nothing, but charges what a GPU would compile).
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "dsl/printer.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "search/loop.h"
#include "search/proposers.h"

namespace kforge::search {
namespace {

// gemm_large_k_bf16 at M = N = 128, K = 512 (a cheap fp64 reference), from its suite program
// (cooperative splitk 2: split factors, stream-K, raster and swizzle are launch knobs).
struct GemmRun {
    std::unique_ptr<eval::Device> device;
    std::optional<Store> store;
    std::optional<SearchState> st;
    Spent spent;

    void run(SearchOptions o) {
        const std::string base = std::string(KFORGE_SOURCE_DIR) + "/problems/gemm_large_k_bf16";
        auto spec = load_problem(base + ".json");
        ASSERT_TRUE(spec) << spec.error().to_string();
        nlohmann::json j = nlohmann::json::parse(problem_to_json(*spec).dump());
        j["dims"] = {{"M", 128}, {"N", 128}, {"K", 512}};
        auto problem = parse_problem(j.dump(), "gemm_large_k_small");
        ASSERT_TRUE(problem) << problem.error().to_string();
        std::ifstream in(base + ".kf");
        std::stringstream text;
        text << in.rdbuf();
        auto d = eval::make_sim_device("h200");
        auto s = open_store(":memory:");
        ASSERT_TRUE(d && s);
        device = std::move(*d);
        store.emplace(std::move(*s));
        auto started = start_search(*device, *store, *problem, text.str(), o);
        ASSERT_TRUE(started) << started.error().to_string();
        st.emplace(std::move(*started));
        auto param = make_parameter_proposer();
        ASSERT_TRUE(run_search(*st, *device, *store, {param.get()}, o, spent));
    }
    // The compile configurations of the candidates that were evaluated (reached the compile).
    std::set<std::string> evaluated_configurations(int& evaluated) const {
        std::set<std::string> out;
        evaluated = 0;
        for (const auto& [h, c] : st->candidates)
            if (c.evaluated && c.status != EvalStatus::kInvalidProgram && c.program) {
                ++evaluated;
                out.insert(compile_configuration_key(*c.program));
            }
        return out;
    }
};

TEST(CompileBudget, FreeVariantsAreEvaluatedAndTheRunStopsAtItsCompiles) {
    SearchOptions o;
    o.budget.compiles = 2;
    o.stop.max_rounds = 40;
    o.proposals_per_round = 3;
    GemmRun r;
    r.run(o);
    ASSERT_TRUE(r.st);
    int evaluated = 0;
    const std::set<std::string> configurations = r.evaluated_configurations(evaluated);
    EXPECT_EQ(r.spent.compiles, 2) << r.st->stop_reason;
    EXPECT_EQ(r.st->counts.compiles, 2);
    EXPECT_EQ(configurations.size(), 2u) << "every evaluated program is one of the two compiles";
    EXPECT_GT(evaluated, 2) << "free variants were evaluated besides the two compiles";
    EXPECT_EQ(r.st->counts.free, evaluated - 2);
    EXPECT_NE(r.st->stop_reason.find("compile budget spent (2 of 2)"), std::string::npos)
        << r.st->stop_reason;
    // the summary says compiles and evaluations apart
    auto summary = write_outputs(*r.st, *r.store, "");
    ASSERT_TRUE(summary) << summary.error().to_string();
    EXPECT_NE(summary->find(" 2 compiled, " + std::to_string(evaluated - 2) + " free"),
              std::string::npos)
        << *summary;
}

// Without a compile budget nothing changes but the counting: a program's quick and full tiers
// are one compile, not two.
TEST(CompileBudget, AProgramsTiersAreOneCompile) {
    SearchOptions o;
    o.stop.max_rounds = 2;
    o.proposals_per_round = 4;
    GemmRun r;
    r.run(o);
    ASSERT_TRUE(r.st);
    int evaluated = 0;
    const std::set<std::string> configurations = r.evaluated_configurations(evaluated);
    EXPECT_GT(r.st->counts.full, 0);
    EXPECT_EQ(r.spent.compiles, static_cast<int64_t>(configurations.size()));
    EXPECT_EQ(r.st->counts.compiles + r.st->counts.free, evaluated);
    EXPECT_LT(r.spent.compiles, r.st->counts.quick + r.st->counts.full);
}

// Free rounds first: the first search round of a GEMM times launch-knob variants of the start
// only (no compile wave); the programs that need a compile wait in `pending` until a round stops
// improving the best.
TEST(CompileBudget, AFreeRoundWaitsForNoCompile) {
    SearchOptions o;
    o.stop.max_rounds = 2;  // the start's round and one search round
    o.proposals_per_round = 8;
    GemmRun r;
    r.run(o);
    ASSERT_TRUE(r.st);
    EXPECT_EQ(r.st->progress.rounds, 2);
    EXPECT_EQ(r.st->counts.compiles, 1) << "only the start compiled";
    EXPECT_GE(r.st->counts.free, 4);
    int waiting = 0;
    for (const std::string& h : r.st->pending) {
        const CandidateState& c = r.st->candidates.at(h);
        EXPECT_FALSE(c.evaluated);
        waiting += c.program && !is_free_move(*r.st->candidates.at(r.st->start_hash).program,
                                              *c.program);
    }
    EXPECT_GT(waiting, 0) << "the parameter proposer's moves that need a compile wait";
}

}  // namespace
}  // namespace kforge::search
