// Following the LLM proposer through a search (driver/llm_watch.h).
#include "driver/llm_watch.h"

#include <cstdio>

namespace kforge::driver {

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
    if (s.failed_requests > failures_seen_ && !llm_->exhausted() && note_)
        note_("an LLM request failed (" + llm_->last_error() + "); it is asked again next round");
    failures_seen_ = s.failed_requests;
    if (!llm_->exhausted()) return;
    const std::string why = llm_->exhausted_reason();
    if (!announced_.insert(why).second) return;
    std::string names;
    for (const std::string& n : builtin_) names += (names.empty() ? "" : ", ") + n;
    if (note_) note_(why + "; the search goes on with the built-in proposers (" + names + ")");
}

std::string LlmWatch::summary() const { return llm_ ? llm_usage_line(*llm_) + "\n" : ""; }

}  // namespace kforge::driver
