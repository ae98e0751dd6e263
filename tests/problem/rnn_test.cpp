// lstm / gru in the spec (problem/rnn.h): shapes by PyTorch's rules, the errors a wrong operand
// gives, the spec written back, work counts, and the interpreter against the cell equations
// written out by hand (one unit, two steps) and against the symmetry of the reverse direction.
#include <gtest/gtest.h>

#include <cmath>

#include "problem/interpret.h"
#include "problem/spec.h"
#include "problem/work.h"
#include "tests/reference/rnn_specs.h"

namespace kforge {
namespace {

using eval::testing::rnn_spec_json;

Problem parsed(const std::string& json) {
    auto p = parse_problem(json, "rnn.json");
    EXPECT_TRUE(p.ok()) << p.error().to_string();
    return p ? *p : Problem{};
}

std::string error_of(const std::string& json) {
    auto p = parse_problem(json, "rnn.json");
    return p.ok() ? "(parsed)" : p.error().to_string();
}

std::string replaced(std::string s, const std::string& from, const std::string& to) {
    size_t at = s.find(from);
    EXPECT_NE(at, std::string::npos) << from;
    if (at != std::string::npos) s.replace(at, from.size(), to);
    return s;
}

TEST(Rnn, ShapesFollowPyTorch) {
    Problem out = parsed(rnn_spec_json("a", "lstm", 2, false, false, true, "output"));
    const Tensor* y = out.find_tensor("Y");
    ASSERT_NE(y, nullptr);
    EXPECT_EQ(y->shape, (std::vector<int64_t>{5, 3, 6}));
    EXPECT_EQ(y->dim_names, (std::vector<std::string>{"T", "B", "H"}));
    Problem bf = parsed(rnn_spec_json("b", "gru", 2, true, true, true, "output"));
    EXPECT_EQ(bf.find_tensor("Y")->shape, (std::vector<int64_t>{3, 5, 12}));
    // both directions: the derived dim Hx2, which a re-bind of H recomputes
    EXPECT_EQ(bf.find_tensor("Y")->dim_names, (std::vector<std::string>{"B", "T", "Hx2"}));
    auto small = rebind_dims(bf, {{"H", 2}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->find_tensor("Y")->shape, (std::vector<int64_t>{3, 5, 4}));
    Problem hn = parsed(rnn_spec_json("c", "gru", 3, true, true, true, "h_n"));
    EXPECT_EQ(hn.find_tensor("Y")->shape, (std::vector<int64_t>{6, 3, 6}));
    EXPECT_EQ(hn.find_tensor("weight_ih_l1_reverse")->shape, (std::vector<int64_t>{18, 12}));
}

TEST(Rnn, WrongOperandsAreClearErrors) {
    const std::string good = rnn_spec_json("e", "lstm", 2, false, false, true, "output");
    std::string e = error_of(replaced(good, R"("h0": {"shape": [2, "B", "H"])",
                                      R"("h0": {"shape": [3, "B", "H"])"));
    EXPECT_NE(e.find("graph[0].inputs[1]: shape mismatch: h0 \"h0\" [3, B=3, H=6] must be [2, 3, 6]"),
              std::string::npos) << e;
    e = error_of(replaced(good, R"(, "bias_hh_l1"])", "]"));
    EXPECT_NE(e.find("takes 11 inputs (x, h0, c0, then per layer and direction w_ih, w_hh, b_ih, "
                     "b_hh); got 10"), std::string::npos) << e;
    e = error_of(replaced(good, R"("weight_hh_l1": {"shape": ["4*H", "H"])",
                          R"("weight_hh_l1": {"shape": ["4*H", 5])"));
    EXPECT_NE(e.find("weight_hh_l1 \"weight_hh_l1\" [4*H=24, 5] must be [24, 6]"), std::string::npos) << e;
    e = error_of(replaced(good, R"("weight_hh_l1": {"shape": ["4*H", "H"])",
                          R"("weight_hh_l1": {"shape": ["4*K", "H"])"));
    EXPECT_NE(e.find("a product entry \"4*K\" multiplies dim names"), std::string::npos) << e;
    e = error_of(rnn_spec_json("g", "gru", 1, false, false, true, "c_n"));
    EXPECT_NE(e.find("graph[0].result: result \"c_n\" is lstm's cell state"), std::string::npos) << e;
    e = error_of(replaced(good, "\"num_layers\": 2", "\"num_layers\": 0"));
    EXPECT_NE(e.find("num_layers must be an integer in 1..1024"), std::string::npos) << e;
    e = error_of(replaced(good, R"("x": {"shape": ["T", "B", "I"], "dtype": "f32"})",
                          R"("x": {"shape": ["T", "B", "I"], "dtype": "f16"})"));
    EXPECT_NE(e.find("bad dtype"), std::string::npos) << e;
}

TEST(Rnn, GateRowsFollowTheHiddenSizeWhenItIsRebound) {
    Problem p = parsed(rnn_spec_json("r", "lstm", 2, true, false, true, "h_n"));
    EXPECT_EQ(p.find_tensor("weight_ih_l1")->shape, (std::vector<int64_t>{24, 12}));
    EXPECT_TRUE(p.derived_dims.count("4*H"));
    const auto json = problem_to_json(p);
    EXPECT_FALSE(json["dims"].contains("4*H"));
    EXPECT_EQ(json["inputs"]["weight_ih_l1"]["shape"][0], "4*H");
    auto small = rebind_dims(p, {{"H", 2}, {"T", 3}});
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    EXPECT_EQ(small->find_tensor("weight_ih_l1")->shape, (std::vector<int64_t>{8, 4}));
    EXPECT_EQ(small->find_tensor("Y")->shape, (std::vector<int64_t>{4, 3, 2}));
    EXPECT_FALSE(rebind_dims(p, {{"4*H", 8}}).ok());  // derived: re-bind H instead
}

TEST(Rnn, SpecRoundTripsAndCountsWork) {
    Problem p = parsed(rnn_spec_json("w", "gru", 2, true, true, false, "h_n"));
    auto again = parse_problem(problem_to_json(p).dump(), "again");
    ASSERT_TRUE(again.ok()) << again.error().to_string();
    EXPECT_EQ(again->ops[0].attrs.num_layers, 2);
    EXPECT_TRUE(again->ops[0].attrs.bidirectional && again->ops[0].attrs.batch_first);
    EXPECT_FALSE(again->ops[0].attrs.rnn_bias);
    EXPECT_EQ(again->ops[0].attrs.rnn_result, RnnResult::kHn);
    auto w = count_work(p);
    ASSERT_TRUE(w.ok());
    // rows T*B*D = 30; layer 0: 2*30*18*(4+6), layer 1: 2*30*18*(12+6)
    EXPECT_DOUBLE_EQ(w->flops_matrix, 2.0 * 30 * 18 * 10 + 2.0 * 30 * 18 * 18);
}

double sig(double v) { return 1.0 / (1.0 + std::exp(-v)); }

TEST(Rnn, InterpreterFollowsTheCellEquations) {
    // lstm, T = 2, B = 1, I = 1, H = 1: weights i, f, g, o rows
    Problem p = parsed(rnn_spec_json("h", "lstm", 1, false, false, true, "output", 2, 1, 1, 1));
    TensorValues in{{"x", {0.5, -1.0}}, {"h0", {0.2}}, {"c0", {-0.3}},
                    {"weight_ih_l0", {0.1, 0.2, 0.3, 0.4}}, {"weight_hh_l0", {-0.5, 0.6, -0.7, 0.8}},
                    {"bias_ih_l0", {0.01, 0.02, 0.03, 0.04}}, {"bias_hh_l0", {0.1, 0.1, 0.1, 0.1}}};
    auto out = interpret(p, in);
    ASSERT_TRUE(out.ok()) << out.error().to_string();
    double h = 0.2, c = -0.3;
    std::vector<double> want;
    for (double x : {0.5, -1.0}) {
        auto pre = [&](int g) { return in["weight_ih_l0"][g] * x + in["bias_ih_l0"][g] +
                                       in["weight_hh_l0"][g] * h + in["bias_hh_l0"][g]; };
        c = sig(pre(1)) * c + sig(pre(0)) * std::tanh(pre(2));
        h = sig(pre(3)) * std::tanh(c);
        want.push_back(h);
    }
    EXPECT_NEAR(out->at("Y")[0], want[0], 1e-15);
    EXPECT_NEAR(out->at("Y")[1], want[1], 1e-15);

    // gru: n uses r * (W_hn h + b_hn)
    Problem q = parsed(rnn_spec_json("g", "gru", 1, false, false, true, "h_n", 1, 1, 1, 1));
    TensorValues gin{{"x", {0.7}}, {"h0", {-0.4}}, {"weight_ih_l0", {0.3, -0.2, 0.5}},
                     {"weight_hh_l0", {0.9, 0.1, -0.6}}, {"bias_ih_l0", {0.0, 0.1, 0.2}},
                     {"bias_hh_l0", {0.3, 0.0, -0.1}}};
    auto g = interpret(q, gin);
    ASSERT_TRUE(g.ok()) << g.error().to_string();
    const double r = sig(0.3 * 0.7 + 0.0 + 0.9 * -0.4 + 0.3);
    const double z = sig(-0.2 * 0.7 + 0.1 + 0.1 * -0.4 + 0.0);
    const double n = std::tanh(0.5 * 0.7 + 0.2 + r * (-0.6 * -0.4 - 0.1));
    EXPECT_NEAR(g->at("Y")[0], (1 - z) * n + z * -0.4, 1e-15);
}

TEST(Rnn, ReverseDirectionIsTheForwardOfTheReversedSequence) {
    Problem bi = parsed(rnn_spec_json("bi", "gru", 1, true, false, true, "output", 4, 2, 3, 2));
    Problem fw = parsed(rnn_spec_json("fw", "gru", 1, false, false, true, "output", 4, 2, 3, 2));
    TensorValues in;
    int seed = 1;
    for (const Tensor* t : bi.graph_inputs()) {
        auto& v = in[t->name];
        for (int64_t i = 0; i < t->numel(); ++i) v.push_back(std::sin(0.7 * ++seed));
    }
    TensorValues rev{{"x", {}}, {"h0", {in["h0"].begin() + 4, in["h0"].end()}}};
    for (int t = 3; t >= 0; --t)
        rev["x"].insert(rev["x"].end(), in["x"].begin() + t * 6, in["x"].begin() + t * 6 + 6);
    for (int w = 0; w < 4; ++w)
        rev[rnn_weight_name(0, 0, w)] = in[rnn_weight_name(0, 1, w)];
    auto a = interpret(bi, in);
    auto b = interpret(fw, rev);
    ASSERT_TRUE(a.ok() && b.ok());
    for (int t = 0; t < 4; ++t)
        for (int bb = 0; bb < 2; ++bb)
            for (int j = 0; j < 2; ++j)
                EXPECT_NEAR(a->at("Y")[(t * 2 + bb) * 4 + 2 + j], b->at("Y")[((3 - t) * 2 + bb) * 2 + j], 1e-14);
}

}  // namespace
}  // namespace kforge
