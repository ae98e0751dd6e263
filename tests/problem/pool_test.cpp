// Pooling in the problem spec: attributes and their errors, shape inference (1-3 spatial axes,
// ceil_mode's last-window rule, the derived output dims), the round trip through
// problem_to_json and re-binding, the fp64 interpreter against hand-computed values (each equal
// to PyTorch 2.x's F.max_pool1d / avg_pool1d / adaptive_*_pool1d on the same input) and the work
// counts.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "problem/interpret.h"
#include "problem/pool.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "test_specs.h"

namespace kforge {
namespace {

using Values = std::vector<double>;

// One pool op y = op(x) over x of `shape` (a JSON array) with `attrs`.
std::string pool_spec(const std::string& op, const std::string& shape, const std::string& attrs,
                      const std::string& dims = R"({"N": 2, "C": 3, "H": 10, "W": 12, "D": 6})") {
    std::string inputs = R"({"x": {"shape": )" + shape + R"(, "dtype": "f32"}})";
    std::string graph = R"([{"op": ")" + op + R"(", "inputs": ["x"], "output": "y")" +
                        (attrs.empty() ? "" : ", " + attrs) + "}]";
    return test::make_spec(dims, inputs, graph, R"(["y"])");
}

Problem parsed(const std::string& text) {
    auto p = parse_problem(text, "pool");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string()) << "\n" << text;
    return p.ok() ? *p : Problem{};
}

void expect_error(const std::string& text, const std::string& where,
                  std::initializer_list<const char*> fragments) {
    auto p = parse_problem(text, "pool");
    ASSERT_FALSE(p.ok()) << "accepted: " << text;
    EXPECT_EQ(p.error().where, where) << p.error().to_string();
    for (const char* f : fragments) {
        EXPECT_NE(p.error().message.find(f), std::string::npos)
            << "message lacks \"" << f << "\": " << p.error().message;
    }
}

// y's values for x = `x` of literal shape `shape`.
Values run(const std::string& op, const std::string& shape, const Values& x,
           const std::string& attrs) {
    Problem p = parsed(pool_spec(op, shape, attrs));
    auto out = interpret(p, {{"x", x}});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? out->at("y") : Values{};
}

const Values kX5 = {1, 5, 2, 4, 3};
const Values kRamp5 = {1, 2, 3, 4, 5};

TEST(PoolSpec, OutputSizeRule) {
    EXPECT_EQ(pool_output_size(5, 2, 2, 0, 1, false), 2);
    EXPECT_EQ(pool_output_size(5, 2, 2, 0, 1, true), 3);   // the last window starts at 4 < 5
    EXPECT_EQ(pool_output_size(5, 3, 3, 1, 1, true), 2);   // ceil gives 3, but it starts at 6 = 5 + 1
    EXPECT_EQ(pool_output_size(6, 3, 2, 1, 1, true), 4);
    EXPECT_EQ(pool_output_size(5, 3, 1, 0, 2, false), 1);  // dilation 2: a span of 5
    EXPECT_EQ(pool_output_size(4, 3, 1, 0, 2, false), 0);  // refused by shape inference
}

TEST(PoolSpec, ShapesAndDerivedDims) {
    Problem p = parsed(pool_spec("max_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 2)"));
    const Tensor* y = p.find_tensor("y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{2, 3, 5, 6}));
    EXPECT_EQ(y->dim_names, (std::vector<std::string>{"N", "C", "Ho", "Wo"}));
    EXPECT_EQ(p.derived_dims, (std::set<std::string>{"Ho", "Wo"}));
    EXPECT_EQ(op_class(p.ops[0].kind), OpClass::kPool);
    EXPECT_EQ(p.ops[0].attrs.stride, (std::vector<int64_t>{2, 2}));  // defaults to kernel_size

    // stride 1 and 2*padding = kernel - 1: y keeps x's dims
    p = parsed(pool_spec("avg_pool", R"(["N", "C", "H", "W"])",
                         R"("kernel_size": 3, "stride": 1, "padding": 1)"));
    EXPECT_EQ(p.find_tensor("y")->dim_names, (std::vector<std::string>{"N", "C", "H", "W"}));
    EXPECT_TRUE(p.derived_dims.empty());

    // 1-D with ceil_mode; 3-D with per-axis attributes; a literal axis stays a literal
    p = parsed(pool_spec("max_pool", R"(["N", "C", 5])", R"("kernel_size": 2, "ceil_mode": true)"));
    EXPECT_EQ(p.find_tensor("y")->shape, (std::vector<int64_t>{2, 3, 3}));
    EXPECT_EQ(p.find_tensor("y")->dim_names[2], "");
    p = parsed(pool_spec("max_pool", R"(["N", "C", "D", "H", "W"])",
                         R"("kernel_size": [2, 3, 3], "stride": [2, 1, 2], "padding": [0, 1, 1], "dilation": [1, 1, 2])"));
    EXPECT_EQ(p.find_tensor("y")->shape, (std::vector<int64_t>{2, 3, 3, 10, 5}));
    EXPECT_EQ(p.find_tensor("y")->dim_names, (std::vector<std::string>{"N", "C", "Do", "H", "Wo"}));

    // a square input with one dim name: one derived dim for both axes
    p = parsed(pool_spec("avg_pool", R"(["N", "C", "H", "H"])", R"("kernel_size": 2)"));
    EXPECT_EQ(p.find_tensor("y")->dim_names, (std::vector<std::string>{"N", "C", "Ho", "Ho"}));

    // adaptive: literal output sizes
    p = parsed(pool_spec("adaptive_avg_pool", R"(["N", "C", "H", "W"])", R"("output_size": 1)"));
    EXPECT_EQ(p.find_tensor("y")->shape, (std::vector<int64_t>{2, 3, 1, 1}));
    p = parsed(pool_spec("adaptive_max_pool", R"(["N", "C", "D", "H", "W"])",
                         R"("output_size": [6, 4, 5])"));
    EXPECT_EQ(p.find_tensor("y")->shape, (std::vector<int64_t>{2, 3, 6, 4, 5}));
    EXPECT_EQ(p.find_tensor("y")->dim_names[2], "D");  // equal to x's size: x's name

    // explicit names
    p = parsed(pool_spec("max_pool", R"(["N", "C", "H", "W"])",
                         R"("kernel_size": 2, "out_dims": ["P", "Q"])"));
    EXPECT_EQ(p.find_tensor("y")->dim_names, (std::vector<std::string>{"N", "C", "P", "Q"}));
}

TEST(PoolSpec, RoundTripAndRebind) {
    for (const char* attrs :
         {R"("kernel_size": [3, 2], "stride": [2, 1], "padding": 1, "ceil_mode": true)",
          R"("kernel_size": 3, "padding": 1, "count_include_pad": false, "divisor_override": 4)",
          R"("kernel_size": 2, "out_dims": ["P", "Q"])"}) {
        for (const char* op : {"max_pool", "avg_pool"}) {
            if (std::string(op) == "max_pool" && std::string(attrs).find("divisor") != std::string::npos)
                continue;
            Problem p = parsed(pool_spec(op, R"(["N", "C", "H", "W"])", attrs));
            std::string text = problem_to_json(p).dump();
            Problem q = parsed(text);
            EXPECT_EQ(problem_to_json(q).dump(), text) << attrs;
            EXPECT_EQ(q.find_tensor("y")->shape, p.find_tensor("y")->shape) << text;
            auto r = rebind_dims(p, {{"H", 7}, {"W", 9}});
            ASSERT_TRUE(r.ok()) << r.error().to_string();
            const Tensor* y = r->find_tensor("y");
            const OpAttrs& a = r->ops[0].attrs;
            for (int i = 0; i < 2; ++i) {
                EXPECT_EQ(y->shape[2 + i],
                          pool_output_size(i == 0 ? 7 : 9, a.kernel_size[i], a.stride[i],
                                           a.padding[i], a.dilation[i], a.ceil_mode))
                    << text;
            }
        }
    }
    Problem p = parsed(pool_spec("adaptive_avg_pool", R"(["N", "C", "H", "W"])", R"("output_size": [1, 2])"));
    EXPECT_EQ(problem_to_json(parsed(problem_to_json(p).dump())).dump(), problem_to_json(p).dump());
}

TEST(PoolSpec, Errors) {
    const std::string x4 = R"(["N", "C", "H", "W"])";
    expect_error(pool_spec("max_pool", x4, ""), "graph[0]", {"missing key \"kernel_size\""});
    expect_error(pool_spec("adaptive_avg_pool", x4, ""), "graph[0]", {"missing key \"output_size\""});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 0)"), "graph[0].kernel_size",
                 {"kernel_size must be an integer >= 1"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": [2, 2, 2, 2])"), "graph[0].kernel_size",
                 {"array of 1 to 3", "array of 4"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": [2, 2, 2])"), "graph[0].kernel_size",
                 {"shape mismatch", "3 entries", "2 spatial axes"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 2, "stride": [1, 2, 1])"),
                 "graph[0].stride", {"3 entries"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 3, "padding": 2)"), "graph[0].padding",
                 {"padding[0] = 2", "at most half of kernel_size[0] = 3"});
    expect_error(pool_spec("avg_pool", x4, R"("kernel_size": 2, "dilation": 2)"), "graph[0].dilation",
                 {"unknown attribute \"dilation\" for op \"avg_pool\""});
    expect_error(pool_spec("avg_pool", x4, R"("kernel_size": 2, "divisor_override": 0)"),
                 "graph[0].divisor_override", {"divisor_override must be an integer >= 1"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 2, "ceil_mode": 1)"),
                 "graph[0].ceil_mode", {"expected true or false"});
    expect_error(pool_spec("max_pool", R"(["C", "H"])", R"("kernel_size": 2)"), "graph[0].inputs[0]",
                 {"shape mismatch", "[N, C, L]", "rank 2"});
    expect_error(pool_spec("max_pool", R"(["N", "C", 4])", R"("kernel_size": 3, "dilation": 2)"),
                 "graph[0].inputs[0]", {"output size would be < 1", "spans 5"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 2, "out_dims": ["P"])"),
                 "graph[0].out_dims", {"2 spatial dims", "1 names"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 2, "out_dims": ["N", "Q"])"),
                 "graph[0].out_dims[0]", {"dim \"N\" = 2"});
    expect_error(pool_spec("max_pool", x4, R"("kernel_size": 1, "out_dims": ["C", "Q"])"),
                 "graph[0].out_dims[0]", {"dim \"C\" = 3"});
    expect_error(pool_spec("adaptive_max_pool", x4, R"("output_size": [2, 2], "kernel_size": 2)"),
                 "graph[0].kernel_size", {"unknown attribute \"kernel_size\"", "output_size"});
    std::string ints = R"({"x": {"shape": [2, 3, 4], "dtype": "i32"}})";
    auto p = parse_problem(test::make_spec(R"({"N": 2})", ints,
                                           R"([{"op": "max_pool", "inputs": ["x"], "output": "y", "kernel_size": 2}])",
                                           R"(["y"])"),
                           "pool");
    ASSERT_FALSE(p.ok());
    EXPECT_NE(p.error().message.find("floating-point"), std::string::npos) << p.error().message;
}

TEST(PoolInterpret, MaxPool) {
    EXPECT_EQ(run("max_pool", "[1, 1, 5]", kX5, R"("kernel_size": 3, "stride": 2, "padding": 1)"),
              (Values{5, 5, 4}));
    EXPECT_EQ(run("max_pool", "[1, 1, 5]", kRamp5, R"("kernel_size": 2, "ceil_mode": true)"),
              (Values{2, 4, 5}));
    EXPECT_EQ(run("max_pool", "[1, 1, 5]", kRamp5, R"("kernel_size": 3, "padding": 1, "ceil_mode": true)"),
              (Values{2, 5}));  // ceil_mode's rule: no window starting in the right padding
    EXPECT_EQ(run("max_pool", "[1, 1, 5]", kX5, R"("kernel_size": 2, "dilation": 2)"), (Values{2, 3}));
    Values x16;
    for (int i = 1; i <= 16; ++i) x16.push_back(i);
    EXPECT_EQ(run("max_pool", "[1, 1, 4, 4]", x16, R"("kernel_size": 2)"), (Values{6, 8, 14, 16}));
    // two planes (N = 1, C = 2) of a 2x2x2 volume
    Values x8;
    for (int i = 1; i <= 16; ++i) x8.push_back(i <= 8 ? i : -i);
    EXPECT_EQ(run("max_pool", "[1, 2, 2, 2, 2]", x8, R"("kernel_size": 2)"), (Values{8, -9}));
    // NaN wins, as in PyTorch
    Values nan = {1, std::numeric_limits<double>::quiet_NaN(), 3, 4};
    Values y = run("max_pool", "[1, 1, 4]", nan, R"("kernel_size": 2)");
    ASSERT_EQ(y.size(), 2u);
    EXPECT_TRUE(std::isnan(y[0]));
    EXPECT_EQ(y[1], 4);
}

TEST(PoolInterpret, AvgPoolDivisors) {
    const std::string k3 = R"("kernel_size": 3, "stride": 2, "padding": 1)";
    EXPECT_EQ(run("avg_pool", "[1, 1, 5]", kX5, k3), (Values{6.0 / 3, 11.0 / 3, 7.0 / 3}));
    EXPECT_EQ(run("avg_pool", "[1, 1, 5]", kX5, k3 + R"(, "count_include_pad": false)"),
              (Values{6.0 / 2, 11.0 / 3, 7.0 / 2}));
    EXPECT_EQ(run("avg_pool", "[1, 1, 5]", kX5, k3 + R"(, "divisor_override": 2)"),
              (Values{3, 5.5, 3.5}));
    // ceil_mode: the last window hangs over the input's end; its divisor counts what lies inside
    // the input and the padding (here 1 element), never beyond
    EXPECT_EQ(run("avg_pool", "[1, 1, 5]", kRamp5, R"("kernel_size": 2, "ceil_mode": true)"),
              (Values{1.5, 3.5, 5}));
    EXPECT_EQ(run("avg_pool", "[1, 1, 6]", {1, 2, 3, 4, 5, 6},
                  R"("kernel_size": 3, "stride": 2, "padding": 1, "ceil_mode": true)"),
              (Values{1, 3, 5, 3}));  // last: start 5, window [5, 7) of which 6 is padding: 6 / 2
    Values x8 = {1, 2, 3, 4, 5, 6, 7, 8};
    EXPECT_EQ(run("avg_pool", "[1, 1, 2, 2, 2]", x8, R"("kernel_size": 2)"), (Values{4.5}));
    // 2-D, padding 1, count_include_pad false: the corner window sees x[0][0] only
    EXPECT_EQ(run("avg_pool", "[1, 1, 2, 2]", {1, 2, 3, 4},
                  R"("kernel_size": 2, "padding": 1, "count_include_pad": false)"),
              (Values{1, 2, 3, 4}));
    EXPECT_EQ(run("avg_pool", "[1, 1, 2, 2]", {1, 2, 3, 4}, R"("kernel_size": 2, "padding": 1)"),
              (Values{0.25, 0.5, 0.75, 1}));
}

TEST(PoolInterpret, Adaptive) {
    EXPECT_EQ(run("adaptive_avg_pool", "[1, 1, 5]", kRamp5, R"("output_size": 3)"),
              (Values{1.5, 3, 4.5}));  // windows [0, 2), [1, 4), [3, 5)
    EXPECT_EQ(run("adaptive_max_pool", "[1, 1, 5]", kRamp5, R"("output_size": 3)"), (Values{2, 4, 5}));
    Values x16;
    for (int i = 1; i <= 16; ++i) x16.push_back(i);
    EXPECT_EQ(run("adaptive_avg_pool", "[1, 1, 4, 4]", x16, R"("output_size": 1)"), (Values{8.5}));
    EXPECT_EQ(run("adaptive_avg_pool", "[1, 1, 4, 4]", x16, R"("output_size": [2, 1])"),
              (Values{4.5, 12.5}));
    // more outputs than inputs: the windows overlap
    EXPECT_EQ(run("adaptive_max_pool", "[1, 1, 2]", {1, 2}, R"("output_size": 3)"), (Values{1, 2, 2}));
    EXPECT_EQ(run("adaptive_avg_pool", "[1, 1, 1, 1, 2]", {1, 3}, R"("output_size": [1, 1, 1])"),
              (Values{2}));
}

TEST(PoolWork, CountsTapsAndBytes) {
    Problem p = parsed(pool_spec("max_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 2)"));
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    const double out = 2 * 3 * 5 * 6, in = 2 * 3 * 10 * 12;
    EXPECT_EQ(w->flops_other, 4 * out);
    EXPECT_EQ(w->flops_matrix, 0);
    EXPECT_EQ(w->bytes_fused, 4 * (in + out));
    p = parsed(pool_spec("avg_pool", R"(["N", "C", "H", "W"])", R"("kernel_size": 3, "stride": 1, "padding": 1)"));
    w = count_work(p);
    ASSERT_TRUE(w.ok());
    EXPECT_EQ(w->flops_other, 10 * in);  // 9 adds and a divide per output (y is x's size)
}

}  // namespace
}  // namespace kforge
