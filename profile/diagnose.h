// Bottleneck diagnosis: per kernel, a bottleneck class, the evidence that decided it (metric,
// value, threshold) and the knob moves that address it (the moves table, diagnosis/moves.h).
// From an ncu profile (diagnose_kernel) or, without a profiler, from the ptxas report and the
// roofline position of the measured time (diagnose_fallback). The result is the plain-data
// KernelDiagnosis of diagnosis/diagnosis.h, which the search reads typed.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "compile/ptxas_report.h"
#include "diagnosis/diagnosis.h"
#include "dsl/ast.h"
#include "profile/ncu_parse.h"

namespace kforge::profile {

// Thresholds of the classifier (percent of peak unless named otherwise).
inline constexpr double kBusyPct = 60.0;              // a unit at >= this is the limiter
inline constexpr double kSpillLocalFraction = 0.05;   // local / (local + global load) sectors
inline constexpr double kUncoalescedSectorsPerRequest = 16.0;  // > 16B vector warp access
inline constexpr double kMinGlobalRequests = 1000.0;
inline constexpr double kBankConflictFraction = 0.25; // conflicts / shared wavefronts
inline constexpr double kLowOccupancyPct = 40.0;      // achieved warps of the SM maximum
inline constexpr double kTailLastWaveFraction = 0.5;  // last wave fuller than this: no tail
// kNearSolFraction (T_sol / T at or above: stop) is diagnosis/diagnosis.h's.

struct DiagnoseContext {
    std::optional<dsl::KernelKind> kind;     // the program kernel's kind, when known
    std::optional<double> fraction_of_sol;   // T_sol / T of the program (1.0 = at SOL)
    int sm_count = 0;                        // 0: from launch__sm_count, else 132
};

// Classifies one profiled kernel (rules in order: spills, tail, coalescing, bank conflicts,
// tensor, DRAM, L2, SIMT, low occupancy; unknown otherwise).
KernelDiagnosis diagnose_kernel(const KernelProfile& kernel, const DiagnoseContext& context);

// Without a profile: the ptxas resources of the kernel, its launch (grid x block threads,
// dynamic smem) and where the measured time sits against the SOL bound.
struct FallbackInput {
    compile::KernelResources resources;
    int64_t grid_blocks = 0;            // 0: unknown
    int64_t block_threads = 0;
    int64_t dynamic_smem_bytes = 0;
    bool memory_bound_sol = true;       // sol Bounds::kind == kMemory
    bool matrix_on_tensor_cores = false;
};
KernelDiagnosis diagnose_fallback(const FallbackInput& input, const DiagnoseContext& context);

// The moves a diagnosis of class `b` advises: the moves table's for the context's kernel kind
// (every kind's first move when the kind is unknown); near SOL a tensor or DRAM class says stop
// instead (diagnose_moves.cpp).
struct MoveAdvice {
    std::vector<DirectedMove> moves;
    bool stop = false;
};
MoveAdvice advise_moves(Bottleneck b, const DiagnoseContext& context);

}  // namespace kforge::profile
