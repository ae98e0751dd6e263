// The LLM proposer end to end against a loopback server: good programs, a checker error the
// repair loop fixes on the second turn, prose, token and cost accounting, budgets, fatal
// endpoint errors, store records and the on-disk reply cache (a replay makes no HTTP request).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "fake_server.h"
#include "llm/proposer.h"
#include "problem/spec.h"
#include "store/store.h"

namespace kforge::llm {
namespace {

using testing::FakeLlmServer;
namespace fs = std::filesystem;

const char* kName = "linear_bias_gelu_tanh_bf16";

std::string program(const std::string& tile, const std::string& output = "Y") {
    return "program p for \"linear_bias_gelu_tanh_bf16\"\n"
           "kernel k0 = gemm(X[M,K], W[N,K]) tile " + tile +
           " cluster 2x1 schedule cooperative math bf16\n"
           "    { add b[N]; gelu tanh; cast bf16; store " + output + "[M,N] }\n";
}

std::string fenced(const std::string& rationale, const std::string& text) {
    return "Rationale: " + rationale + "\n```kforge\n" + text + "```\n\n";
}

class LlmProposerTest : public ::testing::Test {
protected:
    void SetUp() override {
        auto p = load_problem(KFORGE_SOURCE_DIR "/problems/linear_bias_gelu_tanh_bf16.json");
        ASSERT_TRUE(p.ok()) << p.error().to_string();
        problem_ = std::move(*p);
        context_.problem = &problem_;
        context_.problem_spec_json = problem_to_json(problem_).dump(2);
        context_.count = 2;
        cache_dir_ = fs::temp_directory_path() /
                     ("kforge_llm_cache_" + std::to_string(::getpid()) + "_" +
                      ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(cache_dir_);
    }
    void TearDown() override { fs::remove_all(cache_dir_); }

    LlmConfig config(const FakeLlmServer& server) const {
        LlmConfig c;
        c.base_url = server.base_url();
        c.model = "test-model";
        c.api_key_env = "KFORGE_TEST_KEY";
        c.timeout_s = 2.0;
        c.max_retries = 1;
        c.retry_base_s = 0.01;
        c.price_in_per_mtok = 2.0;
        c.price_out_per_mtok = 10.0;
        return c;
    }

    Problem problem_;
    search::ProposalContext context_;
    fs::path cache_dir_;
};

TEST_F(LlmProposerTest, GoodProgramsAndTheRepairLoop) {
    FakeLlmServer server;
    const std::string first = "Two programs.\n\n" + fenced("wider N tile", program("128x256x64")) +
                              fenced("store to a name", program("128x128x64", "Z"));
    server.push({200, testing::openai_reply(first, 1000, 200)});
    server.push({200, testing::openai_reply(fenced("fixed", program("128x128x64")), 1500, 100)});
    auto store = Store::open(":memory:");
    ASSERT_TRUE(store.ok());
    LlmProposer proposer(config(server), make_http_chat_client(config(server), "k"),
                         {&*store, std::nullopt});
    auto got = proposer.propose(context_);
    ASSERT_EQ(got.size(), 2u) << proposer.last_error();
    EXPECT_NE(got[0].program_text.find("tile 128x256x64"), std::string::npos);
    EXPECT_EQ(got[0].move, "llm: wider N tile");
    EXPECT_NE(got[1].program_text.find("tile 128x128x64"), std::string::npos);
    EXPECT_EQ(got[1].move, "llm: fixed");

    // The second turn carried the checker's message about the bad program back.
    auto received = server.received();
    ASSERT_EQ(received.size(), 2u);
    auto turn2 = nlohmann::json::parse(received[1].body)["messages"];
    ASSERT_EQ(turn2.size(), 4u);
    EXPECT_EQ(turn2[2]["role"], "assistant");
    const std::string repair = turn2[3]["content"];
    EXPECT_NE(repair.find("rejected 1"), std::string::npos) << repair;
    EXPECT_NE(repair.find("reply1-program2:"), std::string::npos) << repair;

    auto usage = proposer.usage();
    EXPECT_EQ(usage.requests, 2);
    EXPECT_EQ(usage.tokens_in, 2500);
    EXPECT_EQ(usage.tokens_out, 300);
    EXPECT_NEAR(usage.cost_usd, (2500 * 2.0 + 300 * 10.0) / 1e6, 1e-12);
    auto stats = proposer.stats();
    EXPECT_EQ(stats.repair_turns, 1);
    EXPECT_EQ(stats.programs_rejected, 1);
    EXPECT_EQ(stats.programs_accepted, 2);
    EXPECT_FALSE(proposer.exhausted());

    auto rows = store->db().query_text(
        "SELECT count(*) || ':' || sum(tokens_in) || ':' || sum(tokens_out) FROM llm_requests");
    ASSERT_TRUE(rows.ok());
    EXPECT_EQ(*rows, "2:2500:300");
    auto prompt = store->db().query_text("SELECT prompt FROM llm_requests ORDER BY id LIMIT 1");
    ASSERT_TRUE(prompt.ok());
    EXPECT_EQ(prompt->find("\"k\""), std::string::npos);  // the key is never stored
}

TEST_F(LlmProposerTest, ProseGetsOneFollowUpThenAProgram) {
    FakeLlmServer server;
    server.push({200, testing::openai_reply("I would try a bigger tile.", 100, 10)});
    server.push({200, testing::openai_reply(fenced("bigger", program("128x256x64")), 100, 50)});
    LlmProposer proposer(config(server), make_http_chat_client(config(server), "k"));
    context_.count = 1;
    auto got = proposer.propose(context_);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(server.hits(), 2);
}

TEST_F(LlmProposerTest, TransientFailuresGiveNoProgramsAndNoCrash) {
    FakeLlmServer server;
    server.push({200, R"({"choices":[]})"});
    server.push({200, R"({"choices":[{"message":{"content":"tr)"});
    auto c = config(server);
    c.max_retries = 0;
    LlmProposer proposer(c, make_http_chat_client(c, "k"));
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_NE(proposer.last_error().find("malformed_reply"), std::string::npos);
    EXPECT_FALSE(proposer.exhausted());  // transient: the next call may succeed
    EXPECT_EQ(proposer.usage().requests, 0);
}

TEST_F(LlmProposerTest, RefusedKeyExhaustsTheProposer) {
    FakeLlmServer server;
    server.push({401, R"({"error":{"message":"bad key"}})"});
    LlmProposer proposer(config(server), make_http_chat_client(config(server), "k"));
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_TRUE(proposer.exhausted());
    EXPECT_NE(proposer.exhausted_reason().find("$KFORGE_TEST_KEY"), std::string::npos);
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_EQ(server.hits(), 1);  // no request after a fatal error
}

TEST_F(LlmProposerTest, BudgetsPerProblemAndPerRun) {
    FakeLlmServer server;
    const std::string reply = fenced("wider", program("128x256x64"));
    for (int i = 0; i < 4; ++i) server.push({200, testing::openai_reply(reply, 80, 20)});
    auto c = config(server);
    c.budget.tokens_per_problem = 150;
    c.budget.cost_usd_per_run = (160 * 2.0 + 40 * 10.0) / 1e6 * 1.5;  // about 3 requests
    LlmProposer proposer(c, make_http_chat_client(c, "k"));
    context_.count = 1;
    EXPECT_EQ(proposer.propose(context_).size(), 1u);  // 100 tokens spent
    EXPECT_FALSE(proposer.exhausted());
    proposer.propose(context_);  // 200 >= 150
    EXPECT_TRUE(proposer.exhausted());
    EXPECT_NE(proposer.exhausted_reason().find(kName), std::string::npos);
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_EQ(server.hits(), 2);

    Problem other = problem_;  // another problem has its own budget, the run budget remains
    other.name = "other";
    context_.problem = &other;
    proposer.propose(context_);
    EXPECT_EQ(server.hits(), 3);
    EXPECT_TRUE(proposer.exhausted());  // the run's cost budget is now spent
    EXPECT_NE(proposer.exhausted_reason().find("run budget"), std::string::npos);
    EXPECT_TRUE(proposer.propose(context_).empty());
    EXPECT_EQ(server.hits(), 3);
}

TEST_F(LlmProposerTest, CacheReplaysWithoutTheNetwork) {
    FakeLlmServer server;
    const std::string bad = fenced("x", program("128x128x64", "Z"));
    server.push({200, testing::anthropic_reply(fenced("a", program("128x256x64")) + bad, 500, 90)});
    server.push({200, testing::anthropic_reply(fenced("b", program("128x128x64")), 700, 40)});
    auto c = config(server);
    c.provider = Provider::kAnthropic;
    c.cache_dir = cache_dir_.string();
    std::vector<search::Proposal> first;
    {
        LlmProposer proposer(c, make_http_chat_client(c, "k"));
        first = proposer.propose(context_);
        ASSERT_EQ(first.size(), 2u) << proposer.last_error();
        EXPECT_EQ(proposer.stats().cache_hits, 0);
    }
    ASSERT_EQ(server.hits(), 2);
    LlmProposer replay(c, make_http_chat_client(c, "k"));
    auto second = replay.propose(context_);
    EXPECT_EQ(server.hits(), 2);  // zero HTTP requests on the replay
    EXPECT_EQ(replay.stats().http_requests, 0);
    EXPECT_EQ(replay.stats().cache_hits, 2);
    ASSERT_EQ(second.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) {
        EXPECT_EQ(second[i].program_text, first[i].program_text);
    }
    EXPECT_EQ(replay.usage().tokens_in, 1200);  // charged as recorded, so budgets replay too
}

}  // namespace
}  // namespace kforge::llm
