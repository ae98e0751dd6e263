// The launch mode of a candidate, chosen by measurement (issue 26): a program of several
// launches is timed a second time with its sequence as one CUDA graph (TimingOptions::use_graph,
// the same warm-up, iterations and L2 flush as the stream samples) and the graph is chosen only
// when its median is lower. The timing gate records both medians and the choice (evidence
// "launch", "launch_mode"); the export writes the choice into plan.json, where the runtime reads
// it (runtime/kforge_runtime.h). A graph that cannot be captured or timed is a note, and the
// stream stays chosen; a lost context is reported as such.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/launch_plan.h"
#include "device/device.h"

namespace kforge::eval {

struct LaunchModeTiming {
    codegen::LaunchMode mode = codegen::LaunchMode::kStream;
    double stream_median_ns = 0;
    double graph_median_ns = 0;             // 0: not timed (see note)
    std::vector<TimingSample> graph_samples;
    std::string note;                       // why the graph was not timed
    bool context_lost = false;              // the graph timing lost the context
};

// Times the loaded candidate as a graph with `options` and compares it with `stream_samples`
// (the same candidate's samples, just taken on the stream).
LaunchModeTiming time_launch_modes(Device& device, TimingOptions options,
                                   const std::vector<TimingSample>& stream_samples);

nlohmann::ordered_json to_json(const LaunchModeTiming& t);

}  // namespace kforge::eval
