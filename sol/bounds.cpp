#include "sol/bounds.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "sol/op_cost.h"

namespace kforge {

std::string_view to_string(BoundKind k) { return k == BoundKind::kCompute ? "compute" : "memory"; }

std::optional<BoundKind> bound_kind_from_string(std::string_view s) {
    if (s == "compute") return BoundKind::kCompute;
    if (s == "memory") return BoundKind::kMemory;
    return std::nullopt;
}

ComputeUnit matrix_unit(PrecisionPolicy policy, DType operand) {
    if (operand == DType::kF64) return ComputeUnit::kFp64Tensor;
    switch (policy) {
        case PrecisionPolicy::kFp32Strict:
            return ComputeUnit::kFp32Simt;
        case PrecisionPolicy::kTf32:
            return ComputeUnit::kTf32Tensor;
        case PrecisionPolicy::kBf16:
            return ComputeUnit::kBf16Tensor;
        case PrecisionPolicy::kFp16:
            return ComputeUnit::kFp16Tensor;
    }
    return ComputeUnit::kFp32Simt;
}

namespace {

// The unit actually used on this device: a missing unit falls back (fp64 tensor -> fp64 SIMT,
// anything else -> fp32 SIMT).
ComputeUnit available_unit(ComputeUnit u, const Ceilings& c) {
    if (c.peak(u) > 0.0) return u;
    if (u == ComputeUnit::kFp64Tensor && c.peak(ComputeUnit::kFp64Simt) > 0.0) {
        return ComputeUnit::kFp64Simt;
    }
    return ComputeUnit::kFp32Simt;
}

// Busy time per unit; units run concurrently, so compute time is the busiest unit's.
using Busy = std::map<ComputeUnit, double>;

double busiest(const Busy& busy) {
    double t = 0.0;
    for (const auto& [unit, seconds] : busy) t = std::max(t, seconds);
    return t;
}

// The name of the busiest unit, the SFU included ("fp32_simt" when nothing is busy).
std::string busiest_name(const Busy& busy, double sfu_s) {
    std::string name(to_string(ComputeUnit::kFp32Simt));
    double t = 0.0;
    for (const auto& [unit, seconds] : busy) {
        if (seconds > t) t = seconds, name = std::string(to_string(unit));
    }
    return sfu_s > t ? "sfu" : name;
}

}  // namespace

Expected<Bounds> compute_bounds(const Problem& problem, const Ceilings& ceilings,
                                const BoundsOptions& options) {
    if (!(options.gaming_factor > 0.0 && options.gaming_factor <= 1.0)) {
        return make_error("--gaming-factor",
                          "must be in (0, 1], got " + std::to_string(options.gaming_factor));
    }
    const double bw = ceilings.dram_bytes_per_s;
    const double fp32 = ceilings.peak(ComputeUnit::kFp32Simt);
    const double tf32_phys = std::max(ceilings.peak(ComputeUnit::kTf32Tensor),
                                      ceilings.physical_peak(ComputeUnit::kTf32Tensor));
    const double fp32_phys = std::max(fp32, ceilings.physical_peak(ComputeUnit::kFp32Simt));
    const double tf32 = ceilings.peak(ComputeUnit::kTf32Tensor);
    const double bw_phys = std::max(bw, ceilings.physical_dram_bytes_per_s);
    const double sfu = ceilings.sfu_ops_per_s;  // 0: unknown, no SFU term
    if (!(bw > 0.0)) return make_error(ceilings.device, "no DRAM bandwidth for this device");
    if (!(fp32 > 0.0)) return make_error(ceilings.device, "no fp32 SIMT peak for this device");

    auto work = count_work(problem);
    if (!work) return work.error();

    Bounds b;
    b.device = ceilings.device;
    b.ceilings_source = ceilings.source;
    b.arch = std::string(counted_arch(ceilings.arch));
    b.policy = options.policy.value_or(problem.policy);
    b.work = std::move(*work);

    Busy busy, busy_floor;  // whole graph, per unit
    bool first_matrix = true;
    for (size_t i = 0; i < problem.ops.size(); ++i) {
        const Op& op = problem.ops[i];
        const OpWork& ow = b.work.per_op[i];
        const Tensor* a = problem.find_tensor(op.inputs.front());  // count_work checked it
        OpBound ob;
        ob.output = ow.output;
        ob.matrix_unit = available_unit(matrix_unit(b.policy, a->dtype), ceilings);
        // fp32_strict allows 3xTF32 on f32 operands: the faster of it and SIMT
        const bool tf32x3 = b.policy == PrecisionPolicy::kFp32Strict && a->dtype == DType::kF32 &&
                            ob.matrix_unit == ComputeUnit::kFp32Simt && tf32 > 0.0 &&
                            3.0 / tf32 < 1.0 / fp32;
        if (tf32x3) ob.matrix_unit = ComputeUnit::kTf32Tensor;
        if (ow.flops_matrix > 0.0 && first_matrix) {
            b.matrix_unit = ob.matrix_unit;
            b.matrix_tf32x3 = tf32x3;
            first_matrix = false;
        }
        Busy op_busy, op_floor;
        if (ow.flops_matrix > 0.0) {
            op_busy[ob.matrix_unit] +=
                (tf32x3 ? 3.0 : 1.0) * ow.flops_matrix / ceilings.peak(ob.matrix_unit);
            ComputeUnit floor_unit = ob.matrix_unit;
            double t_floor = ow.flops_matrix / std::max(ceilings.peak(ob.matrix_unit),
                                                        ceilings.physical_peak(ob.matrix_unit));
            if (tf32x3) t_floor = 3.0 * ow.flops_matrix / tf32_phys;
            if (ob.matrix_unit == ComputeUnit::kFp32Simt && tf32_phys > 0.0 &&
                3.0 * ow.flops_matrix / tf32_phys < t_floor) {  // 3xTF32
                floor_unit = ComputeUnit::kTf32Tensor;
                t_floor = 3.0 * ow.flops_matrix / tf32_phys;
            }
            op_floor[floor_unit] += t_floor;
        }
        // SIMT: the larger of the nominal FLOPs and the SASS instructions (one instruction = one
        // FMA slot = 2 FLOPs of the fp32 peak); SFU: the MUFU instructions. The floor keeps the
        // nominal FLOPs alone (see bounds.h).
        const auto ins = count_op_instructions(problem, op, b.arch);
        const double simt_flops = std::max(ow.flops_other, ins ? 2.0 * ins->simt : 0.0);
        op_busy[ComputeUnit::kFp32Simt] += simt_flops / fp32;
        op_floor[ComputeUnit::kFp32Simt] += ow.flops_other / fp32_phys;
        ob.time_simt_s = op_busy[ComputeUnit::kFp32Simt];
        ob.time_sfu_s = ins && sfu > 0.0 ? ins->sfu / sfu : 0.0;
        if (ins) {
            b.instructions_simt += ins->simt;
            b.instructions_sfu += ins->sfu;
        }
        b.time_sfu_s += ob.time_sfu_s;
        ob.time_compute_s = std::max(busiest(op_busy), ob.time_sfu_s);
        ob.time_memory_s = ow.bytes() / bw;
        ob.time_s = std::max(ob.time_compute_s, ob.time_memory_s);
        for (const auto& [u, t] : op_busy) busy[u] += t;
        for (const auto& [u, t] : op_floor) busy_floor[u] += t;
        b.time_unfused_s += ob.time_s;
        b.per_op.push_back(std::move(ob));
    }
    b.time_simt_s = busy[ComputeUnit::kFp32Simt];
    b.time_compute_s = std::max(busiest(busy), b.time_sfu_s);
    b.compute_unit = busiest_name(busy, b.time_sfu_s);
    b.time_compute_floor_s = busiest(busy_floor);
    b.time_memory_fused_s = b.work.bytes_fused / bw;
    b.time_memory_unfused_s = b.work.bytes_unfused / bw;
    b.time_memory_floor_s = b.work.bytes_fused / bw_phys;
    b.time_fused_s = std::max(b.time_compute_s, b.time_memory_fused_s);
    b.kind = b.time_compute_s > b.time_memory_fused_s ? BoundKind::kCompute : BoundKind::kMemory;
    b.arithmetic_intensity = b.work.bytes_fused > 0.0 ? b.work.flops() / b.work.bytes_fused : 0.0;
    b.gaming_threshold_s =
        options.gaming_factor * std::max(b.time_compute_floor_s, b.time_memory_floor_s);
    return b;
}

double matrix_peak(const Bounds& bounds, const Ceilings& ceilings) {
    return ceilings.peak(bounds.matrix_unit) / (bounds.matrix_tf32x3 ? 3.0 : 1.0);
}

Expected<double> sol_score(double time_s, double time_sol_s, double time_base_s) {
    if (!(time_s > 0.0) || !(time_sol_s > 0.0) || !(time_base_s > 0.0)) {
        return make_error("sol_score", "times must be positive");
    }
    if (!(time_base_s > time_sol_s)) {
        return make_error("sol_score",
                          "baseline time must exceed the SOL time (no headroom "
                          "between them to score)");
    }
    const double denom = 1.0 + (time_s - time_sol_s) / (time_base_s - time_sol_s);
    if (!(denom > 0.0) || !std::isfinite(denom)) {
        return make_error("sol_score", "time is implausibly far below the SOL time");
    }
    return 1.0 / denom;
}

double headroom(double time_s, const Bounds& bounds) {
    return bounds.time_fused_s > 0.0 ? time_s / bounds.time_fused_s : 0.0;
}

bool below_gaming_threshold(double time_s, const Bounds& bounds) {
    return time_s < bounds.gaming_threshold_s;
}

std::string_view to_string(SolVerdict v) {
    switch (v) {
        case SolVerdict::kPlausible: return "plausible";
        case SolVerdict::kUnderBound: return "under_sol_bound";
        case SolVerdict::kBelowGamingThreshold: return "below_gaming_threshold";
    }
    return "unknown";
}

SolVerdict judge_time(double time_s, const Bounds& bounds) {
    if (below_gaming_threshold(time_s, bounds)) return SolVerdict::kBelowGamingThreshold;
    if (time_s < bounds.time_fused_s) return SolVerdict::kUnderBound;
    return SolVerdict::kPlausible;
}

}  // namespace kforge
