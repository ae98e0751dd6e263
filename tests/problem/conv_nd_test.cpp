// conv1d, conv3d and conv_transpose1d/2d/3d in the problem spec: attribute parsing and its
// errors, shape inference (sizes, default names), the round trip through problem_to_json, the
// fp64 interpreter on hand-computed cases and the work counts.
#include <gtest/gtest.h>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "test_specs.h"

namespace kforge {
namespace {

using Shape = std::vector<int64_t>;
using Names = std::vector<std::string>;

// One op `op` reading x (and w, b) with literal or named shapes.
struct NdSpec {
    std::string op = "conv1d";
    std::string attrs;
    std::string x = "[1, 1, 5]";
    std::string w = "[1, 1, 3]";
    std::string b;
    std::string dims = "{}";
    std::string text() const {
        std::string inputs = R"({"x": {"shape": )" + x + R"(, "dtype": "f32"}, "w": {"shape": )" +
                             w + R"(, "dtype": "f32", "param": true})" +
                             (b.empty() ? "" : R"(, "b": {"shape": )" + b + R"(, "dtype": "f32"})") +
                             "}";
        std::string graph = R"([{"op": ")" + op + R"(", "inputs": )" +
                            std::string(b.empty() ? R"(["x", "w"])" : R"(["x", "w", "b"])") +
                            R"(, "output": "y")" + (attrs.empty() ? "" : ", " + attrs) + "}]";
        return test::make_spec(dims, inputs, graph, R"(["y"])");
    }
};

Problem parsed(const std::string& text) {
    auto p = parse_problem(text, "conv_nd");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string()) << "\n" << text;
    return p.ok() ? *p : Problem{};
}

Shape y_shape(const NdSpec& s) {
    Problem p = parsed(s.text());
    const Tensor* y = p.find_tensor("y");
    return y ? y->shape : Shape{};
}

void expect_error(const NdSpec& s, const std::string& where,
                  std::initializer_list<const char*> fragments) {
    auto p = parse_problem(s.text(), "conv_nd");
    ASSERT_FALSE(p.ok()) << "accepted: " << s.text();
    EXPECT_EQ(p.error().where, where) << p.error().to_string();
    for (const char* f : fragments) {
        EXPECT_NE(p.error().message.find(f), std::string::npos)
            << "message lacks \"" << f << "\": " << p.error().message;
    }
}

std::vector<double> run(const NdSpec& s, const std::vector<double>& x, const std::vector<double>& w,
                        const std::vector<double>& b = {}) {
    Problem p = parsed(s.text());
    if (p.ops.empty()) return {};
    TensorValues in{{"x", x}, {"w", w}};
    if (!b.empty()) in["b"] = b;
    auto out = interpret(p, in);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->at("y") : std::vector<double>{};
}

TEST(ConvNdSpec, KindsRanksAndAttributes) {
    for (const char* name : {"conv1d", "conv3d", "conv_transpose1d", "conv_transpose2d",
                             "conv_transpose3d"}) {
        auto k = op_from_string(name);
        ASSERT_TRUE(k.has_value()) << name;
        EXPECT_EQ(to_string(*k), name);
        EXPECT_EQ(op_class(*k), OpClass::kConv);
    }
    EXPECT_EQ(spatial_rank(OpKind::kConv1d), 1);
    EXPECT_EQ(spatial_rank(OpKind::kConv2d), 2);
    EXPECT_EQ(spatial_rank(OpKind::kConvTranspose3d), 3);
    EXPECT_TRUE(is_conv_transpose(OpKind::kConvTranspose2d));
    EXPECT_FALSE(is_conv_transpose(OpKind::kConv2d));

    NdSpec s{"conv3d", R"("stride": [1, 2, 3], "padding": 1)", "[2, 4, 8, 9, 10]",
             "[6, 2, 3, 3, 3]"};
    s.attrs += R"(, "groups": 2)";
    Problem p = parsed(s.text());
    ASSERT_EQ(p.ops.size(), 1u);
    const OpAttrs& a = p.ops[0].attrs;
    EXPECT_EQ(a.stride, (Shape{1, 2, 3}));
    EXPECT_EQ(a.padding, (Shape{1, 1, 1}));
    EXPECT_EQ(a.dilation, (Shape{1, 1, 1}));
    // D: 8 + 2 - 3 + 1 = 8; H: (9 + 2 - 3) / 2 + 1 = 5; W: (10 + 2 - 3) / 3 + 1 = 4
    EXPECT_EQ(p.find_tensor("y")->shape, (Shape{2, 6, 8, 5, 4}));
    EXPECT_EQ(a.out_dims, (Names{"", "P", "Q"}));  // x's literal D kept; the others named

    NdSpec t{"conv_transpose2d", R"("stride": 2, "padding": [1, 0], "output_padding": [1, 0])",
             "[1, 3, 5, 6]", "[3, 4, 3, 2]"};
    Problem q = parsed(t.text());
    const OpAttrs& ta = q.ops[0].attrs;
    EXPECT_EQ(ta.output_padding, (Shape{1, 0}));
    // (5 - 1) * 2 - 2 + 3 + 1 = 10; (6 - 1) * 2 - 0 + 2 + 0 = 12
    EXPECT_EQ(q.find_tensor("y")->shape, (Shape{1, 4, 10, 12}));
    // transposed groups: W [C, K/g, ...], K = 2 * 3
    t.attrs = R"("groups": 3)";
    t.w = "[3, 2, 1, 1]";
    EXPECT_EQ(y_shape(t), (Shape{1, 6, 5, 6}));
}

TEST(ConvNdSpec, NamesAndRoundTrip) {
    NdSpec s{"conv1d", R"("padding": 1)", R"(["N", "C", "L"])", R"(["K", "C", 3])", ""};
    s.dims = R"({"N": 2, "C": 3, "L": 16, "K": 5})";
    Problem same = parsed(s.text());
    EXPECT_EQ(same.find_tensor("y")->dim_names, (Names{"N", "K", "L"}));  // keeps L's size
    s.attrs = R"("stride": 2, "out_dims": ["Lout"])";
    Problem named = parsed(s.text());
    EXPECT_EQ(named.find_tensor("y")->dim_names, (Names{"N", "K", "Lout"}));
    EXPECT_EQ(named.dims.at("Lout"), 7);
    NdSpec t{"conv_transpose3d", R"("stride": [2, 1, 1], "output_padding": [1, 0, 0], "dilation": [1, 2, 1])",
             R"(["N", "C", "D", "D", "D"])", R"(["C", "K", 3, 3, 3])", R"(["K"])"};
    t.dims = R"({"N": 1, "C": 2, "D": 4, "K": 3})";
    Problem p = parsed(t.text());
    EXPECT_EQ(p.find_tensor("y")->shape, (Shape{1, 3, 10, 8, 6}));
    EXPECT_EQ(p.find_tensor("y")->dim_names, (Names{"N", "K", "Do", "Do2", "Do3"}));
    // problem_to_json writes the attributes back; the parse of it is the same problem
    auto again = parse_problem(problem_to_json(p).dump(), "again");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    const OpAttrs &a = p.ops[0].attrs, &b = again->ops[0].attrs;
    EXPECT_EQ(again->ops[0].kind, OpKind::kConvTranspose3d);
    EXPECT_EQ(a.stride, b.stride);
    EXPECT_EQ(a.output_padding, b.output_padding);
    EXPECT_EQ(a.dilation, b.dilation);
    EXPECT_EQ(again->find_tensor("y")->shape, p.find_tensor("y")->shape);
}

TEST(ConvNdSpec, Errors) {
    expect_error({"conv1d", R"("stride": [1, 2])"}, "graph[0].stride",
                 {"a 1-element array", "array of 2"});
    expect_error({"conv3d", R"("padding": [1, 1])", "[1, 1, 4, 4, 4]", "[1, 1, 3, 3, 3]"},
                 "graph[0].padding", {"a triple [d, h, w]"});
    expect_error({"conv1d", "", "[1, 1, 4, 4]"}, "graph[0].inputs[0]",
                 {"must be [N, C, W]", "conv1d"});
    expect_error({"conv1d", R"("output_padding": 1)"}, "graph[0].output_padding",
                 {"unknown attribute"});
    expect_error({"conv1d", R"("out_dims": ["A", "B"])"}, "graph[0].out_dims",
                 {"one dim name"});
    expect_error({"conv_transpose1d", R"("output_padding": 1)", "[1, 1, 4]", "[1, 1, 3]"},
                 "graph[0].output_padding", {"smaller than stride[0] or dilation[0]"});
    expect_error({"conv_transpose1d", "", "[1, 2, 4]", "[3, 1, 3]"}, "graph[0].inputs[1]",
                 {"[C, K/groups, S]", "C = 2"});
    expect_error({"conv_transpose1d", R"("groups": 2)", "[1, 3, 4]", "[3, 1, 3]"},
                 "graph[0].groups", {"does not divide the channels C = 3"});
    expect_error({"conv_transpose1d", R"("padding": 3)", "[1, 1, 2]", "[1, 1, 2]"},
                 "graph[0].inputs[0]", {"output size would be -3 < 1"});
    expect_error({"conv3d", "", "[1, 1, 2, 4, 4]", "[1, 1, 3, 3, 3]"}, "graph[0].inputs[1]",
                 {"output size would be < 1", "D + 2*padding[0] = 2"});
}

TEST(ConvNdInterpret, Conv1dAndConv3d) {
    // [1 0 -1] over 1..5, padding 1, stride 2: (0 - 2), (2 - 4), (4 - 0)
    EXPECT_EQ(run({"conv1d", R"("padding": 1, "stride": 2)"}, {1, 2, 3, 4, 5}, {1, 0, -1}),
              (std::vector<double>{-2, -2, 4}));
    // dilation 2 and a bias: x0 - x2 + 0.5, x1 - x3 + 0.5, x2 - x4 + 0.5 (kernel [1, -1])
    EXPECT_EQ(run({"conv1d", R"("dilation": 2)", "[1, 1, 5]", "[1, 1, 2]", "[1]"},
                  {1, 2, 4, 8, 16}, {1, -1}, {0.5}),
              (std::vector<double>{-2.5, -5.5, -11.5}));
    // 2x2x2 x and w with values 1..8, padding 1, stride 2: output o reads only x[o] through
    // tap 1 - o, so y[o] = x[o] * w[1 - o]
    std::vector<double> v = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_EQ(run({"conv3d", R"("padding": 1, "stride": 2)", "[1, 1, 2, 2, 2]", "[1, 1, 2, 2, 2]"},
                  v, v),
              (std::vector<double>{8, 14, 18, 20, 20, 18, 14, 8}));
    // depthwise conv1d: groups = C = 2, each channel its own kernel
    EXPECT_EQ(run({"conv1d", R"("groups": 2)", "[1, 2, 3]", "[2, 1, 2]"}, {1, 2, 3, 10, 20, 30},
                  {1, 1, 1, -1}),
              (std::vector<double>{3, 5, -10, -10}));
}

TEST(ConvNdInterpret, TransposedForms) {
    // stride 2, kernel [1 1]: every x value lands twice; padding 1 crops one each side;
    // output_padding 1 adds a zero at the end
    EXPECT_EQ(run({"conv_transpose1d", R"("stride": 2)", "[1, 1, 3]", "[1, 1, 2]"}, {1, 2, 3}, {1, 1}),
              (std::vector<double>{1, 1, 2, 2, 3, 3}));
    EXPECT_EQ(run({"conv_transpose1d", R"("stride": 2, "padding": 1)", "[1, 1, 3]", "[1, 1, 2]"},
                  {1, 2, 3}, {1, 1}),
              (std::vector<double>{1, 2, 2, 3}));
    EXPECT_EQ(run({"conv_transpose1d", R"("stride": 2, "output_padding": 1)", "[1, 1, 3]",
                   "[1, 1, 2]", "[1]"},
                  {1, 2, 3}, {1, 1}, {0.5}),
              (std::vector<double>{1.5, 1.5, 2.5, 2.5, 3.5, 3.5, 0.5}));
    // stride 1, overlapping taps [1 10]: y = [x0, 10 x0 + x1, 10 x1 + x2, 10 x2]
    EXPECT_EQ(run({"conv_transpose1d", "", "[1, 1, 3]", "[1, 1, 2]"}, {1, 2, 3}, {1, 10}),
              (std::vector<double>{1, 12, 23, 30}));
    // grouped: two groups of one channel each, K/g = 1
    EXPECT_EQ(run({"conv_transpose1d", R"("groups": 2)", "[1, 2, 2]", "[2, 1, 1]"}, {1, 2, 3, 4},
                  {10, 100}),
              (std::vector<double>{10, 20, 300, 400}));
    // groups 1, C = 2 -> K = 2: y[k] = sum_c x[c] * w[c, k]
    EXPECT_EQ(run({"conv_transpose1d", "", "[1, 2, 1]", "[2, 2, 1]"}, {1, 2}, {1, 2, 3, 4}),
              (std::vector<double>{7, 10}));
    // 2-D, dilation 2, a ones 2x2 kernel: x's 2x2 values land at (i + 2 th, j + 2 tw)
    EXPECT_EQ(run({"conv_transpose2d", R"("dilation": 2)", "[1, 1, 2, 2]", "[1, 1, 2, 2]"},
                  {1, 2, 3, 4}, {1, 1, 1, 1}),
              (std::vector<double>{1, 2, 1, 2, 3, 4, 3, 4, 1, 2, 1, 2, 3, 4, 3, 4}));
    // 3-D with unit kernel, stride 2: x's values spread to even positions, zeros elsewhere
    std::vector<double> y = run({"conv_transpose3d", R"("stride": 2)", "[1, 1, 1, 1, 2]",
                                 "[1, 1, 1, 1, 1]"},
                                {5, 7}, {2});
    EXPECT_EQ(y, (std::vector<double>{10, 0, 14}));
}

TEST(ConvNdWork, TransposedCountsOnlyTapsInsideY) {
    NdSpec s{"conv_transpose1d", R"("stride": 2)", "[1, 1, 3]", "[1, 1, 2]"};
    auto w = count_work(parsed(s.text()));
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    EXPECT_EQ(w->flops_matrix, 2.0 * 6);  // 3 inputs x 2 taps, all inside y
    s.attrs = R"("stride": 2, "padding": 1)";
    auto cropped = count_work(parsed(s.text()));
    ASSERT_TRUE(cropped.ok());
    EXPECT_EQ(cropped->flops_matrix, 2.0 * 4);  // the first and the last tap fall outside
    // conv3d: y [2, 6, 8, 5, 4] elements, each (C/g) * 27 taps
    NdSpec c{"conv3d", R"("stride": [1, 2, 3], "padding": 1, "groups": 2)", "[2, 4, 8, 9, 10]",
             "[6, 2, 3, 3, 3]", "[6]"};
    auto cw = count_work(parsed(c.text()));
    ASSERT_TRUE(cw.ok());
    EXPECT_EQ(cw->flops_matrix, 2.0 * (2 * 6 * 8 * 5 * 4) * 2 * 27);
    EXPECT_EQ(cw->flops_other, 2.0 * 6 * 8 * 5 * 4);
}

}  // namespace
}  // namespace kforge
