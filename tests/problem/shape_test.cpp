// Shape, dim-name and dtype inference for every op.
#include <gtest/gtest.h>

#include "problem/spec.h"
#include "test_specs.h"

namespace kforge {
namespace {

using test::one_op;
using Shape = std::vector<int64_t>;

const Tensor& output(const Expected<Problem>& p) {
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    static Tensor none;
    return p.ok() ? *p->find_tensor("Y") : none;
}

TEST(Shape, MatmulBroadcastsBatchDims) {
    auto p = one_op(R"({"B": 2, "M": 3, "K": 4, "N": 6})",
                    R"({"A": {"shape": ["B", 1, "M", "K"], "dtype": "f32"},
                        "W": {"shape": [5, "K", "N"], "dtype": "f32"}})",
                    "matmul", R"(["A", "W"])");
    EXPECT_EQ(output(p).shape, (Shape{2, 5, 3, 6}));
    EXPECT_EQ(output(p).dim_names, (std::vector<std::string>{"B", "", "M", "N"}));
    EXPECT_EQ(output(p).role, TensorRole::kOutput);
}

TEST(Shape, MatmulTransposes) {
    auto p = one_op(R"({"M": 3, "K": 4, "N": 6})",
                    R"({"A": {"shape": ["K", "M"], "dtype": "bf16"},
                        "B": {"shape": ["N", "K"], "dtype": "bf16"}})",
                    "matmul", R"(["A", "B"])", R"("transpose_a": true, "transpose_b": true)");
    EXPECT_EQ(output(p).shape, (Shape{3, 6}));
    EXPECT_EQ(output(p).dtype, DType::kBF16);
}

TEST(Shape, LinearWithBias) {
    auto p = one_op(R"({"K": 4, "N": 5})",
                    R"({"X": {"shape": [2, 3, "K"], "dtype": "f16"},
                        "W": {"shape": ["N", "K"], "dtype": "f16", "param": true},
                        "b": {"shape": ["N"], "dtype": "f16", "param": true}})",
                    "linear", R"(["X", "W", "b"])");
    EXPECT_EQ(output(p).shape, (Shape{2, 3, 5}));
    EXPECT_EQ(output(p).dim_names.back(), "N");
    EXPECT_EQ(p->graph_inputs().size(), 3u);
    EXPECT_EQ(p->find_tensor("W")->role, TensorRole::kParam);
}

TEST(Shape, BinaryOpsBroadcastAndPromote) {
    for (const char* op : {"add", "sub", "mul", "div", "maximum", "minimum"}) {
        auto p = one_op(R"({"N": 4})",
                        R"({"A": {"shape": [3, 1], "dtype": "bf16"},
                            "B": {"shape": ["N"], "dtype": "f16"}})",
                        op, R"(["A", "B"])");
        EXPECT_EQ(output(p).shape, (Shape{3, 4})) << op;
        EXPECT_EQ(output(p).dim_names, (std::vector<std::string>{"", "N"})) << op;
        EXPECT_EQ(output(p).dtype, DType::kF32) << op << ": bf16 with f16 promotes to f32";
    }
    auto p = one_op("{}", R"({"A": {"shape": [2], "dtype": "f64"}, "B": {"shape": [], "dtype": "f32"}})",
                    "add", R"(["A", "B"])");
    EXPECT_EQ(output(p).shape, (Shape{2}));
    EXPECT_EQ(output(p).dtype, DType::kF64);
}

TEST(Shape, UnaryOpsKeepShapeAndDtype) {
    const std::pair<const char*, const char*> ops[] = {
        {"relu", ""}, {"sigmoid", ""}, {"tanh", ""}, {"silu", ""}, {"mish", ""}, {"exp", ""},
        {"log", ""}, {"neg", ""}, {"abs", ""}, {"sqrt", ""}, {"rsqrt", ""}, {"square", ""},
        {"erf", ""}, {"log1p", ""}, {"expm1", ""}, {"sin", ""}, {"cos", ""}, {"sign", ""},
        {"reciprocal", ""},
        {"scale", R"("value": 2)"}, {"add_scalar", R"("value": 1)"},
        {"min_scalar", R"("value": 0)"}, {"max_scalar", R"("value": 0)"},
        {"leaky_relu", R"("negative_slope": 0.2)"}, {"gelu", R"("approximate": "tanh")"},
        {"hardtanh", R"("min": -2, "max": 2)"}, {"clamp", R"("min": 0)"},
        {"softplus", R"("beta": 2, "threshold": 10)"}, {"dropout", R"("p": 0.1)"}};
    for (const auto& [op, attrs] : ops) {
        auto p = one_op(R"({"M": 2})", R"({"X": {"shape": ["M", 3], "dtype": "bf16"}})", op,
                        R"(["X"])", attrs);
        EXPECT_EQ(output(p).shape, (Shape{2, 3})) << op;
        EXPECT_EQ(output(p).dtype, DType::kBF16) << op;
    }
}

TEST(Shape, ReductionsRemoveOrKeepTheAxis) {
    const char* x = R"({"X": {"shape": [2, 3, 4], "dtype": "f32"}})";
    for (const char* op : {"sum", "mean", "max", "min", "prod", "logsumexp"}) {
        EXPECT_EQ(output(one_op("{}", x, op, R"(["X"])")).shape, (Shape{2, 3})) << op;
        EXPECT_EQ(output(one_op("{}", x, op, R"(["X"])", R"("axis": 1)")).shape, (Shape{2, 4}));
        auto kept = one_op("{}", x, op, R"(["X"])", R"("axis": -3, "keepdim": true)");
        EXPECT_EQ(output(kept).shape, (Shape{1, 3, 4})) << op;
        EXPECT_EQ(kept->ops[0].attrs.axis, 0) << "axis is normalized to >= 0";
    }
    for (const char* op : {"softmax", "log_softmax"}) {
        auto p = one_op("{}", x, op, R"(["X"])", R"("axis": -2)");
        EXPECT_EQ(output(p).shape, (Shape{2, 3, 4})) << op;
        EXPECT_EQ(p->ops[0].attrs.axis, 1) << op;
    }
}

TEST(Shape, NormsOverTrailingDimsAndGroups) {
    auto ln = one_op(R"({"D": 4})",
                     R"({"X": {"shape": [2, 3, "D"], "dtype": "f32"},
                         "w": {"shape": [3, "D"], "dtype": "f32"},
                         "b": {"shape": [3, "D"], "dtype": "f32"}})",
                     "layer_norm", R"(["X", "w", "b"])", R"("normalized_shape": [3, "D"])");
    EXPECT_EQ(output(ln).shape, (Shape{2, 3, 4}));
    EXPECT_EQ(ln->ops[0].attrs.axis, 1);
    auto rms = one_op("{}", R"({"X": {"shape": [2, 5], "dtype": "f32"}, "w": {"shape": [5], "dtype": "f32"}})",
                      "rms_norm", R"(["X", "w"])");
    EXPECT_EQ(output(rms).shape, (Shape{2, 5}));
    EXPECT_EQ(rms->ops[0].attrs.normalized_shape, (Shape{5})) << "default: the last dim";
    auto gn = one_op("{}", R"({"X": {"shape": [2, 4, 3, 3], "dtype": "f32"},
                               "w": {"shape": [4], "dtype": "f32"}, "b": {"shape": [4], "dtype": "f32"}})",
                     "group_norm", R"(["X", "w", "b"])", R"("num_groups": 2)");
    EXPECT_EQ(output(gn).shape, (Shape{2, 4, 3, 3}));
    EXPECT_EQ(gn->ops[0].attrs.axis, 1);
}

TEST(Shape, IntegerDtypesWhereTheOpAllows) {
    auto p = one_op("{}", R"({"A": {"shape": [2], "dtype": "i32"}, "B": {"shape": [2], "dtype": "i64"}})",
                    "add", R"(["A", "B"])");
    EXPECT_EQ(output(p).dtype, DType::kI64);
}

TEST(Shape, GraphInAnyOrderIsSortedStably) {
    std::string spec = test::make_spec(
        "{}", R"({"X": {"shape": [2], "dtype": "f32"}})",
        R"([{"op": "exp", "inputs": ["B"], "output": "Y"},
            {"op": "relu", "inputs": ["X"], "output": "A"},
            {"op": "neg", "inputs": ["A"], "output": "B"}])");
    auto p = parse_problem(spec, "test");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    ASSERT_EQ(p->ops.size(), 3u);
    EXPECT_EQ(p->ops[0].output, "A");
    EXPECT_EQ(p->ops[1].output, "B");
    EXPECT_EQ(p->ops[2].output, "Y");
    EXPECT_EQ(p->ops[2].json_path, "graph[0]") << "paths keep the spec's numbering";
    EXPECT_EQ(p->producer("B")->kind, OpKind::kNeg);
    EXPECT_EQ(p->producer("X"), nullptr);
    EXPECT_EQ(p->tensors.size(), 4u);
    EXPECT_EQ(p->find_tensor("A")->role, TensorRole::kIntermediate);
}

}  // namespace
}  // namespace kforge
