// Launch knobs: the knobs of a kernel that CUTLASS takes at run time, so they stay out of the
// compiled source. For a CUTLASS 3.x sm90 GEMM these are the tile scheduler's Arguments -
// raster order, max swizzle size, the split-K factor and the decomposition mode - and the SM
// count the persistent grid is sized by; the lowering writes them into the launch plan
// (KernelLaunch::knobs) and the param builder reads them from KforgeBuildArgs at every launch
// (codegen/host_abi.h). Two programs that differ only in launch knobs lower to one source and
// share one compile (the compile cache is keyed by source). The search reads the same rule
// through compile_configuration(): which moves are free.
//
// The scheduler TYPE is compile-time (GemmUniversal's template argument). A cooperative kernel
// with schedule stream_k or splitk > 1 is compiled with CUTLASS's StreamKScheduler, whose
// Arguments carry splits and decomposition_mode: between such kernels every one of raster,
// swizzle, splitk and the stream-K / split-K choice is free. A cooperative kernel with splitk 1
// keeps the plain PersistentScheduler: the stream-K scheduler in data-parallel mode would serve
// it too, but it compiles the stream-K fixup and reduction paths into every kernel (more
// registers and a larger Params, a workspace for the tile counters) and was never measured equal
// on the H200, while the data-parallel kernel is the one most programs run. So splitk 1 <-> 2 on
// a cooperative kernel (and stream_k <-> cooperative splitk 1) is one compile; after it the
// split factors and stream-K are free. Ping-pong and tma_ws kernels have raster and swizzle free
// (they take no split-K). The sm80 multistage (CUTLASS 2.x) path bakes everything: its swizzle
// is a template argument.
#pragma once

#include <atomic>

#include "codegen/host_abi.h"
#include "codegen/launch_plan.h"
#include "dsl/ast.h"

namespace kforge::codegen {

// Bakes every launch knob into the generated source (the behaviour before launch knobs, so each
// value is its own compile): a process-wide switch for measuring what launch knobs save
// (`kforge optimize --bake-launch-knobs`, $KFORGE_BAKE_LAUNCH_KNOBS, read by cli/ at start-up
// so that the worker processes it starts agree). Off by default.
inline std::atomic<bool> g_launch_knobs_baked{false};
inline void set_launch_knobs_baked(bool baked) { g_launch_knobs_baked = baked; }
inline bool launch_knobs_baked() { return g_launch_knobs_baked; }

// Whether a sm90 gemm config is compiled with CUTLASS's StreamKScheduler.
inline bool uses_stream_k_scheduler(const dsl::GemmConfig& c) {
    return c.schedule == dsl::Schedule::kStreamK ||
           (c.schedule == dsl::Schedule::kCooperative && c.split_k > 1);
}

// The launch knobs of a sm90 gemm kernel's config (its plan entry's KernelLaunch::knobs).
inline LaunchKnobs launch_knobs_of(const dsl::GemmConfig& c) {
    LaunchKnobs k;
    k.raster = c.raster == dsl::Raster::kAlongM   ? KFORGE_RASTER_ALONG_M
               : c.raster == dsl::Raster::kAlongN ? KFORGE_RASTER_ALONG_N
                                                  : KFORGE_RASTER_HEURISTIC;
    k.swizzle = c.swizzle;
    if (uses_stream_k_scheduler(c)) {
        k.splits = c.split_k;
        k.decomposition =
            c.split_k > 1 ? KFORGE_DECOMPOSITION_SPLIT_K : KFORGE_DECOMPOSITION_STREAM_K;
    }
    return k;
}

// `program` with every launch knob at the value that identifies its compile: raster auto,
// swizzle 1, and a stream-K-scheduler kernel as `schedule stream_k splitk 1`. Two programs with
// equal compile configurations lower to the same source (tests/codegen/launch_knobs_test.cpp
// checks it over random knob settings). With launch knobs baked: `program` itself. Not
// necessarily a legal program; compare it, do not evaluate it.
inline dsl::Program compile_configuration(const dsl::Program& program) {
    if (launch_knobs_baked()) return program;
    dsl::Program p = program;
    for (dsl::Kernel& k : p.kernels) {
        if (k.kind != dsl::KernelKind::kGemm || k.gemm.schedule == dsl::Schedule::kMultistage)
            continue;
        dsl::GemmConfig& c = k.gemm;
        c.raster = dsl::Raster::kAuto;
        c.swizzle = 1;
        if (uses_stream_k_scheduler(c)) {
            c.schedule = dsl::Schedule::kStreamK;
            c.split_k = 1;
        }
    }
    return p;
}

}  // namespace kforge::codegen
