// Budget inside a problem (issue 26): kernel groups (search/kernel_groups.h) and the search's
// allocation over them (search/group_budget.h), on the simulated device. The program: two
// identical relu kernels over [R,C] (one group, tuned once) and a gelu kernel over [R,F], F = 64C,
// that holds most of the time. The parameter proposer's neighbours are two thirds relu moves
// (two kernels of four knobs against one), so a uniform round would spend most of its
// proposals on the cheap group.
#include <gtest/gtest.h>

#include <map>
#include <optional>

#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "search/group_budget.h"
#include "search/kernel_groups.h"
#include "search/loop.h"
#include "search/proposers.h"

namespace kforge::search {
namespace {

constexpr const char* kSpec = R"({
  "name": "relu_relu_gelu",
  "dims": {"R": 64, "C": 1024, "F": 65536},
  "inputs": {"X": {"shape": ["R", "C"], "dtype": "f32"}, "Z": {"shape": ["R", "F"], "dtype": "f32"}},
  "graph": [
    {"op": "relu", "inputs": ["X"], "output": "A"},
    {"op": "relu", "inputs": ["A"], "output": "B"},
    {"op": "gelu", "inputs": ["Z"], "output": "Y"}
  ],
  "outputs": ["B", "Y"],
  "precision": {"policy": "fp32_strict"}
})";

constexpr const char* kStart =
    "program p for \"relu_relu_gelu\"\n"
    "kernel k0 = map(X[R,C]) block 64 vec 1 items 1\n    { relu; store A[R,C] }\n"
    "kernel k1 = map(A[R,C]) block 64 vec 1 items 1\n    { relu; store B[R,C] }\n"
    "kernel k2 = map(Z[R,F]) block 64 vec 1 items 1\n    { gelu erf; store Y[R,F] }\n";

Problem problem() {
    auto p = parse_problem(kSpec, "relu_relu_gelu");
    EXPECT_TRUE(p) << p.error().to_string();
    return *p;
}

dsl::Program start_program() {
    auto p = dsl::parse_program(kStart, "<start>");
    EXPECT_TRUE(p) << p.error().to_string();
    return *p;
}

TEST(KernelGroups, IdenticalKernelsFormOneGroupAndOthersStayApart) {
    const Problem pr = problem();
    const auto sigs = op_signatures(pr);
    auto groups = kernel_groups(start_program(), pr, sigs);
    ASSERT_EQ(groups.size(), 2u);
    EXPECT_EQ(groups[0].kernels, (std::vector<size_t>{0, 1}));
    EXPECT_EQ(groups[0].label, "k0 x2 (k0,k1)");
    EXPECT_EQ(groups[1].kernels, (std::vector<size_t>{2}));
    // knobs are no part of the identity; another chain or another shape is
    dsl::Program p = start_program();
    p.kernels[1].map.vec = 4;
    EXPECT_EQ(kernel_groups(p, pr, sigs).size(), 2u);
    p.kernels[1].chain[0].kind = dsl::ChainOpKind::kSigmoid;
    EXPECT_EQ(kernel_groups(p, pr, sigs).size(), 3u);
}

TEST(KernelGroups, AMoveOnOneMemberIsAppliedToEveryMember) {
    const Problem pr = problem();
    const dsl::Program parent = start_program();
    const auto groups = kernel_groups(parent, pr, op_signatures(pr));
    dsl::Program moved = parent;
    moved.kernels[1].map.vec = 4;  // a move on the second member
    EXPECT_TRUE(unify_groups(moved, &parent, groups));
    EXPECT_EQ(moved.kernels[0].map.vec, 4);
    EXPECT_EQ(moved.kernels[2].map.vec, 1);  // another group: untouched
    auto changed = changed_groups(parent, moved, groups);
    ASSERT_TRUE(changed);
    EXPECT_EQ(*changed, (std::vector<size_t>{0}));
}

// One search of two rounds (the start, then one round of proposals), shared by the two parts of
// the test below: the correctness gates of a 4M-element problem cost seconds on the simulated
// device (ctest runs every TEST in a process of its own).
struct GroupRun {
    std::unique_ptr<eval::Device> device;
    std::optional<Store> store;
    std::optional<SearchState> st;
    Spent spent;
    SearchOptions o;

    void go(int rounds) {
        auto d = eval::make_sim_device("h200");
        auto s = open_store(":memory:");
        ASSERT_TRUE(d && s);
        device = std::move(*d);
        store.emplace(std::move(*s));
        o.stop.max_rounds = rounds;
        o.proposals_per_round = 8;
        auto started = start_search(*device, *store, problem(), kStart, o);
        ASSERT_TRUE(started) << started.error().to_string();
        st.emplace(std::move(*started));
        auto param = make_parameter_proposer();
        ASSERT_TRUE(run_search(*st, *device, *store, {param.get()}, o, spent));
    }
};

const GroupState& group_at(const SearchState& st, size_t first_kernel) {
    for (const GroupState& g : st.groups)
        if (!g.kernels.empty() && g.kernels[0] == first_kernel) return g;
    ADD_FAILURE() << "no group at k" << first_kernel;
    return st.whole;
}

class GroupBudget : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        run_ = new GroupRun;
        run_->go(2);
    }
    static void TearDownTestSuite() {
        delete run_;
        run_ = nullptr;
    }
    void SetUp() override { ASSERT_TRUE(run_->st.has_value()) << "the shared search failed"; }
    static GroupRun* run_;
    // the round's choice among thirty proposals, on a copy of the run's state
    void allocation_follows_weights_and_a_stale_group_gets_less();
};
GroupRun* GroupBudget::run_ = nullptr;

TEST_F(GroupBudget, TheDominantGroupGetsMostProposalsGpuSecondsAndTheRoundsChoice) {
    const SearchState& st = *run_->st;
    const GroupState& relu = group_at(st, 0);
    const GroupState& gelu = group_at(st, 2);
    // the gelu kernel holds most of the time and most of the headroom
    EXPECT_GT(gelu.time_ns, relu.time_ns);
    EXPECT_GT(gelu.weight, relu.weight);
    // a uniform round would give the relu group about two thirds of the proposals (two kernels
    // of four knobs against one)
    EXPECT_GT(gelu.proposals, 2 * relu.proposals) << "gelu " << gelu.proposals << ", relu "
                                                   << relu.proposals;
    EXPECT_GT(gelu.gpu_s, relu.gpu_s);
    EXPECT_GT(gelu.evaluations, 0);
    // every candidate of the start's structure has one set of knobs for k0 and k1
    int same_structure_candidates = 0;
    for (const auto& [h, c] : st.candidates) {
        if (!c.program || c.program->kernels.size() != 3) continue;
        ++same_structure_candidates;
        EXPECT_TRUE(same_tuning_knobs(c.program->kernels[0], c.program->kernels[1])) << c.text;
    }
    EXPECT_GT(same_structure_candidates, 4);
    // the round line and the evidence carry the groups
    const std::string line = progress_line(st, run_->o, run_->spent);
    EXPECT_NE(line.find("groups: k2 "), std::string::npos) << line;
    auto j = groups_json(st);
    ASSERT_EQ(j["groups"].size(), 2u);
    EXPECT_GT(j["groups"][1]["share"].template get<double>(), 0.5);
    // the run got faster, and the gelu group with it
    EXPECT_LT(*best_time_ns(st), *start_time_ns(st));
    EXPECT_GT(gelu.start_ns, gelu.time_ns);
    // the evidence summary lists the groups
    auto summary = write_outputs(st, *run_->store, "");
    ASSERT_TRUE(summary) << summary.error().to_string();
    EXPECT_NE(summary->find("kernel groups"), std::string::npos) << *summary;
    // a resumed run finds each candidate's groups again (its GPU-seconds are not stored)
    auto resumed = resume_search(*run_->device, *run_->store, st.run_id);
    ASSERT_TRUE(resumed) << resumed.error().to_string();
    EXPECT_EQ(group_at(*resumed, 2).proposals, gelu.proposals);
    EXPECT_EQ(group_at(*resumed, 0).proposals, relu.proposals);
    EXPECT_NEAR(group_at(*resumed, 2).time_ns, gelu.time_ns, 0.05 * gelu.time_ns);
    allocation_follows_weights_and_a_stale_group_gets_less();
}

void GroupBudget::allocation_follows_weights_and_a_stale_group_gets_less() {
    SearchState st = *run_->st;
    refresh_groups(st);
    const double fresh = group_at(st, 2).weight;
    // thirty proposals, fifteen a group's: a round of ten admits mostly the hottest group's
    const dsl::Program parent = *st.candidates.at(*best_hash(st)).program;
    std::vector<Proposal> props;
    for (int v : {2, 4, 8})
        for (size_t k : {size_t{0}, size_t{2}})
            for (int block : {32, 96, 160, 224, 352}) {
                dsl::Program p = parent;
                p.kernels[k].map.vec = v;
                p.kernels[k].map.block = block;
                props.push_back({dsl::print_canonical(p), {*best_hash(st)}, "test"});
            }
    auto picked = allocate_proposals(st, props, 10, true);
    ASSERT_EQ(picked.size(), 10u);
    std::map<std::string, int> per_group;
    for (const GroupedProposal& g : picked) {
        ASSERT_EQ(g.group_keys.size(), 1u);
        ++per_group[g.group_keys[0]];
    }
    EXPECT_GE(per_group[group_at(st, 2).key], 8);
    // a move of k0 reaches k1 too (tuned once)
    for (const GroupedProposal& g : picked) {
        auto p = dsl::parse_program(g.proposal.program_text, "<picked>");
        ASSERT_TRUE(p);
        EXPECT_TRUE(same_tuning_knobs(p->kernels[0], p->kernels[1]));
    }
    // without allocation: every proposal not in the run, once
    size_t fresh_props = 0;
    for (const Proposal& p : props)
        if (!st.candidates.count(dsl::program_hash(*dsl::parse_program(p.program_text, "<p>"))))
            ++fresh_props;
    EXPECT_EQ(allocate_proposals(st, props, 10, false).size(), fresh_props);
    // a group whose moves stop improving gets less
    for (GroupState& g : st.groups)
        if (!g.kernels.empty() && g.kernels[0] == 2) g.stale_rounds = 3;
    refresh_groups(st);
    EXPECT_LT(group_at(st, 2).weight, fresh);
}

}  // namespace
}  // namespace kforge::search
