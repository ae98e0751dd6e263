// The LLM endpoint configuration (docs/llm.md): which provider speaks which wire format, where,
// with which model, sampling settings, prices, timeouts, retries, concurrency and budgets.
// Read from a JSON file by load_llm_config(). The API key is never part of the file: the file
// names the environment variable that holds it (api_key_env) and cli/ reads that variable.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "common/expected.h"

namespace kforge::llm {

// The wire format: OpenAI-compatible chat completions (OpenAI, vLLM, llama.cpp server, most
// hosted gateways) or Anthropic messages.
enum class Provider { kOpenAi, kAnthropic };
std::string_view to_string(Provider p);
std::optional<Provider> provider_from_string(std::string_view s);

// Token and cost limits of the LLM proposer; 0 means no limit. A problem's budget is spent when
// either of its limits is reached, the run's when either run limit is.
struct LlmBudget {
    int64_t tokens_per_problem = 0;
    int64_t tokens_per_run = 0;
    double cost_usd_per_problem = 0.0;
    double cost_usd_per_run = 0.0;
};

struct LlmConfig {
    Provider provider = Provider::kOpenAi;
    std::string base_url;           // "https://api.openai.com/v1", "http://127.0.0.1:8080/v1"
    std::string model;
    double temperature = 0.7;
    int max_tokens = 4096;          // reply limit per request
    std::string api_key_env;        // name of the env var with the key; empty: no key
    double price_in_per_mtok = 0.0;   // USD per million prompt tokens
    double price_out_per_mtok = 0.0;  // USD per million completion tokens
    double timeout_s = 120.0;         // whole request
    double connect_timeout_s = 10.0;
    int max_retries = 3;              // on 429, 5xx, timeouts and connection errors
    double retry_base_s = 1.0;        // first backoff; doubles per retry, plus jitter
    double retry_max_s = 60.0;        // cap on one wait (also caps Retry-After)
    int max_concurrent = 4;           // requests in flight at once, per client
    std::string anthropic_version = "2023-06-01";
    int repair_rounds = 2;            // follow-up turns that send checker errors back
    std::string cache_dir;            // reply cache (a directory of JSON files); empty: none
    // Size caps: a request body over max_request_bytes is not sent; a reply is read up to
    // max_reply_bytes and a longer one is an error for that request (reading stops at the cap).
    int64_t max_request_bytes = int64_t{2} << 20;  // 2 MiB
    int64_t max_reply_bytes = int64_t{1} << 20;    // 1 MiB
    LlmBudget budget;
};

// Parses a config (JSON object). Unknown keys are errors (a typo must not silently fall back to
// a default); `where` is "<source_name>: <key>".
Expected<LlmConfig> parse_llm_config(std::string_view json_text, std::string_view source_name);

// Reads and parses a config file. A relative cache_dir is resolved against the file's folder.
Expected<LlmConfig> load_llm_config(const std::string& path);

// Cost of a request in USD at the config's prices.
double cost_usd(const LlmConfig& config, int64_t tokens_in, int64_t tokens_out);

}  // namespace kforge::llm
