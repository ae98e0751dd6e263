// `kforge baseline` as a library call: times PyTorch eager and torch.compile for problems on the
// GPU (python/kforge_py/baseline.py, with the evaluator's protocol) and stores each problem's
// samples as baseline measurements (report/baseline_store.h).
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "driver/outcome.h"
#include "driver/python_tool.h"

namespace kforge::driver {

struct BaselineRequest {
    std::vector<std::string> specs;  // problem spec files
    PythonOptions python;
    std::string modes = "eager,compile_default,compile_max_autotune";
    int iters = 100;
    int warmup = 10;
    int gpu = 0;
    bool fp32_strict = false;
    std::string db = ".kforge/kforge.db";  // its folder is created
    std::optional<int64_t> run_id;  // store into this run (on this GPU)
    bool latest_run = false;        // store each problem into the newest run over it
};

struct BaselineResult {
    Outcome outcome;
    // The Python side's document, each result with "stored": {db, run_id, evaluation_id,
    // candidate_id}; null when it gave none.
    nlohmann::json doc;
};

// kOk when every mode was timed, kFailure when one failed or disagreed with eager (the doc
// says which); kUserError for a bad spec, store or run; kEnvironment without Python, PyTorch or
// a GPU (an empty message when the Python side printed its own).
BaselineResult run_baselines(const BaselineRequest& request);

}  // namespace kforge::driver
