#include "llm/config.h"

#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

namespace kforge::llm {

std::string_view to_string(Provider p) {
    switch (p) {
        case Provider::kOpenAi: return "openai";
        case Provider::kAnthropic: return "anthropic";
    }
    return "openai";
}

std::optional<Provider> provider_from_string(std::string_view s) {
    if (s == "openai") return Provider::kOpenAi;
    if (s == "anthropic") return Provider::kAnthropic;
    return std::nullopt;
}

namespace {

using nlohmann::json;
using Setter = std::function<std::optional<std::string>(const json&)>;  // error text or none

Setter number(double& out, double lo, double hi) {
    return [&out, lo, hi](const json& v) -> std::optional<std::string> {
        if (!v.is_number()) return "expected a number";
        double d = v.get<double>();
        if (!(d >= lo && d <= hi)) {
            std::ostringstream s;
            s << "must lie in [" << lo << ", " << hi << "], got " << d;
            return s.str();
        }
        out = d;
        return std::nullopt;
    };
}

template <typename Int>
Setter integer(Int& out, int64_t lo, int64_t hi) {
    return [&out, lo, hi](const json& v) -> std::optional<std::string> {
        if (!v.is_number_integer()) return "expected an integer";
        int64_t i = v.get<int64_t>();
        if (i < lo || i > hi) {
            return "must lie in [" + std::to_string(lo) + ", " + std::to_string(hi) + "], got " +
                   std::to_string(i);
        }
        out = static_cast<Int>(i);
        return std::nullopt;
    };
}

Setter text(std::string& out) {
    return [&out](const json& v) -> std::optional<std::string> {
        if (!v.is_string()) return "expected a string";
        out = v.get<std::string>();
        return std::nullopt;
    };
}

std::optional<Error> apply(const json& object, const std::map<std::string, Setter>& setters,
                           const std::string& where_prefix) {
    if (!object.is_object()) return make_error(where_prefix, "expected a JSON object");
    for (const auto& [key, value] : object.items()) {
        auto it = setters.find(key);
        if (it == setters.end()) {
            std::string known;
            for (const auto& [k, _] : setters) known += (known.empty() ? "" : ", ") + k;
            return make_error(where_prefix + key, "unknown key; known: " + known);
        }
        if (auto err = it->second(value)) return make_error(where_prefix + key, *err);
    }
    return std::nullopt;
}

}  // namespace

Expected<LlmConfig> parse_llm_config(std::string_view json_text, std::string_view source_name) {
    const std::string src(source_name);
    json j = json::parse(json_text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return make_error(src, "not valid JSON");
    LlmConfig c;
    std::string provider;
    const int64_t kMaxInt = 1 << 30;
    std::map<std::string, Setter> setters = {
        {"provider", text(provider)},
        {"base_url", text(c.base_url)},
        {"model", text(c.model)},
        {"temperature", number(c.temperature, 0.0, 2.0)},
        {"max_tokens", integer(c.max_tokens, 1, kMaxInt)},
        {"api_key_env", text(c.api_key_env)},
        {"price_in", number(c.price_in_per_mtok, 0.0, 1e6)},
        {"price_out", number(c.price_out_per_mtok, 0.0, 1e6)},
        {"timeout_s", number(c.timeout_s, 0.001, 86400.0)},
        {"connect_timeout_s", number(c.connect_timeout_s, 0.001, 3600.0)},
        {"max_retries", integer(c.max_retries, 0, 20)},
        {"retry_base_s", number(c.retry_base_s, 0.0, 600.0)},
        {"retry_max_s", number(c.retry_max_s, 0.0, 3600.0)},
        {"max_concurrent", integer(c.max_concurrent, 1, 64)},
        {"anthropic_version", text(c.anthropic_version)},
        {"repair_rounds", integer(c.repair_rounds, 0, 10)},
        {"cache_dir", text(c.cache_dir)},
        {"max_request_bytes", integer(c.max_request_bytes, 1024, int64_t{1} << 30)},
        {"max_reply_bytes", integer(c.max_reply_bytes, 1024, int64_t{1} << 30)},
        {"budget", [](const json&) -> std::optional<std::string> { return std::nullopt; }},
    };
    if (auto err = apply(j, setters, src + ": ")) return *err;
    if (j.contains("budget")) {
        std::map<std::string, Setter> budget = {
            {"tokens_per_problem", integer(c.budget.tokens_per_problem, 0, int64_t{1} << 50)},
            {"tokens_per_run", integer(c.budget.tokens_per_run, 0, int64_t{1} << 50)},
            {"cost_usd_per_problem", number(c.budget.cost_usd_per_problem, 0.0, 1e9)},
            {"cost_usd_per_run", number(c.budget.cost_usd_per_run, 0.0, 1e9)},
        };
        if (auto err = apply(j["budget"], budget, src + ": budget.")) return *err;
    }
    if (provider.empty()) return make_error(src + ": provider", "missing; use openai or anthropic");
    auto p = provider_from_string(provider);
    if (!p) {
        return make_error(src + ": provider",
                          "unknown provider \"" + provider + "\"; use openai or anthropic");
    }
    c.provider = *p;
    if (c.base_url.empty()) return make_error(src + ": base_url", "missing");
    if (c.base_url.rfind("http://", 0) != 0 && c.base_url.rfind("https://", 0) != 0) {
        return make_error(src + ": base_url", "must start with http:// or https://");
    }
    while (!c.base_url.empty() && c.base_url.back() == '/') c.base_url.pop_back();
    if (c.model.empty()) return make_error(src + ": model", "missing");
    return c;
}

Expected<LlmConfig> load_llm_config(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(path, "cannot read the LLM config file");
    std::ostringstream s;
    s << in.rdbuf();
    auto c = parse_llm_config(s.str(), path);
    if (!c) return c;
    if (!c->cache_dir.empty() && std::filesystem::path(c->cache_dir).is_relative()) {
        auto base = std::filesystem::path(path).parent_path();
        c->cache_dir = (base / c->cache_dir).lexically_normal().string();
    }
    return c;
}

double cost_usd(const LlmConfig& config, int64_t tokens_in, int64_t tokens_out) {
    return (static_cast<double>(tokens_in) * config.price_in_per_mtok +
            static_cast<double>(tokens_out) * config.price_out_per_mtok) /
           1e6;
}

}  // namespace kforge::llm
