// Parallel precompile of a batch of programs into the compile cache (eval/precompile.h).
#include "eval/precompile.h"

#include <algorithm>
#include <chrono>
#include <map>
#include <thread>

#include "builder/build.h"
#include "common/parallel.h"
#include "compile/failure_message.h"
#include "eval/evaluate.h"

namespace kforge::eval {
namespace {

// One distinct compile unit of the batch: the first program shape that needs it, lowered.
struct Job {
    builder::BuiltCandidate candidate;  // kLowered until run_jobs compiles it
    std::string shape;                  // its shapes_key
    bool compiled = false;
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

// Builds one program with no_build at every shape its evaluation lowers at (the first one
// parses and checks it), adding its compile units to `jobs` (deduplicated through `index` by
// builder::compile_unit_key: everything the compile cache key depends on).
Plan plan_program(const PrecompileRequest& r, const std::string& text, const Target& target,
                  std::vector<Job>& jobs, std::map<std::string, size_t>& index) {
    Plan plan;
    builder::BuildOptions options;
    options.no_build = true;
    options.compile_cache_dir = r.compile_cache_dir;
    options.config_problem = &r.problem;  // as the evaluator: one source for every shape it can
    if (!compiles(r.tier) || r.device.simulated) {
        options.check_only = true;  // nothing will be lowered or compiled
        builder::BuiltCandidate checked = builder::build(text, r.problem, target, options);
        if (checked.status == builder::BuildStatus::kInvalidProgram) {
            plan.out.status = PrecompileStatus::kInvalidProgram;
            plan.out.message = checked.message;
            return plan;
        }
        plan.out.status = PrecompileStatus::kSkipped;
        plan.out.message = r.device.simulated
                               ? "the simulated device lowers only: nothing to compile"
                               : "tier " + std::string(to_string(r.tier)) + " compiles nothing";
        return plan;
    }
    std::optional<dsl::Program> program;  // parsed and checked by the first build
    for (const Problem& shape : shapes_for(r, text, plan.early_failure)) {
        std::string dims = shapes_key(shape);
        builder::BuiltCandidate built = program
                                            ? builder::build(*program, shape, target, options)
                                            : builder::build(text, shape, target, options);
        if (built.status == builder::BuildStatus::kInvalidProgram) {
            plan.out.status = PrecompileStatus::kInvalidProgram;
            plan.out.message = built.message;
            return plan;
        }
        if (!program) {
            program = built.program;
            options.check = false;  // checked once, against the full shape, as the evaluator
        }
        if (built.status != builder::BuildStatus::kLowered) {
            plan.early_failure = "lowering at " + dims + ": " + built.message;
            break;
        }
        plan.out.shapes.push_back(dims);
        auto [it, fresh] = index.emplace(builder::compile_unit_key(built), jobs.size());
        if (fresh) jobs.push_back(Job{std::move(built), dims});
        if (std::find(plan.jobs.begin(), plan.jobs.end(), it->second) == plan.jobs.end())
            plan.jobs.push_back(it->second);
    }
    return plan;
}

void run_jobs(std::vector<Job>& jobs, int workers) {
    parallel_for(jobs.size(), workers, [&](size_t i) {
        builder::compile_lowered(jobs[i].candidate);
        jobs[i].compiled = true;
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
        const builder::BuiltCandidate& b = job.candidate;
        if (!job.compiled || !b.compiled) {
            if (failure.empty())
                failure = "compile setup at " + job.shape + ": " +
                          (job.compiled ? b.message : std::string("not compiled"));
            continue;
        }
        const compile::CompileResult& c = *b.compiled;
        if (c.cache_hit) ++out.cache_hits;
        out.time_compile_ns += c.time_compile_ns;
        if (c.status == compile::CompileStatus::kOk || !failure.empty()) continue;
        // the compiler's own words: its first error lines, a missing header named, the command
        failure = compile::failure_message(c) + "\n  (compiled at " + job.shape + ")";
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

int compile_units(const PrecompileRequest& request) {
    const Target target = target_for_device(request.device.datasheet_key, request.device.sm_count);
    std::vector<Job> jobs;
    std::map<std::string, size_t> index;
    for (const std::string& text : request.program_texts)
        plan_program(request, text, target, jobs, index);
    return static_cast<int>(jobs.size());
}

Expected<PrecompileReport> precompile(const PrecompileRequest& request) {
    if (request.compile_cache_dir.empty())
        return make_error("precompile", "no compile cache directory: precompiled results would "
                                        "not be found by the evaluations");
    auto t0 = std::chrono::steady_clock::now();
    const Target target = target_for_device(request.device.datasheet_key, request.device.sm_count);
    std::vector<Job> jobs;
    std::map<std::string, size_t> index;
    std::vector<Plan> plans;
    for (const std::string& text : request.program_texts)
        plans.push_back(plan_program(request, text, target, jobs, index));
    int workers = request.jobs > 0
                      ? request.jobs
                      : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    workers = std::min<int>(workers, static_cast<int>(jobs.size()));
    run_jobs(jobs, workers);

    PrecompileReport report;
    report.jobs = workers;
    report.sources = static_cast<int>(jobs.size());
    for (const Job& job : jobs)
        if (job.candidate.compiled && job.candidate.compiled->cache_hit) ++report.cache_hits;
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
