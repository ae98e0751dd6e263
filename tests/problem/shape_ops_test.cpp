// The shape ops (reshape, expand, permute, slice, cat, pad): parsing, shapes and derived dims,
// their errors (a reshape whose sizes do not match, an out-of-range index), the interpreter
// against hand-computed values, re-binding, the written spec and work counts.
#include <gtest/gtest.h>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "interpret_checks.h"
#include "test_specs.h"

namespace kforge {
namespace {

using test::make_spec;
using test::one_op;
using Values = std::vector<double>;
using Shape = std::vector<int64_t>;

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

const char* kDims = R"({"B": 2, "C": 3, "L": 4})";
const char* kX = R"({"X": {"shape": ["B", "C", "L"], "dtype": "f32"}})";

Values iota(int64_t n) {
    Values v;
    for (int64_t i = 0; i < n; ++i) v.push_back(static_cast<double>(i));
    return v;
}

TEST(ShapeOps, ReshapeNamesProductsAsDerivedDimsAndInfersMinusOne) {
    Problem p = ok(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": ["B", "C*L"])"));
    const Tensor* y = p.find_tensor("Y");
    EXPECT_EQ(y->shape, (Shape{2, 12}));
    EXPECT_EQ(y->dim_names, (std::vector<std::string>{"B", "C_L"}));
    EXPECT_EQ(p.dims.at("C_L"), 12);
    EXPECT_TRUE(p.derived_dims.count("C_L"));
    EXPECT_EQ(run(p, {{"X", iota(24)}}), iota(24));  // a view: row-major order unchanged
    // re-binding recomputes the derived dim
    auto q = rebind_dims(p, {{"L", 5}});
    ASSERT_TRUE(q.ok()) << q.error().to_string();
    EXPECT_EQ(q->find_tensor("Y")->shape, (Shape{2, 15}));
    EXPECT_EQ(q->dims.at("C_L"), 15);
    // -1: the size that makes the counts agree; unsqueeze as a reshape with a 1
    Problem m = ok(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": [-1, 1, "L"])"));
    EXPECT_EQ(m.find_tensor("Y")->shape, (Shape{6, 1, 4}));
    EXPECT_EQ(m.find_tensor("Y")->dim_names, (std::vector<std::string>{"", "", "L"}));
}

TEST(ShapeOps, ReshapeErrors) {
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": ["B", "C"])"),
                 "graph[0].shape", {"shape mismatch", "cannot reshape", "24 elements", "6 elements"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": [5, -1])"),
                 "graph[0].shape", {"does not divide 24"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": [-1, -1])"),
                 "graph[0].shape[1]", {"only one shape entry may be -1"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": ["B", "Q*L"])"),
                 "graph[0].shape[1]", {"unknown dim \"Q\""});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": ["B", "C+L"])"),
                 "graph[0].shape[1]", {"product of dim names"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": ["B*00", 12])"),
                 "graph[0].shape[0]", {"product of dim names"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])",
                        R"("shape": [1099511627776, 1099511627776, -1])"),
                 "graph[0].shape", {"more than 2^50 elements"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])", R"("shape": [0, 24])"),
                 "graph[0].shape[0]", {"positive integer"});
    expect_error(one_op(kDims, kX, "reshape", R"(["X"])"), "graph[0]", {"missing key \"shape\""});
}

TEST(ShapeOps, ExpandBroadcastsSizeOneDims) {
    const char* in = R"({"v": {"shape": ["C", 1], "dtype": "f32"}})";
    Problem p = ok(one_op(kDims, in, "expand", R"(["v"])", R"("shape": ["B", -1, "L"])"));
    const Tensor* y = p.find_tensor("Y");
    EXPECT_EQ(y->shape, (Shape{2, 3, 4}));
    EXPECT_EQ(y->dim_names, (std::vector<std::string>{"B", "C", "L"}));
    Values want;
    for (int b = 0; b < 2; ++b)
        for (int c = 0; c < 3; ++c)
            for (int l = 0; l < 4; ++l) want.push_back(10.0 * c);
    EXPECT_EQ(run(p, {{"v", {0, 10, 20}}}), want);
    expect_error(one_op(kDims, kX, "expand", R"(["X"])", R"("shape": ["B", "L", "L"])"),
                 "graph[0].shape[1]", {"dim 1 has size 3, not 1 or 4"});
    expect_error(one_op(kDims, kX, "expand", R"(["X"])", R"("shape": ["B", "C"])"),
                 "graph[0].shape", {"fewer dims"});
}

TEST(ShapeOps, PermuteMovesAxes) {
    Problem p = ok(one_op(kDims, kX, "permute", R"(["X"])", R"("dims": [2, 0, -2])"));
    const Tensor* y = p.find_tensor("Y");
    EXPECT_EQ(y->shape, (Shape{4, 2, 3}));
    EXPECT_EQ(y->dim_names, (std::vector<std::string>{"L", "B", "C"}));
    Values x = iota(24), got = run(p, {{"X", x}});
    ASSERT_EQ(got.size(), 24u);
    // Y[l, b, c] = X[b, c, l]
    for (int l = 0; l < 4; ++l)
        for (int b = 0; b < 2; ++b)
            for (int c = 0; c < 3; ++c) EXPECT_EQ(got[(l * 2 + b) * 3 + c], x[(b * 3 + c) * 4 + l]);
    expect_error(one_op(kDims, kX, "permute", R"(["X"])", R"("dims": [0, 0, 1])"),
                 "graph[0].dims[1]", {"appears twice"});
    expect_error(one_op(kDims, kX, "permute", R"(["X"])", R"("dims": [0, 1])"),
                 "graph[0].dims", {"needs 3 dims"});
}

TEST(ShapeOps, SliceWithNegativeBoundsAndSteps) {
    // x[:, :, 1:-1]
    Problem p = ok(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": -1, "start": 1, "end": -1)"));
    const Tensor* y = p.find_tensor("Y");
    EXPECT_EQ(y->shape, (Shape{2, 3, 2}));
    EXPECT_EQ(y->dim_names[2], "");
    EXPECT_EQ(p.ops[0].attrs.axis, 2);
    Values got = run(p, {{"X", iota(24)}});
    EXPECT_EQ(got, (Values{1, 2, 5, 6, 9, 10, 13, 14, 17, 18, 21, 22}));
    // x[:, ::2], and the written spec keeps -1 so that re-binding follows L
    Problem s = ok(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 1, "step": 2)"));
    EXPECT_EQ(s.find_tensor("Y")->shape, (Shape{2, 2, 4}));
    auto r = rebind_dims(p, {{"L", 7}});
    ASSERT_TRUE(r.ok()) << r.error().to_string();
    EXPECT_EQ(r->find_tensor("Y")->shape, (Shape{2, 3, 5}));
    // the whole axis keeps its name
    Problem w = ok(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 2, "start": 0)"));
    EXPECT_EQ(w.find_tensor("Y")->dim_names[2], "L");
}

TEST(ShapeOps, SliceOutOfRangeIsAnError) {
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 1, "start": 3)"),
                 "graph[0].start", {"index out of range", "size 3"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 1, "start": -4)"),
                 "graph[0].start", {"index out of range"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 1, "end": 9)"),
                 "graph[0].end", {"index out of range"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 1, "start": 2, "end": 1)"),
                 "graph[0].end", {"is empty"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 3)"), "graph[0].axis",
                 {"out of range"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("axis": 0, "step": 0)"),
                 "graph[0].step", {"step must be an integer >= 1"});
    expect_error(one_op(kDims, kX, "slice", R"(["X"])", R"("start": 0)"), "graph[0]",
                 {"missing key \"axis\""});
}

TEST(ShapeOps, CatJoinsAlongAnAxis) {
    const char* in = R"({"A": {"shape": ["B", 1], "dtype": "f32"},
                         "Bt": {"shape": ["B", "C"], "dtype": "f32"}})";
    Problem p = ok(one_op(kDims, in, "cat", R"(["A", "Bt", "A"])", R"("axis": 1)"));
    EXPECT_EQ(p.find_tensor("Y")->shape, (Shape{2, 5}));
    EXPECT_EQ(run(p, {{"A", {-1, -2}}, {"Bt", iota(6)}}),
              (Values{-1, 0, 1, 2, -1, -2, 3, 4, 5, -2}));
    expect_error(one_op(kDims, in, "cat", R"(["A", "Bt"])", R"("axis": 0)"), "graph[0].inputs[1]",
                 {"outside the cat axis 0"});
    const char* mixed = R"({"A": {"shape": [2], "dtype": "f32"}, "I": {"shape": [2], "dtype": "i32"}})";
    expect_error(one_op(kDims, mixed, "cat", R"(["A", "I"])", R"("axis": 0)"), "graph[0].inputs[1]",
                 {"bad dtype"});
}

TEST(ShapeOps, PadFillsAConstant) {
    const char* in = R"({"A": {"shape": [2, 2], "dtype": "f32"}})";
    Problem p = ok(one_op(kDims, in, "pad", R"(["A"])", R"("pads": [[0, 0], [1, 2]], "value": 9)"));
    EXPECT_EQ(p.find_tensor("Y")->shape, (Shape{2, 5}));
    EXPECT_EQ(run(p, {{"A", {1, 2, 3, 4}}}), (Values{9, 1, 2, 9, 9, 9, 3, 4, 9, 9}));
    expect_error(one_op(kDims, in, "pad", R"(["A"])", R"("pads": [[0, 1]])"), "graph[0].pads",
                 {"one pair each"});
    expect_error(one_op(kDims, in, "pad", R"(["A"])", R"("pads": [[0, 1], [-1, 0]])"),
                 "graph[0].pads[1][0]", {"crop with slice"});
}

// A pad amount written as a dim expression (a qkv bias cat(q, zeros_like(v), v), imported as
// a pad of v by v's extent): valued at every binding, written back as written; a bad or unknown
// expression is a user error at that amount.
TEST(ShapeOps, PadAmountsAreDimExpressions) {
    const char* dims = R"({"C": 2, "C3": "3*C"})";
    const char* in = R"({"q": {"shape": ["C"], "dtype": "f32"}, "v": {"shape": ["C"], "dtype": "f32"}})";
    auto spec = [&](const std::string& pads) {
        return make_spec(dims, in, R"([{"op": "pad", "inputs": ["v"], "output": "zv", "pads": )" +
                                       pads + R"(},
            {"op": "cat", "inputs": ["q", "zv"], "output": "Y", "axis": 0, "out_names": ["C3"]}])");
    };
    Problem p = ok(parse_problem(spec(R"([["C", 0]])"), "t"));
    EXPECT_EQ(p.find_tensor("zv")->shape, (Shape{4}));
    EXPECT_EQ(p.find_tensor("Y")->shape, (Shape{6}));
    EXPECT_EQ(p.find_tensor("Y")->dim_names, (std::vector<std::string>{"C3"}));
    EXPECT_EQ(run(p, {{"q", {1, 2}}, {"v", {5, 6}}}), (Values{1, 2, 0, 0, 5, 6}));
    // written back as the expression; parsed again, the same spec
    auto j = problem_to_json(p);
    EXPECT_EQ(j["graph"][0]["pads"].dump(), R"([["C",0]])");
    Problem p2 = ok(parse_problem(j.dump(), "rt"));
    EXPECT_EQ(problem_to_json(p2), j);
    // re-bound, the amount follows C (as C3 = 3*C does)
    auto q = rebind_dims(p, {{"C", 3}});
    ASSERT_TRUE(q.ok()) << q.error().to_string();
    EXPECT_EQ(q->find_tensor("zv")->shape, (Shape{6}));
    EXPECT_EQ(q->find_tensor("Y")->shape, (Shape{9}));
    // numbers and expressions mixed in one pair, a product
    Problem m = ok(parse_problem(
        make_spec(dims, R"({"x": {"shape": ["C", "C"], "dtype": "f32"}})",
                  R"([{"op": "pad", "inputs": ["x"], "output": "Y", "pads": [[0, 0], [1, "2*C"]]}])"),
        "m"));
    EXPECT_EQ(m.find_tensor("Y")->shape, (Shape{2, 7}));
    EXPECT_EQ(problem_to_json(m)["graph"][0]["pads"].dump(), R"([[0,0],[1,"2*C"]])");
    // errors: a bad expression, an unknown dim, a pad that does not fit the tensor's named extent
    expect_error(parse_problem(spec(R"([["3*-C", 0]])"), "t"), "graph[0].pads[0][0]",
                 {"dim expression"});
    expect_error(parse_problem(spec(R"([["K", 0]])"), "t"), "graph[0].pads[0][0]",
                 {"unknown dim \"K\""});
    expect_error(parse_problem(spec(R"([["2*C", 0]])"), "t"), "graph[1].out_names[0]",
                 {"shape mismatch", "\"C3\" = 6", "extent there is 8"});
}

// diag(v) @ B written as v.unsqueeze(1) * B, and an exclusive cumsum written with slice, cumsum
// and pad (cat with zeros): the spec round-trips through problem_to_json, and the interpreter
// gives the values the op definitions give.
TEST(ShapeOps, ComposedGraphsRoundTrip) {
    std::string diag = make_spec(R"({"N": 3, "M": 2})",
                                 R"({"v": {"shape": ["N"], "dtype": "f32"},
                                     "Bm": {"shape": ["N", "M"], "dtype": "f32"}})",
                                 R"([{"op": "reshape", "inputs": ["v"], "output": "u", "shape": ["N", 1]},
                                     {"op": "mul", "inputs": ["u", "Bm"], "output": "Y"}])");
    Problem d = ok(parse_problem(diag, "diag"));
    EXPECT_EQ(run(d, {{"v", {1, 2, 3}}, {"Bm", {1, 1, 1, 1, 1, 1}}}), (Values{1, 1, 2, 2, 3, 3}));
    Problem d2 = ok(parse_problem(problem_to_json(d).dump(), "rt"));
    EXPECT_EQ(problem_to_json(d2), problem_to_json(d));

    std::string excl = make_spec(R"({"B": 2, "L": 4})",
                                 R"({"x": {"shape": ["B", "L"], "dtype": "f32"}})",
                                 R"([{"op": "slice", "inputs": ["x"], "output": "s", "axis": 1, "end": -1},
                                     {"op": "cumsum", "inputs": ["s"], "output": "c", "axis": 1},
                                     {"op": "pad", "inputs": ["c"], "output": "Y", "pads": [[0, 0], [1, 0]]}])");
    Problem e = ok(parse_problem(excl, "excl"));
    EXPECT_EQ(run(e, {{"x", {1, 2, 3, 4, 5, 6, 7, 8}}}), (Values{0, 1, 3, 6, 0, 5, 11, 18}));
    Problem e2 = ok(parse_problem(problem_to_json(e).dump(), "rt"));
    EXPECT_EQ(problem_to_json(e2), problem_to_json(e));
    auto small = rebind_dims(e, {{"L", 3}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->find_tensor("Y")->shape, (Shape{2, 3}));
}

TEST(ShapeOps, OutNamesNameARestoredAxis) {
    const char* in = R"({"x": {"shape": ["B", "L"], "dtype": "f32"}})";
    auto spec = [&](const char* names) {
        return make_spec(R"({"B": 2, "L": 4})", in,
                         std::string(R"([{"op": "slice", "inputs": ["x"], "output": "s", "axis": 1, "end": -1},
                                         {"op": "pad", "inputs": ["s"], "output": "Y", "pads": [[0, 0], [1, 0]], "out_names": )") +
                             names + "}]");
    };
    Problem p = ok(parse_problem(spec(R"(["", "L"])"), "n"));
    EXPECT_EQ(p.find_tensor("Y")->dim_names, (std::vector<std::string>{"B", "L"}));
    Problem q = ok(parse_problem(problem_to_json(p).dump(), "rt"));
    EXPECT_EQ(q.find_tensor("Y")->dim_names, (std::vector<std::string>{"B", "L"}));
    expect_error(parse_problem(spec(R"(["", "B"])"), "n"), "graph[1].out_names[1]",
                 {"shape mismatch", "\"B\" = 2", "extent there is 4"});
    expect_error(parse_problem(spec(R"(["L"])"), "n"), "graph[1].out_names",
                 {"has 1 entries"});
}

TEST(ShapeOps, WorkCountsViewsMoveNothing) {
    std::string spec = make_spec(kDims, kX,
                                 R"([{"op": "reshape", "inputs": ["X"], "output": "r", "shape": ["B", "C*L"]},
                                     {"op": "slice", "inputs": ["r"], "output": "s", "axis": 1, "end": 6},
                                     {"op": "permute", "inputs": ["s"], "output": "Y", "dims": [1, 0]}])");
    Problem p = ok(parse_problem(spec, "w"));
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    ASSERT_EQ(w->per_op.size(), 3u);
    EXPECT_EQ(w->per_op[0].bytes(), 0.0);                 // reshape: a view
    EXPECT_EQ(w->per_op[1].bytes_read, 2 * 6 * 4.0);      // slice: what it keeps
    EXPECT_EQ(w->per_op[1].bytes_written, 2 * 6 * 4.0);
    EXPECT_EQ(w->per_op[2].bytes(), 2 * 2 * 6 * 4.0);     // permute: read and write
    EXPECT_EQ(w->flops(), 0.0);
}

TEST(ShapeOps, DimsDerivedByExpressionFollowTheDimsTheyComeFrom) {
    // x [B, E3] with E3 = 3*E cut into q, k, v at dim-expression bounds, cat back with a dim of
    // its own: every extent follows E when it is re-bound
    const char* dims = R"({"B": 2, "E": 4, "F": 2, "E3": "3*E", "G": "E+F"})";
    const char* in = R"({"x": {"shape": ["B", "E3"], "dtype": "f32"}, "y": {"shape": ["B", "F"], "dtype": "f32"}})";
    std::string spec = make_spec(dims, in, R"([
        {"op": "slice", "inputs": ["x"], "output": "q", "axis": 1, "end": "E", "out_names": ["", "E"]},
        {"op": "slice", "inputs": ["x"], "output": "k", "axis": 1, "start": "E", "end": "2*E", "out_names": ["", "E"]},
        {"op": "slice", "inputs": ["x"], "output": "v", "axis": 1, "start": "2*E", "out_names": ["", "E"]},
        {"op": "mul", "inputs": ["q", "k"], "output": "qk"},
        {"op": "add", "inputs": ["qk", "v"], "output": "s"},
        {"op": "cat", "inputs": ["s", "y"], "output": "Y", "axis": 1, "out_names": ["", "G"]}])");
    Problem p = ok(parse_problem(spec, "t"));
    EXPECT_EQ(p.dims.at("E3"), 12);
    EXPECT_EQ(p.dims.at("G"), 6);
    EXPECT_TRUE(p.derived_dims.count("E3") && p.derived_dims.count("G"));
    EXPECT_EQ(p.find_tensor("x")->shape, (Shape{2, 12}));
    EXPECT_EQ(p.find_tensor("Y")->dim_names, (std::vector<std::string>{"B", "G"}));
    Values x = iota(24), y = {100, 101, 102, 103};
    // row b: q = x[4b..4b+3], k the next four, v the last four
    Values want;
    for (int b = 0; b < 2; ++b) {
        for (int i = 0; i < 4; ++i) want.push_back(x[12 * b + i] * x[12 * b + 4 + i] + x[12 * b + 8 + i]);
        want.push_back(y[2 * b]);
        want.push_back(y[2 * b + 1]);
    }
    EXPECT_EQ(run(p, {{"x", x}, {"y", y}}), want);
    // written back as expressions; re-bound, every derived extent and bound follows E
    auto j = problem_to_json(p);
    EXPECT_EQ(j["dims"]["E3"], "3*E");
    EXPECT_EQ(j["graph"][1]["start"], "E");
    EXPECT_EQ(j["graph"][1]["end"], "2*E");
    auto q = rebind_dims(p, {{"E", 2}});
    ASSERT_TRUE(q.ok()) << q.error().to_string();
    EXPECT_EQ(q->dims.at("E3"), 6);
    EXPECT_EQ(q->find_tensor("k")->shape, (Shape{2, 2}));
    EXPECT_EQ(q->find_tensor("Y")->shape, (Shape{2, 4}));
    expect_error(rebind_dims(p, {{"E3", 6}}), "dims.E3", {"derived"});
    // errors: a bad expression, an unknown dim, a cycle
    expect_error(parse_problem(make_spec(R"({"B": 2, "E": "3*-E"})", R"({"x": {"shape": ["B"], "dtype": "f32"}})",
                                         R"([{"op": "relu", "inputs": ["x"], "output": "Y"}])"), "t"),
                 "dims.E", {"dim expression"});
    expect_error(parse_problem(make_spec(R"({"B": 2, "E": "3*K"})", R"({"x": {"shape": ["B"], "dtype": "f32"}})",
                                         R"([{"op": "relu", "inputs": ["x"], "output": "Y"}])"), "t"),
                 "dims.E", {"\"K\""});
    expect_error(parse_problem(make_spec(R"({"B": 2, "E": "2*F", "F": "E+1"})", R"({"x": {"shape": ["B"], "dtype": "f32"}})",
                                         R"([{"op": "relu", "inputs": ["x"], "output": "Y"}])"), "t"),
                 "dims.E", {"\"F\""});
}

TEST(ShapeOps, ADimDerivedFromAPoolsOutputSizesWaitsForIt) {
    // a flatten of pooled features read by a Linear whose weight names them: F = C*Lo, Lo the
    // pool's derived length (known once the graph derives it)
    const char* dims = R"({"B": 2, "C": 3, "L": 8, "K": 5, "F": "C*Lo"})";
    const char* in = R"({"x": {"shape": ["B", "C", "L"], "dtype": "f32"}, "w": {"shape": ["K", "F"], "dtype": "f32"}})";
    std::string spec = make_spec(dims, in, R"([
        {"op": "max_pool", "inputs": ["x"], "output": "p", "kernel_size": 2, "out_dims": ["Lo"]},
        {"op": "reshape", "inputs": ["p"], "output": "f", "shape": ["B", "F"]},
        {"op": "linear", "inputs": ["f", "w"], "output": "Y"}])");
    Problem p = ok(parse_problem(spec, "t"));
    EXPECT_EQ(p.dims.at("F"), 12);
    EXPECT_EQ(p.find_tensor("w")->shape, (Shape{5, 12}));
    auto q = rebind_dims(p, {{"L", 4}, {"C", 2}});
    ASSERT_TRUE(q.ok()) << q.error().to_string();
    EXPECT_EQ(q->find_tensor("w")->shape, (Shape{5, 4}));
    EXPECT_EQ(q->find_tensor("Y")->shape, (Shape{2, 5}));
}

TEST(ShapeOps, InputShapeEntriesAndFanInsAreDimExpressions) {
    // an input's shape entry ("2*D", "E+D") and its fan_in ("E+D"; "F", derived from the pool's
    // Lo and read by s before the pool runs) are dim expressions, valued at every binding
    const char* dims = R"({"B": 2, "C": 3, "L": 8, "K": 5, "E": 4, "D": "3*E", "F": "C*Lo"})";
    auto spec_with = [&](const std::string& u_shape, const std::string& u_fan_in) {
        return make_spec(dims, R"({"x": {"shape": ["B", "C", "L"], "dtype": "f32"},
            "s": {"shape": ["L"], "dtype": "f32", "param": true, "fan_in": "F"},
            "w": {"shape": ["K", "F"], "dtype": "f32", "param": true, "fan_in": "F"},
            "u": {"shape": )" + u_shape + R"(, "dtype": "f32", "param": true,
                  "distribution": "uniform_pm1", "fan_in": )" + u_fan_in + "}}",
            R"([{"op": "mul", "inputs": ["x", "s"], "output": "xs"},
                {"op": "max_pool", "inputs": ["xs"], "output": "p", "kernel_size": 2, "out_dims": ["Lo"]},
                {"op": "reshape", "inputs": ["p"], "output": "f", "shape": ["B", "F"]},
                {"op": "linear", "inputs": ["f", "w"], "output": "Y"},
                {"op": "relu", "inputs": ["u"], "output": "Z"}])", R"(["Y", "Z"])");
    };
    Problem p = ok(parse_problem(spec_with(R"(["2*D", "E+D"])", R"("E+D")"), "t"));
    EXPECT_EQ(p.find_tensor("u")->shape, (Shape{24, 16}));
    EXPECT_TRUE(p.derived_dims.count("2*D") && p.derived_dims.count("E+D"));
    EXPECT_EQ(p.find_tensor("u")->fan_in_value, 16);
    EXPECT_EQ(p.find_tensor("s")->fan_in_value, 12);
    EXPECT_EQ(p.find_tensor("w")->fan_in_value, 12);
    auto j = problem_to_json(p);
    EXPECT_FALSE(j["dims"].contains("2*D") || j["dims"].contains("E+D"));
    EXPECT_EQ(j["inputs"]["u"]["shape"], (nlohmann::ordered_json{"2*D", "E+D"}));
    EXPECT_EQ(j["inputs"]["u"]["fan_in"], "E+D");
    auto q = rebind_dims(p, {{"E", 2}, {"C", 2}, {"L", 4}});
    ASSERT_TRUE(q.ok()) << q.error().to_string();
    EXPECT_EQ(q->find_tensor("u")->shape, (Shape{12, 8}));
    EXPECT_EQ(q->find_tensor("u")->fan_in_value, 8);
    EXPECT_EQ(q->find_tensor("s")->fan_in_value, 4);
    expect_error(rebind_dims(p, {{"E+D", 6}}), "dims.E+D", {"derived"});
    // an entry names dims known when the inputs are read; a fan_in, any dim under "dims"
    expect_error(parse_problem(spec_with(R"(["2*Lo", 1])", "1"), "t"), "inputs.u.shape[0]",
                 {"a product entry \"2*Lo\" multiplies dim names", "\"Lo\" is neither"});
    expect_error(parse_problem(spec_with(R"(["E+Q", 1])", "1"), "t"), "inputs.u.shape[0]",
                 {"a sum entry \"E+Q\"", "\"Q\" is neither"});
    expect_error(parse_problem(spec_with(R"(["2*F", 1])", "1"), "t"), "inputs.u.shape[0]",
                 {"\"F\" is derived from dims that the graph derives", "declare the entry"});
    expect_error(parse_problem(spec_with(R"(["E+0", 1])", "1"), "t"), "inputs.u.shape[0]",
                 {"the sum \"E+0\" is not a positive integer"});
    expect_error(parse_problem(spec_with(R"([1])", R"("C*Lo")"), "t"), "inputs.u.fan_in",
                 {"the fan_in of \"u\"", "\"Lo\" in \"C*Lo\" is neither a dim"});
    expect_error(parse_problem(spec_with(R"([1])", R"("E+0")"), "t"), "inputs.u.fan_in",
                 {"\"E+0\" is not a positive integer"});
}

}  // namespace
}  // namespace kforge
