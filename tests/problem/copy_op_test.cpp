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
    EXPECT_EQ(reshapes_between(*p, "x", "r2").size(), 2u);
    EXPECT_TRUE(is_reshape_of(*p, "r2", "x"));
    EXPECT_FALSE(is_reshape_of(*p, "s", "x"));
    const Op* s = find_copy_op(*p, OpKind::kSlice, {"x"}, "s");
    ASSERT_NE(s, nullptr);
    EXPECT_EQ(s->output, "s");
    EXPECT_EQ(find_copy_op(*p, OpKind::kCat, {"y", "x", "x"}, "c"), nullptr);
}

}  // namespace
}  // namespace kforge
