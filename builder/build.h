// The build stage (TVM meta_schedule's Builder::Build): one call turns a candidate program
// (its text, or a parsed program) for a problem and a Target into a BuiltCandidate:
//   parse (text only) -> check_program (limits of the target) -> lower_program (arch and SM
//   count of the target) -> compile_cuda (cubin, host library, ptxas report, cache key)
// A candidate that does not build is a BuiltCandidate with a status and a message, never an
// exception or an Error. Everything that needs a lowered or compiled candidate calls build():
// the evaluator (per shape), the parallel precompile (lowers with no_build, deduplicates, then
// compile_lowered() in its pool), the seed planner (no_build), `kforge compile` and the
// profiling fallbacks. The lowering and compile options are derived here only (the arch and SM
// count of the Target, compile_options()), so the compile cache keys of precompile and
// evaluation cannot disagree.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/lower.h"
#include "common/expected.h"
#include "compile/compile.h"
#include "dsl/ast.h"
#include "dsl/check.h"
#include "problem/problem.h"
#include "sol/target.h"

namespace kforge::builder {

enum class BuildStatus {
    kBuilt,              // lowered and compiled (cubin, host library when it has host code)
    kLowered,            // lowered only (BuildOptions::no_build)
    kChecked,            // parsed and checked only (BuildOptions::check_only)
    kInvalidProgram,     // does not parse or check against the problem on the target
    kLoweringFailed,     // checked, but the lowering refused it
    kCompileFailed,      // the compiler rejected the source (log in compiled->log)
    kCompileTimedOut,    // the compiler ran past CompileOptions::timeout_s
    kToolchainMissing,   // no nvcc / NVRTC to compile with (an environment problem)
    kCompileSetupFailed, // the compile could not start (no cache and no out_dir, unwritable dir)
    kCompileAborted,     // the compiler was killed (a signal: the OOM killer) or the disk filled
};
std::string_view to_string(BuildStatus s);
std::optional<BuildStatus> build_status_from_string(std::string_view s);

struct BuildOptions {
    bool check = true;      // check_program first (false: the caller checked the program)
    bool no_build = false;  // lower only: source and plan, nothing compiled (status kLowered)
    bool check_only = false;  // parse and check only: nothing lowered (status kChecked)
    // The problem the kernels' compile-time configuration is derived for when building at
    // another (smaller) shape (codegen::LowerOptions::config_problem); null: the problem.
    const Problem* config_problem = nullptr;
    std::string compile_cache_dir;  // content-addressed compile cache; empty: none
    std::string out_dir;            // without a cache: where the compile writes (created)
    int compile_timeout_s = 600;
    std::string file_name = "<program>";  // where parse and check messages point
    // Called after each lowering pass (codegen::LowerOptions::dump).
    std::function<void(std::string_view pass, std::string_view text)> dump;
};

struct BuiltCandidate {
    BuildStatus status = BuildStatus::kInvalidProgram;
    std::string message;             // why not built: the first error, or the compile status
    std::vector<Error> errors;       // parse / check / lowering errors (first one in message)
    std::vector<std::string> warnings;  // the checker's
    bool parsed = false;             // false: the text did not parse (errors holds why)
    dsl::Program program;            // parsed (or as given)
    std::string canonical_text;      // dsl::print_canonical(program)
    std::string program_hash;        // dsl::program_hash(program)
    std::string arch;                // the target's, e.g. "sm_90a"
    codegen::Lowered lowered;        // CUDA source and launch plan (when lowered)
    compile::CompileOptions compile_options;  // compile_options(lowered, target, ..) if lowered
    // The compile's result when one ran: cubin_path, host_library_path, kernels (the ptxas
    // report), log, backend, cache_hit, time_compile_ns and key (the compile cache key).
    std::optional<compile::CompileResult> compiled;

    // Built as far as asked (compiled; lowered with no_build; checked with check_only).
    bool ok() const {
        return status == BuildStatus::kBuilt || status == BuildStatus::kLowered ||
               status == BuildStatus::kChecked;
    }
};

// The target a set of checker limits describes (the seed planner gets limits only): the table
// entry named limits.name (else the default device's figures) with the limits' compute
// capability, arch (cuda_arch), SM count and shared memory. check_limits() of it gives the
// table's limits again, not necessarily these.
Target target_of(const dsl::DeviceLimits& limits);

// The checker's limits on `target`: the device table entry's (dsl::device_limits), else (an
// unknown device) the default limits with the target's SM count.
dsl::DeviceLimits check_limits(const Target& target);

// The compile options for one lowered program on `target`: default_compile_options(arch), the
// host library when the source has host code, NVRTC first only for plain kernels (no CUTLASS,
// no host code), the cache, out_dir and timeout of `options`. Part of the cache key.
compile::CompileOptions compile_options(const codegen::Lowered& lowered, const Target& target,
                                        const BuildOptions& options);

// What makes two lowered candidates one compile unit (arch, host/device, NVRTC/nvcc, source):
// a batch compiles each distinct one once.
std::string compile_unit_key(const BuiltCandidate& lowered);

// Builds a program given as text (parsed first; parse errors are kInvalidProgram).
BuiltCandidate build(std::string_view program_text, const Problem& problem, const Target& target,
                     const BuildOptions& options = {});

// Builds a parsed program.
BuiltCandidate build(const dsl::Program& program, const Problem& problem, const Target& target,
                     const BuildOptions& options = {});

// The compile step of build() for a candidate built with no_build (status kLowered): compiles
// its source with its compile_options and sets status, message and compiled. For batch
// builders that lower everything first and compile the distinct units in a pool.
void compile_lowered(BuiltCandidate& candidate);

}  // namespace kforge::builder
