// Placeholder until the check stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_check(CLI::App& app) {
    auto* cmd = app.add_subcommand("check", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge check: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
