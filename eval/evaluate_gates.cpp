// The measuring gates of the pipeline (eval/evaluate.h): correctness rounds, audit, full-shape
// sanity, timing (optionally interleaved with a baseline) and the SOL gaming check.
#include <chrono>
#include <cmath>

#include "eval/evaluate_internal.h"
#include "eval/gates.h"
#include "problem/interpret.h"

namespace kforge::eval::detail {
namespace {

bool has_f16(const Problem& p) {
    for (const Tensor& t : p.tensors)
        if (t.dtype == DType::kF16) return true;
    return false;
}

}  // namespace

TensorData make_inputs(const Problem& shape, Distribution d, uint64_t seed) {
    // generate() spreads a large tensor over every core itself (problem/inputs.h).
    const bool f16 = has_f16(shape);
    TensorData inputs;
    for (const Tensor* t : shape.graph_inputs()) {
        std::vector<double> v = generate_input(shape, *t, d, seed);
        const Distribution drawn = d == Distribution::kSpecified ? t->distribution : d;
        const bool scale = drawn == Distribution::kHeavyTailed && f16;
        const bool is_index = t->dtype == DType::kI32 || t->dtype == DType::kI64 ||
                              t->dtype == DType::kBool;  // indices and masks stay as drawn
        if (scale && !is_index)
            for (double& x : v) x = round_to_dtype(x / 64.0, t->dtype);
        inputs[t->name] = std::move(v);
    }
    return inputs;
}

std::shared_ptr<const CachedCase> timing_case(ReferenceCache& cache, const Problem& shape,
                                              uint64_t seed) {
    const uint64_t timing_seed = seed + 4242;
    return cache.get(
        shape, Distribution::kSpecified, timing_seed,
        [&] { return make_inputs(shape, Distribution::kSpecified, timing_seed); }, nullptr);
}

bool Pipeline::use_gpu_reference(const Problem& shape) const {
    return !device_.reference_kind().empty() && !gpu_reference_error_ &&
           shape.dims == request_.problem.dims;
}

bool Pipeline::gpu_reference_failed_quietly() const {
    return gpu_reference_error_.has_value() && report_.status == EvalStatus::kPassed;
}

// The fp64 reference of `inputs`: the CPU interpreter's, or with `gpu_reference` the device's
// (its compile and run times into `gpu_evidence`, a lost context into `context_lost`).
Expected<TensorData> compute_reference(Device& device, const Problem& shape,
                                       const TensorData& inputs, bool gpu_reference,
                                       nlohmann::ordered_json& gpu_evidence, bool& context_lost) {
    if (!gpu_reference) return interpret(shape, inputs);
    ReferenceResult g = device.reference(shape, inputs);
    gpu_evidence = {{"compile_ms", g.time_compile_ms},
                    {"run_ms", g.time_run_ms},
                    {"module_cached", g.module_cached}};
    if (!g.ok()) {
        context_lost = g.context_lost;
        return make_error("", g.error);
    }
    return std::move(g.outputs);
}

FetchedCase fetch_case(Device& device, ReferenceCache& cache, const Problem& shape,
                       Distribution d, uint64_t seed, bool gpu_reference) {
    FetchedCase f;
    int64_t misses = cache.stats().reference_misses;
    auto make_reference = [&](const TensorData& inputs) {
        return compute_reference(device, shape, inputs, gpu_reference, f.gpu_evidence,
                                 f.context_lost);
    };
    f.c = cache.get(
        shape, d, seed, [&] { return make_inputs(shape, d, seed); }, make_reference,
        gpu_reference ? kGpuReferenceKind : kCpuReferenceKind);
    f.computed = cache.stats().reference_misses > misses;
    return f;
}

RoundResult Pipeline::round(const Problem& shape, Distribution d, uint64_t seed,
                            bool gpu_reference) {
    RoundResult r;
    auto t0 = std::chrono::steady_clock::now();
    std::string_view kind = gpu_reference ? kGpuReferenceKind : kCpuReferenceKind;
    FetchedCase f = fetch_case(device_, *cache_, shape, d, seed, gpu_reference);
    const std::shared_ptr<const CachedCase>& c = f.c;
    const nlohmann::ordered_json& gpu_evidence = f.gpu_evidence;
    const bool lost = f.context_lost;
    r.evidence["distribution"] = std::string(to_string(d));
    r.evidence["seed"] = seed;
    r.evidence["reference_kind"] = std::string(kind);
    r.evidence["reference"] = f.computed ? "computed" : "cached";
    r.evidence["reference_ms"] = ms_since(t0);
    if (!gpu_evidence.is_null()) r.evidence["gpu_reference"] = gpu_evidence;
    if (!c->reference) {
        r.status = EvalStatus::kNotSupported;
        r.message = std::string(gpu_reference ? "the GPU reference failed: "
                                              : "the CPU reference failed: ") +
                    c->reference_error;
        r.gpu_reference_failed = gpu_reference;
        r.context_lost = lost;
        return r;
    }
    r.reference = c->reference;
    r.inputs = c->inputs;
    RunResult run = device_.run(*c->inputs, RunOptions{c->id, true});
    if (run.status != EvalStatus::kPassed) {
        r.status = run.status;
        r.message = run.message;
        r.context_lost = run.context_lost;
        return r;
    }
    r.outputs = std::move(run.outputs);
    return r;
}

// The conditioning recheck's sensitivity (eval/gates.h): the reference again on the round's
// inputs perturbed twice by the policy's unit roundoff, the same reference kind as the round's.
// Nothing (and why, in `evidence`) when a perturbed reference fails; a GPU reference that lost
// the context is the environment's failure, as in a round.
std::optional<TensorData> Pipeline::conditioning(const Problem& shape, const RoundResult& r,
                                                 uint64_t seed, bool gpu_reference,
                                                 nlohmann::ordered_json& evidence) {
    auto t0 = std::chrono::steady_clock::now();
    if (!r.inputs || !r.reference) return std::nullopt;
    const double u = unit_roundoff(shape.policy);
    std::vector<TensorData> others;
    for (uint64_t salt : {seed * 2 + 1, seed * 2 + 2}) {
        nlohmann::ordered_json gpu_evidence;
        bool lost = false;
        Expected<TensorData> ref =
            compute_reference(device_, shape, perturbed_inputs(shape, *r.inputs, u, salt),
                              gpu_reference, gpu_evidence, lost);
        if (!ref) {
            evidence["conditioning"] = {{"error", ref.error().to_string()}};
            if (lost) report_.context_lost = report_.environment_error = true;
            return std::nullopt;
        }
        others.push_back(std::move(*ref));
    }
    evidence["conditioning"] = {{"unit_roundoff", u},
                                {"perturbed_references", others.size()},
                                {"factor", kSensitivityFactor},
                                {"ms", ms_since(t0)}};
    return sensitivity_of(*r.reference, others);
}

// A passed correctness gate of an earlier evaluation (EvalRequest::reusable_gates) at the same
// dims and seeds stands in for running it again.
bool Pipeline::reuse_gate(const std::string& gate, const Problem& shape, uint64_t seed_base) {
    if (!full_tier()) return false;
    for (const GateOutcome& g : request_.reusable_gates) {
        if (g.gate != gate || !g.passed || g.skipped || !g.evidence.is_object()) continue;
        if (g.evidence.value("dims", "") != shapes_key(shape)) continue;
        if (g.evidence.value("seed_base", uint64_t{0}) != seed_base) continue;
        nlohmann::ordered_json evidence = g.evidence;
        evidence["reused"] = "outcome of an earlier evaluation of this program at these dims "
                             "and seeds (" + std::to_string(g.wall_ms) + " ms then)";
        pass(gate, g.message + " (reused)", evidence);
        return true;
    }
    return false;
}

bool Pipeline::gate_correctness(const std::string& gate, const Problem& shape, int rounds,
                                uint64_t seed_base, std::unique_ptr<Prepared>& keep) {
    bool is_full = shape.dims == request_.problem.dims;
    Prepared* prep = full_.get();
    if (!is_full) {
        keep = prepare(shape, program_, gate);
        if (!keep) return false;
        prep = keep.get();
    }
    if (!load(*prep, gate)) return false;
    bool gpu = gate == "correctness_full" && use_gpu_reference(shape);
    nlohmann::ordered_json evidence;
    evidence["dims"] = shapes_key(shape);
    evidence["seed_base"] = seed_base;
    evidence["reference_kind"] = std::string(gpu ? kGpuReferenceKind : kCpuReferenceKind);
    if (gate == "correctness_full" && gpu_reference_error_)
        evidence["gpu_reference_error"] = *gpu_reference_error_;
    if (gate == "correctness_full" && !is_full) {
        std::string why = gpu_reference_error_ ? "the GPU reference failed (gpu_reference_error)"
                          : report_.simulated  ? "the simulated device has no GPU reference"
                                               : "this device computes no GPU reference";
        evidence["note"] = "full-shape correctness was checked at the largest CPU-feasible shape " +
                           shapes_key(shape) + " (the hidden second shape), not at " +
                           report_.shapes_key + ": " + why;
    }
    RoundResult previous;
    for (int i = 0; i < rounds; ++i) {
        RoundResult r = round(shape, correctness_distribution(i), seed_base + i, gpu);
        r.evidence["round"] = i;
        if (r.status != EvalStatus::kPassed) {
            if (r.gpu_reference_failed) {
                gpu_reference_error_ = r.message;
                if (!r.context_lost) return false;  // the caller checks against the CPU instead
                report_.environment_error = true;   // not the candidate's fault
            }
            report_.context_lost = r.context_lost;
            evidence["rounds"].push_back(r.evidence);
            return fail(gate, r.status, r.message, evidence);
        }
        if (i > 0 && outputs_identical(previous.outputs, r.outputs) &&
            !outputs_identical(*previous.reference, *r.reference)) {
            evidence["rounds"].push_back(r.evidence);
            return fail(gate, EvalStatus::kIncorrect,
                        "outputs did not change when the inputs changed (round " +
                            std::to_string(i) + "): a cached or input-independent result",
                        evidence);
        }
        Comparison c = compare_outputs(shape, r.outputs, *r.reference);
        if (failed_on_bands_only(c)) {  // the problem's conditioning (eval/gates.h)
            r.evidence["comparison_before_recheck"] = to_json(c, shape.tolerance);
            auto sens = conditioning(shape, r, seed_base + i, gpu, r.evidence);
            if (sens) c = compare_outputs(shape, r.outputs, *r.reference, &*sens);
        }
        r.evidence["comparison"] = to_json(c, shape.tolerance);
        evidence["rounds"].push_back(r.evidence);
        if (!c.passed()) return fail(gate, c.status, c.message, evidence);
        previous = std::move(r);
    }
    pass(gate, std::to_string(rounds) + " round(s) match the " +
                   (gpu ? "GPU fp64 reference" : "fp64 CPU interpreter") + " at " +
                   shapes_key(shape), evidence);
    if (gate != "correctness_full") return true;
    if (!gate_audit(*prep, *previous.reference)) return false;
    full_ready_ = is_full;
    return true;
}

bool Pipeline::gate_audit(Prepared& prepared, const TensorData& reference) {
    TimingOptions options;
    options.warmup_iterations = 1;
    options.iterations = full_tier() ? 20 : 5;
    options.max_seconds = 5.0;
    uint64_t h = (request_.seed + 0x9e3779b97f4a7c15ULL) * 0xbf58476d1ce4e5b9ULL;
    options.audit_iteration = static_cast<int>((h >> 17) % options.iterations);
    TimingResult t = device_.time(options);
    nlohmann::ordered_json evidence{{"iteration", options.audit_iteration},
                                    {"iterations", options.iterations},
                                    {"dims", shapes_key(prepared.problem)}};
    if (t.status != EvalStatus::kPassed) {
        report_.context_lost = t.context_lost;
        return fail("audit", t.status, t.message, evidence);
    }
    if (t.audit_outputs.empty()) {
        pass("audit", "the audited iteration was not reached (time budget)", evidence, true);
        return true;
    }
    Comparison c = compare_outputs(prepared.problem, t.audit_outputs, reference);
    evidence["comparison"] = to_json(c, prepared.problem.tolerance);
    if (!c.passed())
        return fail("audit", c.status == EvalStatus::kPassed ? EvalStatus::kIncorrect : c.status,
                    "outputs after timed iteration " + std::to_string(options.audit_iteration) +
                        ": " + c.message, evidence);
    pass("audit", "outputs after timed iteration " + std::to_string(options.audit_iteration) +
                      " match the reference", evidence);
    return true;
}

}  // namespace kforge::eval::detail

namespace kforge::eval {

WarmReport warm_cases(Device& device, const WarmRequest& request, ReferenceCache& cache) {
    auto t0 = std::chrono::steady_clock::now();
    WarmReport w;
    const bool gpu = !device.reference_kind().empty();
    std::vector<CorrectnessGatePlan> gates =
        correctness_gates(request.problem, request.program_text, device.info().datasheet_key,
                          request.seed, request.tier, gpu);
    struct Case {
        const CorrectnessGatePlan* gate;
        int round;
    };
    std::vector<Case> cases;
    for (const CorrectnessGatePlan& g : gates) {
        if (!g.error.empty()) {
            w.error = g.gate + ": " + g.error;
            break;
        }
        if (g.fallback) continue;  // runs only after a failed GPU reference
        for (int i = 0; i < g.rounds; ++i) cases.push_back({&g, i});
    }
    w.cases_total = cases.size();
    for (uint64_t i = request.first_case; i < cases.size() && i - request.first_case <
                                                                  request.max_cases; ++i) {
        const CorrectnessGatePlan& g = *cases[i].gate;
        detail::FetchedCase f =
            detail::fetch_case(device, cache, g.shape, correctness_distribution(cases[i].round),
                               g.seed_base + static_cast<uint64_t>(cases[i].round),
                               g.gpu_reference);
        ++(f.computed ? w.computed : w.cached);
        if (!f.c->reference) {
            // Cached as failed: the gate meets the same failure (and falls back to the CPU
            // interpreter) without trying again. Later cases wait for the gates.
            w.error = g.gate + " case " + std::to_string(i) + ": the " +
                      (g.gpu_reference ? "GPU" : "CPU") + " reference failed: " +
                      f.c->reference_error;
            w.context_lost = f.context_lost;
            break;
        }
    }
    w.wall_ms = ms_since(t0);
    return w;
}

}  // namespace kforge::eval
