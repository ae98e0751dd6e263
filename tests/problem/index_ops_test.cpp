// The index and mask ops (argmax / argmin, masked_fill, where, tril / triu, cross_entropy) and
// bool / integer tensors: parsing, shapes and dtypes, their errors, the interpreter against
// hand-computed values, input generation (masks, class-index targets) and work counts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <set>

#include "problem/inputs.h"
#include "problem/interpret.h"
#include "problem/work.h"
#include "interpret_checks.h"
#include "test_specs.h"

namespace kforge {
namespace {

using test::make_spec;
using test::one_op;
using Values = std::vector<double>;

using test::ok;
using test::run;

void expect_error(const Expected<Problem>& p, const std::string& where,
                  std::initializer_list<const char*> fragments) {
    ASSERT_FALSE(p.ok()) << "accepted";
    EXPECT_EQ(p.error().where, where) << p.error().to_string();
    for (const char* f : fragments) {
        EXPECT_NE(p.error().message.find(f), std::string::npos)
            << "message lacks \"" << f << "\": " << p.error().message;
    }
}

const char* kX23 = R"({"X": {"shape": [2, 3], "dtype": "f32"}})";

TEST(IndexOps, ArgmaxFirstIndexOfTiesAndKeepdim) {
    Problem p = ok(one_op("{}", kX23, "argmax", R"(["X"])", R"("axis": 1)"));
    const Tensor* y = p.find_tensor("Y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->dtype, DType::kI64);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{2}));
    // ties resolve to the first index, as torch.argmax
    EXPECT_EQ(run(p, {{"X", {1, 5, 5, 7, 2, 7}}}), (Values{1, 0}));
    Problem q = ok(one_op("{}", kX23, "argmin", R"(["X"])", R"("axis": 0, "keepdim": true)"));
    EXPECT_EQ(q.find_tensor("Y")->shape, (std::vector<int64_t>{1, 3}));
    EXPECT_EQ(run(q, {{"X", {1, 5, 2, 1, 2, 7}}}), (Values{0, 1, 0}));
    // a NaN is both the max and the min (its first index)
    const double nan = std::numeric_limits<double>::quiet_NaN();
    EXPECT_EQ(run(p, {{"X", {1, nan, 9, 9, 2, nan}}}), (Values{1, 2}));
}

TEST(IndexOps, MaskedFillAndWhereBroadcast) {
    const char* in = R"({"X": {"shape": [2, 3], "dtype": "f32"},
                         "m": {"shape": [3], "dtype": "bool"}})";
    Problem p = ok(one_op("{}", in, "masked_fill", R"(["X", "m"])", R"("value": "-inf")"));
    EXPECT_EQ(p.find_tensor("Y")->dtype, DType::kF32);
    const double inf = std::numeric_limits<double>::infinity();
    EXPECT_EQ(run(p, {{"X", {1, 2, 3, 4, 5, 6}}, {"m", {0, 1, 0}}}), (Values{1, -inf, 3, 4, -inf, 6}));
    // the written spec round-trips the infinite value
    EXPECT_TRUE(parse_problem(problem_to_json(p).dump(), "rt").ok());

    const char* win = R"({"c": {"shape": [2, 1], "dtype": "bool"},
                          "A": {"shape": [2, 3], "dtype": "f32"}, "B": {"shape": [3], "dtype": "f32"}})";
    Problem w = ok(one_op("{}", win, "where", R"(["c", "A", "B"])"));
    EXPECT_EQ(w.find_tensor("Y")->shape, (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(run(w, {{"c", {1, 0}}, {"A", {1, 2, 3, 4, 5, 6}}, {"B", {7, 8, 9}}}),
              (Values{1, 2, 3, 7, 8, 9}));
}

TEST(IndexOps, MulByBoolMaskThenCumsum) {
    const char* in = R"({"x": {"shape": [2, 3], "dtype": "f32"},
                         "mask": {"shape": [2, 3], "dtype": "bool"}})";
    std::string graph = R"([{"op": "mul", "inputs": ["x", "mask"], "output": "t"},
                            {"op": "cumsum", "inputs": ["t"], "output": "Y", "axis": 1}])";
    Problem p = ok(parse_problem(make_spec("{}", in, graph), "t"));
    EXPECT_EQ(p.find_tensor("t")->dtype, DType::kF32);
    EXPECT_EQ(run(p, {{"x", {1, 2, 3, 4, 5, 6}}, {"mask", {1, 0, 1, 0, 1, 1}}}),
              (Values{1, 1, 4, 0, 5, 11}));
}

TEST(IndexOps, TrilTriuDiagonal) {
    const char* in = R"({"X": {"shape": [3, 3], "dtype": "f32"}})";
    Values x{1, 2, 3, 4, 5, 6, 7, 8, 9};
    EXPECT_EQ(run(ok(one_op("{}", in, "tril", R"(["X"])")), {{"X", x}}),
              (Values{1, 0, 0, 4, 5, 0, 7, 8, 9}));
    EXPECT_EQ(run(ok(one_op("{}", in, "triu", R"(["X"])")), {{"X", x}}),
              (Values{1, 2, 3, 0, 5, 6, 0, 0, 9}));
    EXPECT_EQ(run(ok(one_op("{}", in, "triu", R"(["X"])", R"("diagonal": 1)")), {{"X", x}}),
              (Values{0, 2, 3, 0, 0, 6, 0, 0, 0}));
    EXPECT_EQ(run(ok(one_op("{}", in, "tril", R"(["X"])", R"("diagonal": -1)")), {{"X", x}}),
              (Values{0, 0, 0, 4, 0, 0, 7, 8, 0}));
    Problem p = ok(one_op("{}", in, "tril", R"(["X"])", R"("diagonal": -1)"));
    EXPECT_EQ(problem_to_json(p)["graph"][0]["diagonal"], -1);
}

TEST(IndexOps, CrossEntropyMeanOfNll) {
    const char* in = R"({"X": {"shape": [2, 3], "dtype": "f32"}, "t": {"shape": [2], "dtype": "i64"}})";
    Problem p = ok(one_op("{}", in, "cross_entropy", R"(["X", "t"])"));
    EXPECT_TRUE(p.find_tensor("Y")->shape.empty());
    Values x{1, 2, 3, 0, 0, 0};
    const double l0 = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 3.0;
    const double l1 = std::log(3.0) - 0.0;
    Values y = run(p, {{"X", x}, {"t", {2, 1}}});
    ASSERT_EQ(y.size(), 1u);
    EXPECT_NEAR(y[0], (l0 + l1) / 2, 1e-12);
    // an out-of-range target is a clear error, not a read out of bounds
    auto bad = interpret(p, {{"X", x}, {"t", {3, 0}}});
    ASSERT_FALSE(bad.ok());
    EXPECT_EQ(bad.error().where, "inputs.t");
    EXPECT_NE(bad.error().message.find("out of range"), std::string::npos) << bad.error().message;
    EXPECT_NE(bad.error().message.find("[0, 3)"), std::string::npos) << bad.error().message;
}

TEST(IndexOps, DtypeAndShapeErrors) {
    const char* fmask = R"({"X": {"shape": [2, 3], "dtype": "f32"}, "m": {"shape": [2, 3], "dtype": "f32"}})";
    expect_error(one_op("{}", fmask, "masked_fill", R"(["X", "m"])", R"("value": 0)"),
                 "graph[0].inputs[1]", {"bad dtype", "bool mask", "\"m\" is f32"});
    expect_error(one_op("{}", fmask, "where", R"(["m", "X", "X"])"), "graph[0].inputs[0]",
                 {"bool condition"});
    // a bool mask whose shape does not broadcast against X
    const char* wide = R"({"X": {"shape": [2, 3], "dtype": "f32"}, "m": {"shape": [2, 4], "dtype": "bool"}})";
    expect_error(one_op("{}", wide, "masked_fill", R"(["X", "m"])", R"("value": 0)"), "graph[0].inputs[1]",
                 {"broadcast"});
    const char* ftarget = R"({"X": {"shape": [2, 3], "dtype": "f32"}, "t": {"shape": [2], "dtype": "f32"}})";
    expect_error(one_op("{}", ftarget, "cross_entropy", R"(["X", "t"])"), "graph[0].inputs[1]",
                 {"integer (i32 or i64) class indices", "\"t\" is f32"});
    const char* wrong_n = R"({"X": {"shape": [2, 3], "dtype": "f32"}, "t": {"shape": [3], "dtype": "i64"}})";
    expect_error(one_op("{}", wrong_n, "cross_entropy", R"(["X", "t"])"), "graph[0].inputs[1]",
                 {"shape mismatch", "must be [2]"});
    const char* vec = R"({"X": {"shape": [4], "dtype": "f32"}})";
    expect_error(one_op("{}", vec, "tril", R"(["X"])"), "graph[0].inputs[0]", {"rank >= 2"});
    expect_error(one_op("{}", kX23, "argmax", R"(["X"])", R"("axis": 2)"), "graph[0].axis",
                 {"out of range"});
    const char* bmask = R"({"X": {"shape": [2, 3], "dtype": "bool"}})";
    expect_error(one_op("{}", bmask, "exp", R"(["X"])"), "graph[0].inputs[0]",
                 {"does not take bool operands"});
    expect_error(one_op("{}", kX23, "masked_fill", R"(["X", "X"])", R"("value": "nan")"),
                 "graph[0].value", {"\"inf\" or \"-inf\""});
    expect_error(one_op("{}", kX23, "masked_fill", R"(["X", "X"])"), "graph[0]",
                 {"missing key \"value\""});
}

TEST(IndexOps, InputsMasksAndTargets) {
    const char* in = R"({"X": {"shape": [64, 10], "dtype": "f32"}, "t": {"shape": [64], "dtype": "i64"},
                         "m": {"shape": [64, 10], "dtype": "bool"}})";
    std::string graph = R"([{"op": "masked_fill", "inputs": ["X", "m"], "output": "Z", "value": 0},
                            {"op": "cross_entropy", "inputs": ["Z", "t"], "output": "Y"}])";
    Problem p = ok(parse_problem(make_spec("{}", in, graph), "t"));
    EXPECT_EQ(index_bound(p, "t"), std::optional<int64_t>(10));
    EXPECT_FALSE(index_bound(p, "X").has_value());
    for (Distribution d : {Distribution::kUniform01, Distribution::kNormal, Distribution::kHeavyTailed}) {
        Values t = generate_input(p, *p.find_tensor("t"), d, 7);
        std::set<double> seen(t.begin(), t.end());
        EXPECT_GT(seen.size(), 5u);
        for (double v : t) EXPECT_TRUE(v >= 0 && v < 10 && v == std::floor(v)) << v;
        Values m = generate_input(p, *p.find_tensor("m"), d, 7);
        double ones = 0;
        for (double v : m) {
            EXPECT_TRUE(v == 0 || v == 1);
            ones += v;
        }
        EXPECT_GT(ones, 0.3 * m.size());
        EXPECT_LT(ones, 0.7 * m.size());
        EXPECT_EQ(m, generate_input(p, *p.find_tensor("m"), d, 7));  // seeded
        EXPECT_TRUE(interpret(p, {{"X", generate_input(p, *p.find_tensor("X"), d, 7)},
                                  {"t", t}, {"m", m}})
                        .ok());
    }
}

TEST(IndexOps, WorkCountsRealSizes) {
    const char* in = R"({"X": {"shape": [4, 8], "dtype": "f32"}})";
    Problem p = ok(one_op("{}", in, "argmax", R"(["X"])"));
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->bytes_fused, 4 * 8 * 4 + 4 * 8);  // f32 in, i64 out
    EXPECT_EQ(w->flops_other, 32);
    const char* mask = R"({"X": {"shape": [4, 8], "dtype": "f32"}, "m": {"shape": [4, 8], "dtype": "bool"}})";
    auto wm = count_work(ok(one_op("{}", mask, "masked_fill", R"(["X", "m"])", R"("value": 1)")));
    ASSERT_TRUE(wm.ok());
    EXPECT_EQ(wm->bytes_fused, 32 * 4 + 32 * 1 + 32 * 4);  // bool: 1 byte
    EXPECT_EQ(wm->flops_other, 32);
    const char* ce = R"({"X": {"shape": [4, 8], "dtype": "f32"}, "t": {"shape": [4], "dtype": "i64"}})";
    auto wc = count_work(ok(one_op("{}", ce, "cross_entropy", R"(["X", "t"])")));
    ASSERT_TRUE(wc.ok());
    EXPECT_EQ(wc->bytes_fused, 32 * 4 + 4 * 8 + 4);
    EXPECT_EQ(wc->flops_other, 5 * 32);
}

}  // namespace
}  // namespace kforge
