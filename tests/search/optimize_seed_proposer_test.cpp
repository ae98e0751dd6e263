// The pieces of planner/plan.h that `kforge optimize` uses for a problem without a start program:
// the one-line fusion plan it prints, and the "seed" proposer that offers the other seed variants
// once per problem, never one the run has seen.
#include <gtest/gtest.h>

#include <set>

#include "dsl/printer.h"
#include "problem/spec.h"
#include "search/proposers.h"
#include "planner/plan.h"
#include "sol/device.h"

namespace kforge {
namespace {

Problem load(const std::string& name) {
    auto p = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/" + name + ".json");
    EXPECT_TRUE(p.ok()) << name;
    return p.ok() ? *p : Problem{};
}

dsl::DeviceLimits h200() { return dsl::device_limits(*find_device("h200")); }

TEST(OptimizeSeed, FusionPlanNamesKernelsFusedOpsAndStores) {
    auto gelu = planner::seed_program(load("linear_bias_gelu_tanh_bf16"), h200());
    ASSERT_TRUE(gelu.ok()) << gelu.error().to_string();
    EXPECT_EQ(planner::describe_fusion_plan(*gelu), "k0 gemm {add b, gelu, cast bf16} -> Y");
    auto sm = planner::seed_program(load("linear_softmax_bf16"), h200());
    ASSERT_TRUE(sm.ok()) << sm.error().to_string();
    const std::string plan = planner::describe_fusion_plan(*sm);
    EXPECT_NE(plan.find("k0 gemm {"), std::string::npos) << plan;
    EXPECT_NE(plan.find("; k1 rowwise softmax"), std::string::npos) << plan;
}

TEST(OptimizeSeed, SeedProposerOffersTheUnseenVariantsOncePerProblem) {
    auto proposer = search::make_builtin_proposer("seed");
    ASSERT_NE(proposer, nullptr);
    EXPECT_EQ(proposer->name(), "search:seed");
    for (const char* name : {"linear_softmax_bf16", "swiglu_bf16"}) {
        const Problem problem = load(name);
        const auto variants = planner::seed_variants(problem, h200());
        ASSERT_GE(variants.size(), 2u) << name;
        search::ProposalContext ctx;
        ctx.problem = &problem;
        ctx.device_key = "h200";
        ctx.count = 12;
        ctx.seen_hashes = {dsl::program_hash(variants[0])};  // the start program
        const auto got = proposer->propose(ctx);
        EXPECT_EQ(got.size(), variants.size() - 1) << name;
        std::set<std::string> texts;
        for (const auto& p : got) {
            EXPECT_TRUE(texts.insert(p.program_text).second);
            EXPECT_NE(p.program_text, dsl::print_canonical(variants[0]));
            EXPECT_EQ(p.move.rfind("seed variant: k0 ", 0), 0u) << p.move;
        }
        EXPECT_TRUE(proposer->propose(ctx).empty()) << name;  // nothing new the second time
    }
}

}  // namespace
}  // namespace kforge
