// A loopback HTTP server for the LLM tests that speaks both wire formats (OpenAI chat
// completions at /v1/chat/completions, Anthropic messages at /v1/messages) and plays scripted
// replies in order: bodies, statuses, Retry-After headers, replies that never come, bodies that
// echo the key the request carried, and huge replies streamed as they are read.
#pragma once

#include <httplib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <deque>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace kforge::llm::testing {

struct Scripted {
    int status = 200;
    std::string body;
    std::string retry_after;  // header value when not empty
    double delay_s = 0.0;     // the reply comes only after this (or never, if the test ends)
    // When > 0: an OpenAI reply whose content is this many bytes, streamed in 64 KiB pieces as
    // the client reads (bytes_streamed() counts what the client took); body is ignored.
    size_t stream_bytes = 0;
};

// In a scripted body, these are replaced by what the request carried (a provider echoing the
// key back in its error message).
inline constexpr const char* kEchoAuthorization = "{authorization}";
inline constexpr const char* kEchoApiKey = "{x-api-key}";

inline std::string openai_reply(const std::string& text, int tokens_in, int tokens_out) {
    nlohmann::json j = {
        {"id", "chatcmpl-1"},
        {"object", "chat.completion"},
        {"choices", {{{"index", 0},
                      {"message", {{"role", "assistant"}, {"content", text}}},
                      {"finish_reason", "stop"}}}},
        {"usage", {{"prompt_tokens", tokens_in}, {"completion_tokens", tokens_out},
                   {"total_tokens", tokens_in + tokens_out}}}};
    return j.dump();
}

inline std::string anthropic_reply(const std::string& text, int tokens_in, int tokens_out) {
    nlohmann::json j = {{"id", "msg_1"},
                        {"type", "message"},
                        {"role", "assistant"},
                        {"content", {{{"type", "text"}, {"text", text}}}},
                        {"stop_reason", "end_turn"},
                        {"usage", {{"input_tokens", tokens_in}, {"output_tokens", tokens_out}}}};
    return j.dump();
}

struct Received {
    std::string path;
    std::string body;
    std::string authorization;
    std::string api_key;
    std::string anthropic_version;
};

class FakeLlmServer {
public:
    FakeLlmServer() {
        auto handler = [this](const httplib::Request& req, httplib::Response& res) {
            serve(req, res);
        };
        server_.Post("/v1/chat/completions", handler);
        server_.Post("/v1/messages", handler);
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ~FakeLlmServer() {
        stopping_ = true;
        server_.stop();
        thread_.join();
    }

    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    void push(Scripted s) {
        std::lock_guard lock(mutex_);
        script_.push_back(std::move(s));
    }
    int hits() const { return hits_; }
    size_t bytes_streamed() const { return bytes_streamed_; }
    int max_in_flight() const { return max_in_flight_; }
    std::vector<Received> received() const {
        std::lock_guard lock(mutex_);
        return received_;
    }

private:
    void serve(const httplib::Request& req, httplib::Response& res) {
        ++hits_;
        int now = ++in_flight_;
        int seen = max_in_flight_;
        while (now > seen && !max_in_flight_.compare_exchange_weak(seen, now)) {}
        Scripted s{500, R"({"error":{"message":"the test script ran out"}})", "", 0.0};
        {
            std::lock_guard lock(mutex_);
            received_.push_back({req.path, req.body, req.get_header_value("Authorization"),
                                 req.get_header_value("x-api-key"),
                                 req.get_header_value("anthropic-version")});
            if (!script_.empty()) {
                s = script_.front();
                script_.pop_front();
            }
        }
        auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(s.delay_s);
        while (!stopping_ && std::chrono::steady_clock::now() < until) {
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        res.status = s.status;
        if (!s.retry_after.empty()) res.set_header("Retry-After", s.retry_after);
        replace_all(s.body, kEchoAuthorization, req.get_header_value("Authorization"));
        replace_all(s.body, kEchoApiKey, req.get_header_value("x-api-key"));
        if (s.stream_bytes > 0) {
            stream(res, s.stream_bytes);
        } else {
            res.set_content(s.body, "application/json");
        }
        --in_flight_;
    }

    static void replace_all(std::string& s, const std::string& from, const std::string& to) {
        for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
            s.replace(at, from.size(), to);
    }

    // {"choices":[{"message":{"role":"assistant","content":"aaaa..."}}]}, made as it is sent.
    void stream(httplib::Response& res, size_t content_bytes) {
        const std::string head = R"({"choices":[{"message":{"role":"assistant","content":")";
        const std::string tail = R"("}}]})";
        const size_t total = head.size() + content_bytes + tail.size();
        res.set_content_provider(
            total, "application/json",
            [this, head, tail, content_bytes, total](size_t offset, size_t length,
                                                       httplib::DataSink& sink) {
                std::string piece;
                const size_t end = std::min(total, offset + std::min<size_t>(length, 65536));
                for (size_t i = offset; i < end; ++i)
                    piece += i < head.size() ? head[i]
                             : i < head.size() + content_bytes
                                 ? 'a'
                                 : tail[i - head.size() - content_bytes];
                if (!sink.write(piece.data(), piece.size())) return false;
                bytes_streamed_ += piece.size();
                return true;
            });
    }

    httplib::Server server_;
    int port_ = 0;
    std::thread thread_;
    mutable std::mutex mutex_;
    std::deque<Scripted> script_;
    std::vector<Received> received_;
    std::atomic<int> hits_{0};
    std::atomic<int> in_flight_{0};
    std::atomic<int> max_in_flight_{0};
    std::atomic<size_t> bytes_streamed_{0};
    std::atomic<bool> stopping_{false};
};

}  // namespace kforge::llm::testing
