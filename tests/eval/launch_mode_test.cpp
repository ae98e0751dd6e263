// Unit: the launch mode chosen by measurement (eval/launch_mode.h). The CUDA device cannot run
// here, so a scripted device (a labelled test double: time() hands out given samples per mode
// and records what it was asked) stands in for it; the choice logic is what is tested.
#include <gtest/gtest.h>

#include "eval/launch_mode.h"

namespace kforge::eval {
namespace {

class ScriptedTimingDevice final : public Device {
public:
    std::vector<double> graph_ns;
    TimingResult graph_failure;  // used when graph_ns is empty
    std::vector<TimingOptions> asked;

    DeviceInfo info() const override { return {}; }
    Status load(const Candidate&) override { return Ok{}; }
    using Device::run;
    RunResult run(const TensorData&, const RunOptions&) override { return {}; }
    TimingResult time(const TimingOptions& options) override {
        asked.push_back(options);
        if (graph_ns.empty()) return graph_failure;
        TimingResult t;
        for (double ns : graph_ns) t.samples.push_back(TimingSample{ns});
        return t;
    }
    void unload() override {}
    int64_t memory_used_bytes() const override { return 0; }
};

std::vector<TimingSample> samples(std::initializer_list<double> ns) {
    std::vector<TimingSample> out;
    for (double v : ns) out.push_back(TimingSample{v});
    return out;
}

TEST(LaunchMode, TheGraphIsChosenOnlyWhenItsMedianIsLower) {
    ScriptedTimingDevice d;
    d.graph_ns = {80, 82, 81};
    TimingOptions o;
    o.iterations = 3;
    o.per_kernel = true;
    o.audit_iteration = 1;
    LaunchModeTiming t = time_launch_modes(d, o, samples({100, 90, 95}));
    EXPECT_EQ(t.mode, codegen::LaunchMode::kGraph);
    EXPECT_EQ(t.stream_median_ns, 95);
    EXPECT_EQ(t.graph_median_ns, 81);
    ASSERT_EQ(d.asked.size(), 1u);
    EXPECT_TRUE(d.asked[0].use_graph);
    EXPECT_FALSE(d.asked[0].per_kernel);
    EXPECT_EQ(d.asked[0].iterations, 3);  // the stream samples' protocol
    EXPECT_EQ(to_json(t)["launch_mode"], "graph");

    d.graph_ns = {95, 96, 97};  // a tie or worse keeps the stream
    t = time_launch_modes(d, o, samples({100, 90, 95}));
    EXPECT_EQ(t.mode, codegen::LaunchMode::kStream);
    EXPECT_EQ(to_json(t)["graph_median_ns"], 96);
}

TEST(LaunchMode, AGraphThatCannotBeTimedKeepsTheStreamWithItsReason) {
    ScriptedTimingDevice d;
    d.graph_failure.status = EvalStatus::kLaunchFailed;
    d.graph_failure.message = "graph capture: CUDA_ERROR_STREAM_CAPTURE_UNSUPPORTED";
    LaunchModeTiming t = time_launch_modes(d, TimingOptions{}, samples({10, 11}));
    EXPECT_EQ(t.mode, codegen::LaunchMode::kStream);
    EXPECT_FALSE(t.context_lost);
    EXPECT_NE(t.note.find("STREAM_CAPTURE_UNSUPPORTED"), std::string::npos);
    EXPECT_FALSE(to_json(t).contains("graph_median_ns"));

    d.graph_failure.context_lost = true;  // a fault, not a capture problem: the caller fails
    EXPECT_TRUE(time_launch_modes(d, TimingOptions{}, samples({10})).context_lost);
}

}  // namespace
}  // namespace kforge::eval
