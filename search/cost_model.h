// The cheapest screening tier of the search: the analytic time model of perfmodel/sim_model.h,
// refitted to the measurements of the current run. Each kernel kind (gemm, rowwise, map) has a
// scale factor s_kind; a program's estimate is sum over kernels of s_kind * t_model(kernel).
// Fit: every measured program is attributed to the kind that dominates its model time, and
// log s_kind is the least-squares solution of log(measured) = log s_kind + log(model), i.e. the
// mean of log(measured / model) over that kind's observations (1 where none). Candidates are
// ranked by this estimate before anything is compiled.
#pragma once

#include <map>
#include <vector>

#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"
#include "sol/calibration.h"

namespace kforge::search {

struct CostObservation {
    dsl::KernelKind kind = dsl::KernelKind::kMap;  // dominant kind of the program
    double model_ns = 0;
    double measured_ns = 0;
};

class CostModel {
public:
    CostModel(Problem problem, Ceilings ceilings, int sm_count);

    // The refitted estimate of `program` (checked against the problem). Error when the model
    // cannot time it.
    Expected<double> estimate_ns(const dsl::Program& program) const;
    // Adds a measurement of `program` and refits.
    Status observe(const dsl::Program& program, double measured_ns);
    double scale(dsl::KernelKind kind) const;
    // Per kernel of `program`, in its order: the refitted estimate (the kernel's launch overhead
    // and its share of the program's floor included), and the kernel's own roofline bound - its
    // modelled FLOPs at the peak of the unit its kind runs on (a gemm, conv2d or attention: the
    // policy's matrix unit for its operands; else fp32 SIMT), its bytes at DRAM bandwidth, plus
    // one launch overhead (perfmodel/sim_model.h): the floor its knobs can reach.
    struct KernelEstimate {
        double time_ns = 0;
        double sol_ns = 0;
    };
    Expected<std::vector<KernelEstimate>> kernel_estimates(const dsl::Program& program) const;
    const std::vector<CostObservation>& observations() const { return observations_; }

private:
    Problem problem_;
    Ceilings ceilings_;
    int sm_count_ = 0;
    std::vector<CostObservation> observations_;
    std::map<dsl::KernelKind, double> scale_;
};

// The least-squares scale factors on log time of `observations`, per kind.
std::map<dsl::KernelKind, double> fit_scales(const std::vector<CostObservation>& observations);

}  // namespace kforge::search
