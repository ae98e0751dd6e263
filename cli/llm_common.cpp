#include "cli/llm_common.h"

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

}  // namespace kforge::cli
