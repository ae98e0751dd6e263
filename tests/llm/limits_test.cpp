// The LLM path against a hostile or broken provider, over a real loopback HTTP server: an error
// body that echoes the key the request carried (401, 400, 500; OpenAI's Authorization header and
// Anthropic's x-api-key) leaves no key in the client's errors, the proposer's messages or the
// store's llm_requests rows; a reply streamed far past max_reply_bytes is an error for that
// request, read only up to the cap (bytes taken from the server and memory stay bounded),
// recorded cut, and the proposer goes on; a request over max_request_bytes is not sent.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <optional>
#include <string>

#include "fake_server.h"
#include "llm/client.h"
#include "llm/proposer.h"
#include "problem/spec.h"
#include "store/store.h"

namespace kforge::llm {
namespace {

using testing::FakeLlmServer;
using testing::Scripted;

// Not an sk- shape: only the configured value can find it.
const std::string kKey = "kf-live-7Hq2ZpX9wLmN4c";

LlmConfig config(const FakeLlmServer& server, Provider p = Provider::kOpenAi) {
    LlmConfig c;
    c.provider = p;
    c.base_url = server.base_url();
    c.model = "test-model";
    c.api_key_env = "KFORGE_TEST_KEY";
    c.timeout_s = 20.0;
    c.max_retries = 1;
    c.retry_base_s = 0.01;
    return c;
}

ChatRequest hello() { return ChatRequest{{{"system", "be brief"}, {"user", "hello"}}}; }

std::string echoing(const char* header) {
    return std::string(R"({"error":{"message":"Incorrect API key provided: )") + header +
           R"(. You can find your API key at https://example.invalid/keys."}})";
}

TEST(LlmSecrets, KeyEchoedInErrorBodiesNeverLeavesTheClient) {
    struct Case {
        int status;
        Provider provider;
        const char* echo;
    };
    for (const Case& k : {Case{401, Provider::kOpenAi, testing::kEchoAuthorization},
                          Case{400, Provider::kOpenAi, testing::kEchoAuthorization},
                          Case{500, Provider::kOpenAi, testing::kEchoAuthorization},
                          Case{401, Provider::kAnthropic, testing::kEchoApiKey},
                          Case{429, Provider::kAnthropic, testing::kEchoApiKey}}) {
        FakeLlmServer server;
        for (int i = 0; i < 3; ++i) server.push({k.status, echoing(k.echo), "0"});
        LlmConfig c = config(server, k.provider);
        auto out = make_http_chat_client(c, kKey)->chat(hello());
        ASSERT_FALSE(out.ok());
        const std::string text = out.error.to_string();
        EXPECT_EQ(text.find(kKey), std::string::npos) << k.status << ": " << text;
        EXPECT_EQ(text.find("7Hq2ZpX9"), std::string::npos) << text;
        EXPECT_NE(text.find("[REDACTED]"), std::string::npos) << text;
        // the server did get the key: the echo was real
        ASSERT_FALSE(server.received().empty());
        const auto got = server.received().front();
        EXPECT_NE((got.authorization + got.api_key).find(kKey), std::string::npos);
    }
}

TEST(LlmSecrets, ProviderMessagesAreCut) {
    FakeLlmServer server;
    server.push({400, R"({"error":{"message":")" + std::string(100000, 'x') + R"("}})"});
    auto out = make_http_chat_client(config(server), kKey)->chat(hello());
    ASSERT_FALSE(out.ok());
    EXPECT_LT(out.error.to_string().size(), kMaxErrorMessageBytes + 500);
}

class LlmLimitsProposer : public ::testing::Test {
protected:
    void SetUp() override {
        auto p = load_problem(KFORGE_SOURCE_DIR "/problems/linear_bias_gelu_tanh_bf16.json");
        ASSERT_TRUE(p.ok()) << p.error().to_string();
        problem_ = std::move(*p);
        context_.problem = &problem_;
        context_.problem_spec_json = problem_to_json(problem_).dump(2);
        context_.count = 1;
        auto s = Store::open(":memory:");
        ASSERT_TRUE(s.ok()) << s.error().to_string();
        store_.emplace(std::move(*s));
    }

    std::string all_rows() {
        auto rows = store_->db().query_text(
            "SELECT group_concat(provider || model || request_hash || prompt || reply, '|') "
            "FROM llm_requests");
        return rows.ok() ? *rows : "";
    }

    Problem problem_;
    search::ProposalContext context_;
    std::optional<Store> store_;
};

TEST_F(LlmLimitsProposer, StoredRowsAndMessagesHoldNoKey) {
    FakeLlmServer server;
    server.push({500, echoing(testing::kEchoAuthorization)});
    server.push({500, echoing(testing::kEchoAuthorization)});
    server.push({401, echoing(testing::kEchoAuthorization)});
    LlmProposerOptions options;
    options.store = &*store_;
    auto proposer = make_llm_proposer(config(server), kKey, options);
    EXPECT_TRUE(proposer->propose(context_).empty());  // 500 twice: transient
    EXPECT_EQ(proposer->last_error().find(kKey), std::string::npos) << proposer->last_error();
    EXPECT_TRUE(proposer->propose(context_).empty());  // 401: fatal
    EXPECT_TRUE(proposer->exhausted());
    EXPECT_EQ(proposer->exhausted_reason().find(kKey), std::string::npos);
    EXPECT_EQ(proposer->last_error().find(kKey), std::string::npos);
    const std::string rows = all_rows();
    EXPECT_NE(rows.find("Incorrect API key"), std::string::npos) << rows;  // the rows are there
    EXPECT_EQ(rows.find(kKey), std::string::npos) << rows;
    EXPECT_EQ(rows.find("7Hq2ZpX9"), std::string::npos) << rows;
}

long max_rss_kb() {
    rusage u{};
    getrusage(RUSAGE_SELF, &u);
    return u.ru_maxrss;
}

TEST_F(LlmLimitsProposer, OversizedReplyIsAnErrorReadOnlyToTheCap) {
    FakeLlmServer server;
    const size_t huge = size_t{512} << 20;  // 512 MiB offered
    Scripted big;
    big.stream_bytes = huge;
    server.push(big);
    server.push({200, testing::openai_reply("No program this time.", 10, 5)});
    LlmConfig c = config(server);
    c.max_reply_bytes = 1 << 20;
    c.repair_rounds = 0;
    LlmProposerOptions options;
    options.store = &*store_;
    auto proposer = make_llm_proposer(c, kKey, options);
    const long rss_before = max_rss_kb();
    EXPECT_TRUE(proposer->propose(context_).empty());
    const long rss_growth_mb = (max_rss_kb() - rss_before) / 1024;
    EXPECT_NE(proposer->last_error().find("reply_too_large"), std::string::npos)
        << proposer->last_error();
    EXPECT_LT(server.bytes_streamed(), size_t{64} << 20) << "the client read past the cap";
    EXPECT_LT(rss_growth_mb, 64) << "memory grew with the reply";
    EXPECT_EQ(server.hits(), 1);  // not retried
    auto row = store_->db().query_text("SELECT reply FROM llm_requests ORDER BY id LIMIT 1");
    ASSERT_TRUE(row.ok());
    EXPECT_NE(row->find("reply_too_large"), std::string::npos);
    EXPECT_NE(row->find("aaaa"), std::string::npos);  // recorded cut, not dropped
    EXPECT_LT(row->size(), size_t{16} << 10);
    // the search goes on: the next request is sent and answered
    EXPECT_FALSE(proposer->exhausted());
    EXPECT_TRUE(proposer->propose(context_).empty());
    EXPECT_EQ(server.hits(), 2);
    EXPECT_EQ(proposer->usage().requests, 1);
}

TEST(LlmLimits, RequestOverTheCapIsNotSent) {
    FakeLlmServer server;
    LlmConfig c = config(server);
    c.max_request_bytes = 4096;
    ChatRequest big{{{"user", std::string(10000, 'q')}}};
    auto out = make_http_chat_client(c, kKey)->chat(big);
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.kind, ChatErrorKind::kRequestTooLarge);
    EXPECT_FALSE(is_fatal(out.kind));
    EXPECT_EQ(server.hits(), 0);
    server.push({200, testing::openai_reply("ok", 3, 1)});
    auto small = make_http_chat_client(c, kKey)->chat(hello());
    EXPECT_TRUE(small.ok());
    EXPECT_EQ(server.hits(), 1);
}

}  // namespace
}  // namespace kforge::llm
