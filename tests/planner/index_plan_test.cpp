// The index and mask ops through the planner, the checker and the lowering (issue 25): argmax /
// argmin as one rowwise kernel storing int64 indices (the row form over the last dim, the column
// form over a leading dim), cross_entropy as one rowwise kernel of two launches (row losses into
// a workspace, then their mean), and a masked cumsum (x * bool mask, then cumsum) reading the
// mask as a bool chain operand. The seeded programs check and lower, the lowered CUDA names the
// kernels it should, a wrong program is refused, and each passes the gated pipeline on the
// simulated device (a labelled test double: the fp64 interpreter plus the time model).
#include <gtest/gtest.h>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluator.h"
#include "problem/spec.h"
#include "planner/plan.h"
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

// KernelBench level 1, problem 51's form (argmax over dim 1 of [B, D1, D2]) at a small shape,
// plus argmin over the last dim.
Problem argmax() {
    return spec(R"({"name": "argmax", "dims": {"B": 4, "D1": 96, "D2": 33},
        "inputs": {"x": {"shape": ["B", "D1", "D2"], "dtype": "f32"}},
        "graph": [{"op": "argmax", "inputs": ["x"], "output": "am", "axis": 1},
                  {"op": "argmin", "inputs": ["x"], "output": "an", "axis": -1}],
        "outputs": ["am", "an"], "precision": {"policy": "fp32_strict"}})");
}

Problem cross_entropy() {
    return spec(R"({"name": "ce", "dims": {"N": 64, "C": 1000},
        "inputs": {"logits": {"shape": ["N", "C"], "dtype": "f32"},
                   "targets": {"shape": ["N"], "dtype": "i64"}},
        "graph": [{"op": "cross_entropy", "inputs": ["logits", "targets"], "output": "loss"}],
        "outputs": ["loss"], "precision": {"policy": "fp32_strict"}})");
}

Problem masked_cumsum() {
    return spec(R"({"name": "masked_cumsum", "dims": {"B": 16, "L": 1000},
        "inputs": {"x": {"shape": ["B", "L"], "dtype": "f32"},
                   "mask": {"shape": ["B", "L"], "dtype": "bool"}},
        "graph": [{"op": "mul", "inputs": ["x", "mask"], "output": "t"},
                  {"op": "cumsum", "inputs": ["t"], "output": "y", "axis": 1}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

std::string lowered_source(const Problem& p, const std::string& text) {
    auto parsed = dsl::parse_program(text, "seed.kf");
    if (!parsed.ok()) return "";
    auto low = codegen::lower_program(*parsed, p, codegen::LowerOptions{});
    return low.ok() ? low->cuda_source : "";
}

TEST(IndexPlan, ArgmaxArgminRowAndColumnForms) {
    const Problem p = argmax();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 2u) << text;
    EXPECT_TRUE(has(text, "rowwise argmax(x[B,D1,D2])")) << text;
    EXPECT_TRUE(has(text, "over D1")) << text;
    EXPECT_TRUE(has(text, "{ store am[B,D2] }")) << text;
    EXPECT_TRUE(has(text, "rowwise argmin(x[B,D1,D2])")) << text;
    const std::string src = lowered_source(p, text);
    EXPECT_TRUE(has(src, "kforge::arg_reduce_cols<true>")) << src;
    EXPECT_TRUE(has(src, "kforge::arg_reduce_rows<false")) << src;
    EXPECT_TRUE(has(src, "int64_t* __restrict__ t_am")) << src;
}

TEST(IndexPlan, CrossEntropyIsOneKernelOfTwoLaunches) {
    const Problem p = cross_entropy();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 1u) << text;
    EXPECT_TRUE(has(text, "rowwise cross_entropy(logits[N,C], targets[N])")) << text;
    EXPECT_TRUE(has(text, "{ store loss[] }")) << text;
    auto parsed = dsl::parse_program(text, "seed.kf");
    ASSERT_TRUE(parsed.ok());
    auto low = codegen::lower_program(*parsed, p, codegen::LowerOptions{});
    ASSERT_TRUE(low.ok()) << low.error().to_string();
    EXPECT_TRUE(has(low->cuda_source, "kforge::cross_entropy_rows<")) << low->cuda_source;
    EXPECT_TRUE(has(low->cuda_source, "kforge::mean_of_losses<")) << low->cuda_source;
    EXPECT_TRUE(has(low->cuda_source, "const int64_t* __restrict__ t_targets")) << low->cuda_source;
}

TEST(IndexPlan, MaskedCumsumReadsTheMaskAsBool) {
    const Problem p = masked_cumsum();
    const std::string text = seed_checked(p);
    EXPECT_TRUE(has(text, "mul mask[B,L]")) << text;
    EXPECT_TRUE(has(text, "rowwise cumsum(")) << text;
    EXPECT_TRUE(has(lowered_source(p, text), "const bool* __restrict__ t_mask"));
}

TEST(IndexPlan, WrongProgramsAreRefused) {
    const Problem p = argmax();
    // argmax's index stored where the problem wants argmin's: the checker proves it differs
    const std::string swapped = R"(program bad for "argmax"
kernel k0 = rowwise argmax(x[B,D1,D2]) over D1 { store am[B,D2] }
kernel k1 = rowwise argmax(x[B,D1,D2]) { store an[B,D1] }
)";
    auto parsed = dsl::parse_program(swapped, "bad.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    auto res = dsl::check_program(*parsed, p, h200(), {"bad.kf", swapped});
    EXPECT_FALSE(res.ok());
    // an epilogue after an index is not lowered: a clear error, not wrong code
    const std::string epilogue = R"(program bad2 for "argmax"
kernel k0 = rowwise argmax(x[B,D1,D2]) over D1 { store am[B,D2] }
kernel k1 = rowwise argmin(x[B,D1,D2]) { add 1; store an[B,D1] }
)";
    auto p2 = dsl::parse_program(epilogue, "bad2.kf");
    ASSERT_TRUE(p2.ok()) << p2.error().to_string();
    auto low = codegen::lower_program(*p2, p, codegen::LowerOptions{});
    ASSERT_FALSE(low.ok());
    EXPECT_TRUE(has(low.error().to_string(), "one store")) << low.error().to_string();
}

// triu(A @ B) (KernelBench level 1, problem 14's form) and tril with an offset: the GEMM stores
// its product, a tril / triu kernel masks it with the problem op's diagonal.
Problem triangular() {
    return spec(R"({"name": "tri", "dims": {"M": 64, "K": 48, "N": 96},
        "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
                   "B": {"shape": ["K", "N"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"},
                  {"op": "triu", "inputs": ["C"], "output": "U"},
                  {"op": "tril", "inputs": ["C"], "output": "L", "diagonal": -2}],
        "outputs": ["U", "L"], "precision": {"policy": "fp32_strict"}})");
}

TEST(IndexPlan, TriangleOfAMatmulIsAGemmThenAMask) {
    const Problem p = triangular();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 3u) << text;
    EXPECT_TRUE(has(text, "gemm(A[M,K], B[K,N])")) << text;
    EXPECT_TRUE(has(text, "rowwise triu(C[M,N])")) << text;
    EXPECT_TRUE(has(text, "rowwise tril(C[M,N])")) << text;
    const std::string src = lowered_source(p, text);
    EXPECT_TRUE(has(src, "kforge::tri_mask<false")) << src;
    EXPECT_TRUE(has(src, "diagonal -2")) << src;
    // tril stored where the problem wants triu: refused by the checker
    std::string swapped = text;
    swapped.replace(swapped.find("rowwise triu("), 13, "rowwise tril(");
    auto parsed = dsl::parse_program(swapped, "bad.kf");
    ASSERT_TRUE(parsed.ok()) << swapped;
    EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", swapped}).ok()) << swapped;
}

// The gated pipeline on the simulated device passes for each plan.
TEST(IndexPlan, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {argmax(), cross_entropy(), masked_cumsum(), triangular()}) {
        eval::EvalRequest req;
        req.problem = p;
        req.program_text = seed_checked(p);
        eval::EvalReport r = eval::evaluate(evaluator, req);
        EXPECT_EQ(r.status, EvalStatus::kPassed) << p.name << ": " << r.message;
        EXPECT_TRUE(r.simulated);
    }
}

}  // namespace
}  // namespace kforge
