// Secrets out of what the LLM path stores or prints. A provider may echo the key it was sent
// (an error body quoting the refused key, a gateway dumping the request headers); every text
// that leaves the HTTP client (errors, replies) and every record the proposer stores passes
// through redact_secrets first.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kforge::llm {

inline constexpr std::string_view kRedacted = "[REDACTED]";

// `text` with each occurrence of a configured secret (values of 4 characters or more) and of the
// common key shapes replaced by kRedacted: `sk-...` tokens (OpenAI, Anthropic `sk-ant-...`),
// `AIza...` (Google), the credential after `Bearer` / `Basic`, and the value of a field or
// header named x-api-key, api-key, api_key, apikey, authorization or key= in a URL query, whether
// written `name: value`, `name=value` or as JSON `"name": "value"`.
std::string redact_secrets(std::string_view text, const std::vector<std::string>& secrets = {});

}  // namespace kforge::llm
