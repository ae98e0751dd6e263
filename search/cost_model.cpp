#include "search/cost_model.h"

#include <algorithm>
#include <cmath>

#include "perfmodel/sim_model.h"
#include "sol/bounds.h"

namespace kforge::search {

CostModel::CostModel(Problem problem, Ceilings ceilings, int sm_count)
    : problem_(std::move(problem)), ceilings_(std::move(ceilings)), sm_count_(sm_count) {}

std::map<dsl::KernelKind, double> fit_scales(const std::vector<CostObservation>& observations) {
    std::map<dsl::KernelKind, std::pair<double, int>> acc;
    for (const CostObservation& o : observations) {
        if (o.model_ns <= 0 || o.measured_ns <= 0) continue;
        auto& a = acc[o.kind];
        a.first += std::log(o.measured_ns / o.model_ns);
        a.second += 1;
    }
    std::map<dsl::KernelKind, double> out;
    for (const auto& [kind, a] : acc) out[kind] = std::exp(a.first / a.second);
    return out;
}

double CostModel::scale(dsl::KernelKind kind) const {
    auto it = scale_.find(kind);
    return it == scale_.end() ? 1.0 : it->second;
}

Expected<double> CostModel::estimate_ns(const dsl::Program& program) const {
    auto est = perfmodel::model_time(problem_, program, ceilings_, sm_count_);
    if (!est) return est.error();
    double total = 0;
    for (const perfmodel::SimKernelTime& k : est->kernels)
        total += scale(k.kind) * k.time_ns;
    // overheads are whatever the model adds beyond its kernels
    double kernels = 0;
    for (const perfmodel::SimKernelTime& k : est->kernels) kernels += k.time_ns;
    return total + std::max(0.0, est->time_ns - kernels);
}

Expected<std::vector<CostModel::KernelEstimate>> CostModel::kernel_estimates(
    const dsl::Program& program) const {
    auto est = perfmodel::model_time(problem_, program, ceilings_, sm_count_);
    if (!est) return est.error();
    std::vector<KernelEstimate> out;
    double kernels = 0;
    for (const perfmodel::SimKernelTime& k : est->kernels) kernels += k.time_ns;
    // a program priced at its floor: every kernel raised in proportion
    const double floor = kernels > 0 ? std::max(1.0, est->time_ns / kernels) : 1.0;
    for (size_t i = 0; i < est->kernels.size() && i < program.kernels.size(); ++i) {
        const perfmodel::SimKernelTime& k = est->kernels[i];
        const dsl::Kernel& pk = program.kernels[i];
        double peak = ceilings_.peak(ComputeUnit::kFp32Simt);
        if (pk.kind == dsl::KernelKind::kGemm || pk.kind == dsl::KernelKind::kConv2d ||
            pk.kind == dsl::KernelKind::kAttention) {
            const Tensor* a = pk.args.empty() ? nullptr : problem_.find_tensor(pk.args[0].name);
            if (a) peak = std::max(peak, ceilings_.peak(matrix_unit(problem_.policy, a->dtype)));
        }
        KernelEstimate e;
        e.time_ns = scale(k.kind) * k.time_ns * floor;
        const double compute_s = peak > 0 ? k.flops / peak : 0;
        const double memory_s =
            ceilings_.dram_bytes_per_s > 0 ? k.bytes / ceilings_.dram_bytes_per_s : 0;
        // ... plus one launch: no knob of a kernel takes its launch away
        e.sol_ns = std::min(e.time_ns, std::max(compute_s, memory_s) * 1e9 +
                                           perfmodel::kSimLaunchOverheadNs);
        out.push_back(e);
    }
    return out;
}

Status CostModel::observe(const dsl::Program& program, double measured_ns) {
    auto est = perfmodel::model_time(problem_, program, ceilings_, sm_count_);
    if (!est) return est.error();
    CostObservation o;
    o.model_ns = est->time_ns;
    o.measured_ns = measured_ns;
    double dominant = -1;
    for (const perfmodel::SimKernelTime& k : est->kernels)
        if (k.time_ns > dominant) dominant = k.time_ns, o.kind = k.kind;
    observations_.push_back(o);
    scale_ = fit_scales(observations_);
    return Ok{};
}

}  // namespace kforge::search
