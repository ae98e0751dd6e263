// One case per error class of docs/problem-spec.md: the right path and an actionable message.
#include <gtest/gtest.h>

#include "problem/spec.h"
#include "test_specs.h"

namespace kforge {
namespace {

using test::make_spec;
using test::one_op;

const char* kX = R"({"X": {"shape": ["M", 4], "dtype": "f32"}})";

// Parses `text` and checks the error's where and that its message contains every fragment.
void expect_error(const std::string& text, const std::string& where,
                  std::initializer_list<const char*> fragments) {
    auto p = parse_problem(text, "spec.json");
    ASSERT_FALSE(p.ok()) << "accepted: " << text;
    EXPECT_EQ(p.error().where, where) << p.error().to_string();
    for (const char* f : fragments) {
        EXPECT_NE(p.error().message.find(f), std::string::npos)
            << "message lacks \"" << f << "\": " << p.error().message;
    }
    EXPECT_EQ(p.error().message.find("internal"), std::string::npos);
}

std::string graph1(const std::string& op) { return make_spec(R"({"M": 2})", kX, "[" + op + "]"); }

TEST(SpecError, MalformedJson) {
    expect_error("{\"name\": \"t\",\n  \"dims\": {,}", "line 2, column 12", {"malformed JSON"});
    auto p = parse_problem("{\"a\": [1,\n 2", "mine.json");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().detail.find("mine.json:2:"), std::string::npos) << p.error().detail;
    expect_error(std::string(100, '[') + std::string(100, ']'), "line 1, column 65",
                 {"nested deeper than 64"});
    expect_error("", "line 1, column 1", {"malformed JSON"});
    expect_error("{\"a\":\n 1e999}", "line 2, column 2", {"number 1e999 is out of range"});
}

TEST(SpecError, MissingOrMistypedKey) {
    expect_error(R"({"name": "t"})", "", {"missing key \"dims\""});
    expect_error("[1]", "", {"expected a JSON object"});
    expect_error(make_spec(R"({"M": true})", kX, "[]"), "dims.M", {"expected an integer", "a boolean"});
    // a string is a derived dim's expression ("3*E"): one that is none is an error there
    expect_error(make_spec(R"({"M": "two x"})", kX, "[]"), "dims.M",
                 {"expected an integer or a dim expression", "\"two x\""});
    expect_error(graph1(R"({"op": "relu", "inputs": "X", "output": "Y"})"), "graph[0].inputs",
                 {"expected an array"});
    expect_error(graph1(R"({"op": "relu", "inputs": ["X"]})"), "graph[0]", {"missing key \"output\""});
    expect_error(graph1(R"({"op": "relu", "inputs": ["X"], "output": ""})"), "graph[0].output",
                 {"not an identifier"});
    expect_error(graph1(R"({"op": "scale", "inputs": ["X"], "output": "Y"})"), "graph[0]",
                 {"missing key \"value\""});
    expect_error(graph1(R"({"op": "relu", "inputs": ["X", "X"], "output": "Y"})"), "graph[0].inputs",
                 {"takes 1 inputs", "got 2"});
    expect_error(make_spec("{}", kX, "[]").replace(9, 3, "\"1bad\""), "name", {"does not match"});
    expect_error(make_spec(R"({"M": 2})", kX, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])",
                           R"(["Y"])", R"({"policy": "bf16", "atol": "big"})"),
                 "precision.atol", {"expected a number"});
    expect_error(make_spec(R"({"M": 2})", kX, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])",
                           R"(["Y"])", R"({"policy": "fp8"})"),
                 "precision.policy", {"unknown policy \"fp8\"", "fp32_strict, tf32, bf16, fp16"});
    expect_error(make_spec(R"({"M": 2})", kX, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])",
                           R"(["Y"])", R"({"policy": "bf16", "min_fraction": 1.5})"),
                 "precision.min_fraction", {"(0, 1]"});
}

TEST(SpecError, UnknownKey) {
    std::string text = make_spec(R"({"M": 2})", kX, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])");
    text.insert(1, R"("dimz": {}, )");
    expect_error(text, "dimz", {"unknown key \"dimz\"", "known keys: name, description, dims"});
}

TEST(SpecError, UnknownDistribution) {
    const char* x = R"({"X": {"shape": ["M", 4], "dtype": "f32", "distribution": "cauchy"}})";
    expect_error(make_spec(R"({"M": 2})", x, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])"),
                 "inputs.X.distribution",
                 {"unknown distribution \"cauchy\" of \"X\"",
                  "normal (the default), uniform01, uniform_pm1, heavy_tailed"});
    // "specified" names the timing inputs' per-tensor draw, never a tensor's own
    const char* spec = R"({"X": {"shape": ["M", 4], "dtype": "f32", "distribution": "specified"}})";
    expect_error(make_spec(R"({"M": 2})", spec, R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])"),
                 "inputs.X.distribution", {"unknown distribution \"specified\""});
}

TEST(SpecError, BadDrawScale) {
    // "scale" and "fan_in" (a draw at scale / sqrt(fan_in)): each bad value named with its tensor
    auto with = [](const std::string& extra) {
        return make_spec(R"({"M": 2})",
                         R"({"X": {"shape": ["M", 4], "dtype": "f32", "param": true, )" + extra + "}}",
                         R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])");
    };
    for (const char* bad : {"-0.5", "0", "-1e-300"})
        expect_error(with(std::string(R"("scale": )") + bad), "inputs.X.scale",
                     {"the draw's scale of \"X\"", "finite number > 0"});
    expect_error(with(R"("scale": "1/8")"), "inputs.X.scale",
                 {"the draw's scale of \"X\"", "a number > 0", "a string"});
    expect_error(with(R"("scale": null)"), "inputs.X.scale", {"the draw's scale of \"X\""});
    expect_error(with(R"("fan_in": 0)"), "inputs.X.fan_in",
                 {"the fan_in of \"X\"", "positive integer", "got 0"});
    expect_error(with(R"("fan_in": -9)"), "inputs.X.fan_in", {"the fan_in of \"X\""});
    expect_error(with(R"("fan_in": 2.5)"), "inputs.X.fan_in", {"the fan_in of \"X\"", "2.5"});
    expect_error(with(R"("fan_in": "")"), "inputs.X.fan_in", {"the fan_in of \"X\""});
    expect_error(with(R"("fan_in": "C*9")"), "inputs.X.fan_in",
                 {"the fan_in of \"X\"", "\"C\" in \"C*9\" is neither a dim"});
    expect_error(with(R"("fan_in": "M**3")"), "inputs.X.fan_in", {"\"\" in \"M**3\""});
    expect_error(with(R"("fan_in": "M*0")"), "inputs.X.fan_in", {"not a positive integer"});
    expect_error(with(R"("fan_in": "M*1048576*1048576")"), "inputs.X.fan_in", {"2^40"});
    expect_error(with(R"("distribution": "uniform_pm1", "fan_in": "M", "shift": 1)"), "inputs.X.shift",
                 {"unknown key \"shift\""});
    EXPECT_TRUE(parse_problem(with(R"("distribution": "uniform_pm1", "fan_in": "M*3", "scale": 0.5)"),
                              "ok.json").ok());
}

TEST(SpecError, UnknownOp) {
    expect_error(graph1(R"({"op": "gelux", "inputs": ["X"], "output": "Y"})"), "graph[0].op",
                 {"unknown op \"gelux\"", "known ops: matmul, linear, add", "group_norm"});
}

TEST(SpecError, UnknownOrBadAttribute) {
    expect_error(graph1(R"({"op": "sum", "inputs": ["X"], "output": "Y", "axes": [0]})"),
                 "graph[0].axes", {"unknown attribute \"axes\" for op \"sum\"", "known attributes: axis, keepdim"});
    expect_error(graph1(R"({"op": "gelu", "inputs": ["X"], "output": "Y", "approximate": "erf"})"),
                 "graph[0].approximate", {"\"none\" or \"tanh\""});
    expect_error(graph1(R"({"op": "sum", "inputs": ["X"], "output": "Y", "keepdim": 1})"),
                 "graph[0].keepdim", {"expected true or false"});
    expect_error(graph1(R"({"op": "clamp", "inputs": ["X"], "output": "Y"})"), "graph[0]",
                 {"at least one of \"min\" and \"max\""});
}

TEST(SpecError, BadDtype) {
    expect_error(make_spec("{}", R"({"X": {"shape": [2], "dtype": "fp32"}})", "[]"), "inputs.X.dtype",
                 {"unknown dtype \"fp32\"", "known dtypes: f64, f32, f16, bf16, i32, i64"});
    expect_error(make_spec("{}", R"({"X": {"shape": [2], "dtype": "i32"}})",
                           R"([{"op": "exp", "inputs": ["X"], "output": "Y"}])"),
                 "graph[0].inputs[0]", {"bad dtype", "floating-point", "i32"});
}

TEST(SpecError, UnknownDim) {
    expect_error(make_spec(R"({"M": 2, "N": 3})", R"({"X": {"shape": ["M", "K"], "dtype": "f32"}})", "[]"),
                 "inputs.X.shape[1]", {"unknown dim \"K\"", "known dims: M, N"});
}

TEST(SpecError, NonPositiveDim) {
    expect_error(make_spec(R"({"M": 0})", kX, "[]"), "dims.M", {"\"M\" = 0", "positive integer"});
    expect_error(make_spec(R"({"M": -3})", kX, "[]"), "dims.M", {"positive integer"});
    expect_error(make_spec(R"({"M": 2})", R"({"X": {"shape": [0], "dtype": "f32"}})", "[]"),
                 "inputs.X.shape[0]", {"not a positive integer"});
    expect_error(make_spec(R"({"M": 99999999999999999999})", kX, "[]"), "dims.M", {"expected an integer"});
}

TEST(SpecError, TensorTooLarge) {
    expect_error(make_spec(R"({"M": 1099511627776})", R"({"X": {"shape": ["M", "M"], "dtype": "f32"}})", "[]"),
                 "inputs.X.shape", {"tensor too large"});
    expect_error(make_spec("{}", R"({"X": {"shape": [1,1,1,1,1,1,1,1,1], "dtype": "f32"}})", "[]"),
                 "inputs.X.shape", {"rank 9 is above the limit of 8"});
    expect_error(make_spec(R"({"M": 1099511627776})",
                           R"({"A": {"shape": ["M", 1], "dtype": "f32"}, "B": {"shape": [1, "M"], "dtype": "f32"}})",
                           R"([{"op": "matmul", "inputs": ["A", "B"], "output": "Y"}])"),
                 "graph[0].output", {"tensor too large"});
}

// Every later stage works per op and per tensor (some of it per pair): they are bounded like dims.
TEST(SpecError, GraphTooLarge) {
    auto relu_chain = [](int ops) {
        std::string graph = "[";
        for (int i = 0; i < ops; ++i) {
            graph += std::string(i ? ", " : "") + R"({"op": "relu", "inputs": [")" +
                     (i ? "H" + std::to_string(i - 1) : std::string("X")) + R"("], "output": ")" +
                     (i + 1 == ops ? std::string("Y") : "H" + std::to_string(i)) + "\"}";
        }
        return make_spec(R"({"M": 2})", kX, graph + "]");
    };
    expect_error(relu_chain(kMaxGraphOps + 1), "graph", {"too many ops: 4097", "at most 4096"});
    auto p = parse_problem(relu_chain(kMaxGraphOps), "spec.json");
    EXPECT_TRUE(p.ok()) << p.error().to_string();
    // Inputs no op reads are allowed, but not without bound (40000 took 115 s to evaluate).
    auto wide = [](int inputs) {
        std::string list = R"({"X": {"shape": ["M", 4], "dtype": "f32"})";
        for (int i = 1; i < inputs; ++i)
            list += R"(, "I)" + std::to_string(i) + R"(": {"shape": [4], "dtype": "f32"})";
        return make_spec(R"({"M": 2})", list + "}",
                         R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])");
    };
    expect_error(wide(kMaxGraphInputs + 1), "inputs", {"too many input tensors: 4097"});
    auto w = parse_problem(wide(kMaxGraphInputs), "spec.json");
    EXPECT_TRUE(w.ok()) << w.error().to_string();
}

TEST(SpecError, UnknownTensor) {
    std::string text = make_spec(R"({"M": 2})", kX,
                                 R"([{"op": "relu", "inputs": ["X"], "output": "H"},
                                     {"op": "add", "inputs": ["H", "Wt"], "output": "Y"}])");
    expect_error(text, "graph[1].inputs[1]", {"unknown tensor \"Wt\"; known tensors: X, H, Y"});
}

TEST(SpecError, TensorDefinedTwice) {
    expect_error(graph1(R"({"op": "relu", "inputs": ["X"], "output": "X"})"), "graph[0].output",
                 {"\"X\" is defined twice", "input"});
    std::string text = make_spec(R"({"M": 2})", kX,
                                 R"([{"op": "relu", "inputs": ["X"], "output": "Y"},
                                     {"op": "neg", "inputs": ["X"], "output": "Y"}])");
    expect_error(text, "graph[1].output", {"\"Y\" is defined twice", "graph[0] also writes it"});
}

TEST(SpecError, ShapeMismatch) {
    expect_error(make_spec("{}", R"({"A": {"shape": [2, 3], "dtype": "f32"}, "B": {"shape": [4, 5], "dtype": "f32"}})",
                           R"([{"op": "matmul", "inputs": ["A", "B"], "output": "Y"}])"),
                 "graph[0].inputs[1]", {"shape mismatch", "inner dims differ", "K = 3", "K = 4"});
    expect_error(make_spec("{}", R"({"A": {"shape": [2, 3], "dtype": "f32"}, "B": {"shape": [2], "dtype": "f32"}})",
                           R"([{"op": "add", "inputs": ["A", "B"], "output": "Y"}])"),
                 "graph[0].inputs[1]", {"does not broadcast"});
    expect_error(graph1(R"({"op": "sum", "inputs": ["X"], "output": "Y", "axis": 2})"), "graph[0].axis",
                 {"axis 2 is out of range", "rank 2"});
    expect_error(graph1(R"({"op": "layer_norm", "inputs": ["X"], "output": "Y", "normalized_shape": [3]})"),
                 "graph[0].inputs[0]", {"normalized_shape [3] is not the trailing dims"});
    expect_error(make_spec("{}", R"({"X": {"shape": [2, 3], "dtype": "f32"}, "W": {"shape": [4, 2], "dtype": "f32"}})",
                           R"([{"op": "linear", "inputs": ["X", "W"], "output": "Y"}])"),
                 "graph[0].inputs[1]", {"must be [N, K] with K = 3"});
}

TEST(SpecError, Cycle) {
    std::string text = make_spec(R"({"M": 2})", kX,
                                 R"([{"op": "add", "inputs": ["X", "B"], "output": "A"},
                                     {"op": "relu", "inputs": ["A"], "output": "B"},
                                     {"op": "neg", "inputs": ["B"], "output": "Y"}])");
    expect_error(text, "graph[0].inputs[1]", {"cycle", "\"B\" is written by graph[1]", "graph[0], graph[1], graph[2]"});
    expect_error(graph1(R"({"op": "relu", "inputs": ["Y"], "output": "Y"})"), "graph[0].inputs[0]", {"cycle"});
}

TEST(SpecError, DanglingTensor) {
    std::string text = make_spec(R"({"M": 2})", kX,
                                 R"([{"op": "relu", "inputs": ["X"], "output": "Y"},
                                     {"op": "exp", "inputs": ["X"], "output": "Unused"}])");
    expect_error(text, "graph[1].output", {"dangling tensor \"Unused\"", "outputs: Y"});
}

TEST(SpecError, OutputNotProduced) {
    std::string graph = R"([{"op": "relu", "inputs": ["X"], "output": "Y"}])";
    expect_error(make_spec(R"({"M": 2})", kX, graph, R"(["Y", "Z"])"), "outputs[1]",
                 {"\"Z\" is not produced by the graph", "produces: Y"});
    expect_error(make_spec(R"({"M": 2})", kX, graph, R"(["X"])"), "outputs[0]", {"graph input"});
    expect_error(make_spec(R"({"M": 2})", kX, graph, "[]"), "outputs", {"at least one"});
    expect_error(make_spec(R"({"M": 2})", kX, graph, R"(["Y", "Y"])"), "outputs[1]", {"listed twice"});
}

TEST(SpecError, LoadProblemNamesTheFile) {
    auto p = load_problem("/nonexistent/spec.json");
    ASSERT_FALSE(p.ok());
    EXPECT_EQ(p.error().where, "/nonexistent/spec.json");
    EXPECT_NE(p.error().message.find("cannot open"), std::string::npos);
}

}  // namespace
}  // namespace kforge
