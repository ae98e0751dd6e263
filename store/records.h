// Plain rows of the store (store/store.h). JSON columns travel as text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "store/enums.h"

namespace kforge {

struct ProblemRecord {
    int64_t id = 0;
    std::string name;
    std::string spec_json;
    std::string content_hash;
    std::string created_at;
};

struct DeviceRecord {
    int64_t id = 0;  // ignored by upsert_device
    std::string name;                // "NVIDIA H200"
    std::string uuid;                // "GPU-..." or "simulated-..."; identity of the device
    std::string compute_capability;  // "9.0"
    std::string driver;              // driver version
    std::string datasheet_key;       // key into the sol device table
};

struct CalibrationRecord {
    int64_t id = 0;
    int64_t device_id = 0;
    std::string calibration_json;
    std::string measured_at;
};

struct NewRun {
    std::optional<int64_t> problem_id;  // a run over one problem,
    std::optional<std::string> suite;   // or over a suite (at least one of the two)
    int64_t device_id = 0;
    std::string options_json = "{}";
    // What produced the run ("" when unknown): kforge version, git commit, compiler toolchain.
    std::string kforge_version, git_commit, toolchain;
};

struct RunRecord {
    int64_t id = 0;
    std::optional<int64_t> problem_id;
    std::optional<std::string> suite;
    int64_t device_id = 0;
    std::string started_at;
    std::optional<std::string> finished_at;
    std::string options_json;
    RunStatus status = RunStatus::kRunning;
    std::string kforge_version, git_commit, toolchain;
};

struct NewCandidate {
    int64_t run_id = 0;
    int64_t problem_id = 0;
    std::string program_text;  // canonical program text (dsl canonical printer)
    std::string content_hash;  // dsl content hash of that text
    std::vector<int64_t> parent_ids;  // none for a seed, one for a mutation, more for crossover
    std::string proposer;      // "llm:<model>", "search:tile_sweep", "human", ...
    std::string move;          // what the proposer changed, in words
};

struct CandidateInsert {
    int64_t id = 0;
    bool created = false;  // false when the run already held this program
};

struct CandidateRecord {
    int64_t id = 0;
    int64_t run_id = 0;
    int64_t problem_id = 0;
    std::string program_text;
    std::string content_hash;
    std::vector<int64_t> parent_ids;  // in the order given
    std::string proposer;
    std::string move;
    std::string created_at;
};

struct LineageEntry {
    CandidateRecord candidate;
    int depth = 0;  // 0: the candidate asked about, 1: its parents, ...
};

struct ArtefactRecord {
    int64_t id = 0;
    int64_t candidate_id = 0;
    ArtefactKind kind = ArtefactKind::kCudaSource;
    std::string content;
    std::string hash;
};

// One timed sample. `label` separates the candidate's samples from interleaved baselines.
struct MeasurementRecord {
    std::string label = "candidate";
    int64_t sample_index = 0;
    double time_ns = 0.0;
    std::optional<int64_t> sm_clock_mhz;
    std::optional<int64_t> mem_clock_mhz;
    std::optional<int64_t> temperature_c;
    std::optional<int64_t> throttle_reasons;  // NVML clocks-event reason bit mask
};

struct NewEvaluation {
    int64_t candidate_id = 0;
    int64_t device_id = 0;
    std::string toolchain;   // e.g. "nvcc 13.0.48 / cutlass 4.2.0"
    std::string shapes_key;  // identifies the shapes evaluated (quick tier may use small ones)
    EvalTier tier = EvalTier::kQuick;
    EvalStatus status = EvalStatus::kPassed;
    std::string error_text;
    std::string evidence_json = "{}";  // correctness and anti-gaming evidence
    int64_t flops = 0;
    int64_t bytes = 0;
    std::vector<MeasurementRecord> measurements;
    std::optional<int64_t> cached_from_id;  // set when this result was copied from the cache
    // Per program kernel, in the program's order: its median time (empty when unknown).
    std::vector<double> kernel_times_ns;
};

struct EvaluationRecord {
    int64_t id = 0;
    int64_t candidate_id = 0;
    int64_t device_id = 0;
    std::string toolchain;
    std::string shapes_key;
    EvalTier tier = EvalTier::kQuick;
    EvalStatus status = EvalStatus::kPassed;
    std::string error_text;
    std::string evidence_json;
    int64_t flops = 0;
    int64_t bytes = 0;
    std::string created_at;
    std::optional<int64_t> cached_from_id;
    std::vector<MeasurementRecord> measurements;  // ordered by label, sample index
    std::vector<double> kernel_times_ns;  // per program kernel, its median (empty: unknown)
};

struct NewLlmRequest {
    std::optional<int64_t> run_id;
    std::string provider;
    std::string model;
    std::string request_hash;
    std::string prompt;
    std::string reply;
    int64_t tokens_in = 0;
    int64_t tokens_out = 0;
    double cost_usd = 0.0;
    double latency_ms = 0.0;
};

// One line of `kforge db runs`.
struct RunSummary {
    int64_t id = 0;
    std::string problem;  // problem name, or "suite:<name>"
    std::string device;
    RunStatus status = RunStatus::kRunning;
    std::string started_at;
    int64_t candidates = 0;
    // The run's best: the fastest full-tier median of a passed evaluation (quick-tier timings,
    // on smaller shapes or fewer samples, never count), as optimize and report define it.
    std::optional<double> best_time_ns;
    std::string kforge_version, git_commit, toolchain;
};

}  // namespace kforge
