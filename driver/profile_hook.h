// The profiling hook of `kforge optimize` / `kforge suite` (search::SearchOptions::profile_hook):
// the best few candidates of each round get a bottleneck diagnosis that the diagnosis proposer
// and the LLM prompt read. On the cuda device it runs Nsight Compute on `kforge eval --tier
// quick` of the candidate (as `kforge profile` does); on the simulated device, or when ncu, its
// counters or the GPU are missing, it falls back to the ptxas report of a compile plus the
// roofline position of the measured time (profile::diagnose_fallback), and without a toolchain
// to the launch shape plus roofline alone. Every fallback says why in the log.
#pragma once

#include <functional>
#include <string>

#include "diagnosis/diagnosis.h"
#include "search/loop.h"

namespace kforge::driver {

struct ProfileHookOptions {
    bool use_ncu = false;              // the cuda device: profile with ncu first
    std::string ncu = "ncu";
    std::string kforge_executable;     // ncu runs `kforge eval --tier quick` of the candidate
    int gpu = 0;
    int timeout_s = 600;               // ncu and the fallback compile, each
    std::string compile_cache_dir;     // empty: outputs under work_dir
    std::string work_dir;              // spec/program files for ncu, compile outputs
    std::function<void(const std::string& line)> log;  // one line per profiled candidate
};

// The state that owns a problem (by name); nullptr when none.
using StateLookup = std::function<const search::SearchState*(const std::string& problem_name)>;

// The hook: program text -> its diagnosis (per kernel class, evidence and moves, then the ptxas
// summary of the fallback's compile when there is one); empty when the program cannot be placed.
std::function<Diagnosis(const std::string& program_text)> make_profile_hook(
    StateLookup find_state, ProfileHookOptions options);

}  // namespace kforge::driver
