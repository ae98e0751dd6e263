// The fusion planner with named values (planner/partition.cpp): element-wise patterns that read
// a value twice (x*0.5 + x after a gemm, softsign and ELU on a map) plan as ONE kernel whose
// chain names the value (`let`), where the planner without names made two; the seeded program
// checks, lowers, and passes the gated pipeline on the simulated device. The specs are the
// GPU benchmark's (bench/kernels/letval/), at small shapes.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"
#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::has;
using seedtest::h200;
using seedtest::kernels;
using seedtest::seed_checked;

// bench/kernels/letval/<name>.json with `dims` replaced (small shapes for the fp64 reference).
Problem bench_spec(const std::string& name, const nlohmann::json& dims) {
    std::ifstream in(std::string(KFORGE_SOURCE_DIR) + "/bench/kernels/letval/" + name + ".json");
    std::stringstream text;
    text << in.rdbuf();
    auto j = nlohmann::json::parse(text.str());
    j["dims"] = dims;
    auto p = parse_problem(j.dump(), name);
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

Problem self_residual() { return bench_spec("linear_self_residual_bf16", {{"M", 256}, {"N", 256}, {"K", 128}}); }
Problem softsign() { return bench_spec("softsign_f32", {{"R", 64}, {"C", 512}}); }
Problem elu() { return bench_spec("elu_f32", {{"R", 64}, {"C", 512}}); }

// The seeded program's canonical text, after it re-parses, checks and lowers.

TEST(LetValuePlan, GemmScaleAddItselfIsOneKernel) {
    const std::string text = seed_checked(self_residual());
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "{ add b[N]; let v0; mul 0.5; add v0; cast bf16; store Y[M,N] }")) << text;
}

TEST(LetValuePlan, SoftsignOnAMapIsOneKernelReadingXOnce) {
    const std::string text = seed_checked(softsign());
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "map(X[R,C])")) << text;
    EXPECT_TRUE(has(text, "{ let v0; abs; add 1; rdiv v0; store Y[R,C] }")) << text;
    auto prog = planner::seed_program(softsign(), h200());
    ASSERT_TRUE(prog.ok());
    EXPECT_EQ(planner::describe_fusion_plan(*prog), "k0 map {let v0, abs, add, rdiv v0} -> Y");
}

TEST(LetValuePlan, EluBranchesAreOneKernel) {
    const std::string text = seed_checked(elu());
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "{ let v0; relu; let v1; use v0; exp; add -1; mul 1; min 0; add v1; "
                          "store Y[R,C] }"))
        << text;
}

TEST(LetValuePlan, RowwiseResultReadTwiceIsOneKernel) {
    auto p = parse_problem(R"({"name": "softmax_square", "dims": {"R": 64, "C": 1024},
        "inputs": {"X": {"shape": ["R", "C"], "dtype": "bf16"}},
        "graph": [{"op": "softmax", "inputs": ["X"], "output": "S"},
                  {"op": "square", "inputs": ["S"], "output": "Q"},
                  {"op": "add", "inputs": ["Q", "S"], "output": "Y"}],
        "outputs": ["Y"], "precision": {"policy": "bf16"}})",
                           "softmax_square");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const std::string text = seed_checked(*p);
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "{ let v0; square; add v0; cast bf16; store Y[R,C] }")) << text;
}

TEST(LetValuePlan, UnfusedStaysOneKernelPerOp) {
    planner::SeedOptions unfused;
    unfused.fuse = false;
    EXPECT_EQ(kernels(seed_checked(softsign(), unfused)), 3u);
    EXPECT_EQ(kernels(seed_checked(self_residual(), unfused)), 3u);
}

// A gemm chain stores once, at its end: where the named value is also a problem output the
// region has two values to store and the planner keeps the linear plan (gemm + map).
TEST(LetValuePlan, GemmWithTheNamedValueAlsoAnOutputSplits) {
    auto j = problem_to_json(self_residual());
    j["outputs"] = {"H", "Y"};
    auto p = parse_problem(j.dump(), "two_outputs");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const std::string text = seed_checked(*p);
    EXPECT_EQ(kernels(text), 2u) << text;
    EXPECT_TRUE(has(text, "store H[M,N] }")) << text;
}

// A map region stores every value the rest of the program reads: softsign whose 1 + |x| is also
// an output stores D mid-chain and goes on.
TEST(LetValuePlan, MapRegionStoresValuesReadOutside) {
    auto j = problem_to_json(softsign());
    j["outputs"] = {"D", "Y"};
    auto p = parse_problem(j.dump(), "softsign_two_outputs");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const std::string text = seed_checked(*p);
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "{ let v0; abs; add 1; store D[R,C]; rdiv v0; store Y[R,C] }")) << text;
}

// The gated pipeline (correctness against the fp64 interpreter, then timing) on the simulated
// device passes for each one-kernel plan.
TEST(LetValuePlan, OneKernelPlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {self_residual(), softsign(), elu()}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        ASSERT_EQ(kernels(req.program_text), 1u) << req.program_text;
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << p.name << ": " << r.message;
        EXPECT_TRUE(r.simulated);
        bool correctness = false;
        for (const auto& g : r.gates) correctness |= g.gate.rfind("correctness", 0) == 0 && g.passed;
        EXPECT_TRUE(correctness) << p.name;
    }
}

}  // namespace
}  // namespace kforge
