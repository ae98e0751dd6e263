// `kforge export RUN|OUT_DIR|SPEC -o DIR [--spec P.json] [--program P.kf] [--gpu-model KEY]
// [--arch ARCH] [--no-build] [--kernelbench FILE|DIR] [--runtime-lib PATH] [--db PATH]
// [--cache DIR]`: a kforge result as a folder PyTorch and C/C++ users can call
// (driver/export.h). Exit 2 for user errors, 1 when the program does not build, 3 without a
// compiler or Python.
#include <filesystem>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "cli/console.h"
#include "driver/export.h"

namespace kforge::cli {

void register_export(CLI::App& app) {
    auto r = std::make_shared<driver::ExportRequest>();
    auto runtime_lib = std::make_shared<std::string>();
    auto* cmd = app.add_subcommand(
        "export", "export a result as a folder with a PyTorch custom op and a C runtime package");
    cmd->add_option("source", r->source,
                    "a run id in the store, an optimize --out folder, or a problem spec")
        ->required();
    cmd->add_option("-o,--out", r->out_dir, "output folder (a suite run: one folder per problem)")
        ->required();
    cmd->add_option("--spec", r->spec, "the problem spec of an optimize --out folder");
    cmd->add_option("--program", r->program,
                    "the program of a spec (default: the .kf beside it, else the planner's)");
    add_gpu_model_option(cmd, r->device,
                         "GPU of the device table to build for (default: the run's, else h200)");
    cmd->add_option("--arch", r->arch, "target arch; must be the device's (e.g. sm_90a)");
    cmd->add_flag("--no-build", r->no_build,
                  "lower only: the package imports and checks calls but cannot launch");
    cmd->add_option("--kernelbench", r->kernelbench,
                    "the KernelBench file the problem was imported from, or a folder of them: "
                    "writes model_new.py (class ModelNew)");
    cmd->add_option("--runtime-lib", *runtime_lib,
                    "libkforge_runtime.so to put in the package (default: beside kforge)");
    cmd->add_option("--db", r->db, "store (default .kforge/kforge.db, or $KFORGE_DB)");
    cmd->add_option("--cache", r->compile_cache_dir, "compile cache directory");
    cmd->callback([r, runtime_lib] {
        if (r->db.empty()) {
            const char* env = std::getenv("KFORGE_DB");
            r->db = env && *env ? env : ".kforge/kforge.db";
        }
        if (r->compile_cache_dir.empty()) r->compile_cache_dir = default_compile_cache_dir();
        r->runtime_library = runtime_library(*runtime_lib);
        r->python = python_options();
        driver::ExportResult result = driver::run_export(*r, console_for("export"));
        exit_code() = exit_code_of(result.outcome, "export");
    });
}

}  // namespace kforge::cli
