// Helpers shared by the built-in proposers (internal to search/).
#pragma once

#include <optional>
#include <set>
#include <string>
#include <vector>

#include "dsl/ast.h"
#include "search/knob_space.h"
#include "search/proposer.h"

namespace kforge::search::detail {

// Collects proposals, dropping programs already seen in the run or already collected.
class ProposalSink {
public:
    explicit ProposalSink(const ProposalContext& context);
    // False when the program was a duplicate.
    bool add(const dsl::Program& program, std::vector<std::string> parents, std::string move);
    bool full() const { return static_cast<int>(out_.size()) >= count_; }
    std::vector<Proposal> take() { return std::move(out_); }

private:
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

}  // namespace kforge::search::detail
