// Placeholder until the calibrate stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_calibrate(CLI::App& app) {
    auto* cmd = app.add_subcommand("calibrate", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge calibrate: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
