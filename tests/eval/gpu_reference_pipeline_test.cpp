// How the pipeline uses a device's reference (eval/evaluate.h, correctness_full), device-free:
// the simulated device wrapped so that it claims a GPU reference that works (answered by the
// CPU interpreter), fails, or fails and loses the CUDA context.
#include <gtest/gtest.h>

#include "eval/evaluate.h"
#include "eval/reference_cache.h"
#include "eval_fixture.h"
#include "problem/interpret.h"
#include "reference/gpu_reference.h"

namespace kforge::eval {
namespace {

using testing::find_gate;
using testing::request_for;

enum class ReferenceMode { kInterpreter, kFail, kLoseContext };

class ReferenceSim final : public Device {
public:
    explicit ReferenceSim(ReferenceMode mode) : mode_(mode) {
        auto d = make_sim_device("h200");
        EXPECT_TRUE(d.ok());
        sim_ = std::move(*d);
    }
    DeviceInfo info() const override { return sim_->info(); }
    Status load(const Candidate& c) override { return sim_->load(c); }
    using Device::run;
    RunResult run(const TensorData& inputs, const RunOptions& o) override {
        return sim_->run(inputs, o);
    }
    TimingResult time(const TimingOptions& o) override { return sim_->time(o); }
    void unload() override { sim_->unload(); }
    int64_t memory_used_bytes() const override { return 0; }
    std::string_view reference_kind() const override { return kGpuReferenceKind; }
    ReferenceResult reference(const Problem& shape, const TensorData& inputs) override {
        ++calls;
        dims_seen.push_back(shapes_key(shape));
        ReferenceResult r;
        if (mode_ == ReferenceMode::kInterpreter) {
            auto out = interpret(shape, inputs);
            if (out) r.outputs = *out;
            else r.error = out.error().to_string();
            return r;
        }
        r.error = "NVRTC (sm_90): compile failed (injected)";
        r.context_lost = mode_ == ReferenceMode::kLoseContext;
        return r;
    }
    int calls = 0;
    std::vector<std::string> dims_seen;

private:
    ReferenceMode mode_;
    std::unique_ptr<Device> sim_;
};

// row_sum_f32 at other dims (the suite's full shape takes seconds to fill with inputs).
EvalRequest row_sum(EvalTier tier, int64_t rows, int64_t cols) {
    EvalRequest req = request_for("row_sum_f32", tier);
    auto p = rebind_dims(req.problem, {{"R", rows}, {"C", cols}});
    EXPECT_TRUE(p.ok());
    req.problem = *p;
    return req;
}

// A full shape the simulated device can interpret.
EvalRequest interpretable_row_sum(EvalTier tier) { return row_sum(tier, 2048, 1024); }

// A full shape above the CPU reference's budget (kCheckShapeMaxElements).
EvalRequest large_row_sum() { return row_sum(EvalTier::kFull, 8192, 4096); }

TEST(GpuReferencePipeline, FullTierChecksTheFullShapeAgainstTheDevicesReference) {
    ReferenceSim device(ReferenceMode::kInterpreter);
    ReferenceCache cache;
    EvalRequest req = interpretable_row_sum(EvalTier::kFull);
    EvalReport r = evaluate(device, req, &cache);
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    const GateOutcome* small = find_gate(r, "correctness_small");
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(small, nullptr);
    ASSERT_NE(full, nullptr);
    // the small gate keeps the CPU interpreter; the full gate runs at the real full shape
    EXPECT_EQ(small->evidence.value("reference_kind", ""), kCpuReferenceKind);
    EXPECT_EQ(full->evidence.value("reference_kind", ""), kGpuReferenceKind);
    EXPECT_EQ(full->evidence.value("dims", ""), r.shapes_key);
    EXPECT_FALSE(full->evidence.contains("note"));
    EXPECT_EQ(full->evidence["rounds"].size(), 5u);
    EXPECT_EQ(full->evidence["rounds"][0].value("reference_kind", ""), kGpuReferenceKind);
    EXPECT_NE(full->message.find("GPU fp64 reference"), std::string::npos) << full->message;
    EXPECT_NE(find_gate(r, "audit"), nullptr);
    EXPECT_EQ(find_gate(r, "full_shape"), nullptr);  // the full shape was checked itself
    // the CPU could check the full shape itself: no hidden second shape in between
    EXPECT_EQ(find_gate(r, "correctness_hidden"), nullptr);
    EXPECT_EQ(device.calls, 5);
    for (const std::string& dims : device.dims_seen) EXPECT_EQ(dims, r.shapes_key);
    // computed once per input set: a second candidate reuses the five references
    EvalReport again = evaluate(device, req, &cache);
    ASSERT_EQ(again.status, EvalStatus::kPassed) << again.message;
    EXPECT_EQ(device.calls, 5);
    EXPECT_EQ(find_gate(again, "correctness_full")->evidence["rounds"][0].value("reference", ""),
              "cached");
}

TEST(GpuReferencePipeline, TheHiddenSecondShapeIsStillCheckedAgainstTheInterpreter) {
    ReferenceSim device(ReferenceMode::kInterpreter);
    EvalReport r = evaluate(device, row_sum(EvalTier::kFull, 5000, 4096));  // above the CPU budget
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    std::vector<std::string> order;
    for (const GateOutcome& g : r.gates) order.push_back(g.gate);
    EXPECT_EQ(order, (std::vector<std::string>{"static", "compile", "correctness_small",
                                               "correctness_hidden", "correctness_full", "audit",
                                               "timing", "sol_gaming"}));
    const GateOutcome* hidden = find_gate(r, "correctness_hidden");
    const GateOutcome* small = find_gate(r, "correctness_small");
    ASSERT_NE(hidden, nullptr);
    EXPECT_EQ(hidden->evidence.value("reference_kind", ""), kCpuReferenceKind);
    EXPECT_EQ(hidden->evidence["rounds"].size(), 3u);
    std::string dims = hidden->evidence.value("dims", "");
    EXPECT_NE(dims, r.shapes_key);
    EXPECT_NE(dims, small->evidence.value("dims", ""));
    EXPECT_EQ(find_gate(r, "correctness_full")->evidence.value("dims", ""), r.shapes_key);
    EXPECT_EQ(device.calls, 5);
}

TEST(GpuReferencePipeline, QuickTierNeverAsksTheDevice) {
    ReferenceSim device(ReferenceMode::kInterpreter);
    EvalReport r = evaluate(device, interpretable_row_sum(EvalTier::kQuick));
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_EQ(device.calls, 0);
    EXPECT_EQ(find_gate(r, "correctness_small")->evidence.value("reference_kind", ""),
              kCpuReferenceKind);
}

TEST(GpuReferencePipeline, AFailedReferenceFallsBackToTheCpuCheckShape) {
    ReferenceSim device(ReferenceMode::kFail);
    EvalReport r = evaluate(device, large_row_sum());
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    EXPECT_EQ(device.calls, 1);  // tried once, then never again in this evaluation
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_TRUE(full->passed);
    EXPECT_EQ(full->evidence.value("reference_kind", ""), kCpuReferenceKind);
    EXPECT_NE(full->evidence.value("gpu_reference_error", "").find("injected"), std::string::npos)
        << full->evidence.dump();
    EXPECT_NE(full->evidence.value("dims", ""), r.shapes_key);
    EXPECT_NE(full->evidence.value("note", "").find("the GPU reference failed"),
              std::string::npos);
    int full_gates = 0;
    for (const GateOutcome& g : r.gates) full_gates += g.gate == "correctness_full";
    EXPECT_EQ(full_gates, 1);  // the failed attempt is evidence, not a second gate
    EXPECT_NE(find_gate(r, "full_shape"), nullptr);
}

TEST(GpuReferencePipeline, AFailedReferenceAtAnInterpretableFullShapeFallsBackToTheCpuThere) {
    ReferenceSim device(ReferenceMode::kFail);
    EvalReport r = evaluate(device, interpretable_row_sum(EvalTier::kFull));
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_EQ(full->evidence.value("dims", ""), r.shapes_key);
    EXPECT_EQ(full->evidence.value("reference_kind", ""), kCpuReferenceKind);
    EXPECT_TRUE(full->evidence.contains("gpu_reference_error"));
}

TEST(GpuReferencePipeline, AReferenceThatLosesTheContextIsAnEnvironmentError) {
    ReferenceSim device(ReferenceMode::kLoseContext);
    EvalReport r = evaluate(device, interpretable_row_sum(EvalTier::kFull));
    EXPECT_EQ(r.status, EvalStatus::kNotSupported);
    EXPECT_TRUE(r.environment_error);
    EXPECT_TRUE(r.context_lost);
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_FALSE(full->passed);
    EXPECT_NE(full->message.find("the GPU reference failed"), std::string::npos) << full->message;
    EXPECT_EQ(find_gate(r, "timing"), nullptr);
}

TEST(GpuReferencePipeline, TheSimulatedDeviceKeepsTheCpuCheckShapeAndSaysWhy) {
    auto device = make_sim_device("h200");
    ASSERT_TRUE(device.ok());
    EXPECT_TRUE((*device)->reference_kind().empty());
    EvalReport r = evaluate(**device, large_row_sum());
    ASSERT_EQ(r.status, EvalStatus::kPassed) << r.message;
    const GateOutcome* full = find_gate(r, "correctness_full");
    ASSERT_NE(full, nullptr);
    EXPECT_EQ(full->evidence.value("reference_kind", ""), kCpuReferenceKind);
    EXPECT_NE(full->evidence.value("note", "").find("the simulated device has no GPU reference"),
              std::string::npos);
}

}  // namespace
}  // namespace kforge::eval
