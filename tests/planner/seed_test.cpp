// The fusion planner (planner/plan.h): for every suite problem, its rebinds to other shapes and
// hand-made problems that are not in the suite, the seeded program checks with zero errors on
// the H200's limits and lowers; problems the language cannot express give a "not expressible"
// error naming the op. Prints one line per problem with the seeded kernels.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <set>
#include <string>
#include <vector>

#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "planner/plan.h"
#include "sol/device.h"

namespace kforge {
namespace {

namespace fs = std::filesystem;

dsl::DeviceLimits h200() {
    auto device = find_device("h200");
    EXPECT_TRUE(device.ok());
    return device.ok() ? dsl::device_limits(*device) : dsl::DeviceLimits{};
}

std::vector<fs::path> suite_specs() {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(fs::path(KFORGE_SOURCE_DIR) / "problems"))
        if (e.path().extension() == ".json") out.push_back(e.path());
    std::sort(out.begin(), out.end());
    return out;
}

// One line per kernel head and knobs, for the log.
std::string summary(const dsl::Program& p) {
    std::string text = dsl::print_canonical(p), out;
    size_t pos = 0;
    while ((pos = text.find("kernel ", pos)) != std::string::npos) {
        size_t end = text.find('\n', pos);
        size_t chain_end = text.find('\n', end + 1);
        out += "\n    " + text.substr(pos, end - pos) + "\n      " +
               text.substr(end + 1, chain_end - end - 1).substr(4);
        pos = end;
    }
    return out;
}

// Seeds `problem`, then checks and lowers the result independently of the seeder; returns the
// failure in words (empty when it passed) and prints the kernels.
std::string seed_and_verify(const Problem& problem, const planner::SeedOptions& options = {}) {
    auto prog = planner::seed_program(problem, h200(), options);
    if (!prog) return "seed failed: " + prog.error().to_string();
    // Round trip through the text, as the search stores and re-reads it.
    const std::string text = dsl::print_canonical(*prog);
    auto parsed = dsl::parse_program(text, "seed.kf");
    if (!parsed) return "canonical text does not parse: " + parsed.error().to_string() + "\n" + text;
    auto res = dsl::check_program(*parsed, problem, h200(), {"seed.kf", text});
    if (!res.ok()) return "check: " + res.errors.front().to_string() + "\n" + text;
    codegen::LowerOptions lo;
    auto low = codegen::lower_program(*parsed, problem, lo);
    if (!low) return "lower: " + low.error().to_string() + "\n" + text;
    if (low->plan.kernels.size() < parsed->kernels.size()) return "fewer launches than kernels";
    std::printf("[seed] %s:%s\n", problem.name.c_str(), summary(*prog).c_str());
    return "";
}

// The spec of `problem` with dims scaled: each dim d -> max(1, d * num / den), or `fixed`.
Expected<Problem> rebind(const Problem& problem, const std::map<std::string, int64_t>& dims) {
    auto j = problem_to_json(problem);
    for (const auto& [k, v] : dims) j["dims"][k] = v;
    j["name"] = problem.name + "_rebound";
    return parse_problem(j.dump(), problem.name + " rebound");
}

TEST(SeedSuite, EverySuiteProblemSeedsChecksAndLowers) {
    int n = 0;
    for (const auto& path : suite_specs()) {
        auto problem = load_problem(path.string());
        ASSERT_TRUE(problem.ok()) << problem.error().to_string();
        EXPECT_EQ(seed_and_verify(*problem), "") << path;
        ++n;
    }
    EXPECT_GE(n, 30);
}

TEST(SeedSuite, RebindsToHalvedAndOddShapes) {
    int tried = 0, refused = 0;
    for (const auto& path : suite_specs()) {
        auto problem = load_problem(path.string());
        ASSERT_TRUE(problem.ok());
        for (int mode = 0; mode < 3; ++mode) {
            std::map<std::string, int64_t> dims;
            int i = 0;
            for (const auto& [k, v] : problem->dims) {
                if (mode == 0) dims[k] = std::max<int64_t>(1, v / 2);
                else if (mode == 1) dims[k] = (i++ % 2 == 0) ? 1000 : 3000;
                else dims[k] = v > 64 ? v - 8 : v;  // rows of 16-byte multiples, odd tile counts
            }
            if (problem->name == "group_norm_f32" && mode == 1) dims["C"] = 256;  // groups divide C
            auto rb = rebind(*problem, dims);
            if (!rb) continue;  // e.g. shapes the problem itself rejects
            // Keep the test fast: skip rebinds over 2^31 elements in one tensor.
            bool huge = false;
            for (const auto& t : rb->tensors) huge = huge || t.numel() > (int64_t{1} << 31);
            if (huge) continue;
            ++tried;
            auto prog = planner::seed_program(*rb, h200());
            if (!prog) {
                // Only alignment may refuse a shape, and then the error says so.
                ++refused;
                EXPECT_NE(prog.error().message.find("16 bytes"), std::string::npos)
                    << rb->name << ": " << prog.error().to_string();
                std::printf("[seed] %s mode %d: refused: %s\n", rb->name.c_str(), mode,
                            prog.error().message.c_str());
                continue;
            }
            EXPECT_EQ(seed_and_verify(*rb), "") << rb->name << " mode " << mode;
        }
    }
    std::printf("[seed] rebinds tried %d, refused (alignment) %d\n", tried, refused);
    EXPECT_GE(tried, 60);
    EXPECT_LE(refused, tried / 4);
}


Problem parse(const std::string& json) {
    auto p = parse_problem(json, "test");
    EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
    return p.ok() ? *p : Problem{};
}

// Problems that are not in the suite, as a KernelBench import would produce them.
const char* kHandMade[] = {
    R"({"name":"mm_relu_sum","dims":{"M":2048,"N":1024,"K":512},
        "inputs":{"A":{"shape":["M","K"],"dtype":"f32"},"B":{"shape":["K","N"],"dtype":"f32"}},
        "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"},{"op":"relu","inputs":["C"],"output":"R"},
                 {"op":"sum","inputs":["R"],"output":"Y","axis":-1}],
        "outputs":["Y"],"precision":{"policy":"tf32"}})",
    R"({"name":"linear_ln","dims":{"M":4096,"N":2048,"K":1024},
        "inputs":{"X":{"shape":["M","K"],"dtype":"bf16"},"W":{"shape":["N","K"],"dtype":"bf16","param":true},
                  "b":{"shape":["N"],"dtype":"bf16","param":true},"g":{"shape":["N"],"dtype":"bf16","param":true},
                  "beta":{"shape":["N"],"dtype":"bf16","param":true}},
        "graph":[{"op":"linear","inputs":["X","W","b"],"output":"H"},
                 {"op":"layer_norm","inputs":["H","g","beta"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})",
    R"({"name":"swish_chain","dims":{"R":8192,"C":1000},
        "inputs":{"X":{"shape":["R","C"],"dtype":"f32"}},
        "graph":[{"op":"sigmoid","inputs":["X"],"output":"S"},{"op":"mul","inputs":["X","S"],"output":"Z"},
                 {"op":"scale","inputs":["Z"],"output":"Y","value":2.0}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})",
    R"({"name":"attn_scores","dims":{"B":32,"S":512,"T":512,"D":64},
        "inputs":{"Q":{"shape":["B","S","D"],"dtype":"f16"},"Kt":{"shape":["B","T","D"],"dtype":"f16"}},
        "graph":[{"op":"matmul","inputs":["Q","Kt"],"output":"A","transpose_b":true},
                 {"op":"scale","inputs":["A"],"output":"As","value":0.125},
                 {"op":"softmax","inputs":["As"],"output":"P","axis":-1}],
        "outputs":["P"],"precision":{"policy":"fp16"}})",
    R"({"name":"rms_then_linear","dims":{"M":4096,"D":4096,"N":11008},
        "inputs":{"X":{"shape":["M","D"],"dtype":"bf16"},"w":{"shape":["D"],"dtype":"bf16","param":true},
                  "W":{"shape":["N","D"],"dtype":"bf16","param":true}},
        "graph":[{"op":"rms_norm","inputs":["X","w"],"output":"H","eps":1e-6},
                 {"op":"linear","inputs":["H","W"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})",
    R"({"name":"linear_mish_fp16","dims":{"M":1024,"N":3000,"K":1000},
        "inputs":{"X":{"shape":["M","K"],"dtype":"f16"},"W":{"shape":["N","K"],"dtype":"f16","param":true},
                  "b":{"shape":["N"],"dtype":"f16","param":true}},
        "graph":[{"op":"linear","inputs":["X","W","b"],"output":"H"},{"op":"mish","inputs":["H"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp16"}})",
    R"({"name":"residual_two_outputs","dims":{"M":2048,"N":2048,"K":2048},
        "inputs":{"X":{"shape":["M","K"],"dtype":"bf16"},"W":{"shape":["N","K"],"dtype":"bf16","param":true},
                  "R":{"shape":["M","N"],"dtype":"bf16"},"c":{"shape":["M",1],"dtype":"bf16"}},
        "graph":[{"op":"linear","inputs":["X","W"],"output":"H"},{"op":"add","inputs":["R","H"],"output":"Z"},
                 {"op":"gelu","inputs":["Z"],"output":"G","approximate":"tanh"},
                 {"op":"sub","inputs":["c","G"],"output":"D"},{"op":"softmax","inputs":["D"],"output":"P"},
                 {"op":"dropout","inputs":["P"],"output":"Q","p":0.1},
                 {"op":"max","inputs":["Q"],"output":"Y","axis":0}],
        "outputs":["G","Y"],"precision":{"policy":"bf16"}})",
    R"({"name":"div_by_activation","dims":{"R":4096,"C":512},
        "inputs":{"X":{"shape":["R","C"],"dtype":"f32"},"b":{"shape":["C"],"dtype":"f32"}},
        "graph":[{"op":"exp","inputs":["X"],"output":"E"},{"op":"div","inputs":["b","E"],"output":"Y"},
                 {"op":"clamp","inputs":["Y"],"output":"Z","max":4.0},{"op":"mean","inputs":["Z"],"output":"M","axis":1,"keepdim":true}],
        "outputs":["M"],"precision":{"policy":"fp32_strict"}})",
    // nn.Linear on [batch, seq, d] (the leading dim folds into M) and a 3-D x 2-D matmul
    R"({"name":"linear_3d_gelu","dims":{"B":8,"S":512,"D":1024,"N":4096},
        "inputs":{"X":{"shape":["B","S","D"],"dtype":"bf16"},"W":{"shape":["N","D"],"dtype":"bf16","param":true},
                  "b":{"shape":["N"],"dtype":"bf16","param":true}},
        "graph":[{"op":"linear","inputs":["X","W","b"],"output":"H"},{"op":"gelu","inputs":["H"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})",
    R"({"name":"matmul_3d_2d","dims":{"N":16,"M":1024,"K":2048,"L":768},
        "inputs":{"A":{"shape":["N","M","K"],"dtype":"f32"},"B":{"shape":["K","L"],"dtype":"f32"}},
        "graph":[{"op":"matmul","inputs":["A","B"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})",
    // KernelBench's irregular matmul (rows of odd length: 4-byte accesses) and a matrix-vector
    // product (N = 1)
    R"({"name":"matmul_irregular","dims":{"M":8205,"K":2949,"N":5921},
        "inputs":{"A":{"shape":["M","K"],"dtype":"f32"},"B":{"shape":["K","N"],"dtype":"f32"}},
        "graph":[{"op":"matmul","inputs":["A","B"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})",
    R"({"name":"matvec","dims":{"M":2048,"K":8192,"D1":1},
        "inputs":{"A":{"shape":["M","K"],"dtype":"f32"},"B":{"shape":["K","D1"],"dtype":"f32"}},
        "graph":[{"op":"matmul","inputs":["A","B"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})",
};

TEST(SeedHandMade, ProblemsOutsideTheSuiteSeedChecksAndLowers) {
    for (const char* json : kHandMade) {
        Problem p = parse(json);
        EXPECT_EQ(seed_and_verify(p), "") << p.name;
    }
}

TEST(SeedHandMade, FusesEpiloguesAndSwiGluLikePatterns) {
    auto prog = planner::seed_program(parse(kHandMade[2]), h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);  // sigmoid; mul X; mul 2 in one map
    EXPECT_EQ(prog->kernels[0].kind, dsl::KernelKind::kMap);
    auto attn = planner::seed_program(parse(kHandMade[3]), h200());
    ASSERT_TRUE(attn.ok()) << attn.error().to_string();
    ASSERT_EQ(attn->kernels.size(), 2u);  // batched gemm { mul 0.125 } + softmax
    EXPECT_EQ(attn->kernels[0].args[1].dims, (std::vector<std::string>{"B", "T", "D"}));
    planner::SeedOptions unfused;
    unfused.fuse = false;
    auto u = planner::seed_program(parse(kHandMade[2]), h200(), unfused);
    ASSERT_TRUE(u.ok()) << u.error().to_string();
    EXPECT_EQ(u->kernels.size(), 3u);
}

TEST(SeedVariants, DistinctAndAllCheck) {
    for (const auto& path : suite_specs()) {
        auto problem = load_problem(path.string());
        ASSERT_TRUE(problem.ok());
        auto vs = planner::seed_variants(*problem, h200());
        ASSERT_FALSE(vs.empty()) << problem->name;
        std::set<std::string> texts;
        for (const auto& v : vs) {
            EXPECT_TRUE(texts.insert(dsl::print_canonical(v)).second);
            EXPECT_TRUE(dsl::check_program(v, *problem, h200()).ok()) << dsl::print_canonical(v);
        }
    }
}

// layer_norm over several trailing dims (KernelBench's LayerNorm((features, dim1, dim2))) is one
// row of their product: the seed names the first normalized dim with `over` and checks.
TEST(Seed, LayerNormOverTrailingDimsIsOneRow) {
    auto prog = planner::seed_program(
        parse(R"({"name":"ln2d","dims":{"N":64,"H":32,"W":32},
                  "inputs":{"X":{"shape":["N","H","W"],"dtype":"f32"},
                            "g":{"shape":["H","W"],"dtype":"f32"},"b":{"shape":["H","W"],"dtype":"f32"}},
                  "graph":[{"op":"layer_norm","inputs":["X","g","b"],"output":"Y","normalized_shape":["H","W"]}],
                  "outputs":["Y"],"precision":{"policy":"fp32_strict"}})"),
        h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const std::string text = dsl::print_canonical(*prog);
    EXPECT_NE(text.find("over H"), std::string::npos) << text;
}

// l1 / l2 normalize (KernelBench level 1, 38 and 39; F.normalize) seed as one row kernel, like
// rms_norm, with the problem's eps; behind an element-wise producer and at long rows the seed
// checks and lowers too.
TEST(Seed, NormalizeIsOneRowKernel) {
    const std::string head = R"({"name":"nz","dims":{"M":16384,"N":4096},
        "inputs":{"X":{"shape":["M","N"],"dtype":"bf16"}},"graph":[)";
    const std::string tail = R"(],"outputs":["Y"],"precision":{"policy":"bf16"}})";
    Problem l2 =
        parse(head + R"({"op":"l2_normalize","inputs":["X"],"output":"Y","eps":1e-12})" + tail);
    auto prog = planner::seed_program(l2, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u) << dsl::print_canonical(*prog);
    EXPECT_EQ(prog->kernels[0].row_op, dsl::RowOp::kL2Normalize);
    EXPECT_EQ(prog->kernels[0].eps, 1e-12);
    EXPECT_EQ(seed_and_verify(l2), "");
    Problem l1 = parse(head + R"({"op":"hardtanh","inputs":["X"],"output":"H"},
                                 {"op":"l1_normalize","inputs":["H"],"output":"Y"})" + tail);
    EXPECT_EQ(seed_and_verify(l1), "");
    auto p1 = planner::seed_program(l1, h200());
    ASSERT_TRUE(p1.ok());
    EXPECT_EQ(p1->kernels.back().row_op, dsl::RowOp::kL1Normalize);
    auto long_rows = rebind(l2, {{"M", 8}, {"N", 1 << 20}});
    ASSERT_TRUE(long_rows.ok());
    EXPECT_EQ(seed_and_verify(*long_rows), "");
    // over a leading dim: the row kernel between transposes to the last dim and back
    Problem col =
        parse(head + R"({"op":"l1_normalize","inputs":["X"],"output":"Y","axis":0})" + tail);
    EXPECT_EQ(seed_and_verify(col), "");
    auto c = planner::seed_program(col, h200());
    ASSERT_TRUE(c.ok()) << c.error().to_string();
    ASSERT_EQ(c->kernels.size(), 3u);
    EXPECT_EQ(c->kernels[1].row_op, dsl::RowOp::kL1Normalize);
}

// prod (KernelBench level 1, 50: torch.prod(x, dim=1) on [16, 256, 256]) seeds as one rowwise
// prod: over the leading dim R a column reduction, over the last dim a row reduction, a trailing
// element-wise op in its chain; each checks and lowers.
TEST(Seed, ProdIsOneRowKernel) {
    const std::string head = R"({"name":"pr","dims":{"B":16,"R":256,"C":256},
        "inputs":{"X":{"shape":["B","R","C"],"dtype":"f32"}},"graph":[)";
    const std::string tail = R"(],"outputs":["Y"],"precision":{"policy":"fp32_strict"}})";
    Problem mid = parse(head + R"({"op":"prod","inputs":["X"],"output":"Y","axis":1})" + tail);
    auto prog = planner::seed_program(mid, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u) << dsl::print_canonical(*prog);
    EXPECT_EQ(prog->kernels[0].row_op, dsl::RowOp::kProd);
    EXPECT_EQ(prog->kernels[0].over, "R");
    EXPECT_EQ(seed_and_verify(mid), "");
    Problem last = parse(head + R"({"op":"prod","inputs":["X"],"output":"P","keepdim":true},
                                   {"op":"abs","inputs":["P"],"output":"Y"})" + tail);
    auto pl = planner::seed_program(last, h200());
    ASSERT_TRUE(pl.ok()) << pl.error().to_string();
    ASSERT_EQ(pl->kernels.size(), 1u) << dsl::print_canonical(*pl);
    EXPECT_EQ(pl->kernels[0].row_op, dsl::RowOp::kProd);
    EXPECT_EQ(seed_and_verify(last), "");
}

// BatchNorm in training mode, as KernelBench files import it (mean over W, then H, then N, each
// keepdim; the variance's with its `sub; square` in front): one set reduction per statistic
// (`over` the three dims) and the normalizing map, 3 kernels where the chain took 7; with the
// statistic read by another op in between, or a kept last dim, the chain stays.
TEST(Seed, ChainedReductionsBecomeOneSetReduction) {
    const std::string head = R"({"name":"bn","dims":{"N":8,"C":64,"H":28,"W":28},
        "inputs":{"X":{"shape":["N","C","H","W"],"dtype":"f32"},"g":{"shape":["C",1,1],"dtype":"f32"}},
        "graph":[{"op":"mean","inputs":["X"],"axis":3,"keepdim":true,"output":"m3"},
                 {"op":"mean","inputs":["m3"],"axis":2,"keepdim":true,"output":"m2"},
                 {"op":"mean","inputs":["m2"],"axis":0,"keepdim":true,"output":"M"},
                 {"op":"sub","inputs":["X","M"],"output":"D"},
                 {"op":"square","inputs":["D"],"output":"S"},
                 {"op":"mean","inputs":["S"],"axis":3,"keepdim":true,"output":"v3"},
                 {"op":"mean","inputs":["v3"],"axis":2,"keepdim":true,"output":"v2"},
                 {"op":"mean","inputs":["v2"],"axis":0,"keepdim":true,"output":"V"},
                 {"op":"add_scalar","inputs":["V"],"value":1e-5,"output":"Ve"},
                 {"op":"rsqrt","inputs":["Ve"],"output":"R"},
                 {"op":"sub","inputs":["X","M"],"output":"D2"},
                 {"op":"mul","inputs":["D2","R"],"output":"Z"},
                 {"op":"mul","inputs":["Z","g"],"output":"Y"})";
    const std::string tail = R"(],"outputs":["Y"],"precision":{"policy":"fp32_strict"}})";
    Problem bn = parse(head + tail);
    auto prog = planner::seed_program(bn, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 3u) << dsl::print_canonical(*prog);
    EXPECT_EQ(prog->kernels[0].over, "N,H,W");
    EXPECT_EQ(prog->kernels[1].over, "N,H,W");
    EXPECT_FALSE(prog->kernels[1].pre.empty());
    EXPECT_EQ(prog->kernels[2].kind, dsl::KernelKind::kMap);
    // 8 x 28 x 28 = 6272 elements an output: one block of 512 threads each
    EXPECT_EQ(prog->kernels[0].rowwise.threads, 512);
    EXPECT_EQ(seed_and_verify(bn), "");

    // m2 also read by another op: the set stops at m2 (over H,W), the mean over N is its own
    Problem shared = parse(head + R"(,{"op":"relu","inputs":["m2"],"output":"Q"})" +
                           R"(],"outputs":["Y","Q"],"precision":{"policy":"fp32_strict"}})");
    auto ps = planner::seed_program(shared, h200());
    ASSERT_TRUE(ps.ok()) << ps.error().to_string();
    ASSERT_EQ(ps->kernels.size(), 4u) << dsl::print_canonical(*ps);
    EXPECT_EQ(ps->kernels[0].over, "H,W") << dsl::print_canonical(*ps);
    EXPECT_EQ(ps->kernels[1].over, "N") << dsl::print_canonical(*ps);
    EXPECT_EQ(seed_and_verify(shared), "");

    // sum over N, then H of [N, C, H, W]: the last dim is kept, the two column reductions stay
    Problem kept = parse(R"({"name":"kept","dims":{"N":8,"C":64,"H":28,"W":28},
        "inputs":{"X":{"shape":["N","C","H","W"],"dtype":"f32"}},
        "graph":[{"op":"sum","inputs":["X"],"axis":0,"output":"A"},
                 {"op":"sum","inputs":["A"],"axis":1,"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})");
    auto pk = planner::seed_program(kept, h200());
    ASSERT_TRUE(pk.ok()) << pk.error().to_string();
    EXPECT_EQ(pk->kernels.size(), 2u) << dsl::print_canonical(*pk);
    EXPECT_EQ(seed_and_verify(kept), "");

    // every dim reduced (an MSE's mean of means): the row reduction and the mean of its rows
    Problem all = parse(R"({"name":"all","dims":{"R":64,"C":4096},
        "inputs":{"X":{"shape":["R","C"],"dtype":"f32"}},
        "graph":[{"op":"mean","inputs":["X"],"axis":-1,"output":"A"},
                 {"op":"mean","inputs":["A"],"axis":-1,"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})");
    auto pa = planner::seed_program(all, h200());
    ASSERT_TRUE(pa.ok()) << pa.error().to_string();
    EXPECT_EQ(pa->kernels.size(), 2u) << dsl::print_canonical(*pa);
    EXPECT_EQ(seed_and_verify(all), "");
}

// erf ... reciprocal and maximum / minimum of two tensors: after a linear they fuse into the
// gemm's epilogue (CUTLASS EVT: scalar functors and maximum_with_nan_propagation nodes), on
// their own into one map; each checks and lowers.
TEST(Seed, ElementwiseMathAndTwoTensorBoundsFuse) {
    Problem gemm = parse(R"({"name":"lin_ew","dims":{"M":256,"N":512,"K":128},
        "inputs":{"X":{"shape":["M","K"],"dtype":"f32"},"W":{"shape":["N","K"],"dtype":"f32","param":true},
                  "b":{"shape":["N"],"dtype":"f32","param":true},"G":{"shape":["M","N"],"dtype":"f32"}},
        "graph":[{"op":"linear","inputs":["X","W","b"],"output":"H"},
                 {"op":"erf","inputs":["H"],"output":"E"},
                 {"op":"maximum","inputs":["G","E"],"output":"Mx"},
                 {"op":"log1p","inputs":["Mx"],"output":"L"},
                 {"op":"minimum","inputs":["L","b"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"fp32_strict"}})");
    auto pg = planner::seed_program(gemm, h200());
    ASSERT_TRUE(pg.ok()) << pg.error().to_string();
    ASSERT_EQ(pg->kernels.size(), 1u) << dsl::print_canonical(*pg);
    EXPECT_NE(dsl::print_canonical(*pg).find("erf; max G[M,N]; log1p; min b[N]"), std::string::npos)
        << dsl::print_canonical(*pg);
    EXPECT_EQ(seed_and_verify(gemm), "");
    Problem map = parse(R"({"name":"ew_map","dims":{"R":512,"C":1000},
        "inputs":{"X":{"shape":["R","C"],"dtype":"bf16"},"Z":{"shape":["R","C"],"dtype":"bf16"}},
        "graph":[{"op":"sin","inputs":["X"],"output":"S"},{"op":"cos","inputs":["X"],"output":"C"},
                 {"op":"maximum","inputs":["S","C"],"output":"M"},{"op":"expm1","inputs":["M"],"output":"E"},
                 {"op":"sign","inputs":["Z"],"output":"Sg"},{"op":"minimum","inputs":["E","Sg"],"output":"N"},
                 {"op":"reciprocal","inputs":["N"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})");
    auto pm = planner::seed_program(map, h200());
    ASSERT_TRUE(pm.ok()) << pm.error().to_string();
    EXPECT_LE(pm->kernels.size(), 2u) << dsl::print_canonical(*pm);
    EXPECT_EQ(seed_and_verify(map), "");
}

// cumsum / cumprod (KernelBench level 1, 89-92) seed as one scan row kernel with the problem's
// flags: 1024 threads a row for long rows, one warp or less per row for short ones; a trailing
// element-wise op joins its chain; over a leading dim it is not expressible.
TEST(Seed, ScanIsOneRowKernel) {
    const std::string head = R"({"name":"sc","dims":{"B":128,"N":4000},
        "inputs":{"X":{"shape":["B","N"],"dtype":"f32"}},"graph":[)";
    const std::string tail = R"(],"outputs":["Y"],"precision":{"policy":"fp32_strict"}})";
    Problem fwd = parse(head + R"({"op":"cumsum","inputs":["X"],"output":"Y"})" + tail);
    auto prog = planner::seed_program(fwd, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u) << dsl::print_canonical(*prog);
    EXPECT_EQ(prog->kernels[0].row_op, dsl::RowOp::kCumsum);
    EXPECT_EQ(prog->kernels[0].rowwise.threads, 1024);
    EXPECT_EQ(prog->kernels[0].rowwise.rows_per_block, 1);
    EXPECT_FALSE(prog->kernels[0].rowwise.reverse);
    EXPECT_EQ(seed_and_verify(fwd), "");
    Problem rev = parse(head + R"({"op":"cumprod","inputs":["X"],"output":"C",
                                   "reverse":true,"exclusive":true},
                                  {"op":"scale","inputs":["C"],"output":"Y","value":2.0})" + tail);
    auto pr = planner::seed_program(rev, h200());
    ASSERT_TRUE(pr.ok()) << pr.error().to_string();
    ASSERT_EQ(pr->kernels.size(), 1u) << dsl::print_canonical(*pr);
    EXPECT_EQ(pr->kernels[0].row_op, dsl::RowOp::kCumprod);
    EXPECT_TRUE(pr->kernels[0].rowwise.reverse);
    EXPECT_TRUE(pr->kernels[0].rowwise.exclusive);
    EXPECT_EQ(seed_and_verify(rev), "");
    auto short_rows = rebind(fwd, {{"B", 4096}, {"N", 100}});
    ASSERT_TRUE(short_rows.ok());
    auto ps = planner::seed_program(*short_rows, h200());
    ASSERT_TRUE(ps.ok()) << ps.error().to_string();
    EXPECT_EQ(ps->kernels[0].rowwise.threads / ps->kernels[0].rowwise.rows_per_block, 32);
    EXPECT_EQ(seed_and_verify(*short_rows), "");
    // rows shorter than a 16-byte vector, or not a multiple of one (a scan over 3 chunks):
    // the widest vector that divides the row
    for (const auto& [n, vec] : std::vector<std::pair<int64_t, int>>{{3, 1}, {6, 2}, {12, 4}}) {
        auto rows = rebind(fwd, {{"B", 4096}, {"N", n}});
        ASSERT_TRUE(rows.ok());
        auto pn = planner::seed_program(*rows, h200());
        ASSERT_TRUE(pn.ok()) << "N = " << n << ": " << pn.error().to_string();
        EXPECT_EQ(pn->kernels[0].rowwise.vec, vec) << "N = " << n;
        EXPECT_EQ(seed_and_verify(*rows), "") << "N = " << n;
    }
    auto long_rows = rebind(fwd, {{"B", 8}, {"N", 1 << 20}});
    ASSERT_TRUE(long_rows.ok());
    EXPECT_EQ(seed_and_verify(*long_rows), "");
    // many long rows fill the SMs with 256-thread blocks, which the H200 ran faster
    auto many_rows = rebind(fwd, {{"B", 4096}, {"N", 32768}});
    ASSERT_TRUE(many_rows.ok());
    auto pm = planner::seed_program(*many_rows, h200());
    ASSERT_TRUE(pm.ok()) << pm.error().to_string();
    EXPECT_EQ(pm->kernels[0].rowwise.threads, 256);
    EXPECT_EQ(pm->kernels[0].rowwise.rows_per_block, 1);
    // over a leading dim (reversed too: x.flip(0).cumsum(0).flip(0)): between transposes
    for (const char* rev : {"", R"(,"reverse":true)"}) {
        Problem col = parse(head + R"({"op":"cumsum","inputs":["X"],"output":"Y","axis":0)" +
                            rev + "}" + tail);
        EXPECT_EQ(seed_and_verify(col), "");
        auto c = planner::seed_program(col, h200());
        ASSERT_TRUE(c.ok()) << c.error().to_string();
        ASSERT_EQ(c->kernels.size(), 3u);
        EXPECT_EQ(c->kernels[1].row_op, dsl::RowOp::kCumsum);
        EXPECT_EQ(c->kernels[1].rowwise.reverse, *rev != 0);
    }
}

// A small fp32_strict GEMM (3xTF32, multistage): 128x128 tiles would give 2 CTAs on 132 SMs
// (measured on the H200: 35 us against cuBLAS's 9.5 us); the seed takes the tile with the most CTAs.
TEST(Seed, SmallMultistageGemmPrefersTheTileWithMoreCtas) {
    auto prog = planner::seed_program(
        parse(R"({"name":"small","dims":{"M":256,"N":128,"K":512},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"f32"},"B":{"shape":["K","N"],"dtype":"f32"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"fp32_strict"}})"),
        h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const std::string text = dsl::print_canonical(*prog);
    EXPECT_NE(text.find("tile 64x64x32"), std::string::npos) << text;
    EXPECT_NE(text.find("tf32x3"), std::string::npos) << text;
}

// A large fp32_strict GEMM on the H200 seeds the staged 3xTF32 with a promoted accumulator:
// cooperative 128x128x32 cluster 2x1 (bench/kernels/tf32x3_accum: 1.25 ms at 4096^3, 2.15x
// cuBLAS SGEMM), and it checks and lowers with the promotion mainloop.
TEST(Seed, LargeFp32StrictGemmSeedsPromotedStagedTf32x3) {
    const Problem problem = parse(R"({"name":"big","dims":{"M":4096,"N":4096,"K":4096},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"f32"},"B":{"shape":["K","N"],"dtype":"f32"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"fp32_strict"}})");
    auto prog = planner::seed_program(problem, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const std::string text = dsl::print_canonical(*prog);
    EXPECT_NE(text.find("tile 128x128x32 cluster 2x1 stages auto schedule cooperative math tf32x3"),
              std::string::npos) << text;
    auto lowered = codegen::lower_program(*prog, problem, codegen::LowerOptions{});
    ASSERT_TRUE(lowered.ok()) << lowered.error().to_string();
    EXPECT_NE(lowered->cuda_source.find("MainloopSm90TmaGmmaWarpSpecializedFP8"),
              std::string::npos);
    EXPECT_EQ(seed_and_verify(problem), "");
    // Before sm_90 the same problem seeds multistage.
    dsl::DeviceLimits a100 = h200();
    a100.cc_major = 8;
    a100.cluster_max = 1;
    auto old = planner::seed_program(problem, a100);
    ASSERT_TRUE(old.ok()) << old.error().to_string();
    EXPECT_NE(dsl::print_canonical(*old).find("schedule multistage math tf32x3"),
              std::string::npos) << dsl::print_canonical(*old);
}

// Few output tiles and a long K (gemm_large_k_bf16, 1024^2 x 131072: 64 tiles of 128x128 on
// 132 SMs): split K in one wave (measured on the H200: splitk 2 335.6 us = 102% of cuBLAS,
// stream_k 525.9 us); one split short of two waves keeps stream_k.
TEST(Seed, FewTilesLongKSplitsKInOneWave) {
    auto seed_text = [](int64_t m, int64_t n, int64_t k) {
        auto prog = planner::seed_program(
            parse(R"({"name":"lk","dims":{"M":)" + std::to_string(m) + R"(,"N":)" +
                  std::to_string(n) + R"(,"K":)" + std::to_string(k) + R"(},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"bf16"},"B":{"shape":["K","N"],"dtype":"bf16"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"bf16"}})"),
            h200());
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        return prog.ok() ? dsl::print_canonical(*prog) : std::string();
    };
    std::string t = seed_text(1024, 1024, 131072);  // 64 tiles: 2 splits fit in 132 SMs
    EXPECT_NE(t.find("schedule cooperative"), std::string::npos) << t;
    EXPECT_NE(t.find("splitk 2"), std::string::npos) << t;
    t = seed_text(512, 512, 65536);  // 16 tiles: 8 splits, 8192 of K each
    EXPECT_NE(t.find("splitk 8"), std::string::npos) << t;
    t = seed_text(1280, 1280, 8192);  // 100 tiles: no second split fits; stream-K
    EXPECT_NE(t.find("schedule stream_k"), std::string::npos) << t;
}

// Row-wise seeds follow the H200 row-wise benchmark (2026-12-01): about four vectors per thread
// up to 256 threads, and a row too long for 64 values per thread but within a third of a
// block's shared memory stays in one pass (held in shared memory) instead of 512 threads of
// registers; a row past that splits over a cluster of 512-thread CTAs into parts of at most
// 64 KB, read twice (the second read from L2); short rows get two vectors per thread.
TEST(Seed, RowwiseThreadsFromTheMeasuredRules) {
    auto seed_text = [](const std::string& op, const std::string& dtype, int64_t rows, int64_t n) {
        auto prog = planner::seed_program(
            parse(R"({"name":"r","dims":{"R":)" + std::to_string(rows) + R"(,"C":)" +
                  std::to_string(n) + R"(},"inputs":{"X":{"shape":["R","C"],"dtype":")" + dtype +
                  R"("}},"graph":[{"op":")" + op + R"(","inputs":["X"],"output":"Y","axis":-1}],
                  "outputs":["Y"],"precision":{"policy":")" +
                  (dtype == "bf16" ? "bf16" : "fp32_strict") + R"("}})"),
            h200());
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        return prog.ok() ? dsl::print_canonical(*prog) : std::string();
    };
    std::string t = seed_text("softmax", "bf16", 32768, 8192);  // 1024 vectors of 8
    EXPECT_NE(t.find("threads 256 vec 8 passes 1"), std::string::npos) << t;
    t = seed_text("log_softmax", "bf16", 16384, 32000);  // 64 KB rows: shared memory, one pass
    EXPECT_NE(t.find("threads 256 vec 8 passes 1"), std::string::npos) << t;
    EXPECT_NE(t.find("split 1"), std::string::npos) << t;
    t = seed_text("softmax", "f32", 64, 131072);  // 512 KB rows: 8 parts of 64 KB, read twice
    EXPECT_NE(t.find("threads 512 vec 4 passes 2 online split 8"), std::string::npos) << t;
    t = seed_text("softmax", "f32", 128, 1048576);  // 4 MB rows: a cluster of 16 at most
    EXPECT_NE(t.find("threads 512 vec 4 passes 2 online split 16"), std::string::npos) << t;
    // The one-read variant of a long row: registers + shared memory, the fewest CTAs that hold
    // it (group_norm 1024 x 131072 f32 at split 2: 313 us against 359 us read twice, H200)
    auto group_norm = load_problem(std::string(KFORGE_SOURCE_DIR) + "/problems/group_norm_f32.json");
    ASSERT_TRUE(group_norm.ok());
    bool one_read = false;
    for (const auto& v : planner::seed_variants(*group_norm, h200()))
        one_read = one_read || dsl::print_canonical(v).find("threads 512 vec 4 passes 1 split 2") !=
                                   std::string::npos;
    EXPECT_TRUE(one_read);
    // Short rows (2026-12-01 sweep): two vectors per thread, 512-thread blocks, no online.
    t = seed_text("softmax", "f32", 1048576, 128);
    EXPECT_NE(t.find("rows_per_block 32 threads 512 vec 4 passes 1 split 1"), std::string::npos)
        << t;
}

TEST(SeedErrors, NotExpressibleNamesTheOp) {
    struct Case {
        const char* json;
        const char* where;
        const char* says;
    } cases[] = {
        // (softmax over a middle dim runs between transposes, plan_view.cpp; a scan does not)
        // (any batch dims plan; a square X read transposed, [S,S]^T, does not: its names
        // cannot say which S is contracted)
        {R"({"name":"bmm4d","dims":{"P":2,"B":4,"S":128,"N":256},
             "inputs":{"X":{"shape":["P","B","S","S"],"dtype":"bf16"},"W":{"shape":["P","B","S","N"],"dtype":"bf16"}},
             "graph":[{"op":"matmul","inputs":["X","W"],"output":"Y","transpose_a":true}],
             "outputs":["Y"],"precision":{"policy":"bf16"}})",
         "graph[0]", "not expressible: matmul"},
    };
    for (const auto& c : cases) {
        auto prog = planner::seed_program(parse(c.json), h200());
        ASSERT_FALSE(prog.ok()) << c.says;
        EXPECT_EQ(prog.error().where, c.where);
        EXPECT_NE(prog.error().message.find(c.says), std::string::npos) << prog.error().message;
    }
}

// nn.Linear on a 4-D input and einsum('bijl,lk->bijk') (KernelBench level 1, 11): every leading
// dim of A folds into the GEMM's M, which checks and lowers as one GEMM.
TEST(Seed, EveryLeadingDimOfAFoldsIntoM) {
    const Problem lin = parse(R"({"name":"lin4d","dims":{"P":2,"B":4,"S":128,"K":256,"N":256},
        "inputs":{"X":{"shape":["P","B","S","K"],"dtype":"bf16"},"W":{"shape":["N","K"],"dtype":"bf16"}},
        "graph":[{"op":"linear","inputs":["X","W"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})");
    EXPECT_EQ(seed_and_verify(lin), "");
    auto prog = planner::seed_program(lin, h200());
    ASSERT_TRUE(prog) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u);
    EXPECT_EQ(prog->kernels[0].kind, dsl::KernelKind::kGemm);
}

// The tile rules read the GEMM's shape with the folded batch dims in M: A[L,F,1,M,K] x
// B[L,1,1,K,N] folds F (B lacks it) into M = F x 8 = 512 rows, L = 2 stays the batch. The fold
// is of named dims, counted from the end past the size-1 one; counted by position, F went into
// L (a batch of 128 matrices of 8 rows: the small-matrix multistage tiles first).
TEST(Seed, FoldedBatchDimBeforeASizeOneDimIsInM) {
    const Problem p = parse(R"({"name":"fold1","dims":{"L":2,"F":64,"M":8,"K":128,"N":128},
        "inputs":{"A":{"shape":["L","F",1,"M","K"],"dtype":"bf16"},
                  "B":{"shape":["L",1,1,"K","N"],"dtype":"bf16"}},
        "graph":[{"op":"matmul","inputs":["A","B"],"output":"Y"}],
        "outputs":["Y"],"precision":{"policy":"bf16"}})");
    auto prog = planner::seed_program(p, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    ASSERT_EQ(prog->kernels.size(), 1u) << dsl::print_canonical(*prog);
    const dsl::GemmConfig& g = prog->kernels[0].gemm;
    // K = 128: pingpong 128x128 (knobs_gemm.cpp), not the small-matrix multistage 64x64
    EXPECT_EQ(g.schedule, dsl::Schedule::kPingpong) << dsl::print_canonical(*prog);
    EXPECT_EQ(g.tile_m, 128) << dsl::print_canonical(*prog);
    EXPECT_EQ(seed_and_verify(p), "");
}

// bf16/fp16 gemm operands whose rows are an odd number of elements (2002 bytes: TMA needs 16,
// cp.async 4, and the SIMT mainloop takes f32 only) were refused by every configuration; each
// operand is now cast to f32 by a map kernel and the gemm runs multistage on f32 rows, which
// checks and lowers. Operands with 4-byte rows keep their dtype (no staging).
TEST(Seed, HalfGemmOnOddRowsStagesOperandsAsF32) {
    const Problem odd = parse(R"({"name":"odd","dims":{"M":1001,"N":1001,"K":1001},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"bf16"},"B":{"shape":["K","N"],"dtype":"bf16"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"bf16"}})");
    auto prog = planner::seed_program(odd, h200());
    ASSERT_TRUE(prog.ok()) << prog.error().to_string();
    const std::string text = dsl::print_canonical(*prog);
    EXPECT_NE(text.find("map(A[M,K])"), std::string::npos) << text;
    EXPECT_NE(text.find("store A_f32[M,K]"), std::string::npos) << text;
    EXPECT_NE(text.find("gemm(A_f32[M,K], B_f32[K,N])"), std::string::npos) << text;
    EXPECT_NE(text.find("schedule multistage math tf32"), std::string::npos) << text;
    EXPECT_EQ(seed_and_verify(odd), "");
    // fp16 with only N odd (B's rows): both operands staged (a gemm takes one operand dtype)
    const Problem odd_n = parse(R"({"name":"odd_n","dims":{"M":256,"N":1001,"K":512},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"f16"},"B":{"shape":["K","N"],"dtype":"f16"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"fp16"}})");
    EXPECT_EQ(seed_and_verify(odd_n), "");
    // 1004 x 2 bytes: 4-byte rows, multistage reads bf16 directly
    const Problem even = parse(R"({"name":"even","dims":{"M":512,"N":1020,"K":1004},
                  "inputs":{"A":{"shape":["M","K"],"dtype":"bf16"},"B":{"shape":["K","N"],"dtype":"bf16"}},
                  "graph":[{"op":"matmul","inputs":["A","B"],"output":"C"}],
                  "outputs":["C"],"precision":{"policy":"bf16"}})");
    auto ev = planner::seed_program(even, h200());
    ASSERT_TRUE(ev.ok()) << ev.error().to_string();
    EXPECT_EQ(dsl::print_canonical(*ev).find("_f32"), std::string::npos);
}

}  // namespace
}  // namespace kforge
