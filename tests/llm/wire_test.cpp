// The two wire formats: endpoints, headers, bodies and reply parsing (malformed replies give
// errors, never crashes).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "llm/cache.h"
#include "llm/wire.h"

namespace kforge::llm {
namespace {

LlmConfig config(Provider p, std::string base) {
    LlmConfig c;
    c.provider = p;
    c.base_url = std::move(base);
    c.model = "m";
    c.temperature = 0.5;
    c.max_tokens = 100;
    return c;
}

ChatRequest request() { return ChatRequest{{{"system", "sys"}, {"user", "hi"}}}; }

TEST(LlmWire, OpenAiRequest) {
    auto c = config(Provider::kOpenAi, "http://h/v1");
    EXPECT_EQ(endpoint_url(c), "http://h/v1/chat/completions");
    auto body = nlohmann::json::parse(request_body(c, request()));
    EXPECT_EQ(body["model"], "m");
    EXPECT_EQ(body["max_tokens"], 100);
    EXPECT_EQ(body["messages"].size(), 2u);
    EXPECT_EQ(body["messages"][0]["role"], "system");
    auto h = request_headers(c, "K");
    EXPECT_NE(std::find(h.begin(), h.end(), "Authorization: Bearer K"), h.end());
    EXPECT_EQ(request_headers(c, "").size(), 1u);  // a local server without a key
}

TEST(LlmWire, AnthropicRequest) {
    auto c = config(Provider::kAnthropic, "https://api.anthropic.com");
    EXPECT_EQ(endpoint_url(c), "https://api.anthropic.com/v1/messages");
    EXPECT_EQ(endpoint_url(config(Provider::kAnthropic, "http://h/v1")), "http://h/v1/messages");
    auto body = nlohmann::json::parse(request_body(c, request()));
    EXPECT_EQ(body["system"], "sys");
    ASSERT_EQ(body["messages"].size(), 1u);
    EXPECT_EQ(body["messages"][0]["role"], "user");
    auto h = request_headers(c, "K");
    EXPECT_NE(std::find(h.begin(), h.end(), "x-api-key: K"), h.end());
    EXPECT_NE(std::find(h.begin(), h.end(), "anthropic-version: 2023-06-01"), h.end());
}

TEST(LlmWire, ParsesReplies) {
    auto o = parse_reply(Provider::kOpenAi,
                         R"({"choices":[{"message":{"role":"assistant","content":"x"}}],
                             "usage":{"prompt_tokens":12,"completion_tokens":3}})");
    ASSERT_TRUE(o.ok()) << o.error().to_string();
    EXPECT_EQ(o->content, "x");
    EXPECT_EQ(o->tokens_in, 12);
    EXPECT_EQ(o->tokens_out, 3);
    auto a = parse_reply(Provider::kAnthropic,
                         R"({"content":[{"type":"text","text":"a"},{"type":"text","text":"b"}],
                             "usage":{"input_tokens":7,"output_tokens":2}})");
    ASSERT_TRUE(a.ok()) << a.error().to_string();
    EXPECT_EQ(a->content, "ab");
    EXPECT_EQ(a->tokens_in, 7);
    EXPECT_EQ(a->tokens_out, 2);
}

TEST(LlmWire, MalformedRepliesAreErrors) {
    const std::pair<Provider, const char*> bad[] = {
        {Provider::kOpenAi, R"({"choices":[{"message":{"content":"x"}})"},  // truncated
        {Provider::kOpenAi, R"({"choices":[]})"},
        {Provider::kOpenAi, R"({"choices":[{"message":{}}]})"},
        {Provider::kOpenAi, R"({"choices":[{"message":{"content":null}}]})"},
        {Provider::kOpenAi, R"([1,2])"},
        {Provider::kOpenAi, ""},
        {Provider::kAnthropic, R"({"content":[]})"},
        {Provider::kAnthropic, R"({"content":[{"type":"tool_use"}]})"},
        {Provider::kAnthropic, R"({"content":"x"})"},
    };
    for (const auto& [p, body] : bad) {
        auto r = parse_reply(p, body);
        EXPECT_FALSE(r.ok()) << body;
    }
}

TEST(LlmWire, ErrorMessagesAndUnknownModel) {
    EXPECT_EQ(error_message(R"({"error":{"message":"nope","type":"x"}})"), "nope");
    EXPECT_EQ(error_message("plain"), "plain");
    EXPECT_TRUE(is_unknown_model(400, R"({"error":{"code":"model_not_found"}})"));
    EXPECT_TRUE(is_unknown_model(404, "{}"));
    EXPECT_FALSE(is_unknown_model(400, "{}"));
}

TEST(LlmWire, RequestHashCoversModelMessagesAndTemperature) {
    auto c = config(Provider::kOpenAi, "http://h");
    const std::string h = request_hash(c, request());
    EXPECT_EQ(h.size(), 64u);
    EXPECT_EQ(h, request_hash(c, request()));
    auto c2 = c;
    c2.temperature = 0.6;
    EXPECT_NE(h, request_hash(c2, request()));
    auto c3 = c;
    c3.model = "n";
    EXPECT_NE(h, request_hash(c3, request()));
    auto r = request();
    r.messages[1].content = "hello";
    EXPECT_NE(h, request_hash(c, r));
}

}  // namespace
}  // namespace kforge::llm
