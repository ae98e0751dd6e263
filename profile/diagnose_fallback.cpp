// Diagnosis without a profiler: ptxas resources, launch shape and the roofline position of the
// measured time (profile/diagnose.h).
#include "profile/diagnose.h"

#include <algorithm>
#include <cstdio>

#include "sol/sol_share.h"

namespace kforge::profile {
namespace {

// Hopper SM limits (sm_90: 64K registers, 228 KB shared memory, 64 warps, 32 blocks).
constexpr double kRegistersPerSm = 65536, kSmemPerSm = 233472, kWarpsPerSm = 64, kBlocksPerSm = 32;

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

}  // namespace

KernelDiagnosis diagnose_fallback(const FallbackInput& in, const DiagnoseContext& ctx) {
    KernelDiagnosis d;
    d.kernel = in.resources.name;
    d.from_profile = false;
    const compile::KernelResources& r = in.resources;
    const double sms = ctx.sm_count > 0 ? ctx.sm_count : 132;
    double occupancy = -1;
    if (in.block_threads > 0) {
        double warps = static_cast<double>((in.block_threads + 31) / 32);
        double blocks = std::min(kBlocksPerSm, std::floor(kWarpsPerSm / warps));
        if (r.registers > 0)
            blocks = std::min(blocks, std::floor(kRegistersPerSm / (r.registers * warps * 32)));
        double smem = static_cast<double>(r.smem_bytes + in.dynamic_smem_bytes);
        if (smem > 0) blocks = std::min(blocks, std::floor(kSmemPerSm / smem));
        occupancy = 100.0 * blocks * warps / kWarpsPerSm;
    }
    const bool gemm = ctx.kind == dsl::KernelKind::kGemm;
    if (r.spills()) {
        d.bottleneck = Bottleneck::kSpillBound;
        d.evidence.push_back({"ptxas spill bytes (stores + loads)",
                              static_cast<double>(r.spill_stores_bytes + r.spill_loads_bytes), ">",
                              0, std::to_string(r.registers) + " registers"});
    } else if (in.grid_blocks > 0 && in.grid_blocks < sms) {
        d.bottleneck = Bottleneck::kLaunchTailBound;
        d.evidence.push_back({"grid blocks", static_cast<double>(in.grid_blocks), "<", sms,
                              "fewer blocks than SMs"});
    } else if (!gemm && occupancy >= 0 && occupancy < kLowOccupancyPct) {
        d.bottleneck = Bottleneck::kLatencyBoundLowOccupancy;
        d.evidence.push_back({"theoretical occupancy % (ptxas registers, smem, block)", occupancy,
                              "<", kLowOccupancyPct, std::to_string(r.registers) + " registers"});
    } else if (in.memory_bound_sol) {
        d.bottleneck = Bottleneck::kDramBound;
        d.evidence.push_back({"SOL bound kind", 0, "", 0, "memory: the roofline says DRAM"});
    } else {
        d.bottleneck = in.matrix_on_tensor_cores ? Bottleneck::kTensorComputeBound
                                                 : Bottleneck::kSimtComputeBound;
        d.evidence.push_back({"SOL bound kind", 0, "", 0,
                              in.matrix_on_tensor_cores ? "compute on tensor cores"
                                                        : "compute on CUDA cores (SIMT)"});
    }
    if (ctx.fraction_of_sol) {  // shown at most 1, a time under the bound flagged (sol_share.h)
        const SolShare share = sol_share_of_fraction(*ctx.fraction_of_sol);
        d.evidence.push_back({"T_sol / T", share.fraction, ">= stop at", kNearSolFraction,
                              share.under_bound ? "flagged: the measured time is under the SOL "
                                                  "bound (" + format_sol_share(share) + ")"
                                                : "roofline position of the measured time"});
    }
    if (occupancy >= 0)
        d.evidence.push_back({"theoretical occupancy %", occupancy, "", 0, "context"});
    d.kind = ctx.kind;
    MoveAdvice advice = advise_moves(d.bottleneck, ctx);
    d.moves = std::move(advice.moves);
    d.stop = advice.stop;
    const BottleneckEvidence& e = d.evidence.front();
    d.summary = d.kernel + ": " + std::string(to_string(d.bottleneck)) + " (" + e.metric + " " +
                (e.op.empty() ? std::string() : fmt(e.value)) +
                (e.note.empty() ? "" : " " + e.note) + ")";
    return d;
}

}  // namespace kforge::profile
