// Asking the proposers for a round's programs and admitting them into the run
// (search/loop_internal.h): the context they propose from, the static check, the store rows.
#include <algorithm>

#include "codegen/launch_knobs.h"
#include "problem/spec.h"
#include "search/candidate.h"
#include "search/group_budget.h"
#include "search/ladder.h"
#include "search/loop_internal.h"
#include "search/proposers_common.h"

namespace kforge::search::detail {
namespace {

// The time the proposers' context ranks a candidate by: its full timing, else its quick one;
// 0 when it has none or did not pass.
double ranked_time(const CandidateState& c) {
    if (c.status != EvalStatus::kPassed) return 0;
    return c.full ? c.full->median_ns : c.quick ? c.quick->median_ns : 0;
}

ProposalContext context_for(const SearchState& st, const SearchOptions& options, int count) {
    ProposalContext ctx;
    ctx.problem = &st.problem;
    ctx.bounds = &st.bounds;
    ctx.device_key = st.bounds.device;
    ctx.count = count;
    ctx.seed = options.seed * 1000003ULL + static_cast<uint64_t>(st.progress.rounds);
    std::vector<std::pair<double, std::string>> ranked;
    for (const auto& [hash, c] : st.candidates) {
        ctx.seen_hashes.push_back(hash);
        double t = ranked_time(c);
        if (t > 0) ranked.push_back({t, hash});
        else if (c.evaluated && c.status != EvalStatus::kPassed && ctx.recent_failures.size() < 4)
            ctx.recent_failures.push_back(CandidateView{c.text, hash, c.status, c.message});
    }
    std::sort(ranked.begin(), ranked.end());
    for (size_t i = 0; i < ranked.size() && i < 4; ++i) {
        const CandidateState& c = st.candidates.at(ranked[i].second);
        CandidateView v{c.text, ranked[i].second, c.status, c.message};
        v.median_ns = ranked[i].first;
        v.fraction_of_sol = st.bounds.time_fused_s * 1e9 / ranked[i].first;
        v.diagnosis = c.diagnosis;
        v.proposer = c.proposer;
        v.move = c.move;
        v.program = c.program;
        ctx.best.push_back(v);
    }
    // the kernel groups' weights (refresh_groups), by kernel name of the best program
    if (active_groups(st) >= 2 && !ctx.best.empty() && ctx.best[0].program)
        for (const GroupState& g : st.groups)
            for (size_t k : g.kernels)
                if (k < ctx.best[0].program->kernels.size())
                    ctx.kernel_focus[ctx.best[0].program->kernels[k].name] = g.weight;
    // Nothing timed yet (the start program's own compile wave): the start is the parent, with
    // no time - the proposers that need none (neighbours, seed variants) propose from it.
    if (auto it = st.candidates.find(st.start_hash);
        ctx.best.empty() && it != st.candidates.end() && !it->second.evaluated) {
        CandidateView v{it->second.text, st.start_hash, it->second.status, ""};
        v.program = it->second.program;
        ctx.best.push_back(v);
    }
    return ctx;
}

// Adds a proposal to the run; returns its hash when it passed the checker (else "").
Expected<std::string> admit(SearchState& st, Store& store, const Proposal& p,
                            const std::string& proposer, std::vector<std::string> group_keys) {
    ++st.counts.proposed;
    // parsed, printed and hashed once: the round reads the candidate's program from here on
    auto candidate = make_candidate(p.program_text, "<" + proposer + ">");
    std::string text = candidate ? candidate->text : p.program_text;
    std::string hash = candidate ? candidate->hash : content_hash(p.program_text);
    if (st.candidates.count(hash)) return std::string();
    NewCandidate nc{st.run_id, 0, text, hash, {}, proposer, p.move};
    auto pid = store.upsert_problem(st.problem.name, problem_to_json(st.problem).dump());
    if (!pid) return pid.error();
    nc.problem_id = *pid;
    for (const std::string& ph : p.parent_hashes)
        if (auto it = st.candidates.find(ph); it != st.candidates.end())
            nc.parent_ids.push_back(it->second.id);
    auto ins = store.add_candidate(nc);
    if (!ins) return ins.error();
    CandidateState& c = st.candidates[hash] = CandidateState{ins->id, text, proposer, p.move};
    c.group_keys = std::move(group_keys);
    std::string message;
    if (!candidate) {
        message = candidate.error().to_string();
    } else {
        c.program = candidate->program;
        message = detail::static_check(*c.program, st.problem, st.bounds.device, text);
    }
    if (!message.empty()) {
        if (auto s = detail::record_invalid(st, store, hash, message); !s) return s.error();
        return std::string();
    }
    ++st.counts.static_ok;
    note_proposal(st, c);
    return hash;
}

}  // namespace

// Whether any candidate is timed (the proposers have a best to start from).
bool any_timed(const SearchState& st) {
    for (const auto& [hash, c] : st.candidates)
        if (ranked_time(c) > 0) return true;
    return false;
}

// Programs asked of each built-in proposer: options.proposals_per_round, more (up to 4x) when
// the round can screen more than that at the measured costs.
int proposals_wanted(const SearchState& st, const SearchOptions& options, size_t proposers,
                     double round_s) {
    const int base = options.proposals_per_round;
    auto cap = screen_capacity(st.screen_costs, round_s);
    if (!cap || proposers == 0) return base;
    const size_t each = (std::min<size_t>(*cap, 1u << 20) + proposers - 1) / proposers;
    return static_cast<int>(std::clamp<size_t>(each, base, 4 * static_cast<size_t>(base)));
}

namespace {

// A round of launch-knob variants only needs at least this many of them.
constexpr size_t kFreeRoundMin = 4;
// ... and a last round that made the best at least 2% faster: launch-knob variants differ by
// little more than the timing noise where they do not fix a tail (raster, swizzle), and free
// rounds kept going on noise put off the moves that need a compile (on the simulated device,
// gemm_large_k_bf16 ended 1.7x slower in 30 s than without free rounds).
constexpr double kFreeRoundGain = 0.98;

// Free rounds first (issue 27): while the search's last round improved its best by 2% (or it
// had no search round yet), a round that holds at least kFreeRoundMin programs needing no
// compile of their own (launch-knob variants of compiled programs: search/knob_space.h) times
// only those,
// and the programs that need a compile wait in `pending` for a later round. The round then
// waits for no compile wave: its evaluations are quick timings (~30 ms a GEMM variant on the
// H200, 2026-12-02) where a CUTLASS wave takes ~50 s before anything of its round is timed. A
// round that did not improve the best by 2% ends the free rounds: the next one pays its wave,
// the waiting programs with it.
void defer_costly(SearchState& st, std::vector<std::string>& fresh) {
    if (codegen::launch_knobs_baked()) return;
    const std::vector<double>& h = st.progress.best_ns_by_round;
    const bool paying =
        h.size() < 2 || (h.back() > 0 && h.back() < kFreeRoundGain * h[h.size() - 2]);
    if (!paying) return;
    auto costly = [&](const std::string& hash) {
        return hash != st.start_hash && needs_compile(st, hash);
    };
    const size_t n_free = static_cast<size_t>(
        std::count_if(fresh.begin(), fresh.end(), [&](const std::string& x) { return !costly(x); }));
    if (n_free < kFreeRoundMin) return;
    for (const std::string& x : fresh)
        if (costly(x)) st.pending.push_back(x);
    std::erase_if(fresh, costly);
}

// Asks every proposer (not exhausted) for `wanted` programs (an LLM proposer for
// options.proposals_per_round: its proposals cost tokens) and admits them; the hashes that
// passed the checker are appended to `fresh`. Past the compile budget, `fresh` keeps only
// programs that need no compile (launch-knob variants of compiled ones, precompiled ones); the
// others stay in the store unevaluated (a resume with more budget takes them). When that leaves
// this round (`this_round`) nothing, the run stops, saying why.
Status propose_into(SearchState& st, Store& store, const std::vector<Proposer*>& proposers,
                    const SearchOptions& options, Spent& spent, int wanted,
                    std::vector<std::string>& fresh, bool this_round) {
    // the kernel groups of the best program and this round's weights (search/group_budget.h)
    refresh_groups(st);
    ProposalContext ctx = context_for(st, options, wanted);
    for (Proposer* proposer : proposers) {
        if (proposer->exhausted()) continue;
        ProposerUsage before = proposer->usage();
        // a built-in proposer is asked for more than the round admits where the program has
        // several kernel groups: the round chooses among them by the groups' weights (an LLM
        // proposer's programs cost tokens: all of them are admitted)
        const bool builtin = proposer->name().rfind("search:", 0) == 0;
        ctx.count = builtin ? wanted * proposal_factor(st) : options.proposals_per_round;
        std::vector<Proposal> raw = proposer->propose(ctx);
        ProposerUsage after = proposer->usage();
        spent.llm_tokens += (after.tokens_in + after.tokens_out) - (before.tokens_in + before.tokens_out);
        spent.llm_cost_usd += after.cost_usd - before.cost_usd;
        const size_t raw_count = raw.size();
        std::vector<GroupedProposal> props =
            allocate_proposals(st, std::move(raw), builtin ? static_cast<size_t>(wanted) : raw_count,
                               builtin);
        for (GroupedProposal& p : props) {
            auto hash = admit(st, store, p.proposal, proposer->name(), std::move(p.group_keys));
            if (!hash) return hash.error();
            if (!hash->empty()) fresh.push_back(*hash);
        }
    }
    if (this_round) defer_costly(st, fresh);
    if (auto why = compile_budget_spent(options.budget, spent)) {
        std::erase_if(fresh, [&](const std::string& h) {
            return h != st.start_hash && needs_compile(st, h);
        });
        if (this_round && fresh.empty())
            st.budget_stop = *why + "; no program left that needs no compile (the proposed "
                                    "launch-knob variants of the compiled programs are timed)";
    }
    return Ok{};
}

}  // namespace

Status propose(SearchState& st, Store& store, const std::vector<Proposer*>& proposers,
               const SearchOptions& options, Spent& spent, int wanted,
               std::vector<std::string>& fresh) {
    return propose_into(st, store, proposers, options, spent, wanted, fresh, true);
}

// The next round's proposals, made now (to compile them ahead of their round): they join the
// pending programs, and their hashes are returned for the precompile.
Expected<std::vector<std::string>> propose_ahead(SearchState& st, Store& store,
                                                 const std::vector<Proposer*>& proposers,
                                                 const SearchOptions& options, Spent& spent,
                                                 double round_s) {
    std::vector<std::string> next;
    if (auto s = propose_into(st, store, proposers, options, spent,
                              proposals_wanted(st, options, proposers.size(), round_s), next,
                              false);
        !s)
        return s.error();
    st.pending.insert(st.pending.end(), next.begin(), next.end());
    return next;
}

}  // namespace kforge::search::detail
