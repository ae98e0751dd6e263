// Round trip through problem_to_json, default tolerances, enum names.
#include <gtest/gtest.h>

#include "problem/spec.h"
#include "test_specs.h"

namespace kforge {
namespace {

const char* kGemmBiasRelu = R"json({
  "name": "gemm_bias_relu_bf16_8192",
  "description": "Y = relu(X @ W^T + b)",
  "dims": {"M": 8192, "N": 8192, "K": 4096},
  "inputs": {
    "X": {"shape": ["M", "K"], "dtype": "bf16"},
    "W": {"shape": ["N", "K"], "dtype": "bf16", "param": true},
    "b": {"shape": ["N"], "dtype": "bf16", "param": true}
  },
  "graph": [
    {"op": "linear", "inputs": ["X", "W", "b"], "output": "H"},
    {"op": "relu", "inputs": ["H"], "output": "Y"}
  ],
  "outputs": ["Y"],
  "precision": {"policy": "bf16", "atol": 1e-2, "rtol": 1e-2, "min_fraction": 0.999}
})json";

void expect_same(const Problem& a, const Problem& b) {
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.description, b.description);
    EXPECT_EQ(a.dims, b.dims);
    EXPECT_EQ(a.derived_dims, b.derived_dims);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.policy, b.policy);
    EXPECT_EQ(a.tolerance.atol, b.tolerance.atol);
    EXPECT_EQ(a.tolerance.rtol, b.tolerance.rtol);
    EXPECT_EQ(a.tolerance.min_fraction, b.tolerance.min_fraction);
    EXPECT_EQ(a.tolerance.max_error, b.tolerance.max_error);
    ASSERT_EQ(a.tensors.size(), b.tensors.size());
    for (size_t i = 0; i < a.tensors.size(); ++i) {
        EXPECT_EQ(a.tensors[i].name, b.tensors[i].name);
        EXPECT_EQ(a.tensors[i].shape, b.tensors[i].shape);
        EXPECT_EQ(a.tensors[i].dim_names, b.tensors[i].dim_names);
        EXPECT_EQ(a.tensors[i].dtype, b.tensors[i].dtype);
        EXPECT_EQ(a.tensors[i].role, b.tensors[i].role);
    }
    ASSERT_EQ(a.ops.size(), b.ops.size());
    for (size_t i = 0; i < a.ops.size(); ++i) {
        const OpAttrs &x = a.ops[i].attrs, &y = b.ops[i].attrs;
        EXPECT_EQ(a.ops[i].kind, b.ops[i].kind);
        EXPECT_EQ(a.ops[i].inputs, b.ops[i].inputs);
        EXPECT_EQ(a.ops[i].output, b.ops[i].output);
        EXPECT_EQ(x.transpose_a, y.transpose_a);
        EXPECT_EQ(x.transpose_b, y.transpose_b);
        EXPECT_EQ(x.axis, y.axis);
        EXPECT_EQ(x.keepdim, y.keepdim);
        EXPECT_EQ(x.scalar, y.scalar);
        EXPECT_EQ(x.negative_slope, y.negative_slope);
        EXPECT_EQ(x.lo, y.lo);
        EXPECT_EQ(x.hi, y.hi);
        EXPECT_EQ(x.beta, y.beta);
        EXPECT_EQ(x.threshold, y.threshold);
        EXPECT_EQ(x.eps, y.eps);
        EXPECT_EQ(x.num_groups, y.num_groups);
        EXPECT_EQ(x.p, y.p);
        EXPECT_EQ(x.gelu, y.gelu);
        EXPECT_EQ(x.normalized_shape, y.normalized_shape);
        EXPECT_EQ(x.stride, y.stride);
        EXPECT_EQ(x.padding, y.padding);
        EXPECT_EQ(x.dilation, y.dilation);
        EXPECT_EQ(x.groups, y.groups);
        EXPECT_EQ(x.out_dims, y.out_dims);
    }
}

void expect_round_trip(const std::string& text) {
    auto p = parse_problem(text, "test");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    std::string written = problem_to_json(*p).dump(2);
    auto q = parse_problem(written, "written");
    ASSERT_TRUE(q.ok()) << q.error().to_string() << "\n" << written;
    expect_same(*p, *q);
    EXPECT_EQ(problem_to_json(*q).dump(2), written) << "writing is a fixed point";
}

TEST(Spec, DocExampleParsesAndRoundTrips) {
    auto p = parse_problem(kGemmBiasRelu, "doc");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->find_tensor("Y")->shape, (std::vector<int64_t>{8192, 8192}));
    EXPECT_EQ(p->find_tensor("Y")->bytes(), int64_t{8192} * 8192 * 2);
    EXPECT_EQ(p->tolerance.min_fraction, 0.999);
    expect_round_trip(kGemmBiasRelu);
}

// erf ... reciprocal and maximum / minimum of two tensors (KernelBench's torch.erf, ...,
// torch.maximum(a, b)): parsed, shaped like add, written back unchanged; one operand is refused.
TEST(Spec, ElementwiseMathOpsRoundTrip) {
    std::string spec = test::make_spec(
        R"({"M": 3, "N": 4})",
        R"({"X": {"shape": ["M", "N"], "dtype": "f32"}, "b": {"shape": ["N"], "dtype": "f32"}})",
        R"([{"op": "erf", "inputs": ["X"], "output": "E"},
            {"op": "log1p", "inputs": ["E"], "output": "L"},
            {"op": "expm1", "inputs": ["L"], "output": "X1"},
            {"op": "sin", "inputs": ["X1"], "output": "S"},
            {"op": "cos", "inputs": ["S"], "output": "C"},
            {"op": "sign", "inputs": ["C"], "output": "Sg"},
            {"op": "reciprocal", "inputs": ["Sg"], "output": "R"},
            {"op": "maximum", "inputs": ["b", "R"], "output": "Mx"},
            {"op": "minimum", "inputs": ["Mx", "X"], "output": "Y"}])",
        R"(["Y"])");
    expect_round_trip(spec);
    auto p = parse_problem(spec, "test");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->find_tensor("Mx")->shape, (std::vector<int64_t>{3, 4})) << "broadcast as add";
    EXPECT_EQ(p->ops[7].kind, OpKind::kMaximum);
    auto one = parse_problem(test::make_spec(R"({})", R"({"X": {"shape": [2], "dtype": "f32"}})",
                                             R"([{"op": "maximum", "inputs": ["X"], "output": "Y"}])",
                                             R"(["Y"])"),
                             "test");
    ASSERT_FALSE(one.ok());
    EXPECT_NE(one.error().to_string().find("graph[0]"), std::string::npos) << one.error().to_string();
}

TEST(Spec, EveryAttributeRoundTrips) {
    std::string spec = test::make_spec(
        R"({"B": 2, "M": 3, "K": 4, "C": 4})",
        R"({"A": {"shape": ["B", "K", "M"], "dtype": "f32"}, "W": {"shape": ["C", "K"], "dtype": "f32", "param": true},
            "g": {"shape": ["C"], "dtype": "f32"}})",
        R"([{"op": "matmul", "inputs": ["A", "W"], "output": "P", "transpose_a": true, "transpose_b": true},
            {"op": "scale", "inputs": ["P"], "output": "S", "value": 0.125},
            {"op": "leaky_relu", "inputs": ["S"], "output": "L", "negative_slope": 0.3},
            {"op": "gelu", "inputs": ["L"], "output": "G", "approximate": "tanh"},
            {"op": "clamp", "inputs": ["G"], "output": "Cl", "max": 6},
            {"op": "hardtanh", "inputs": ["Cl"], "output": "Ht", "min": -3, "max": 3},
            {"op": "softplus", "inputs": ["Ht"], "output": "Sp", "beta": 2, "threshold": 5},
            {"op": "dropout", "inputs": ["Sp"], "output": "D", "p": 0.25},
            {"op": "layer_norm", "inputs": ["D", "g"], "output": "N1", "normalized_shape": ["C"], "eps": 1e-6},
            {"op": "group_norm", "inputs": ["N1"], "output": "N2", "num_groups": 3, "eps": 1e-3},
            {"op": "prod", "inputs": ["N2"], "output": "Pr", "axis": 2, "keepdim": true},
            {"op": "logsumexp", "inputs": ["Pr"], "output": "R", "axis": 1, "keepdim": true},
            {"op": "softmax", "inputs": ["R"], "output": "Y", "axis": 0}])",
        R"(["Y"])", R"({"policy": "tf32", "max_error": 0.5})");
    expect_round_trip(spec);
    auto p = parse_problem(spec, "test");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    EXPECT_EQ(p->tolerance.atol, 5e-3) << "policy default";
    EXPECT_EQ(p->tolerance.max_error, 0.5);
    EXPECT_EQ(effective_max_error(p->tolerance), 0.5);
}

// find_tensor reads the name index the parser builds, and stays right where the tensors change
// after it (a stale index falls back to the scan) and after index_tensors.
TEST(Spec, FindTensorByIndexAndAfterChanges) {
    auto parsed = parse_problem(kGemmBiasRelu, "gemm");
    ASSERT_TRUE(parsed.ok()) << parsed.error().to_string();
    Problem p = *parsed;
    EXPECT_EQ(p.tensor_index.size(), p.tensors.size());
    for (const Tensor& t : p.tensors) EXPECT_EQ(p.find_tensor(t.name), &t) << t.name;
    EXPECT_EQ(p.find_tensor("nope"), nullptr);
    Problem c = p;  // a copy: positions, so its index points into its own tensors
    EXPECT_EQ(c.find_tensor("H"), &c.tensors[3]);
    EXPECT_EQ(c.find_tensor("H")->name, "H");
    // renamed, removed, added, reordered without re-indexing: the scan's answers
    c.tensors[0].name = "X2";
    EXPECT_EQ(c.find_tensor("X"), nullptr);
    EXPECT_EQ(c.find_tensor("X2"), &c.tensors[0]);
    c.tensors.erase(c.tensors.begin() + 1);  // W
    EXPECT_EQ(c.find_tensor("W"), nullptr);
    EXPECT_EQ(c.find_tensor("b")->name, "b");
    EXPECT_EQ(c.find_tensor("Y")->name, "Y");
    c.tensors.push_back(Tensor{.name = "Z"});
    EXPECT_EQ(c.find_tensor("Z"), &c.tensors.back());
    std::swap(c.tensors[0], c.tensors[1]);
    EXPECT_EQ(c.find_tensor("X2"), &c.tensors[1]);
    c.index_tensors();
    EXPECT_EQ(c.tensor_index.size(), c.tensors.size());
    for (const Tensor& t : c.tensors) EXPECT_EQ(c.find_tensor(t.name), &t) << t.name;
    // repeated names (the parser refuses them): the first, as the scan gives it
    c.tensors.push_back(Tensor{.name = "Z"});
    c.index_tensors();
    EXPECT_EQ(c.find_tensor("Z"), &c.tensors[c.tensors.size() - 2]);
}

TEST(Spec, DefaultTolerances) {
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kFp32Strict).atol, 1e-4);
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kFp32Strict).min_fraction, 1.0);
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kTf32).rtol, 5e-3);
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kBf16).atol, 2e-2);
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kFp16).rtol, 1e-2);
    EXPECT_EQ(default_tolerance(PrecisionPolicy::kFp16).min_fraction, 0.999);
    EXPECT_DOUBLE_EQ(effective_max_error(default_tolerance(PrecisionPolicy::kBf16)), 4.0);
}

TEST(Spec, EnumNamesRoundTrip) {
    for (std::string_view name : all_op_names()) {
        auto k = op_from_string(name);
        ASSERT_TRUE(k.has_value()) << name;
        EXPECT_EQ(to_string(*k), name);
    }
    EXPECT_EQ(all_op_names().size(), static_cast<size_t>(OpKind::kGru) + 1);  // the last OpKind
    for (DType d : {DType::kF64, DType::kF32, DType::kF16, DType::kBF16, DType::kI32, DType::kI64}) {
        EXPECT_EQ(dtype_from_string(to_string(d)), d);
    }
    for (auto p : {PrecisionPolicy::kFp32Strict, PrecisionPolicy::kTf32, PrecisionPolicy::kBf16,
                   PrecisionPolicy::kFp16}) {
        EXPECT_EQ(policy_from_string(to_string(p)), p);
    }
    EXPECT_FALSE(op_from_string("gelux").has_value());
    EXPECT_EQ(op_class(OpKind::kLinear), OpClass::kMatrix);
    EXPECT_EQ(op_class(OpKind::kMean), OpClass::kReduction);
    EXPECT_EQ(op_class(OpKind::kLogsumexp), OpClass::kRowwise);
    EXPECT_EQ(op_class(OpKind::kMish), OpClass::kElementwise);
    EXPECT_EQ(op_class(OpKind::kConv2d), OpClass::kConv);
    EXPECT_EQ(dtype_bytes(DType::kBF16), 2);
}

}  // namespace
}  // namespace kforge
