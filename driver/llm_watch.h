// Following the LLM proposer through a search (`kforge optimize`, `kforge suite`): says once per
// reason when it stops (a budget spent, the endpoint dead) that the search goes on with the
// built-in proposers, says when a request failed, and sums up its usage at the end.
#pragma once

#include <functional>
#include <set>
#include <string>
#include <vector>

#include "llm/proposer.h"

namespace kforge::driver {

// One line: requests (cache hits), tokens, cost, programs accepted/rejected, repair turns.
std::string llm_usage_line(const llm::LlmProposer& proposer);

class LlmWatch {
public:
    // `llm` may be null (no LLM: the watch says nothing); `builtin` names the proposers that go
    // on; `note` receives each message (one line).
    LlmWatch(const llm::LlmProposer* llm, std::vector<std::string> builtin,
             std::function<void(const std::string&)> note)
        : llm_(llm), builtin_(std::move(builtin)), note_(std::move(note)) {}
    void check();
    // The usage line with its newline at the end of a run ("" without an LLM).
    std::string summary() const;

private:
    const llm::LlmProposer* llm_;
    std::vector<std::string> builtin_;
    std::function<void(const std::string&)> note_;
    std::set<std::string> announced_;
    int failures_seen_ = 0;
};

}  // namespace kforge::driver
