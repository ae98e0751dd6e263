// Names of the bottleneck classes and the text and JSON forms of a diagnosis
// (diagnosis/diagnosis.h).
#include "diagnosis/diagnosis.h"

#include <algorithm>
#include <array>
#include <utility>

namespace kforge {
namespace {

constexpr std::array<std::pair<Bottleneck, std::string_view>, 10> kNames{{
    {Bottleneck::kDramBound, "dram_bound"},
    {Bottleneck::kL2Bound, "l2_bound"},
    {Bottleneck::kTensorComputeBound, "tensor_compute_bound"},
    {Bottleneck::kSimtComputeBound, "simt_compute_bound"},
    {Bottleneck::kLatencyBoundLowOccupancy, "latency_bound_low_occupancy"},
    {Bottleneck::kLaunchTailBound, "launch_tail_bound"},
    {Bottleneck::kSharedMemoryBound, "shared_memory_bound"},
    {Bottleneck::kSpillBound, "spill_bound"},
    {Bottleneck::kUncoalescedMemory, "uncoalesced_memory"},
    {Bottleneck::kUnknown, "unknown"},
}};

}  // namespace

std::string_view to_string(Bottleneck b) {
    for (const auto& [v, n] : kNames)
        if (v == b) return n;
    return "unknown";
}

std::optional<Bottleneck> bottleneck_from_string(std::string_view s) {
    for (const auto& [v, n] : kNames)
        if (n == s) return v;
    return std::nullopt;
}

bool Diagnosis::has(Bottleneck b) const {
    return std::any_of(kernels.begin(), kernels.end(),
                       [b](const KernelDiagnosis& k) { return k.bottleneck == b; });
}

std::vector<std::string> move_lines(const KernelDiagnosis& d) {
    if (d.stop)
        return {"stop: within " + std::to_string(static_cast<int>(kNearSolFraction * 100)) +
                "% of SOL on the limiting unit"};
    std::vector<std::string> out;
    for (const DirectedMove& m : d.moves) out.push_back(move_text(m));
    return out;
}

std::string diagnosis_text(const std::vector<KernelDiagnosis>& kernels) {
    std::string out;
    for (const KernelDiagnosis& d : kernels) {
        out += d.summary;
        if (!d.from_profile) out += " [ptxas + SOL only, no profiler]";
        const std::vector<std::string> moves = move_lines(d);
        if (!moves.empty()) {
            out += " -> moves: ";
            for (size_t i = 0; i < moves.size(); ++i) out += (i ? "; " : "") + moves[i];
        }
        out += "\n";
    }
    return out;
}

std::string diagnosis_text(const Diagnosis& d) {
    std::string out = diagnosis_text(d.kernels);
    if (!d.ptxas_summary.empty())
        out += (out.empty() || out.back() == '\n' ? "" : "\n") + d.ptxas_summary;
    return out;
}

nlohmann::ordered_json to_json(const KernelDiagnosis& d) {
    nlohmann::ordered_json j;
    j["kernel"] = d.kernel;
    j["bottleneck"] = std::string(to_string(d.bottleneck));
    j["source"] = d.from_profile ? "ncu" : "ptxas+sol";
    j["evidence"] = nlohmann::ordered_json::array();
    for (const BottleneckEvidence& e : d.evidence)
        j["evidence"].push_back({{"metric", e.metric}, {"value", e.value}, {"op", e.op},
                                 {"threshold", e.threshold}, {"note", e.note}});
    j["moves"] = move_lines(d);
    j["summary"] = d.summary;
    return j;
}

}  // namespace kforge
