// Parallel precompile of a batch of programs into the compile cache (eval/precompile.h).
#include "eval/precompile.h"

#include <algorithm>
#include <chrono>
#include <exception>
#include <map>
#include <thread>

#include "common/parallel.h"
#include "dsl/check.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "eval/evaluate.h"
#include "sol/device.h"

namespace kforge::eval {
namespace {

// One distinct compile unit of the batch.
struct Job {
    std::string source;
    compile::CompileOptions options;
    std::string shape;  // shapes_key of the first program shape that needs it
    std::optional<Expected<compile::CompileResult>> result;
};

// What one program needs: its compile units, in the evaluator's order.
struct Plan {
    PrecompiledProgram out;
    std::vector<size_t> jobs;
    std::string early_failure;  // lowering / shape selection: evaluation would stop there
};

bool compiles(EvalTier tier) { return tier != EvalTier::kStatic && tier != EvalTier::kCostModel; }

bool has_correctness_gates(EvalTier tier) {
    return tier == EvalTier::kQuick || tier == EvalTier::kFull || tier == EvalTier::kProfile;
}

dsl::DeviceLimits limits_for(const DeviceInfo& device) {
    dsl::DeviceLimits limits;
    if (auto spec = find_device(device.datasheet_key); spec.ok()) limits = dsl::device_limits(*spec);
    else if (device.sm_count > 0) limits.sm_count = device.sm_count;
    return limits;
}

// The shapes an evaluation at `tier` lowers at, in its order; an error message when the
// evaluator's shape selection would fail (the shapes before it are still returned).
std::vector<Problem> shapes_for(const PrecompileRequest& r, const std::string& text,
                                std::string& failure) {
    std::vector<Problem> shapes{r.problem};
    if (!has_correctness_gates(r.tier)) return shapes;
    const std::string& key = r.device.datasheet_key;
    auto small = small_shape(r.problem, text, key, kSmallShapeMaxFlops);
    if (!small) {
        failure = "correctness_small: " + small.error().to_string();
        return shapes;
    }
    auto check = check_shape(r.problem, *small, text, key);
    for (const Problem& s : {*small, check ? *check : *small})
        if (std::none_of(shapes.begin(), shapes.end(),
                         [&](const Problem& p) { return p.dims == s.dims; }))
            shapes.push_back(s);
    if (!check) failure = "correctness_full: " + check.error().to_string();
    return shapes;
}

// Parses, checks and lowers one program, adding its compile units to `jobs` (deduplicated
// through `index`, keyed by everything the compile cache key depends on).
Plan plan_program(const PrecompileRequest& r, const std::string& text,
                  const dsl::DeviceLimits& limits, std::vector<Job>& jobs,
                  std::map<std::string, size_t>& index) {
    Plan plan;
    auto program = dsl::parse_program(text, "<program>");
    if (!program) {
        plan.out.status = PrecompileStatus::kInvalidProgram;
        plan.out.message = program.error().to_string();
        return plan;
    }
    dsl::CheckOptions check_options;
    check_options.source = text;
    auto checked = dsl::check_program(*program, r.problem, limits, check_options);
    if (!checked.ok()) {
        plan.out.status = PrecompileStatus::kInvalidProgram;
        plan.out.message = checked.errors.front().to_string();
        return plan;
    }
    if (!compiles(r.tier) || r.device.simulated) {
        plan.out.status = PrecompileStatus::kSkipped;
        plan.out.message = r.device.simulated
                               ? "the simulated device lowers only: nothing to compile"
                               : "tier " + std::string(to_string(r.tier)) + " compiles nothing";
        return plan;
    }
    codegen::LowerOptions lower = lower_options_for(r.device, *program);
    lower.config_problem = &r.problem;  // as the evaluator: one source for every shape it can
    for (const Problem& shape : shapes_for(r, text, plan.early_failure)) {
        std::string dims = shapes_key(shape);
        auto lowered = codegen::lower_program(*program, shape, lower);
        if (!lowered) {
            plan.early_failure = "lowering at " + dims + ": " + lowered.error().to_string();
            break;
        }
        plan.out.shapes.push_back(dims);
        compile::CompileOptions options =
            compile_options_for(*lowered, lower.arch, r.compile_cache_dir);
        std::string key = options.arch + (options.host_library ? "|host" : "|device") +
                          (options.try_nvrtc ? "|nvrtc|" : "|nvcc|") + lowered->cuda_source;
        auto [it, fresh] = index.emplace(std::move(key), jobs.size());
        if (fresh) jobs.push_back(Job{std::move(lowered->cuda_source), options, dims, {}});
        if (std::find(plan.jobs.begin(), plan.jobs.end(), it->second) == plan.jobs.end())
            plan.jobs.push_back(it->second);
    }
    return plan;
}

void run_jobs(std::vector<Job>& jobs, int workers) {
    parallel_for(jobs.size(), workers, [&](size_t i) {
        try {
            jobs[i].result = compile::compile_cuda(jobs[i].source, jobs[i].options);
        } catch (const std::exception& e) {
            jobs[i].result = make_error("precompile", std::string("compile: ") + e.what());
        }
    });
}

// The program's outcome from its compile units (the first failing one decides, as in the
// evaluator), then any lowering / shape-selection failure that stopped its plan early.
void settle(Plan& plan, const std::vector<Job>& jobs) {
    PrecompiledProgram& out = plan.out;
    std::string failure;
    for (size_t j : plan.jobs) {
        const Job& job = jobs[j];
        ++out.sources;
        if (!job.result || !job.result->ok()) {
            if (failure.empty())
                failure = "compile setup at " + job.shape + ": " +
                          (job.result ? job.result->error().to_string() : "not compiled");
            continue;
        }
        const compile::CompileResult& c = **job.result;
        if (c.cache_hit) ++out.cache_hits;
        out.time_compile_ns += c.time_compile_ns;
        if (c.status == compile::CompileStatus::kOk || !failure.empty()) continue;
        std::string log = c.log.size() > 2000 ? c.log.substr(0, 2000) : c.log;
        failure = c.status == compile::CompileStatus::kToolchainMissing
                      ? "toolchain missing: " + log
                      : std::string(compile::to_string(c.status)) + " at " + job.shape + ": " + log;
    }
    if (failure.empty()) failure = plan.early_failure;
    out.status = failure.empty() ? PrecompileStatus::kCompiled : PrecompileStatus::kFailed;
    out.message = failure;
}

}  // namespace

std::string_view to_string(PrecompileStatus s) {
    switch (s) {
        case PrecompileStatus::kCompiled: return "compiled";
        case PrecompileStatus::kSkipped: return "skipped";
        case PrecompileStatus::kInvalidProgram: return "invalid_program";
        case PrecompileStatus::kFailed: return "failed";
    }
    return "failed";
}

std::optional<PrecompileStatus> precompile_status_from_string(std::string_view s) {
    for (PrecompileStatus v : {PrecompileStatus::kCompiled, PrecompileStatus::kSkipped,
                               PrecompileStatus::kInvalidProgram, PrecompileStatus::kFailed})
        if (to_string(v) == s) return v;
    return std::nullopt;
}

std::string arch_for_device(const std::string& device_key) {
    int cc_major = 9, cc_minor = 0;
    if (auto spec = find_device(device_key); spec.ok()) {
        cc_major = spec->cc_major;
        cc_minor = spec->cc_minor;
    }
    return "sm_" + std::to_string(cc_major * 10 + cc_minor) + (cc_major == 9 ? "a" : "");
}

codegen::LowerOptions lower_options_for(const DeviceInfo& device, const dsl::Program& program) {
    codegen::LowerOptions lower;
    lower.arch = arch_for_device(device.datasheet_key);
    lower.sm_count = device.sm_count > 0 ? device.sm_count : 132;
    lower.program_hash = dsl::program_hash(program);
    return lower;
}

compile::CompileOptions compile_options_for(const codegen::Lowered& lowered,
                                            const std::string& arch,
                                            const std::string& cache_dir) {
    compile::CompileOptions options = compile::default_compile_options(arch);
    options.host_library = lowered.has_host_code;
    options.try_nvrtc = !lowered.uses_cutlass && !lowered.has_host_code;
    options.cache_dir = cache_dir;
    return options;
}

int compile_units(const PrecompileRequest& request) {
    dsl::DeviceLimits limits = limits_for(request.device);
    std::vector<Job> jobs;
    std::map<std::string, size_t> index;
    for (const std::string& text : request.program_texts)
        plan_program(request, text, limits, jobs, index);
    return static_cast<int>(jobs.size());
}

Expected<PrecompileReport> precompile(const PrecompileRequest& request) {
    if (request.compile_cache_dir.empty())
        return make_error("precompile", "no compile cache directory: precompiled results would "
                                        "not be found by the evaluations");
    auto t0 = std::chrono::steady_clock::now();
    dsl::DeviceLimits limits = limits_for(request.device);
    std::vector<Job> jobs;
    std::map<std::string, size_t> index;
    std::vector<Plan> plans;
    for (const std::string& text : request.program_texts)
        plans.push_back(plan_program(request, text, limits, jobs, index));
    int workers = request.jobs > 0
                      ? request.jobs
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers = std::min<int>(workers, static_cast<int>(jobs.size()));
    run_jobs(jobs, workers);

    PrecompileReport report;
    report.jobs = workers;
    report.sources = static_cast<int>(jobs.size());
    for (const Job& job : jobs)
        if (job.result && job.result->ok() && (*job.result)->cache_hit) ++report.cache_hits;
    for (Plan& plan : plans) {
        bool planned = plan.out.status != PrecompileStatus::kInvalidProgram &&
                       plan.out.status != PrecompileStatus::kSkipped;
        if (planned) settle(plan, jobs);
        report.programs.push_back(std::move(plan.out));
    }
    report.time_wall_ns = std::chrono::duration_cast<std::chrono::nanoseconds>(
                              std::chrono::steady_clock::now() - t0)
                              .count();
    return report;
}

}  // namespace kforge::eval
