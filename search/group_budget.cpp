#include "search/group_budget.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "search/kernel_groups.h"

namespace kforge::search {
namespace {

// A group below this weight gets no proposal admitted (with many groups: half an even share).
constexpr double kMinWeight = 0.05;

GroupState* find_group(SearchState& st, const std::string& key) {
    for (GroupState& g : st.groups)
        if (g.key == key) return &g;
    return nullptr;
}

GroupState& group_for(SearchState& st, const std::string& key) {
    if (GroupState* g = find_group(st, key)) return *g;
    st.groups.push_back(GroupState{});
    st.groups.back().key = key;
    return st.groups.back();
}

const std::vector<std::string>& sigs(SearchState& st) {
    if (st.op_sigs.empty()) st.op_sigs = op_signatures(st.problem);
    return st.op_sigs;
}

// The per-kernel times of candidate `c` (computed now when its timing predates them: a resume).
const std::vector<double>& times_of(SearchState& st, CandidateState& c) {
    if (c.kernel_ns.empty() && c.program && c.status == EvalStatus::kPassed) {
        const auto& t = c.full ? c.full : c.quick;
        if (t) c.kernel_ns = kernel_times(st, *c.program, t->median_ns, {});
    }
    return c.kernel_ns;
}

double sum_at(const std::vector<double>& v, const std::vector<size_t>& idx) {
    double s = 0;
    for (size_t i : idx)
        if (i < v.size()) s += v[i];
    return s;
}

}  // namespace

std::vector<double> kernel_times(const SearchState& st, const dsl::Program& program,
                                 double median_ns, const std::vector<double>& measured) {
    if (measured.size() == program.kernels.size() && !measured.empty()) return measured;
    if (!st.cost || median_ns <= 0) return {};
    auto est = st.cost->kernel_estimates(program);
    if (!est || est->size() != program.kernels.size()) return {};
    double total = 0;
    for (const auto& e : *est) total += e.time_ns;
    if (total <= 0) return {};
    std::vector<double> out;
    for (const auto& e : *est) out.push_back(e.time_ns / total * median_ns);
    return out;
}

void refresh_groups(SearchState& st) {
    for (GroupState& g : st.groups) g.kernels.clear(), g.weight = 0, g.time_ns = 0, g.sol_ns = 0;
    auto start = st.candidates.find(st.start_hash);
    // the start's groups' times, once it is timed
    if (start != st.candidates.end() && start->second.program) {
        const std::vector<double>& t = times_of(st, start->second);
        for (const KernelGroup& kg : kernel_groups(*start->second.program, st.problem, sigs(st))) {
            GroupState& g = group_for(st, kg.key);
            if (g.start_ns <= 0) g.start_ns = sum_at(t, kg.kernels);
        }
    }
    auto best = best_hash(st);
    auto it = best ? st.candidates.find(*best) : start;
    if (it == st.candidates.end() || !it->second.program) return;
    CandidateState& c = it->second;
    const dsl::Program& p = *c.program;
    std::vector<double> times = times_of(st, c);
    std::vector<double> sol(p.kernels.size(), 0.0);
    if (st.cost)
        if (auto est = st.cost->kernel_estimates(p); est && est->size() == p.kernels.size()) {
            for (size_t i = 0; i < est->size(); ++i) sol[i] = (*est)[i].sol_ns;
            if (times.empty())  // not timed yet: the model's own times rank the groups
                for (const auto& e : *est) times.push_back(e.time_ns);
        }
    // a bound over a time (the model's work counts against a measurement) caps at it
    for (size_t i = 0; i < sol.size() && i < times.size(); ++i) sol[i] = std::min(sol[i], times[i]);
    double total = 0, raw_sum = 0;
    std::vector<GroupState*> active;
    for (const KernelGroup& kg : kernel_groups(p, st.problem, sigs(st))) {
        GroupState& g = group_for(st, kg.key);
        g.kernels = kg.kernels;
        g.label = kg.label;
        g.time_ns = sum_at(times, kg.kernels);
        g.sol_ns = sum_at(sol, kg.kernels);
        total += g.time_ns;
        active.push_back(&g);
    }
    if (total <= 0) return;
    for (GroupState* g : active) {
        g->weight = std::max(0.0, g->time_ns - g->sol_ns) / total * std::pow(0.5, g->stale_rounds);
        raw_sum += g->weight;
    }
    for (GroupState* g : active)
        g->weight = raw_sum > 0 ? g->weight / raw_sum : g->time_ns / total;
}

size_t active_groups(const SearchState& st) {
    return static_cast<size_t>(std::count_if(st.groups.begin(), st.groups.end(),
                                             [](const GroupState& g) { return !g.kernels.empty(); }));
}

int proposal_factor(const SearchState& st) { return active_groups(st) >= 2 ? 3 : 1; }

std::vector<GroupedProposal> allocate_proposals(SearchState& st, std::vector<Proposal> props,
                                                size_t wanted, bool allocate) {
    std::vector<GroupedProposal> all;
    std::vector<bool> structural;
    std::set<std::string> hashes;
    std::map<std::string, std::vector<KernelGroup>> layouts;  // by parent hash
    for (Proposal& prop : props) {
        auto parsed = dsl::parse_program(prop.program_text, "<proposal>");
        if (!parsed) {  // admitted as is: the loop records the parser's refusal
            all.push_back({std::move(prop), {}});
            structural.push_back(true);
            continue;
        }
        const CandidateState* parent = nullptr;
        if (!prop.parent_hashes.empty())
            if (auto it = st.candidates.find(prop.parent_hashes[0]);
                it != st.candidates.end() && it->second.program)
                parent = &it->second;
        const dsl::Program& base = parent ? *parent->program : *parsed;
        auto [lit, fresh] = layouts.try_emplace(parent ? prop.parent_hashes[0] : std::string());
        if (fresh || !parent) lit->second = kernel_groups(base, st.problem, sigs(st));
        const std::vector<KernelGroup>& layout = lit->second;
        if (unify_groups(*parsed, parent ? parent->program.get() : nullptr, layout)) {
            prop.program_text = dsl::print_canonical(*parsed);
            prop.move += " (tuned once: the move reused by every kernel of its group)";
        }
        const std::string hash = dsl::program_hash(*parsed);
        if (st.candidates.count(hash) || !hashes.insert(hash).second) continue;
        GroupedProposal gp{std::move(prop), {}};
        auto changed = parent ? changed_groups(*parent->program, *parsed, layout) : std::nullopt;
        if (changed)
            for (size_t g : *changed) gp.group_keys.push_back(layout[g].key);
        structural.push_back(!changed);
        all.push_back(std::move(gp));
    }
    if (!allocate || active_groups(st) < 2) return all;
    // hottest first: each group's quota of `wanted` by weight, filled in the proposers' order
    std::vector<const GroupState*> order;
    for (const GroupState& g : st.groups)
        if (!g.kernels.empty()) order.push_back(&g);
    std::stable_sort(order.begin(), order.end(),
                     [](const GroupState* a, const GroupState* b) { return a->weight > b->weight; });
    auto primary = [&](const GroupedProposal& gp) -> const GroupState* {
        for (const GroupState* g : order)  // its hottest group
            if (std::find(gp.group_keys.begin(), gp.group_keys.end(), g->key) != gp.group_keys.end())
                return g;
        return nullptr;
    };
    // The groups with proposals this round above the floor (by weight; many groups of even
    // weight all stay above it), their weights renormalized among them; the round admits as many
    // as keeps each at its weight (a hot group with few moves left makes a smaller round, not a
    // round of the cold groups' moves), at most `wanted`. When only groups under the floor have
    // proposals (a proposer whose moves are all for cold kernels), one of the hottest of them.
    const double floor =
        std::min(kMinWeight, 0.5 / static_cast<double>(std::max<size_t>(1, order.size())));
    std::map<const GroupState*, size_t> supply;
    for (const GroupedProposal& gp : all)
        if (const GroupState* g = primary(gp)) ++supply[g];
    double weight_sum = 0;
    for (const auto& [g, n] : supply)
        if (g->weight >= floor) weight_sum += g->weight;
    std::map<const GroupState*, double> share;  // eligible groups: renormalized weight
    for (const auto& [g, n] : supply)
        if (g->weight >= floor) share[g] = g->weight / weight_sum;
    if (share.empty())
        for (const GroupState* g : order)
            if (supply.count(g)) {
                share[g] = 1.0;
                wanted = std::min<size_t>(wanted, 1);
                break;
            }
    double round_size = static_cast<double>(wanted);
    for (const auto& [g, w] : share)
        round_size = std::min(round_size, static_cast<double>(supply[g]) / w);
    std::vector<bool> take(all.size(), false);
    for (size_t i = 0; i < all.size(); ++i) take[i] = structural[i];
    size_t taken = 0;
    for (const GroupState* g : order) {
        if (!share.count(g)) continue;
        const size_t quota = std::max<size_t>(1, static_cast<size_t>(std::lround(share[g] * round_size)));
        size_t mine = 0;
        for (size_t i = 0; i < all.size() && mine < quota && taken < wanted; ++i) {
            if (take[i] || primary(all[i]) != g) continue;
            take[i] = true;
            ++mine, ++taken;
        }
    }
    std::vector<GroupedProposal> out;
    for (size_t i = 0; i < all.size(); ++i)
        if (take[i]) out.push_back(std::move(all[i]));
    return out;
}

void note_proposal(SearchState& st, const CandidateState& c) {
    for (const std::string& k : c.group_keys)
        if (GroupState* g = find_group(st, k)) ++g->proposals, ++g->round_proposals;
}

void charge_group_time(SearchState& st, const CandidateState& c, double secs, bool evaluation) {
    std::vector<GroupState*> gs;
    for (const std::string& k : c.group_keys)
        if (GroupState* g = find_group(st, k)) gs.push_back(g);
    if (gs.empty()) gs.push_back(&st.whole);
    for (GroupState* g : gs) {
        g->gpu_s += secs / static_cast<double>(gs.size());
        if (evaluation) ++g->evaluations;
    }
}

void charge_wave(SearchState& st, const std::vector<std::string>& hashes, double secs) {
    std::vector<const CandidateState*> cs;
    for (const std::string& h : hashes)
        if (auto it = st.candidates.find(h); it != st.candidates.end()) cs.push_back(&it->second);
    for (const CandidateState* c : cs)
        charge_group_time(st, *c, secs / static_cast<double>(cs.size()), false);
    if (cs.empty()) st.whole.gpu_s += secs;
}

void end_group_round(SearchState& st, const std::optional<std::string>& best_before) {
    std::set<std::string> credited;
    auto best = best_hash(st);
    if (best && best != best_before)
        for (const std::string& k : st.candidates.at(*best).group_keys)
            if (GroupState* g = find_group(st, k)) {
                ++g->improvements;
                g->stale_rounds = 0;
                credited.insert(k);
            }
    for (GroupState& g : st.groups) {
        if (g.round_proposals > 0 && !credited.count(g.key)) ++g.stale_rounds;
        g.round_proposals = 0;
    }
    refresh_groups(st);
}

namespace {

// The groups of the best program, the slowest first, and their total time.
std::vector<const GroupState*> by_time(const SearchState& st, double& total) {
    std::vector<const GroupState*> order;
    total = 0;
    for (const GroupState& g : st.groups)
        if (!g.kernels.empty()) order.push_back(&g), total += g.time_ns;
    std::stable_sort(order.begin(), order.end(),
                     [](const GroupState* a, const GroupState* b) { return a->time_ns > b->time_ns; });
    return order;
}

}  // namespace

std::string groups_line(const SearchState& st, size_t top) {
    if (active_groups(st) < 2) return "";
    double total = 0;
    const std::vector<const GroupState*> order = by_time(st, total);
    std::string out = "groups:";
    for (size_t i = 0; i < order.size() && i < top; ++i) {
        const GroupState& g = *order[i];
        char b[256];
        std::snprintf(b, sizeof b, "%s %s %.0f%% w%.2f %.1fs %.2fx", i ? ";" : "", g.label.c_str(),
                      total > 0 ? 100 * g.time_ns / total : 0.0, g.weight, g.gpu_s,
                      g.start_ns > 0 && g.time_ns > 0 ? g.start_ns / g.time_ns : 1.0);
        out += b;
    }
    if (order.size() > top) out += "; +" + std::to_string(order.size() - top) + " more";
    return out;
}

std::string groups_text(const SearchState& st, size_t top) {
    if (active_groups(st) < 2) return "";
    double total = 0;
    const std::vector<const GroupState*> order = by_time(st, total);
    std::string out = "kernel groups (share of the best's time, % of the group's bound, gain vs "
                      "the start, proposals, GPU-seconds):\n";
    for (size_t i = 0; i < order.size() && i < top; ++i) {
        const GroupState& g = *order[i];
        char b[320];
        std::snprintf(b, sizeof b, "  %-24s %5.1f%%  %5.1f%% of bound  %.2fx  %lld proposals  %.1f s\n",
                      g.label.c_str(), total > 0 ? 100 * g.time_ns / total : 0.0,
                      g.time_ns > 0 ? 100 * g.sol_ns / g.time_ns : 0.0,
                      g.start_ns > 0 && g.time_ns > 0 ? g.start_ns / g.time_ns : 1.0,
                      static_cast<long long>(g.proposals), g.gpu_s);
        out += b;
    }
    if (order.size() > top) out += "  ... " + std::to_string(order.size() - top) + " more in evidence.json\n";
    return out;
}

void restore_groups(SearchState& st, const std::map<std::string, std::string>& parent_of) {
    refresh_groups(st);
    std::map<std::string, std::vector<KernelGroup>> layouts;
    for (auto& [hash, c] : st.candidates) {
        auto pit = parent_of.find(hash);
        if (pit == parent_of.end() || !c.program) continue;
        auto parent = st.candidates.find(pit->second);
        if (parent == st.candidates.end() || !parent->second.program) continue;
        auto [lit, fresh] = layouts.try_emplace(pit->second);
        if (fresh) lit->second = kernel_groups(*parent->second.program, st.problem, sigs(st));
        c.group_keys.clear();
        if (auto changed = changed_groups(*parent->second.program, *c.program, lit->second))
            for (size_t g : *changed) {
                c.group_keys.push_back(lit->second[g].key);
                group_for(st, lit->second[g].key);
            }
        if (c.status != EvalStatus::kInvalidProgram) note_proposal(st, c);
    }
    for (GroupState& g : st.groups) g.round_proposals = 0;
    refresh_groups(st);
}

nlohmann::ordered_json groups_json(const SearchState& st) {
    nlohmann::ordered_json out;
    out["groups"] = nlohmann::ordered_json::array();
    double total = 0;
    for (const GroupState& g : st.groups)
        if (!g.kernels.empty()) total += g.time_ns;
    for (const GroupState& g : st.groups) {
        nlohmann::ordered_json j;
        j["label"] = g.label;
        j["kernels"] = g.kernels;
        j["in_best"] = !g.kernels.empty();
        j["time_ns"] = g.time_ns;
        j["share"] = total > 0 ? g.time_ns / total : 0.0;
        j["sol_ns"] = g.sol_ns;
        j["start_ns"] = g.start_ns;
        j["gain_vs_start"] = g.start_ns > 0 && g.time_ns > 0 ? g.start_ns / g.time_ns : 1.0;
        j["weight"] = g.weight;
        j["proposals"] = g.proposals;
        j["evaluations"] = g.evaluations;
        j["gpu_s"] = g.gpu_s;
        j["improvements"] = g.improvements;
        j["stale_rounds"] = g.stale_rounds;
        j["key"] = g.key;
        out["groups"].push_back(std::move(j));
    }
    out["whole_program"] = {{"gpu_s", st.whole.gpu_s}, {"evaluations", st.whole.evaluations}};
    // the problem's GPU-seconds the search attributed (its evaluations, compile waves and waits
    // for them; a suite's shared start wave is not in it)
    double attributed = st.whole.gpu_s;
    for (const GroupState& g : st.groups) attributed += g.gpu_s;
    out["attributed_gpu_s"] = attributed;
    return out;
}

}  // namespace kforge::search
