#include "llm/cache.h"

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "common/hash.h"

namespace kforge::llm {

namespace fs = std::filesystem;

std::string request_hash(const LlmConfig& config, const ChatRequest& request) {
    nlohmann::ordered_json j;
    j["provider"] = std::string(to_string(config.provider));
    j["model"] = config.model;
    auto messages = nlohmann::ordered_json::array();
    for (const auto& m : request.messages) {
        messages.push_back({{"role", m.role}, {"content", m.content}});
    }
    j["messages"] = messages;
    j["temperature"] = config.temperature;
    return sha256_hex(j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace));
}

std::optional<ChatReply> ReplyCache::find(const std::string& hash) const {
    const fs::path path = fs::path(dir_) / (hash + ".json");
    std::error_code ec;
    // JSON escaping can double a reply's size, hence twice the reply cap.
    if (max_bytes_ > 0 && fs::file_size(path, ec) > 2 * max_bytes_ + 4096 && !ec)
        return std::nullopt;
    std::ifstream in(path, std::ios::binary);
    if (!in) return std::nullopt;
    std::ostringstream s;
    s << in.rdbuf();
    auto j = nlohmann::json::parse(s.str(), nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("content") ||
        !j["content"].is_string()) {
        return std::nullopt;
    }
    ChatReply r;
    r.content = j["content"].get<std::string>();
    r.tokens_in = j.value("tokens_in", int64_t{0});
    r.tokens_out = j.value("tokens_out", int64_t{0});
    r.latency_ms = 0.0;
    r.attempts = 0;
    return r;
}

Status ReplyCache::put(const std::string& hash, const ChatReply& reply) const {
    std::error_code ec;
    fs::create_directories(dir_, ec);
    if (ec) return make_error(dir_, "cannot create the LLM reply cache: " + ec.message());
    nlohmann::ordered_json j;
    j["content"] = reply.content;
    j["tokens_in"] = reply.tokens_in;
    j["tokens_out"] = reply.tokens_out;
    j["latency_ms"] = reply.latency_ms;
    const fs::path final_path = fs::path(dir_) / (hash + ".json");
    std::ostringstream tid;
    tid << std::this_thread::get_id();
    const fs::path tmp = fs::path(dir_) / (hash + ".tmp." + tid.str());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
        if (!out) return make_error(tmp.string(), "cannot write the LLM reply cache");
    }
    fs::rename(tmp, final_path, ec);
    if (ec) return make_error(final_path.string(), "cannot write the LLM reply cache: " + ec.message());
    return Ok{};
}

}  // namespace kforge::llm
