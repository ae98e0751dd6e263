// How long compiles took, by kernel kind and configuration, kept beside the compile cache
// (<cache>/compile_history.jsonl, one JSON object a line, appended; never evicted by a trim), and
// the compile-time estimate a planner makes from it: the mean of the same kind and configuration,
// else of the same kind, else a default table (measured on the H200, 16 cores; see
// default_compile_s). A search plans its compile waves by these estimates.
#pragma once

#include <string>
#include <vector>

#include "common/expected.h"

namespace kforge::compile {

struct CompileTimeSample {
    std::string kind;    // "gemm_sm90", "gemm_multistage", "conv2d", "rowwise", "map"
    std::string config;  // the knobs that change the compile ("128x128x64 cooperative")
    double seconds = 0;  // wall time of the compile of one program (its compile units)
    // The candidate the compile is charged to (its program hash; "" when not a search's), and
    // how many other programs of its batch shared it (launch-knob variants of one compile
    // configuration, codegen/launch_knobs.h: they compiled nothing).
    std::string charged_to;
    int shared_by = 0;
};

// The history file of a cache folder.
std::string compile_history_path(const std::string& cache_dir);

// Appends one sample (one write of one line, O_APPEND: concurrent writers do not interleave).
// An Error when the file cannot be written; nothing when `cache_dir` is "".
Status append_compile_history(const std::string& cache_dir, const CompileTimeSample& sample);

// The samples of a cache folder, oldest first; unreadable lines are skipped, at most the newest
// `max_samples`. Empty without a file.
std::vector<CompileTimeSample> load_compile_history(const std::string& cache_dir,
                                                    size_t max_samples = 20000);

// Seconds one program of `kind` takes to compile with nothing cached, when no history says
// otherwise: a CUTLASS 3.x sm90 GEMM ~50 s, a CUTLASS 2.x multistage GEMM ~35 s, a conv2d ~60 s
// (nvcc); a row-wise or map kernel ~2 s (NVRTC). Unknown kinds: 30 s.
double default_compile_s(const std::string& kind);

struct CompileEstimate {
    double seconds = 0;
    std::string basis;  // "3 samples of gemm_sm90 128x128x64 cooperative", "default for map"
};

// The estimate for one program of `kind` and `config` from `history`: the mean of the samples
// of that kind and configuration (the newest 20), else of that kind, else default_compile_s.
CompileEstimate estimate_compile_s(const std::vector<CompileTimeSample>& history,
                                   const std::string& kind, const std::string& config);

}  // namespace kforge::compile
