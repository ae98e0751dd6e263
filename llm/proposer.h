// The LLM proposer (search::Proposer): asks a chat model for programs, checks each against the
// problem, sends checker errors back for a bounded number of repair turns, and keeps token and
// cost budgets per problem and per run. When a budget is spent, or the endpoint is dead (it
// refuses the key or the model, cannot be reached after the client's retries, or fails
// kDeadAfterFailures requests in a row), exhausted() turns true and the search goes on with the
// built-in proposers.
// Every request and reply is recorded in the store when one is given; replies are cached on
// disk (llm/cache.h) so a run replays without the network.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "llm/cache.h"
#include "llm/client.h"
#include "llm/config.h"
#include "sol/bounds.h"

#include "search/proposer.h"

namespace kforge {
class Store;
}

namespace kforge::llm {

// Transient failures (timeouts, 5xx, 429 after the client's retries) in a row that disable the
// proposer for the run. A connection that cannot be made at all disables it at once.
inline constexpr int kDeadAfterFailures = 3;

struct LlmProposerOptions {
    Store* store = nullptr;           // records every request when set
    std::optional<int64_t> run_id;    // the run the records belong to
    // Values redacted from every record and message (llm/redact.h: the key shapes always are);
    // make_llm_proposer adds the API key.
    std::vector<std::string> secrets;
};

// Counters beyond search::ProposerUsage.
struct LlmStats {
    int http_requests = 0;  // including retries
    int cache_hits = 0;
    int repair_turns = 0;
    int programs_extracted = 0;
    int programs_rejected = 0;
    int programs_accepted = 0;
    int failed_requests = 0;
};

class LlmProposer final : public search::Proposer {
public:
    LlmProposer(LlmConfig config, std::unique_ptr<ChatClient> client,
                LlmProposerOptions options = {});

    std::string name() const override;
    std::vector<search::Proposal> propose(const search::ProposalContext& context) override;
    search::ProposerUsage usage() const override;
    // True once the run budget, or the budget of the problem last asked about, is spent, or
    // after a fatal endpoint error (refused key, unknown model).
    bool exhausted() const override;
    // Why exhausted() is true, for the loop to print ("" while it is not).
    std::string exhausted_reason() const;
    LlmStats stats() const;
    // The run later requests are recorded under (a suite switches it per problem).
    void set_run_id(std::optional<int64_t> run_id);
    // The problem exhausted() answers for until the next propose() (a suite sets it before each
    // round, so one problem's spent budget does not silence the LLM for the others).
    void set_problem(std::string name);
    // The last request error ("" when none): for the loop to show.
    std::string last_error() const;

private:
    struct Spent {
        int64_t tokens = 0;
        double cost_usd = 0.0;
    };
    bool budget_left(const std::string& problem) const;  // needs mutex_
    std::optional<ChatReply> ask(const ChatRequest& request, const std::string& problem);

    LlmConfig config_;
    std::unique_ptr<ChatClient> client_;
    LlmProposerOptions options_;
    std::optional<ReplyCache> cache_;

    mutable std::mutex mutex_;
    search::ProposerUsage usage_;
    LlmStats stats_;
    Spent run_spent_;
    std::map<std::string, Spent> problem_spent_;
    std::string current_problem_;
    std::string fatal_error_;
    int failures_in_a_row_ = 0;
    std::string last_error_;
};

// Builds the proposer over the HTTP client for config.provider.
std::unique_ptr<LlmProposer> make_llm_proposer(const LlmConfig& config, std::string api_key,
                                               LlmProposerOptions options = {});

}  // namespace kforge::llm
