#include "search/proposers_common.h"

#include <algorithm>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "sol/device.h"

namespace kforge::search::detail {

std::string static_check(const dsl::Program& program, const Problem& problem,
                         const std::string& device_key, const std::string& source) {
    auto spec = find_device(device_key);
    dsl::DeviceLimits limits = spec ? dsl::device_limits(*spec) : dsl::DeviceLimits{};
    dsl::CheckResult check = dsl::check_program(program, problem, limits, {"<candidate>", source});
    return check.ok() ? std::string() : check.errors.front().to_string();
}

bool LegalityMemo::legal(const dsl::Program& program, const std::string& hash,
                         const ProposalContext& context) {
    if (!context.problem) return false;  // nothing to check against: nothing is known legal
    std::string key = context.problem->name + "\n" + context.device_key;
    if (key != key_) {
        key_ = std::move(key);
        legal_.clear();
    }
    if (auto it = legal_.find(hash); it != legal_.end()) return it->second;
    ++checks_;
    bool ok = static_check(program, *context.problem, context.device_key).empty();
    legal_[hash] = ok;
    return ok;
}

ProposalSink::ProposalSink(const ProposalContext& context, LegalityMemo* memo)
    : context_(context),
      memo_(memo),
      seen_(context.seen_hashes.begin(), context.seen_hashes.end()),
      count_(context.count) {}

Admit ProposalSink::add(const dsl::Program& program, std::vector<std::string> parents,
                        std::string move) {
    if (full()) return Admit::kFull;
    std::string hash = dsl::program_hash(program);
    if (!seen_.insert(hash).second) return Admit::kSeen;
    if (memo_ && !memo_->legal(program, hash, context_)) return Admit::kIllegal;
    out_.push_back(Proposal{dsl::print_canonical(program), std::move(parents), std::move(move)});
    return Admit::kAdded;
}

bool ProposalSink::legal(const dsl::Program& program) {
    return !memo_ || memo_->legal(program, dsl::program_hash(program), context_);
}

std::vector<Parent> parse_parents(const ProposalContext& context) {
    std::vector<Parent> out;
    for (const CandidateView& v : context.best) {
        if (v.program && !v.program_hash.empty()) {  // parsed once by the loop
            out.push_back(Parent{*v.program, v.program_hash, &v});
            continue;
        }
        auto p = dsl::parse_program(v.program_text, "<parent>");
        if (!p) continue;
        out.push_back(Parent{*p, dsl::program_hash(*p), &v});
    }
    return out;
}

void focus_order(std::vector<KnobMove>& moves, const ProposalContext& context) {
    if (context.kernel_focus.empty()) return;
    auto focus = [&](const KnobMove& m) {
        auto it = context.kernel_focus.find(m.move.substr(0, m.move.find(' ')));
        return it == context.kernel_focus.end() ? 0.0 : it->second;
    };
    std::stable_sort(moves.begin(), moves.end(),
                     [&](const KnobMove& a, const KnobMove& b) { return focus(a) > focus(b); });
}

}  // namespace kforge::search::detail
