// Parallel precompile: fills the content-addressed compile cache for a batch of programs before
// they are evaluated one after another, so every compile in each evaluation is a cache hit.
//
// For each program, in the evaluator's order (eval/evaluate.h): builder::build with no_build
// (parse + check against the device's Target; an invalid program is reported and skipped, never
// fatal) at every shape the tier's evaluation lowers at, then every distinct compile unit
// (builder::compile_unit_key) of the whole batch is compiled by a pool of `jobs` workers
// (builder::compile_lowered).
//   kStatic, kCostModel   nothing (those tiers never compile)
//   kCompile              the full shape
//   kQuick, kFull, kProfile  the full shape, small_shape() and check_shape() (the hidden second
//                         shape when the full shape's CPU reference is infeasible)
// The lowering and compile options are the builder's (builder/build.h), as in the evaluator's
// prepare step, so the cache keys agree. The simulated device compiles nothing: every valid
// program is reported kSkipped.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/expected.h"
#include "device/device.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge::eval {

struct PrecompileRequest {
    Problem problem;                        // at its full shape
    std::vector<std::string> program_texts;
    DeviceInfo device;                      // Device::info(): datasheet_key, sm_count, simulated
    EvalTier tier = EvalTier::kQuick;       // the tier the programs will be evaluated at
    std::string compile_cache_dir;          // required (EvalRequest::compile_cache_dir)
    int jobs = 0;                           // parallel compiles; 0: one per core
};

enum class PrecompileStatus {
    kCompiled,        // every source it needs is in the cache, compiled without error
    kSkipped,         // valid, nothing to compile (simulated device, static/cost-model tier)
    kInvalidProgram,  // does not parse or check against the problem: nothing compiled
    kFailed,          // lowering, shape selection or a compile failed (message says which)
};
std::string_view to_string(PrecompileStatus s);
std::optional<PrecompileStatus> precompile_status_from_string(std::string_view s);

struct PrecompiledProgram {
    PrecompileStatus status = PrecompileStatus::kFailed;
    std::string message;                 // why not kCompiled (empty when compiled)
    std::vector<std::string> shapes;     // shapes_key() of each distinct shape lowered
    int sources = 0;                     // compile units it needs (shapes with distinct sources)
    int cache_hits = 0;                  // of those, found in the cache already
    int64_t time_compile_ns = 0;         // compiler time of its sources (0 for cache hits)
    bool ok() const { return status == PrecompileStatus::kCompiled; }
};

struct PrecompileReport {
    std::vector<PrecompiledProgram> programs;  // in the order of program_texts
    int sources = 0;          // distinct compile units of the batch
    int cache_hits = 0;       // of those, already in the cache
    int jobs = 0;             // workers used
    int64_t time_wall_ns = 0; // of the whole precompile (lowering + compiles)
};

// The distinct compile units the batch would compile (lowering only, nothing compiled): the
// programs' sources at every shape their tier lowers at, deduplicated; 0 when nothing would be
// compiled (simulated device, a tier that compiles nothing, only invalid programs). A search
// sizes a batch that shares the cores with another compile by it.
int compile_units(const PrecompileRequest& request);

// Precompiles the batch. An Error only for an unusable request (no compile_cache_dir); every
// per-program problem, a missing toolchain included, is a PrecompiledProgram status.
Expected<PrecompileReport> precompile(const PrecompileRequest& request);

}  // namespace kforge::eval
