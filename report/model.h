// The report model: every number a report shows, derived from the store for one or more runs.
// Nothing here is read back from a stored summary: medians, spreads, speedups, %SOL, SOL
// scores, geomeans and fast_p are computed from measurements, FLOP/byte counts and the SOL
// bounds each time (DESIGN.md decision 4). Renderers (markdown.h, html.h, json.h) only format.
//
// Per problem of a run (evaluations on the run's device only):
//   qualified candidate  not a baseline carrier (report/baseline.h) and no evaluation of it is
//                        `incorrect` or `flagged_gaming` (a correctness failure at any tier
//                        outweighs a pass at another).
//   best                 among qualified candidates' `passed` evaluations that hold "candidate"
//                        samples: only the highest timed tier present (full/profile over quick),
//                        the newest such evaluation per candidate, smallest median wins.
//   time                 device/timing.h statistics of its "candidate" samples: median, IQR,
//                        95% bootstrap CI of the median.
//   baselines            report/baseline.h labels at the best's shapes_key (the problem's full
//                        shapes when there is no best); speedup = baseline median / best median.
//   %SOL                 100 * T_sol(fused) / T, T_sol from sol/bounds.h compute_bounds with the
//                        device's datasheet ceilings, replaced by a calibration where one is given
//                        (--calibration) or stored for the device.
//   SOL score            sol_score(T, T_sol, T_base), T_base = the eager baseline median when one
//                        was measured and exceeds T_sol, else the unfused bound; t_base_source
//                        says which. Undefined (with a note) when T_base <= T_sol.
//   progress             one point per evaluation of a qualified candidate in evaluation order:
//                        x = cumulative GPU-seconds = sum over evaluations so far of every
//                        measured sample time (all labels) plus the compile gate's
//                        time_compile_ns when recorded; evaluations copied from the cache cost 0.
//                        y = best median so far (passed evaluations at the best's tier, the
//                        highest timed tier present: the curve ends at the best) and, when the
//                        problem has a reference baseline (the first of eager, compile_default,
//                        compile_max_autotune, others), the speedup of it over that baseline.
// Suite (over every problem of every run given):
//   geomean speedup per baseline over problems with a best and that baseline measured;
//   fast_p per baseline = (problems whose best is correct and speedup > p) / (problems with that
//   baseline measured), KernelBench's fast_p with N = problems the baseline was measured on;
//   within SOL = problems whose best has T <= (1 + X/100) T_sol, over problems with SOL bounds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "common/expected.h"
#include "sol/calibration.h"
#include "sol/sol_share.h"

namespace kforge {
class Store;
}

namespace kforge::report {

struct ReportOptions {
    std::vector<int64_t> run_ids;
    std::optional<std::string> device;        // device table name overriding the stored one
    std::optional<Calibration> calibration;   // overrides a calibration stored for the device
    double sol_within_percent = 20.0;         // "within X% of SOL"
    std::vector<double> fast_p = {1.0, 1.2, 2.0};
};

struct SampleStats {
    int count = 0;
    double median_ns = 0, q1_ns = 0, q3_ns = 0, iqr_ns = 0;
    double ci95_low_ns = 0, ci95_high_ns = 0;
    double min_ns = 0, max_ns = 0;
};

struct BaselineTime {
    std::string name;   // "eager"
    std::string label;  // "baseline:eager"
    SampleStats stats;
    std::optional<double> speedup;  // baseline median / best median (when there is a best)
};

struct GateRow {
    std::string gate;
    std::string result;  // "passed", "skipped" or the failing status
    std::string message;
    std::string evidence_json;  // compact JSON of the gate's evidence
};

struct LineageRow {
    int64_t candidate_id = 0;
    int depth = 0;
    std::string proposer, move, content_hash;
};

// One kernel of the best program (report/kernel_breakdown.h): its measured time (the device's
// per-kernel pass, device/device.h kernel_times_ns), its share of the kernels' total, its SOL
// bound (sol/kernel_bounds.h: the ops it computes as a problem of their own) and what bounds it.
struct KernelRow {
    std::string name, kind;
    std::string ops;                 // "linear, scale" (the graph ops it computes), "-" for none
    double time_ns = 0;
    double share = 0;                // time / sum of the kernels' times, in [0, 1]
    std::optional<double> time_sol_ns;
    SolShare sol;                    // T_sol / T of the kernel (sol/sol_share.h)
    std::string bottleneck;          // "compute (tensor_bf16)", "memory"; "-" without a bound
};

struct BestCandidate {
    int64_t candidate_id = 0;
    int64_t evaluation_id = 0;
    std::string content_hash, proposer, move, tier, shapes_key, toolchain;
    SampleStats stats;
    double flops = 0, bytes = 0;
    double tflops_per_s = 0, gbytes_per_s = 0;  // derived from the median
    std::vector<GateRow> gates;
    std::string diagnosis;  // evidence "diagnosis" of the evaluation, empty when none
    std::vector<LineageRow> lineage;
    // Per kernel, in the program's order: filled for a program of two or more kernels whose
    // evaluation recorded per-kernel times (empty otherwise; kernels_note says why when it
    // has several kernels but no times).
    std::vector<KernelRow> kernels;
    std::string kernels_note;
};

struct SolFigures {
    bool available = false;
    std::string note;  // why not available, or caveats
    std::string ceilings_source, bound_kind;
    double time_sol_s = 0, time_unfused_s = 0;
    std::optional<double> percent_sol;  // 100 T_sol / T, at most 100 (sol/sol_share.h)
    bool under_sol_bound = false;       // T < T_sol: shown as 100%, flagged
    SolShare share;                     // what percent_sol and the flag come from
    std::optional<double> headroom;     // T / T_sol
    std::optional<double> sol_score;
    std::string t_base_source;  // "baseline:eager" or "unfused_bound"
    double time_base_s = 0;
    std::string sol_score_note;
    bool below_gaming_threshold = false;
};

// The %SOL of `sol` as every report shows it: "87.3%", "100.0% (flagged: under the SOL bound,
// ...)" (sol/sol_share.h), "-" without a time.
std::string sol_text(const SolFigures& sol);

struct ProgressPoint {
    int64_t evaluation_id = 0;
    double gpu_s = 0;  // cumulative, after this evaluation
    std::optional<double> best_time_ns;
    std::optional<double> best_speedup;
};

struct ProblemReport {
    int64_t run_id = 0;
    int64_t problem_id = 0;
    std::string name, description, policy;
    bool simulated = false;
    int candidates = 0, evaluations = 0, passed_evaluations = 0;
    std::optional<BestCandidate> best;
    std::vector<BaselineTime> baselines;  // sort_baseline_names order; empty: none measured
    std::string reference_baseline;       // first baseline name, empty when none
    SolFigures sol;
    std::vector<ProgressPoint> progress;
};

struct RunInfo {
    int64_t id = 0;
    std::string subject;  // problem name or "suite:<name>"
    std::string device_name, device_uuid, datasheet_key;
    std::string status, started_at;
    bool simulated = false;
};

struct FastP {
    double p = 1.0;
    int fast = 0;
    double fraction = 0;
};

struct BaselineSummary {
    std::string name;
    int problems_measured = 0;
    int geomean_count = 0;
    std::optional<double> geomean_speedup;
    std::vector<FastP> fast_p;
};

struct SuiteSummary {
    int problems = 0, problems_solved = 0;
    std::vector<BaselineSummary> baselines;
    double sol_within_percent = 20.0;
    int problems_with_sol = 0, within_sol = 0;
    std::optional<double> fraction_within_sol;
    std::optional<double> geomean_percent_sol;
};

struct Report {
    std::vector<RunInfo> runs;
    bool simulated = false;  // any run on the simulated device
    std::vector<ProblemReport> problems;
    SuiteSummary suite;
};

// Builds the model. Errors: an unknown run id (user error naming it), an unknown --device, a
// calibration of another device, unreadable stored JSON.
Expected<Report> build_report(Store& store, const ReportOptions& options);

// The suite block from the problem reports (called by build_report; exposed for tests).
SuiteSummary summarize_suite(const std::vector<ProblemReport>& problems,
                             const ReportOptions& options);

// Statistics of sample times (device/timing.h).
SampleStats sample_stats(const std::vector<double>& times_ns);

}  // namespace kforge::report
