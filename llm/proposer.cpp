#include "llm/proposer.h"

#include <nlohmann/json.hpp>
#include <set>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "llm/extract.h"
#include "llm/prompt.h"
#include "llm/redact.h"
#include "sol/device.h"
#include "store/store.h"

namespace kforge::llm {
namespace {

std::string messages_json(const ChatRequest& request) {
    auto a = nlohmann::ordered_json::array();
    for (const auto& m : request.messages) a.push_back({{"role", m.role}, {"content", m.content}});
    return a.dump(2, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string join_errors(const dsl::CheckResult& r) {
    std::string s;
    for (const auto& e : r.errors) s += (s.empty() ? "" : "\n") + e.to_string();
    return s;
}

bool over(int64_t tokens, double cost, int64_t token_limit, double cost_limit) {
    return (token_limit > 0 && tokens >= token_limit) || (cost_limit > 0.0 && cost >= cost_limit);
}

}  // namespace

LlmProposer::LlmProposer(LlmConfig config, std::unique_ptr<ChatClient> client,
                         LlmProposerOptions options)
    : config_(std::move(config)), client_(std::move(client)), options_(options) {
    if (!config_.cache_dir.empty())
        cache_.emplace(config_.cache_dir, static_cast<size_t>(config_.max_reply_bytes));
}

std::string LlmProposer::name() const { return "llm:" + config_.model; }

search::ProposerUsage LlmProposer::usage() const {
    std::lock_guard lock(mutex_);
    return usage_;
}

LlmStats LlmProposer::stats() const {
    std::lock_guard lock(mutex_);
    return stats_;
}

void LlmProposer::set_run_id(std::optional<int64_t> run_id) {
    std::lock_guard lock(mutex_);
    options_.run_id = run_id;
}

void LlmProposer::set_problem(std::string name) {
    std::lock_guard lock(mutex_);
    current_problem_ = std::move(name);
}

std::string LlmProposer::last_error() const {
    std::lock_guard lock(mutex_);
    return last_error_;
}

bool LlmProposer::budget_left(const std::string& problem) const {
    const auto& b = config_.budget;
    if (over(run_spent_.tokens, run_spent_.cost_usd, b.tokens_per_run, b.cost_usd_per_run)) {
        return false;
    }
    auto it = problem_spent_.find(problem);
    if (it == problem_spent_.end()) return true;
    return !over(it->second.tokens, it->second.cost_usd, b.tokens_per_problem,
                 b.cost_usd_per_problem);
}

bool LlmProposer::exhausted() const {
    std::lock_guard lock(mutex_);
    return !fatal_error_.empty() || !budget_left(current_problem_);
}

std::string LlmProposer::exhausted_reason() const {
    std::lock_guard lock(mutex_);
    if (!fatal_error_.empty()) return "LLM disabled: " + fatal_error_;
    const auto& b = config_.budget;
    if (over(run_spent_.tokens, run_spent_.cost_usd, b.tokens_per_run, b.cost_usd_per_run)) {
        return "LLM run budget spent (" + std::to_string(run_spent_.tokens) + " tokens, $" +
               std::to_string(run_spent_.cost_usd) + ")";
    }
    if (!budget_left(current_problem_)) {
        const Spent& s = problem_spent_.at(current_problem_);
        return "LLM budget for " + current_problem_ + " spent (" + std::to_string(s.tokens) +
               " tokens, $" + std::to_string(s.cost_usd) + ")";
    }
    return {};
}

// One request through the cache and the client, with accounting and recording. A cache hit is
// charged the tokens and cost it was recorded with, so a replay takes the same path as the run.
std::optional<ChatReply> LlmProposer::ask(const ChatRequest& request, const std::string& problem) {
    const std::string hash = request_hash(config_, request);
    std::optional<ChatReply> reply;
    bool from_cache = false;
    if (cache_) {
        reply = cache_->find(hash);
        from_cache = reply.has_value();
    }
    std::string failure;
    std::string excerpt;
    if (!reply) {
        ChatOutcome out = client_->chat(request);
        std::lock_guard lock(mutex_);
        stats_.http_requests += out.http_requests;
        if (out.ok()) {
            reply = std::move(out.reply);
            reply->content = redact_secrets(reply->content, options_.secrets);
            failures_in_a_row_ = 0;
        } else {
            failure = redact_secrets(
                "[" + std::string(to_string(out.kind)) + "] " + out.error.to_string(),
                options_.secrets);
            if (!out.reply_excerpt.empty())  // an oversized reply: recorded cut, never whole
                excerpt = redact_secrets(out.reply_excerpt, options_.secrets);
            last_error_ = failure;
            ++stats_.failed_requests;
            ++failures_in_a_row_;
            if (is_fatal(out.kind)) {
                fatal_error_ = redact_secrets(out.error.to_string(), options_.secrets);
            } else if (out.kind == ChatErrorKind::kNetwork) {
                fatal_error_ = "endpoint unreachable after " + std::to_string(out.attempts) +
                               " attempt(s): " +
                               redact_secrets(out.error.to_string(), options_.secrets);
            } else if (failures_in_a_row_ >= kDeadAfterFailures) {
                fatal_error_ = std::to_string(failures_in_a_row_) +
                               " requests in a row failed, the last: " + failure;
            }
        }
    }
    if (reply && cache_ && !from_cache) {
        if (auto s = cache_->put(hash, *reply); !s) {
            std::lock_guard lock(mutex_);
            last_error_ = s.error().to_string();
        }
    }
    const double cost = reply ? cost_usd(config_, reply->tokens_in, reply->tokens_out) : 0.0;
    {
        std::lock_guard lock(mutex_);
        if (reply) {
            const int64_t tokens = reply->tokens_in + reply->tokens_out;
            usage_.tokens_in += reply->tokens_in;
            usage_.tokens_out += reply->tokens_out;
            usage_.cost_usd += cost;
            ++usage_.requests;
            if (from_cache) ++stats_.cache_hits;
            run_spent_.tokens += tokens;
            run_spent_.cost_usd += cost;
            problem_spent_[problem].tokens += tokens;
            problem_spent_[problem].cost_usd += cost;
        }
    }
    if (options_.store) {
        NewLlmRequest r;
        {
            std::lock_guard lock(mutex_);
            r.run_id = options_.run_id;
        }
        r.provider = std::string(to_string(config_.provider));
        r.model = config_.model;
        r.request_hash = hash;
        r.prompt = redact_secrets(messages_json(request), options_.secrets);
        r.reply = reply ? reply->content
                        : excerpt.empty() ? failure
                                          : failure + "\n--- the reply's first " +
                                                std::to_string(excerpt.size()) + " bytes ---\n" +
                                                excerpt;
        r.tokens_in = reply ? reply->tokens_in : 0;
        r.tokens_out = reply ? reply->tokens_out : 0;
        r.cost_usd = cost;
        r.latency_ms = reply && !from_cache ? reply->latency_ms : 0.0;
        if (auto id = options_.store->add_llm_request(r); !id) {
            std::lock_guard lock(mutex_);
            last_error_ = id.error().to_string();
        }
    }
    return reply;
}

std::vector<search::Proposal> LlmProposer::propose(const search::ProposalContext& context) {
    std::vector<search::Proposal> proposals;
    if (!context.problem || context.count <= 0) return proposals;
    const std::string problem = context.problem->name;
    {
        std::lock_guard lock(mutex_);
        current_problem_ = problem;
        if (!fatal_error_.empty() || !budget_left(problem)) return proposals;
    }
    dsl::DeviceLimits limits;
    if (auto device = find_device(context.device_key)) limits = dsl::device_limits(*device);

    std::set<std::string> seen;
    for (const auto& v : context.best) seen.insert(v.program_hash);
    for (const auto& v : context.recent_failures) seen.insert(v.program_hash);

    ChatRequest request;
    request.messages = {{"system", system_prompt()}, {"user", user_prompt(context)}};
    for (int round = 0; round <= config_.repair_rounds; ++round) {
        if (round > 0) {
            std::lock_guard lock(mutex_);
            if (!budget_left(problem)) break;
            ++stats_.repair_turns;
        }
        auto reply = ask(request, problem);
        if (!reply) break;
        const auto extracted = extract_programs(reply->content);
        std::vector<RejectedProgram> rejected;
        int accepted = 0;
        for (const auto& e : extracted) {
            const std::string file = "reply" + std::to_string(round + 1) + "-program" +
                                     std::to_string(e.index);
            auto program = dsl::parse_program(e.text, file);
            if (!program) {
                rejected.push_back({e.index, e.text, program.error().to_string()});
                continue;
            }
            dsl::CheckOptions options;
            options.file_name = file;
            options.source = e.text;
            auto checked = dsl::check_program(*program, *context.problem, limits, options);
            if (!checked.ok()) {
                rejected.push_back({e.index, e.text, join_errors(checked)});
                continue;
            }
            ++accepted;
            std::string hash = dsl::program_hash(*program);
            if (!seen.insert(hash).second) continue;  // a repeat: accepted, not proposed again
            search::Proposal p;
            p.program_text = dsl::print_canonical(*program);
            if (!context.best.empty()) p.parent_hashes = {context.best.front().program_hash};
            p.move = "llm: " + (e.rationale.empty() ? "program " + std::to_string(e.index)
                                                    : e.rationale);
            proposals.push_back(std::move(p));
        }
        {
            std::lock_guard lock(mutex_);
            stats_.programs_extracted += static_cast<int>(extracted.size());
            stats_.programs_rejected += static_cast<int>(rejected.size());
            stats_.programs_accepted += accepted;
        }
        if (static_cast<int>(proposals.size()) >= context.count) break;
        std::string follow_up;
        if (!rejected.empty()) {
            follow_up = repair_prompt(rejected, accepted);
        } else if (extracted.empty()) {
            follow_up = "Your reply contained no program. Write the programs, each after a "
                        "`Rationale:` line in its own ```kforge fenced block.";
        } else {
            break;  // all accepted, fewer than asked: nothing to repair
        }
        request.messages.push_back({"assistant", reply->content});
        request.messages.push_back({"user", follow_up});
    }
    return proposals;
}

std::unique_ptr<LlmProposer> make_llm_proposer(const LlmConfig& config, std::string api_key,
                                               LlmProposerOptions options) {
    if (!api_key.empty()) options.secrets.push_back(api_key);
    return std::make_unique<LlmProposer>(config, make_http_chat_client(config, std::move(api_key)),
                                         std::move(options));
}

}  // namespace kforge::llm
