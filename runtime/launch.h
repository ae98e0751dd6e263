// The one launch path for a built candidate (its cubin, the param builders of its host library
// and its launch plan, codegen/launch_plan.h): the evaluator's CUDA device (device/) and the
// exported runtime (runtime/kforge_runtime.h) both load, prepare and enqueue through these
// calls; they differ only in where buffers come from (the device allocates its own, the runtime
// takes the caller's pointers and workspace).
//   load_module     cubin into the current context, every kernel's function resolved, the host
//                   library dlopen()ed and each kernel's param builder (codegen/host_abi.h) found
//   prepare_launch  one kernel's arguments: plain params packed from the plan, or the params
//                   blob a builder encodes from device pointers, dims and the plan's launch
//                   knobs (codegen/launch_knobs.h; workspace on request, sized by them);
//                   the cluster and dynamic shared memory attributes set on the function
//   enqueue_launches  the prepared kernels in plan order on one stream, nothing in between
// Driver calls go through runtime/cuda_driver.h's table; nothing here allocates device memory.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "codegen/host_abi.h"
#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "runtime/cuda_driver.h"

namespace kforge::runtime {

struct Module {
    CUmodule module = nullptr;
    void* host_library = nullptr;                 // dlopen handle, null without param builders
    std::vector<CUfunction> functions;            // per plan kernel
    std::vector<KforgeParamBuilderFn> builders;   // per plan kernel; null for plain kernels
};

// Loads `cubin_image` (the cubin's bytes) into the current context and the host library (empty
// path: none; the plan must then have no param builder). On an error nothing stays loaded.
Expected<Module> load_module(const DriverApi& api, const codegen::LaunchPlan& plan,
                             const std::string& cubin_image, const std::string& host_library_path);
void unload_module(const DriverApi& api, Module& module);

// The host library alone (param builders, no cubin, no context needed): for workspace queries.
Expected<Module> load_builders(const codegen::LaunchPlan& plan, const std::string& host_library_path);

// Part 1.. of a builder that splits its problem (codegen/host_abi.h, version 3): its own grid
// and params blob; block, cluster and shared memory as part 0's.
struct LaunchPart {
    unsigned grid[3]{1, 1, 1};
    std::vector<uint64_t> storage;
};

struct PreparedLaunch {
    std::string name;
    CUfunction function = nullptr;
    unsigned grid[3]{1, 1, 1}, block[3]{1, 1, 1}, cluster[3]{1, 1, 1};
    unsigned smem_bytes = 0;
    std::vector<uint64_t> storage;  // plain params, 8 bytes each; or the params blob
    std::vector<void*> args;        // kernelParams (point into storage)
    std::vector<LaunchPart> more;   // launched right after this one, in order
};

// Where a kernel's buffers are: every tensor and plan buffer by name, the problem's dims (sorted
// by name, as the builders take them), the device, and a builder workspace on request.
struct Bindings {
    std::function<Expected<CUdeviceptr>(const std::string& name)> pointer_of;
    std::vector<int64_t> dims;
    int sm_count = 0;
    int device_id = 0;
    // Device memory of `bytes` for kernel `index`'s builder, zeroed by the caller before every
    // launch sequence (codegen/host_abi.h's protocol).
    std::function<Expected<CUdeviceptr>(size_t index, uint64_t bytes)> workspace;
    // Set the functions' cluster and shared-memory attributes (a function keeps them: a caller
    // re-preparing for new pointers at the same dims passes false, so nothing but host work
    // happens, e.g. inside a CUDA-graph capture).
    bool set_function_attributes = true;
};

// Prepares kernel `index` of `plan`. A refused cluster or shared-memory size is an Error whose
// `where` is "resources_exceeded"; any other problem names "plan.<kernel>".
Expected<PreparedLaunch> prepare_launch(const DriverApi& api, const Module& module,
                                        const codegen::LaunchPlan& plan, size_t index,
                                        const Bindings& bindings);

// The workspace kernel `index`'s builder asks for at `dims` (0 for plain kernels), asked with
// stand-in pointers (a query never encodes them: codegen/host_abi.h step 1).
Expected<uint64_t> builder_workspace_bytes(const Module& module, const codegen::LaunchPlan& plan,
                                           size_t index, const std::vector<int64_t>& dims,
                                           int sm_count, int device_id);

struct LaunchFailure {
    CUresult result = CUDA_SUCCESS;
    std::string what;  // "launch of k0"
    bool ok() const { return result == CUDA_SUCCESS; }
};
// A launch with `more` parts issues them right after itself (one kernel, several launches: a
// `before` hook and a timing see them as one).
// `before`, when set, runs ahead of launch i on the same stream (the correctness run's poisoning
// of the arena buffers first written there); a failure it returns stops the sequence.
LaunchFailure enqueue_launches(const DriverApi& api, std::vector<PreparedLaunch>& launches,
                               CUstream stream,
                               const std::function<LaunchFailure(size_t)>& before = {});

// The plan's buffers at their arena offsets (codegen/memory_plan.h; every buffer placed, as
// codegen::launch_plan_from_json and lowering leave them; an unplaced one is an Error) from the
// arena's base `arena`.
Expected<std::vector<std::pair<std::string, CUdeviceptr>>> arena_pointers(
    const codegen::LaunchPlan& plan, CUdeviceptr arena);

}  // namespace kforge::runtime
