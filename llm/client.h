// Chat clients: the LLM provider plug-in point. One interface (ChatClient), two wire formats
// over HTTP (llm/wire.h): OpenAI-compatible chat completions and Anthropic messages. The HTTP
// client (make_http_chat_client) adds connect and total timeouts, retries with exponential
// backoff and jitter on 429/5xx/timeouts (honouring Retry-After), clear errors for a refused
// key or an unknown model, and a cap on requests in flight.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "llm/config.h"

namespace kforge::llm {

struct ChatMessage {
    std::string role;  // "system", "user", "assistant"
    std::string content;
};

struct ChatRequest {
    std::vector<ChatMessage> messages;  // the system prompt first, when there is one
};

struct ChatReply {
    std::string content;
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double latency_ms = 0.0;  // of the successful attempt
    int attempts = 1;
};

// Why a request failed: decides whether the caller may try again later.
enum class ChatErrorKind {
    kAuthentication,  // 401/403: the key is missing or refused (fatal)
    kUnknownModel,    // 404 / model_not_found (fatal)
    kBadRequest,      // other 4xx (fatal for this request)
    kRateLimited,     // 429 after all retries
    kServer,          // 5xx after all retries
    kTimeout,         // no complete reply in time, after all retries
    kNetwork,         // connection refused, DNS, TLS, after all retries
    kMalformedReply,  // 2xx whose body is not the expected JSON shape
    kRequestTooLarge, // the request body is over max_request_bytes: not sent
    kReplyTooLarge,   // the reply passed max_reply_bytes: reading stopped there, not retried
};
std::string_view to_string(ChatErrorKind k);
bool is_fatal(ChatErrorKind k);  // retrying later cannot help

struct ChatOutcome {
    std::optional<ChatReply> reply;  // set on success
    ChatErrorKind kind = ChatErrorKind::kNetwork;
    Error error;                     // set on failure (secrets redacted, llm/redact.h)
    std::string reply_excerpt;       // kReplyTooLarge: the reply's first bytes (redacted)
    int attempts = 0;
    int http_requests = 0;

    bool ok() const { return reply.has_value(); }
};

class ChatClient {
public:
    virtual ~ChatClient() = default;
    virtual Provider provider() const = 0;
    virtual std::string model() const = 0;
    // Sends one request; blocks until a reply, a final error, or the timeouts. Thread-safe.
    virtual ChatOutcome chat(const ChatRequest& request) = 0;
};

// The HTTP client for config.provider. `api_key` comes from the caller (cli/ reads the env var
// config.api_key_env); it goes into the request headers only, never into errors or records:
// error messages and reply texts are redacted (the key's value and common key shapes) before
// they leave the client, and provider messages are cut to kMaxErrorMessageBytes.
inline constexpr size_t kMaxErrorMessageBytes = 2000;
inline constexpr size_t kReplyExcerptBytes = 4096;
std::unique_ptr<ChatClient> make_http_chat_client(const LlmConfig& config, std::string api_key);

}  // namespace kforge::llm
