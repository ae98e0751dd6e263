// Choosing where evaluations run (driver/eval_backend.h).
#include "driver/eval_backend.h"

#include "device/sim_device.h"
#include "worker/supervised_evaluator.h"

namespace kforge::driver {

std::string_view to_string(DeviceChoice choice) {
    switch (choice) {
        case DeviceChoice::kAuto: return "auto";
        case DeviceChoice::kCuda: return "cuda";
        case DeviceChoice::kSim: return "sim";
    }
    return "?";
}

std::optional<DeviceChoice> device_choice_from_string(std::string_view text) {
    for (DeviceChoice c : {DeviceChoice::kAuto, DeviceChoice::kCuda, DeviceChoice::kSim})
        if (to_string(c) == text) return c;
    return std::nullopt;
}

namespace {

template <typename T>
Opened<T> failed(OpenFailure failure, std::string message, std::string fallback = {}) {
    Opened<T> o;
    o.failure = failure;
    o.message = std::move(message);
    o.fallback = std::move(fallback);
    return o;
}

}  // namespace

Opened<EvalBackend> open_eval_backend(const EvalBackendOptions& options) {
    Opened<EvalBackend> out;
    auto b = std::make_unique<EvalBackend>();
    if (options.device != DeviceChoice::kSim) {
        eval::SupervisorOptions o;
        o.worker_argv = eval::worker_command(options.worker_executable, "cuda", options.gpu);
        o.task_timeout_s = options.task_timeout_s;
        b->supervisor_ = std::make_unique<eval::Supervisor>(o);
        auto started = b->supervisor_->start();
        if (started) {
            b->info_ = b->supervisor_->device();
            b->evaluator_ = std::make_unique<eval::SupervisedEvaluator>(*b->supervisor_);
            out.value = std::move(b);
            return out;
        }
        b->supervisor_.reset();
        if (options.device == DeviceChoice::kCuda)
            return failed<EvalBackend>(OpenFailure::kEnvironment,
                                       "no usable GPU: " + started.error().to_string());
        out.fallback = started.error().message.substr(0, 300);
    }
    auto sim = eval::make_sim_device(options.sim_model);
    if (!sim)
        return failed<EvalBackend>(OpenFailure::kUserError, sim.error().to_string(),
                                   out.fallback);
    b->device_ = std::move(*sim);
    b->info_ = b->device_->info();
    b->evaluator_ = std::make_unique<eval::InProcessEvaluator>(*b->device_);
    out.value = std::move(b);
    return out;
}

Opened<eval::Device> open_device(DeviceChoice choice, int gpu, const std::string& sim_model) {
    Opened<eval::Device> out;
    if (choice != DeviceChoice::kSim) {
        auto cuda = eval::make_cuda_device(gpu);
        if (cuda) {
            out.value = std::move(*cuda);
            return out;
        }
        if (choice == DeviceChoice::kCuda)
            return failed<eval::Device>(OpenFailure::kEnvironment,
                                        "no usable GPU: " + cuda.error().to_string());
        out.fallback = cuda.error().message;
    }
    auto sim = eval::make_sim_device(sim_model);
    if (!sim)
        return failed<eval::Device>(OpenFailure::kUserError, sim.error().to_string(),
                                    out.fallback);
    out.value = std::move(*sim);
    return out;
}

Opened<eval::Supervisor> start_worker(const WorkerOptions& options) {
    Opened<eval::Supervisor> out;
    eval::SupervisorOptions o;
    o.log_path = options.log_path;
    o.task_timeout_s = options.task_timeout_s;
    if (options.device != DeviceChoice::kSim) {
        o.worker_argv = eval::worker_command(options.worker_executable, "cuda", options.gpu);
        auto s = std::make_unique<eval::Supervisor>(o);
        auto st = s->start();
        if (st) {
            out.value = std::move(s);
            return out;
        }
        if (options.device == DeviceChoice::kCuda)
            return failed<eval::Supervisor>(OpenFailure::kEnvironment, st.error().to_string());
        out.fallback = st.error().message.substr(0, 300);
    }
    o.worker_argv =
        eval::worker_command(options.worker_executable, "sim", 0, options.sim_model);
    auto s = std::make_unique<eval::Supervisor>(o);
    if (auto st = s->start(); !st)
        return failed<eval::Supervisor>(OpenFailure::kEnvironment, st.error().to_string(),
                                        out.fallback);
    out.value = std::move(s);
    return out;
}

}  // namespace kforge::driver
