// problem/copy_op.h: each shape op's gather (permute, slice with a step, cat of three, pad with a
// value, expand with a new leading axis, a merging reshape) run on fp64 data equals the
// interpreter's shape op; find_copy_op picks the op the stored tensor comes from, through
// element-wise ops, and reads an input through a chain of reshapes.
#include <gtest/gtest.h>

#include <cmath>

#include "problem/copy_op.h"
#include "problem/interpret.h"
#include "problem/spec.h"

namespace kforge {
namespace {

const char* kSpec = R"({"name": "g", "dims": {"B": 2, "C": 3, "L": 4, "D": 5},
    "inputs": {"x": {"shape": ["B", "C", "L"], "dtype": "f32"},
               "y": {"shape": ["B", "D", "L"], "dtype": "f32"},
               "v": {"shape": ["C", 1], "dtype": "f32"}},
    "graph": [{"op": "permute", "inputs": ["x"], "output": "p", "dims": [2, 0, 1]},
              {"op": "slice", "inputs": ["x"], "output": "s", "axis": 2, "start": -3, "step": 2},
              {"op": "cat", "inputs": ["x", "y", "x"], "output": "c", "axis": 1},
              {"op": "pad", "inputs": ["x"], "output": "q", "pads": [[1, 0], [0, 2], [2, 1]], "value": -1.5},
              {"op": "expand", "inputs": ["v"], "output": "e", "shape": ["B", "C", "L"]},
              {"op": "reshape", "inputs": ["x"], "output": "r", "shape": ["B", "C*L"]},
              {"op": "reshape", "inputs": ["r"], "output": "r2", "shape": ["B", "C", "L"]},
              {"op": "slice", "inputs": ["r2"], "output": "s2", "axis": 1, "start": 1},
              {"op": "relu", "inputs": ["s2"], "output": "z"}],
    "outputs": ["p", "s", "c", "q", "e", "r", "z"], "precision": {"policy": "fp32_strict"}})";

TEST(CopyOp, GathersEqualTheInterpreter) {
    auto p = parse_problem(kSpec, "g.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    std::map<std::string, std::vector<double>> in;
    for (const Tensor* t : p->graph_inputs())
        for (int64_t i = 0; i < t->numel(); ++i)
            in[t->name].push_back(std::sin(0.7 * double(i) + double(t->name[0])));
    auto ref = interpret(*p, in);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();
    for (const Op& op : p->ops) {
        if (!is_copy_op(op.kind) || op.output == "r2" || op.output == "s2") continue;
        SCOPED_TRACE(op.output);
        const CopyGeometry g = copy_geometry(*p, op);
        std::vector<const std::vector<double>*> src;
        for (const CopySource& s : g.sources) src.push_back(&in.at(s.tensor));
        const std::vector<double> got = run_copy(g, src);
        const auto& want = ref->at(op.output);
        ASSERT_EQ(got.size(), want.size());
        for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i], want[i]) << i;
    }
    EXPECT_FALSE(copy_geometry(*p, p->ops[3]).unbounded());  // the pad
    EXPECT_TRUE(copy_geometry(*p, p->ops[0]).unbounded());   // the permute
}

TEST(CopyOp, FindsTheOpThroughReshapesAndElementwiseConsumers) {
    auto p = parse_problem(kSpec, "g.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    const Op* s2 = find_copy_op(*p, OpKind::kSlice, {"x"}, "z");  // x -> r -> r2 -> s2 -> relu z
    ASSERT_NE(s2, nullptr);
    EXPECT_EQ(s2->output, "s2");
    EXPECT_EQ(views_between(*p, "x", "r2").size(), 2u);
    EXPECT_TRUE(is_view_of(*p, "r2", "x"));
    EXPECT_TRUE(is_view_of(*p, "s", "x"));  // a slice is a view: base and strides
    EXPECT_FALSE(is_view_of(*p, "p", "x"));  // a permute moves data
    const Op* s = find_copy_op(*p, OpKind::kSlice, {"x"}, "s");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->output, "s");
    EXPECT_EQ(find_copy_op(*p, OpKind::kCat, {"y", "x", "x"}, "c"), nullptr);
}

// A fused projection split as attention does it: qkv[B,T,3*H*D] sliced into q, k, v, each
// reshaped to [B,T,H,D] and permuted to [B,H,T,D]. Each permute reads qkv's buffer through the
// slice and the reshape (view_layout): the gather equals the interpreter's permute.
const char* kSplit = R"({"name": "split", "dims": {"B": 2, "T": 3, "H": 2, "D": 4, "E": 24},
    "inputs": {"qkv": {"shape": ["B", "T", "E"], "dtype": "f32"}},
    "graph": [{"op": "slice", "inputs": ["qkv"], "output": "k", "axis": 2, "start": 8, "end": 16},
              {"op": "reshape", "inputs": ["k"], "output": "kh", "shape": ["B", "T", "H", "D"]},
              {"op": "permute", "inputs": ["kh"], "output": "kt", "dims": [0, 2, 1, 3]},
              {"op": "slice", "inputs": ["qkv"], "output": "w", "axis": 1, "start": 1, "step": 2},
              {"op": "reshape", "inputs": ["w"], "output": "wr", "shape": ["B", "E"]},
              {"op": "reshape", "inputs": ["k"], "output": "kf", "shape": ["B", "T*H*D"]}],
    "outputs": ["kt", "wr", "kf"], "precision": {"policy": "fp32_strict"}})";

TEST(CopyOp, ReadsThroughSlicesAndReshapes) {
    auto p = parse_problem(kSplit, "split.json");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    std::map<std::string, std::vector<double>> in;
    for (int64_t i = 0; i < 2 * 3 * 24; ++i) in["qkv"].push_back(double(i));
    auto ref = interpret(*p, in);
    ASSERT_TRUE(ref.ok()) << ref.error().to_string();

    EXPECT_EQ(views_between(*p, "qkv", "kh").size(), 2u);
    const auto kh = view_layout(*p, "qkv", "kh");
    ASSERT_TRUE(kh.has_value());
    EXPECT_EQ(kh->base, 8);
    EXPECT_EQ(kh->stride, (std::vector<int64_t>{72, 24, 4, 1}));
    const CopyGeometry g = copy_geometry(*p, p->ops[2], {kh});
    ASSERT_EQ(g.sources.size(), 1u);
    const std::vector<double> got = run_copy(g, {&in.at("qkv")});
    EXPECT_EQ(got, ref->at("kt"));

    // a slice with a step (every other row of T) then a reshape merging [T/2=1, E]: one row each
    const auto wr = view_layout(*p, "qkv", "wr");
    ASSERT_TRUE(wr.has_value());
    EXPECT_EQ(wr->base, 24);
    // a reshape merging T with the sliced E: the rows are apart in qkv's buffer, no strides
    EXPECT_FALSE(view_layout(*p, "qkv", "kf").has_value());
    EXPECT_FALSE(is_view_of(*p, "kf", "qkv"));
}

TEST(CopyOp, ReshapeStridesRegroupRunsOfMemory) {
    // contiguous: row-major of the new shape
    EXPECT_EQ(reshape_strides({2, 3, 4}, {12, 4, 1}, {6, 4}), (std::vector<int64_t>{4, 1}));
    // a split of a strided axis: the last axis's stride scales the new axes
    EXPECT_EQ(reshape_strides({2, 8}, {24, 1}, {2, 2, 4}), (std::vector<int64_t>{24, 4, 1}));
    // a transposed pair cannot merge
    EXPECT_FALSE(reshape_strides({3, 4}, {1, 3}, {12}).has_value());
    // axes of extent 1 join any run; new axes of extent 1 take any stride
    EXPECT_EQ(reshape_strides({2, 1, 4}, {4, 99, 1}, {8}), (std::vector<int64_t>{1}));
    EXPECT_FALSE(reshape_strides({2, 1, 4}, {8, 99, 1}, {8}).has_value());  // rows apart
    EXPECT_TRUE(reshape_strides({4}, {2}, {1, 4, 1}).has_value());
    EXPECT_EQ(reshape_strides({4}, {2}, {1, 4, 1})->at(1), 2);
    EXPECT_FALSE(reshape_strides({2, 3}, {3, 1}, {5}).has_value());  // counts differ
}

}  // namespace
}  // namespace kforge
