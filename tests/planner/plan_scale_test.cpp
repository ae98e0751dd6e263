// The fusion planner at network scale (issue 26, KernelBench Level 3): a generated deep network
// of identical blocks (conv2d, a batch-statistics norm written as the ops an import of
// nn.BatchNorm2d in training mode gives, relu, a residual add every second block) plans in a few
// whole-program checks however deep it is, where picking the kernels' configurations one kernel
// at a time checked and lowered the whole program once per kernel (a 835-kernel ResNet101 ran
// past 300 s); identical blocks get identical kernels. A reshape written with numbers keeps the
// names of the axes it leaves (problem/shape_ops.cpp), so element-wise ops align them.
#include <chrono>
#include <string>

#include <gtest/gtest.h>

#include "tests/planner/seed_checks.h"

namespace kforge {
namespace {

using seedtest::h200;
using seedtest::problem_of;

// A network of `blocks` blocks on x[N,C,H,W]: conv2d 3x3 (padding 1), the batch norm, relu, and
// every second block the block's input added before the relu.
std::string deep_network(int blocks) {
    std::string inputs = R"("x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"})";
    std::string graph;
    std::string cur = "x";
    auto op = [&](const std::string& text) { graph += (graph.empty() ? "" : ",\n") + text; };
    for (int b = 0; b < blocks; ++b) {
        const std::string p = "b" + std::to_string(b) + "_";
        inputs += R"(, ")" + p + R"(w": {"shape": ["C", "C", 3, 3], "dtype": "f32", "param": true})";
        inputs += R"(, ")" + p + R"(g": {"shape": ["C", 1, 1], "dtype": "f32", "param": true})";
        inputs += R"(, ")" + p + R"(beta": {"shape": ["C", 1, 1], "dtype": "f32", "param": true})";
        auto o = [&](const std::string& kind, const std::string& ins, const std::string& out,
                     const std::string& more = "") {
            op(R"({"op": ")" + kind + R"(", "inputs": [)" + ins + R"(], "output": ")" + p + out +
               "\"" + more + "}");
        };
        auto t = [&](const std::string& name) { return "\"" + p + name + "\""; };
        auto mean = [&](const std::string& in, const std::string& out, int axis) {
            o("mean", in, out, R"(, "axis": )" + std::to_string(axis) + R"(, "keepdim": true)");
        };
        o("conv2d", "\"" + cur + "\", " + t("w"), "conv",
          R"(, "stride": [1, 1], "padding": [1, 1], "dilation": [1, 1], "groups": 1)");
        mean(t("conv"), "m0", 3);
        mean(t("m0"), "m1", 2);
        mean(t("m1"), "mu", 0);
        o("sub", t("conv") + ", " + t("mu"), "d");
        o("square", t("d"), "d2");
        mean(t("d2"), "v0", 3);
        mean(t("v0"), "v1", 2);
        mean(t("v1"), "var", 0);
        o("add_scalar", t("var"), "ve", R"(, "value": 1e-05)");
        o("rsqrt", t("ve"), "inv");
        o("mul", t("inv") + ", " + t("g"), "scale");
        o("mul", t("d") + ", " + t("scale"), "y");
        o("add", t("y") + ", " + t("beta"), "bn");
        std::string pre = p + "bn";
        if (b % 2 == 1) {
            o("add", t("bn") + ", \"" + cur + "\"", "res");
            pre = p + "res";
        }
        o("relu", "\"" + pre + "\"", "out");
        cur = p + "out";
    }
    return R"({"name": "deep)" + std::to_string(blocks) +
           R"(", "dims": {"N": 2, "C": 16, "H": 8, "W": 8}, "inputs": {)" + inputs +
           R"(}, "graph": [)" + graph + R"(], "outputs": [")" + cur +
           R"("], "precision": {"policy": "fp32_strict"}})";
}

TEST(PlanScale, ADeepNetworkPlansInAFewWholeProgramChecks) {
    const Problem shallow = problem_of(deep_network(2));
    // 64 blocks of conv, the batch norm's two statistics (one set reduction over N,H,W each)
    // and the normalizing map (relu and the residual add in its chain): 320 kernels
    const Problem deep = problem_of(deep_network(64));
    auto small = planner::seed_program_counted(shallow, h200());
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    const auto t0 = std::chrono::steady_clock::now();
    auto big = planner::seed_program_counted(deep, h200());
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    ASSERT_TRUE(big.ok()) << big.error().to_string();
    const size_t kernels = big->program.kernels.size();
    EXPECT_GE(kernels, 300u);
    EXPECT_EQ(kernels, 32 * small->program.kernels.size());
    // the same rounds for 2 blocks and for 64 (one check and one lowering here): the work grows
    // with the candidates a kernel needs, not with the kernels (before: one check and one
    // lowering per kernel, 336 of each at 48 blocks)
    EXPECT_EQ(big->work.checks, small->work.checks);
    EXPECT_EQ(big->work.lowerings, small->work.lowerings);
    EXPECT_LE(big->work.checks, 4);
    // generous for a loaded 2-core machine (about a second here; kernel by kernel took minutes)
    EXPECT_LT(seconds, 60.0);
    // the program the search starts from: re-parses, checks and lowers
    EXPECT_FALSE(seedtest::seed_checked(deep).empty());
}

// Block b's kernels are block 0's under other tensor names: the same kinds and configurations.
TEST(PlanScale, IdenticalBlocksGetIdenticalKernels) {
    const Problem shallow = problem_of(deep_network(2));
    const Problem deep = problem_of(deep_network(16));
    auto two = planner::seed_program(shallow, h200());
    auto sixteen = planner::seed_program(deep, h200());
    ASSERT_TRUE(two.ok() && sixteen.ok());
    const size_t per_pair = two->kernels.size();
    ASSERT_EQ(sixteen->kernels.size(), 8 * per_pair);
    for (size_t k = 0; k < sixteen->kernels.size(); ++k) {
        // the first pair reads x, the others the previous pair's output: compare from pair 1
        if (k < per_pair) continue;
        const dsl::Kernel& a = sixteen->kernels[per_pair + k % per_pair];
        const dsl::Kernel& b = sixteen->kernels[k];
        EXPECT_EQ(a.kind, b.kind) << k;
        EXPECT_EQ(a.row_op, b.row_op) << k;
        EXPECT_EQ(a.gemm, b.gemm) << k;
        EXPECT_EQ(a.rowwise, b.rowwise) << k;
        EXPECT_EQ(a.map, b.map) << k;
        EXPECT_EQ(a.chain.size(), b.chain.size()) << k;
        EXPECT_EQ(a.pre.size(), b.pre.size()) << k;
    }
}

// A kernel none of whose configurations checks fails with its first configuration's error,
// named by the kernel and the op it came from, as picking kernel by kernel reported it; the
// kernel before it (a view's copy) does not hide it. (The reshape to [-1, C, 4] names its axes
// apart from the expand's [B, C, L]: the add's value cannot be stored as Y[B,C,L].)
TEST(PlanScale, AKernelWithNoConfigurationIsNamed) {
    const Problem p = problem_of(R"({"name": "apart", "dims": {"B": 2, "C": 3, "L": 4},
        "inputs": {"x": {"shape": ["B", "C", "L"], "dtype": "f32"},
                   "v": {"shape": ["C"], "dtype": "f32"}},
        "graph": [{"op": "reshape", "inputs": ["x"], "output": "r", "shape": ["B", "C*L"]},
                  {"op": "reshape", "inputs": ["r"], "output": "r2", "shape": [-1, "C", 4]},
                  {"op": "reshape", "inputs": ["v"], "output": "v3", "shape": [1, "C", 1]},
                  {"op": "expand", "inputs": ["v3"], "output": "ve", "shape": ["B", -1, "L"]},
                  {"op": "add", "inputs": ["r2", "ve"], "output": "a"},
                  {"op": "exp", "inputs": ["a"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    auto seeded = planner::seed_program_counted(p, h200());
    ASSERT_FALSE(seeded.ok());
    EXPECT_EQ(seeded.error().where, "apart");
    EXPECT_EQ(seeded.error().message.rfind(
                  "kernel k1 (from graph[4] add): no configuration checks and lowers: seed:2:1: "
                  "store y[B,C,L] writes a value with dims [",
                  0),
              0u)
        << seeded.error().to_string();
}

// A reshape written with numbers (a traced module's constants: nn.MultiheadAttention's
// `q.view(tgt_len, bsz * heads, head_dim)`, KernelBench L3 31) keeps the names of the axes it
// leaves as they are, so the residual add after it aligns them with the input's named axes
// (before: "cannot broadcast attn[16384,batch_size,embed_dim] against the value's dims
// [image_height_image_width,batch_size,embed_dim]").
TEST(PlanScale, AReshapeWrittenWithNumbersKeepsTheAxesNames) {
    const Problem p = problem_of(R"({"name": "heads", "dims": {"S": 16, "B": 2, "E": 8, "F": 8},
        "inputs": {"x": {"shape": ["S", "B", "E"], "dtype": "f32"},
                   "w": {"shape": ["E", "F"], "dtype": "f32", "param": true}},
        "graph": [{"op": "reshape", "inputs": ["x"], "output": "h", "shape": [16, "B", 2, -1]},
                  {"op": "exp", "inputs": ["h"], "output": "e"},
                  {"op": "reshape", "inputs": ["e"], "output": "m", "shape": [-1, 2, "F"]},
                  {"op": "linear", "inputs": ["m", "w"], "output": "o"},
                  {"op": "add", "inputs": ["o", "x"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "fp32_strict"}})");
    ASSERT_NE(p.find_tensor("h"), nullptr);
    EXPECT_EQ(p.find_tensor("h")->dim_names, (std::vector<std::string>{"S", "B", "", ""}));
    EXPECT_EQ(p.find_tensor("m")->dim_names, (std::vector<std::string>{"S", "B", "F"}));
    EXPECT_FALSE(seedtest::seed_checked(p).empty());
}

}  // namespace
}  // namespace kforge
