// `kforge optimize --llm CONFIG` end to end through the binary, on the simulated device, against
// the scripted loopback server: the LLM's programs enter the lineage with proposer "llm:<model>",
// the program the checker rejects goes back in a repair turn whose reply is used too, every
// request is recorded in the store; a rerun with the reply cache and no server replays the same
// candidates; a dead endpoint (nothing listening, or a refused key) leaves the run to the built-in
// proposers, which it says; the LLM budgets of the command line are checked.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <string>

#include "fake_server.h"
#include "store/store.h"
#include "tests/cli_run.h"

namespace kforge::llm {
namespace {

using testing::FakeLlmServer;
namespace fs = std::filesystem;

using kforge::test::CliRun;
using kforge::test::run_cli;

const char* kProblem = "softmax_short_rows_f32";

// The suite program with other knobs (both legal), and one the checker must reject (it stores a
// tensor the problem does not have).
std::string program(const std::string& knobs, const std::string& out = "Y") {
    return std::string("program p for \"") + kProblem + "\"\nkernel k0 = rowwise softmax(X[R,C]) " +
           knobs + "\n    { store " + out + "[R,C] }\n";
}
std::string fenced(const std::string& rationale, const std::string& text) {
    return "Rationale: " + rationale + "\n```kforge\n" + text + "```\n\n";
}

class OptimizeLlm : public ::testing::Test {
protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() /
               ("kforge_optimize_llm_" + std::to_string(::getpid()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
        const fs::path src = fs::path(KFORGE_SOURCE_DIR) / "problems";
        for (const char* ext : {".json", ".kf"})
            fs::copy_file(src / (std::string(kProblem) + ext), dir_ / (std::string(kProblem) + ext));
        spec_ = (dir_ / (std::string(kProblem) + ".json")).string();
    }
    void TearDown() override {
        if (!HasFailure()) fs::remove_all(dir_);
    }
    std::string config(const std::string& name, const std::string& base_url,
                       const std::string& extra = "") {
        const fs::path p = dir_ / (name + ".json");
        std::ofstream(p) << R"({"provider": "openai", "base_url": ")" << base_url
                         << R"(", "model": "scripted", "timeout_s": 5, "max_retries": 0,
                              "price_in": 1, "price_out": 2)" << extra << "}";
        return p.string();
    }
    CliRun optimize(const std::string& config_path, const std::string& name,
                    const std::string& extra = "") {
        return run_cli("optimize " + spec_ + " --device sim --rounds 2 --profile-top 0 --llm " +
                       config_path + " --db " + (dir_ / (name + ".db")).string() + " --out " +
                       (dir_ / name).string() + " " + extra);
    }
    // The LLM's candidates of the run: canonical text, move; and the request count.
    struct Lineage {
        std::set<std::string> llm_programs;
        std::set<std::string> llm_moves;
        std::string requests;  // "count:sum(tokens_in)"
    };
    Lineage lineage(const std::string& name, const CliRun& r) {
        Lineage l;
        std::smatch m;
        EXPECT_TRUE(std::regex_search(r.out, m, std::regex("run ([0-9]+) on"))) << r.out;
        if (m.empty()) return l;
        auto store = open_store((dir_ / (name + ".db")).string());
        EXPECT_TRUE(store.ok());
        if (!store.ok()) return l;
        auto cands = store->list_candidates(std::stoll(m[1]));
        EXPECT_TRUE(cands.ok());
        for (const auto& c : cands.ok() ? *cands : std::vector<CandidateRecord>{})
            if (c.proposer.rfind("llm:", 0) == 0) {
                EXPECT_EQ(c.proposer, "llm:scripted");
                EXPECT_FALSE(c.parent_ids.empty());  // the best candidate it was shown
                l.llm_programs.insert(c.program_text);
                l.llm_moves.insert(c.move);
            }
        auto rows = store->db().query_text(
            "SELECT count(*) || ':' || coalesce(sum(tokens_in), 0) FROM llm_requests WHERE "
            "run_id = " + std::string(m[1]));
        EXPECT_TRUE(rows.ok());
        if (rows.ok()) l.requests = *rows;
        return l;
    }
    fs::path dir_;
    std::string spec_;
};

TEST_F(OptimizeLlm, CandidatesRepairRoundAndReplayFromTheCache) {
    const std::string cache = (dir_ / "replies").string();
    Lineage live;
    {
        FakeLlmServer server;
        server.push({200, testing::openai_reply(
                              fenced("fewer rows per block", program("rows_per_block 4 threads 256 vec 4")) +
                                  fenced("a second output", program("rows_per_block 8 threads 256 vec 4", "Z")),
                              900, 120)});
        server.push({200, testing::openai_reply(
                              fenced("store Y, half the threads", program("rows_per_block 8 threads 128 vec 4")),
                              1400, 60)});
        const std::string cfg =
            config("live", server.base_url(), R"(, "cache_dir": ")" + cache + R"(")");
        const CliRun r = optimize(cfg, "live");
        ASSERT_EQ(r.rc, 0) << r.out;
        EXPECT_EQ(server.hits(), 2) << r.out;
        const auto got = server.received();
        ASSERT_EQ(got.size(), 2u);
        // the repair turn carries the rejected program's checker message back
        EXPECT_NE(got[1].body.find("\"assistant\""), std::string::npos);
        EXPECT_NE(got[1].body.find("Z"), std::string::npos);
        EXPECT_NE(r.out.find("1 repair turns"), std::string::npos) << r.out;
        EXPECT_NE(r.out.find("programs 2 accepted, 1 rejected"), std::string::npos) << r.out;
        EXPECT_EQ(r.out.find("the search goes on with the built-in"), std::string::npos) << r.out;
        live = lineage("live", r);
        EXPECT_EQ(live.llm_programs.size(), 2u) << r.out;
        EXPECT_TRUE(live.llm_moves.count("llm: fewer rows per block")) << r.out;
        EXPECT_TRUE(live.llm_moves.count("llm: store Y, half the threads")) << r.out;
        EXPECT_EQ(live.requests, "2:2300");
    }
    // The server is gone; the same config (same cache) on a fresh store replays the replies.
    const std::string dead = "http://127.0.0.1:1/v1";
    const CliRun replay = optimize(
        config("replay", dead, R"(, "cache_dir": ")" + cache + R"(")"), "replay");
    ASSERT_EQ(replay.rc, 0) << replay.out;
    EXPECT_NE(replay.out.find("2 from the cache"), std::string::npos) << replay.out;
    const Lineage again = lineage("replay", replay);
    EXPECT_EQ(again.llm_programs, live.llm_programs) << replay.out;
    EXPECT_EQ(again.requests, "2:2300");
}

TEST_F(OptimizeLlm, ADeadEndpointLeavesTheRunToTheBuiltInProposers) {
    const CliRun r = optimize(config("dead", "http://127.0.0.1:1/v1"), "dead");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("LLM disabled: endpoint unreachable"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the search goes on with the built-in proposers (diagnosis, parameter)"),
              std::string::npos) << r.out;
    EXPECT_TRUE(fs::exists(dir_ / "dead" / "best.kf"));
    const Lineage l = lineage("dead", r);
    EXPECT_TRUE(l.llm_programs.empty());
    EXPECT_EQ(l.requests, "1:0");  // the failed request is recorded too

    FakeLlmServer server;
    server.push({401, R"({"error":{"message":"invalid api key"}})"});
    const CliRun refused = optimize(config("refused", server.base_url()), "refused");
    ASSERT_EQ(refused.rc, 0) << refused.out;
    EXPECT_NE(refused.out.find("LLM disabled"), std::string::npos) << refused.out;
    EXPECT_NE(refused.out.find("the search goes on with the built-in proposers"),
              std::string::npos) << refused.out;
    EXPECT_EQ(server.hits(), 1);
}

TEST_F(OptimizeLlm, BudgetsAndConfigErrors) {
    FakeLlmServer server;
    server.push({200, testing::openai_reply(
                          fenced("fewer rows", program("rows_per_block 4 threads 256 vec 4")), 900,
                          120)});
    const CliRun r = optimize(config("budget", server.base_url()), "budget", "--budget-tokens 500");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("LLM run budget spent (1020 tokens"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("the search goes on with the built-in proposers"), std::string::npos)
        << r.out;
    EXPECT_EQ(server.hits(), 1);

    const CliRun no_llm = run_cli("optimize " + spec_ + " --device sim --budget-tokens 10");
    EXPECT_EQ(no_llm.rc, 2) << no_llm.out;
    EXPECT_NE(no_llm.out.find("give --llm CONFIG"), std::string::npos) << no_llm.out;
    const CliRun missing = optimize((dir_ / "nope.json").string(), "missing");
    EXPECT_EQ(missing.rc, 2) << missing.out;
    const CliRun unset_key = optimize(
        config("key", server.base_url(), R"(, "api_key_env": "KFORGE_OPTIMIZE_TEST_UNSET")"),
        "key");
    EXPECT_EQ(unset_key.rc, 2) << unset_key.out;
    EXPECT_NE(unset_key.out.find("$KFORGE_OPTIMIZE_TEST_UNSET is not set"), std::string::npos)
        << unset_key.out;
}

// `kforge suite --llm`: one proposer for the suite, its requests recorded under each problem's run;
// each reply holds a program for both problems, and the checker keeps the one that fits.
TEST_F(OptimizeLlm, SuiteAsksTheLlmForEveryProblem) {
    fs::create_directories(dir_ / "suite");
    const fs::path src = fs::path(KFORGE_SOURCE_DIR) / "problems";
    for (const char* name : {"softmax_short_rows_f32", "row_sum_f32"})
        for (const char* ext : {".json", ".kf"})
            fs::copy_file(src / (std::string(name) + ext), dir_ / "suite" / (std::string(name) + ext));
    const std::string both =
        fenced("softmax: fewer rows", program("rows_per_block 4 threads 256 vec 4")) +
        fenced("row sum: more rows", "program q for \"row_sum_f32\"\nkernel k0 = rowwise "
                                     "sum(X[R,C]) rows_per_block 4 threads 256 vec 4\n"
                                     "    { store Y[R] }\n");
    FakeLlmServer server;
    for (int i = 0; i < 2; ++i) server.push({200, testing::openai_reply(both, 500, 100)});
    const std::string cfg = config("suite", server.base_url(), R"(, "repair_rounds": 0)");
    // the suite's start phase times every start before the rounds: one search round per
    // problem asks the LLM once for each
    const CliRun r = run_cli("suite " + (dir_ / "suite").string() + " --device sim --rounds 1 " +
                             "--profile-top 0 --llm " + cfg + " --db " +
                             (dir_ / "suite.db").string());
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_EQ(server.hits(), 2) << r.out;
    EXPECT_NE(r.out.find("llm: 2 replies"), std::string::npos) << r.out;
    auto store = open_store((dir_ / "suite.db").string());
    ASSERT_TRUE(store.ok());
    auto rows = store->db().query_text(
        "SELECT group_concat(n, ',') FROM (SELECT count(*) AS n FROM llm_requests GROUP BY run_id)");
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(*rows, "1,1");  // one request under each problem's run
    auto llm_cands = store->db().query_text(
        "SELECT count(DISTINCT run_id) FROM candidates WHERE proposer = 'llm:scripted'");
    ASSERT_TRUE(llm_cands.ok());
    EXPECT_EQ(*llm_cands, "2") << r.out;
}

}  // namespace
}  // namespace kforge::llm
