// Classifier over ncu metrics (profile/diagnose.h).
#include "profile/diagnose.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace kforge::profile {
namespace {

std::string fmt(double v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g", v);
    return buf;
}

double get(const KernelProfile& k, std::string_view m) { return k.metric(m).value_or(0.0); }

// The largest stall reason (cycles per issued instruction), for context in the evidence.
std::optional<BottleneckEvidence> top_stall(const KernelProfile& k) {
    const std::string prefix = "smsp__average_warps_issue_stalled_";
    std::optional<BottleneckEvidence> best;
    for (const auto& [name, v] : k.metrics) {
        if (name.rfind(prefix, 0) != 0) continue;
        if (!best || v > best->value) {
            std::string reason = name.substr(prefix.size());
            reason = reason.substr(0, reason.find("_per_issue_active"));
            best = BottleneckEvidence{name, v, "top", 0, "largest stall reason: " + reason};
        }
    }
    return best;
}

}  // namespace

KernelDiagnosis diagnose_kernel(const KernelProfile& k, const DiagnoseContext& ctx) {
    KernelDiagnosis d;
    d.kernel = k.name;
    auto decide = [&](Bottleneck b, BottleneckEvidence e) {
        d.bottleneck = b;
        d.evidence.insert(d.evidence.begin(), std::move(e));
    };
    const double local = get(k, "l1tex__t_sectors_pipe_lsu_mem_local_op_ld.sum") +
                         get(k, "l1tex__t_sectors_pipe_lsu_mem_local_op_st.sum");
    const double global_ld = get(k, "l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum");
    const double requests = get(k, "l1tex__t_requests_pipe_lsu_mem_global_op_ld.sum");
    const double sms = ctx.sm_count > 0 ? ctx.sm_count : k.metric("launch__sm_count").value_or(132);
    const double grid = k.metric("launch__grid_size").value_or(
        static_cast<double>(k.grid[0] * k.grid[1] * k.grid[2]));
    const double waves = get(k, "launch__waves_per_multiprocessor");
    const double conflicts = get(k, "l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum");
    const double wavefronts = get(k, "l1tex__data_pipe_lsu_wavefronts_mem_shared.sum");
    const double tensor =
        std::max(get(k, "sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"),
                 get(k, "sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"));
    const double dram = get(k, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
    const double l2 = get(k, "lts__throughput.avg.pct_of_peak_sustained_elapsed");
    const double sm = get(k, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
    const auto occupancy = k.metric("sm__warps_active.avg.pct_of_peak_sustained_active");

    const double spill_fraction = local + global_ld > 0 ? local / (local + global_ld) : 0;
    const double last_wave = waves - std::floor(waves);
    if (spill_fraction >= kSpillLocalFraction) {
        decide(Bottleneck::kSpillBound,
               {"local sectors / (local + global load sectors)", spill_fraction, ">=",
                kSpillLocalFraction, fmt(local) + " local-memory sectors (spills or a stack array)"});
    } else if (grid > 0 && grid < sms) {
        decide(Bottleneck::kLaunchTailBound,
               {"launch__grid_size", grid, "<", sms, "fewer blocks than SMs: SMs idle"});
    } else if (waves >= 1 && waves < 4 && last_wave > 0 && last_wave <= kTailLastWaveFraction) {
        decide(Bottleneck::kLaunchTailBound,
               {"launch__waves_per_multiprocessor", waves, "last wave <=", kTailLastWaveFraction,
                "the last wave runs " + fmt(last_wave * 100) + "% full"});
    } else if (requests >= kMinGlobalRequests &&
               global_ld / requests > kUncoalescedSectorsPerRequest) {
        decide(Bottleneck::kUncoalescedMemory,
               {"global load sectors / request", global_ld / requests, ">",
                kUncoalescedSectorsPerRequest, "a coalesced warp load needs 4 (4 B) to 16 (16 B)"});
    } else if (wavefronts > 0 && conflicts / wavefronts >= kBankConflictFraction) {
        decide(Bottleneck::kSharedMemoryBound,
               {"shared bank conflicts / wavefronts", conflicts / wavefronts, ">=",
                kBankConflictFraction, fmt(conflicts) + " bank conflicts"});
    } else if (tensor >= kBusyPct) {
        decide(Bottleneck::kTensorComputeBound,
               {"tensor pipe active % (hmma, gmma)", tensor, ">=", kBusyPct, ""});
    } else if (dram >= kBusyPct) {
        decide(Bottleneck::kDramBound,
               {"dram__throughput.avg.pct_of_peak_sustained_elapsed", dram, ">=", kBusyPct, ""});
    } else if (l2 >= kBusyPct) {
        decide(Bottleneck::kL2Bound,
               {"lts__throughput.avg.pct_of_peak_sustained_elapsed", l2, ">=", kBusyPct, ""});
    } else if (sm >= kBusyPct) {
        decide(Bottleneck::kSimtComputeBound,
               {"sm__throughput.avg.pct_of_peak_sustained_elapsed", sm, ">=", kBusyPct, ""});
    } else if (occupancy && *occupancy < kLowOccupancyPct) {
        decide(Bottleneck::kLatencyBoundLowOccupancy,
               {"sm__warps_active.avg.pct_of_peak_sustained_active", *occupancy, "<",
                kLowOccupancyPct, "no unit is busy and few warps hide latency"});
    } else {
        d.evidence.push_back({"max(dram, lts, sm, tensor) %", std::max({dram, l2, sm, tensor}), "<",
                              kBusyPct, "no unit busy, occupancy not low (or not measured)"});
    }
    // Context: the unit utilisations and the top stall, whatever decided.
    for (const char* m : {"dram__throughput.avg.pct_of_peak_sustained_elapsed",
                          "sm__warps_active.avg.pct_of_peak_sustained_active",
                          "sm__maximum_warps_per_active_cycle_pct"})
        if (auto v = k.metric(m); v && d.evidence.front().metric != m)
            d.evidence.push_back({m, *v, "", 0, "context"});
    if (auto s = top_stall(k)) d.evidence.push_back(*s);
    d.kind = ctx.kind;
    MoveAdvice advice = advise_moves(d.bottleneck, ctx);
    d.moves = std::move(advice.moves);
    d.stop = advice.stop;
    const BottleneckEvidence& e = d.evidence.front();
    d.summary = d.kernel + ": " + std::string(to_string(d.bottleneck)) + " (" + e.metric + " " +
                fmt(e.value) + " " + e.op + " " + fmt(e.threshold) + ")";
    return d;
}

}  // namespace kforge::profile
