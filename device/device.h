// The device interface (a real plug-in point): the CUDA device runs compiled candidates on a
// GPU through the driver API; the simulated device runs the same requests on the CPU with the
// fp64 interpreter and an analytic time model, and can inject faults. Both are driven by the
// worker (worker/worker.h); search, gates, store and reports never know which one ran.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "codegen/launch_plan.h"
#include "common/expected.h"
#include "dsl/ast.h"
#include "problem/problem.h"
#include "store/enums.h"

namespace kforge::eval {

// Host copies of tensors, element values as double in row-major order (rounded to the tensor's
// dtype where the data came from or goes to a device).
using TensorData = std::map<std::string, std::vector<double>>;

struct DeviceInfo {
    std::string name;          // "NVIDIA H200" or "simulated (h200 model)"
    bool simulated = false;
    std::string datasheet_key; // sol/ device table key, e.g. "h200"
    int sm_count = 0;
    int64_t l2_bytes = 0;
    int64_t memory_bytes = 0;
    std::string driver;        // driver / toolchain version string
    std::string uuid;
};

// Faults the simulated device injects (the fault suite's scenarios); the CUDA device gets the
// same faults from real faulty kernels instead (tests/faults/). kProcessCrash and kProcessHang
// take the whole process down (abort) or stall it (a driver call that never returns): only for
// a worker under a supervisor, whose isolation they test.
enum class SimFault {
    kNone, kOutOfBounds, kHang, kPartialWrite, kCachedResult, kLowPrecision, kNaN, kSlow,
    kProcessCrash, kProcessHang,
};
std::string_view to_string(SimFault f);
std::optional<SimFault> sim_fault_from_string(std::string_view s);

// A candidate ready to run: what compile/ produced for one program at one binding of dims.
struct Candidate {
    const Problem* problem = nullptr;         // bound to the shapes to run at
    const dsl::Program* program = nullptr;    // the simulated device models this
    codegen::LaunchPlan plan;                 // the CUDA device executes this
    std::string cubin_path;
    std::string host_library_path;            // param builders (CUTLASS kernels), may be empty
    SimFault sim_fault = SimFault::kNone;     // simulated device only
    double run_timeout_s = 10.0;              // run(): give up (kTimedOut) past this
};

// One execution: outputs, or the status that ended it (a failing candidate is a result).
struct RunResult {
    EvalStatus status = EvalStatus::kPassed;  // kPassed here means "ran to completion"
    std::string message;
    TensorData outputs;                       // problem outputs only
    bool context_lost = false;                // sticky CUDA error: restart the worker
};

// How run() treats its inputs and outputs.
struct RunOptions {
    // Non-zero: `inputs` are immutable and identified by this id (eval/reference_cache.h hands
    // out ids never reused), so a device may keep their converted bytes between runs.
    uint64_t inputs_id = 0;
    bool copy_outputs = true;  // false: run only (timing preparation); outputs stay empty
};

struct TimingOptions {
    int warmup_iterations = 5;
    int iterations = 50;
    bool flush_l2 = true;        // write a buffer of >= 2x L2 before each timed iteration
    bool use_graph = false;      // capture the launch sequence in a CUDA graph
    double max_seconds = 10.0;   // stop measuring early past this much GPU time
    int audit_iteration = -1;    // >= 0: copy the outputs back after this timed iteration
    // Also time each program kernel (TimingResult::kernel_times_ns); on the CUDA device a short
    // pass of its own after the samples (device/cuda_device_time.cpp).
    bool per_kernel = false;
};

struct TimingSample {
    double time_ns = 0;
    int sm_clock_mhz = 0;
    int mem_clock_mhz = 0;
    int temperature_c = 0;
    uint64_t throttle_reasons = 0;
};

// A reference computed on the device (Device::reference).
struct ReferenceResult {
    TensorData outputs;           // the problem's outputs, fp64
    std::string error;            // empty on success
    bool context_lost = false;    // the failure left the CUDA context unusable
    bool module_cached = false;   // the compiled reference module was reused
    double time_compile_ms = 0;   // NVRTC (0 when cached)
    double time_run_ms = 0;       // buffers, copies, kernels
    bool ok() const { return error.empty(); }
};

struct TimingResult {
    EvalStatus status = EvalStatus::kPassed;
    std::string message;
    std::vector<TimingSample> samples;
    TensorData audit_outputs;    // outputs after options.audit_iteration (empty if none)
    bool context_lost = false;   // sticky CUDA error: restart the worker
    std::string clock_note;      // e.g. "NVML unavailable: clocks not recorded"
    // Per kernel of the program (dsl kernels, in the program's order; a kernel of several
    // launches, e.g. conv2d's four, counts once): its median time. The CUDA device measures it
    // in a short pass of its own after the whole-program samples (an event pair around each
    // kernel's launches), the simulated device takes perfmodel/sim_model.h's per-kernel times.
    // Empty when unknown. The whole-program samples stay the timed figure.
    std::vector<double> kernel_times_ns;
};

class Device {
public:
    virtual ~Device() = default;
    virtual DeviceInfo info() const = 0;

    // Loads the candidate (module, param builders, buffers sized for its problem).
    virtual Status load(const Candidate& candidate) = 0;
    // Copies `inputs` in, poisons every output and intermediate with NaN, runs the launch
    // sequence once, synchronizes and copies the outputs back.
    virtual RunResult run(const TensorData& inputs, const RunOptions& options) = 0;
    RunResult run(const TensorData& inputs) { return run(inputs, RunOptions{}); }
    // Times the loaded candidate on the inputs of the last run().
    virtual TimingResult time(const TimingOptions& options) = 0;
    // Frees the candidate's resources; the device stays usable for the next load().
    virtual void unload() = 0;
    // Device memory in use, for the leak check between tasks (0 where unknown).
    virtual int64_t memory_used_bytes() const = 0;

    // "gpu_fp64" (reference/gpu_reference.h) where the device computes fp64 references of a
    // problem's graph with reference(); empty where it cannot (the simulated device).
    virtual std::string_view reference_kind() const { return {}; }
    // The fp64 outputs of `shape`'s graph on `inputs` (every graph input, as for run()),
    // computed on the device, independent of the loaded candidate; a failure is a result.
    virtual ReferenceResult reference(const Problem& shape, const TensorData& inputs) {
        (void)shape;
        (void)inputs;
        ReferenceResult r;
        r.error = "this device computes no references";
        return r;
    }
};

// The CUDA device on GPU `index`, or an environment error (no driver, no GPU).
Expected<std::unique_ptr<Device>> make_cuda_device(int index);
// The simulated device modelling `datasheet_key` (sol/ device table).
Expected<std::unique_ptr<Device>> make_sim_device(const std::string& datasheet_key);

}  // namespace kforge::eval
