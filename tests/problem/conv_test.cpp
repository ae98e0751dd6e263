// conv2d in the problem spec: attribute parsing and its errors, shape inference with the derived
// output dims (stride, padding, dilation, groups, default and explicit names), the round trip
// through problem_to_json, re-binding, the fp64 interpreter and the work counts.
#include <gtest/gtest.h>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "test_specs.h"

namespace kforge {
namespace {

using Shape = std::vector<int64_t>;
using Names = std::vector<std::string>;
using Pair = std::vector<int64_t>;

const char* kDims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 6})";

struct ConvSpec {
    std::string attrs;
    std::string dims = kDims;
    std::string x = R"(["N", "C", "H", "W"])";
    std::string w = R"(["K", "C", 3, 3])";
    std::string b;  // b's shape, "" for no bias
    std::string x_dtype = "f32";

    std::string text() const {
        std::string inputs = R"({"x": {"shape": )" + x + R"(, "dtype": ")" + x_dtype +
                             R"("}, "w": {"shape": )" + w + R"(, "dtype": "f32", "param": true})" +
                             (b.empty() ? "" : R"(, "b": {"shape": )" + b + R"(, "dtype": "f32"})") +
                             "}";
        std::string graph = R"([{"op": "conv2d", "inputs": )" +
                            std::string(b.empty() ? R"(["x", "w"])" : R"(["x", "w", "b"])") +
                            R"(, "output": "y")" + (attrs.empty() ? "" : ", " + attrs) + "}]";
        return test::make_spec(dims, inputs, graph, R"(["y"])");
    }
};

Problem parsed(const std::string& text) {
    auto p = parse_problem(text, "conv");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string()) << "\n" << text;
    return p.ok() ? *p : Problem{};
}

const Tensor& y_of(const Problem& p) {
    static const Tensor none;
    const Tensor* y = p.find_tensor("y");
    return y ? *y : none;
}

void expect_error(const std::string& text, const std::string& where,
                  std::initializer_list<const char*> fragments) {
    auto p = parse_problem(text, "conv");
    ASSERT_FALSE(p.ok()) << "accepted: " << text;
    EXPECT_EQ(p.error().where, where) << p.error().to_string();
    for (const char* f : fragments) {
        EXPECT_NE(p.error().message.find(f), std::string::npos)
            << "message lacks \"" << f << "\": " << p.error().message;
    }
}

TEST(Conv2dSpec, DefaultsAndAttributeForms) {
    Problem p = parsed(ConvSpec{}.text());
    ASSERT_EQ(p.ops.size(), 1u);
    const OpAttrs& a = p.ops[0].attrs;
    EXPECT_EQ(p.ops[0].kind, OpKind::kConv2d);
    EXPECT_EQ(op_class(OpKind::kConv2d), OpClass::kConv);
    EXPECT_EQ(to_string(OpClass::kConv), "conv");
    EXPECT_EQ(to_string(OpKind::kConv2d), "conv2d");
    EXPECT_EQ(op_from_string("conv2d"), OpKind::kConv2d);
    EXPECT_EQ(a.stride, (Pair{1, 1}));
    EXPECT_EQ(a.padding, (Pair{0, 0}));
    EXPECT_EQ(a.dilation, (Pair{1, 1}));
    EXPECT_EQ(a.groups, 1);

    ConvSpec s;
    s.attrs = R"("stride": [2, 1], "padding": 1, "dilation": [1, 2], "groups": 2)";
    s.w = R"(["K", 2, 3, 3])";
    Problem q = parsed(s.text());
    const OpAttrs& b = q.ops[0].attrs;
    EXPECT_EQ(b.stride, (Pair{2, 1}));
    EXPECT_EQ(b.padding, (Pair{1, 1}));
    EXPECT_EQ(b.dilation, (Pair{1, 2}));
    EXPECT_EQ(b.groups, 2);
}

TEST(Conv2dSpec, AttributeErrors) {
    auto with = [](const std::string& attrs) { return ConvSpec{attrs}.text(); };
    expect_error(with(R"("stride": 0)"), "graph[0].stride", {"stride must be an integer >= 1", "got 0"});
    expect_error(with(R"("stride": [1, 0])"), "graph[0].stride[1]", {"stride must be an integer >= 1"});
    expect_error(with(R"("stride": [1, 2, 3])"), "graph[0].stride",
                 {"integer or a pair [h, w]", "array of 3"});
    expect_error(with(R"("stride": "2")"), "graph[0].stride", {"or a pair of them", "a string"});
    expect_error(with(R"("stride": 1.5)"), "graph[0].stride", {"expected an integer"});
    expect_error(with(R"("padding": -1)"), "graph[0].padding", {"padding must be an integer >= 0"});
    expect_error(with(R"("padding": [1, -2])"), "graph[0].padding[1]", {"padding must be an integer >= 0"});
    expect_error(with(R"("dilation": [0, 1])"), "graph[0].dilation[0]", {"dilation must be an integer >= 1"});
    expect_error(with(R"("groups": 0)"), "graph[0].groups", {"groups must be a positive integer"});
    expect_error(with(R"("groups": true)"), "graph[0].groups", {"expected an integer"});
    expect_error(with(R"("axis": 1)"), "graph[0].axis",
                 {"unknown attribute \"axis\" for op \"conv2d\"",
                  "stride, padding, dilation, groups, out_dims"});
    expect_error(with(R"("out_dims": "P")"), "graph[0].out_dims", {"pair of dim names", "a string"});
    expect_error(with(R"("out_dims": ["P"])"), "graph[0].out_dims", {"pair of dim names", "array of 1"});
    expect_error(with(R"("out_dims": ["P", "2Q"])"), "graph[0].out_dims[1]", {"not an identifier"});
    expect_error(with(R"("out_dims": ["P", 3])"), "graph[0].out_dims[1]", {"expected a string"});
}

TEST(Conv2dSpec, OperandErrors) {
    ConvSpec s;
    s.attrs = R"("groups": 3)";
    expect_error(s.text(), "graph[0].groups", {"groups = 3 does not divide the channels C = 4"});
    s.attrs = R"("groups": 4)";
    s.w = R"(["K", 1, 3, 3])";
    expect_error(s.text(), "graph[0].groups", {"groups = 4 does not divide the output channels K = 6"});
    s = ConvSpec{R"("groups": 2)"};
    expect_error(s.text(), "graph[0].inputs[1]", {"[K, C/groups, R, S] with C/groups = 2"});
    s = ConvSpec{};
    s.x = R"(["N", "C", "H"])";
    expect_error(s.text(), "graph[0].inputs[0]", {"must be [N, C, H, W]"});
    s = ConvSpec{};
    s.w = R"(["K", "C", 9])";
    expect_error(s.text(), "graph[0].inputs[1]", {"must be [K, C/groups, R, S]"});
    s = ConvSpec{};
    s.w = R"(["K", 3, 3, 3])";
    expect_error(s.text(), "graph[0].inputs[1]", {"C/groups = 4"});
    s = ConvSpec{};
    s.b = R"(["C"])";
    expect_error(s.text(), "graph[0].inputs[2]", {"must be [6] (K of the weight)"});
    s = ConvSpec{};
    s.x_dtype = "i32";
    expect_error(s.text(), "graph[0].inputs[0]", {"needs floating-point operands"});
    s = ConvSpec{};
    s.dims = R"({"N": 2, "C": 4, "H": 2, "W": 12, "K": 6})";
    expect_error(s.text(), "graph[0].inputs[1]",
                 {"conv2d output size would be < 1", "spans 3", "H + 2*padding[0] = 2"});
    s = ConvSpec{R"("dilation": [1, 6], "padding": [0, 1])"};  // spans 13 of 14: fits
    EXPECT_EQ(y_of(parsed(s.text())).shape, (Shape{2, 6, 8, 2}));
    s = ConvSpec{R"("dilation": [1, 7], "padding": [0, 1])"};
    expect_error(s.text(), "graph[0].inputs[1]", {"spans 15", "W + 2*padding[1] = 14"});
}

TEST(Conv2dSpec, OutDimsErrors) {
    ConvSpec s{R"("out_dims": ["K", "Q"])"};
    expect_error(s.text(), "graph[0].out_dims[0]",
                 {"names y's P = 8 \"K\", but dim \"K\" = 6"});
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 6, "M": 8})";
    s.attrs = R"("out_dims": ["M", "Q"])";  // a declared dim of P's size: one axis, named M
    EXPECT_EQ(y_of(parsed(s.text())).dim_names, (Names{"N", "K", "M", "Q"}));
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 6, "M": 9})";  // a binding that differs
    expect_error(s.text(), "graph[0].out_dims[0]", {"names y's P = 8 \"M\", but dim \"M\" = 9"});
    s = ConvSpec{R"("out_dims": ["H", "W"])"};  // no padding: y is smaller than x
    expect_error(s.text(), "graph[0].out_dims[0]", {"P = 8", "dim \"H\" = 10"});
    s = ConvSpec{R"("out_dims": ["P", "P"])"};  // P = 8, Q = 10 cannot share a name
    expect_error(s.text(), "graph[0].out_dims[1]", {"Q = 10", "dim \"P\" = 8"});
}

// A residual add of a strided conv and its strided 1x1 shortcut (ResNet's downsample): both
// derive y's spatial dims, named once; a second derivation of another size is a mismatch.
TEST(Conv2dSpec, OutDimsDerivedTwice) {
    auto spec = [](const std::string& shortcut) {
        return test::make_spec(
            kDims,
            R"({"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                "w": {"shape": ["K", "C", 3, 3], "dtype": "f32", "param": true},
                "s": {"shape": ["K", "C", 1, 1], "dtype": "f32", "param": true}})",
            R"([{"op": "conv2d", "inputs": ["x", "w"], "output": "a", "stride": 2,
                 "padding": 1, "out_dims": ["P", "Q"]},
                {"op": "conv2d", "inputs": ["x", "s"], "output": "b", "stride": 2, )" +
                shortcut + R"("out_dims": ["P", "Q"]},
                {"op": "add", "inputs": ["a", "b"], "output": "y"}])",
            R"(["y"])");
    };
    Problem p = parsed(spec(""));
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "P", "Q"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 5, 6}));
    expect_error(spec(R"("padding": 1, )"), "graph[1].out_dims[0]",
                 {"names y's P = 6 \"P\", but dim \"P\" = 5"});
}

TEST(Conv2dShape, StridePaddingDilationGroups) {
    struct Case {
        const char* attrs;
        const char* w;
        Shape y;
        Names names;
    };
    const Case cases[] = {
        {"", R"(["K", "C", 3, 3])", {2, 6, 8, 10}, {"N", "K", "Ho", "Wo"}},
        {R"("padding": 1)", R"(["K", "C", 3, 3])", {2, 6, 10, 12}, {"N", "K", "H", "W"}},
        {R"("stride": 2, "padding": 1)", R"(["K", "C", 3, 3])", {2, 6, 5, 6}, {"N", "K", "Ho", "Wo"}},
        {R"("stride": [3, 1], "padding": [0, 2])", R"(["K", "C", 3, 5])", {2, 6, 3, 12},
         {"N", "K", "Ho", "W"}},
        {R"("dilation": 2)", R"(["K", "C", 3, 3])", {2, 6, 6, 8}, {"N", "K", "Ho", "Wo"}},
        {R"("dilation": 2, "padding": 2)", R"(["K", "C", 3, 3])", {2, 6, 10, 12}, {"N", "K", "H", "W"}},
        {R"("groups": 2)", R"(["K", 2, 3, 3])", {2, 6, 8, 10}, {"N", "K", "Ho", "Wo"}},
        {R"("groups": 2, "stride": 2, "dilation": [2, 1], "padding": [3, 0])", R"(["K", 2, 3, 1])",
         {2, 6, 6, 6}, {"N", "K", "Ho", "Wo"}},
        {"", R"(["K", "C", 1, 1])", {2, 6, 10, 12}, {"N", "K", "H", "W"}},
    };
    for (const Case& c : cases) {
        ConvSpec s{c.attrs};
        s.w = c.w;
        Problem p = parsed(s.text());
        EXPECT_EQ(y_of(p).shape, c.y) << c.attrs << " " << c.w;
        EXPECT_EQ(y_of(p).dim_names, c.names) << c.attrs << " " << c.w;
        EXPECT_EQ(p.ops[0].attrs.out_dims, (Names{c.names[2], c.names[3]})) << c.attrs;
        for (int i = 2; i < 4; ++i) {
            bool derived = c.names[i] != "H" && c.names[i] != "W";
            EXPECT_EQ(p.derived_dims.count(c.names[i]), derived ? 1u : 0u) << c.names[i];
            EXPECT_EQ(p.dims.at(c.names[i]), c.y[i]) << c.names[i];
        }
    }
    // depthwise: groups = C, one input channel per group
    ConvSpec s{R"("groups": 4, "padding": 1)"};
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 8})";
    s.w = R"(["K", 1, 3, 3])";
    s.b = R"(["K"])";
    EXPECT_EQ(y_of(parsed(s.text())).shape, (Shape{2, 8, 10, 12}));
}

TEST(Conv2dShape, DefaultNames) {
    // a named kernel size may be re-bound: y keeps x's size only while R = 3, so it is derived
    ConvSpec s{R"("padding": 1)"};
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 6, "R": 3})";
    s.w = R"(["K", "C", "R", "R"])";
    Problem p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "Ho", "Wo"}));
    EXPECT_EQ(p.dims.at("Ho"), 10);
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"Ho", "Wo"}));
    // a square input with alike axes: one derived dim for both
    s = ConvSpec{R"("stride": 2)"};
    s.dims = R"({"N": 2, "C": 4, "S": 9, "K": 6})";
    s.x = R"(["N", "C", "S", "S"])";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "So", "So"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 4, 4}));
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"So"}));
    // ... but not when the axes differ
    s.attrs = R"("stride": [2, 1])";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "So", "So2"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 4, 7}));
    // taken names get digits
    s = ConvSpec{};
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 12, "K": 6, "Ho": 3, "Wo2": 1})";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "Ho2", "Wo"}));
    // anonymous spatial dims: P and Q, or anonymous where y keeps x's literal size
    s = ConvSpec{};
    s.x = R"(["N", "C", 10, 12])";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "P", "Q"}));
    EXPECT_EQ(p.dims.at("P"), 8);
    s.attrs = R"("padding": [1, 0])";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "", "Q"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 10, 10}));
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"Q"}));
}

TEST(Conv2dShape, ExplicitOutDims) {
    ConvSpec s{R"("stride": 2, "out_dims": ["P", "Q"])"};
    Problem p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "P", "Q"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 4, 5}));
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"P", "Q"}));
    EXPECT_EQ(p.dims.at("Q"), 5);
    // x's own names where y keeps x's size
    s = ConvSpec{R"("padding": 1, "out_dims": ["H", "W"])"};
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "H", "W"}));
    EXPECT_TRUE(p.derived_dims.empty());
    // one name for both axes where the sizes agree
    s = ConvSpec{R"("padding": [0, 1], "dilation": [2, 1], "out_dims": ["P", "P"])"};
    s.dims = R"({"N": 2, "C": 4, "H": 10, "W": 6, "K": 6})";
    p = parsed(s.text());
    EXPECT_EQ(y_of(p).dim_names, (Names{"N", "K", "P", "P"}));
    EXPECT_EQ(y_of(p).shape, (Shape{2, 6, 6, 6}));
}

// Two stacked convs and a channel norm: the second conv reads the first's derived dims.
const char* kTwoConvs = R"json({
  "name": "two_convs",
  "dims": {"N": 2, "C": 3, "H": 16, "W": 20, "K": 8},
  "inputs": {
    "x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
    "w1": {"shape": ["K", "C", 3, 3], "dtype": "f32", "param": true},
    "b1": {"shape": ["K"], "dtype": "f32", "param": true},
    "w2": {"shape": ["K", 2, 3, 3], "dtype": "f32", "param": true}
  },
  "graph": [
    {"op": "conv2d", "inputs": ["x", "w1", "b1"], "output": "h"},
    {"op": "relu", "inputs": ["h"], "output": "r"},
    {"op": "conv2d", "inputs": ["r", "w2"], "output": "y", "stride": [2, 1], "padding": [1, 0],
     "dilation": [1, 2], "groups": 4},
    {"op": "group_norm", "inputs": ["y"], "output": "z", "num_groups": 2}
  ],
  "outputs": ["z"],
  "precision": {"policy": "tf32"}
})json";

TEST(Conv2dSpec, RoundTripWritesOutDimsNotDerivedDims) {
    Problem p = parsed(kTwoConvs);
    EXPECT_EQ(p.find_tensor("h")->dim_names, (Names{"N", "K", "Ho", "Wo"}));
    EXPECT_EQ(p.find_tensor("h")->shape, (Shape{2, 8, 14, 18}));
    // P = (14 + 2 - 2 - 1) / 2 + 1 = 7, Q = 18 - 4 = 14
    EXPECT_EQ(p.find_tensor("y")->dim_names, (Names{"N", "K", "Hoo", "Woo"}));
    EXPECT_EQ(p.find_tensor("y")->shape, (Shape{2, 8, 7, 14}));
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"Ho", "Wo", "Hoo", "Woo"}));

    auto j = problem_to_json(p);
    EXPECT_EQ(j["dims"].size(), 5u) << j["dims"].dump();
    EXPECT_FALSE(j["dims"].contains("Ho"));
    EXPECT_EQ(j["graph"][0]["out_dims"], (Names{"Ho", "Wo"}));
    EXPECT_FALSE(j["graph"][0].contains("stride"));
    EXPECT_FALSE(j["graph"][0].contains("groups"));
    EXPECT_EQ(j["graph"][2]["stride"], nlohmann::ordered_json::array({2, 1}));
    EXPECT_EQ(j["graph"][2]["padding"], nlohmann::ordered_json::array({1, 0}));
    EXPECT_EQ(j["graph"][2]["dilation"], nlohmann::ordered_json::array({1, 2}));
    EXPECT_EQ(j["graph"][2]["groups"], 4);

    std::string written = j.dump(2);
    Problem q = parsed(written);
    EXPECT_EQ(q.dims, p.dims);
    EXPECT_EQ(q.derived_dims, p.derived_dims);
    ASSERT_EQ(q.tensors.size(), p.tensors.size());
    for (size_t i = 0; i < p.tensors.size(); ++i) {
        EXPECT_EQ(q.tensors[i].shape, p.tensors[i].shape);
        EXPECT_EQ(q.tensors[i].dim_names, p.tensors[i].dim_names);
    }
    for (size_t i = 0; i < p.ops.size(); ++i) {
        EXPECT_EQ(q.ops[i].attrs.stride, p.ops[i].attrs.stride);
        EXPECT_EQ(q.ops[i].attrs.padding, p.ops[i].attrs.padding);
        EXPECT_EQ(q.ops[i].attrs.dilation, p.ops[i].attrs.dilation);
        EXPECT_EQ(q.ops[i].attrs.groups, p.ops[i].attrs.groups);
        EXPECT_EQ(q.ops[i].attrs.out_dims, p.ops[i].attrs.out_dims);
    }
    EXPECT_EQ(problem_to_json(q).dump(2), written) << "writing is a fixed point";

    // y keeps x's dims: out_dims names them, and reading it back keeps them not derived
    Problem same = parsed(ConvSpec{R"("padding": 1)"}.text());
    auto js = problem_to_json(same);
    EXPECT_EQ(js["graph"][0]["out_dims"], (Names{"H", "W"}));
    Problem same2 = parsed(js.dump());
    EXPECT_EQ(y_of(same2).dim_names, (Names{"N", "K", "H", "W"}));
    EXPECT_TRUE(same2.derived_dims.empty());

    // anonymous output dims: out_dims is left out and the defaults name them again
    ConvSpec s{R"("padding": [1, 0], "stride": [1, 2])"};
    s.x = R"(["N", "C", 10, 12])";
    Problem a = parsed(s.text());
    auto ja = problem_to_json(a);
    EXPECT_FALSE(ja["graph"][0].contains("out_dims"));
    EXPECT_EQ(ja["graph"][0]["padding"], nlohmann::ordered_json::array({1, 0}));
    Problem b = parsed(ja.dump());
    EXPECT_EQ(y_of(b).dim_names, y_of(a).dim_names);
    EXPECT_EQ(y_of(b).shape, (Shape{2, 6, 10, 5}));
}

// A layer_norm over a conv's output names the derived dims in normalized_shape: they resolve at
// shape inference (the spec's dims do not hold them), also after a round trip and re-binding.
TEST(Conv2dSpec, NormalizedShapeNamesDerivedDims) {
    std::string text = test::make_spec(
        R"({"N": 2, "C": 3, "H": 9, "W": 7, "K": 4})",
        R"({"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
            "w": {"shape": ["K", "C", 3, 3], "dtype": "f32"}})",
        R"([{"op": "conv2d", "inputs": ["x", "w"], "output": "h"},
            {"op": "layer_norm", "inputs": ["h"], "output": "y", "normalized_shape": ["K", "Ho", "Wo"]}])",
        R"(["y"])");
    Problem p = parsed(text);
    EXPECT_EQ(p.ops[1].attrs.normalized_shape, (Shape{4, 7, 5}));
    Problem q = parsed(problem_to_json(p).dump());
    EXPECT_EQ(q.ops[1].attrs.normalized_shape, (Shape{4, 7, 5}));
    auto small = rebind_dims(q, {{"H", 5}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->ops[1].attrs.normalized_shape, (Shape{4, 3, 5}));
    // an unknown name is still an unknown dim, reported at its entry
    std::string unknown = text;
    unknown.replace(unknown.find("\"Wo\"]"), 4, "\"Zz\"");
    expect_error(unknown, "graph[1].normalized_shape[2]", {"unknown dim \"Zz\"", "Ho, K, N, W, Wo"});
}

TEST(Conv2dSpec, RebindRecomputesDerivedDims) {
    Problem p = parsed(kTwoConvs);
    auto small = rebind_dims(p, {{"H", 9}, {"W", 9}, {"N", 1}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->dims.at("Ho"), 7);
    EXPECT_EQ(small->dims.at("Wo"), 7);
    EXPECT_EQ(small->dims.at("Hoo"), 4);
    EXPECT_EQ(small->dims.at("Woo"), 3);
    EXPECT_EQ(small->find_tensor("z")->shape, (Shape{1, 8, 4, 3}));
    EXPECT_EQ(small->derived_dims, p.derived_dims);

    auto derived = rebind_dims(p, {{"Ho", 4}});
    ASSERT_FALSE(derived.ok());
    EXPECT_EQ(derived.error().where, "dims.Ho");
    EXPECT_NE(derived.error().message.find("is derived"), std::string::npos)
        << derived.error().message;
    // too small for the second conv's dilated kernel: a clear error, not a crash
    auto tiny = rebind_dims(p, {{"W", 6}});
    ASSERT_FALSE(tiny.ok());
    EXPECT_EQ(tiny.error().where, "graph[2].inputs[1]");
    EXPECT_NE(tiny.error().message.find("output size would be < 1"), std::string::npos);
}

// y = conv2d(x, w[, b]) on literal shapes, evaluated by the interpreter.
std::vector<double> conv(const std::string& x_shape, const std::string& w_shape,
                         const std::vector<double>& x, const std::vector<double>& w,
                         const std::string& attrs, const std::vector<double>& b = {}) {
    ConvSpec s{attrs, "{}", x_shape, w_shape};
    if (!b.empty()) s.b = "[" + std::to_string(b.size()) + "]";
    Problem p = parsed(s.text());
    if (p.ops.empty()) return {};
    TensorValues in{{"x", x}, {"w", w}};
    if (!b.empty()) in["b"] = b;
    auto out = interpret(p, in);
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->at("y") : std::vector<double>{};
}

const std::vector<double> kX9 = {1, 2, 3, 4, 5, 6, 7, 8, 9};  // a 3x3 image, row-major

TEST(Conv2dInterpret, HandComputedSmallCases) {
    // 2x2 kernel [1 2; 3 4] over 1..9: y00 = 1 + 2*2 + 3*4 + 4*5 = 37, ...; bias 0.5; the
    // second image is 2x the first
    std::vector<double> x2 = kX9;
    for (double v : kX9) x2.push_back(2 * v);
    EXPECT_EQ(conv("[2, 1, 3, 3]", "[1, 1, 2, 2]", x2, {1, 2, 3, 4}, "", {0.5}),
              (std::vector<double>{37.5, 47.5, 67.5, 77.5, 74.5, 94.5, 134.5, 154.5}));
    // ones 3x3, padding 1, stride 2: the windows clip to the 2x2 corners of x
    EXPECT_EQ(conv("[1, 1, 3, 3]", "[1, 1, 3, 3]", kX9, std::vector<double>(9, 1.0),
                   R"("padding": 1, "stride": 2)"),
              (std::vector<double>{12, 16, 24, 28}));
    // dilation 2: the 2x2 kernel reads the four corners: 1*1 + 2*3 + 3*7 + 4*9
    EXPECT_EQ(conv("[1, 1, 3, 3]", "[1, 1, 2, 2]", kX9, {1, 2, 3, 4}, R"("dilation": 2)"),
              (std::vector<double>{64}));
    // per-axis attributes: stride [1, 2], padding [0, 1], a 1x2 kernel [1 10]:
    // row i reads columns (-1, 0) and (1, 2): x[i][0] * 10, x[i][1] + x[i][2] * 10
    EXPECT_EQ(conv("[1, 1, 3, 3]", "[1, 1, 1, 2]", kX9, {1, 10}, R"("stride": [1, 2], "padding": [0, 1])"),
              (std::vector<double>{10, 32, 40, 65, 70, 98}));
}

TEST(Conv2dInterpret, ChannelsAndGroups) {
    const std::vector<double> x = {1, 2, 3, 4, 5, 6, 7, 8};  // [1, 2, 2, 2]: channels 1..4, 5..8
    // groups 1: each output channel sums both input channels
    EXPECT_EQ(conv("[1, 2, 2, 2]", "[2, 2, 1, 1]", x, {1, 1, 1, -1}, ""),
              (std::vector<double>{6, 8, 10, 12, -4, -4, -4, -4}));
    // groups 2, K = 4: channels 0, 1 read input channel 0; channels 2, 3 read input channel 1
    EXPECT_EQ(conv("[1, 2, 2, 2]", "[4, 1, 1, 1]", x, {1, 2, 3, 4}, R"("groups": 2)", {0, 0, 0, 100}),
              (std::vector<double>{1, 2, 3, 4, 2, 4, 6, 8, 15, 18, 21, 24, 120, 124, 128, 132}));
}

TEST(Conv2dWork, FlopsAndBytes) {
    ConvSpec s{R"("groups": 2)"};
    s.w = R"(["K", 2, 3, 3])";
    s.b = R"(["K"])";
    Problem p = parsed(s.text());
    auto w = count_work(p);
    ASSERT_TRUE(w.ok()) << w.error().to_string();
    // y [2, 6, 8, 10] = 960 elements, each a (C/groups) * R * S = 18-term dot product
    EXPECT_EQ(w->flops_matrix, 2.0 * 960 * 18);
    EXPECT_EQ(w->flops_other, 960.0);  // the bias
    ASSERT_EQ(w->per_op.size(), 1u);
    EXPECT_EQ(w->per_op[0].bytes_read, (2 * 4 * 10 * 12 + 6 * 2 * 9 + 6) * 4.0);
    EXPECT_EQ(w->per_op[0].bytes_written, 960 * 4.0);
    EXPECT_EQ(w->bytes_fused, w->per_op[0].bytes());
    // no bias: no flops_other
    s.b.clear();
    auto nb = count_work(parsed(s.text()));
    ASSERT_TRUE(nb.ok());
    EXPECT_EQ(nb->flops_other, 0.0);
    EXPECT_EQ(nb->flops_matrix, 2.0 * 960 * 18);
}

}  // namespace
}  // namespace kforge
