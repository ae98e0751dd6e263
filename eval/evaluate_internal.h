// Internals of the evaluation pipeline (eval/evaluate.h), shared by its .cpp files.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "codegen/lower.h"
#include "dsl/ast.h"
#include "eval/evaluate.h"
#include "eval/reference_cache.h"
#include "problem/inputs.h"
#include "sol/target.h"

namespace kforge::eval::detail {

// A program lowered (and, on a GPU, compiled) for one binding of the problem's dims.
struct Prepared {
    Problem problem;
    codegen::Lowered lowered;
    Candidate candidate;  // points into problem and Pipeline::program
    nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
};

struct RoundResult {
    EvalStatus status = EvalStatus::kPassed;
    std::string message;
    bool context_lost = false;
    nlohmann::ordered_json evidence = nlohmann::ordered_json::object();
    TensorData outputs;
    std::shared_ptr<const TensorData> reference;
    std::shared_ptr<const TensorData> inputs;  // the round's (the conditioning recheck's base)
    bool gpu_reference_failed = false;  // the GPU reference, not the candidate, failed
};

// The inputs of `shape` for distribution `d` and `seed` (the heavy-tailed ones scaled where an
// f16 tensor exists).
TensorData make_inputs(const Problem& shape, Distribution d, uint64_t seed);

// The timing inputs of `shape` for request seed `seed`, from `cache` (drawn on a miss): every
// graph input drawn as its spec says (Distribution::kSpecified: the user's values, normal unless
// the spec says otherwise), seed + 4242. The timing gate, the launch-mode choice and
// time_programs() all time on these.
std::shared_ptr<const CachedCase> timing_case(ReferenceCache& cache, const Problem& shape,
                                              uint64_t seed);

// One correctness case from `cache`: its inputs (make_inputs) and its reference, the device's
// GPU fp64 one with `gpu_reference`, else the CPU interpreter's; computed on a miss.
struct FetchedCase {
    std::shared_ptr<const CachedCase> c;
    bool computed = false;  // the reference was computed now (not cached)
    nlohmann::ordered_json gpu_evidence;  // the GPU reference's compile and run times
    bool context_lost = false;            // the GPU reference lost the CUDA context
};
FetchedCase fetch_case(Device& device, ReferenceCache& cache, const Problem& shape,
                       Distribution d, uint64_t seed, bool gpu_reference);

class Pipeline {
public:
    Pipeline(Device& device, const EvalRequest& request, ReferenceCache* cache);
    EvalReport run();
    // static + compile only, keeping the full-shape preparation (eval/time_programs.cpp);
    // nullptr with the failure in report().
    std::unique_ptr<Prepared> prepare_full();
    const EvalReport& report() const { return report_; }

private:
    bool gate_static();
    bool gate_static_prebuilt();
    bool gate_compile();
    bool gate_correctness(const std::string& gate, const Problem& shape, int rounds,
                          uint64_t seed_base, std::unique_ptr<Prepared>& keep);
    bool reuse_gate(const std::string& gate, const Problem& shape, uint64_t seed_base);
    bool gate_audit(Prepared& prepared, const TensorData& reference);
    bool gate_full_shape();
    bool gate_timing();
    bool choose_launch_mode(const TimingOptions& options, nlohmann::ordered_json& evidence,
                            bool interleaved);  // eval/launch_mode.h
    bool gate_sol_gaming();
    // Loads `p` and (where the device can) runs it on the timing inputs (timing_case) so
    // time() has them, whatever ran before (the correctness rounds' and the full-shape sanity
    // check's inputs are others).
    bool ready_for_timing(Prepared& p, const std::string& gate);

    // Lowers (and compiles on a GPU) `program` for `shape`; nullptr after recording a failure.
    std::unique_ptr<Prepared> prepare(const Problem& shape, const dsl::Program& program,
                                      const std::string& gate);
    // One correctness round: inputs and reference (the GPU's with `gpu_reference`, else the CPU
    // interpreter's) from the cache, then one run of the loaded candidate.
    RoundResult round(const Problem& shape, Distribution d, uint64_t seed, bool gpu_reference);
    // The conditioning recheck's per-element sensitivity of round `r`, which failed on its
    // bands alone (eval/gates.h): the reference on its inputs perturbed by the policy's unit
    // roundoff, signs salted by the round's `seed`; nothing (why in `evidence`) when that
    // reference fails.
    std::optional<TensorData> conditioning(const Problem& shape, const RoundResult& r,
                                           uint64_t seed, bool gpu_reference,
                                           nlohmann::ordered_json& evidence);
    // The device computes references, the last one did not fail, and `shape` is the full shape.
    bool use_gpu_reference(const Problem& shape) const;
    // gate_correctness returned false without recording a failure because the GPU reference
    // failed (the context survived): the caller checks again against the CPU interpreter.
    bool gpu_reference_failed_quietly() const;
    bool load(Prepared& p, const std::string& gate);
    void pass(const std::string& gate, std::string message, nlohmann::ordered_json evidence,
              bool skipped = false);
    bool fail(const std::string& gate, EvalStatus status, std::string message,
              nlohmann::ordered_json evidence = nlohmann::ordered_json::object());
    bool full_tier() const;
    void record(GateOutcome g);

    Device& device_;
    const EvalRequest& request_;
    std::unique_ptr<ReferenceCache> own_cache_;
    ReferenceCache* cache_;
    EvalReport report_;
    dsl::Program program_;
    std::optional<dsl::Program> baseline_;
    std::string device_key_;
    Target target_;  // what the candidate is built for: the device's table entry and SM count
    std::string canonical_;
    std::unique_ptr<Prepared> check_;    // loaded after correctness_full
    std::unique_ptr<Prepared> full_;     // the full shape (may be check_)
    std::optional<Problem> small_shape_, check_shape_;
    bool full_ready_ = false;       // the full shape is loaded and has run
    std::optional<std::string> gpu_reference_error_;  // set once the GPU reference failed
    std::chrono::steady_clock::time_point gate_start_;  // since the last recorded gate
    std::chrono::steady_clock::time_point run_start_;
    friend struct StoreSession;
};

}  // namespace kforge::eval::detail
