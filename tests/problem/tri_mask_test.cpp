// masked_fill with a structured mask ("mask": "tril" / "triu", "diagonal"; problem/tri_mask.h):
// parsing and its errors, the shape, the interpreter against hand-computed values, the spec
// writer's round trip, and the work counts of attention under a causal mask (both products
// counted for the unmasked scores only, a non-causal data mask not discounted).
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/tri_mask.h"
#include "problem/work.h"
#include "interpret_checks.h"
#include "test_specs.h"

namespace kforge {
namespace {

using test::make_spec;
using test::one_op;
using Values = std::vector<double>;

constexpr double kInf = std::numeric_limits<double>::infinity();

using test::ok;
using test::run;

const char* kX = R"({"X": {"shape": [2, 3, 4], "dtype": "f32"}})";

Values iota(size_t n) {
    Values v(n);
    for (size_t i = 0; i < n; ++i) v[i] = double(i);
    return v;
}

TEST(TriMask, CausalFillsAboveTheDiagonalOfEveryMatrix) {
    // triu 1: fill where j > i (torch's masked_fill(~tril(ones)), a causal mask)
    Problem p = ok(one_op("{}", kX, "masked_fill", R"(["X"])",
                          R"("mask": "triu", "diagonal": 1, "value": "-inf")"));
    EXPECT_EQ(p.find_tensor("Y")->shape, (std::vector<int64_t>{2, 3, 4}));
    const Values y = run(p, {{"X", iota(24)}});
    ASSERT_EQ(y.size(), 24u);
    for (size_t e = 0; e < 24; ++e) {
        const int64_t i = int64_t(e / 4) % 3, j = int64_t(e % 4);
        if (j > i) EXPECT_EQ(y[e], -kInf) << e;
        else EXPECT_EQ(y[e], double(e)) << e;
    }
}

TEST(TriMask, TrilWithANegativeDiagonalAndAFiniteValue) {
    // tril -1: fill where j - i <= -1 (strictly below the diagonal) with 7
    Problem p = ok(one_op("{}", R"({"X": {"shape": [3, 3], "dtype": "f32"}})", "masked_fill",
                          R"(["X"])", R"("mask": "tril", "diagonal": -1, "value": 7)"));
    EXPECT_EQ(run(p, {{"X", iota(9)}}), (Values{0, 1, 2, 7, 4, 5, 7, 7, 8}));
}

TEST(TriMask, SpecWriterRoundTrips) {
    Problem p = ok(one_op("{}", kX, "masked_fill", R"(["X"])",
                          R"("mask": "tril", "diagonal": 2, "value": "-inf")"));
    const std::string text = problem_to_json(p).dump();
    EXPECT_NE(text.find(R"("mask":"tril")"), std::string::npos) << text;
    EXPECT_NE(text.find(R"("diagonal":2)"), std::string::npos) << text;
    Problem q = ok(parse_problem(text, "again"));
    EXPECT_EQ(q.ops.at(0).attrs.tri_mask, TriMask::kTril);
    EXPECT_EQ(q.ops.at(0).attrs.diagonal, 2);
}

TEST(TriMask, BadSpecsAreRefusedWithAReason) {
    auto both = one_op("{}", R"({"X": {"shape": [3, 3], "dtype": "f32"},
                                 "M": {"shape": [3, 3], "dtype": "bool"}})",
                       "masked_fill", R"(["X", "M"])", R"("mask": "triu", "value": 0)");
    ASSERT_FALSE(both.ok());
    EXPECT_NE(both.error().message.find("not both"), std::string::npos) << both.error().to_string();
    auto none = one_op("{}", kX, "masked_fill", R"(["X"])", R"("value": 0)");
    ASSERT_FALSE(none.ok());
    EXPECT_NE(none.error().message.find("structured"), std::string::npos) << none.error().to_string();
    auto word = one_op("{}", kX, "masked_fill", R"(["X"])", R"("mask": "causal", "value": 0)");
    ASSERT_FALSE(word.ok());
    EXPECT_NE(word.error().message.find("\"tril\" or \"triu\""), std::string::npos)
        << word.error().to_string();
    auto rank1 = one_op("{}", R"({"X": {"shape": [4], "dtype": "f32"}})", "masked_fill",
                        R"(["X"])", R"("mask": "triu", "value": 0)");
    ASSERT_FALSE(rank1.ok());
    EXPECT_NE(rank1.error().message.find("rank >= 2"), std::string::npos) << rank1.error().to_string();
    auto stray = one_op("{}", R"({"X": {"shape": [3, 3], "dtype": "f32"},
                                  "M": {"shape": [3, 3], "dtype": "bool"}})",
                        "masked_fill", R"(["X", "M"])", R"("diagonal": 1, "value": 0)");
    ASSERT_FALSE(stray.ok());
    EXPECT_NE(stray.error().message.find("diagonal needs"), std::string::npos);
}

TEST(TriMask, DensityOfTheTriangle) {
    EXPECT_DOUBLE_EQ(tri_mask_density(TriMask::kNone, 0, 8, 8), 1.0);
    // causal over 4 x 4: rows keep 1, 2, 3, 4 of 4
    EXPECT_DOUBLE_EQ(tri_mask_density(TriMask::kTriu, 1, 4, 4), 10.0 / 16.0);
    // tril 0 masks j <= i: rows keep 3, 2, 1, 0
    EXPECT_DOUBLE_EQ(tri_mask_density(TriMask::kTril, 0, 4, 4), 6.0 / 16.0);
    EXPECT_DOUBLE_EQ(tri_mask_density(TriMask::kTriu, 100, 4, 4), 1.0);
}

std::string attention_spec(const std::string& mask_op, const std::string& mask_input) {
    return make_spec(R"({"S": 64, "E": 32})",
                     R"({"q": {"shape": ["S", "E"], "dtype": "f32"},
                         "k": {"shape": ["S", "E"], "dtype": "f32"},
                         "v": {"shape": ["S", "E"], "dtype": "f32"})" + mask_input + "}",
                     R"([{"op": "matmul", "inputs": ["q", "k"], "transpose_b": true, "output": "s"},
                        )" + mask_op + R"(,
                        {"op": "softmax", "inputs": ["t"], "output": "p", "axis": -1},
                        {"op": "dropout", "inputs": ["p"], "output": "d"},
                        {"op": "matmul", "inputs": ["d", "v"], "output": "Y"}])");
}

TEST(TriMask, CausalAttentionCountsOnlyTheUnmaskedProducts) {
    const double full = 2.0 * 2.0 * 64 * 64 * 32;  // both products over every score
    Problem causal = ok(parse_problem(attention_spec(
        R"({"op": "masked_fill", "inputs": ["s"], "mask": "triu", "diagonal": 1, "value": "-inf", "output": "t"})",
        ""), "causal"));
    auto w = count_work(causal);
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    const double density = (64.0 * 65.0 / 2.0) / (64.0 * 64.0);
    EXPECT_NEAR(w->flops_matrix, full * density, 1.0);
    EXPECT_NEAR(w->per_op.at(0).flops_matrix, full / 2 * density, 1.0);
    // a data mask (any pattern) is not discounted; nor a structured one with a finite fill
    Problem data = ok(parse_problem(attention_spec(
        R"({"op": "masked_fill", "inputs": ["s", "m"], "value": "-inf", "output": "t"})",
        R"(, "m": {"shape": ["S", "S"], "dtype": "bool"})"), "data"));
    auto wd = count_work(data);
    ASSERT_TRUE(wd.ok());
    EXPECT_DOUBLE_EQ(wd->flops_matrix, full);
    Problem finite = ok(parse_problem(attention_spec(
        R"({"op": "masked_fill", "inputs": ["s"], "mask": "triu", "diagonal": 1, "value": -5, "output": "t"})",
        ""), "finite"));
    auto wf = count_work(finite);
    ASSERT_TRUE(wf.ok());
    EXPECT_DOUBLE_EQ(wf->flops_matrix, full);
}

}  // namespace
}  // namespace kforge
