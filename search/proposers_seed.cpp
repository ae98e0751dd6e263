// The "seed" proposer (search/proposers.h): the fusion planner's seed variants
// (planner/plan.h) as proposals.
#include <set>

#include "dsl/printer.h"
#include "planner/plan.h"
#include "search/proposers.h"
#include "sol/device.h"

namespace kforge::search {
namespace {

class SeedProposer : public Proposer {
public:
    std::string name() const override { return "search:seed"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        std::vector<Proposal> out;
        if (!context.problem || !done_.insert(context.problem->name).second) return out;
        auto device = find_device(context.device_key);
        if (!device) return out;
        std::set<std::string> seen(context.seen_hashes.begin(), context.seen_hashes.end());
        for (const dsl::Program& p : planner::seed_variants(*context.problem, dsl::device_limits(*device))) {
            if (static_cast<int>(out.size()) >= context.count) break;
            if (!seen.insert(dsl::program_hash(p)).second) continue;
            out.push_back(Proposal{dsl::print_canonical(p), {},
                                   "seed variant: " + planner::describe_fusion_plan(p)});
        }
        return out;  // the variants are fixed by the problem: asking again finds nothing new
    }

private:
    std::set<std::string> done_;  // problems already asked about (one proposer serves a suite)
};

}  // namespace

std::unique_ptr<Proposer> make_seed_proposer() { return std::make_unique<SeedProposer>(); }

}  // namespace kforge::search
