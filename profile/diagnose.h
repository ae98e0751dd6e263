// Bottleneck diagnosis: per kernel, a bottleneck class, the evidence that decided it (metric,
// value, threshold) and the knob moves of the kernel language that address it. From an ncu
// profile (diagnose_kernel) or, without a profiler, from the ptxas report and the roofline
// position of the measured time (diagnose_fallback). diagnosis_text() is what proposers read
// (search/proposer.h CandidateView::diagnosis).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "compile/ptxas_report.h"
#include "dsl/ast.h"
#include "profile/ncu_parse.h"

namespace kforge::profile {

enum class Bottleneck {
    kDramBound, kL2Bound, kTensorComputeBound, kSimtComputeBound, kLatencyBoundLowOccupancy,
    kLaunchTailBound, kSharedMemoryBound, kSpillBound, kUncoalescedMemory, kUnknown,
};
std::string_view to_string(Bottleneck b);
std::optional<Bottleneck> bottleneck_from_string(std::string_view s);

// Thresholds of the classifier (percent of peak unless named otherwise).
inline constexpr double kBusyPct = 60.0;              // a unit at >= this is the limiter
inline constexpr double kSpillLocalFraction = 0.05;   // local / (local + global load) sectors
inline constexpr double kUncoalescedSectorsPerRequest = 16.0;  // > 16B vector warp access
inline constexpr double kMinGlobalRequests = 1000.0;
inline constexpr double kBankConflictFraction = 0.25; // conflicts / shared wavefronts
inline constexpr double kLowOccupancyPct = 40.0;      // achieved warps of the SM maximum
inline constexpr double kTailLastWaveFraction = 0.5;  // last wave fuller than this: no tail
inline constexpr double kNearSolFraction = 0.8;       // T_sol / T at or above: stop

struct Evidence {
    std::string metric;
    double value = 0;
    std::string op;  // ">=", "<", ...
    double threshold = 0;
    std::string note;
};

struct DiagnoseContext {
    std::optional<dsl::KernelKind> kind;     // the program kernel's kind, when known
    std::optional<double> fraction_of_sol;   // T_sol / T of the program (1.0 = at SOL)
    int sm_count = 0;                        // 0: from launch__sm_count, else 132
};

struct Diagnosis {
    std::string kernel;
    Bottleneck bottleneck = Bottleneck::kUnknown;
    bool from_profile = true;            // false: ptxas + SOL fallback
    std::vector<Evidence> evidence;      // what decided the class (first: the deciding rule)
    std::vector<std::string> moves;      // knob moves in the kernel language
    std::string summary;                 // one line
};

// Classifies one profiled kernel (rules in order: spills, tail, coalescing, bank conflicts,
// tensor, DRAM, L2, SIMT, low occupancy; unknown otherwise).
Diagnosis diagnose_kernel(const KernelProfile& kernel, const DiagnoseContext& context);

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
Diagnosis diagnose_fallback(const FallbackInput& input, const DiagnoseContext& context);

// The knob moves for a class (diagnose_moves.cpp); near SOL a compute or DRAM class says stop.
std::vector<std::string> moves_for(Bottleneck b, const DiagnoseContext& context);

// "k0: dram_bound (dram__throughput 91.2% >= 60%) -> moves: vec 8; ..." one line per kernel.
std::string diagnosis_text(const std::vector<Diagnosis>& diagnoses);
nlohmann::ordered_json to_json(const Diagnosis& d);

}  // namespace kforge::profile
