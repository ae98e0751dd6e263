// LLM helpers shared by `kforge llm` (cmd_llm.cpp), `kforge optimize` and `kforge suite`: the API
// key from the environment variable the config names (only cli/ reads the environment), and the
// LLM proposer of a search built from a config file plus the command's budgets. (Following the
// proposer through a search is driver/llm_watch.h.)
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

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

}  // namespace kforge::cli
