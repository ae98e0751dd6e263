// The in-process evaluation pipeline: one program against one problem on one Device, gate by
// gate, each gate recorded with its evidence; the first failing gate decides the status.
//
//   static             parse_program + check_program (device limits of the device's table entry)
//   compile            lower_program + compile_cuda per shape; the simulated device lowers only
//                      (codegen errors still fail here) and says the compile was skipped
//   correctness_small  dims shrunk by small_shape() (below), fp64 interpreter reference,
//                      1 round (quick) / 2 rounds (full)
//   correctness_full   at check_shape(): the full shape when the CPU reference is feasible, else
//                      the largest feasible legal shape (the hidden second shape; the evidence
//                      says so). Rounds 2 (quick) / 5 (full), inputs cycling uniform [0,1),
//                      normal, heavy-tailed (scaled by 1/64 where an f16 tensor exists, as
//                      Student-t tails overflow fp16 GEMM outputs), fresh poisoned outputs each
//                      run, and outputs must change when inputs (and the reference) change
//   audit              a short timed loop at the check shape; the outputs after one randomly
//                      chosen timed iteration must match the reference
//   full_shape         only when the check shape is not the full one: one run at the full shape
//                      (CUDA) that must finish with finite, not all-zero outputs; the simulated
//                      device cannot interpret it and records a skip
//   timing             full shape; quick 3 warm-up + 20 iterations, full 10 + 100; with a
//                      baseline program, interleaved in chunks of 10 iterations
//   sol_gaming         median below sol/bounds gaming threshold -> kFlaggedGaming after a
//                      re-verification round (its result is in the evidence)
//
// Tiers: kStatic/kCostModel stop after static, kCompile after compile, kQuick and kFull run
// everything (kProfile runs as kFull). With a Store, the evaluation cache is consulted first and
// the candidate, artefacts, evaluation and measurements are written.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/device.h"
#include "eval/timing.h"
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
};

struct GateOutcome {
    std::string gate;
    bool passed = false;
    bool skipped = false;
    EvalStatus status = EvalStatus::kPassed;
    std::string message;
    nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
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
    double flops = 0;                // problem/work.h count_work at the full shape
    double bytes = 0;                // bytes_fused
    std::string cuda_source;         // artefacts of the full-shape lowering (empty if none)
    std::string plan_json;
    bool cached = false;             // answered from the store's evaluation cache
    std::string store_error;         // the store could not be read or written (evaluation stands)
    std::optional<int64_t> evaluation_id;
};

EvalReport evaluate(Device& device, const EvalRequest& request);

// The small correctness shape: each dim above `cap` becomes the largest multiple of its largest
// power-of-two divisor (itself at most cap) not above cap, so tiles and vector widths that
// divide the full dim divide the small one; caps 128, 256, 512, 1024 are tried until the program
// checks and the reference fits `max_flops`. An Error when none does.
Expected<Problem> small_shape(const Problem& problem, const std::string& program_text,
                              const std::string& device_key, double max_flops);

// The shape correctness_full checks: the full shape if its reference fits the budgets, else the
// largest legal shrink (caps 4096 down to 256) that fits and differs from `small`.
Expected<Problem> check_shape(const Problem& problem, const Problem& small,
                              const std::string& program_text, const std::string& device_key);

// "K=4096,M=4096,N=4096" (dims by name).
std::string shapes_key(const Problem& problem);

nlohmann::ordered_json to_json(const EvalReport& report);

}  // namespace kforge::eval
