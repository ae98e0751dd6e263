#include "cli/llm_common.h"

#include <cstdio>
#include <cstdlib>

namespace kforge::cli {

Expected<std::string> llm_api_key(const llm::LlmConfig& config) {
    if (config.api_key_env.empty()) return std::string();
    const char* v = std::getenv(config.api_key_env.c_str());
    if (!v || !*v) {
        return make_error("api_key_env", "$" + config.api_key_env +
                                             " is not set; export it with the endpoint's key "
                                             "(or remove api_key_env for a server without keys)");
    }
    return std::string(v);
}

Expected<std::unique_ptr<llm::LlmProposer>> make_search_llm_proposer(
    const std::string& config_path, const LlmBudgetArgs& budget, Store* store) {
    auto config = llm::load_llm_config(config_path);
    if (!config) return config.error();
    if (budget.tokens) {
        if (*budget.tokens <= 0) return make_error("--budget-tokens", "must be positive");
        config->budget.tokens_per_run = *budget.tokens;
    }
    if (budget.cost_usd) {
        if (*budget.cost_usd <= 0) return make_error("--budget-cost", "must be positive");
        if (config->price_in_per_mtok <= 0 && config->price_out_per_mtok <= 0)
            return make_error("--budget-cost", "the LLM config " + config_path +
                                                   " has no price_in/price_out, so nothing costs "
                                                   "anything; set prices or use --budget-tokens");
        config->budget.cost_usd_per_run = *budget.cost_usd;
    }
    auto key = llm_api_key(*config);
    if (!key) return key.error();
    llm::LlmProposerOptions options;
    options.store = store;
    return llm::make_llm_proposer(*config, std::move(*key), options);
}

std::string llm_usage_line(const llm::LlmProposer& proposer) {
    const search::ProposerUsage u = proposer.usage();
    const llm::LlmStats s = proposer.stats();
    char b[512];
    std::snprintf(b, sizeof b,
                  "llm: %d replies (%d from the cache, %d failed requests), %lld tokens in, %lld "
                  "out, $%.4f; programs %d accepted, %d rejected; %d repair turns",
                  u.requests, s.cache_hits, s.failed_requests,
                  static_cast<long long>(u.tokens_in), static_cast<long long>(u.tokens_out),
                  u.cost_usd, s.programs_accepted, s.programs_rejected, s.repair_turns);
    return b;
}

void LlmWatch::check() {
    if (!llm_) return;
    const llm::LlmStats s = llm_->stats();
    if (s.failed_requests > failures_seen_ && !llm_->exhausted()) {
        std::fprintf(stderr, "kforge %s: an LLM request failed (%s); it is asked again next "
                             "round\n", cmd_.c_str(), llm_->last_error().c_str());
    }
    failures_seen_ = s.failed_requests;
    if (!llm_->exhausted()) return;
    const std::string why = llm_->exhausted_reason();
    if (!announced_.insert(why).second) return;
    std::string names;
    for (const std::string& n : builtin_) names += (names.empty() ? "" : ", ") + n;
    std::fprintf(stderr, "kforge %s: %s; the search goes on with the built-in proposers (%s)\n",
                 cmd_.c_str(), why.c_str(), names.c_str());
}

std::string LlmWatch::summary() const { return llm_ ? llm_usage_line(*llm_) + "\n" : ""; }

}  // namespace kforge::cli
