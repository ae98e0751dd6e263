// Internals of the evaluation pipeline (eval/evaluate.h), shared by its .cpp files.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "codegen/lower.h"
#include "dsl/ast.h"
#include "eval/evaluate.h"
#include "problem/inputs.h"

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
    TensorData reference;
};

class Pipeline {
public:
    Pipeline(Device& device, const EvalRequest& request);
    EvalReport run();

private:
    bool gate_static();
    bool gate_compile();
    bool gate_correctness(const std::string& gate, const Problem& shape, int rounds,
                          uint64_t seed_base, std::unique_ptr<Prepared>& keep);
    bool gate_audit(Prepared& prepared, const TensorData& reference);
    bool gate_full_shape();
    bool gate_timing();
    bool gate_sol_gaming();
    // Loads `p` and (where the device can) runs it on timing_inputs_ so time() has inputs.
    bool ready_for_timing(Prepared& p, const std::string& gate);

    // Lowers (and compiles on a GPU) `program` for `shape`; nullptr after recording a failure.
    std::unique_ptr<Prepared> prepare(const Problem& shape, const dsl::Program& program,
                                      const std::string& gate);
    RoundResult round(const Problem& shape, Distribution d, uint64_t seed);
    TensorData make_inputs(const Problem& shape, Distribution d, uint64_t seed) const;
    bool load(Prepared& p, const std::string& gate);
    void pass(const std::string& gate, std::string message, nlohmann::ordered_json evidence,
              bool skipped = false);
    bool fail(const std::string& gate, EvalStatus status, std::string message,
              nlohmann::ordered_json evidence = nlohmann::ordered_json::object());
    bool full_tier() const;

    Device& device_;
    const EvalRequest& request_;
    EvalReport report_;
    dsl::Program program_;
    std::optional<dsl::Program> baseline_;
    std::string device_key_;
    std::string canonical_;
    std::unique_ptr<Prepared> check_;    // loaded after correctness_full
    std::unique_ptr<Prepared> full_;     // the full shape (may be check_)
    std::optional<Problem> small_shape_, check_shape_;
    TensorData timing_inputs_;      // inputs of the last run (timing re-runs them)
    bool full_ready_ = false;       // the full shape is loaded and has run
    friend struct StoreSession;
};

}  // namespace kforge::eval::detail
