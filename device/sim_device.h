// The simulated device (device/device.h): runs a candidate's problem semantics on the CPU with the
// fp64 interpreter (the checker has proved the program computes the problem), rounds outputs to
// their dtype, times with the analytic model (perfmodel/sim_model.h: never under the problem's
// SOL time on the device's own ceilings and arch, noise included) and injects the candidate's
// SimFault:
//   kOutOfBounds   run(): kCrashed, "CUDA_ERROR_ILLEGAL_ADDRESS (simulated)", context_lost
//   kHang          run()/time(): kTimedOut at once, naming the deadline it stands for
//   kPartialWrite  the last eighth of every output keeps the NaN poison
//   kCachedResult  every run returns the outputs of the first run after load()
//   kLowPrecision  outputs rounded through bf16
//   kNaN           NaN written at the first and the middle element of every output
//   kSlow          model time x kSimSlowFactor
//   kProcessCrash  run(): abort() (a worker that dies)
//   kProcessHang   run(): never returns (a worker that stalls past every deadline)
// time() reports the model's per-kernel times (TimingResult::kernel_times_ns, noiseless, x50
// under kSlow, never raised to the whole program's SOL floor).
// DeviceInfo.simulated is true and the name starts with "simulated".
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "device/device.h"
#include "sol/calibration.h"
#include "sol/device.h"

namespace kforge::eval {

inline constexpr double kSimSlowFactor = 50.0;

class SimDevice final : public Device {
public:
    explicit SimDevice(DeviceSpec spec);
    DeviceInfo info() const override;
    Status load(const Candidate& candidate) override;
    using Device::run;
    RunResult run(const TensorData& inputs, const RunOptions& options) override;
    TimingResult time(const TimingOptions& options) override;
    void unload() override;
    int64_t memory_used_bytes() const override { return 0; }

private:
    RunResult compute(const TensorData& inputs);

    DeviceSpec spec_;
    Ceilings ceilings_;
    bool loaded_ = false;
    Problem problem_;
    dsl::Program program_;
    SimFault fault_ = SimFault::kNone;
    double run_timeout_s_ = 10.0;
    double model_ns_ = 0;
    std::vector<double> kernel_model_ns_;  // per program kernel, launch overhead included
    double sol_ns_ = 0;  // the problem's T_sol on the same ceilings: no sample falls under it
    std::string noise_key_;
    int64_t samples_taken_ = 0;
    std::optional<TensorData> first_outputs_;  // kCachedResult
    std::optional<TensorData> last_inputs_;
};

}  // namespace kforge::eval
