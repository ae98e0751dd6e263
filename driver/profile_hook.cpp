#include "driver/profile_hook.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>

#include "builder/build.h"
#include "dsl/parser.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "profile/diagnose.h"
#include "profile/ncu_runner.h"
#include "sol/target.h"

namespace kforge::driver {
namespace {

namespace fs = std::filesystem;

// The candidate a profile is asked for, with what its diagnosis needs.
struct Profiled {
    const search::SearchState* state = nullptr;
    dsl::Program program;
    std::string hash;
    std::map<std::string, dsl::KernelKind> kinds;  // by entry symbol kforge_<kernel>
    profile::DiagnoseContext context;
    kforge::Target target;  // of the device the run's bounds are for
};

// ncu on `kforge eval --tier quick` of the candidate; empty with `why` set when it fails.
std::vector<KernelDiagnosis> from_ncu(const Profiled& t, const ProfileHookOptions& o,
                                         std::string& why, profile::ProfileStatus& status) {
    const fs::path dir = fs::path(o.work_dir) / ("ncu_" + t.hash.substr(0, 16));
    std::error_code ec;
    fs::create_directories(dir, ec);
    const std::string spec = (dir / "problem.json").string();
    const std::string prog = (dir / "program.kf").string();
    std::ofstream(spec) << problem_to_json(t.state->problem).dump(2);
    std::ofstream(prog) << dsl::print_canonical(t.program);
    profile::NcuOptions n;
    n.ncu = o.ncu;
    n.timeout_s = o.timeout_s;
    n.kernel_regex = "^kforge_";
    // two timed runs: ncu replays every launch it profiles, and the diagnosis takes the median
    // of the full-shape launches
    n.target = {o.kforge_executable, "eval", "--problem", spec, "--program", prog, "--tier", "quick",
                "--device", "cuda", "--gpu", std::to_string(o.gpu), "--timing-runs", "2"};
    profile::NcuRun r = profile::run_ncu(n);
    status = r.status;
    if (r.status != profile::ProfileStatus::kOk) {
        why = std::string(to_string(r.status)) + ": " + r.message;
        return {};
    }
    auto parsed = profile::parse_ncu_csv(r.output);
    if (!parsed) {
        why = parsed.error().to_string();
        return {};
    }
    std::vector<KernelDiagnosis> ds;
    for (const auto& k : profile::representative_launches(*parsed)) {
        profile::DiagnoseContext ctx = t.context;
        if (auto it = t.kinds.find(k.name); it != t.kinds.end()) ctx.kind = it->second;
        ds.push_back(profile::diagnose_kernel(k, ctx));
    }
    if (ds.empty()) why = "ncu profiled no kforge kernel";
    return ds;
}

// ptxas report of a compile (or, without one, the launch plan alone) + the roofline; no kernels
// with `why` set when it fails.
Diagnosis from_fallback(const Profiled& t, const ProfileHookOptions& o, std::string& why) {
    Diagnosis d;
    builder::BuildOptions build;
    build.check = false;  // the search checked it
    build.no_build = true;
    build.compile_cache_dir = o.compile_cache_dir;
    build.out_dir = (fs::path(o.work_dir) / ("ptxas_" + t.hash.substr(0, 16))).string();
    build.compile_timeout_s = o.timeout_s;
    builder::BuiltCandidate built = builder::build(t.program, t.state->problem, t.target, build);
    if (!built.ok()) {
        why = "lowering failed: " + built.message;
        return {};
    }
    const codegen::Lowered& lowered = built.lowered;
    std::vector<compile::KernelResources> resources;
    // On the simulated device nothing else compiles, and a CUTLASS kernel costs a minute of
    // nvcc: its diagnosis takes the launch plan and the roofline only.
    std::string not_compiled;
    if (!o.use_ncu && lowered.uses_cutlass)
        not_compiled = "simulated device: CUTLASS kernels are not compiled for a diagnosis";
    else
        builder::compile_lowered(built);
    if (built.status == builder::BuildStatus::kBuilt) {
        resources = built.compiled->kernels;
        d.ptxas_summary = compile::format_ptxas_report(resources);
        for (const auto& r : resources) d.ptxas_spills = d.ptxas_spills || r.spills();
    } else {
        if (not_compiled.empty()) not_compiled = built.message;
        why += std::string(why.empty() ? "" : "; ") + "no ptxas report (" + not_compiled +
               "), launch shape and roofline only";
        for (const auto& l : lowered.plan.kernels) {
            compile::KernelResources r;
            r.name = l.symbol;
            resources.push_back(r);
        }
    }
    const Bounds& b = t.state->bounds;
    for (const auto& res : resources) {
        profile::FallbackInput in;
        in.resources = res;
        for (const auto& l : lowered.plan.kernels)
            if (l.symbol == res.name && l.param_builder.empty()) {
                in.grid_blocks = int64_t{l.grid[0]} * l.grid[1] * l.grid[2];
                in.block_threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
                in.dynamic_smem_bytes = l.smem_bytes;
            }
        in.memory_bound_sol = b.kind == BoundKind::kMemory;
        in.matrix_on_tensor_cores = b.matrix_unit != ComputeUnit::kFp32Simt &&
                                    b.matrix_unit != ComputeUnit::kFp64Simt;
        profile::DiagnoseContext ctx = t.context;
        if (auto it = t.kinds.find(res.name); it != t.kinds.end()) ctx.kind = it->second;
        d.kernels.push_back(profile::diagnose_fallback(in, ctx));
    }
    return d;
}

}  // namespace

std::function<Diagnosis(const std::string&)> make_profile_hook(StateLookup find_state,
                                                                ProfileHookOptions options) {
    // Set once ncu cannot work for the rest of the run (missing, counters not permitted).
    auto ncu_off = std::make_shared<std::string>();
    return [find_state = std::move(find_state), o = std::move(options),
            ncu_off](const std::string& text) {
        auto program = dsl::parse_program(text, "<candidate>");
        if (!program) return Diagnosis{};
        Profiled t;
        t.state = find_state(program->problem);
        if (!t.state) return Diagnosis{};
        t.program = std::move(*program);
        t.hash = dsl::program_hash(t.program);
        for (const auto& k : t.program.kernels) t.kinds["kforge_" + k.name] = k.kind;
        t.target = target_for_device(t.state->bounds.device);
        t.context.sm_count = t.target.sm_count;
        if (auto it = t.state->candidates.find(t.hash); it != t.state->candidates.end()) {
            const auto& c = it->second;
            double ns = c.full ? c.full->median_ns : c.quick ? c.quick->median_ns : 0;
            if (ns > 0) t.context.fraction_of_sol = t.state->bounds.time_fused_s * 1e9 / ns;
        }
        std::string why;
        Diagnosis d;
        if (o.use_ncu && ncu_off->empty()) {
            profile::ProfileStatus status = profile::ProfileStatus::kOk;
            d.kernels = from_ncu(t, o, why, status);
            if (status == profile::ProfileStatus::kNcuMissing ||
                status == profile::ProfileStatus::kCountersNotPermitted)
                *ncu_off = why;
        } else {
            why = o.use_ncu ? "ncu off for this run: " + *ncu_off : "simulated device: no profiler";
        }
        bool fallback = d.kernels.empty();
        if (fallback) d = from_fallback(t, o, why);
        if (d.kernels.empty()) {
            if (o.log) o.log("profile " + t.hash.substr(0, 12) + ": no diagnosis (" + why + ")");
            return Diagnosis{};
        }
        if (o.log) {
            std::string first = d.kernels.front().summary;
            o.log("profile " + t.hash.substr(0, 12) + ": " + first +
                  (fallback ? " [ptxas + SOL fallback: " + why + "]" : " [ncu]"));
        }
        return d;
    };
}

}  // namespace kforge::driver
