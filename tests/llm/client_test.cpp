// The HTTP chat clients against a loopback server: both wire formats, retries (429 with
// Retry-After, 500 then success), timeouts, refused keys, unknown models, malformed replies,
// connection errors and the cap on requests in flight. Nothing may crash or hang.
#include <gtest/gtest.h>

#include <chrono>
#include <future>
#include <nlohmann/json.hpp>

#include "fake_server.h"
#include "llm/client.h"

namespace kforge::llm {
namespace {

using testing::FakeLlmServer;
using testing::Scripted;
using Clock = std::chrono::steady_clock;

LlmConfig config(const FakeLlmServer& server, Provider p = Provider::kOpenAi) {
    LlmConfig c;
    c.provider = p;
    c.base_url = server.base_url();
    c.model = "test-model";
    c.api_key_env = "KFORGE_TEST_KEY";
    c.timeout_s = 2.0;
    c.connect_timeout_s = 1.0;
    c.max_retries = 2;
    c.retry_base_s = 0.01;
    c.retry_max_s = 2.0;
    return c;
}

ChatRequest hello() { return ChatRequest{{{"system", "be brief"}, {"user", "hello"}}}; }

double seconds_since(Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
}

TEST(LlmClient, OpenAiRoundTrip) {
    FakeLlmServer server;
    server.push({200, testing::openai_reply("hi there", 11, 4)});
    auto client = make_http_chat_client(config(server), "sk-secret");
    auto out = client->chat(hello());
    ASSERT_TRUE(out.ok()) << out.error.to_string();
    EXPECT_EQ(out.reply->content, "hi there");
    EXPECT_EQ(out.reply->tokens_in, 11);
    EXPECT_EQ(out.reply->tokens_out, 4);
    EXPECT_GT(out.reply->latency_ms, 0.0);
    auto got = server.received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].path, "/v1/chat/completions");
    EXPECT_EQ(got[0].authorization, "Bearer sk-secret");
    auto body = nlohmann::json::parse(got[0].body);
    EXPECT_EQ(body["model"], "test-model");
    EXPECT_EQ(body["messages"][1]["content"], "hello");
}

TEST(LlmClient, AnthropicRoundTrip) {
    FakeLlmServer server;
    server.push({200, testing::anthropic_reply("bonjour", 9, 2)});
    auto client = make_http_chat_client(config(server, Provider::kAnthropic), "ak-secret");
    auto out = client->chat(hello());
    ASSERT_TRUE(out.ok()) << out.error.to_string();
    EXPECT_EQ(out.reply->content, "bonjour");
    EXPECT_EQ(out.reply->tokens_in, 9);
    auto got = server.received();
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(got[0].path, "/v1/messages");
    EXPECT_EQ(got[0].api_key, "ak-secret");
    EXPECT_EQ(got[0].anthropic_version, "2023-06-01");
    EXPECT_EQ(nlohmann::json::parse(got[0].body)["system"], "be brief");
}

TEST(LlmClient, RateLimitHonoursRetryAfter) {
    FakeLlmServer server;
    server.push({429, R"({"error":{"message":"slow down"}})", "1"});
    server.push({200, testing::openai_reply("ok", 1, 1)});
    auto client = make_http_chat_client(config(server), "k");
    auto start = Clock::now();
    auto out = client->chat(hello());
    ASSERT_TRUE(out.ok()) << out.error.to_string();
    EXPECT_EQ(out.attempts, 2);
    EXPECT_EQ(server.hits(), 2);
    EXPECT_GE(seconds_since(start), 0.9);  // waited the Retry-After second, not the 10 ms backoff
}

TEST(LlmClient, ServerErrorThenSuccess) {
    FakeLlmServer server;
    server.push({500, R"({"error":{"message":"overloaded"}})"});
    server.push({200, testing::openai_reply("ok", 1, 1)});
    auto out = make_http_chat_client(config(server), "k")->chat(hello());
    ASSERT_TRUE(out.ok()) << out.error.to_string();
    EXPECT_EQ(out.attempts, 2);
}

TEST(LlmClient, PersistentServerErrorGivesUpAfterRetries) {
    FakeLlmServer server;
    for (int i = 0; i < 3; ++i) server.push({503, R"({"error":{"message":"down"}})"});
    auto out = make_http_chat_client(config(server), "k")->chat(hello());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.kind, ChatErrorKind::kServer);
    EXPECT_EQ(server.hits(), 3);
    EXPECT_NE(out.error.message.find("down"), std::string::npos);
    EXPECT_FALSE(is_fatal(out.kind));
}

TEST(LlmClient, TimeoutFires) {
    FakeLlmServer server;
    server.push({200, testing::openai_reply("late", 1, 1), "", 20.0});
    auto c = config(server);
    c.timeout_s = 0.5;
    c.max_retries = 0;
    auto start = Clock::now();
    auto out = make_http_chat_client(c, "k")->chat(hello());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.kind, ChatErrorKind::kTimeout);
    EXPECT_LT(seconds_since(start), 3.0);
    EXPECT_NE(out.error.message.find("timeout"), std::string::npos);
}

TEST(LlmClient, RefusedKeyIsFatalAndNamesTheVariable) {
    FakeLlmServer server;
    server.push({401, R"({"error":{"message":"Incorrect API key"}})"});
    auto out = make_http_chat_client(config(server), "sk-secret")->chat(hello());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.kind, ChatErrorKind::kAuthentication);
    EXPECT_TRUE(is_fatal(out.kind));
    EXPECT_EQ(server.hits(), 1);  // no retries
    const std::string text = out.error.to_string();
    EXPECT_NE(text.find("the endpoint refused the key in $KFORGE_TEST_KEY"), std::string::npos);
    EXPECT_EQ(text.find("sk-secret"), std::string::npos);  // the key itself never appears
}

TEST(LlmClient, UnknownModel) {
    FakeLlmServer server;
    server.push({404, R"({"error":{"message":"The model `test-model` does not exist",
                          "code":"model_not_found"}})"});
    server.push({400, R"({"error":{"message":"no such model","code":"model_not_found"}})"});
    auto client = make_http_chat_client(config(server), "k");
    for (int i = 0; i < 2; ++i) {
        auto out = client->chat(hello());
        ASSERT_FALSE(out.ok());
        EXPECT_EQ(out.kind, ChatErrorKind::kUnknownModel);
        EXPECT_NE(out.error.message.find("unknown model \"test-model\""), std::string::npos);
    }
}

TEST(LlmClient, MalformedRepliesAreClearErrors) {
    FakeLlmServer server;
    server.push({200, R"({"choices":[{"message":{"content":"cut)"});
    server.push({200, R"({"choices":[]})"});
    server.push({200, R"({"choices":[{"message":{"role":"assistant"}}]})"});
    auto client = make_http_chat_client(config(server), "k");
    for (const char* part : {"not valid JSON", "no choices", "no text content"}) {
        auto out = client->chat(hello());
        ASSERT_FALSE(out.ok());
        EXPECT_EQ(out.kind, ChatErrorKind::kMalformedReply);
        EXPECT_NE(out.error.message.find(part), std::string::npos) << out.error.to_string();
    }
}

TEST(LlmClient, ConnectionRefused) {
    std::string dead_url;
    {
        FakeLlmServer server;
        dead_url = server.base_url();
    }
    LlmConfig c;
    c.base_url = dead_url;
    c.model = "m";
    c.max_retries = 1;
    c.retry_base_s = 0.01;
    c.connect_timeout_s = 1.0;
    c.timeout_s = 2.0;
    auto out = make_http_chat_client(c, "")->chat(hello());
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.kind, ChatErrorKind::kNetwork);
    EXPECT_EQ(out.attempts, 2);
}

TEST(LlmClient, CapsRequestsInFlight) {
    FakeLlmServer server;
    for (int i = 0; i < 4; ++i) server.push({200, testing::openai_reply("x", 1, 1), "", 0.2});
    auto c = config(server);
    c.max_concurrent = 1;
    auto client = make_http_chat_client(c, "k");
    std::vector<std::future<ChatOutcome>> futures;
    for (int i = 0; i < 4; ++i) {
        futures.push_back(std::async(std::launch::async, [&] { return client->chat(hello()); }));
    }
    for (auto& f : futures) EXPECT_TRUE(f.get().ok());
    EXPECT_EQ(server.max_in_flight(), 1);
}

}  // namespace
}  // namespace kforge::llm
