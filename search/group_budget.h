// Budget inside a problem (issue 26): the search works per kernel group (search/kernel_groups.h),
// hottest first. Each round weighs the groups of the best program by their share of its time
// times their SOL headroom - (time - roofline bound) / program time - halved for every round
// in which the group had proposals and none of them made a new best; the built-in proposers are
// asked for more programs than the round admits, and the round admits them by those weights
// (the hottest group's quota filled first, in the proposers' own order; a hot group with few
// moves left makes the round smaller rather than handing its share to the cold groups; a group
// under 5% of the weight gets none, and a proposer whose moves are all for such groups gets one
// admitted). The parameter proposer puts the moves of the heavier
// groups' kernels first (ProposalContext::kernel_focus). A move on one member of a group is applied to every member (tuned
// once, reused), and each accepted change is confirmed by the loop's timing of the whole program.
// The state keeps, per group, the proposals, evaluations and GPU-seconds it took and its time
// in the start and the best program: the round line and evidence.json show them.
//
// A group's time: the per-kernel times of the best program's last timing - the device's own
// per-kernel times where the evaluation reports them, else the cost model's per-kernel
// estimates (perfmodel/sim_model.h, refitted) scaled to the measured total.
#pragma once

#include <nlohmann/json.hpp>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "search/loop.h"

namespace kforge::search {

// Per kernel of `program` timed at `median_ns` in all: `measured` when it has one time per
// kernel, else the cost model's shares of `median_ns`; empty when neither is known.
std::vector<double> kernel_times(const SearchState& st, const dsl::Program& program,
                                 double median_ns, const std::vector<double>& measured);

// Lays the groups out on the best program (else the start), with their times, bounds and this
// round's weights; groups seen before keep their counters.
void refresh_groups(SearchState& st);

// The number of current groups (kernels of the best program in some group).
size_t active_groups(const SearchState& st);

// How many more programs a round asks of a built-in proposer than it admits: 3 when the best
// program has two groups or more (the round chooses among them by weight), else 1.
int proposal_factor(const SearchState& st);

struct GroupedProposal {
    Proposal proposal;
    std::vector<std::string> group_keys;  // the groups it moves; empty: the whole program
};

// The proposals of one proposer, each made uniform over its groups (unify_groups against its
// first parent; the move says so), classified by the groups they move, without those already
// in the run or repeated; with `allocate`, at most `wanted` of them that move groups, chosen by
// the groups' weights (every proposal of another structure is kept).
std::vector<GroupedProposal> allocate_proposals(SearchState& st, std::vector<Proposal> props,
                                                size_t wanted, bool allocate);

// An admitted proposal of `c`'s groups (their proposal counters).
void note_proposal(SearchState& st, const CandidateState& c);

// `secs` of GPU time spent on candidate `c` (an evaluation, `evaluation` true) or on compiling
// it (a share of a compile wave): to its groups, split evenly, else to the whole program.
void charge_group_time(SearchState& st, const CandidateState& c, double secs, bool evaluation);

// A compile wave of `hashes` that took `secs`: an even share to each program's groups.
void charge_wave(SearchState& st, const std::vector<std::string>& hashes, double secs);

// Ends a round: the groups of a new best (the best was `best_before`) are credited; the groups
// that had proposals and no new best grow stale; the layout and weights are refreshed.
void end_group_round(SearchState& st, const std::optional<std::string>& best_before);

// The round line's part: the hottest `top` groups "k3 x4 (k3,k7,..) 62% w0.70 12.1s 1.31x"
// (share of the best's time, weight, GPU-seconds, gain vs the start); "" with under two groups.
std::string groups_line(const SearchState& st, size_t top = 3);

// The evidence summary's lines: every group of the best program, hottest first (at most `top`):
// share of the best's time, % of its bound, gain vs the start, proposals and GPU-seconds; "" with
// under two groups.
std::string groups_text(const SearchState& st, size_t top = 8);

// After a resume: each candidate's groups recomputed against its first parent (`parent_of`:
// candidate hash -> its first parent's hash) and counted as its group's proposal. The
// GPU-seconds spent before the resume are not in the store: the counters start at zero.
void restore_groups(SearchState& st, const std::map<std::string, std::string>& parent_of);

// Every group of the run (evidence.json "kernel_groups"): label, members, time, share, SOL,
// start time, gain, weight, proposals, evaluations, GPU-seconds, improvements; and `whole`.
nlohmann::ordered_json groups_json(const SearchState& st);

}  // namespace kforge::search
