// The two wire formats as pure functions (no I/O): request bodies, endpoints, headers and reply
// parsing for OpenAI-compatible chat completions and Anthropic messages. llm/client.cpp sends
// what these build; tests speak the same formats.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/expected.h"
#include "llm/client.h"
#include "llm/config.h"

namespace kforge::llm {

// POST {base}/chat/completions, or POST {base}/v1/messages (a base already ending in /v1 is not
// doubled).
std::string endpoint_url(const LlmConfig& config);

// Header lines ("Name: value") including the key; never log these.
std::vector<std::string> request_headers(const LlmConfig& config, const std::string& api_key);

// The JSON body. Anthropic takes the system prompt as a top-level "system" field.
std::string request_body(const LlmConfig& config, const ChatRequest& request);

// Content and token usage of a 2xx reply body. Errors for malformed JSON, empty choices or
// content, missing text; a missing usage block counts zero tokens.
Expected<ChatReply> parse_reply(Provider provider, const std::string& body);

// The provider's error message in an error body ("error.message"), or the body cut to 300 chars.
std::string error_message(const std::string& body);

// True when an error body or status says the model does not exist.
bool is_unknown_model(int http_status, const std::string& body);

}  // namespace kforge::llm
