// Operand staging for sm90 tf32 gemms (codegen/gemm_stage.h): the pre-kernel launches, their
// workspace buffers and grids, the GEMM's K' = 3K for 3xTF32, the operand pairing of the hi/lo
// parts, what stays unstaged, batched shapes, and the simulated time counting the staging.
// Text and plan only: the CUTLASS compile is gemm_stage_compile_test.cpp's.
#include <cstdlib>
#include <fstream>
#include <regex>
#include <sstream>
#include <set>

#include <gtest/gtest.h>

#include "codegen/gemm_stage.h"
#include "codegen/lower.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "perfmodel/sim_model.h"
#include "problem/spec.h"
#include "search/knob_space.h"
#include "sol/device.h"
#include "tests/codegen/gemm_fixtures.h"

namespace kforge::codegen {
namespace {

using namespace gemm_testing;

// problems/gemm_f32_4096.json: C = A[M,K] @ B[K,N], B N-major, fp32_strict.
Problem problem_f32_nn(int64_t m, int64_t n, int64_t k) {
    return problem_from(R"({"name": "gemm_f32_4096", "dims": {"M": )" + std::to_string(m) +
                        R"(, "N": )" + std::to_string(n) + R"(, "K": )" + std::to_string(k) +
                        R"(}, "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"},
                   "B": {"shape": ["K", "N"], "dtype": "f32"}},
        "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
        "outputs": ["C"], "precision": {"policy": "fp32_strict", "atol": 0.002}})");
}

dsl::Program program_f32_nn(dsl::Schedule schedule, dsl::MathMode math) {
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 128; c.tile_k = 32;
    c.schedule = schedule;
    c.math = math;
    c.stages = schedule == dsl::Schedule::kMultistage ? 4 : 0;
    return program_of("gemm_f32_4096", "gemm_f32_4096",
                      {gemm_kernel("k0", tref("A", {"M", "K"}), tref("B", {"K", "N"}), c,
                                   {chain_tensor(dsl::ChainOpKind::kStore, "C", {"M", "N"})})});
}

Lowered lower_ok(const dsl::Program& program, const Problem& problem) {
    auto out = lower_program(program, problem, LowerOptions{});
    EXPECT_TRUE(out.ok()) << (out.ok() ? "" : out.error().to_string());
    return out.ok() ? *out : Lowered{};
}

void expect_has(const std::string& source, const std::string& text) {
    EXPECT_NE(source.find(text), std::string::npos) << "missing: " << text;
}

const BufferDecl* buffer(const LaunchPlan& plan, const std::string& name) {
    for (const BufferDecl& b : plan.buffers)
        if (b.name == name) return &b;
    return nullptr;
}

TEST(GemmStage, Tf32x3CooperativeStagesBothOperandsOverThreeK) {
    Lowered out = lower_ok(program_f32_nn(dsl::Schedule::kCooperative, dsl::MathMode::kTf32x3),
                           problem_f32_nn(4096, 2048, 1024));
    const LaunchPlan& plan = out.plan;
    ASSERT_EQ(plan.kernels.size(), 3u);
    // A [M,K] is K-major: copied row by row, 32x32 tiles over (K, M).
    const KernelLaunch& sa = plan.kernels[0];
    EXPECT_EQ(sa.name, "k0");
    EXPECT_EQ(sa.symbol, "kforge_k0_stage_a");
    EXPECT_TRUE(sa.param_builder.empty());
    EXPECT_EQ(sa.grid, (std::array<unsigned, 3>{1024 / 32, 4096 / 32, 1}));
    EXPECT_EQ(sa.block, (std::array<unsigned, 3>{32, 8, 1}));
    ASSERT_EQ(sa.params.size(), 4u);
    EXPECT_EQ(sa.params[0].kind, ParamKind::kTensor);
    EXPECT_EQ(sa.params[0].name, "A");
    EXPECT_EQ(sa.params[1].kind, ParamKind::kWorkspace);
    EXPECT_EQ(sa.params[1].name, "k0_staged_A");
    EXPECT_EQ(sa.params[2].int_value, 4096);  // rows = M
    EXPECT_EQ(sa.params[3].int_value, 1024);  // cols = K
    // B [K,N] is N-major: transposed, tiles over (N, K).
    const KernelLaunch& sb = plan.kernels[1];
    EXPECT_EQ(sb.symbol, "kforge_k0_stage_b");
    EXPECT_EQ(sb.grid, (std::array<unsigned, 3>{2048 / 32, 1024 / 32, 1}));
    EXPECT_EQ(sb.params[0].name, "B");
    EXPECT_EQ(sb.params[1].name, "k0_staged_B");
    EXPECT_EQ(sb.params[2].int_value, 1024);  // rows = K
    EXPECT_EQ(sb.params[3].int_value, 2048);  // cols = N
    // The GEMM reads the staged buffers, both K-major, over K' = 3K.
    const KernelLaunch& g = plan.kernels[2];
    EXPECT_EQ(g.symbol, "kforge_k0");
    EXPECT_EQ(g.builder_tensors, (std::vector<std::string>{"k0_staged_A", "k0_staged_B", "C"}));
    const BufferDecl* ba = buffer(plan, "k0_staged_A");
    const BufferDecl* bb = buffer(plan, "k0_staged_B");
    ASSERT_TRUE(ba && bb);
    EXPECT_EQ(ba->shape, (std::vector<int64_t>{4096, 3 * 1024}));
    EXPECT_EQ(bb->shape, (std::vector<int64_t>{2048, 3 * 1024}));
    for (const BufferDecl* b : {ba, bb}) {
        EXPECT_TRUE(b->workspace);
        EXPECT_FALSE(b->zero_init);  // every element is written before the GEMM reads it
        EXPECT_EQ(b->dtype, DType::kF32);
    }
    const std::string& s = out.cuda_source;
    expect_has(s, "#include \"kernels/stage_operand.cuh\"");
    expect_has(s, "kforge_k0_stage_a(const float* __restrict__ t_A, float* __restrict__ "
                  "w_k0_staged_A, int64_t rows, int64_t cols)");
    expect_has(s, "kforge::stage_operand<false, 3, 4>(t_A, w_k0_staged_A, rows, cols);");
    expect_has(s, "kforge::stage_operand<true, 3, 2>(t_B, w_k0_staged_B, rows, cols);");
    expect_has(s, "using LayoutA = cutlass::layout::RowMajor;\n");
    expect_has(s, "using LayoutB = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "using TileShape = Shape<_128, _128, _32>;\n");
    expect_has(s, "    K *= 3;");
    expect_has(s, "{int(M), int(N), int(K), int(L)}");
    EXPECT_EQ(s.find("OpMultiplyAddFastF32"), std::string::npos);  // not the sm80 3xTF32
}

// 3xTF32 on wgmma promotes the accumulator: the builder's tf32 collective re-instantiated with
// CUTLASS's FP8 dispatch policy, the interval (4 k-blocks of tile K / wgmma K MMAs) computed
// from the emitted types and set in the builder's mainloop arguments. Every Hopper schedule.
TEST(GemmStage, Tf32x3PromotesTheAccumulator) {
    for (dsl::Schedule sched : {dsl::Schedule::kCooperative, dsl::Schedule::kPingpong,
                                dsl::Schedule::kTmaWarpSpecialized, dsl::Schedule::kStreamK}) {
        Lowered out = lower_ok(program_f32_nn(sched, dsl::MathMode::kTf32x3),
                               problem_f32_nn(512, 512, 256));
        const std::string& s = out.cuda_source;
        SCOPED_TRACE(std::string(to_string(sched)));
        expect_has(s, "using CollectiveMainloopPlain = typename "
                      "cutlass::gemm::collective::CollectiveBuilder<");
        expect_has(s, "struct WithPromotion<cutlass::gemm::collective::CollectiveMma<\n"
                      "    cutlass::gemm::MainloopSm90TmaGmmaWarpSpecialized<Stages, Cluster, "
                      "Schedule>, Rest...>> {");
        expect_has(s, "cutlass::gemm::MainloopSm90TmaGmmaWarpSpecializedFP8<Stages, Cluster, "
                      "Schedule>, Rest...>;");
        expect_has(s, "using CollectiveMainloop = typename "
                      "WithPromotion<CollectiveMainloopPlain>::type;\n");
        expect_has(s, "constexpr uint32_t MmaPromotionInterval = 4 *\n    "
                      "(int(size<2>(TileShape{})) / "
                      "int(CollectiveMainloop::TiledMma{}.tile_size_mnk<2>()));");
        expect_has(s, "    args.mainloop.mma_promotion_interval = MmaPromotionInterval;\n");
        expect_has(s, "accumulator promoted every 4 k-blocks");
        // The kernel is built from the promoting collective, after it is defined.
        const size_t mainloop = s.find("using CollectiveMainloop = typename WithPromotion");
        const size_t kernel = s.find("using GemmKernel = cutlass::gemm::kernel::GemmUniversal<");
        ASSERT_NE(kernel, std::string::npos);
        EXPECT_LT(mainloop, kernel);
        // The interval is set after args is constructed and before can_implement checks it.
        const size_t set = s.find("args.mainloop.mma_promotion_interval");
        EXPECT_LT(s.find("typename Gemm::Arguments args{"), set);
        EXPECT_LT(set, s.find("if (!Gemm::can_implement(args))"));
    }
    // Plain tf32 (staged or not) keeps the builder's collective.
    Problem tf32 = problem_from(R"({"name": "t", "dims": {"M": 512, "N": 512, "K": 256},
      "inputs": {"A": {"shape": ["M", "K"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C"}],
      "outputs": ["C"], "precision": {"policy": "tf32"}})");
    dsl::Program p = program_f32_nn(dsl::Schedule::kCooperative, dsl::MathMode::kTf32);
    p.problem = "t";
    Lowered plain = lower_ok(p, tf32);
    EXPECT_EQ(plain.cuda_source.find("FP8"), std::string::npos);
    EXPECT_EQ(plain.cuda_source.find("mma_promotion_interval"), std::string::npos);
    expect_has(plain.cuda_source, "using CollectiveMainloop = typename "
                                  "cutlass::gemm::collective::CollectiveBuilder<");
}

// The lo mask of each operand (template argument 3 of stage_operand) must pair the parts of
// A' and B' along K' as hi*hi, hi*lo and lo*hi: each once, and never lo*lo.
TEST(GemmStage, HiLoPartsPairAsThreeTf32) {
    Lowered out = lower_ok(program_f32_nn(dsl::Schedule::kPingpong, dsl::MathMode::kTf32x3),
                           problem_f32_nn(512, 512, 256));
    std::smatch m;
    const std::regex call(R"(stage_operand<(true|false), 3, (\d+)>\(t_(\w+),)");
    std::map<std::string, int> mask;
    for (auto it = std::sregex_iterator(out.cuda_source.begin(), out.cuda_source.end(), call);
         it != std::sregex_iterator(); ++it)
        mask[(*it)[3]] = std::atoi((*it)[2].str().c_str());
    ASSERT_EQ(mask.size(), 2u) << out.cuda_source;
    std::multiset<std::pair<int, int>> pairs;  // (A part is lo, B part is lo)
    for (int p = 0; p < 3; ++p) pairs.insert({(mask["A"] >> p) & 1, (mask["B"] >> p) & 1});
    EXPECT_EQ(pairs, (std::multiset<std::pair<int, int>>{{0, 0}, {0, 1}, {1, 0}}));
}

TEST(GemmStage, Tf32NMajorBIsCopiedKMajorAlone) {
    Lowered out = lower_ok(program_tf32_nn({chain_tensor(dsl::ChainOpKind::kAdd, "b", {"N"})}),
                           problem_tf32_nn_bias());
    ASSERT_EQ(out.plan.kernels.size(), 2u);
    EXPECT_EQ(out.plan.kernels[0].symbol, "kforge_k0_stage_b");
    EXPECT_EQ(out.plan.kernels[1].builder_tensors,
              (std::vector<std::string>{"A", "k0_staged_B", "Y", "b"}));
    const BufferDecl* bb = buffer(out.plan, "k0_staged_B");
    ASSERT_NE(bb, nullptr);
    EXPECT_EQ(bb->shape, (std::vector<int64_t>{2048, 512}));  // [N, K]
    const std::string& s = out.cuda_source;
    expect_has(s, "kforge::stage_operand<true, 1, 0>(t_B, w_k0_staged_B, rows, cols);");
    // The plain SS kernel over the program's own M and N (no transposed problem).
    expect_has(s, "using LayoutB = cutlass::layout::ColumnMajor;\n");
    expect_has(s, "using LayoutD = cutlass::layout::RowMajor;\n");
    expect_has(s, "using TileShape = Shape<_128, _256, _32>;\n");
    EXPECT_EQ(s.find("K *="), std::string::npos);
}

TEST(GemmStage, Tf32BothMnMajorStagesBoth) {
    Problem problem = problem_tf32_nn_bias();
    dsl::Program p = program_tf32_nn({});
    relayout_operand(problem, p, 0, {"K", "M"}, {512, 1024});
    Lowered out = lower_ok(p, problem);
    ASSERT_EQ(out.plan.kernels.size(), 3u);
    expect_has(out.cuda_source, "kforge::stage_operand<true, 1, 0>(t_A, w_k0_staged_A");
    expect_has(out.cuda_source, "kforge::stage_operand<true, 1, 0>(t_B, w_k0_staged_B");
    EXPECT_EQ(buffer(out.plan, "k0_staged_A")->shape, (std::vector<int64_t>{1024, 512}));
    expect_has(out.cuda_source, "using LayoutA = cutlass::layout::RowMajor;\n");
}

TEST(GemmStage, WhatIsNotStaged) {
    // tf32 with K-major operands, tf32 and 3xTF32 with schedule multistage (CUTLASS's sm80
    // path reads an N-major B as it is).
    Problem problem = problem_tf32_nn_bias();
    dsl::Program p = program_tf32_nn({});
    relayout_operand(problem, p, 1, {"N", "K"}, {2048, 512});
    Lowered out = lower_ok(p, problem);
    EXPECT_EQ(out.plan.kernels.size(), 1u);
    EXPECT_TRUE(out.plan.buffers.empty());
    out = lower_ok(program_f32_nn(dsl::Schedule::kMultistage, dsl::MathMode::kTf32x3),
                   problem_f32_nn(512, 512, 256));
    EXPECT_EQ(out.plan.kernels.size(), 1u);
    EXPECT_TRUE(out.plan.buffers.empty());
    EXPECT_NE(out.cuda_source.find("OpMultiplyAddFastF32"), std::string::npos);
    dsl::Program multistage = program_tf32_nn({chain_tensor(dsl::ChainOpKind::kAdd, "b", {"N"})});
    multistage.kernels[0].gemm.schedule = dsl::Schedule::kMultistage;
    multistage.kernels[0].gemm.cluster_m = 1;
    out = lower_ok(multistage, problem_tf32_nn_bias());
    EXPECT_EQ(out.plan.kernels.size(), 1u);
    EXPECT_NE(out.cuda_source.find("using LayoutB = cutlass::layout::RowMajor;\n"), std::string::npos);
    EXPECT_EQ(out.plan.kernels.at(0).builder_tensors, (std::vector<std::string>{"A", "B", "Y", "b"}));
    // The decision itself.
    using dsl::MathMode;
    using dsl::Schedule;
    EXPECT_FALSE(plan_operand_staging(Schedule::kCooperative, MathMode::kBf16, true, false).any());
    EXPECT_FALSE(plan_operand_staging(Schedule::kMultistage, MathMode::kTf32, true, false).any());
    EXPECT_TRUE(plan_operand_staging(Schedule::kCooperative, MathMode::kTf32, true, false).stage_b);
    const OperandStaging a_only = plan_operand_staging(Schedule::kPingpong, MathMode::kTf32, false, true);
    EXPECT_TRUE(a_only.stage_a && a_only.a_transposed && !a_only.stage_b);
    OperandStaging s = plan_operand_staging(Schedule::kStreamK, MathMode::kTf32x3, true, true);
    EXPECT_TRUE(s.stage_a && s.stage_b);
    EXPECT_FALSE(s.a_transposed || s.b_transposed);
    EXPECT_EQ(s.k_parts, 3);
}

TEST(GemmStage, BatchedOperandsKeepTheBatchDim) {
    Problem problem = problem_from(R"({"name": "bmm_f32", "dims": {"B": 64, "M": 128, "N": 192, "K": 256},
      "inputs": {"A": {"shape": ["B", "M", "K"], "dtype": "f32"},
                 "Bm": {"shape": ["B", "K", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "Bm"], "output": "C"}],
      "outputs": ["C"], "precision": {"policy": "fp32_strict"}})");
    dsl::GemmConfig c;
    c.tile_m = 128; c.tile_n = 64; c.tile_k = 32;
    c.schedule = dsl::Schedule::kPingpong;
    c.math = dsl::MathMode::kTf32x3;
    dsl::Program p = program_of("bmm", "bmm_f32",
        {gemm_kernel("k0", tref("A", {"B", "M", "K"}), tref("Bm", {"B", "K", "N"}), c,
                     {chain_tensor(dsl::ChainOpKind::kStore, "C", {"B", "M", "N"})})});
    Lowered out = lower_ok(p, problem);
    ASSERT_EQ(out.plan.kernels.size(), 3u);
    EXPECT_EQ(out.plan.kernels[0].grid, (std::array<unsigned, 3>{256 / 32, 128 / 32, 64}));
    EXPECT_EQ(out.plan.kernels[1].grid, (std::array<unsigned, 3>{192 / 32, 256 / 32, 64}));
    EXPECT_EQ(buffer(out.plan, "k0_staged_A")->shape, (std::vector<int64_t>{64, 128, 768}));
    EXPECT_EQ(buffer(out.plan, "k0_staged_Bm")->shape, (std::vector<int64_t>{64, 192, 768}));
    expect_has(out.cuda_source, "cute::make_shape(int(M), int(K), int(L))");
    expect_has(out.cuda_source, "GemmUniversalMode::kBatched");
}

TEST(GemmStageError, StagedKMustKeepTmaAlignment) {
    // K = 6: the staged rows hold 3K = 18 floats = 72 bytes, not a multiple of 16.
    auto out = lower_program(program_f32_nn(dsl::Schedule::kCooperative, dsl::MathMode::kTf32x3),
                             problem_f32_nn(256, 256, 6), LowerOptions{});
    ASSERT_FALSE(out.ok());
    EXPECT_EQ(out.error().where, "k0");
    EXPECT_NE(out.error().message.find("tensor k0_staged_A: its contiguous dim (18 elements)"),
              std::string::npos) << out.error().to_string();
}

// The checker takes tf32x3 with every Hopper schedule where the promoted (doubled) accumulator
// fits a consumer thread's registers, and tf32 with both operands MN-major; f32_simt stays
// multistage-only.
TEST(GemmStageCheck, CheckerAcceptsStagedPrograms) {
    auto check = [](const Problem& problem, const std::string& text) {
        auto p = dsl::parse_program(text, "t.kf");
        EXPECT_TRUE(p.ok()) << (p.ok() ? "" : p.error().to_string());
        return p.ok() ? dsl::check_program(*p, problem, dsl::DeviceLimits{}) : dsl::CheckResult{};
    };
    Problem f32 = problem_f32_nn(4096, 4096, 4096);
    // 128x128: two consumer warpgroups share the tile (2 x 64 registers each) on cooperative and
    // stream_k; one holds it whole (2 x 128) on pingpong and tma_ws, which spills.
    for (const char* sched : {"cooperative", "pingpong", "tma_ws", "stream_k", "multistage"}) {
        for (const char* tile : {"128x128x32", "64x128x32"}) {
            const std::string s(sched), t(tile);
            if (t == "64x128x32" && (s == "cooperative" || s == "stream_k")) continue;
            auto r = check(f32, std::string(R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile )") + tile + " schedule " + sched +
                                    " math tf32x3 { store C[M,N] }");
            const bool spills = t == "128x128x32" && (s == "pingpong" || s == "tma_ws");
            if (!spills) {
                EXPECT_TRUE(r.ok()) << s << " " << t << ": "
                                    << (r.errors.empty() ? "" : r.errors[0].to_string());
            } else {
                ASSERT_FALSE(r.ok()) << s;
                EXPECT_NE(r.errors[0].message.find("holds 2 x 128 accumulator registers"),
                          std::string::npos) << r.errors[0].to_string();
            }
        }
    }
    auto simt = check(f32, R"(program p for "gemm_f32_4096"
kernel k0 = gemm(A[M,K], B[K,N]) tile 128x128x32 schedule cooperative math f32_simt { store C[M,N] })");
    ASSERT_FALSE(simt.ok());
    EXPECT_NE(simt.errors[0].message.find("use schedule multistage"), std::string::npos)
        << simt.errors[0].to_string();
    Problem tn = problem_from(R"({"name": "gemm_tn_tf32", "dims": {"M": 1024, "N": 1024, "K": 512},
      "inputs": {"A": {"shape": ["K", "M"], "dtype": "f32"}, "B": {"shape": ["K", "N"], "dtype": "f32"}},
      "graph": [{"op": "matmul", "inputs": ["A", "B"], "output": "C", "transpose_a": true}],
      "outputs": ["C"], "precision": {"policy": "tf32"}})");
    auto both = check(tn, R"(program p for "gemm_tn_tf32"
kernel k0 = gemm(A[K,M], B[K,N]) tile 128x128x32 math tf32 { store C[M,N] })");
    EXPECT_TRUE(both.ok()) << (both.errors.empty() ? "" : both.errors[0].to_string());
}

// problems/gemm_f32_4096.kf is the staged, promoted 3xTF32 (cooperative 128x128x32 cluster
// 2x1). The parameter proposer's one-knob neighbours that keep tf32x3 either check and lower
// (on a Hopper schedule with the promotion mainloop), or are refused by the checker; the ones
// refused for the promoted accumulator are exactly the tiles whose doubled accumulator spills.
TEST(GemmStageSearch, NeighboursOfTheStagedProgramCheckAndLowerPromoted) {
    const std::string dir = std::string(KFORGE_TEST_DATA_DIR) + "/../../problems/";
    auto problem = load_problem(dir + "gemm_f32_4096.json");
    ASSERT_TRUE(problem.ok()) << problem.error().to_string();
    std::ifstream in(dir + "gemm_f32_4096.kf");
    std::stringstream text;
    text << in.rdbuf();
    auto program = dsl::parse_program(text.str(), "gemm_f32_4096.kf");
    ASSERT_TRUE(program.ok()) << program.error().to_string();
    const dsl::GemmConfig& hand = program->kernels[0].gemm;
    ASSERT_EQ(hand.schedule, dsl::Schedule::kCooperative);
    ASSERT_EQ(hand.math, dsl::MathMode::kTf32x3);
    ASSERT_TRUE(dsl::check_program(*program, *problem, dsl::DeviceLimits{}).ok());
    std::set<std::string> lowered_schedules;
    int refused_for_registers = 0;
    for (const search::KnobMove& m : search::knob_neighbours(*program)) {
        const dsl::GemmConfig& c = m.program.kernels[0].gemm;
        if (c.math != dsl::MathMode::kTf32x3) continue;
        auto checked = dsl::check_program(m.program, *problem, dsl::DeviceLimits{});
        if (!checked.ok()) {
            for (const auto& e : checked.errors)
                if (e.message.find("promotes wgmma's accumulator") != std::string::npos) {
                    ++refused_for_registers;
                    const int threads = c.schedule == dsl::Schedule::kCooperative ||
                                                c.schedule == dsl::Schedule::kStreamK
                                            ? 256 : 128;
                    EXPECT_GT(2 * c.tile_m * c.tile_n / threads, 192) << m.move;
                }
            continue;
        }
        auto lowered = lower_program(m.program, *problem, LowerOptions{});
        ASSERT_TRUE(lowered.ok()) << m.move << ": " << lowered.error().to_string();
        if (c.schedule == dsl::Schedule::kMultistage) continue;
        EXPECT_EQ(lowered->plan.kernels.size(), 3u) << m.move;
        EXPECT_NE(lowered->cuda_source.find("MainloopSm90TmaGmmaWarpSpecializedFP8"),
                  std::string::npos) << m.move;
        lowered_schedules.insert(std::string(to_string(c.schedule)));
    }
    EXPECT_TRUE(lowered_schedules.count("cooperative")) << lowered_schedules.size();
    EXPECT_TRUE(lowered_schedules.count("stream_k")) << lowered_schedules.size();
    EXPECT_GE(refused_for_registers, 1);  // pingpong 128x128 at least
}

// The simulated time counts the staging: its traffic and launch over the GEMM alone, and on the
// H200 the staged wgmma 3xTF32 estimate beats multistage's at 4096^3.
TEST(GemmStageSim, ModelTimeCountsTheStaging) {
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    Ceilings ceil = effective_ceilings(*spec, std::nullopt);
    Problem problem = problem_f32_nn(4096, 4096, 4096);
    auto coop = perfmodel::model_time(
        problem, program_f32_nn(dsl::Schedule::kCooperative, dsl::MathMode::kTf32x3), ceil,
        spec->sm_count);
    auto multi = perfmodel::model_time(
        problem, program_f32_nn(dsl::Schedule::kMultistage, dsl::MathMode::kTf32x3), ceil,
        spec->sm_count);
    ASSERT_TRUE(coop.ok() && multi.ok());
    ASSERT_EQ(coop->kernels.size(), 1u);  // one program kernel, its pre-kernels included
    const double operand = 4096.0 * 4096 * 4;
    // GEMM: 3x each operand + C; staging: each operand read once and written 3 times.
    EXPECT_DOUBLE_EQ(coop->kernels[0].bytes, 2 * 3 * operand + operand + 2 * 4 * operand);
    EXPECT_DOUBLE_EQ(multi->kernels[0].bytes, 3 * operand);
    const double staging_ns = 2 * 4 * operand / ceil.dram_bytes_per_s * 1e9 +
                              2 * perfmodel::kSimLaunchOverheadNs;
    EXPECT_GT(coop->time_ns, staging_ns);
    EXPECT_LT(coop->time_ns, multi->time_ns);
}

}  // namespace
}  // namespace kforge::codegen
