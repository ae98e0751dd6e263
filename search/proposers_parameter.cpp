// The parameter proposer and the random proposer (search/proposers.h).
#include <algorithm>

#include "search/proposers.h"
#include "search/proposers_common.h"
#include "search/seed.h"

namespace kforge::search {
namespace {

template <typename T>
void shuffle(std::vector<T>& v, Rng& rng) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.uniform(0, i - 1)]);
}

class ParameterProposer : public Proposer {
public:
    std::string name() const override { return "search:parameter"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context);
        auto parents = detail::parse_parents(context);
        if (parents.empty()) return {};
        Rng rng{context.seed * 0x51ed27ULL + 7};
        // crossover of the two best parents that share a structure
        for (size_t j = 1; j < parents.size() && j < 4; ++j) {
            if (!same_structure(parents[0].program, parents[j].program)) continue;
            if (auto m = crossover(parents[0].program, parents[j].program, rng))
                sink.add(m->program, {parents[0].hash, parents[j].hash},
                         "crossover of " + parents[0].hash.substr(0, 8) + " and " +
                             parents[j].hash.substr(0, 8));
            break;
        }
        // a random restart now and then, to leave a local optimum
        if (rng.unit() < 0.15) {
            KnobMove m = random_knobs(parents[0].program, rng);
            sink.add(m.program, {parents[0].hash}, "random restart");
        }
        // neighbours: half the proposals from the best parent, then the others, then the rest
        std::vector<std::vector<KnobMove>> moves;
        for (size_t i = 0; i < parents.size() && i < 4; ++i) {
            moves.push_back(knob_neighbours(parents[i].program));
            shuffle(moves.back(), rng);
        }
        std::vector<size_t> next(moves.size(), 0);
        auto take = [&](size_t i, int limit) {
            for (int n = 0; n < limit && next[i] < moves[i].size() && !sink.full(); ++next[i]) {
                KnobMove& m = moves[i][next[i]];
                if (sink.add(m.program, {parents[i].hash}, m.move)) ++n;
            }
        };
        take(0, std::max(1, context.count / 2));
        for (size_t i = 1; i < moves.size(); ++i) take(i, std::max(1, context.count / 6));
        for (size_t i = 0; i < moves.size(); ++i) take(i, context.count);
        return sink.take();
    }
};

class RandomProposer : public Proposer {
public:
    std::string name() const override { return "search:random"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context);
        auto parents = detail::parse_parents(context);
        if (parents.empty()) return {};
        Rng rng{context.seed * 0x2545f491ULL + 3};
        // the structure of the best program, every knob uniform over its domain
        for (int attempt = 0; attempt < context.count * 8 && !sink.full(); ++attempt) {
            KnobMove m = random_knobs(parents[0].program, rng);
            sink.add(m.program, {parents[0].hash}, "random knobs");
        }
        return sink.take();
    }
};

}  // namespace

std::unique_ptr<Proposer> make_parameter_proposer() { return std::make_unique<ParameterProposer>(); }
std::unique_ptr<Proposer> make_random_proposer() { return std::make_unique<RandomProposer>(); }

std::unique_ptr<Proposer> make_builtin_proposer(const std::string& name) {
    if (name == "parameter") return make_parameter_proposer();
    if (name == "random") return make_random_proposer();
    if (name == "diagnosis") return make_diagnosis_proposer();
    if (name == "seed") return make_seed_proposer();
    return nullptr;
}

}  // namespace kforge::search
