// `kforge export` as a library call: a kforge result (the best program of a run in the store, an
// `optimize --out` folder, or a spec with its program) becomes a self-contained folder for one
// target GPU arch that PyTorch and C/C++ users can call:
//   OUT/spec.json, program.kf, evidence.json (times, SOL share, gates, GPU, where it came from)
//   OUT/kforge_<name>/program/   runtime.json, plan.json, kernels.cu, the cubin and host library
//                                (built for the target by builder::build), libkforge_runtime.so
//   OUT/kforge_<name>/__init__.py  the torch.library custom op kforge::<name> (Python side,
//                                python/kforge_py/export/), OUT/model_new.py (KernelBench
//                                imports: class ModelNew), OUT/README.md, OUT/pyproject.toml
// With no_build the program is lowered only (plan and source, no cubin): the package imports and
// checks calls, and refuses to launch with a message saying so (CI exports without compiling).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/outcome.h"
#include "driver/python_tool.h"

namespace kforge::driver {

struct ExportRequest {
    // The source, one of: a run id in the store at `db`; a folder written by `optimize --out`
    // (best.kf, evidence.json; its spec from `spec`); a spec file (its program from `program`,
    // else the .kf beside it, else the planner's start program for the device).
    std::string source;
    std::string db;       // the store (run ids)
    std::string spec;     // the problem of an `optimize --out` folder
    std::string program;  // the program of a spec source ("": the .kf beside it, or synthesized)
    std::string out_dir;
    std::string device;   // device table key, --gpu-model ("": the run's device, else h200)
    std::string arch;     // must be the device's arch when given ("sm_90a")
    bool no_build = false;
    std::string compile_cache_dir;
    std::string runtime_library;  // libkforge_runtime.so to copy in ("": none, the README says)
    // The KernelBench file the problem was imported from, or a folder holding it under the name
    // the spec's description gives ("imported from KernelBench file X.py"): model_new.py.
    std::string kernelbench;
    PythonOptions python;
};

struct ExportedProgram {
    std::string name;
    std::string folder;
    bool built = false;
    bool model_new = false;
};

struct ExportResult {
    Outcome outcome;
    std::vector<ExportedProgram> exported;
};

// kUserError for a bad source, spec, program, device or arch; kFailure when the program does not
// lower or compile (or a run has no best program); kEnvironment without a compiler or Python.
ExportResult run_export(const ExportRequest& request, const Console& console);

// `optimize --export DIR` and `suite --export DIR`: the best program of each (run id, problem)
// exported with `base`'s settings (its source and out_dir replaced): to DIR itself, or with
// `folder_per_problem` (a suite, also of one) to DIR/<problem>. The first failed export ends it
// with that export's outcome, its message naming the run.
ExportResult export_runs(const ExportRequest& base,
                         const std::vector<std::pair<int64_t, std::string>>& runs,
                         bool folder_per_problem, const Console& console);

}  // namespace kforge::driver
