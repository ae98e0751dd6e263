#include "search/proposers_common.h"

#include "dsl/parser.h"
#include "dsl/printer.h"

namespace kforge::search::detail {

ProposalSink::ProposalSink(const ProposalContext& context)
    : seen_(context.seen_hashes.begin(), context.seen_hashes.end()), count_(context.count) {}

bool ProposalSink::add(const dsl::Program& program, std::vector<std::string> parents,
                       std::string move) {
    if (full()) return false;
    std::string hash = dsl::program_hash(program);
    if (!seen_.insert(hash).second) return false;
    out_.push_back(Proposal{dsl::print_canonical(program), std::move(parents), std::move(move)});
    return true;
}

std::vector<Parent> parse_parents(const ProposalContext& context) {
    std::vector<Parent> out;
    for (const CandidateView& v : context.best) {
        auto p = dsl::parse_program(v.program_text, "<parent>");
        if (!p) continue;
        out.push_back(Parent{*p, dsl::program_hash(*p), &v});
    }
    return out;
}

}  // namespace kforge::search::detail
