#include "device/sim_device.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <thread>

#include "dsl/printer.h"
#include "perfmodel/sim_model.h"
#include "problem/inputs.h"
#include "problem/interpret.h"

namespace kforge::eval {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

struct FaultName {
    SimFault fault;
    std::string_view name;
};
constexpr FaultName kFaultNames[] = {
    {SimFault::kNone, "none"},
    {SimFault::kOutOfBounds, "out_of_bounds"},
    {SimFault::kHang, "hang"},
    {SimFault::kPartialWrite, "partial_write"},
    {SimFault::kCachedResult, "cached_result"},
    {SimFault::kLowPrecision, "low_precision"},
    {SimFault::kNaN, "nan"},
    {SimFault::kSlow, "slow"},
    {SimFault::kProcessCrash, "process_crash"},
    {SimFault::kProcessHang, "process_hang"},
};

std::string seconds(double s) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%.3g s", s);
    return buf;
}

}  // namespace

std::string_view to_string(SimFault f) {
    for (const auto& [fault, name] : kFaultNames)
        if (fault == f) return name;
    return "none";
}

std::optional<SimFault> sim_fault_from_string(std::string_view s) {
    for (const auto& [fault, name] : kFaultNames)
        if (name == s) return fault;
    return std::nullopt;
}

SimDevice::SimDevice(DeviceSpec spec)
    : spec_(std::move(spec)), ceilings_(effective_ceilings(spec_, std::nullopt)) {}

DeviceInfo SimDevice::info() const {
    DeviceInfo i;
    i.name = "simulated (" + spec_.name + " model)";
    i.simulated = true;
    i.datasheet_key = spec_.name;
    i.sm_count = spec_.sm_count;
    i.l2_bytes = spec_.l2_bytes;
    i.memory_bytes = spec_.dram_bytes;
    i.driver = "kforge simulated device (fp64 interpreter, analytic time model)";
    i.uuid = "simulated-" + spec_.name;
    return i;
}

Status SimDevice::load(const Candidate& candidate) {
    unload();
    if (!candidate.problem || !candidate.program)
        return make_error("simulated device", "the candidate has no problem or program");
    auto model =
        perfmodel::model_time(*candidate.problem, *candidate.program, ceilings_, spec_.sm_count);
    if (!model) return model.error();
    problem_ = *candidate.problem;
    program_ = *candidate.program;
    fault_ = candidate.sim_fault;
    run_timeout_s_ = candidate.run_timeout_s;
    model_ns_ = model->time_ns;
    kernel_model_ns_.clear();
    for (const perfmodel::SimKernelTime& k : model->kernels) kernel_model_ns_.push_back(k.time_ns);
    sol_ns_ = model->time_sol_ns;
    noise_key_ = candidate.plan.program_hash.empty() ? dsl::program_hash(program_)
                                                     : candidate.plan.program_hash;
    loaded_ = true;
    return Ok{};
}

void SimDevice::unload() {
    loaded_ = false;
    first_outputs_.reset();
    last_inputs_.reset();
    samples_taken_ = 0;
}

RunResult SimDevice::compute(const TensorData& inputs) {
    if (fault_ == SimFault::kProcessCrash) {
        std::fprintf(stderr, "simulated device: process_crash fault, aborting\n");
        std::abort();
    }
    while (fault_ == SimFault::kProcessHang) std::this_thread::sleep_for(std::chrono::hours(1));
    RunResult r;
    if (fault_ == SimFault::kHang) {
        r.status = EvalStatus::kTimedOut;
        r.message = "simulated hang: no completion within the run deadline of " +
                    seconds(run_timeout_s_);
        return r;
    }
    if (fault_ == SimFault::kOutOfBounds) {
        r.status = EvalStatus::kCrashed;
        r.message = "CUDA_ERROR_ILLEGAL_ADDRESS (simulated): an illegal memory access was "
                    "encountered";
        r.context_lost = true;
        return r;
    }
    auto out = interpret(problem_, inputs);
    if (!out) {
        r.status = EvalStatus::kNotSupported;
        r.message = "simulated device cannot run this shape: " + out.error().to_string();
        return r;
    }
    for (auto& [name, values] : *out) {
        const Tensor* t = problem_.find_tensor(name);
        DType dtype = t ? t->dtype : DType::kF32;
        for (double& v : values) {
            if (fault_ == SimFault::kLowPrecision) v = round_to_dtype(v, DType::kBF16);
            v = round_to_dtype(v, dtype);
        }
        if (fault_ == SimFault::kPartialWrite)
            for (size_t i = values.size() - values.size() / 8; i < values.size(); ++i)
                values[i] = kNaN;
        if (fault_ == SimFault::kNaN && !values.empty()) {
            values[0] = kNaN;
            values[values.size() / 2] = kNaN;
        }
    }
    r.outputs = std::move(*out);
    if (fault_ == SimFault::kCachedResult) {
        if (first_outputs_) r.outputs = *first_outputs_;
        else first_outputs_ = r.outputs;
    }
    return r;
}

RunResult SimDevice::run(const TensorData& inputs, const RunOptions& options) {
    if (!loaded_) return RunResult{EvalStatus::kLaunchFailed, "no candidate loaded", {}, false};
    last_inputs_ = inputs;
    RunResult r = compute(inputs);
    if (!options.copy_outputs) r.outputs.clear();
    return r;
}

TimingResult SimDevice::time(const TimingOptions& options) {
    TimingResult t;
    if (!loaded_) {
        t.status = EvalStatus::kLaunchFailed;
        t.message = "no candidate loaded";
        return t;
    }
    if (fault_ == SimFault::kHang) {
        t.status = EvalStatus::kTimedOut;
        t.message = "simulated hang: timing stopped at the deadline of " +
                    seconds(options.max_seconds);
        return t;
    }
    const double slow = fault_ == SimFault::kSlow ? kSimSlowFactor : 1.0;
    double base = model_ns_ * slow;
    // the model's per-kernel times, noiseless (not raised to the SOL floor of the whole program)
    if (options.per_kernel)
        for (double k : kernel_model_ns_) t.kernel_times_ns.push_back(k * slow);
    samples_taken_ += options.warmup_iterations;
    double total_ns = 0;
    for (int i = 0; i < options.iterations; ++i) {
        TimingSample s;
        // the noise never takes a sample under the problem's speed of light (sim_model.h)
        s.time_ns =
            std::max(sol_ns_, base * perfmodel::sim_noise_factor(noise_key_, samples_taken_++));
        s.sm_clock_mhz = static_cast<int>(spec_.boost_clock_mhz);
        t.samples.push_back(s);
        total_ns += s.time_ns;
        if (i == options.audit_iteration && last_inputs_) {
            RunResult audit = compute(*last_inputs_);
            if (audit.status == EvalStatus::kPassed) t.audit_outputs = std::move(audit.outputs);
        }
        if (total_ns > options.max_seconds * 1e9) break;
    }
    t.clock_note = "simulated: SM clock is the datasheet boost clock, no NVML";
    return t;
}

Expected<std::unique_ptr<Device>> make_sim_device(const std::string& datasheet_key) {
    auto spec = find_device(datasheet_key);
    if (!spec) return spec.error();
    return std::unique_ptr<Device>(std::make_unique<SimDevice>(*spec));
}

}  // namespace kforge::eval
