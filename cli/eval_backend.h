// Where `kforge optimize` and `kforge suite` evaluate: on a GPU through a supervised worker
// process (`kforge worker`, worker/supervisor.h), so a candidate that crashes the context or hangs
// the GPU ends as that candidate's status and the search goes on; on the simulated device in
// this process.
#pragma once

#include <memory>
#include <string>

#include "device/device.h"
#include "eval/evaluator.h"
#include "worker/supervisor.h"

namespace kforge::cli {

class EvalBackend {
public:
    eval::Evaluator& evaluator() { return *evaluator_; }
    const eval::DeviceInfo& info() const { return info_; }

    // --device sim|cuda|auto; nullptr with rc set (2 user error, 3 no GPU for --device cuda).
    // `auto` without a usable GPU falls back to the simulated device and prints a banner.
    static std::unique_ptr<EvalBackend> open(const std::string& device, const std::string& sim_model,
                                             const char* cmd, int& rc);

private:
    std::unique_ptr<eval::Device> device_;          // the simulated device (in process)
    std::unique_ptr<eval::Supervisor> supervisor_;  // the GPU worker
    std::unique_ptr<eval::Evaluator> evaluator_;
    eval::DeviceInfo info_;
};

}  // namespace kforge::cli
