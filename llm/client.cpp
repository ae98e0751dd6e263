#include "llm/client.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include "llm/http.h"
#include "llm/redact.h"
#include "llm/wire.h"

namespace kforge::llm {

std::string_view to_string(ChatErrorKind k) {
    switch (k) {
        case ChatErrorKind::kAuthentication: return "authentication";
        case ChatErrorKind::kUnknownModel: return "unknown_model";
        case ChatErrorKind::kBadRequest: return "bad_request";
        case ChatErrorKind::kRateLimited: return "rate_limited";
        case ChatErrorKind::kServer: return "server";
        case ChatErrorKind::kTimeout: return "timeout";
        case ChatErrorKind::kNetwork: return "network";
        case ChatErrorKind::kMalformedReply: return "malformed_reply";
        case ChatErrorKind::kRequestTooLarge: return "request_too_large";
        case ChatErrorKind::kReplyTooLarge: return "reply_too_large";
    }
    return "network";
}

bool is_fatal(ChatErrorKind k) {
    return k == ChatErrorKind::kAuthentication || k == ChatErrorKind::kUnknownModel ||
           k == ChatErrorKind::kBadRequest;
}

namespace {

// A counting semaphore whose count is a runtime value (the config's max_concurrent).
class Slots {
public:
    explicit Slots(int n) : free_(n) {}
    void acquire() {
        std::unique_lock lock(mutex_);
        cv_.wait(lock, [&] { return free_ > 0; });
        --free_;
    }
    void release() {
        { std::lock_guard lock(mutex_); ++free_; }
        cv_.notify_one();
    }

private:
    std::mutex mutex_;
    std::condition_variable cv_;
    int free_;
};

class HttpChatClient final : public ChatClient {
public:
    HttpChatClient(LlmConfig config, std::string api_key)
        : config_(std::move(config)), api_key_(std::move(api_key)),
          slots_(config_.max_concurrent), rng_(std::random_device{}()) {}

    Provider provider() const override { return config_.provider; }
    std::string model() const override { return config_.model; }

    ChatOutcome chat(const ChatRequest& request) override {
        slots_.acquire();
        ChatOutcome out = send_with_retries(request);
        slots_.release();
        return out;
    }

private:
    std::string where() const {
        return std::string(to_string(config_.provider)) + " " + endpoint_url(config_);
    }

    std::string redact(std::string_view text) const {
        return redact_secrets(text, {api_key_});
    }

    // A provider's message, cut and redacted before it goes anywhere.
    std::string provider_message(const std::string& body) const {
        std::string m = error_message(body);
        if (m.size() > kMaxErrorMessageBytes) m = m.substr(0, kMaxErrorMessageBytes) + "...";
        return m;
    }

    ChatOutcome fail(ChatErrorKind kind, std::string message, int attempts, int requests) {
        ChatOutcome o;
        o.kind = kind;
        o.error = make_error(redact(where()), redact(message));
        o.attempts = attempts;
        o.http_requests = requests;
        return o;
    }

    double backoff_s(int retry, std::optional<double> retry_after) {
        double base = config_.retry_base_s * std::pow(2.0, retry);
        double jitter;
        {
            std::lock_guard lock(rng_mutex_);
            jitter = std::uniform_real_distribution<double>(0.0, config_.retry_base_s)(rng_);
        }
        double wait = retry_after ? std::max(*retry_after, 0.0) : base + jitter;
        return std::min(wait, config_.retry_max_s);
    }

    ChatOutcome send_with_retries(const ChatRequest& request) {
        const std::string url = endpoint_url(config_);
        const auto headers = request_headers(config_, api_key_);
        const std::string body = request_body(config_, request);
        const std::string key_name =
            config_.api_key_env.empty() ? std::string("(no key configured)") : "$" + config_.api_key_env;
        if (static_cast<int64_t>(body.size()) > config_.max_request_bytes) {
            return fail(ChatErrorKind::kRequestTooLarge,
                        "the request is " + std::to_string(body.size()) +
                            " bytes, over max_request_bytes (" +
                            std::to_string(config_.max_request_bytes) + "): not sent",
                        0, 0);
        }
        ChatErrorKind kind = ChatErrorKind::kNetwork;
        std::string last;
        int attempt = 0;
        for (; attempt <= config_.max_retries; ++attempt) {
            HttpResponse r = http_post(url, headers, body, config_.connect_timeout_s,
                                       config_.timeout_s,
                                       static_cast<size_t>(config_.max_reply_bytes));
            std::optional<double> retry_after;
            if (r.body_truncated) {  // not retried: the same request would bring it again
                ChatOutcome o = fail(ChatErrorKind::kReplyTooLarge,
                                     "the reply (HTTP " + std::to_string(r.status) +
                                         ") is larger than max_reply_bytes (" +
                                         std::to_string(config_.max_reply_bytes) +
                                         "): reading stopped there",
                                     attempt + 1, attempt + 1);
                o.reply_excerpt = redact(r.body.substr(0, kReplyExcerptBytes));
                return o;
            }
            if (r.status >= 200 && r.status < 300) {
                auto reply = parse_reply(config_.provider, r.body);
                if (!reply) {
                    return fail(ChatErrorKind::kMalformedReply,
                                "malformed reply from " + config_.model + ": " +
                                    reply.error().to_string(),
                                attempt + 1, attempt + 1);
                }
                ChatOutcome o;
                o.reply = std::move(*reply);
                o.reply->content = redact(o.reply->content);
                o.reply->latency_ms = r.latency_ms;
                o.reply->attempts = attempt + 1;
                o.attempts = attempt + 1;
                o.http_requests = attempt + 1;
                return o;
            }
            if (r.status == 401 || r.status == 403) {
                return fail(ChatErrorKind::kAuthentication,
                            "authentication failed (HTTP " + std::to_string(r.status) +
                                "): the endpoint refused the key in " + key_name + ": " +
                                provider_message(r.body),
                            attempt + 1, attempt + 1);
            }
            if (r.status >= 400 && r.status < 500 && r.status != 429) {
                if (is_unknown_model(r.status, r.body)) {
                    return fail(ChatErrorKind::kUnknownModel,
                                "unknown model \"" + config_.model + "\" (HTTP " +
                                    std::to_string(r.status) + "): " + provider_message(r.body),
                                attempt + 1, attempt + 1);
                }
                return fail(ChatErrorKind::kBadRequest,
                            "the endpoint rejected the request (HTTP " +
                                std::to_string(r.status) + "): " + provider_message(r.body),
                            attempt + 1, attempt + 1);
            }
            if (r.status == 429) {
                kind = ChatErrorKind::kRateLimited;
                last = "rate limited (HTTP 429): " + provider_message(r.body);
                retry_after = r.retry_after_s;
            } else if (r.status >= 500) {
                kind = ChatErrorKind::kServer;
                last = "server error (HTTP " + std::to_string(r.status) + "): " +
                       provider_message(r.body);
                retry_after = r.retry_after_s;
            } else if (r.timed_out) {
                kind = ChatErrorKind::kTimeout;
                last = "no reply within the timeout (" + std::to_string(config_.timeout_s) +
                       " s total, " + std::to_string(config_.connect_timeout_s) + " s connect)";
            } else if (r.status == 0) {
                kind = ChatErrorKind::kNetwork;
                last = "cannot reach the endpoint: " + r.transport_error;
            } else {
                kind = ChatErrorKind::kBadRequest;
                last = "unexpected HTTP status " + std::to_string(r.status);
                return fail(kind, last, attempt + 1, attempt + 1);
            }
            if (attempt < config_.max_retries) {
                std::this_thread::sleep_for(
                    std::chrono::duration<double>(backoff_s(attempt, retry_after)));
            }
        }
        return fail(kind, last + " (after " + std::to_string(attempt) + " attempts)", attempt,
                    attempt);
    }

    LlmConfig config_;
    std::string api_key_;
    Slots slots_;
    std::mutex rng_mutex_;
    std::mt19937_64 rng_;
};

}  // namespace

std::unique_ptr<ChatClient> make_http_chat_client(const LlmConfig& config, std::string api_key) {
    return std::make_unique<HttpChatClient>(config, std::move(api_key));
}

}  // namespace kforge::llm
