// The fusion planner and row reductions with an element-wise prologue (planner/partition.cpp):
// a matmul with a vector operand plans as ONE row sum `pre { mul v }` (not a GEMM with N = 1),
// and an element-wise run whose only consumer is a sum/mean/max/min over the last dim folds
// into that reduction as its prologue (the element-wise result is never written). The seeded
// programs check, lower, and pass the gated pipeline on the simulated device.
#include <gtest/gtest.h>

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

Problem spec(const std::string& json) {
    auto p = parse_problem(json, "spec");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// KernelBench's matvec (examples/kernelbench/18_matvec.py) at a small shape.
Problem matvec(int64_t k = 4096, const std::string& dtype = "f32") {
    nlohmann::json j = nlohmann::json::parse(R"({"name": "matvec", "dims": {"M": 96},
        "inputs": {"A": {"shape": ["M", "K"]}, "B": {"shape": ["K", 1]}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict"}})");
    j["dims"]["K"] = k;
    j["inputs"]["A"]["dtype"] = dtype;
    j["inputs"]["B"]["dtype"] = dtype;
    if (dtype != "f32") j["precision"]["policy"] = "bf16";
    return spec(j.dump());
}

// mean((P - T)^2) over the last dim, then over the rows (the importer's mse_loss).
Problem mse() {
    return spec(R"({"name": "mse", "dims": {"R": 32, "C": 2048},
        "inputs": {"P": {"shape": ["R", "C"], "dtype": "f32"},
                   "T": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "sub", "inputs": ["P", "T"], "output": "D"},
                  {"op": "square", "inputs": ["D"], "output": "S"},
                  {"op": "mean", "inputs": ["S"], "output": "Y", "axis": -1},
                  {"op": "mean", "inputs": ["Y"], "output": "Z", "axis": -1}],
        "outputs": ["Z"], "precision": {"policy": "fp32_strict"}})");
}


TEST(RowProloguePlan, MatvecIsOneRowSum) {
    const std::string text = seed_checked(matvec());
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "rowwise sum(A[M,K]) pre { mul B[K,1] }")) << text;
    EXPECT_TRUE(has(text, "{ store C[M,1] }")) << text;
    EXPECT_FALSE(has(text, "gemm")) << text;
    auto prog = planner::seed_program(matvec(), h200());
    ASSERT_TRUE(prog.ok());
    EXPECT_EQ(planner::describe_fusion_plan(*prog), "k0 rowwise sum pre {mul B} -> C");
    // bf16 operands too (f32 accumulation, the output cast back).
    const std::string bf = seed_checked(matvec(4096, "bf16"));
    EXPECT_TRUE(has(bf, "pre { mul B[K,1] }")) << bf;
    EXPECT_TRUE(has(bf, "{ cast bf16; store C[M,1] }")) << bf;
}

// As `kforge import` writes 18_matvec.py: the N of 1 is a named dim.
Problem matvec_named_n(int64_t k = 4096) {
    nlohmann::json j = nlohmann::json::parse(R"({"name": "matvec_n", "dims": {"M": 96, "N": 1},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
                   "B": {"shape": ["K", "N"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict"}})");
    j["dims"]["K"] = k;
    return spec(j.dump());
}

TEST(RowProloguePlan, MatvecWithANamedUnitDimIsOneRowSum) {
    const std::string text = seed_checked(matvec_named_n());
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "rowwise sum(A[M,K]) pre { mul B[K,N] }")) << text;
    EXPECT_TRUE(has(text, "{ store C[M,N] }")) << text;
}

TEST(RowProloguePlan, ShortKAndUnfusedStayGemms) {
    EXPECT_TRUE(has(seed_checked(matvec_named_n(32)), "gemm(A[M,K], B[K,N])"));
    planner::SeedOptions unfused;
    unfused.fuse = false;
    EXPECT_TRUE(has(seed_checked(matvec_named_n(), unfused), "gemm(A[M,K], B[K,N])"));
}

TEST(RowProloguePlan, VectorTimesTransposedMatrixIsARowSumOfTheMatrix) {
    // y[1,N] = x[1,K] @ W[N,K]^T: the rows of W are reduced, x is the prologue's operand.
    const Problem p = spec(R"({"name": "vecmat", "dims": {"N": 128, "K": 1024},
        "inputs": {"x": {"shape": [1, "K"], "dtype": "f32"}, "W": {"shape": ["N", "K"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["x", "W"], "output": "y", "transpose_b": true}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "rowwise sum(W[N,K]) pre { mul x[1,K] }")) << text;
}

TEST(RowProloguePlan, MapRunFoldsIntoItsReduction) {
    const std::string text = seed_checked(mse());
    EXPECT_EQ(kernels(text), 2u) << text;  // the row means, then the mean of those
    EXPECT_TRUE(has(text, "rowwise mean(P[R,C]) pre { sub T[R,C]; square }")) << text;
    EXPECT_FALSE(has(text, "map(")) << text;
    EXPECT_FALSE(has(text, "store S[")) << text;
    EXPECT_FALSE(has(text, "store D[")) << text;
}

// The smooth L1 loss as the importer writes it: |d| is read twice (a let-region on a map).
Problem huber() {
    return spec(R"({"name": "huber", "dims": {"R": 32, "C": 2048},
        "inputs": {"P": {"shape": ["R", "C"], "dtype": "f32"},
                   "T": {"shape": ["R", "C"], "dtype": "f32"}},
        "graph": [{"op": "sub", "inputs": ["P", "T"], "output": "D"},
                  {"op": "abs", "inputs": ["D"], "output": "A"},
                  {"op": "min_scalar", "inputs": ["A"], "output": "M", "value": 1.0},
                  {"op": "square", "inputs": ["M"], "output": "Q"},
                  {"op": "scale", "inputs": ["Q"], "output": "Q2", "value": 0.5},
                  {"op": "sub", "inputs": ["A", "M"], "output": "L"},
                  {"op": "add", "inputs": ["Q2", "L"], "output": "H"},
                  {"op": "mean", "inputs": ["H"], "output": "Y", "axis": 1},
                  {"op": "mean", "inputs": ["Y"], "output": "Z", "axis": 0}],
        "outputs": ["Z"], "precision": {"policy": "fp32_strict"}})");
}

TEST(RowProloguePlan, MapRegionWithNamedValuesFoldsIntoItsReduction) {
    const std::string text = seed_checked(huber());
    EXPECT_EQ(kernels(text), 2u) << text;
    EXPECT_TRUE(has(text, "rowwise mean(P[R,C]) pre { sub T[R,C]; abs; let v0;")) << text;
    EXPECT_FALSE(has(text, "map(")) << text;
    EXPECT_FALSE(has(text, "store H[")) << text;
}

TEST(RowProloguePlan, NoFoldWhereTheElementWiseValueIsReadElsewhere) {
    // S is also an output: it must be stored, so the map stays.
    auto j = problem_to_json(mse());
    j["outputs"] = {"S", "Z"};
    const std::string text = seed_checked(spec(j.dump()));
    EXPECT_TRUE(has(text, "map(")) << text;
    EXPECT_FALSE(has(text, "pre {")) << text;
    // A column reduction (over the rows) takes no prologue.
    auto c = problem_to_json(mse());
    c["graph"][2]["axis"] = 0;
    c["graph"][3]["axis"] = 0;
    const std::string col = seed_checked(spec(c.dump()));
    EXPECT_FALSE(has(col, "pre {")) << col;
}

// The gated pipeline (correctness against the fp64 interpreter, then timing) on the simulated
// device passes for the one-kernel plans.
TEST(RowProloguePlan, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {matvec(), matvec_named_n(), mse(), huber()}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        ASSERT_TRUE(has(req.program_text, "pre {")) << req.program_text;
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << p.name << ": " << r.message;
        EXPECT_TRUE(r.simulated);
    }
}

}  // namespace
}  // namespace kforge
