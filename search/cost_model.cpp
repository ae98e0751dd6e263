#include "search/cost_model.h"

#include <algorithm>
#include <cmath>

#include "perfmodel/sim_model.h"

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
