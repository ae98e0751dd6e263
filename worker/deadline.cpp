// The supervisor's deadline of one evaluation from the problem's expected time
// (worker/deadline.h).
#include "worker/deadline.h"

#include <algorithm>

#include "problem/work.h"
#include "sol/bounds.h"
#include "sol/calibration.h"
#include "sol/device.h"

namespace kforge::eval {
namespace {

// Conservative rates (slower than measured, so a slow CI machine is not a hang): the fp64
// interpreter on one core, and generating, copying and checking full-shape tensors.
constexpr double kInterpreterFlopsPerS = 2e7;
constexpr double kTensorBytesPerS = 2e8;
// Launches of a tier at the full shape: warm-up and timed loops, correctness rounds, audit and
// the gaming re-verification (quick 3 + 20, full 10 + 100; rounded up).
constexpr double kLaunchesQuick = 40;
constexpr double kLaunchesFull = 200;

bool runs_kernels(EvalTier tier) {
    return tier == EvalTier::kQuick || tier == EvalTier::kFull || tier == EvalTier::kProfile;
}

// Seconds of the correctness gates of `request`'s tier: each round of a gate on the CPU
// interpreter at its shape's FLOPs, on a GPU reference at its bytes.
double reference_s(const EvalRequest& request, const DeviceInfo& device) {
    if (!runs_kernels(request.tier)) return 0.0;
    if (request.prebuilt) {  // correctness at the full shape, 2 or 5 rounds
        auto work = count_work(request.problem);
        int rounds = request.tier == EvalTier::kQuick ? 2 : 5;
        return work ? rounds * std::min(work->flops(), kCheckShapeMaxFlops) /
                          kInterpreterFlopsPerS
                    : 0.0;
    }
    double s = 0;
    for (const CorrectnessGatePlan& g :
         correctness_gates(request.problem, request.program_text, device.datasheet_key,
                           request.seed, request.tier, !device.simulated)) {
        if (!g.error.empty() || g.fallback) continue;
        auto work = count_work(g.shape);
        if (!work) continue;
        s += g.rounds * (g.gpu_reference ? 4 * work->bytes_fused / kTensorBytesPerS
                                         : work->flops() / kInterpreterFlopsPerS);
    }
    return s;
}

}  // namespace

double expected_evaluation_s(const EvalRequest& request, const DeviceInfo& device) {
    double s = reference_s(request, device);
    if (device.simulated || !runs_kernels(request.tier)) return s;
    // a real device: the full-shape tensors (inputs, outputs, copies) and the launches
    auto work = count_work(request.problem);
    if (!work) return s;
    s += 4 * work->bytes_fused / kTensorBytesPerS;
    auto spec = find_device(device.datasheet_key);
    if (!spec) return s;
    auto bounds = compute_bounds(request.problem, effective_ceilings(*spec, std::nullopt));
    if (!bounds) return s;
    bool full = request.tier != EvalTier::kQuick;
    double launches = (full ? kLaunchesFull : kLaunchesQuick) *
                      (request.baseline_program_text ? 2 : 1);
    return s + launches * bounds->time_fused_s;
}

double evaluation_deadline_s(const EvalRequest& request, const DeviceInfo& device,
                             const HangPolicy& policy, std::optional<double> previous_s) {
    double expected = expected_evaluation_s(request, device);
    if (previous_s) expected = std::max(expected, *previous_s);
    const bool compiles = !device.simulated && !request.prebuilt &&
                          request.tier != EvalTier::kStatic &&
                          request.tier != EvalTier::kCostModel;
    double compile = compiles ? policy.compile_s * (request.baseline_program_text ? 2 : 1) : 0;
    return std::min(policy.cap_s, policy.floor_s + compile + policy.factor * expected);
}

double warm_deadline_s(const WarmRequest& request, const DeviceInfo& device,
                       const HangPolicy& policy) {
    EvalRequest cases;  // the evaluation whose correctness cases the warm-up builds
    cases.problem = request.problem;
    cases.program_text = request.program_text;
    cases.seed = request.seed;
    cases.tier = request.tier;
    return std::min(policy.cap_s, policy.floor_s + policy.factor * reference_s(cases, device));
}

}  // namespace kforge::eval
