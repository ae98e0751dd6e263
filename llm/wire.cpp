#include "llm/wire.h"

#include <nlohmann/json.hpp>

namespace kforge::llm {

using nlohmann::json;

namespace {

bool ends_with(const std::string& s, std::string_view suffix) {
    return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

int64_t usage_field(const json& usage, const char* key) {
    if (!usage.is_object() || !usage.contains(key) || !usage[key].is_number_integer()) return 0;
    int64_t v = usage[key].get<int64_t>();
    return v < 0 ? 0 : v;
}

}  // namespace

std::string endpoint_url(const LlmConfig& config) {
    if (config.provider == Provider::kOpenAi) return config.base_url + "/chat/completions";
    if (ends_with(config.base_url, "/v1")) return config.base_url + "/messages";
    return config.base_url + "/v1/messages";
}

std::vector<std::string> request_headers(const LlmConfig& config, const std::string& api_key) {
    std::vector<std::string> h = {"Content-Type: application/json"};
    if (config.provider == Provider::kOpenAi) {
        if (!api_key.empty()) h.push_back("Authorization: Bearer " + api_key);
    } else {
        if (!api_key.empty()) h.push_back("x-api-key: " + api_key);
        h.push_back("anthropic-version: " + config.anthropic_version);
    }
    return h;
}

std::string request_body(const LlmConfig& config, const ChatRequest& request) {
    nlohmann::ordered_json body;
    body["model"] = config.model;
    body["max_tokens"] = config.max_tokens;
    body["temperature"] = config.temperature;
    auto messages = nlohmann::ordered_json::array();
    std::string system;
    for (const auto& m : request.messages) {
        if (config.provider == Provider::kAnthropic && m.role == "system") {
            system += (system.empty() ? "" : "\n\n") + m.content;
            continue;
        }
        messages.push_back({{"role", m.role}, {"content", m.content}});
    }
    if (!system.empty()) body["system"] = system;
    body["messages"] = messages;
    return body.dump(-1, ' ', false, json::error_handler_t::replace);
}

Expected<ChatReply> parse_reply(Provider provider, const std::string& body) {
    json j = json::parse(body, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) {
        return make_error("reply", "the reply body is not valid JSON (" +
                                       std::to_string(body.size()) + " bytes)");
    }
    if (!j.is_object()) return make_error("reply", "the reply body is not a JSON object");
    ChatReply r;
    if (provider == Provider::kOpenAi) {
        if (!j.contains("choices") || !j["choices"].is_array() || j["choices"].empty()) {
            return make_error("reply.choices", "the reply has no choices");
        }
        const json& c = j["choices"][0];
        if (!c.is_object() || !c.contains("message") || !c["message"].is_object() ||
            !c["message"].contains("content") || !c["message"]["content"].is_string()) {
            return make_error("reply.choices[0].message.content", "the reply has no text content");
        }
        r.content = c["message"]["content"].get<std::string>();
        if (j.contains("usage")) {
            r.tokens_in = usage_field(j["usage"], "prompt_tokens");
            r.tokens_out = usage_field(j["usage"], "completion_tokens");
        }
    } else {
        if (!j.contains("content") || !j["content"].is_array()) {
            return make_error("reply.content", "the reply has no content blocks");
        }
        bool any_text = false;
        for (const auto& block : j["content"]) {
            if (block.is_object() && block.value("type", "") == "text" && block.contains("text") &&
                block["text"].is_string()) {
                r.content += block["text"].get<std::string>();
                any_text = true;
            }
        }
        if (!any_text) return make_error("reply.content", "the reply has no text block");
        if (j.contains("usage")) {
            r.tokens_in = usage_field(j["usage"], "input_tokens");
            r.tokens_out = usage_field(j["usage"], "output_tokens");
        }
    }
    if (r.content.empty()) return make_error("reply", "the reply text is empty");
    return r;
}

std::string error_message(const std::string& body) {
    json j = json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("error")) {
        const json& e = j["error"];
        if (e.is_object() && e.contains("message") && e["message"].is_string()) {
            return e["message"].get<std::string>();
        }
        if (e.is_string()) return e.get<std::string>();
    }
    std::string cut = body.substr(0, 300);
    return body.size() > 300 ? cut + "..." : cut;
}

bool is_unknown_model(int http_status, const std::string& body) {
    if (body.find("model_not_found") != std::string::npos) return true;
    if (http_status != 404) return false;
    return true;
}

}  // namespace kforge::llm
