// The evaluation pipeline driver (eval/evaluate.h): static and compile gates, preparation of a
// program per shape, and the order of the gates. Correctness, audit, timing and anti-gaming
// gates are in evaluate_gates.cpp; the store in evaluate_store.cpp.
#include "eval/evaluate.h"

#include <cctype>
#include <filesystem>

#include "compile/compile.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate_internal.h"
#include "problem/work.h"
#include "sol/device.h"

namespace kforge::eval::detail {

namespace fs = std::filesystem;

Pipeline::Pipeline(Device& device, const EvalRequest& request)
    : device_(device), request_(request) {
    report_.device = device.info();
    report_.simulated = report_.device.simulated;
    report_.tier = request.tier == EvalTier::kProfile ? EvalTier::kFull : request.tier;
    device_key_ = report_.device.datasheet_key;
    report_.shapes_key = shapes_key(request.problem);
    if (auto w = count_work(request.problem); w.ok()) {
        report_.flops = w->flops();
        report_.bytes = w->bytes_fused;
    }
}

bool Pipeline::full_tier() const { return report_.tier == EvalTier::kFull; }

void Pipeline::pass(const std::string& gate, std::string message,
                    nlohmann::ordered_json evidence, bool skipped) {
    GateOutcome g{gate, true, skipped, EvalStatus::kPassed, std::move(message), std::move(evidence)};
    report_.gates.push_back(std::move(g));
}

bool Pipeline::fail(const std::string& gate, EvalStatus status, std::string message,
                    nlohmann::ordered_json evidence) {
    report_.status = status;
    report_.message = gate + ": " + message;
    report_.gates.push_back(GateOutcome{gate, false, false, status, message, std::move(evidence)});
    return false;
}

bool Pipeline::gate_static() {
    auto program = dsl::parse_program(request_.program_text, request_.program_file);
    if (!program) return fail("static", EvalStatus::kInvalidProgram, program.error().to_string());
    program_ = *program;
    report_.program_hash = dsl::program_hash(program_);
    dsl::DeviceLimits limits;
    if (auto spec = find_device(device_key_); spec.ok()) limits = dsl::device_limits(*spec);
    else if (report_.device.sm_count > 0) limits.sm_count = report_.device.sm_count;
    dsl::CheckOptions options;
    options.file_name = request_.program_file;
    options.source = request_.program_text;
    auto checked = dsl::check_program(program_, request_.problem, limits, options);
    if (!checked.ok()) {
        nlohmann::ordered_json errors = nlohmann::ordered_json::array();
        for (const Error& e : checked.errors) errors.push_back(e.to_string());
        return fail("static", EvalStatus::kInvalidProgram, checked.errors.front().to_string(),
                    {{"errors", errors}});
    }
    if (request_.baseline_program_text) {
        auto base = dsl::parse_program(*request_.baseline_program_text, "<baseline>");
        if (!base || !dsl::check_program(*base, request_.problem, limits).ok())
            return fail("static", EvalStatus::kInvalidProgram,
                        "the baseline program does not parse or check against the problem");
        baseline_ = *base;
    }
    pass("static", "program parses and computes the problem on " + limits.name,
         {{"program_hash", report_.program_hash}, {"warnings", checked.warnings}});
    return true;
}

std::unique_ptr<Prepared> Pipeline::prepare(const Problem& shape, const dsl::Program& program,
                                            const std::string& gate) {
    auto p = std::make_unique<Prepared>();
    p->problem = shape;
    codegen::LowerOptions lower;
    int cc_major = 9, cc_minor = 0;
    if (auto spec = find_device(device_key_); spec.ok()) {
        cc_major = spec->cc_major;
        cc_minor = spec->cc_minor;
    }
    lower.arch = "sm_" + std::to_string(cc_major * 10 + cc_minor) + (cc_major == 9 ? "a" : "");
    lower.sm_count = report_.device.sm_count > 0 ? report_.device.sm_count : 132;
    lower.program_hash = dsl::program_hash(program);
    auto lowered = codegen::lower_program(program, p->problem, lower);
    if (!lowered) {
        fail(gate, EvalStatus::kCompileFailed, "lowering: " + lowered.error().to_string());
        return nullptr;
    }
    p->lowered = std::move(*lowered);
    p->candidate.problem = &p->problem;
    p->candidate.program = &program;
    p->candidate.plan = p->lowered.plan;
    p->candidate.sim_fault = request_.sim_fault;
    p->candidate.run_timeout_s = request_.run_timeout_s;
    p->evidence["dims"] = shapes_key(shape);
    p->evidence["kernels"] = p->lowered.plan.kernels.size();
    if (report_.simulated) {
        p->evidence["compile"] = "skipped on the simulated device (lowered only)";
        return p;
    }
    compile::CompileOptions options = compile::default_compile_options(lower.arch);
    options.host_library = p->lowered.has_host_code;
    options.try_nvrtc = !p->lowered.uses_cutlass && !p->lowered.has_host_code;
    options.cache_dir = request_.compile_cache_dir;
    if (options.cache_dir.empty()) {
        fs::path dir = request_.work_dir.empty() ? fs::temp_directory_path() / "kforge-eval"
                                                 : fs::path(request_.work_dir);
        // Letters, digits and '_' only: nvcc passes the path inside comma/equals-separated
        // options (fatbinary reads "K=4096,M=..." as keywords).
        std::string name = lower.program_hash.substr(0, 16) + "_" + shapes_key(shape);
        for (char& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        options.out_dir = (dir / name).string();
        std::error_code ec;
        fs::create_directories(options.out_dir, ec);
    }
    auto built = compile::compile_cuda(p->lowered.cuda_source, options);
    if (!built) {
        report_.environment_error = true;
        fail(gate, EvalStatus::kNotSupported, "compile setup: " + built.error().to_string());
        return nullptr;
    }
    p->evidence["backend"] = std::string(compile::to_string(built->backend));
    p->evidence["cache_hit"] = built->cache_hit;
    p->evidence["time_compile_ns"] = built->time_compile_ns;
    if (built->status == compile::CompileStatus::kToolchainMissing) {
        report_.environment_error = true;
        fail(gate, EvalStatus::kNotSupported, "toolchain missing: " + built->log, p->evidence);
        return nullptr;
    }
    if (built->status != compile::CompileStatus::kOk) {
        std::string log = built->log.size() > 4000 ? built->log.substr(0, 4000) : built->log;
        p->evidence["log"] = log;
        fail(gate, EvalStatus::kCompileFailed, std::string(compile::to_string(built->status)),
             p->evidence);
        return nullptr;
    }
    p->candidate.cubin_path = built->cubin_path;
    p->candidate.host_library_path = built->host_library_path;
    return p;
}

bool Pipeline::load(Prepared& p, const std::string& gate) {
    Status s = device_.load(p.candidate);
    if (s.ok()) return true;
    const std::string& where = s.error().where;
    EvalStatus status = where == "resources_exceeded" ? EvalStatus::kResourcesExceeded
                                                      : EvalStatus::kLaunchFailed;
    return fail(gate, status, "load: " + s.error().to_string(), p.evidence);
}

bool Pipeline::gate_compile() {
    full_ = prepare(request_.problem, program_, "compile");
    if (!full_) return false;
    report_.cuda_source = full_->lowered.cuda_source;
    report_.plan_json = codegen::to_json(full_->lowered.plan).dump(2);
    pass("compile", report_.simulated ? "lowered (compile skipped on the simulated device)"
                                      : "lowered and compiled",
         full_->evidence, report_.simulated);
    return true;
}

EvalReport Pipeline::run() {
    if (!gate_static()) return report_;
    if (report_.tier == EvalTier::kStatic || report_.tier == EvalTier::kCostModel) return report_;
    if (!gate_compile()) return report_;
    if (report_.tier == EvalTier::kCompile) return report_;
    auto small = small_shape(request_.problem, request_.program_text, device_key_,
                             kSmallShapeMaxFlops);
    if (!small) {
        fail("correctness_small", EvalStatus::kNotSupported, small.error().to_string());
        return report_;
    }
    small_shape_ = *small;
    std::unique_ptr<Prepared> small_prepared;
    if (!gate_correctness("correctness_small", *small, full_tier() ? 2 : 1, request_.seed * 1000,
                          small_prepared))
        return report_;
    small_prepared.reset();
    auto check = check_shape(request_.problem, *small, request_.program_text, device_key_);
    if (!check) {
        fail("correctness_full", EvalStatus::kNotSupported, check.error().to_string());
        return report_;
    }
    check_shape_ = *check;
    if (!gate_correctness("correctness_full", *check, full_tier() ? 5 : 2,
                          request_.seed * 1000 + 100, check_))
        return report_;
    if (!gate_full_shape()) return report_;
    if (!gate_timing()) return report_;
    gate_sol_gaming();
    return report_;
}

}  // namespace kforge::eval::detail
