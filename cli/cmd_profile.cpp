// `kforge profile --problem SPEC --program PROG [--device cuda] [--gpu N] [--ncu PATH]`:
// compiles the program (ptxas report), runs Nsight Compute on `kforge eval ... --tier quick`
// for it, parses the raw page and prints a bottleneck diagnosis per kernel with its evidence
// and knob moves (profile/). Without ncu, counters or a GPU: exit 3 with the reason, after the
// fallback diagnosis from ptxas + SOL. Other forms:
//   --exe PATH [--csv-out F]   profile a standalone executable (bench/profile/flawed_kernels)
//   --csv F                    diagnose a recorded raw page;  --expect F: "<kernel> <class>"
//                              lines that must hold (exit 1 otherwise)
//   --print-ncu-args           print the ncu command line and exit
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <fstream>
#include <sstream>
#include <string>

#include "builder/build.h"
#include "cli/commands.h"
#include "common/atomic_file.h"
#include "dsl/printer.h"
#include "problem/spec.h"
#include "profile/diagnose.h"
#include "profile/ncu_runner.h"
#include "sol/bounds.h"
#include "sol/device.h"
#include "sol/target.h"

namespace kforge::cli {
namespace {

struct ProfileArgs {
    std::string problem_path, program_path, device = "cuda", ncu = "ncu", exe, csv, csv_out;
    std::string expect, sol_device = "h200";
    int gpu = 0, timeout_s = 600;
    bool json = false, print_args = false;
};

int user_error(const std::string& text) {
    eprintf("kforge profile: %s\n", text.c_str());
    return kExitUserError;
}

void print(const std::vector<KernelDiagnosis>& ds, bool json) {
    if (json) {
        nlohmann::ordered_json j = nlohmann::ordered_json::array();
        for (const auto& d : ds) j.push_back(to_json(d));
        print_json(j);
        return;
    }
    for (const auto& d : ds) {
        std::printf("%s%s\n", d.summary.c_str(), d.from_profile ? "" : " [ptxas + SOL only]");
        for (const auto& e : d.evidence) {
            if (e.op.empty() && e.value == 0)
                std::printf("    %s: %s\n", e.metric.c_str(), e.note.c_str());
            else if (e.op.empty() || e.op == "top")
                std::printf("    %s = %.4g  (%s)\n", e.metric.c_str(), e.value, e.note.c_str());
            else
                std::printf("    %s = %.4g %s %.4g  %s\n", e.metric.c_str(), e.value,
                            e.op.c_str(), e.threshold, e.note.c_str());
        }
        for (const auto& m : move_lines(d)) std::printf("    move: %s\n", m.c_str());
    }
}

// Diagnoses a raw page; with `expect`, exit 1 unless every expected kernel has its class.
int diagnose_csv(const std::string& text, const ProfileArgs& a, const profile::DiagnoseContext& c,
                 const std::map<std::string, dsl::KernelKind>& kinds = {}) {
    auto parsed = profile::parse_ncu_csv(text);
    if (!parsed) return user_error(parsed.error().to_string());
    std::vector<KernelDiagnosis> ds;
    for (const auto& k : profile::representative_launches(*parsed)) {
        profile::DiagnoseContext ctx = c;
        if (auto it = kinds.find(k.name); it != kinds.end()) ctx.kind = it->second;
        ds.push_back(profile::diagnose_kernel(k, ctx));
    }
    print(ds, a.json);
    if (a.expect.empty()) return ds.empty() ? kExitFailure : kExitOk;
    std::string table;
    if (!read_file(a.expect, table)) return user_error("cannot read " + a.expect);
    std::istringstream in(table);
    int wrong = 0;
    for (std::string line; std::getline(in, line);) {
        std::istringstream row(line);
        std::string kernel, expected;
        if (!(row >> kernel >> expected) || kernel[0] == '#') continue;
        const KernelDiagnosis* got = nullptr;
        for (const auto& d : ds)
            if (d.kernel.find(kernel) != std::string::npos) got = &d;
        std::string g = got ? std::string(to_string(got->bottleneck)) : "(not profiled)";
        eprintf("%-28s expected %-28s got %s%s\n", kernel.c_str(), expected.c_str(),
                     g.c_str(), g == expected ? "" : "   <-- MISDIAGNOSED");
        wrong += g != expected;
    }
    return wrong == 0 ? kExitOk : kExitFailure;
}

int run(const ProfileArgs& a) {
    profile::NcuOptions o;
    o.ncu = a.ncu;
    o.timeout_s = a.timeout_s;
    if (!a.csv.empty()) {
        std::string text;
        if (!read_file(a.csv, text)) return user_error("cannot read " + a.csv);
        return diagnose_csv(text, a, {});
    }
    if (!a.exe.empty()) {
        o.target = {a.exe};
        if (a.print_args) return std::printf("%s\n", profile::shell_join(profile::ncu_command(o)).c_str()), kExitOk;
        profile::NcuRun r = profile::run_ncu(o);
        for (const auto& m : r.dropped_metrics) eprintf("note: ncu rejected %s (dropped)\n", m.c_str());
        if (!a.csv_out.empty())
            if (auto st = write_file_atomic(a.csv_out, r.output); !st)
                eprintf("kforge profile: %s\n", st.error().to_string().c_str());
        if (r.status != profile::ProfileStatus::kOk) {
            eprintf("kforge profile: %s: %s\n", std::string(to_string(r.status)).c_str(), r.message.c_str());
            return kExitEnvironment;
        }
        return diagnose_csv(r.output, a, {});
    }
    if (a.problem_path.empty() || a.program_path.empty())
        return user_error("give --problem and --program (or --exe, or --csv)");
    if (a.device != "cuda") return user_error("--device must be cuda (ncu needs a real GPU)");
    o.kernel_regex = "^kforge_";
    o.target = {kforge_executable(), "eval", "--problem", a.problem_path, "--program", a.program_path,
                "--tier", "quick", "--device", "cuda", "--gpu", std::to_string(a.gpu),
                "--timing-runs", "2"};  // ncu replays each launch it profiles
    if (a.print_args) return std::printf("%s\n", profile::shell_join(profile::ncu_command(o)).c_str()), kExitOk;

    auto problem = load_problem(a.problem_path);
    if (!problem) return user_error(problem.error().to_string());
    std::string source;
    if (!read_file(a.program_path, source)) return user_error("cannot read " + a.program_path);
    auto spec = find_device(a.sol_device);
    if (!spec) return user_error(spec.error().to_string());
    const Target target = make_target(*spec);
    builder::BuildOptions check_only;
    check_only.check_only = true;
    check_only.file_name = a.program_path;
    builder::BuiltCandidate checked = builder::build(source, *problem, target, check_only);
    if (!checked.parsed) return user_error(checked.message);
    if (!checked.ok()) {
        for (const auto& e : checked.errors) eprintf("%s\n", e.to_string().c_str());
        return kExitUserError;
    }
    const dsl::Program* program = &checked.program;
    std::map<std::string, dsl::KernelKind> kinds;
    for (const auto& k : program->kernels) kinds["kforge_" + k.name] = k.kind;
    profile::DiagnoseContext base;
    base.sm_count = spec->sm_count;
    auto bounds = compute_bounds(*problem, effective_ceilings(*spec, std::nullopt));

    profile::NcuRun r = profile::run_ncu(o);
    for (const auto& m : r.dropped_metrics) eprintf("note: ncu rejected %s (dropped)\n", m.c_str());
    if (r.status == profile::ProfileStatus::kOk) {
        auto parsed = profile::parse_ncu_csv(r.output);
        if (parsed && bounds) {  // the program's time: the sum of its kernels' durations
            double t_ns = 0;
            for (const auto& k : profile::representative_launches(*parsed))
                t_ns += k.metric("gpu__time_duration.sum").value_or(0);
            if (t_ns > 0) base.fraction_of_sol = bounds->time_fused_s / (t_ns * 1e-9);
        }
        return diagnose_csv(r.output, a, base, kinds);
    }
    eprintf("kforge profile: no profile (%s): %s\n",
                 std::string(to_string(r.status)).c_str(), r.message.c_str());
    // Fallback: ptxas report of the full-shape build and the SOL roofline kind.
    // Built for the --sol-device's Target (it compiled for sm_90a whatever the device), through
    // the compile cache the `kforge eval` under ncu used.
    builder::BuildOptions build;
    build.check = false;  // checked above
    build.compile_cache_dir = default_compile_cache_dir();
    builder::BuiltCandidate built = builder::build(*program, *problem, target, build);
    if (built.status == builder::BuildStatus::kLoweringFailed) return user_error(built.message);
    if (built.status != builder::BuildStatus::kBuilt) {
        eprintf("kforge profile: no fallback diagnosis either (compile: %s)\n",
                     built.message.c_str());
        return kExitEnvironment;
    }
    const codegen::Lowered& lowered = built.lowered;
    std::vector<KernelDiagnosis> ds;
    for (const auto& res : built.compiled->kernels) {
        profile::FallbackInput in;
        in.resources = res;
        profile::DiagnoseContext ctx = base;
        if (auto it = kinds.find(res.name); it != kinds.end()) ctx.kind = it->second;
        for (const auto& l : lowered.plan.kernels)
            if (l.symbol == res.name && l.param_builder.empty()) {
                in.grid_blocks = int64_t{l.grid[0]} * l.grid[1] * l.grid[2];
                in.block_threads = int64_t{l.block[0]} * l.block[1] * l.block[2];
                in.dynamic_smem_bytes = l.smem_bytes;
            }
        if (bounds) {
            in.memory_bound_sol = bounds->kind == BoundKind::kMemory;
            in.matrix_on_tensor_cores = bounds->matrix_unit != ComputeUnit::kFp32Simt &&
                                        bounds->matrix_unit != ComputeUnit::kFp64Simt;
        }
        ds.push_back(profile::diagnose_fallback(in, ctx));
    }
    print(ds, a.json);
    return kExitEnvironment;
}

}  // namespace

void register_profile(CLI::App& app) {
    auto a = std::make_shared<ProfileArgs>();
    auto* cmd = app.add_subcommand("profile", "Nsight Compute profile and bottleneck diagnosis");
    cmd->add_option("spec", a->problem_path, "problem spec (JSON)");
    cmd->add_option("--problem", a->problem_path, "the problem spec, as the positional SPEC");
    cmd->add_option("--program", a->program_path, "program (kernel language)");
    cmd->add_option("--device", a->device, "cuda (the only device ncu can profile)");
    cmd->add_option("--gpu", a->gpu, "GPU index (default 0)");
    cmd->add_option("--ncu", a->ncu, "path of ncu (default: ncu on PATH)");
    cmd->add_option("--gpu-model,--sol-device", a->sol_device,
                    "GPU of the device table for SOL (default h200)");
    cmd->add_option("--timeout", a->timeout_s, "ncu wall-clock limit in seconds (default 600)");
    cmd->add_option("--exe", a->exe, "profile this standalone executable instead");
    cmd->add_option("--csv", a->csv, "diagnose a recorded ncu raw page (--csv --page raw)");
    cmd->add_option("--csv-out", a->csv_out, "with --exe: write ncu's output here");
    cmd->add_option("--expect", a->expect, "lines '<kernel> <class>' that must hold");
    cmd->add_flag("--print-ncu-args", a->print_args, "print the ncu command line and exit");
    cmd->add_flag("--json", a->json, "print the diagnoses as JSON");
    cmd->callback([a] { exit_code() = run(*a); });
}

}  // namespace kforge::cli
