// End-to-end tests of the pipeline on the simulated device with real suite problems, and of the
// simulated time model's structure.
#include <gtest/gtest.h>

#include "dsl/parser.h"
#include "eval/evaluate.h"
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
    for (const char* g : {"static", "compile", "correctness_small", "correctness_full", "audit",
                          "timing", "sol_gaming"})
        EXPECT_NE(find_gate(r, g), nullptr) << g;
    EXPECT_EQ(r.stats.count, 20);
    EXPECT_GT(r.stats.iqr_ns, 0);  // the model's pseudo-noise
    EXPECT_GT(r.flops, 0);
    EXPECT_GT(r.bytes, 1e9);
    // The full shape is too large for the CPU reference: the evidence says where it checked.
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_NE(full->evidence.value("note", "").find("largest CPU-feasible shape"),
              std::string::npos);
    EXPECT_NE(to_json(r).dump().find("\"simulated\":true"), std::string::npos);
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

}  // namespace
}  // namespace kforge::eval
