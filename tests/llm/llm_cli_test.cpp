// `kforge llm ping` and `kforge llm prompt` through the binary: the key from the env var the
// config names (never printed), exit codes for a refused key, an unset variable, an unreachable
// endpoint and a bad config; the prompt of a suite problem with its program as the best so far.
#include <gtest/gtest.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "fake_server.h"
#include "tests/cli_run.h"

namespace {

using kforge::llm::testing::FakeLlmServer;
namespace fs = std::filesystem;

using kforge::test::CliRun;
using kforge::test::run_cli;

std::string write_config(const std::string& name, const std::string& json) {
    auto dir = fs::temp_directory_path() / ("kforge_llm_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    auto path = (dir / name).string();
    std::ofstream(path) << json;
    return path;
}

std::string config_for(const std::string& base_url, const std::string& key_env) {
    return R"({"provider": "openai", "base_url": ")" + base_url +
           R"(", "model": "m", "api_key_env": ")" + key_env +
           R"(", "timeout_s": 2, "max_retries": 0, "price_in": 1, "price_out": 2})";
}

TEST(LlmCli, PingSendsTheKeyFromTheNamedVariable) {
    FakeLlmServer server;
    server.push({200, kforge::llm::testing::openai_reply("pong", 12, 1)});
    ::setenv("KFORGE_LLM_CLI_TEST_KEY", "sk-cli-secret", 1);
    auto path = write_config("ok.json", config_for(server.base_url(), "KFORGE_LLM_CLI_TEST_KEY"));
    CliRun r = run_cli("llm ping --config " + path);
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("reply: pong"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("tokens 12 in, 1 out"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("sk-cli-secret"), std::string::npos);
    ASSERT_EQ(server.received().size(), 1u);
    EXPECT_EQ(server.received()[0].authorization, "Bearer sk-cli-secret");
}

// A provider that echoes the key it got, in an error body or in a reply: nothing printed holds it.
TEST(LlmCli, PingNeverPrintsAnEchoedKey) {
    using kforge::llm::testing::kEchoAuthorization;
    FakeLlmServer server;
    server.push({401, std::string(R"({"error":{"message":"Incorrect API key provided: )") +
                          kEchoAuthorization + R"("}})"});
    server.push({200, kforge::llm::testing::openai_reply(
                          std::string("pong; you sent ") + kEchoAuthorization, 3, 1)});
    ::setenv("KFORGE_LLM_CLI_TEST_KEY", "kf-cli-7Hq2ZpX9wLm", 1);
    auto path = write_config("echo.json", config_for(server.base_url(), "KFORGE_LLM_CLI_TEST_KEY"));
    CliRun refused = run_cli("llm ping --config " + path);
    EXPECT_EQ(refused.rc, 2) << refused.out;
    EXPECT_NE(refused.out.find("Incorrect API key provided: Bearer [REDACTED]"), std::string::npos)
        << refused.out;
    EXPECT_EQ(refused.out.find("7Hq2ZpX9"), std::string::npos) << refused.out;
    CliRun echoed = run_cli("llm ping --config " + path);
    EXPECT_EQ(echoed.rc, 0) << echoed.out;
    EXPECT_NE(echoed.out.find("reply: pong"), std::string::npos) << echoed.out;
    EXPECT_EQ(echoed.out.find("7Hq2ZpX9"), std::string::npos) << echoed.out;
    ASSERT_EQ(server.received().size(), 2u);
    EXPECT_EQ(server.received()[0].authorization, "Bearer kf-cli-7Hq2ZpX9wLm");  // it was sent
}

TEST(LlmCli, PingErrorsAndExitCodes) {
    FakeLlmServer server;
    server.push({401, R"({"error":{"message":"Incorrect API key"}})"});
    ::setenv("KFORGE_LLM_CLI_TEST_KEY", "sk-cli-secret", 1);
    auto path = write_config("bad.json", config_for(server.base_url(), "KFORGE_LLM_CLI_TEST_KEY"));
    CliRun refused = run_cli("llm ping --config " + path);
    EXPECT_EQ(refused.rc, 2) << refused.out;
    EXPECT_NE(refused.out.find("refused the key in $KFORGE_LLM_CLI_TEST_KEY"), std::string::npos);
    EXPECT_EQ(refused.out.find("sk-cli-secret"), std::string::npos);

    auto unset = write_config("unset.json", config_for(server.base_url(), "KFORGE_LLM_UNSET_VAR"));
    ::unsetenv("KFORGE_LLM_UNSET_VAR");
    CliRun no_key = run_cli("llm ping --config " + unset);
    EXPECT_EQ(no_key.rc, 2) << no_key.out;
    EXPECT_NE(no_key.out.find("$KFORGE_LLM_UNSET_VAR is not set"), std::string::npos);

    std::string dead;
    {
        FakeLlmServer gone;
        dead = gone.base_url();
    }
    auto down = write_config("down.json", config_for(dead, ""));
    CliRun unreachable = run_cli("llm ping --config " + down);
    EXPECT_EQ(unreachable.rc, 3) << unreachable.out;
    EXPECT_NE(unreachable.out.find("cannot reach the endpoint"), std::string::npos);

    auto typo = write_config("typo.json", R"({"provider": "openai", "base_url": "http://x",
                                             "model": "m", "temprature": 1})");
    CliRun bad = run_cli("llm ping --config " + typo);
    EXPECT_EQ(bad.rc, 2) << bad.out;
    EXPECT_NE(bad.out.find("temprature: unknown key"), std::string::npos) << bad.out;
}

TEST(LlmCli, PromptOfASuiteProblem) {
    const std::string p = std::string(KFORGE_SOURCE_DIR) + "/problems/linear_bias_gelu_tanh_bf16";
    CliRun r = run_cli("llm prompt --problem " + p + ".json --program " + p + ".kf --count 3");
    ASSERT_EQ(r.rc, 0) << r.out;
    EXPECT_NE(r.out.find("<!-- system -->"), std::string::npos);
    EXPECT_NE(r.out.find("# Problem linear_bias_gelu_tanh_bf16"), std::string::npos);
    EXPECT_NE(r.out.find("fused bound T_sol"), std::string::npos);
    EXPECT_NE(r.out.find("tile 128x256x64"), std::string::npos);
    EXPECT_NE(r.out.find("Write 3 new programs"), std::string::npos);
    CliRun missing = run_cli("llm prompt --problem /nonexistent.json");
    EXPECT_EQ(missing.rc, 2) << missing.out;
}

}  // namespace
