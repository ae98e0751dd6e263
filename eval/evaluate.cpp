// The evaluation pipeline driver (eval/evaluate.h): static and compile gates, preparation of a
// program per shape, and the order of the gates. Correctness, audit, timing and anti-gaming
// gates are in evaluate_gates.cpp; the store in evaluate_store.cpp.
#include "eval/evaluate.h"

#include <cctype>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "builder/build.h"
#include "common/atomic_file.h"
#include "common/hash.h"
#include "compile/failure_message.h"
#include "dsl/printer.h"
#include "eval/evaluate_internal.h"
#include "problem/work.h"

namespace kforge::eval::detail {

namespace fs = std::filesystem;

// Where a GPU evaluation with neither a work folder nor a compile cache puts its compile
// outputs: one private folder per process (mkdtemp, 0700), made on first use, never the shared
// fixed <tmp>/kforge-eval another user could pre-create (issue 31, item 9). Empty when none can
// be made (the build then fails naming the folder).
const fs::path& private_eval_dir() {
    static const fs::path dir = [] {
        auto d = make_private_temp_dir("kforge-eval");
        return d ? *d : fs::path();
    }();
    return dir;
}

Pipeline::Pipeline(Device& device, const EvalRequest& request, ReferenceCache* cache)
    : device_(device), request_(request), cache_(cache) {
    if (!cache_) {
        own_cache_ = std::make_unique<ReferenceCache>();
        cache_ = own_cache_.get();
    }
    run_start_ = gate_start_ = std::chrono::steady_clock::now();
    report_.device = device.info();
    report_.simulated = report_.device.simulated;
    report_.tier = request.tier == EvalTier::kProfile ? EvalTier::kFull : request.tier;
    device_key_ = report_.device.datasheet_key;
    target_ = target_for_device(device_key_, report_.device.sm_count);
    report_.shapes_key = shapes_key(request.problem);
    if (auto w = count_work(request.problem); w.ok()) {
        report_.flops = w->flops();
        report_.bytes = w->bytes_fused;
    }
}

bool Pipeline::full_tier() const { return report_.tier == EvalTier::kFull; }

}  // namespace kforge::eval::detail

namespace kforge::eval {

std::string simulated_gap(const std::string& gate) {
    if (gate == "compile") return "the CUDA compile: the simulated device lowers the program only";
    if (gate.rfind("correctness_", 0) == 0 || gate == "audit")
        return std::string(kNumericsNotChecked) +
               ": the device computes the problem with the fp64 interpreter (outputs rounded to "
               "their dtypes), not the program; the checker proved that the program computes the "
               "problem and that its casts keep the precision policy";
    if (gate == "full_shape") return "a run at the full shape";
    if (gate == "timing" || gate == "sol_gaming")
        return "a measured time: the time is the analytic model's estimate (perfmodel/)";
    return "";
}

}  // namespace kforge::eval

namespace kforge::eval::detail {

// Every gate's wall time is the time since the previous gate was recorded (or the start). On the
// simulated device a gate that cannot check there what it checks on a GPU says so in its
// evidence ("not_checked", simulated_gap) and the correctness gates in their message.
void Pipeline::record(GateOutcome g) {
    g.wall_ms = ms_since(gate_start_);
    if (!g.evidence.is_object()) g.evidence = nlohmann::ordered_json::object();
    if (report_.simulated) {
        const std::string gap = simulated_gap(g.gate);
        if (!gap.empty()) g.evidence["not_checked"] = gap;
        const bool numerics = g.gate.rfind("correctness_", 0) == 0 || g.gate == "audit";
        if (numerics && g.message.find(kNumericsNotChecked) == std::string::npos)
            g.message += std::string(" (") + kNumericsNotChecked + ")";
    }
    g.evidence["wall_ms"] = g.wall_ms;
    report_.gates.push_back(std::move(g));
    gate_start_ = std::chrono::steady_clock::now();
}

void Pipeline::pass(const std::string& gate, std::string message,
                    nlohmann::ordered_json evidence, bool skipped) {
    record(GateOutcome{gate, true, skipped, EvalStatus::kPassed, std::move(message),
                       std::move(evidence)});
}

bool Pipeline::fail(const std::string& gate, EvalStatus status, std::string message,
                    nlohmann::ordered_json evidence) {
    report_.status = status;
    report_.message = gate + ": " + message;
    record(GateOutcome{gate, false, false, status, message, std::move(evidence)});
    return false;
}

// A prebuilt candidate: the plan must name only the problem's tensors and its own buffers, and
// the cubin must exist. No program is checked (there is none to check).
bool Pipeline::gate_static_prebuilt() {
    const PrebuiltCandidate& pb = *request_.prebuilt;
    std::ifstream in(pb.cubin_path, std::ios::binary);
    if (!in) return fail("static", EvalStatus::kInvalidProgram,
                         "cannot read the prebuilt cubin " + pb.cubin_path);
    std::stringstream bytes;
    bytes << in.rdbuf();
    report_.program_hash = "prebuilt-" + sha256_hex(bytes.str()).substr(0, 24);
    if (pb.plan.kernels.empty())
        return fail("static", EvalStatus::kInvalidProgram, "the launch plan has no kernels");
    std::set<std::string> names;
    for (const Tensor& t : request_.problem.tensors)
        if (t.role != TensorRole::kIntermediate) names.insert(t.name);
    for (const codegen::BufferDecl& b : pb.plan.buffers) names.insert(b.name);
    for (const codegen::KernelLaunch& k : pb.plan.kernels)
        for (const codegen::KernelParam& prm : k.params)
            if ((prm.kind == codegen::ParamKind::kTensor ||
                 prm.kind == codegen::ParamKind::kWorkspace) && !names.count(prm.name))
                return fail("static", EvalStatus::kInvalidProgram,
                            "plan kernel " + k.name + " names unknown tensor '" + prm.name + "'");
    pass("static", "prebuilt cubin with a launch plan of " +
                       std::to_string(pb.plan.kernels.size()) + " kernel(s); no program to check",
         {{"program_hash", report_.program_hash}, {"cubin", pb.cubin_path}});
    return true;
}

bool Pipeline::gate_static() {
    if (request_.prebuilt) return gate_static_prebuilt();
    builder::BuildOptions check_only;
    check_only.check_only = true;
    check_only.file_name = request_.program_file;
    builder::BuiltCandidate checked =
        builder::build(request_.program_text, request_.problem, target_, check_only);
    if (!checked.parsed)
        return fail("static", EvalStatus::kInvalidProgram, checked.message);
    program_ = checked.program;
    report_.program_hash = checked.program_hash;
    if (!checked.ok()) {
        nlohmann::ordered_json errors = nlohmann::ordered_json::array();
        for (const Error& e : checked.errors) errors.push_back(e.to_string());
        return fail("static", EvalStatus::kInvalidProgram, checked.message, {{"errors", errors}});
    }
    if (request_.baseline_program_text) {
        check_only.file_name = "<baseline>";
        builder::BuiltCandidate base = builder::build(*request_.baseline_program_text,
                                                      request_.problem, target_, check_only);
        if (!base.ok())
            return fail("static", EvalStatus::kInvalidProgram,
                        "the baseline program does not parse or check against the problem");
        baseline_ = base.program;
    }
    const dsl::DeviceLimits limits = builder::check_limits(target_);
    pass("static", "program parses and computes the problem on " + limits.name,
         {{"program_hash", report_.program_hash}, {"warnings", checked.warnings}});
    return true;
}

std::unique_ptr<Prepared> Pipeline::prepare(const Problem& shape, const dsl::Program& program,
                                            const std::string& gate) {
    auto p = std::make_unique<Prepared>();
    p->problem = shape;
    builder::BuildOptions options;
    options.check = false;  // gate_static checked it
    options.no_build = report_.simulated;
    options.config_problem = &request_.problem;  // the correctness shapes run the timed source
    options.compile_cache_dir = request_.compile_cache_dir;
    if (options.compile_cache_dir.empty() && !report_.simulated) {
        fs::path dir =
            request_.work_dir.empty() ? private_eval_dir() : fs::path(request_.work_dir);
        if (dir.empty()) {
            fail(gate, EvalStatus::kCompileFailed,
                 "no private temporary folder for the compile outputs (TMPDIR unwritable?); "
                 "give a work folder or a compile cache");
            return nullptr;
        }
        // Letters, digits and '_' only: nvcc passes the path inside comma/equals-separated
        // options (fatbinary reads "K=4096,M=..." as keywords).
        std::string name = dsl::program_hash(program).substr(0, 16) + "_" + shapes_key(shape);
        for (char& ch : name)
            if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
        options.out_dir = (dir / name).string();
    }
    builder::BuiltCandidate built = builder::build(program, p->problem, target_, options);
    if (built.status == builder::BuildStatus::kLoweringFailed) {
        fail(gate, EvalStatus::kCompileFailed, "lowering: " + built.message);
        return nullptr;
    }
    p->lowered = std::move(built.lowered);
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
    if (built.status == builder::BuildStatus::kCompileSetupFailed) {
        report_.environment_error = true;
        fail(gate, EvalStatus::kNotSupported, "compile setup: " + built.message);
        return nullptr;
    }
    const compile::CompileResult& c = *built.compiled;
    p->evidence["backend"] = std::string(compile::to_string(c.backend));
    p->evidence["cache_hit"] = c.cache_hit;
    p->evidence["time_compile_ns"] = c.time_compile_ns;
    if (built.status == builder::BuildStatus::kToolchainMissing) {
        report_.environment_error = true;
        fail(gate, EvalStatus::kNotSupported, "toolchain missing: " + c.log, p->evidence);
        return nullptr;
    }
    if (built.status != builder::BuildStatus::kBuilt) {
        std::string log = c.log.size() > 4000 ? c.log.substr(0, 4000) : c.log;
        p->evidence["log"] = log;
        // A compile that timed out, was killed (the OOM killer) or hit a full disk says nothing
        // about the candidate: not recorded, so the store's evaluation cache cannot keep it.
        if (built.status == builder::BuildStatus::kCompileTimedOut ||
            built.status == builder::BuildStatus::kCompileAborted)
            report_.environment_error = true;
        fail(gate, EvalStatus::kCompileFailed, compile::failure_message(c), p->evidence);
        return nullptr;
    }
    p->candidate.cubin_path = c.cubin_path;
    p->candidate.host_library_path = c.host_library_path;
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
    if (request_.prebuilt) {
        if (report_.simulated)
            return fail("compile", EvalStatus::kNotSupported,
                        "the simulated device cannot run a prebuilt cubin");
        full_ = std::make_unique<Prepared>();
        full_->problem = request_.problem;
        full_->candidate.problem = &full_->problem;
        full_->candidate.plan = request_.prebuilt->plan;
        full_->candidate.cubin_path = request_.prebuilt->cubin_path;
        full_->candidate.run_timeout_s = request_.run_timeout_s;
        full_->evidence["dims"] = report_.shapes_key;
        report_.plan_json = codegen::to_json(request_.prebuilt->plan).dump(2);
        pass("compile", "prebuilt cubin (nothing to compile)", full_->evidence, true);
        return true;
    }
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
    auto finish = [&]() -> EvalReport {
        report_.wall_ms = ms_since(run_start_);
        return report_;
    };
    if (!gate_static()) return finish();
    if (report_.tier == EvalTier::kStatic || report_.tier == EvalTier::kCostModel) return finish();
    if (!gate_compile()) return finish();
    if (report_.tier == EvalTier::kCompile) return finish();
    if (request_.prebuilt) {
        // The plan is bound to the full shape: correctness (and the audit) run there.
        pass("correctness_small", "skipped: a prebuilt plan is bound to the full shape " +
                                      report_.shapes_key, {}, true);
        check_shape_ = request_.problem;
        int rounds = full_tier() ? 5 : 2;
        uint64_t seed_base = request_.seed * 1000 + 100;
        bool ok = gate_correctness("correctness_full", request_.problem, rounds, seed_base, check_);
        if (!ok && gpu_reference_failed_quietly())  // again against the CPU interpreter
            ok = gate_correctness("correctness_full", request_.problem, rounds, seed_base, check_);
        if (!ok) return finish();
    } else {
        // The gates' shapes, rounds and seeds come from correctness_gates, the list the
        // warm-up (warm_cases) builds its cases from.
        bool checked_on_gpu = false;
        for (const CorrectnessGatePlan& g :
             correctness_gates(request_.problem, request_.program_text, device_key_,
                               request_.seed, report_.tier, use_gpu_reference(request_.problem))) {
            if (!g.error.empty()) {
                fail(g.gate, EvalStatus::kNotSupported, g.error);
                return finish();
            }
            std::unique_ptr<Prepared> prepared;
            if (g.gate == "correctness_small") {
                small_shape_ = g.shape;
                if (!reuse_gate(g.gate, g.shape, g.seed_base) &&
                    !gate_correctness(g.gate, g.shape, g.rounds, g.seed_base, prepared))
                    return finish();
            } else if (g.gate == "correctness_hidden") {
                if (!gate_correctness(g.gate, g.shape, g.rounds, g.seed_base, prepared))
                    return finish();
            } else if (g.gpu_reference) {
                // The real full shape against the GPU reference; if that reference fails, the
                // fallback gate (correctness_full at the check shape) comes next.
                check_shape_ = g.shape;
                checked_on_gpu = gate_correctness(g.gate, g.shape, g.rounds, g.seed_base, check_);
                if (!checked_on_gpu && !gpu_reference_failed_quietly()) return finish();
            } else if (!checked_on_gpu) {
                check_shape_ = g.shape;
                if (!gate_correctness(g.gate, g.shape, g.rounds, g.seed_base, check_))
                    return finish();
                if (!gate_full_shape()) return finish();
            }
        }
    }
    if (!gate_timing()) return finish();
    gate_sol_gaming();
    return finish();
}

std::unique_ptr<Prepared> Pipeline::prepare_full() {
    if (!gate_static() || !gate_compile()) return nullptr;
    return std::move(full_);
}

}  // namespace kforge::eval::detail
