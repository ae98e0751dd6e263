// Where evaluations run, chosen from --device: on a GPU (through a supervised worker process,
// worker/supervisor.h, so a candidate that crashes the context or hangs the GPU ends as that
// candidate's status and the caller goes on; or in this process), or on the simulated device.
// `auto` takes the GPU when one is usable, else falls back to the simulated device and says why
// (the caller prints the banner: times are then model estimates, not measurements).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "device/device.h"
#include "eval/evaluator.h"
#include "worker/supervisor.h"

namespace kforge::driver {

enum class DeviceChoice { kAuto, kCuda, kSim };
std::string_view to_string(DeviceChoice choice);
// "auto", "cuda", "sim"; nullopt otherwise.
std::optional<DeviceChoice> device_choice_from_string(std::string_view text);

// Why something could not be opened: a user error (a bad --sim-model: exit 2) or the machine
// lacks it (no usable GPU for --device cuda, no worker: exit 3).
enum class OpenFailure { kNone, kUserError, kEnvironment };

// The result of opening a backend, device or worker: `value`, or a failure with its message.
template <typename T>
struct Opened {
    std::unique_ptr<T> value;       // null on failure
    OpenFailure failure = OpenFailure::kNone;
    std::string message;            // on failure: what went wrong
    std::string fallback;           // `auto` without a GPU: why the simulated device is used
};

struct EvalBackendOptions;

// The evaluator of `kforge optimize` and `kforge suite`: a supervised `kforge worker` on the GPU,
// or the simulated device in this process.
class EvalBackend {
public:
    eval::Evaluator& evaluator() { return *evaluator_; }
    const eval::DeviceInfo& info() const { return info_; }

private:
    friend Opened<EvalBackend> open_eval_backend(const EvalBackendOptions& options);
    std::unique_ptr<eval::Device> device_;          // the simulated device (in process)
    std::unique_ptr<eval::Supervisor> supervisor_;  // the GPU worker
    std::unique_ptr<eval::Evaluator> evaluator_;
    eval::DeviceInfo info_;
};

struct EvalBackendOptions {
    DeviceChoice device = DeviceChoice::kAuto;
    std::string sim_model = "h200";        // device table entry the simulated device models
    std::string worker_executable;         // the kforge binary (`kforge worker`)
    int gpu = 0;
    double task_timeout_s = 900;           // one evaluation, compiles included
};

// The GPU's failure is the fallback reason under `auto` (its first 300 characters), the
// message ("no usable GPU: ...", kEnvironment) under `cuda`; a simulated device that cannot be
// made (unknown model) is a kUserError.
Opened<EvalBackend> open_eval_backend(const EvalBackendOptions& options);

// A device in this process (`kforge eval` of one program): the CUDA device `gpu`, else (auto)
// the simulated one; the fallback reason is the GPU's whole message.
Opened<eval::Device> open_device(DeviceChoice choice, int gpu, const std::string& sim_model);

struct WorkerOptions {
    DeviceChoice device = DeviceChoice::kAuto;
    int gpu = 0;
    std::string sim_model = "h200";
    std::string worker_executable;  // the kforge binary
    std::string log_path;           // the worker's stderr; empty: a temporary file
    double task_timeout_s = 900;
};

// A started supervisor of one `kforge worker` (`kforge eval` sessions and the fault suite): on
// the GPU, else (auto; the reason its first 300 characters) a simulated worker. Failures are
// kEnvironment with the start's error as message.
Opened<eval::Supervisor> start_worker(const WorkerOptions& options);

}  // namespace kforge::driver
