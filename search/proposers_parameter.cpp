// The parameter proposer and the random proposer (search/proposers.h).
#include <algorithm>
#include <set>

#include "dsl/printer.h"
#include "search/proposers.h"
#include "search/proposers_common.h"
#include "search/seed.h"

namespace kforge::search {
namespace {

template <typename T>
void shuffle(std::vector<T>& v, Rng& rng) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.uniform(0, i - 1)]);
}

// Tries of the random restart before it gives up: random knob settings are legal by the knob
// tables, mostly not by the checker (rows_per_block 61 with threads 480; about one draw in a
// hundred passes for a row-wise kernel). A check costs tens of microseconds.
constexpr int kRestartTries = 1000;

// A random legal program of the structure of `parent` (rejection sampling against the static
// tier), added to the sink; false when kRestartTries draws found none new.
bool random_restart(const detail::Parent& parent, Rng& rng, detail::ProposalSink& sink,
                    const std::string& move) {
    for (int t = 0; t < kRestartTries && !sink.full(); ++t) {
        KnobMove m = random_knobs(parent.program, rng);
        if (sink.add(m.program, {parent.hash}, move) == detail::Admit::kAdded) return true;
    }
    return false;
}

class ParameterProposer : public Proposer {
public:
    std::string name() const override { return "search:parameter"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context, &memo_);
        auto parents = detail::parse_parents(context);
        if (parents.empty()) return {};
        Rng rng{context.seed * 0x51ed27ULL + 7};
        // Stalled: the best is the one of the last call, or its single moves are used up. Then
        // moves along two knobs at once go first: every mix of the two best, and two-knob
        // neighbours of the best.
        std::vector<KnobMove> singles = knob_neighbours(parents[0].program);
        int singles_new = 0;
        {
            std::set<std::string> seen(context.seen_hashes.begin(), context.seen_hashes.end());
            for (const KnobMove& m : singles)
                if (!seen.count(dsl::program_hash(m.program))) ++singles_new;
        }
        const bool stalled = parents[0].hash == last_best_ || singles_new < context.count / 2;
        last_best_ = parents[0].hash;
        if (stalled) {
            int limit = std::max(1, context.count / 3);
            for (size_t j = 1; j < parents.size() && j < 4 && limit > 0; ++j)
                for (KnobMove& m : crossovers(parents[0].program, parents[j].program)) {
                    if (limit == 0) break;
                    if (sink.add(m.program, {parents[0].hash, parents[j].hash},
                                 "mix of " + parents[0].hash.substr(0, 8) + " and " +
                                     parents[j].hash.substr(0, 8) + ": " + m.move) ==
                        detail::Admit::kAdded)
                        --limit;
                }
            std::vector<KnobMove> pairs = knob_pair_neighbours(parents[0].program);
            shuffle(pairs, rng);
            limit = std::max(1, context.count / 3);
            for (size_t i = 0; i < pairs.size() && limit > 0 && !sink.full(); ++i)
                if (sink.add(pairs[i].program, {parents[0].hash}, pairs[i].move) ==
                    detail::Admit::kAdded)
                    --limit;
        }
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
        if (rng.unit() < 0.15) random_restart(parents[0], rng, sink, "random restart");
        // neighbours: half the proposals from the best parent, then the others, then the rest
        std::vector<std::vector<KnobMove>> moves;
        moves.push_back(std::move(singles));
        shuffle(moves.back(), rng);
        for (size_t i = 1; i < parents.size() && i < 4; ++i) {
            moves.push_back(knob_neighbours(parents[i].program));
            shuffle(moves.back(), rng);
        }
        std::vector<size_t> next(moves.size(), 0);
        auto take = [&](size_t i, int limit) {
            for (int n = 0; n < limit && next[i] < moves[i].size() && !sink.full(); ++next[i]) {
                KnobMove& m = moves[i][next[i]];
                if (sink.add(m.program, {parents[i].hash}, m.move) == detail::Admit::kAdded) ++n;
            }
        };
        take(0, std::max(1, context.count / 2));
        for (size_t i = 1; i < moves.size(); ++i) take(i, std::max(1, context.count / 6));
        for (size_t i = 0; i < moves.size(); ++i) take(i, context.count);
        return sink.take();
    }

private:
    detail::LegalityMemo memo_;
    std::string last_best_;  // the best parent of the last call
};

class RandomProposer : public Proposer {
public:
    std::string name() const override { return "search:random"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context, &memo_);
        auto parents = detail::parse_parents(context);
        if (parents.empty()) return {};
        Rng rng{context.seed * 0x2545f491ULL + 3};
        // the structure of the best program, every knob uniform over its legal domain
        while (!sink.full() && random_restart(parents[0], rng, sink, "random knobs")) {
        }
        return sink.take();
    }

private:
    detail::LegalityMemo memo_;
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
