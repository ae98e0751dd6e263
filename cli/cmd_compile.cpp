// `kforge compile SPEC PROGRAM -o DIR [--no-build] [--arch ARCH] [--gpu-model h200]
// (or PROGRAM --problem SPEC, the old order)
// [--cache DIR] [--dump]`: builds for the device's Target (--arch overrides its arch) through
// builder::build: parse, check, lower, write DIR/kernels.cu and DIR/plan.json, then
// (unless --no-build) compile to DIR/kernels.cubin (+ DIR/kernels_host.so) and print the ptxas
// report. Exit 2 for user errors, 1 when the compile fails, 3 when the toolchain is missing.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "builder/build.h"
#include "cli/commands.h"
#include "codegen/memory_plan.h"
#include "compile/failure_message.h"
#include "common/atomic_file.h"
#include "problem/spec.h"
#include "sol/target.h"

namespace kforge::cli {
namespace {

namespace fs = std::filesystem;

struct CompileArgs {
    std::vector<std::string> paths;  // SPEC PROGRAM, or PROGRAM with --problem
    std::string program_path;
    std::string problem_path;
    std::string out_dir;
    std::string arch;  // empty: the device's (its Target)
    std::string device = "h200";
    std::string cache_dir;
    bool no_build = false;
    bool dump = false;
};

int user_error(const std::string& text) {
    eprintf("kforge compile: %s\n", text.c_str());
    return kExitUserError;
}

// The cache: --cache, else the default one (cli/commands.h).
std::string cache_dir_of(const CompileArgs& a) {
    return a.cache_dir.empty() ? default_compile_cache_dir() : a.cache_dir;
}

int run(CompileArgs a) {
    if (a.problem_path.empty() && a.paths.size() == 2) {
        a.problem_path = a.paths[0];
        a.program_path = a.paths[1];
    } else if (!a.problem_path.empty() && a.paths.size() == 1) {
        a.program_path = a.paths[0];
    } else {
        return user_error("give the problem spec and the program: kforge compile SPEC PROGRAM "
                          "-o DIR");
    }
    std::ifstream in(a.program_path);
    if (!in) return user_error("cannot read program file " + a.program_path);
    std::stringstream text;
    text << in.rdbuf();
    std::string source = text.str();
    auto problem = load_problem(a.problem_path);
    if (!problem) return user_error(problem.error().to_string());
    auto target = find_target(a.device);
    if (!target) return user_error(target.error().to_string());
    if (!a.arch.empty()) target->arch = a.arch;  // --arch overrides the device's

    builder::BuildOptions options;
    options.file_name = a.program_path;
    options.no_build = true;  // kernels.cu and plan.json are written before the compile
    options.compile_cache_dir = cache_dir_of(a);
    if (a.dump)
        options.dump = [](std::string_view pass, std::string_view dumped) {
            std::printf("==== after %.*s ====\n%.*s\n", static_cast<int>(pass.size()), pass.data(),
                        static_cast<int>(dumped.size()), dumped.data());
        };
    builder::BuiltCandidate built = builder::build(source, *problem, *target, options);
    for (const auto& w : built.warnings) eprintf("warning: %s\n", w.c_str());
    if (built.status == builder::BuildStatus::kInvalidProgram && built.parsed) {
        for (const auto& e : built.errors) eprintf("%s\n", e.to_string().c_str());
        return kExitUserError;
    }
    if (!built.ok()) return user_error(built.message);
    const codegen::Lowered& lowered = built.lowered;

    std::error_code ec;
    fs::create_directories(a.out_dir, ec);
    if (ec) return user_error("cannot create " + a.out_dir + ": " + ec.message());
    fs::path out(a.out_dir);
    for (auto [name, text] : {std::pair{fs::path(lowered.plan.source_file), lowered.cuda_source},
                              {fs::path("plan.json"), codegen::to_json(lowered.plan).dump(2) + "\n"}})
        if (auto st = write_file_atomic(out / name, text); !st) return user_error(st.error().to_string());
    std::printf("wrote %s and %s\n", (out / lowered.plan.source_file).c_str(),
                (out / "plan.json").c_str());
    std::printf("memory: %s\n", codegen::describe_memory_plan(lowered.plan).c_str());
    if (a.no_build) return kExitOk;

    builder::compile_lowered(built);
    if (built.status == builder::BuildStatus::kCompileSetupFailed) return user_error(built.message);
    const compile::CompileResult& result = *built.compiled;
    switch (result.status) {
        case compile::CompileStatus::kOk: break;
        case compile::CompileStatus::kToolchainMissing:
            eprintf("kforge compile: toolchain missing:\n%s\n", result.log.c_str());
            return kExitEnvironment;
        default: {
            // the error lines first (a log of warnings buries them), the whole log in a file
            const fs::path log = out / "compile.log";
            std::ofstream(log) << result.log;
            eprintf("kforge compile: %s\n  the compiler's whole output: %s\n",
                    compile::failure_message(result).c_str(), log.c_str());
            return kExitFailure;
        }
    }
    fs::copy_file(result.cubin_path, out / "kernels.cubin", fs::copy_options::overwrite_existing,
                  ec);
    if (!ec && !result.host_library_path.empty())
        fs::copy_file(result.host_library_path, out / lowered.plan.host_library,
                      fs::copy_options::overwrite_existing, ec);
    if (ec) return user_error("cannot copy the build into " + a.out_dir + ": " + ec.message());
    std::printf("compiled with %s in %.1f s%s\n",
                std::string(compile::to_string(result.backend)).c_str(),
                result.time_compile_ns / 1e9, result.cache_hit ? " (cache hit)" : "");
    std::printf("%s", compile::format_ptxas_report(result.kernels).c_str());
    return kExitOk;
}

}  // namespace

void register_compile(CLI::App& app) {
    auto args = std::make_shared<CompileArgs>();
    auto* cmd = app.add_subcommand("compile", "lower a kernel-language program and build it");
    cmd->add_option("spec_program", args->paths,
                    "SPEC PROGRAM: problem spec (JSON) and program file (kernel language)")
        ->required()
        ->expected(1, 2);
    cmd->add_option("--problem", args->problem_path, "the problem spec, as the positional SPEC "
                                                     "(then PROGRAM alone)");
    cmd->add_option("-o,--out", args->out_dir, "output directory")->required();
    cmd->add_flag("--no-build", args->no_build, "write kernels.cu and plan.json only");
    cmd->add_option("--arch", args->arch,
                    "target architecture (default: the device's, e.g. sm_90a for h200)");
    add_gpu_model_option(cmd, args->device,
                    "device table entry to check and build for (default h200)");
    cmd->add_option("--cache", args->cache_dir, "compile cache directory");
    cmd->add_flag("--dump", args->dump, "print the result of every lowering pass");
    cmd->callback([args] { exit_code() = run(*args); });
}

}  // namespace kforge::cli
