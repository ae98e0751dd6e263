// The in-process evaluation pipeline: one program against one problem on one Device, gate by
// gate, each gate recorded with its evidence; the first failing gate decides the status.
//
//   static             parse_program + check_program (device limits of the device's table entry)
//   compile            lower_program + compile_cuda per shape; the simulated device lowers only
//                      (codegen errors still fail here) and says the compile was skipped
//   correctness_small  dims shrunk by small_shape() (below), fp64 interpreter reference,
//                      2 rounds (uniform, normal: outputs must change with the inputs). In the
//                      full tier the outcome of a passed quick-tier correctness_small of the same
//                      program, shapes and seed is reused when the caller supplies it
//                      (EvalRequest::reusable_gates; the store wrapper does)
//   --- full tier only (the quick tier screens: small-shape correctness, then timing) ---
//   correctness_hidden only on a device with a GPU reference: the hidden second shape
//                      check_shape() (when it differs from the small and the full shape) against
//                      the CPU interpreter, 3 rounds (uniform, normal, heavy-tailed)
//   correctness_full   on a device that computes references (CUDA: Device::reference_kind()
//                      "gpu_fp64", reference/gpu_reference.h) at the full shape against the GPU fp64
//                      reference; if that reference fails (NVRTC, launch, memory) the failure is
//                      recorded in the evidence (gpu_reference_error) and the gate runs as on
//                      the simulated device: at check_shape(), the full shape when the CPU
//                      reference is feasible, else the largest feasible legal shape (the hidden
//                      second shape; the evidence says so). The evidence's reference_kind says
//                      which reference decided ("gpu_fp64" or "cpu_fp64_interpreter"; the small
//                      gate always uses the interpreter). A GPU reference failure that loses the
//                      CUDA context ends the evaluation as an environment error instead.
//                      5 rounds, inputs cycling uniform [0,1) (a scaled param: [-1,1) times
//                      its bound), normal, heavy-tailed
//                      (scaled by 1/64 where an f16 tensor exists, as Student-t tails overflow
//                      fp16 GEMM outputs), fresh poisoned outputs each run, and outputs must
//                      change when inputs (and the reference) change
//   audit              a short timed loop at the shape correctness_full checked (the full shape
//                      with a GPU reference); the outputs after one randomly
//                      chosen timed iteration must match the reference
//   full_shape         only when the checked shape is not the full one: one run at the full shape
//                      (CUDA) that must finish with finite, not all-zero outputs; the simulated
//                      device cannot interpret it and records a skip
//   --- both tiers ---
//   timing             full shape; quick 3 warm-up + 20 iterations, full 10 + 100; with a
//                      baseline program, interleaved in chunks of 10 iterations
//   sol_gaming         median below sol/bounds gaming threshold -> kFlaggedGaming after a
//                      re-verification round (its result is in the evidence); under T_sol but
//                      above the threshold -> passes flagged (evidence under_sol_bound, shown
//                      as 100% of SOL: sol/sol_share.h); bounds on the device's arch
//
// Every gate's evidence carries its wall time (`wall_ms`, also GateOutcome::wall_ms) and the
// report the total. Inputs and fp64 references come from a ReferenceCache (eval/
// reference_cache.h): a worker keeps one, so candidates of one problem share them, and
// warm_cases (below; Evaluator::warm) fills it ahead of a program's evaluation from the same
// list of gates (correctness_gates) that the pipeline runs.
//
// A prebuilt candidate (EvalRequest::prebuilt: a cubin and its launch plan, e.g. the faulty
// kernels of tests/faults/) replaces the program: static checks the plan against the problem,
// compile is skipped, and as the plan is bound to the full shape correctness runs there (as
// correctness_full, 2 rounds quick / 5 full, with the audit) whatever the tier, against the GPU
// reference where the device has one (else, or when it fails, the CPU interpreter).
//
// Tiers: kStatic/kCostModel stop after static, kCompile after compile, kQuick and kFull run
// the gates above (kProfile runs as kFull). With a Store, the evaluation cache is consulted first
// and the candidate, artefacts, evaluation and measurements are written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "codegen/launch_plan.h"
#include "device/device.h"
#include "device/timing.h"
#include "problem/inputs.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge {
class Store;
}

namespace kforge::eval {

// Budgets of the CPU reference (one core, fp64): FLOPs and total tensor elements.
inline constexpr double kSmallShapeMaxFlops = 3e8;
inline constexpr double kCheckShapeMaxFlops = 2e9;
inline constexpr int64_t kCheckShapeMaxElements = int64_t{16} << 20;

class ReferenceCache;

struct GateOutcome {
    std::string gate;
    bool passed = false;
    bool skipped = false;
    EvalStatus status = EvalStatus::kPassed;
    std::string message;
    nlohmann::ordered_json evidence = nlohmann::ordered_json::object();  // with "wall_ms"
    double wall_ms = 0;
};

// A candidate that is already device code: a cubin and the launch plan that runs it.
struct PrebuiltCandidate {
    std::string cubin_path;
    codegen::LaunchPlan plan;
};

struct EvalRequest {
    Problem problem;                 // at its full shape
    std::string program_text;
    std::string program_file = "<program>";
    EvalTier tier = EvalTier::kQuick;
    std::optional<std::string> baseline_program_text;  // interleaved timing
    SimFault sim_fault = SimFault::kNone;              // simulated device only
    uint64_t seed = 1;
    double run_timeout_s = 10.0;
    std::string compile_cache_dir;   // compile_cuda cache (CUDA device)
    std::string work_dir;            // compile outputs without a cache (default: a temp dir)
    Store* store = nullptr;          // optional: cache lookup and recording
    std::optional<int64_t> run_id;   // store: the run to add the candidate to (else a new run)
    std::string proposer = "human";
    std::optional<PrebuiltCandidate> prebuilt;  // replaces program_text's lowering (see above)
    // Passed gates of an earlier evaluation of the same program, shapes, device and toolchain
    // (today: the quick tier's correctness_small, reused by the full tier when dims and seed
    // match).
    std::vector<GateOutcome> reusable_gates;
    // > 0: the timing gate runs one warm-up and this many timed runs instead of the tier's
    // protocol - for a run under the profiler, which replays every launch (ncu over the quick
    // tier's 23 full-shape launches of a 1 GB problem took ~14 s a candidate on the H200).
    int timing_runs = 0;
};

// One kernel of the evaluated program: what it computes of the problem's graph
// (dsl/kernel_ops.h), for per-kernel SOL bounds (sol/kernel_bounds.h) and reports.
struct KernelSummary {
    std::string name;                 // the program's kernel name
    std::string kind;                 // dsl to_string(KernelKind): "gemm", "rowwise", ...
    std::vector<size_t> ops;          // indices into the problem's ops
    std::vector<std::string> stores;  // the problem tensors it stores
};

struct EvalReport {
    EvalStatus status = EvalStatus::kPassed;
    std::string message;
    bool environment_error = false;  // toolchain or device unusable: not the candidate's fault
    bool context_lost = false;       // sticky CUDA error: restart the worker
    EvalTier tier = EvalTier::kQuick;
    DeviceInfo device;
    bool simulated = false;
    std::string program_hash;
    std::string shapes_key;          // "K=4096,M=4096,N=4096"
    std::vector<GateOutcome> gates;
    std::vector<TimingSample> samples;
    TimingStats stats;
    std::vector<TimingSample> baseline_samples;
    TimingStats baseline_stats;
    // Per kernel of the program, in its kernel order: the median time (device/device.h
    // TimingResult::kernel_times_ns; taken with the first chunk when interleaved).
    // Empty when unknown (no timing, a device that cannot tell, a cached evaluation from before).
    std::vector<double> kernel_times_ns;
    std::vector<KernelSummary> kernels;  // the program's kernels in its order (set with timing)
    double flops = 0;                // problem/work.h count_work at the full shape
    double bytes = 0;                // bytes_fused
    std::string cuda_source;         // artefacts of the full-shape lowering (empty if none)
    std::string plan_json;
    bool cached = false;             // answered from the store's evaluation cache
    std::string store_error;         // the store could not be read or written (evaluation stands)
    std::optional<int64_t> evaluation_id;
    double wall_ms = 0;              // the whole evaluation, store included
    std::vector<std::string> worker_notes;  // supervised: worker restarts and why
};

// One correctness gate as the pipeline runs it: round i checks inputs of distribution
// correctness_distribution(i) and seed seed_base + i at `shape` against the GPU fp64 reference
// (`gpu_reference`) or the CPU interpreter. The gates and the warm-up (warm_cases) both list
// their cases with correctness_gates, so the warm-up builds exactly the cases the gates request.
struct CorrectnessGatePlan {
    std::string gate;  // correctness_small, correctness_hidden or correctness_full
    Problem shape;
    int rounds = 0;
    uint64_t seed_base = 0;
    bool gpu_reference = false;
    // correctness_full at the check shape, run only when the GPU reference failed quietly.
    bool fallback = false;
    std::string error;  // no shape fits (small_shape / check_shape): the gate fails kNotSupported
};

// The input distribution of correctness round `round` (uniform, normal, heavy-tailed, cycling).
Distribution correctness_distribution(int round);

// The correctness gates of a program's quick or full tier, in the order the pipeline runs them:
// correctness_small; in the full tier on a device with a GPU reference (`gpu_reference`) the
// hidden second shape (when it differs from the small and the full shape), correctness_full at
// the full shape and its CPU fallback at the check shape; without one, correctness_full at the
// check shape. The list ends at the first gate with an error.
std::vector<CorrectnessGatePlan> correctness_gates(const Problem& problem,
                                                   const std::string& program_text,
                                                   const std::string& device_key, uint64_t seed,
                                                   EvalTier tier, bool gpu_reference);

// A warm-up of the correctness cases (inputs and references) a program's quick and full tiers
// will request, run before the program is compiled (e.g. while it compiles), so that its gates
// find them in the ReferenceCache. Cases are numbered in correctness_gates order (fallback gates
// left out); a request warms [first_case, first_case + max_cases) of them.
struct WarmRequest {
    Problem problem;            // at its full shape
    std::string program_text;   // the small and hidden shapes depend on the program
    uint64_t seed = 1;          // EvalRequest::seed of the evaluations to come
    EvalTier tier = EvalTier::kFull;
    uint64_t first_case = 0;
    uint64_t max_cases = UINT64_MAX;
};

struct WarmReport {
    uint64_t cases_total = 0;  // the cases of the whole list
    int computed = 0;          // references computed now
    int cached = 0;            // already in the cache
    // What failed (a gate without a shape, a failed reference, a worker that died); empty if
    // nothing did. A failure is never fatal: the gates later run as they would without warm-up.
    std::string error;
    bool context_lost = false;  // a GPU reference lost the CUDA context (restart the worker)
    double wall_ms = 0;
};

// The warm-up on `device` into `cache`.
WarmReport warm_cases(Device& device, const WarmRequest& request, ReferenceCache& cache);

nlohmann::ordered_json to_json(const WarmRequest& request);
// An Error names the field ("payload.first_case") or the problem spec's own error.
Expected<WarmRequest> warm_request_from_json(const nlohmann::json& payload);
nlohmann::ordered_json to_json(const WarmReport& report);
Expected<WarmReport> warm_report_from_json(const nlohmann::json& j);

// The pipeline on `device` with the store wrapper (eval/evaluator.h has the same through a
// supervised worker). `cache`: inputs and references to share (null: a private one).
EvalReport evaluate(Device& device, const EvalRequest& request, ReferenceCache* cache = nullptr);

// The timing protocol of a tier's timing gate (warm-up, iterations, time cap, L2 flush).
TimingOptions timing_options_for(EvalTier tier);

// The small correctness shape: each dim above `cap` becomes the largest multiple of its largest
// power-of-two divisor (itself at most cap) not above cap, so tiles and vector widths that
// divide the full dim divide the small one; caps 128 down to 8, then 4, 2 and 1, then 256, 512,
// 1024 are tried until the program checks and the reference fits `max_flops`. Derived dims
// ("3*n_embd", a conv's output size) follow. Dims a literal bound ties (a slice at literal
// offsets, a reshape to a literal extent, a head count that must divide) do not shrink with the
// others: when the shrink does not check, dims are restored to full size until it does (the
// shortest prefix in name order that checks, found by bisection, restoring only its last dim and
// then searching the dims before it the same way while it still fails), then each restored dim
// takes its shrink, else the largest of its halvings at most cap, else the smallest above, with
// which the program still checks. When no cap fits, the smallest cap whose shrink checks but
// whose reference is over the budget (a literal keeps a 224x224 image full while the lowering
// refuses the rows of caps 2 and 1) has its dims halved further, one at a time and each kept
// only where the program still checks - the dims no param carries (batch) first, then the other
// shrunk ones, then those at full size - until the reference fits and the lowering takes it. A
// pick that fits at some cap is unchanged. An Error when nothing fits. The last few picks are
// remembered in the process (by problem, program text, device and budget): a candidate's quick
// and full tiers ask for the same shape. check_shape() likewise.
Expected<Problem> small_shape(const Problem& problem, const std::string& program_text,
                              const std::string& device_key, double max_flops);

// The shape correctness_full checks: the full shape if its reference fits the budgets, else the
// largest legal shrink (caps 4096 down to 256) that fits and differs from `small`.
Expected<Problem> check_shape(const Problem& problem, const Problem& small,
                              const std::string& program_text, const std::string& device_key);

// "K=4096,M=4096,N=4096" (dims by name).
std::string shapes_key(const Problem& problem);

// What gate `gate` cannot check on the simulated device, as its evidence's "not_checked" says
// (the pipeline adds it to every gate it records there): the compile, the program's numerics
// (correctness gates and audit: the device runs the problem's fp64 interpreter, not the
// program), a run at the full shape, a measured time. Empty for a gate that checks there what it
// checks on a GPU (static).
inline constexpr const char* kNumericsNotChecked = "numerics not checked on the simulated device";
std::string simulated_gap(const std::string& gate);

// `with_artefacts`: also the CUDA source and the plan (the worker's answer to a supervisor).
nlohmann::ordered_json to_json(const EvalReport& report, bool with_artefacts = false);
// The report back from to_json (a worker's answer); an Error names the bad field (a field of
// the wrong type included: nothing in the JSON makes it throw).
Expected<EvalReport> report_from_json(const nlohmann::json& j);
// The gates of an evaluation's stored evidence (to_json of its report, kept in the store);
// none when the text is not JSON or its "gates" is not an array of gate objects.
std::vector<GateOutcome> gates_from_evidence(std::string_view evidence_json);

nlohmann::ordered_json to_json(const TimingSample& s);
nlohmann::ordered_json to_json(const TimingStats& s);

}  // namespace kforge::eval
