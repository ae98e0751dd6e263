// End-to-end tests of the pipeline on the simulated device with real suite problems, and of the
// simulated time model's structure.
#include <gtest/gtest.h>

#include "dsl/parser.h"
#include "eval/evaluate.h"
#include "eval/reference_cache.h"
#include "eval/sim_model.h"
#include "eval_fixture.h"
#include "sol/device.h"
#include "store/store.h"

namespace kforge::eval {
namespace {

using testing::find_gate;
using testing::request_for;

std::unique_ptr<Device> sim() {
    auto d = make_sim_device("h200");
    EXPECT_TRUE(d.ok());
    return std::move(*d);
}

TEST(SimEval, RowSumPassesEveryGateAndSaysSimulated) {
    auto device = sim();
    EXPECT_TRUE(device->info().simulated);
    EXPECT_NE(device->info().name.find("simulated"), std::string::npos);
    EvalReport r = evaluate(*device, request_for("row_sum_f32"));
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_TRUE(r.simulated);
    // The quick tier screens: small-shape correctness, then timing; the rest is the full tier's.
    for (const char* g : {"static", "compile", "correctness_small", "timing", "sol_gaming"})
        EXPECT_NE(find_gate(r, g), nullptr) << g;
    for (const char* g : {"correctness_full", "audit", "full_shape"})
        EXPECT_EQ(find_gate(r, g), nullptr) << g;
    EXPECT_EQ(r.stats.count, 20);
    EXPECT_GT(r.stats.iqr_ns, 0);  // the model's pseudo-noise
    EXPECT_GT(r.flops, 0);
    EXPECT_GT(r.bytes, 1e9);
    // Every gate's evidence carries its wall time; the report the total.
    double sum = 0;
    for (const GateOutcome& g : r.gates) {
        EXPECT_TRUE(g.evidence.contains("wall_ms")) << g.gate;
        EXPECT_GE(g.wall_ms, 0) << g.gate;
        sum += g.wall_ms;
    }
    EXPECT_GT(r.wall_ms, 0);
    EXPECT_GE(r.wall_ms + 1e-6, sum);
    auto j = to_json(r);
    EXPECT_TRUE(j.contains("wall_ms"));
    EXPECT_TRUE(j["gates"][0]["evidence"].contains("wall_ms"));
    EXPECT_NE(j.dump().find("\"simulated\":true"), std::string::npos);
}

TEST(SimEval, FullTierChecksTheLargestFeasibleShape) {
    auto device = sim();
    EvalReport r = evaluate(*device, request_for("row_sum_f32", EvalTier::kFull));
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    for (const char* g : {"correctness_small", "correctness_full", "audit", "full_shape"})
        EXPECT_NE(find_gate(r, g), nullptr) << g;
    // The full shape is too large for the CPU reference: the evidence says where it checked.
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_NE(full->evidence.value("note", "").find("largest CPU-feasible shape"),
              std::string::npos);
}

TEST(SimEval, ReferencesAreSharedThroughTheCache) {
    auto device = sim();
    ReferenceCache cache;
    EvalRequest req = request_for("row_sum_f32");
    EvalReport first = evaluate(*device, req, &cache);
    ASSERT_EQ(first.status, EvalStatus::kPassed) << first.message;
    int64_t computed = cache.stats().reference_misses;
    EXPECT_EQ(computed, 2);  // two small-shape rounds
    EvalReport second = evaluate(*device, req, &cache);
    ASSERT_EQ(second.status, EvalStatus::kPassed) << second.message;
    EXPECT_EQ(cache.stats().reference_misses, computed);  // nothing recomputed
    EXPECT_EQ(cache.stats().reference_hits, 2);
    const GateOutcome* small = find_gate(second, "correctness_small");
    ASSERT_NE(small, nullptr);
    EXPECT_EQ(small->evidence["rounds"][0].value("reference", ""), "cached");
}

TEST(SimEval, FullTierReusesTheQuickTiersSmallShapeCorrectnessFromTheStore) {
    auto store = open_store(":memory:");
    ASSERT_TRUE(store.ok());
    auto device = sim();
    EvalRequest req = request_for("row_sum_f32");
    req.store = &*store;
    ASSERT_EQ(evaluate(*device, req).status, EvalStatus::kPassed);
    req.tier = EvalTier::kFull;
    EvalReport full = evaluate(*device, req);
    ASSERT_EQ(full.status, EvalStatus::kPassed) << full.message;
    const GateOutcome* small = find_gate(full, "correctness_small");
    ASSERT_NE(small, nullptr);
    EXPECT_TRUE(small->evidence.contains("reused")) << small->evidence.dump();
    EXPECT_NE(find_gate(full, "correctness_full"), nullptr);  // never reused from quick
    // a quick evaluation with other seeds: nothing to reuse
    auto fresh = open_store(":memory:");
    ASSERT_TRUE(fresh.ok());
    req.store = &*fresh;
    req.tier = EvalTier::kQuick;
    ASSERT_EQ(evaluate(*device, req).status, EvalStatus::kPassed);
    req.tier = EvalTier::kFull;
    req.seed = 2;
    EvalReport other = evaluate(*device, req);
    ASSERT_EQ(other.status, EvalStatus::kPassed) << other.message;
    EXPECT_FALSE(other.cached);
    EXPECT_FALSE(find_gate(other, "correctness_small")->evidence.contains("reused"));
}

TEST(SimEval, ReportSurvivesItsJsonForm) {
    auto device = sim();
    EvalReport r = evaluate(*device, request_for("row_sum_f32"));
    auto back = report_from_json(to_json(r, true));
    ASSERT_TRUE(back.ok()) << back.error().to_string();
    EXPECT_EQ(back->status, r.status);
    EXPECT_EQ(back->gates.size(), r.gates.size());
    EXPECT_EQ(back->samples.size(), r.samples.size());
    EXPECT_DOUBLE_EQ(back->stats.median_ns, r.stats.median_ns);
    EXPECT_DOUBLE_EQ(back->gates[2].wall_ms, r.gates[2].wall_ms);
    EXPECT_EQ(back->plan_json, r.plan_json);
    EXPECT_EQ(back->device.name, r.device.name);
    EXPECT_FALSE(report_from_json(nlohmann::json::array()).ok());
    EXPECT_FALSE(report_from_json({{"status", "bogus"}}).ok());
}

TEST(SimEval, GemmBf16PassesFullTier) {
    auto device = sim();
    EvalReport r = evaluate(*device, request_for("gemm_bf16_4096", EvalTier::kFull));
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_EQ(full->evidence["rounds"].size(), 5u);
    EXPECT_EQ(r.stats.count, 100);
}

TEST(SimEval, StaticTierStopsAfterTheChecker) {
    auto device = sim();
    EvalReport r = evaluate(*device, request_for("row_sum_f32", EvalTier::kStatic));
    EXPECT_EQ(r.status, EvalStatus::kPassed);
    EXPECT_EQ(r.gates.size(), 1u);
}

TEST(SimEval, ProgramForAnotherProblemIsInvalid) {
    auto device = sim();
    EvalRequest req = request_for("row_sum_f32");
    req.problem = testing::suite_problem("gemm_bf16_4096");
    EvalReport r = evaluate(*device, req);
    EXPECT_EQ(r.status, EvalStatus::kInvalidProgram);
    EXPECT_FALSE(r.gates.back().passed);
}

TEST(SimEval, SmallShapeKeepsDivisibility) {
    Problem p = testing::suite_problem("gemm_bf16_4096");
    std::string text = testing::read_text(std::string(KFORGE_TEST_DATA_DIR) +
                                          "/data/gemm_bf16_4096.kf");
    auto small = small_shape(p, text, "h200", kSmallShapeMaxFlops);
    ASSERT_TRUE(small.ok()) << small.error().to_string();
    for (const auto& [name, v] : small->dims) {
        EXPECT_LE(v, 256) << name;
        EXPECT_EQ(v % 128, 0) << name;  // the program's 128x128 tile
    }
    auto check = check_shape(p, *small, text, "h200");
    ASSERT_TRUE(check.ok());
    EXPECT_NE(check->dims, small->dims);
    EXPECT_NE(check->dims, p.dims);
}

TEST(SimEval, StoreRecordsAndTheCacheAnswersTheSecondTime) {
    auto store = open_store(":memory:");
    ASSERT_TRUE(store.ok());
    auto device = sim();
    EvalRequest req = request_for("row_sum_f32");
    req.store = &*store;
    EvalReport first = evaluate(*device, req);
    ASSERT_EQ(first.status, EvalStatus::kPassed) << first.message;
    ASSERT_TRUE(first.evaluation_id) << first.store_error;
    EXPECT_FALSE(first.cached);
    auto rec = store->get_evaluation(*first.evaluation_id);
    ASSERT_TRUE(rec.ok());
    EXPECT_EQ(rec->measurements.size(), 20u);
    EXPECT_EQ(rec->status, EvalStatus::kPassed);
    EvalReport second = evaluate(*device, req);
    EXPECT_TRUE(second.cached);
    EXPECT_EQ(second.status, EvalStatus::kPassed);
    EXPECT_DOUBLE_EQ(second.stats.median_ns, first.stats.median_ns);
}

TEST(SimModel, TileQuantizationAndStagesShowInTheModel) {
    Problem p = testing::suite_problem("gemm_bf16_4096");
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    Ceilings c = effective_ceilings(*spec, std::nullopt);
    auto time_of = [&](const char* knobs) {
        std::string text = std::string("program g for \"gemm_bf16_4096\"\nkernel k0 = gemm(A[M,K], "
                                       "B[K,N]) ") + knobs + " { cast bf16; store C[M,N] }\n";
        auto prog = dsl::parse_program(text, "<t>");
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        auto e = model_time(p, *prog, c, spec->sm_count);
        EXPECT_TRUE(e.ok());
        return e->time_ns;
    };
    double good = time_of("tile 128x128x64 stages 4 schedule cooperative");
    EXPECT_LT(good, time_of("tile 128x128x64 stages 2 schedule cooperative"));
    EXPECT_LT(good, time_of("tile 64x64x64 stages 4 schedule cooperative"));
    EXPECT_GT(good, 1.374e11 / c.peak(ComputeUnit::kBf16Tensor) * 1e9);  // never beats the peak
}

// conv2d kernels: the implicit GEMM's tiles and stages show as a gemm's, tf32x3 costs more
// than tf32, the staging and epilogue launches add their DRAM traffic, and a kernel whose
// operands no conv2d op reads is an error.
TEST(SimModel, Conv2dKernelsAreModelledAsStagedImplicitGemms) {
    auto p = parse_problem(R"({"name": "conv", "dims": {"N": 16, "C": 64, "H": 64, "W": 64,
        "K": 128, "R": 3, "S": 3},
        "inputs": {"x": {"shape": ["N", "C", "H", "W"], "dtype": "f32"},
                   "w": {"shape": ["K", "C", "R", "S"], "dtype": "f32", "param": true},
                   "b": {"shape": ["K"], "dtype": "f32", "param": true}},
        "graph": [{"op": "conv2d", "inputs": ["x", "w", "b"], "output": "h", "padding": 1,
                   "out_dims": ["P", "Q"]},
                  {"op": "relu", "inputs": ["h"], "output": "y"}],
        "outputs": ["y"], "precision": {"policy": "tf32"}})", "conv");
    ASSERT_TRUE(p.ok()) << p.error().to_string();
    auto spec = find_device("h200");
    ASSERT_TRUE(spec.ok());
    Ceilings c = effective_ceilings(*spec, std::nullopt);
    auto estimate = [&](const std::string& head, const char* knobs) {
        std::string text = "program g for \"conv\"\nkernel k0 = conv2d(" + head + ") " + knobs +
                           " { add b[K]; relu; store y[N,K,P,Q] }\n";
        auto prog = dsl::parse_program(text, "<t>");
        EXPECT_TRUE(prog.ok()) << (prog.ok() ? "" : prog.error().to_string());
        return model_time(*p, *prog, c, spec->sm_count);
    };
    const std::string head = "x[N,C,H,W], w[K,C,R,S]";
    auto time_of = [&](const char* knobs) {
        auto e = estimate(head, knobs);
        EXPECT_TRUE(e.ok()) << (e.ok() ? "" : e.error().to_string());
        return e.ok() ? e->time_ns : 0.0;
    };
    const double good = time_of("tile 128x64x32 stages 4 math tf32");
    EXPECT_LT(good, time_of("tile 128x64x32 stages 2 math tf32"));
    EXPECT_LT(good, time_of("tile 128x64x32 stages 4 math tf32x3"));
    const double flops = 2.0 * 16 * 64 * 64 * 128 * 64 * 9;  // C = 64 needs no channel padding
    EXPECT_GT(good, flops / c.peak(ComputeUnit::kTf32Tensor) * 1e9);
    auto e = estimate(head, "tile 128x64x32 stages 4 math tf32");
    ASSERT_TRUE(e.ok());
    ASSERT_EQ(e->kernels.size(), 1u);
    EXPECT_DOUBLE_EQ(e->kernels[0].flops, flops);
    // x and w read and written staged, the f32 workspace written and read, y written, b read
    const double x = 16.0 * 64 * 64 * 64 * 4, w = 128.0 * 64 * 9 * 4, ys = 16.0 * 64 * 64 * 128 * 4;
    EXPECT_DOUBLE_EQ(e->kernels[0].bytes, 2 * x + 2 * w + (x + w + ys) + ys + 128 * 4 + ys);
    EXPECT_GT(e->time_ns, e->kernels[0].bytes / c.dram_bytes_per_s * 1e9);

    auto wrong = estimate("w[K,C,R,S], x[N,C,H,W]", "tile 128x64x32 stages 4 math tf32");
    ASSERT_FALSE(wrong.ok());
    EXPECT_NE(wrong.error().message.find("no conv2d op of the problem reads w and x"),
              std::string::npos) << wrong.error().message;
}

}  // namespace
}  // namespace kforge::eval
