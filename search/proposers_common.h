// Helpers shared by the built-in proposers (internal to search/).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "problem/problem.h"
#include "search/knob_space.h"
#include "search/proposer.h"

namespace kforge::search::detail {

// The loop's static tier: the first checker error of `program` against `problem` on the device
// `device_key` names (its DeviceLimits; the defaults of an unknown name); "" when it passes.
// The loop (search/loop_propose.cpp) and the proposers both call this, so they agree on what is
// legal.
std::string static_check(const dsl::Program& program, const Problem& problem,
                         const std::string& device_key, const std::string& source = "");

// The static tier remembered by program hash for one proposer over a run: a program found
// illegal once is never checked (nor proposed) again. The memory is dropped when the problem or
// the device of the context changes (a proposer shared by the problems of a suite).
class LegalityMemo {
public:
    // True when `program` (hash `hash`) passes static_check for the context.
    bool legal(const dsl::Program& program, const std::string& hash,
               const ProposalContext& context);
    int64_t checks() const { return checks_; }  // checker calls made (memo misses)

private:
    std::string key_;
    std::map<std::string, bool> legal_;
    int64_t checks_ = 0;
};

enum class Admit { kAdded, kSeen, kIllegal, kFull };

// Collects proposals, dropping programs already seen in the run or already collected and, with a
// memo, programs that fail the static check (a proposer returns only legal programs).
class ProposalSink {
public:
    ProposalSink(const ProposalContext& context, LegalityMemo* memo);
    Admit add(const dsl::Program& program, std::vector<std::string> parents, std::string move);
    // Whether `program` passes the static check (the memo's answer; true without a memo).
    bool legal(const dsl::Program& program);
    bool full() const { return static_cast<int>(out_.size()) >= count_; }
    int size() const { return static_cast<int>(out_.size()); }
    std::vector<Proposal> take() { return std::move(out_); }

private:
    const ProposalContext& context_;
    LegalityMemo* memo_ = nullptr;
    std::set<std::string> seen_;
    std::vector<Proposal> out_;
    int count_ = 0;
};

// The parsed programs of the best candidates (unparsable ones are skipped), with their hashes.
struct Parent {
    dsl::Program program;
    std::string hash;
    const CandidateView* view = nullptr;
};
std::vector<Parent> parse_parents(const ProposalContext& context);

// `moves` stably ordered by the context's kernel_focus of the kernel each move starts with
// ("k2 vec 1 -> 2"), heaviest first; unchanged without a focus.
void focus_order(std::vector<KnobMove>& moves, const ProposalContext& context);

}  // namespace kforge::search::detail
