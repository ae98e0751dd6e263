// `kforge worker --device cuda|sim [--gpu N] [--sim-model KEY]`: an evaluation worker bound to
// one device, speaking the worker protocol (worker/protocol.h) on stdin/stdout. Started by the
// supervisor (worker/supervisor.h), not by people. Nothing but protocol lines reaches stdout;
// diagnostics go to stderr (the supervisor's worker log). Exit 3 when the device cannot be
// opened (no GPU, no driver), 2 for a bad flag.
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "worker/worker.h"

namespace kforge::cli {

void register_worker(CLI::App& app) {
    auto* cmd =
        app.add_subcommand("worker", "evaluation worker process (started by the supervisor)");
    cmd->group("");  // internal: not listed in --help
    struct Args {
        std::string device = "sim";
        int gpu = 0;
        std::string sim_model = "h200";
    };
    auto args = std::make_shared<Args>();
    cmd->add_option("--device", args->device, "cuda or sim")
        ->check(CLI::IsMember({"cuda", "sim"}))
        ->required();
    cmd->add_option("--gpu", args->gpu, "CUDA device index (--device cuda)")
        ->check(CLI::NonNegativeNumber);
    cmd->add_option("--sim-model", args->sim_model,
                    "device table key the simulated device models (--device sim)");
    cmd->callback([args] {
        // Ctrl-C in a terminal reaches the whole foreground group: the supervisor (optimize,
        // suite: stop after the evaluation in flight) decides when its worker stops, and the
        // worker dies with it
        std::signal(SIGINT, SIG_IGN);
        auto device = args->device == "cuda" ? eval::make_cuda_device(args->gpu)
                                             : eval::make_sim_device(args->sim_model);
        if (!device) {
            eprintf("kforge worker: %s\n", device.error().to_string().c_str());
            exit_code() = args->device == "cuda" ? kExitEnvironment : kExitUserError;
            return;
        }
        exit_code() = eval::run_worker(**device, eval::default_task_handlers());
    });
}

}  // namespace kforge::cli
