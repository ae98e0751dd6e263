// redact_secrets on the shapes keys come in: the configured value anywhere, sk-/AIza tokens,
// Bearer/Basic credentials, x-api-key / api_key / authorization fields in headers, JSON and
// URLs; and text without secrets comes back unchanged.
#include <gtest/gtest.h>

#include "llm/redact.h"

namespace kforge::llm {
namespace {

void expect_gone(const std::string& text, const std::string& secret,
                 const std::vector<std::string>& secrets = {}) {
    const std::string out = redact_secrets(text, secrets);
    EXPECT_EQ(out.find(secret), std::string::npos) << text << " -> " << out;
    EXPECT_NE(out.find(kRedacted), std::string::npos) << text << " -> " << out;
}

TEST(LlmRedact, TheConfiguredKeyWherever) {
    expect_gone("Incorrect key provided: kf-7Hq2ZpX9wLm, check it", "kf-7Hq2ZpX9wLm",
                {"kf-7Hq2ZpX9wLm"});
    expect_gone("abckf-7Hq2ZpX9wLmdef", "kf-7Hq2ZpX9wLm", {"kf-7Hq2ZpX9wLm"});
}

TEST(LlmRedact, CommonKeyShapes) {
    expect_gone("Incorrect API key provided: sk-proj-abcdEFGH1234ijkl.", "sk-proj-abcdEFGH1234");
    expect_gone("key sk-ant-api03-ZZZZyyyyXXXX was refused", "sk-ant-api03-ZZZZ");
    expect_gone("?key=AIzaSyD-9tSrke72PouQMnMX-a7eZSW0jkFMBWY", "AIzaSyD-9tSrke72");
    expect_gone("Authorization: Bearer abc.def-ghi_jkl", "abc.def-ghi_jkl");
    expect_gone("authorization: Basic dXNlcjpwYXNz", "dXNlcjpwYXNz");
    expect_gone("{\"headers\": {\"x-api-key\": \"opaque-value-42\"}}", "opaque-value-42");
    expect_gone("x-api-key: opaque-value-42\r\n", "opaque-value-42");
    expect_gone("{\"api_key\":\"opaque-value-42\"}", "opaque-value-42");
    expect_gone("https://host/v1/chat?key=opaque-value-42&alt=json", "opaque-value-42");
    expect_gone("bearer   tok123456", "tok123456");
}

TEST(LlmRedact, TextWithoutSecretsIsUnchanged) {
    for (const std::string text :
         {std::string("program p for \"x\"\nkernel k0 = gemm(X[M,K], W[N,K]) tile 128x128x64\n"),
          std::string("the task-12345678 failed; keys: 3, monkey=2, risk-averse choice"),
          std::string("rate limited (HTTP 429): slow down"), std::string("")})
        EXPECT_EQ(redact_secrets(text, {"kf-7Hq2ZpX9wLm", "ab"}), text);
}

}  // namespace
}  // namespace kforge::llm
