// The shape ops through the planner, the checker and the lowering (issue 25, shapes as views):
// a view that adds, drops or broadcasts axes of size 1 costs no kernel (diag(v) @ B written as
// v.unsqueeze(1) * B is one map kernel reading v[N]; expand and a [1, C, 1] bias reshape are
// read by broadcasting), an exclusive scan written as slice, cumsum and pad (KernelBench 92) is
// one scan kernel, a view that is an output is a copy kernel, other data movement (cat, permute,
// a merging reshape) is refused by name. A program that reads the view's input under the wrong
// dims is refused by the checker. Each plan passes the gated pipeline on the simulated device (a
// labelled test double: the fp64 interpreter plus the time model).
#include <gtest/gtest.h>

#include "dsl/check.h"
#include "dsl/parser.h"
#include "eval/evaluator.h"
#include "planner/plan.h"
#include "problem/spec.h"
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

// KernelBench level 1, problem 12, as imported: A.unsqueeze(1) * B.
Problem diag_matmul() {
    return spec(R"({"name": "diag", "dims": {"N": 300, "M": 200},
        "inputs": {"A": {"shape": ["N"], "dtype": "f32"}, "B": {"shape": ["N", "M"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["A"], "output": "u", "shape": ["N", 1]},
                  {"op": "mul", "inputs": ["u", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict"}})");
}

// KernelBench level 1, problem 92, as imported: narrow, cumsum, cat with zeros (a pad).
Problem exclusive_cumsum(bool reverse = false) {
    const std::string slice = reverse ? R"("start": 1)" : R"("end": -1)";
    const std::string pads = reverse ? "[0, 1]" : "[1, 0]";
    return spec(R"({"name": "excl", "dims": {"B": 8, "L": 700},
        "inputs": {"x": {"shape": ["B", "L"], "dtype": "f32"}},
        "graph": [{"op": "slice", "inputs": ["x"], "output": "s", "axis": 1, )" + slice + R"(},
                  {"op": "cumsum", "inputs": ["s"], "output": "c", "axis": 1)" +
                (reverse ? R"(, "reverse": true)" : "") + R"(},
                  {"op": "pad", "inputs": ["c"], "output": "y", "pads": [[0, 0], )" + pads +
                R"(], "out_names": ["", "L"]}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

// Expand and a bias reshaped to [1, C, 1], read by one broadcasting map kernel; a squeeze
// that is an output (a copy kernel).
Problem broadcasts() {
    return spec(R"({"name": "bc", "dims": {"B": 4, "C": 6, "L": 50},
        "inputs": {"x": {"shape": ["B", "C", "L"], "dtype": "f32"}, "s": {"shape": ["B"], "dtype": "f32"},
                   "bias": {"shape": ["C"], "dtype": "f32", "param": true}},
        "graph": [{"op": "reshape", "inputs": ["s"], "output": "s3", "shape": ["B", 1, 1]},
                  {"op": "expand", "inputs": ["s3"], "output": "se", "shape": [-1, "C", "L"]},
                  {"op": "reshape", "inputs": ["bias"], "output": "b3", "shape": [1, "C", 1]},
                  {"op": "mul", "inputs": ["x", "se"], "output": "m"},
                  {"op": "add", "inputs": ["m", "b3"], "output": "y"},
                  {"op": "sum", "inputs": ["y"], "output": "r", "axis": -1, "keepdim": true},
                  {"op": "reshape", "inputs": ["r"], "output": "z", "shape": ["B", "C"]}],
        "outputs": ["y", "z"], "precision": {"policy": "fp32_strict"}})");
}

TEST(ViewPlan, UnsqueezeIsFoldedIntoTheBroadcastMul) {
    const Problem p = diag_matmul();
    const std::string text = seed_checked(p);
    EXPECT_EQ(kernels(text), 1u) << text;  // no kernel for the view
    EXPECT_TRUE(has(text, "map(B[N,M])")) << text;
    EXPECT_TRUE(has(text, "mul A[N]; store C[N,M]")) << text;
    EXPECT_FALSE(has(text, "u[")) << text;  // the view is never stored
}

TEST(ViewPlan, ExclusiveScanFromSliceAndPadIsOneScanKernel) {
    for (bool reverse : {false, true}) {
        const Problem p = exclusive_cumsum(reverse);
        const std::string text = seed_checked(p);
        EXPECT_EQ(kernels(text), 1u) << text;
        EXPECT_TRUE(has(text, "rowwise cumsum(x[B,L])")) << text;
        EXPECT_TRUE(has(text, "exclusive")) << text;
        EXPECT_EQ(has(text, "reverse"), reverse) << text;
        EXPECT_TRUE(has(text, "store y[B,L]")) << text;
    }
}

TEST(ViewPlan, ExpandAndBiasReshapeAreBroadcastsAndAnOutputViewIsACopy) {
    const Problem p = broadcasts();
    const std::string text = seed_checked(p);
    EXPECT_TRUE(has(text, "mul s[B]")) << text;
    EXPECT_TRUE(has(text, "add bias[C]")) << text;
    EXPECT_FALSE(has(text, "se[")) << text;
    EXPECT_FALSE(has(text, "b3[")) << text;
    EXPECT_TRUE(has(text, "store z[B,C]")) << text;  // the copy kernel of the output view
}

// KernelBench level 2, 28's form: a norm over the axes of x.unsqueeze(1) reads a copy of the view
// (its axis counts the view's axes), an element-wise reader the input itself.
TEST(ViewPlan, ANormOverAViewReadsACopy) {
    const Problem p = spec(R"({"name": "nv", "dims": {"B": 8, "F": 96},
        "inputs": {"x": {"shape": ["B", "F"], "dtype": "f32"}, "y": {"shape": ["B", "F"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["x"], "output": "u", "shape": ["B", 1, "F"]},
                  {"op": "layer_norm", "inputs": ["u"], "output": "n", "normalized_shape": ["F"]},
                  {"op": "reshape", "inputs": ["n"], "output": "s", "shape": ["B", "F"]},
                  {"op": "add", "inputs": ["s", "y"], "output": "z"}],
        "outputs": ["z"], "precision": {"policy": "fp32_strict"}})");
    const std::string text = seed_checked(p);
    EXPECT_TRUE(has(text, "store u[B,1,F]")) << text;  // the copy the norm reads
    EXPECT_TRUE(has(text, "layer_norm(u[B,1,F])")) << text;
    EXPECT_FALSE(has(text, "store s[")) << text;  // the add reads n through the squeeze
}

TEST(ViewPlan, OtherDataMovementIsACopyKernel) {
    const std::string cat = R"({"name": "cat", "dims": {"B": 4, "C": 6},
        "inputs": {"x": {"shape": ["B", "C"], "dtype": "f32"}, "y": {"shape": ["B", "C"], "dtype": "f32"}},
        "graph": [{"op": "cat", "inputs": ["x", "y"], "output": "z", "axis": 1},
                  {"op": "relu", "inputs": ["z"], "output": "r"}],
        "outputs": ["r"], "precision": {"policy": "fp32_strict"}})";
    const std::string text = seed_checked(spec(cat));
    EXPECT_TRUE(has(text, "copy cat(x[B,C], y[B,C])")) << text;
    EXPECT_TRUE(has(text, "{ relu; store r[B,12] }")) << text;
    const std::string flatten = R"({"name": "fl", "dims": {"B": 4, "C": 6, "H": 3},
        "inputs": {"x": {"shape": ["B", "C", "H"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["x"], "output": "z", "shape": ["B", "C*H"]},
                  {"op": "relu", "inputs": ["z"], "output": "r"}],
        "outputs": ["r"], "precision": {"policy": "fp32_strict"}})";
    const std::string fl = seed_checked(spec(flatten));
    EXPECT_TRUE(has(fl, "copy reshape(x[B,C,H])")) << fl;
    EXPECT_TRUE(has(fl, "{ relu; store r[B,C_H] }")) << fl;
    // a copy kernel moves floats: an integer cat is refused by name
    const std::string icat = R"({"name": "icat", "dims": {"B": 4, "C": 6},
        "inputs": {"x": {"shape": ["B", "C"], "dtype": "i64"}, "y": {"shape": ["B", "C"], "dtype": "i64"}},
        "graph": [{"op": "cat", "inputs": ["x", "y"], "output": "z", "axis": 1}],
        "outputs": ["z"], "precision": {"policy": "fp32_strict"}})";
    auto prog = planner::seed_program(spec(icat), h200());
    ASSERT_FALSE(prog.ok());
    EXPECT_EQ(prog.error().where, "graph[0]");
    EXPECT_TRUE(has(prog.error().message, "not expressible: cat: copy input x is i64"))
        << prog.error().message;
}

TEST(ViewPlan, TheCheckerProvesTheFold) {
    const Problem p = diag_matmul();
    // reading A as if it ran along M: a different product, refused
    const std::string wrong = R"(program bad for "diag"
kernel k0 = map(B[N,M]) { mul A[N]; add 1; store C[N,M] }
)";
    auto parsed = dsl::parse_program(wrong, "bad.kf");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", wrong}).ok());
    // the exclusive scan: an inclusive scan of x is not the slice-scan-pad
    const Problem e = exclusive_cumsum();
    const std::string inclusive = R"(program bad2 for "excl"
kernel k0 = rowwise cumsum(x[B,L]) { store y[B,L] }
)";
    auto p2 = dsl::parse_program(inclusive, "bad2.kf");
    ASSERT_TRUE(p2.ok()) << p2.error().to_string();
    EXPECT_FALSE(dsl::check_program(*p2, e, h200(), {"bad2.kf", inclusive}).ok());
}

// Session 20's sweep (tests/python/fixtures/sweep): a GLU - two slices of one tensor, the
// chain of one reading the other (each copy kernel computes its own slice); a softmax over the
// channels whose output a merging reshape reads (the transpose back keeps its own store);
// cumsum (reversed) and l2_normalize over a dim that is not the last (between transposes); an
// expand of a size-1 axis that a merging reshape reads (t.repeat(2, 1): a copy kernel).
Problem glu() {
    return spec(R"({"name": "glu", "dims": {"B": 4, "T": 6, "D": 10, "D2": 20},
        "inputs": {"x": {"shape": ["B", "T", "D2"], "dtype": "f32"}, "r": {"shape": ["B", "T", "D"], "dtype": "f32"}},
        "graph": [{"op": "slice", "inputs": ["x"], "output": "a", "axis": 2, "end": 10, "out_names": ["", "", "D"]},
                  {"op": "slice", "inputs": ["x"], "output": "b", "axis": 2, "start": 10, "out_names": ["", "", "D"]},
                  {"op": "sigmoid", "inputs": ["b"], "output": "g"},
                  {"op": "mul", "inputs": ["a", "g"], "output": "m"},
                  {"op": "add", "inputs": ["r", "m"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

// sigmoid(a) + tanh(b) of two slices of one tensor: b's kernel reads sigmoid(a), a value made
// from the other slice
Problem two_slices_mapped() {
    return spec(R"({"name": "glu2", "dims": {"B": 4, "D": 10, "D2": 20},
        "inputs": {"x": {"shape": ["B", "D2"], "dtype": "f32"}},
        "graph": [{"op": "slice", "inputs": ["x"], "output": "a", "axis": 1, "end": 10, "out_names": ["", "D"]},
                  {"op": "slice", "inputs": ["x"], "output": "b", "axis": 1, "start": 10, "out_names": ["", "D"]},
                  {"op": "sigmoid", "inputs": ["a"], "output": "sa"},
                  {"op": "tanh", "inputs": ["b"], "output": "tb"},
                  {"op": "add", "inputs": ["sa", "tb"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

Problem softmax_channels_flattened() {
    return spec(R"({"name": "smc", "dims": {"B": 3, "C": 7, "L": 10},
        "inputs": {"x": {"shape": ["B", "C", "L"], "dtype": "f32"}},
        "graph": [{"op": "softmax", "inputs": ["x"], "output": "s", "axis": 1},
                  {"op": "reshape", "inputs": ["s"], "output": "y", "shape": ["B", "C*L"]}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

Problem scans_over_a_middle_dim() {
    return spec(R"({"name": "midscan", "dims": {"B": 4, "L": 33, "F": 5},
        "inputs": {"x": {"shape": ["B", "L", "F"], "dtype": "f32"}},
        "graph": [{"op": "cumsum", "inputs": ["x"], "output": "c", "axis": 1, "reverse": true},
                  {"op": "l2_normalize", "inputs": ["c"], "output": "y", "axis": 1}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

Problem repeat_rows() {
    return spec(R"({"name": "rep", "dims": {"B": 4, "C": 6, "B2": 8},
        "inputs": {"t": {"shape": ["B", "C"], "dtype": "f32"}, "x": {"shape": ["B2", "C"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["t"], "output": "t3", "shape": [1, "B", "C"]},
                  {"op": "expand", "inputs": ["t3"], "output": "te", "shape": [2, -1, -1]},
                  {"op": "reshape", "inputs": ["te"], "output": "tr", "shape": ["B2", "C"]},
                  {"op": "mul", "inputs": ["x", "tr"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

// A reshape that only renames an axis (the importer names the second of two axes of one extent
// apart, L_1, so that kernels indexing by dim names do not read the diagonal): Mamba-2's
// segment sum, pairwise differences of one cumsum c[..., :, None] - c[..., None, :], and an
// outer product of an input with itself. The rename is a free view (problem/copy_op.h
// rename_dims): its element-wise readers read the stored tensor under the view's names.
Problem pairwise_difference() {
    return spec(R"({"name": "pairdiff", "dims": {"B": 3, "L": 16, "L_1": 16},
        "inputs": {"x": {"shape": ["B", "L"], "dtype": "f32"}},
        "graph": [{"op": "cumsum", "inputs": ["x"], "output": "c", "axis": -1},
                  {"op": "reshape", "inputs": ["c"], "output": "ci", "shape": ["B", "L", 1]},
                  {"op": "reshape", "inputs": ["c"], "output": "cj", "shape": ["B", 1, "L_1"]},
                  {"op": "sub", "inputs": ["ci", "cj"], "output": "d"},
                  {"op": "exp", "inputs": ["d"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

Problem outer_of_an_input() {
    return spec(R"({"name": "outer", "dims": {"B": 2, "T": 24, "T_1": 24},
        "inputs": {"x": {"shape": ["B", "T"], "dtype": "f32"}, "w": {"shape": ["B", "T", "T_1"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["x"], "output": "xr", "shape": ["B", "T_1"]},
                  {"op": "reshape", "inputs": ["x"], "output": "xi", "shape": ["B", "T", 1]},
                  {"op": "reshape", "inputs": ["xr"], "output": "xj", "shape": ["B", 1, "T_1"]},
                  {"op": "mul", "inputs": ["xi", "xj"], "output": "m"},
                  {"op": "add", "inputs": ["m", "w"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
}

TEST(ViewPlan, ARenameIsAFreeView) {
    const std::string d = seed_checked(pairwise_difference());
    EXPECT_EQ(kernels(d), 2u) << d;  // the cumsum, then the broadcast difference and exp
    EXPECT_FALSE(has(d, "store cj[")) << d;  // the rename is never stored
    EXPECT_TRUE(has(d, "sub c[B,L_1]")) << d;  // c read under the view's name
    const std::string o = seed_checked(outer_of_an_input());
    EXPECT_FALSE(has(o, "store xj[")) << o;
    EXPECT_FALSE(has(o, "store xr[")) << o;
    EXPECT_TRUE(has(o, "x[B,T_1]")) << o;  // an input read under the rename's name
    // the checker proves the read: c under its own name is its diagonal, refused; c under the
    // names of no view of it, refused
    const Problem p = pairwise_difference();
    for (const std::string& wrong : {std::string("sub c[B,L]"), std::string("sub c[L_1,B]")}) {
        std::string text = d;
        const size_t at = text.find("sub c[B,L_1]");
        ASSERT_NE(at, std::string::npos) << d;
        text.replace(at, std::string("sub c[B,L_1]").size(), wrong);
        auto parsed = dsl::parse_program(text, "bad.kf");
        ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
        EXPECT_FALSE(dsl::check_program(*parsed, p, h200(), {"bad.kf", text}).ok()) << text;
    }
}

// A fused projection split into heads as attention modules write it: q, k, v sliced out of
// qkv[B, T, 3*H*D], each viewed as [B, T, H, D] and transposed to [B, H, T, D]; a fourth slice is
// read by an element-wise op. The three head splits read qkv through the slice and the view
// (problem/copy_op.h view_layout): one permute copy each, no slice kernel; the fourth slice,
// read by relu, is a copy kernel of its own.
Problem heads_split() {
    return spec(R"({"name": "heads", "dims": {"B": 2, "T": 24, "H": 4, "D": 8, "E": 128},
        "inputs": {"qkv": {"shape": ["B", "T", "E"], "dtype": "f32"}},
        "graph": [{"op": "slice", "inputs": ["qkv"], "output": "q", "axis": 2, "start": 0, "end": 32},
                  {"op": "slice", "inputs": ["qkv"], "output": "k", "axis": 2, "start": 32, "end": 64},
                  {"op": "slice", "inputs": ["qkv"], "output": "v", "axis": 2, "start": 64, "end": 96},
                  {"op": "slice", "inputs": ["qkv"], "output": "g", "axis": 2, "start": 96},
                  {"op": "reshape", "inputs": ["q"], "output": "qh", "shape": ["B", "T", "H", "D"]},
                  {"op": "reshape", "inputs": ["k"], "output": "kh", "shape": ["B", "T", "H", "D"]},
                  {"op": "reshape", "inputs": ["v"], "output": "vh", "shape": ["B", "T", "H", "D"]},
                  {"op": "permute", "inputs": ["qh"], "output": "qt", "dims": [0, 2, 1, 3]},
                  {"op": "permute", "inputs": ["kh"], "output": "kt", "dims": [0, 2, 1, 3]},
                  {"op": "permute", "inputs": ["vh"], "output": "vt", "dims": [0, 2, 1, 3]},
                  {"op": "relu", "inputs": ["g"], "output": "gr"}],
        "outputs": ["qt", "kt", "vt", "gr"], "precision": {"policy": "fp32_strict"}})");
}

TEST(ViewPlan, HeadSplitsReadTheProjectionThroughTheirSlices) {
    const std::string text = seed_checked(heads_split());
    EXPECT_EQ(kernels(text), 4u) << text;  // three permutes and the relu'd slice
    size_t permutes = 0;
    for (size_t at = text.find("copy permute(qkv[B,T,E])"); at != std::string::npos;
         at = text.find("copy permute(qkv[B,T,E])", at + 1))
        ++permutes;
    EXPECT_EQ(permutes, 3u) << text;
    EXPECT_TRUE(has(text, "copy slice(qkv[B,T,E])")) << text;  // g: read by relu
    EXPECT_TRUE(has(text, "{ relu; store gr[")) << text;
    EXPECT_FALSE(has(text, "store q[")) << text;   // no slice stored for the heads
    EXPECT_FALSE(has(text, "store qh[")) << text;
}

TEST(ViewPlan, SweepShapesPlan) {
    const std::string g = seed_checked(glu());
    EXPECT_TRUE(has(g, "mul a[")) << g;  // b's kernel reads a, stored by a's own
    const std::string g2 = seed_checked(two_slices_mapped());
    EXPECT_TRUE(has(g2, "add sa[")) << g2;
    const std::string s = seed_checked(softmax_channels_flattened());
    EXPECT_TRUE(has(s, "rowwise softmax")) << s;
    const std::string c = seed_checked(scans_over_a_middle_dim());
    EXPECT_TRUE(has(c, "rowwise cumsum")) << c;
    EXPECT_TRUE(has(c, "rowwise l2_normalize")) << c;
    const std::string r = seed_checked(repeat_rows());
    EXPECT_TRUE(has(r, "copy expand(")) << r;
}

TEST(ViewPlan, PlansPassTheSimulatedPipeline) {
    auto device = eval::make_sim_device("h200");
    ASSERT_TRUE(device.ok()) << device.error().to_string();
    eval::InProcessEvaluator evaluator(**device);
    for (const Problem& p : {diag_matmul(), exclusive_cumsum(), exclusive_cumsum(true), broadcasts(),
                             glu(), two_slices_mapped(), softmax_channels_flattened(),
                             scans_over_a_middle_dim(),
                             repeat_rows(), pairwise_difference(), outer_of_an_input(),
                             heads_split()}) {
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
