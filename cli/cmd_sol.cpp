// Placeholder until the sol stage lands; replaced by its owner.
#include <cstdio>

#include "cli/commands.h"

namespace kforge::cli {
void register_sol(CLI::App& app) {
    auto* cmd = app.add_subcommand("sol", "(not built yet)");
    cmd->callback([] {
        std::fprintf(stderr, "kforge sol: not built yet\n");
        exit_code() = kExitEnvironment;
    });
}
}  // namespace kforge::cli
