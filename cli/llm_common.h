// LLM helpers shared by `kforge llm` (cmd_llm.cpp), `kforge optimize` and `kforge suite`: the API
// key from the environment variable the config names (only cli/ reads the environment), and the
// LLM proposer of a search built from a config file plus the command's budgets.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/expected.h"
#include "llm/config.h"
#include "llm/proposer.h"

namespace kforge {
class Store;
}

namespace kforge::cli {

// The API key from the variable the config names; "" when it names none (a local server).
// An unset or empty variable is a user error.
Expected<std::string> llm_api_key(const llm::LlmConfig& config);

// Run-wide LLM limits from the command line; each replaces the config's run limit when given.
struct LlmBudgetArgs {
    std::optional<int64_t> tokens;
    std::optional<double> cost_usd;
};

// Loads `config_path`, reads the key, applies `budget` and builds the proposer over HTTP,
// recording every request and reply in `store` (run set later with set_run_id()).
Expected<std::unique_ptr<llm::LlmProposer>> make_search_llm_proposer(
    const std::string& config_path, const LlmBudgetArgs& budget, Store* store);

// One line: requests (cache hits), tokens, cost, programs accepted/rejected, repair turns.
std::string llm_usage_line(const llm::LlmProposer& proposer);

// Says once per reason, when the LLM proposer stops (a budget spent, the endpoint dead), that
// the search goes on with the built-in proposers, and says when a request failed.
class LlmWatch {
public:
    LlmWatch(const llm::LlmProposer* llm, std::string cmd, std::vector<std::string> builtin)
        : llm_(llm), cmd_(std::move(cmd)), builtin_(std::move(builtin)) {}
    void check();
    // The usage line at the end of a run ("" without an LLM).
    std::string summary() const;

private:
    const llm::LlmProposer* llm_;
    std::string cmd_;
    std::vector<std::string> builtin_;
    std::set<std::string> announced_;
    int failures_seen_ = 0;
};

}  // namespace kforge::cli
