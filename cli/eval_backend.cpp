#include "cli/eval_backend.h"

#include <cstdio>

#include "cli/commands.h"
#include "device/sim_device.h"
#include "worker/supervised_evaluator.h"

namespace kforge::cli {
std::unique_ptr<EvalBackend> EvalBackend::open(const std::string& device,
                                               const std::string& sim_model, const char* cmd,
                                               int& rc) {
    rc = kExitOk;
    if (device != "auto" && device != "cuda" && device != "sim") {
        std::fprintf(stderr, "kforge %s: --device must be cuda, sim or auto\n", cmd);
        rc = kExitUserError;
        return nullptr;
    }
    auto b = std::unique_ptr<EvalBackend>(new EvalBackend());
    if (device != "sim") {
        eval::SupervisorOptions o;
        o.worker_argv = eval::worker_command(kforge_executable(), "cuda", 0);
        o.task_timeout_s = 900;  // one evaluation, compiles included
        b->supervisor_ = std::make_unique<eval::Supervisor>(o);
        auto started = b->supervisor_->start();
        if (started) {
            b->info_ = b->supervisor_->device();
            b->evaluator_ = std::make_unique<eval::SupervisedEvaluator>(*b->supervisor_);
            return b;
        }
        b->supervisor_.reset();
        if (device == "cuda") {
            std::fprintf(stderr, "kforge %s: no usable GPU: %s\n", cmd,
                         started.error().to_string().c_str());
            rc = kExitEnvironment;
            return nullptr;
        }
        std::fprintf(stderr, "kforge %s: *** no usable GPU (%s): using the SIMULATED device; "
                             "times are model estimates, not measurements ***\n",
                     cmd, started.error().message.substr(0, 300).c_str());
    }
    auto sim = eval::make_sim_device(sim_model);
    if (!sim) {
        std::fprintf(stderr, "kforge %s: %s\n", cmd, sim.error().to_string().c_str());
        rc = kExitUserError;
        return nullptr;
    }
    b->device_ = std::move(*sim);
    b->info_ = b->device_->info();
    b->evaluator_ = std::make_unique<eval::InProcessEvaluator>(*b->device_);
    return b;
}

}  // namespace kforge::cli
