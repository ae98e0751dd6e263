// LLM config files: every field, defaults, unknown keys and bad values as user errors.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "llm/config.h"

namespace kforge::llm {
namespace {

TEST(LlmConfig, ParsesEveryField) {
    auto c = parse_llm_config(R"({
        "provider": "anthropic", "base_url": "https://api.anthropic.com/", "model": "m1",
        "temperature": 0.2, "max_tokens": 2000, "api_key_env": "ANTHROPIC_API_KEY",
        "price_in": 3, "price_out": 15, "timeout_s": 30, "connect_timeout_s": 2,
        "max_retries": 5, "retry_base_s": 0.5, "retry_max_s": 20, "max_concurrent": 2,
        "repair_rounds": 1, "cache_dir": "/tmp/x",
        "budget": {"tokens_per_problem": 1000, "tokens_per_run": 5000,
                   "cost_usd_per_problem": 0.5, "cost_usd_per_run": 2}})",
                              "cfg.json");
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->provider, Provider::kAnthropic);
    EXPECT_EQ(c->base_url, "https://api.anthropic.com");  // trailing slash dropped
    EXPECT_EQ(c->model, "m1");
    EXPECT_DOUBLE_EQ(c->temperature, 0.2);
    EXPECT_EQ(c->max_tokens, 2000);
    EXPECT_EQ(c->api_key_env, "ANTHROPIC_API_KEY");
    EXPECT_EQ(c->max_retries, 5);
    EXPECT_EQ(c->max_concurrent, 2);
    EXPECT_EQ(c->repair_rounds, 1);
    EXPECT_EQ(c->budget.tokens_per_run, 5000);
    EXPECT_DOUBLE_EQ(c->budget.cost_usd_per_problem, 0.5);
    EXPECT_DOUBLE_EQ(cost_usd(*c, 1'000'000, 100'000), 3.0 + 1.5);
}

TEST(LlmConfig, DefaultsForOptionalFields) {
    auto c = parse_llm_config(
        R"({"provider": "openai", "base_url": "http://127.0.0.1:8080/v1", "model": "q"})", "c");
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->repair_rounds, 2);
    EXPECT_TRUE(c->api_key_env.empty());
    EXPECT_EQ(c->budget.tokens_per_run, 0);
}

struct BadCase {
    const char* json;
    const char* where;
    const char* message_part;
};

TEST(LlmConfig, BadInputIsAUserError) {
    const BadCase cases[] = {
        {"{", "c", "not valid JSON"},
        {"[]", "c: ", "JSON object"},
        {R"({"provider": "openai", "base_url": "http://x", "model": "m", "modle": 1})",
         "c: modle", "unknown key"},
        {R"({"provider": "gemini", "base_url": "http://x", "model": "m"})", "c: provider",
         "unknown provider"},
        {R"({"base_url": "http://x", "model": "m"})", "c: provider", "missing"},
        {R"({"provider": "openai", "base_url": "ftp://x", "model": "m"})", "c: base_url",
         "http://"},
        {R"({"provider": "openai", "base_url": "http://x"})", "c: model", "missing"},
        {R"({"provider": "openai", "base_url": "http://x", "model": "m", "temperature": 9})",
         "c: temperature", "must lie in"},
        {R"({"provider": "openai", "base_url": "http://x", "model": "m", "max_tokens": "a"})",
         "c: max_tokens", "integer"},
        {R"({"provider": "openai", "base_url": "http://x", "model": "m",
             "budget": {"tokens": 5}})", "c: budget.tokens", "unknown key"},
    };
    for (const auto& bc : cases) {
        auto c = parse_llm_config(bc.json, "c");
        ASSERT_FALSE(c.ok()) << bc.json;
        EXPECT_EQ(c.error().where, bc.where) << bc.json;
        EXPECT_NE(c.error().message.find(bc.message_part), std::string::npos)
            << c.error().to_string();
    }
}

TEST(LlmConfig, LoadResolvesCacheDirAgainstTheFile) {
    auto dir = std::filesystem::temp_directory_path() / "kforge_llm_config_test";
    std::filesystem::create_directories(dir);
    auto path = (dir / "llm.json").string();
    std::ofstream(path) << R"({"provider": "openai", "base_url": "http://x", "model": "m",
                              "cache_dir": "replies"})";
    auto c = load_llm_config(path);
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    EXPECT_EQ(c->cache_dir, (dir / "replies").string());
    auto missing = load_llm_config((dir / "absent.json").string());
    ASSERT_FALSE(missing.ok());
    EXPECT_NE(missing.error().message.find("cannot read"), std::string::npos);
    std::filesystem::remove_all(dir);
}

TEST(LlmConfig, ProviderNamesRoundTrip) {
    for (Provider p : {Provider::kOpenAi, Provider::kAnthropic}) {
        EXPECT_EQ(provider_from_string(to_string(p)), p);
    }
    EXPECT_FALSE(provider_from_string("OpenAI").has_value());
}

}  // namespace
}  // namespace kforge::llm

namespace kforge::llm {
namespace {

// The example configs of the README (examples/llm/) load as they are.
TEST(LlmConfigExamples, EveryExampleLoads) {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(
             std::filesystem::path(KFORGE_SOURCE_DIR) / "examples" / "llm")) {
        if (e.path().extension() != ".json") continue;
        auto c = load_llm_config(e.path().string());
        ASSERT_TRUE(c.ok()) << e.path() << ": " << c.error().to_string();
        EXPECT_FALSE(c->model.empty());
        ++n;
    }
    EXPECT_EQ(n, 4);
}

}  // namespace
}  // namespace kforge::llm
