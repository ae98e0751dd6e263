// The parameter proposer and the random proposer (search/proposers.h).
#include <algorithm>
#include <map>
#include <optional>

#include "codegen/launch_knobs.h"
#include "search/proposers.h"
#include "search/proposers_common.h"

namespace kforge::search {
namespace {

template <typename T>
void shuffle(std::vector<T>& v, Rng& rng) {
    for (size_t i = v.size(); i > 1; --i) std::swap(v[i - 1], v[rng.uniform(0, i - 1)]);
}

// Draws per kernel of the random restart before it gives up on that kernel: random knob
// settings are legal by the knob tables, mostly not by the checker (rows_per_block 61 with
// threads 480; about one draw in a hundred passes for a row-wise kernel, fewer for a GEMM). A
// check costs tens of microseconds.
constexpr int kRestartTries = 1000;

// A random legal program of the structure of `parent`, added to the sink; false when none new
// was found. The kernels are drawn one at a time, each until the program with it passes the
// static tier (the others as drawn so far): a draw of every kernel at once passes with the
// product of their chances, and for a GEMM with a row-wise kernel (linear_logsumexp on the H200)
// 1000 such draws found none, so the random proposer stopped after 3 programs.
// With a kernel focus (ProposalContext::kernel_focus: several kernel groups), one group is
// restarted, drawn by weight (its kernels: those of the drawn kernel's weight), the others kept:
// a restart of every group at once is no move of any one group (issue 26).
bool random_restart(const detail::Parent& parent, Rng& rng, detail::ProposalSink& sink,
                    const std::string& move, const std::map<std::string, double>* focus = nullptr) {
    const size_t kernels = parent.program.kernels.size();
    auto weight = [&](size_t i) {
        auto it = focus->find(parent.program.kernels[i].name);
        return it == focus->end() ? 0.0 : it->second;
    };
    for (int attempt = 0; attempt < 4 && !sink.full(); ++attempt) {
        dsl::Program p = parent.program;
        std::optional<double> group;  // the drawn group's weight
        if (focus && !focus->empty()) {
            double sum = 0;
            for (size_t i = 0; i < kernels; ++i) sum += weight(i);
            double r = rng.unit() * sum;
            for (size_t i = 0; i < kernels && !group; ++i)
                if ((r -= weight(i)) <= 0 || i + 1 == kernels) group = weight(i);
        }
        for (size_t i = 0; i < kernels; ++i)
            for (int t = 0; t < kRestartTries && (!group || weight(i) == *group); ++t) {
                KnobMove m = random_kernel_knobs(p, i, rng);
                if (!sink.legal(m.program)) continue;
                p = std::move(m.program);
                break;
            }
        if (sink.add(p, {parent.hash}, move) == detail::Admit::kAdded) return true;
    }
    return false;
}

// Mixes of the best with each of the next few parents (every setting of the knobs where they
// differ, search/knob_space.h crossovers), up to `limit` new ones.
void offer_mixes(const std::vector<detail::Parent>& parents, detail::ProposalSink& sink, int limit) {
    const detail::Parent& best = parents[0];
    int added = 0;
    for (size_t j = 1; j < parents.size() && j < 4 && added < limit; ++j)
        for (const KnobMove& m : crossovers(best.program, parents[j].program)) {
            if (added == limit || sink.full()) break;
            if (sink.add(m.program, {best.hash, parents[j].hash},
                         "mix of " + best.hash.substr(0, 8) + " and " +
                             parents[j].hash.substr(0, 8) + ": " + m.move) == detail::Admit::kAdded)
                ++added;
        }
}

// Moves along two knobs of the best: every mix of the best with each of the next few (a move
// of one and a move of another, made together), trades (one integer knob doubled, another
// halved), then other two-knob neighbours at random; each kind up to a share of `count`.
void two_knob_moves(const std::vector<detail::Parent>& parents, Rng& rng,
                    detail::ProposalSink& sink, int count, const ProposalContext& context) {
    const detail::Parent& best = parents[0];
    // Adds moves of `ms` until `left` of them were new and legal; returns what is left.
    auto offer = [&](const std::vector<KnobMove>& ms, int left,
                     const std::vector<std::string>& from, const std::string& prefix) {
        for (size_t i = 0; i < ms.size() && left > 0 && !sink.full(); ++i)
            if (sink.add(ms[i].program, from, prefix + ms[i].move) == detail::Admit::kAdded) --left;
        return left;
    };
    const int share = std::max(1, count / 3);
    offer_mixes(parents, sink, share);
    std::vector<KnobMove> trades = knob_trades(best.program);
    shuffle(trades, rng);
    detail::focus_order(trades, context);
    offer(trades, share, {best.hash}, "");
    std::vector<KnobMove> pairs = knob_pair_neighbours(best.program);
    shuffle(pairs, rng);
    detail::focus_order(pairs, context);
    offer(pairs, share, {best.hash}, "");
}

// Free moves first (search/knob_space.h free_neighbours: launch knobs only, so each shares its
// parent's compile and costs a quick timing, not a ~50 s CUTLASS compile): the free neighbours
// of the best few parents - each timed, so compiled - up to `limit` new ones, most from the
// best. A GEMM's raster x swizzle x split space of one compiled configuration is 12-100 points:
// on the H200 a compile wave of ~50 s bought one round of 12 GEMM proposals (2026-12-01).
int free_moves(const std::vector<detail::Parent>& parents, Rng& rng, detail::ProposalSink& sink,
               int limit, const ProposalContext& context) {
    int added = 0;
    for (size_t i = 0; i < parents.size() && i < 4 && added < limit && !sink.full(); ++i) {
        std::vector<KnobMove> moves = free_neighbours(parents[i].program);
        shuffle(moves, rng);
        detail::focus_order(moves, context);
        const int share = i == 0 ? limit : std::max(1, limit / 4);  // most from the best
        int taken = 0;
        for (size_t m = 0; m < moves.size() && taken < share && added < limit && !sink.full(); ++m)
            if (sink.add(moves[m].program, {parents[i].hash}, "free: " + moves[m].move) ==
                detail::Admit::kAdded)
                ++taken, ++added;
    }
    return added;
}

class ParameterProposer : public Proposer {
public:
    std::string name() const override { return "search:parameter"; }

    std::vector<Proposal> propose(const ProposalContext& context) override {
        detail::ProposalSink sink(context, &memo_);
        auto parents = detail::parse_parents(context);
        if (parents.empty()) return {};
        Rng rng{context.seed * 0x51ed27ULL + 7};
        // Launch-knob moves of compiled parents first, most of the request: they cost an
        // evaluation each; what they leave goes to moves that need a compile.
        if (!codegen::launch_knobs_baked())
            free_moves(parents, rng, sink, std::max(1, context.count * 3 / 4), context);
        // Stalled: the best is the one of the last call. Then moves along two knobs go first;
        // otherwise they fill what the single moves leave of the request.
        const bool stalled = parents[0].hash == last_best_;
        last_best_ = parents[0].hash;
        if (stalled) two_knob_moves(parents, rng, sink, context.count, context);
        // Improvements made together: the best mixed with each of the next few (two single moves
        // of one parent, each faster, meet as the parent moved along both). On the H200, mish's
        // items 2 -> 4 and block 256 -> 512 each gained; the round that would have joined them
        // spent the budget on single moves of the best first.
        if (!stalled) offer_mixes(parents, sink, std::max(1, context.count / 4));
        // crossover of the two best parents that share a structure
        for (size_t j = 1; j < parents.size() && j < 4; ++j) {
            if (!same_structure(parents[0].program, parents[j].program)) continue;
            if (auto m = crossover(parents[0].program, parents[j].program, rng))
                sink.add(m->program, {parents[0].hash, parents[j].hash},
                         "crossover of " + parents[0].hash.substr(0, 8) + " and " +
                             parents[j].hash.substr(0, 8));
            break;
        }
        // Coarse before fine: the first calls spend a share of the request on random restarts
        // over the whole legal space (a local optimum the start sits near is not the only one:
        // on the H200, mish's best was block 896 grid_stride, 20 single moves from the seed's
        // block 256, found by random sampling while the neighbours stopped at block 384); later
        // a restart now and then, to leave a local optimum.
        const int explore = calls_ < kExploreCalls ? std::max(1, context.count / 4)
                                                   : (rng.unit() < 0.15 ? 1 : 0);
        ++calls_;
        for (int n = 0; n < explore; ++n)
            if (!random_restart(parents[0], rng, sink, "random restart", &context.kernel_focus)) break;
        // neighbours: half the proposals from the best parent, then the others, then the rest
        std::vector<std::vector<KnobMove>> moves;
        for (size_t i = 0; i < parents.size() && i < 4; ++i) {
            moves.push_back(knob_neighbours(parents[i].program));
            shuffle(moves.back(), rng);
            detail::focus_order(moves.back(), context);  // the hot kernel groups' moves first
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
        take(0, context.count);  // the best's single moves, all of them, before two-knob ones
        if (!stalled && !sink.full()) two_knob_moves(parents, rng, sink, context.count, context);
        for (size_t i = 1; i < moves.size(); ++i) take(i, context.count);
        // everything within two knobs of the best was tried: restart elsewhere rather than stop
        if (sink.size() == 0)
            for (int n = 0; n < std::max(1, context.count / 4); ++n)
                if (!random_restart(parents[0], rng, sink, "random restart (neighbourhood used up)",
                                    &context.kernel_focus))
                    break;
        return sink.take();
    }

private:
    static constexpr int kExploreCalls = 2;  // calls that explore (the start wave and round 2)
    detail::LegalityMemo memo_;
    std::string last_best_;  // the best parent of the last call
    int calls_ = 0;
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
