// Stream or graph launch, by measurement (eval/launch_mode.h).
#include "eval/launch_mode.h"

#include "common/stats.h"

namespace kforge::eval {
namespace {

double median_ns(const std::vector<TimingSample>& samples) {
    std::vector<double> times;
    for (const TimingSample& s : samples) times.push_back(s.time_ns);
    return times.empty() ? 0.0 : median(std::move(times));
}

}  // namespace

LaunchModeTiming time_launch_modes(Device& device, TimingOptions options,
                                   const std::vector<TimingSample>& stream_samples) {
    LaunchModeTiming t;
    t.stream_median_ns = median_ns(stream_samples);
    options.use_graph = true;
    options.per_kernel = false;
    options.audit_iteration = -1;
    TimingResult g = device.time(options);
    if (g.status != EvalStatus::kPassed || g.samples.empty()) {
        t.context_lost = g.context_lost;
        t.note = "graph not timed: " + (g.message.empty() ? std::string("no samples") : g.message);
        return t;
    }
    t.graph_samples = std::move(g.samples);
    t.graph_median_ns = median_ns(t.graph_samples);
    if (t.graph_median_ns > 0 && t.graph_median_ns < t.stream_median_ns)
        t.mode = codegen::LaunchMode::kGraph;
    return t;
}

nlohmann::ordered_json to_json(const LaunchModeTiming& t) {
    nlohmann::ordered_json j{{"launch_mode", std::string(codegen::to_string(t.mode))},
                             {"stream_median_ns", t.stream_median_ns}};
    if (t.graph_median_ns > 0) {
        j["graph_median_ns"] = t.graph_median_ns;
        j["graph_samples"] = t.graph_samples.size();
    }
    if (!t.note.empty()) j["note"] = t.note;
    return j;
}

}  // namespace kforge::eval
